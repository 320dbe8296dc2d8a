//! The iterative, consuming AST walk.
//!
//! The walk owns the tree: each node is popped from an explicit stack, checked, and its
//! children are *moved* onto the stack before the node's now-childless shell is dropped.
//! So neither checking nor dropping recurses, whatever the depth of the tree (`a+a+a…`,
//! `x.y.y…`, `elif` ladders): the host stack cannot overflow here.
//!
//! Checks that need context carry it in [`Ctx`] flags set by the parent (for example
//! "this `type` name is the callee of a one-argument call"). Checks that need the whole
//! program (is `signal` bound by the job? is this `np` an import alias? was `self`
//! rebound?) are recorded and resolved in [`Walker::finish`].
//!
//! This file holds the traversal: the walker's state, the explicit stack and the
//! exhaustive dispatch over statements, expressions and patterns. The rules live beside
//! it: `names` (names and attributes), `imports`, `calls` (calls, keywords and the
//! library-specific settings rules) and `program` (what needs the whole program).

use std::collections::{HashMap, HashSet};

use rustpython_parser::ast::{
    self, Constant, ExceptHandler, Expr, ExprContext, Pattern, Stmt, TypeParam,
};
use rustpython_parser::text_size::TextRange;

use crate::gate::normalize;
use crate::gate::policy::{reason_for, Policy, RESTRICTED_BUILTINS};
use crate::gate::strings;
use crate::gate::verdict::Rule;

mod calls;
mod classes;
mod imports;
mod names;
mod program;

/// A violation before its position is turned into line/column.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    pub rule: Rule,
    pub start: u32,
    pub end: u32,
    pub message: String,
    pub hint: String,
}

/// Outcome of the walk.
pub(crate) struct WalkResult {
    pub violations: Vec<Raw>,
    pub too_deep: bool,
}

/// This expression is the `value` of an attribute: only the outermost attribute of a
/// chain resolves the dotted path (keeps `x.y.y.y…` linear).
const F_ATTR_INNER: u16 = 1;
/// `type` may appear here: the callee of a call with exactly one positional argument.
const F_TYPE_OK: u16 = 2;
/// `super` may appear here: the callee of a call with no arguments.
const F_SUPER_OK: u16 = 4;
/// A decorator: `staticmethod`, `classmethod`, `property` may appear here.
const F_DECORATOR: u16 = 8;
/// A class base: `object` may appear here.
/// `rcParams` may appear here (subscript base or receiver of a reviewed method).
const F_RC_OK: u16 = 32;
/// This attribute is a called method; its value may be `rcParams` when the method is
/// one of the reviewed ones.
const F_RC_RECEIVER: u16 = 64;
/// This attribute is the callee of a call whose arguments were checked
/// (`df.query("…")`, `df.eval("…")`).
const F_CALLED_CHECKED: u16 = 128;

/// `from __future__ import` names that are compiler directives.
const FUTURE_FEATURES: &[&str] = &[
    "annotations",
    "division",
    "absolute_import",
    "print_function",
    "unicode_literals",
    "generators",
    "nested_scopes",
    "with_statement",
    "generator_stop",
];

/// Read-only or checked methods of `rcParams`.
const RC_METHODS: &[&str] = &[
    "update", "get", "copy", "keys", "items", "values", "find_all",
];

#[derive(Clone, Copy, Default)]
struct Ctx {
    /// Function scope id (0 = module).
    fn_id: u32,
    /// Name-resolution scope (0 = module): functions, lambdas, comprehensions and
    /// class bodies each get one (see [`Walker::scopes`]).
    scope: u32,
    /// Directly inside a class body.
    class_body: bool,
    flags: u16,
}

impl Ctx {
    fn with(self, flags: u16) -> Ctx {
        Ctx { flags, ..self }
    }
    fn plain(self) -> Ctx {
        Ctx { flags: 0, ..self }
    }
    fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }
}

enum Node {
    Stmt(Stmt),
    Expr(Expr),
    Pattern(Pattern),
}

struct Item {
    node: Node,
    depth: u32,
    ctx: Ctx,
}

