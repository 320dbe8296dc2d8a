//! The dispatch over statements: every statement kind is named, each checked where it
//! needs a rule of its own (dunder method definitions, class keywords, `global`, the
//! async and 3.12 forms refused then walked as their ordinary twins) and its children
//! pushed onto the walker's stack with the context they are evaluated in: a function's
//! parameters in its own scope, its decorators, defaults and annotations in the
//! enclosing one.

use super::*;

impl Walker<'_> {
    pub(super) fn new_fn(&mut self, self_name: Option<String>) -> u32 {
        self.self_names.push(self_name);
        u32::try_from(self.self_names.len() - 1).unwrap_or(u32::MAX)
    }

    /// Parameters are bound in the function's own `scope`; annotations and defaults
    /// are evaluated in the enclosing one.
    pub(super) fn arguments(&mut self, args: ast::Arguments, d: u32, outer: Ctx, scope: u32) {
        let ast::Arguments {
            posonlyargs,
            args,
            vararg,
            kwonlyargs,
            kwarg,
            ..
        } = args;
        for a in posonlyargs.into_iter().chain(args).chain(kwonlyargs) {
            self.bind_param(a.def.arg.as_str(), a.def.range, scope);
            self.push_eo(a.def.annotation, d, outer.plain());
            self.push_eo(a.default, d, outer.plain());
        }
        for a in vararg.into_iter().chain(kwarg) {
            self.bind_param(a.arg.as_str(), a.range, scope);
            self.push_eo(a.annotation, d, outer.plain());
        }
    }

    fn first_param(args: &ast::Arguments) -> Option<String> {
        args.posonlyargs
            .first()
            .or(args.args.first())
            .map(|a| normalize::ident(a.def.arg.as_str()).into_owned())
    }

    fn type_params(&mut self, tps: Vec<TypeParam>, range: TextRange, d: u32, ctx: Ctx) {
        if tps.is_empty() {
            return;
        }
        if self.checking {
            self.report(
                Rule::UnsupportedSyntax,
                range,
                "type parameters (python 3.12 syntax)".into(),
                "remove the [T] type parameters",
            );
        }
        for tp in tps {
            match tp {
                TypeParam::TypeVar(t) => self.push_eo(t.bound, d, ctx.plain()),
                TypeParam::ParamSpec(_) | TypeParam::TypeVarTuple(_) => {}
            }
        }
    }

    pub(super) fn stmt(&mut self, s: Stmt, d: u32, ctx: Ctx) {
        let body_ctx = Ctx {
            class_body: false,
            ..ctx.plain()
        };
        match s {
            Stmt::FunctionDef(f) => {
                let n = normalize::ident(f.name.as_str()).into_owned();
                if strings::is_dunder(&n) {
                    if self.checking
                        && !(ctx.class_body && self.policy.allowed_dunder_methods.contains(&n))
                    {
                        self.report(
                            Rule::DunderName,
                            f.range,
                            format!("defines dunder method {n}"),
                            "only ordinary dunder methods such as __init__, __repr__, __len__ may be defined, inside a class",
                        );
                    }
                } else {
                    self.bind_name(&n, f.range, ctx);
                }
                let is_static = f
                    .decorator_list
                    .iter()
                    .any(|e| name_of(e).map(normalize::ident).as_deref() == Some("staticmethod"));
                let self_name = if ctx.class_body && !is_static {
                    Self::first_param(&f.args)
                } else {
                    None
                };
                let id = self.new_fn(self_name);
                let scope = self.new_scope(ctx.scope, ScopeKind::Function);
                self.type_params(f.type_params, f.range, d, ctx);
                for e in f.decorator_list {
                    self.push_e(e, d, ctx.plain().with(F_DECORATOR));
                }
                self.push_eo(f.returns, d, ctx.plain());
                self.arguments(*f.args, d, ctx, scope);
                self.push_ss(
                    f.body,
                    d,
                    Ctx {
                        fn_id: id,
                        scope,
                        class_body: false,
                        flags: 0,
                    },
                );
            }
            // The async twins are refused, then walked as their ordinary forms, so that
            // what they contain meets every other rule.
            Stmt::AsyncFunctionDef(f) => {
                self.unsupported(f.range, "async function", "use an ordinary def");
                let plain = ast::StmtFunctionDef {
                    range: f.range,
                    name: f.name,
                    args: f.args,
                    body: f.body,
                    decorator_list: f.decorator_list,
                    returns: f.returns,
                    type_comment: f.type_comment,
                    type_params: f.type_params,
                };
                self.stmt(Stmt::FunctionDef(plain), d, ctx);
            }
            Stmt::ClassDef(c) => {
                self.note_class(&c);
                self.bind_name(c.name.as_str(), c.range, ctx);
                self.type_params(c.type_params, c.range, d, ctx);
                for k in c.keywords {
                    if self.checking {
                        self.report(
                            Rule::BannedKeyword,
                            k.range,
                            "class keyword (metaclass=...)".into(),
                            "define plain classes without metaclass or class keywords",
                        );
                    }
                    self.push_e(k.value, d, ctx.plain());
                }
                for e in c.bases {
                    self.push_e(e, d, ctx.plain());
                }
                for e in c.decorator_list {
                    self.push_e(e, d, ctx.plain().with(F_DECORATOR));
                }
                let scope = self.new_scope(ctx.scope, ScopeKind::Class);
                self.push_ss(
                    c.body,
                    d,
                    Ctx {
                        class_body: true,
                        scope,
                        ..ctx.plain()
                    },
                );
            }
            Stmt::Return(r) => self.push_eo(r.value, d, ctx.plain()),
            Stmt::Delete(x) => self.push_es(x.targets, d, ctx.plain()),
            Stmt::Assign(a) => {
                if self.checking && a.targets.len() == 1 {
                    self.note_assign_alias(&a.targets[0], &a.value);
                }
                self.note_type_alias(&a.targets, &a.value);
                self.push_es(a.targets, d, ctx.plain());
                self.push_eb(a.value, d, ctx.plain());
            }
            Stmt::TypeAlias(t) => {
                self.unsupported(
                    t.range,
                    "type alias statement (python 3.12 syntax)",
                    "use an ordinary assignment",
                );
                self.type_params(t.type_params, t.range, d, ctx);
                self.push_eb(t.name, d, ctx.plain());
                self.push_eb(t.value, d, ctx.plain());
            }
            Stmt::AugAssign(a) => {
                self.push_eb(a.target, d, ctx.plain());
                self.push_eb(a.value, d, ctx.plain());
            }
            Stmt::AnnAssign(a) => {
                self.push_eb(a.target, d, ctx.plain());
                self.push_eb(a.annotation, d, ctx.plain());
                self.push_eo(a.value, d, ctx.plain());
            }
            Stmt::For(f) => {
                self.push_eb(f.target, d, ctx.plain());
                self.push_eb(f.iter, d, ctx.plain());
                self.push_ss(f.body, d, body_ctx);
                self.push_ss(f.orelse, d, body_ctx);
            }
            Stmt::AsyncFor(f) => {
                self.unsupported(f.range, "async for", "use an ordinary for loop");
                let plain = ast::StmtFor {
                    range: f.range,
                    target: f.target,
                    iter: f.iter,
                    body: f.body,
                    orelse: f.orelse,
                    type_comment: f.type_comment,
                };
                self.stmt(Stmt::For(plain), d, ctx);
            }
            Stmt::While(w) => {
                self.push_eb(w.test, d, ctx.plain());
                self.push_ss(w.body, d, body_ctx);
                self.push_ss(w.orelse, d, body_ctx);
            }
            Stmt::If(i) => {
                self.push_eb(i.test, d, ctx.plain());
                self.push_ss(i.body, d, body_ctx);
                self.push_ss(i.orelse, d, body_ctx);
            }
            Stmt::With(w) => {
                for it in w.items {
                    self.push_e(it.context_expr, d, ctx.plain());
                    self.push_eo(it.optional_vars, d, ctx.plain());
                }
                self.push_ss(w.body, d, body_ctx);
            }
            Stmt::AsyncWith(w) => {
                self.unsupported(w.range, "async with", "use an ordinary with");
                let plain = ast::StmtWith {
                    range: w.range,
                    items: w.items,
                    body: w.body,
                    type_comment: w.type_comment,
                };
                self.stmt(Stmt::With(plain), d, ctx);
            }
            Stmt::Match(m) => {
                self.push_eb(m.subject, d, ctx.plain());
                for case in m.cases {
                    self.push_p(case.pattern, d, ctx.plain());
                    self.push_eo(case.guard, d, ctx.plain());
                    self.push_ss(case.body, d, body_ctx);
                }
            }
            Stmt::Raise(r) => {
                // `raise SystemExit` and `raise SystemExit(status)`: a script's way to
                // end, which ends the job as `sys.exit` does. The name stays banned
                // everywhere else (`except SystemExit`, `x = SystemExit`).
                match r.exc.map(|e| *e) {
                    Some(Expr::Name(n)) if is_system_exit(&n.id) => {}
                    Some(Expr::Call(c)) if matches!(&*c.func, Expr::Name(n) if is_system_exit(&n.id)) =>
                    {
                        self.push_es(c.args, d, ctx.plain());
                        for k in c.keywords {
                            self.push_e(k.value, d, ctx.plain());
                        }
                    }
                    other => self.push_eo(other.map(Box::new), d, ctx.plain()),
                }
                self.push_eo(r.cause, d, ctx.plain());
            }
            Stmt::Try(t) => {
                let body = if catches_import_error(&t.handlers) {
                    body_ctx.with(F_IMPORT_FALLBACK)
                } else {
                    body_ctx
                };
                self.push_ss(t.body, d, body);
                self.handlers(t.handlers, d, ctx);
                self.push_ss(t.orelse, d, body_ctx);
                self.push_ss(t.finalbody, d, body_ctx);
            }
            Stmt::TryStar(t) => {
                // CVE-2025-22153: except* binds exception groups whose members escape
                // type checks that other sandboxes relied on. Not needed for figures.
                self.unsupported(t.range, "try/except* (exception groups)", "use try/except");
                let plain = ast::StmtTry {
                    range: t.range,
                    body: t.body,
                    handlers: t.handlers,
                    orelse: t.orelse,
                    finalbody: t.finalbody,
                };
                self.stmt(Stmt::Try(plain), d, ctx);
            }
            Stmt::Assert(a) => {
                self.push_eb(a.test, d, ctx.plain());
                self.push_eo(a.msg, d, ctx.plain());
            }
            Stmt::Import(i) => self.import(i.names, ctx),
            Stmt::ImportFrom(f) => self.import_from(f, ctx),
            Stmt::Global(g) => self.declare_outer(&g.names, g.range, ctx, true),
            Stmt::Nonlocal(n) => self.declare_outer(&n.names, n.range, ctx, false),
            Stmt::Expr(e) => self.push_eb(e.value, d, ctx.plain()),
            Stmt::Pass(_) | Stmt::Break(_) | Stmt::Continue(_) => {}
        }
    }

    /// `global` (`is_global`) or `nonlocal`: the names are bound in an outer scope.
    fn declare_outer(
        &mut self,
        names: &[ast::Identifier],
        range: TextRange,
        ctx: Ctx,
        is_global: bool,
    ) {
        for n in names {
            let name = normalize::ident(n.as_str()).into_owned();
            if is_global {
                self.global_decls.insert((ctx.scope, name.clone()));
            }
            self.declared_outer.insert(name);
            self.bind_name(n.as_str(), range, ctx);
        }
    }

    fn handlers(&mut self, hs: Vec<ExceptHandler>, d: u32, ctx: Ctx) {
        for h in hs {
            match h {
                ExceptHandler::ExceptHandler(h) => {
                    if let Some(n) = &h.name {
                        self.bind_name(n.as_str(), h.range, ctx);
                    }
                    self.push_eo(h.type_, d, ctx.plain());
                    self.push_ss(
                        h.body,
                        d,
                        Ctx {
                            class_body: false,
                            ..ctx.plain()
                        },
                    );
                }
            }
        }
    }

    /// `m = np.linalg` style aliases, resolved in [`Walker::finish`].
    fn note_assign_alias(&mut self, target: &Expr, value: &Expr) {
        let Some(t) = name_of(target) else { return };
        let mut attrs = Vec::new();
        let mut cur = value;
        loop {
            match cur {
                Expr::Attribute(a) => {
                    if attrs.len() > 16 {
                        return;
                    }
                    attrs.push(normalize::ident(a.attr.as_str()).into_owned());
                    cur = &a.value;
                }
                Expr::Name(n) => {
                    attrs.reverse();
                    self.assign_aliases.push((
                        normalize::ident(t).into_owned(),
                        normalize::ident(n.id.as_str()).into_owned(),
                        attrs,
                    ));
                    return;
                }
                _ => return,
            }
        }
    }
}

/// Whether a name is `SystemExit`, as the interpreter reads it (NFKC).
fn is_system_exit(id: &str) -> bool {
    normalize::ident(id) == "SystemExit"
}

/// Whether one of a `try`'s handlers catches the `ImportError` a refused import raises
/// at run time: a bare `except:`, `except ImportError`, `except ModuleNotFoundError`
/// (what the refusal raises), `except Exception`, or a tuple naming one of them.
fn catches_import_error(handlers: &[ExceptHandler]) -> bool {
    let catches = |e: &Expr| {
        matches!(e, Expr::Name(n)
        if matches!(normalize::ident(&n.id).as_ref(), "ImportError" | "ModuleNotFoundError" | "Exception"))
    };
    handlers.iter().any(|h| {
        let ExceptHandler::ExceptHandler(h) = h;
        match h.type_.as_deref() {
            None => true,
            Some(Expr::Tuple(t)) => t.elts.iter().any(catches),
            Some(e) => catches(e),
        }
    })
}