/// An attribute chain rooted at a bare name: `np.lib.format.x` -> root `np`.
struct Chain {
    root: String,
    attrs: Vec<String>,
    range: TextRange,
    store: bool,
}

/// What kind of scope a name-resolution scope is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    Module,
    /// A function, lambda or comprehension: its names are local (`LOAD_FAST`) or
    /// closures over an enclosing function's, never the builtins.
    Function,
    /// A comprehension: a function scope, except that `:=` inside it binds in the
    /// nearest enclosing scope that is not a comprehension.
    Comprehension,
    /// A class body: its loads may fall through to globals and builtins (`LOAD_NAME`),
    /// so a binding there never makes a load safe.
    Class,
}

/// A banned name or builtin bound or read inside a scope other than the module, decided
/// once every binding of the program is known.
struct ScopedUse {
    scope: u32,
    name: String,
    range: TextRange,
}

/// Where a `self._x` was seen: allowed unless `self` is rebound in that function.
struct PendingPrivate {
    fn_id: u32,
    base: String,
    raw: Raw,
}

/// The walker: policy, explicit stack, and facts gathered for the final pass.
pub(crate) struct Walker<'a> {
    policy: &'a Policy,
    checking: bool,
    max_depth: u32,
    too_deep: bool,
    stack: Vec<Item>,
    out: Vec<Raw>,
    /// First-parameter name of each function scope that is a method.
    self_names: Vec<Option<String>>,
    bound: HashSet<String>,
    fn_stores: HashSet<(u32, String)>,
    declared_outer: HashSet<String>,
    shadow_uses: Vec<(String, TextRange)>,
    pending_private: Vec<PendingPrivate>,
    /// Parent and kind of each name-resolution scope; index 0 is the module.
    scopes: Vec<(u32, ScopeKind)>,
    /// Banned names and builtins bound in a scope, and names declared `global` there.
    local_binds: HashSet<(u32, String)>,
    global_decls: HashSet<(u32, String)>,
    scoped_binds: Vec<ScopedUse>,
    scoped_loads: Vec<ScopedUse>,
    chains: Vec<Chain>,
    aliases: HashMap<String, String>,
    assign_aliases: Vec<(String, String, Vec<String>)>,
    nonconst_format: bool,
    traversal_strings: Vec<TextRange>,
    /// Every class statement, for the string-class rules (see `classes`).
    classes: Vec<classes::ClassInfo>,
    /// Names bound to `type(x)`: a class base written as one is computed at run time.
    type_aliases: HashSet<String>,
}

fn name_of(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n.id.as_str()),
        _ => None,
    }
}

fn const_str(e: &Expr) -> Option<&str> {
    match e {
        Expr::Constant(c) => match &c.value {
            Constant::Str(s) => Some(s.as_str()),
            _ => None,
        },
        _ => None,
    }
}

fn is_falsy_const(e: &Expr) -> bool {
    matches!(e, Expr::Constant(c) if matches!(c.value, Constant::Bool(false) | Constant::None))
}

/// `rcParams` as a bare name or as the last attribute (`plt.rcParams`, `mpl.rcParams`).
fn is_rc_params(e: &Expr) -> bool {
    match e {
        Expr::Name(n) => normalize::ident(n.id.as_str()) == "rcParams",
        Expr::Attribute(a) => normalize::ident(a.attr.as_str()) == "rcParams",
        _ => false,
    }
}

/// The callee's final name: `f` for `f(...)` and `x.y.f(...)`, NFKC-normalised.
fn callee_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Name(n) => Some(normalize::ident(n.id.as_str()).into_owned()),
        Expr::Attribute(a) => Some(normalize::ident(a.attr.as_str()).into_owned()),
        _ => None,
    }
}

impl<'a> Walker<'a> {
    pub(crate) fn new(policy: &'a Policy, checking: bool) -> Walker<'a> {
        Walker {
            policy,
            checking,
            max_depth: u32::try_from(policy.max_ast_depth()).unwrap_or(u32::MAX),
            too_deep: false,
            stack: Vec::with_capacity(64),
            out: Vec::new(),
            self_names: vec![None],
            bound: HashSet::new(),
            fn_stores: HashSet::new(),
            declared_outer: HashSet::new(),
            shadow_uses: Vec::new(),
            pending_private: Vec::new(),
            scopes: vec![(0, ScopeKind::Module)],
            local_binds: HashSet::new(),
            global_decls: HashSet::new(),
            scoped_binds: Vec::new(),
            scoped_loads: Vec::new(),
            chains: Vec::new(),
            aliases: HashMap::new(),
            assign_aliases: Vec::new(),
            nonconst_format: false,
            traversal_strings: Vec::new(),
            classes: Vec::new(),
            type_aliases: HashSet::new(),
        }
    }

    fn report(&mut self, rule: Rule, range: TextRange, message: String, hint: impl Into<String>) {
        self.out.push(Raw {
            rule,
            start: range.start().into(),
            end: range.end().into(),
            message,
            hint: hint.into(),
        });
    }

    fn push_s(&mut self, s: Stmt, d: u32, ctx: Ctx) {
        self.stack.push(Item {
            node: Node::Stmt(s),
            depth: d,
            ctx,
        });
    }
    fn push_e(&mut self, e: Expr, d: u32, ctx: Ctx) {
        self.stack.push(Item {
            node: Node::Expr(e),
            depth: d,
            ctx,
        });
    }
    // Takes the box on purpose: moving the expression out frees the box without
    // recursing into it.
    #[allow(clippy::boxed_local)]
    fn push_eb(&mut self, e: Box<Expr>, d: u32, ctx: Ctx) {
        self.push_e(*e, d, ctx);
    }
    fn push_eo(&mut self, e: Option<Box<Expr>>, d: u32, ctx: Ctx) {
        if let Some(e) = e {
            self.push_e(*e, d, ctx);
        }
    }
    fn push_es(&mut self, es: Vec<Expr>, d: u32, ctx: Ctx) {
        for e in es {
            self.push_e(e, d, ctx);
        }
    }
    fn push_ss(&mut self, ss: Vec<Stmt>, d: u32, ctx: Ctx) {
        // reversed so statements pop in source order (cosmetic: results are sorted)
        for s in ss.into_iter().rev() {
            self.push_s(s, d, ctx);
        }
    }
    fn push_p(&mut self, p: Pattern, d: u32, ctx: Ctx) {
        self.stack.push(Item {
            node: Node::Pattern(p),
            depth: d,
            ctx,
        });
    }

    /// Walks (and consumes) a module body.
    pub(crate) fn run(mut self, body: Vec<Stmt>) -> WalkResult {
        self.push_ss(body, 1, Ctx::default());
        while let Some(item) = self.stack.pop() {
            if item.depth > self.max_depth && !self.too_deep {
                self.too_deep = true;
                self.checking = false;
            }
            let d = item.depth.saturating_add(1);
            match item.node {
                Node::Stmt(s) => self.stmt(s, d, item.ctx),
                Node::Expr(e) => self.expr(e, d, item.ctx),
                Node::Pattern(p) => self.pattern(p, d, item.ctx),
            }
        }
        if self.checking {
            self.finish();
        }
        self.out.sort_by_key(|r| (r.start, r.end));
        WalkResult {
            violations: self.out,
            too_deep: self.too_deep,
        }
    }

    // ---------------------------------------------------------------- functions

    fn new_fn(&mut self, self_name: Option<String>) -> u32 {
        self.self_names.push(self_name);
        u32::try_from(self.self_names.len() - 1).unwrap_or(u32::MAX)
    }

    /// Parameters are bound in the function's own `scope`; annotations and defaults
    /// are evaluated in the enclosing one.
    fn arguments(&mut self, args: ast::Arguments, d: u32, outer: Ctx, scope: u32) {
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

    fn unsupported(&mut self, range: TextRange, what: &str, hint: &str) {
        if self.checking {
            self.report(Rule::UnsupportedSyntax, range, what.into(), hint);
        }
    }

    // ---------------------------------------------------------------- statements

    fn stmt(&mut self, s: Stmt, d: u32, ctx: Ctx) {
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
                self.push_eo(r.exc, d, ctx.plain());
                self.push_eo(r.cause, d, ctx.plain());
            }
            Stmt::Try(t) => {
                self.push_ss(t.body, d, body_ctx);
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

    // ---------------------------------------------------------------- expressions

    /// A comprehension's own scope (a function since Python 3): its targets are local.
    fn comprehension_ctx(&mut self, outer: Ctx) -> Ctx {
        let scope = self.new_scope(outer.scope, ScopeKind::Comprehension);
        Ctx { scope, ..outer }
    }

    /// The generators of a comprehension: the first iterable is evaluated in the
    /// enclosing scope (`outer`), everything else in the comprehension's (`inner`).
    fn comprehensions(
        &mut self,
        gens: Vec<ast::Comprehension>,
        range: TextRange,
        d: u32,
        outer: Ctx,
        inner: Ctx,
    ) {
        for (i, g) in gens.into_iter().enumerate() {
            if g.is_async {
                self.unsupported(
                    range,
                    "async comprehension",
                    "use an ordinary comprehension",
                );
            }
            self.push_e(g.target, d, inner.plain());
            let iter_ctx = if i == 0 { outer } else { inner };
            self.push_e(g.iter, d, iter_ctx.plain());
            self.push_es(g.ifs, d, inner.plain());
        }
    }

    fn constant(&mut self, value: &Constant, range: TextRange) {
        if let Constant::Str(s) = value {
            let n = normalize::text(s);
            if strings::contains_dunder(&n) {
                self.report(
                    Rule::DunderString,
                    range,
                    "string names a dunder".into(),
                    "attribute names in strings are not allowed; use the public API",
                );
            }
            if self.policy.setting_denied_dotted(&n) {
                self.report(
                    Rule::DangerousSetting,
                    range,
                    format!("denied setting {}", crate::gate::verdict::quote(&n)),
                    "settings that start programs or import modules are not available",
                );
            }
            if strings::format_traverses(s) {
                self.traversal_strings.push(range);
            }
        }
    }

    fn expr(&mut self, e: Expr, d: u32, ctx: Ctx) {
        let c = ctx.plain();
        // Every expression kind is named; there is no wildcard arm, so a new kind in a
        // parser upgrade is a compile error here rather than a silently unchecked node.
        match e {
            Expr::BoolOp(x) => self.push_es(x.values, d, c),
            Expr::NamedExpr(x) => {
                // `:=` in a comprehension binds in the scope around it (PEP 572).
                let target = Ctx {
                    scope: self.walrus_scope(c.scope),
                    ..c
                };
                self.push_eb(x.target, d, target);
                self.push_eb(x.value, d, c);
            }
            Expr::BinOp(x) => {
                self.push_eb(x.left, d, c);
                self.push_eb(x.right, d, c);
            }
            Expr::UnaryOp(x) => self.push_eb(x.operand, d, c),
            Expr::Lambda(x) => {
                let id = self.new_fn(None);
                let scope = self.new_scope(ctx.scope, ScopeKind::Function);
                self.arguments(*x.args, d, ctx, scope);
                self.push_eb(
                    x.body,
                    d,
                    Ctx {
                        fn_id: id,
                        scope,
                        class_body: false,
                        flags: 0,
                    },
                );
            }
            Expr::IfExp(x) => {
                self.push_eb(x.test, d, c);
                self.push_eb(x.body, d, c);
                self.push_eb(x.orelse, d, c);
            }
            Expr::Dict(x) => {
                for k in x.keys.into_iter().flatten() {
                    self.push_e(k, d, c);
                }
                self.push_es(x.values, d, c);
            }
            Expr::Set(x) => self.push_es(x.elts, d, c),
            Expr::ListComp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.elt, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::SetComp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.elt, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::DictComp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.key, d, inner);
                self.push_eb(x.value, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::GeneratorExp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.elt, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::Await(x) => {
                self.unsupported(x.range, "await", "use ordinary calls");
                self.push_eb(x.value, d, c);
            }
            Expr::Yield(x) => self.push_eo(x.value, d, c),
            Expr::YieldFrom(x) => self.push_eb(x.value, d, c),
            Expr::Compare(x) => {
                self.push_eb(x.left, d, c);
                self.push_es(x.comparators, d, c);
            }
            Expr::Call(x) => self.call(x, d, ctx),
            Expr::FormattedValue(x) => {
                self.push_eb(x.value, d, c);
                self.push_eo(x.format_spec, d, c);
            }
            Expr::JoinedStr(x) => self.push_es(x.values, d, c),
            Expr::Constant(x) => {
                if self.checking {
                    self.constant(&x.value, x.range);
                }
            }
            Expr::Attribute(x) => self.attribute(x, d, ctx),
            Expr::Subscript(x) => {
                let mut vflags = 0;
                if self.checking && is_rc_params(&x.value) {
                    vflags |= F_RC_OK;
                    if !matches!(x.ctx, ExprContext::Load) {
                        let ok =
                            const_str(&x.slice).is_some_and(|k| !self.policy.setting_denied(k));
                        if !ok {
                            self.report(
                                Rule::DangerousSetting,
                                x.range,
                                "rcParams write with a non-literal or denied key".into(),
                                "write literal keys such as plt.rcParams['font.size'] = 12; settings that start programs are not available",
                            );
                        }
                    }
                }
                self.push_eb(x.value, d, c.with(vflags));
                self.push_eb(x.slice, d, c);
            }
            Expr::Starred(x) => self.push_eb(x.value, d, c),
            Expr::Name(x) => {
                if matches!(x.ctx, ExprContext::Load) {
                    if self.checking {
                        self.load_name(x.id.as_str(), x.range, ctx);
                    }
                } else {
                    self.bind_name(x.id.as_str(), x.range, ctx);
                }
            }
            Expr::List(x) => self.push_es(x.elts, d, c),
            Expr::Tuple(x) => self.push_es(x.elts, d, c),
            Expr::Slice(x) => {
                self.push_eo(x.lower, d, c);
                self.push_eo(x.upper, d, c);
                self.push_eo(x.step, d, c);
            }
        }
    }

    fn pattern(&mut self, p: Pattern, d: u32, ctx: Ctx) {
        let c = ctx.plain();
        match p {
            Pattern::MatchValue(x) => self.push_eb(x.value, d, c),
            Pattern::MatchSingleton(_) => {}
            Pattern::MatchSequence(x) => {
                for p in x.patterns {
                    self.push_p(p, d, c);
                }
            }
            Pattern::MatchMapping(x) => {
                self.push_es(x.keys, d, c);
                for p in x.patterns {
                    self.push_p(p, d, c);
                }
                if let Some(r) = &x.rest {
                    self.bind_name(r.as_str(), x.range, ctx);
                }
            }
            Pattern::MatchClass(x) => {
                // keyword patterns read attributes: `case C(__class__=k)` is a dunder read
                if self.checking {
                    for a in &x.kwd_attrs {
                        let a = normalize::ident(a.as_str()).into_owned();
                        if self.attr_name(&a, x.range, false) && a.starts_with('_') {
                            self.out.push(self.private_violation(&a, x.range));
                        }
                    }
                }
                self.push_eb(x.cls, d, c);
                for p in x.patterns.into_iter().chain(x.kwd_patterns) {
                    self.push_p(p, d, c);
                }
            }
            Pattern::MatchStar(x) => {
                if let Some(n) = &x.name {
                    self.bind_name(n.as_str(), x.range, ctx);
                }
            }
            Pattern::MatchAs(x) => {
                if let Some(n) = &x.name {
                    self.bind_name(n.as_str(), x.range, ctx);
                }
                if let Some(p) = x.pattern {
                    self.push_p(*p, d, c);
                }
            }
            Pattern::MatchOr(x) => {
                for p in x.patterns {
                    self.push_p(p, d, c);
                }
            }
        }
    }
}
