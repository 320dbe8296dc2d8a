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

use std::collections::{HashMap, HashSet};

use rustpython_parser::ast::{
    self, Constant, ExceptHandler, Expr, ExprContext, Pattern, Stmt, TypeParam,
};
use rustpython_parser::text_size::TextRange;

use crate::gate::normalize;
use crate::gate::policy::{reason_for, Policy, RESTRICTED_BUILTINS};
use crate::gate::strings;
use crate::gate::verdict::Rule;

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

    // ---------------------------------------------------------------- names

    /// A name being bound (assignment target, def/class name, alias, except name, ...).
    fn bind_name(&mut self, raw: &str, range: TextRange, ctx: Ctx) {
        let n = normalize::ident(raw).into_owned();
        self.bind_in_scope(&n, range, ctx.scope);
        self.fn_stores.insert((ctx.fn_id, n.clone()));
        self.bound.insert(n);
    }

    /// A function parameter (in the function's own scope): bound, but not a
    /// *re*binding of `self`.
    fn bind_param(&mut self, raw: &str, range: TextRange, scope: u32) {
        let n = normalize::ident(raw).into_owned();
        self.bind_in_scope(&n, range, scope);
        self.bound.insert(n);
    }

    /// Checks a binding. A banned name or builtin that a function, comprehension or
    /// class binds for itself holds only what the job put there: its binding is
    /// decided in [`Walker::finish`], where a module-scope binding (or one declared
    /// `global`) is still refused.
    fn bind_in_scope(&mut self, n: &str, range: TextRange, scope: u32) {
        if !self.checking {
            return;
        }
        let banned =
            self.policy.banned_names.contains(n) || self.policy.banned_builtins.contains(n);
        if banned && scope != 0 && !strings::is_dunder(n) {
            self.local_binds.insert((scope, n.to_string()));
            let name = n.to_string();
            self.scoped_binds.push(ScopedUse { scope, name, range });
            return;
        }
        self.check_bound_name(n, range);
    }

    /// The scope a `:=` in `scope` binds in: the nearest one that is no comprehension.
    fn walrus_scope(&self, mut scope: u32) -> u32 {
        while self.scopes[scope as usize].1 == ScopeKind::Comprehension {
            scope = self.scopes[scope as usize].0;
        }
        scope
    }

    /// A new name-resolution scope inside `parent`.
    fn new_scope(&mut self, parent: u32, kind: ScopeKind) -> u32 {
        self.scopes.push((parent, kind));
        u32::try_from(self.scopes.len() - 1).unwrap_or(u32::MAX)
    }

    /// Whether a load of `n` in `scope` reads a binding of the job's own: `n` is local
    /// to that function scope, or to an enclosing function (a closure). Class bodies
    /// and the module never count: their loads can reach the builtins.
    fn resolves_locally(&self, scope: u32, n: &str) -> bool {
        let mut s = scope;
        while s != 0 {
            let (parent, kind) = self.scopes[s as usize];
            let key = (s, n.to_string());
            if kind != ScopeKind::Class {
                if self.global_decls.contains(&key) {
                    return false;
                }
                if self.local_binds.contains(&key) {
                    return true;
                }
            }
            s = parent;
        }
        false
    }

    fn check_bound_name(&mut self, n: &str, range: TextRange) {
        if strings::is_dunder(n) {
            self.report(
                Rule::DunderName,
                range,
                format!("binds dunder name {n}"),
                "use an ordinary name",
            );
        } else if self.policy.banned_names.contains(n) {
            self.report(
                Rule::BannedName,
                range,
                format!("banned name {n}: {}", reason_for(n)),
                "use another name; this module or object is not available",
            );
        } else if self.policy.banned_builtins.contains(n) {
            self.report(
                Rule::BannedBuiltin,
                range,
                format!("rebinds banned builtin {n}"),
                "use another name",
            );
        }
    }

    /// A name being read.
    fn load_name(&mut self, raw: &str, range: TextRange, ctx: Ctx) {
        let n = normalize::ident(raw);
        let n = n.as_ref();
        let banned =
            self.policy.banned_builtins.contains(n) || self.policy.banned_names.contains(n);
        if banned && ctx.scope != 0 && !strings::is_dunder(n) {
            // Decided once every binding is known (a function's local may be bound
            // after the line that reads it).
            let (scope, name) = (ctx.scope, n.to_string());
            self.scoped_loads.push(ScopedUse { scope, name, range });
            return;
        }
        if self.report_banned_builtin(n, range) {
            return;
        }
        if strings::is_dunder(n) {
            if n != "__name__" {
                self.report(
                    Rule::DunderName,
                    range,
                    format!("dunder name {n}"),
                    "interpreter internals are not available",
                );
            }
            return;
        }
        if self.report_banned_name(n, range) {
            return;
        }
        let (flag, what) = match n {
            _ if !RESTRICTED_BUILTINS.contains(&n) => (0, ""),
            "type" => (
                F_TYPE_OK,
                "type is allowed only as type(x) with one argument",
            ),
            "super" => (
                F_SUPER_OK,
                "super is allowed only as super() with no arguments",
            ),
            "classmethod" | "staticmethod" | "property" => (
                F_DECORATOR,
                "classmethod/staticmethod/property only as decorators",
            ),
            _ => (0, ""),
        };
        if flag != 0 && !ctx.has(flag) {
            self.report(
                Rule::RestrictedBuiltin,
                range,
                format!("restricted builtin {n} used here"),
                what,
            );
            return;
        }
        if n == "rcParams" && !ctx.has(F_RC_OK) {
            self.report(
                Rule::DangerousSetting,
                range,
                "rcParams used other than by key".into(),
                "write settings as plt.rcParams['font.size'] = 12",
            );
        }
        if self.policy.shadowable_names.contains(n) {
            self.shadow_uses.push((n.to_string(), range));
        }
    }

    /// Reports a read of a banned builtin; whether `n` is one.
    fn report_banned_builtin(&mut self, n: &str, range: TextRange) -> bool {
        let banned = self.policy.banned_builtins.contains(n);
        if banned {
            self.report(
                Rule::BannedBuiltin,
                range,
                format!("banned builtin {n}: {}", reason_for(n)),
                builtin_hint(n),
            );
        }
        banned
    }

    /// Reports a read of a banned name (a module or object); whether `n` is one.
    fn report_banned_name(&mut self, n: &str, range: TextRange) -> bool {
        let banned = self.policy.banned_names.contains(n);
        if banned {
            self.report(
                Rule::BannedName,
                range,
                format!("banned name {n}: {}", reason_for(n)),
                "this module or object is not available; see the allowed imports",
            );
        }
        banned
    }

    // ---------------------------------------------------------------- attributes

    /// Rules for an attribute name in any position (`x.NAME`, `from m import NAME`,
    /// match keyword patterns). Returns false when a violation was reported.
    fn attr_name(&mut self, a: &str, range: TextRange, allow_dunder: bool) -> bool {
        if strings::is_dunder(a) {
            if allow_dunder {
                return true;
            }
            self.report(
                Rule::DunderAttribute,
                range,
                format!("dunder attribute {a}"),
                "interpreter internals are not available; use the public API",
            );
            return false;
        }
        if self.policy.banned_names.contains(a) || self.policy.banned_attributes.contains(a) {
            self.report(
                Rule::BannedAttribute,
                range,
                format!("banned attribute {a}: {}", reason_for(a)),
                "this attribute is not available; use the documented public API",
            );
            return false;
        }
        if self
            .policy
            .banned_attribute_prefixes
            .iter()
            .any(|p| a.starts_with(p.as_str()))
        {
            self.report(
                Rule::IntrospectionAttribute,
                range,
                format!("introspection attribute {a}"),
                "frame, generator, traceback and code objects are not available",
            );
            return false;
        }
        true
    }

    fn private_violation(&self, a: &str, range: TextRange) -> Raw {
        Raw {
            rule: Rule::PrivateAttribute,
            start: range.start().into(),
            end: range.end().into(),
            message: format!("private attribute {a}"),
            hint: "use the public API; _names are allowed only as self._x in your own classes"
                .into(),
        }
    }

    fn attribute(&mut self, at: ast::ExprAttribute, d: u32, ctx: Ctx) {
        let ast::ExprAttribute {
            range,
            value,
            attr,
            ctx: ectx,
        } = at;
        let mut child = ctx.plain().with(F_ATTR_INNER);
        if self.checking {
            let a = normalize::ident(attr.as_str()).into_owned();
            // super().__init__(...) and friends: a dunder method of the job's own class
            let super_call = matches!(&*value, Expr::Call(c)
                if name_of(&c.func).map(normalize::ident).as_deref() == Some("super")
                    && c.args.is_empty() && c.keywords.is_empty());
            let allow_dunder = (super_call && self.policy.allowed_dunder_methods.contains(&a))
                || (matches!(ectx, ExprContext::Load)
                    && self.policy.allowed_dunder_reads.contains(&a));
            let ok = self.attr_name(&a, range, allow_dunder);
            if ok
                && a.starts_with('_')
                && !strings::is_dunder(&a)
                && !self.policy.private_attribute_allowlist.contains(&a)
            {
                let self_name = self.self_names.get(ctx.fn_id as usize).cloned().flatten();
                let base = name_of(&value).map(|n| normalize::ident(n).into_owned());
                let stripped = a.trim_start_matches('_');
                let dangerous = self.policy.banned_names.contains(stripped)
                    || self.policy.banned_attributes.contains(stripped)
                    || self.policy.shadowable_names.contains(stripped)
                    || stripped.is_empty();
                let raw = self.private_violation(&a, range);
                match (self_name, base) {
                    (Some(s), Some(b)) if s == b && !dangerous => {
                        self.pending_private.push(PendingPrivate {
                            fn_id: ctx.fn_id,
                            base: b,
                            raw,
                        })
                    }
                    _ => self.out.push(raw),
                }
            }
            match a.as_str() {
                "format" | "format_map" => match const_str(&value) {
                    Some(s) => {
                        if strings::format_traverses(s) {
                            self.report(
                                Rule::FormatTraversal,
                                range,
                                "format string traverses attributes or indexes".into(),
                                "use plain fields like '{}' or '{:.2f}', or an f-string",
                            );
                        }
                    }
                    None => self.nonconst_format = true,
                },
                "query" | "eval" if !ctx.has(F_CALLED_CHECKED) => self.report(
                    Rule::StringEvaluation,
                    range,
                    format!("{a} evaluates a string expression"),
                    "use boolean indexing: df[df['x'] > 1]",
                ),
                "rcParams" if !ctx.has(F_RC_OK) => self.report(
                    Rule::DangerousSetting,
                    range,
                    "rcParams used other than by key".into(),
                    "write settings as plt.rcParams['font.size'] = 12",
                ),
                _ => {}
            }
            if ctx.has(F_RC_RECEIVER) && RC_METHODS.contains(&a.as_str()) && is_rc_params(&value) {
                child.flags |= F_RC_OK;
            }
            if !ctx.has(F_ATTR_INNER) {
                self.record_chain(&value, a, range, !matches!(ectx, ExprContext::Load));
            }
        }
        self.push_eb(value, d, child);
    }

    fn record_chain(&mut self, value: &Expr, last: String, range: TextRange, store: bool) {
        let mut attrs = vec![last];
        let mut cur = value;
        let root = loop {
            match cur {
                Expr::Attribute(a) => {
                    attrs.push(normalize::ident(a.attr.as_str()).into_owned());
                    cur = &a.value;
                }
                Expr::Name(n) => break Some(normalize::ident(n.id.as_str()).into_owned()),
                _ => break None,
            }
        };
        if let Some(root) = root {
            attrs.reverse();
            attrs.truncate(16); // module paths are short; deeper names cannot match
            self.chains.push(Chain {
                root,
                attrs,
                range,
                store,
            });
        }
    }

    // ---------------------------------------------------------------- imports

    /// Checks a dotted module path; returns the normalised path.
    fn module_path(&mut self, raw: &str, range: TextRange) -> String {
        let comps: Vec<String> = raw
            .split('.')
            .map(|c| normalize::ident(c).into_owned())
            .collect();
        let path = comps.join(".");
        let top = comps.first().map(String::as_str).unwrap_or("");
        if !self.policy.allowed_modules.contains(top) {
            let why = if self.policy.shadowable_names.contains(top) {
                "a standard-library module jobs cannot use"
            } else if self.policy.banned_names.contains(top) {
                reason_for(top)
            } else {
                "not available here"
            };
            self.report(
                Rule::ImportNotAllowed,
                range,
                format!("import of {top}: {why}"),
                crate::gate::policy::import_alternative(top),
            );
            return path;
        }
        for c in comps.iter().skip(1) {
            if !self.attr_name(c, range, false) {
                return path;
            }
            if c.starts_with('_') {
                self.report(
                    Rule::PrivateAttribute,
                    range,
                    format!("private module {c}"),
                    "import public modules only",
                );
                return path;
            }
        }
        if self.policy.module_denied(&path) {
            self.report(
                Rule::SubmoduleDenied,
                range,
                format!("submodule {path} is denied"),
                self.policy.module_hint(&path),
            );
        }
        path
    }

    fn import(&mut self, names: Vec<ast::Alias>, ctx: Ctx) {
        for al in names {
            if !self.checking {
                continue;
            }
            let path = self.module_path(al.name.as_str(), al.range);
            match &al.asname {
                Some(asn) => {
                    self.bind_name(asn.as_str(), al.range, ctx);
                    let n = normalize::ident(asn.as_str()).into_owned();
                    self.aliases.insert(n, path);
                }
                None => {
                    let top = path.split('.').next().unwrap_or("").to_string();
                    self.bind_name(&top, al.range, ctx);
                    self.aliases.insert(top.clone(), top);
                }
            }
        }
    }

    fn import_from(&mut self, f: ast::StmtImportFrom, ctx: Ctx) {
        if !self.checking {
            return;
        }
        let level = f.level.map(|l| l.to_u32()).unwrap_or(0);
        if level == 0
            && f.module
                .as_ref()
                .is_some_and(|m| m.as_str() == "__future__")
        {
            // Compiler directives: they change how the job's code compiles, not what it
            // can reach (the import itself gets a fresh placeholder module at run time).
            for al in &f.names {
                let n = normalize::ident(al.name.as_str());
                if !FUTURE_FEATURES.contains(&n.as_ref()) || al.asname.is_some() {
                    self.report(
                        Rule::ImportNotAllowed,
                        al.range,
                        format!("from __future__ import {n}"),
                        "only compiler directives such as `from __future__ import annotations`",
                    );
                }
            }
            return;
        }
        let module = match (&f.module, level) {
            (Some(m), 0) => m.as_str().to_string(),
            _ => {
                self.report(
                    Rule::ImportForm,
                    f.range,
                    "relative import".into(),
                    "import packages by their absolute name",
                );
                return;
            }
        };
        let path = self.module_path(&module, f.range);
        for al in f.names {
            let n = normalize::ident(al.name.as_str()).into_owned();
            if n == "*" {
                self.report(
                    Rule::ImportForm,
                    al.range,
                    "import *".into(),
                    "import the names you use explicitly",
                );
                continue;
            }
            if !self.attr_name(&n, al.range, false) {
                continue;
            }
            if n.starts_with('_') {
                self.report(
                    Rule::PrivateAttribute,
                    al.range,
                    format!("private name {n}"),
                    "import public names only",
                );
                continue;
            }
            let full = format!("{path}.{n}");
            if self.policy.module_denied(&full) {
                self.report(
                    Rule::SubmoduleDenied,
                    al.range,
                    format!("{full} is denied"),
                    self.policy.module_hint(&full),
                );
            }
            if let Some(hint) = self.policy.registrars.get(&n) {
                self.report(
                    Rule::RegistryMutation,
                    al.range,
                    format!("{full} registers into library state shared with later jobs"),
                    format!("instead {hint}"),
                );
            }
            if n == "rcParams" && al.asname.as_ref().is_some_and(|a| a.as_str() != "rcParams") {
                self.report(
                    Rule::DangerousSetting,
                    al.range,
                    "rcParams imported under another name".into(),
                    "use plt.rcParams['key'] = value",
                );
            }
            let bound = al
                .asname
                .as_ref()
                .map(|a| a.as_str())
                .unwrap_or(al.name.as_str());
            self.bind_name(bound, al.range, ctx);
            self.aliases
                .insert(normalize::ident(bound).into_owned(), full);
        }
    }

    // ---------------------------------------------------------------- calls

    fn call(&mut self, c: ast::ExprCall, d: u32, ctx: Ctx) {
        let ast::ExprCall {
            range,
            func,
            args,
            keywords,
        } = c;
        let mut fflags = 0u16;
        if self.checking {
            let callee = callee_name(&func);
            let starred = args.iter().any(|a| matches!(a, Expr::Starred(_)));
            let splat = keywords.iter().any(|k| k.arg.is_none());
            if let Some(name) = callee.as_deref() {
                match name {
                    "type" if args.len() == 1 && keywords.is_empty() && !starred => {
                        fflags |= F_TYPE_OK
                    }
                    "super" if args.is_empty() && keywords.is_empty() => fflags |= F_SUPER_OK,
                    // A constant name gets the attribute rules here; any name is
                    // checked again at run time by the curated builtins (prelude).
                    "getattr" | "hasattr" if matches!(&*func, Expr::Name(_)) => {
                        if let Some(attr) = args.get(1).and_then(const_str) {
                            let attr = normalize::ident(attr).into_owned();
                            let at = rustpython_parser::ast::Ranged::range(&args[1]);
                            if self.attr_name(&attr, at, false) && attr.starts_with('_') {
                                self.out.push(self.private_violation(&attr, at));
                            }
                        }
                    }
                    "query" | "eval" if matches!(&*func, Expr::Attribute(_)) => {
                        fflags |= F_CALLED_CHECKED;
                        let ok = !starred
                            && args.len() == 1
                            && const_str(&args[0])
                                .and_then(strings::query_refs)
                                .is_some_and(|refs| {
                                    refs.iter().all(|r| {
                                        !self.policy.banned_names.contains(*r)
                                            && !self.policy.banned_builtins.contains(*r)
                                            && !self.policy.shadowable_names.contains(*r)
                                            && !r.starts_with('_')
                                    })
                                })
                            && keywords.iter().all(|k| {
                                k.arg.as_ref().is_some_and(|a| {
                                    matches!(a.as_str(), "inplace" | "engine" | "parser")
                                })
                            });
                        if !ok {
                            self.report(
                                Rule::StringEvaluation,
                                range,
                                format!("{name} with a non-literal or unsafe expression"),
                                "use boolean indexing df[df['x'] > 1], or a literal query without attribute access, indexing or @calls",
                            );
                        }
                    }
                    "load" if args.len() > 2 || starred || splat => {
                        self.report(
                            Rule::BannedKeyword,
                            range,
                            "load with allow_pickle position or unpacked arguments".into(),
                            "call np.load(srcpath('x.npy')) without allow_pickle",
                        );
                    }
                    "use" | "context" | "switch_backend" => {
                        let backend = name == "switch_backend"
                            || matches!(
                                receiver_name(&func).as_deref(),
                                Some("matplotlib" | "mpl")
                            );
                        self.style_call(&args, &keywords, backend, range);
                    }
                    "rc" => self.rc_call(&args, &keywords, range),
                    "rc_context" => self.rc_context_call(&args, &keywords, range),
                    "update" if matches!(&*func, Expr::Attribute(a) if is_rc_params(&a.value)) => {
                        fflags |= F_RC_RECEIVER;
                        let ok =
                            args.len() == 1 && keywords.is_empty() && self.rc_dict_ok(&args[0]);
                        if !ok {
                            self.report(
                                Rule::DangerousSetting,
                                range,
                                "rcParams.update needs a literal dict with literal keys".into(),
                                "write plt.rcParams.update({'font.size': 12})",
                            );
                        }
                    }
                    "set_option" | "option_context" => {
                        let ok = !starred
                            && !splat
                            && args.iter().step_by(2).all(|a| {
                                const_str(a).is_some_and(|k| !self.policy.setting_denied(k))
                            });
                        if !ok {
                            self.report(
                                Rule::DangerousSetting,
                                range,
                                "option set with a non-literal or denied key".into(),
                                "use literal display options, e.g. pd.set_option('display.max_rows', 50)",
                            );
                        }
                    }
                    "StrMethodFormatter" => match args.first().and_then(const_str) {
                        Some(s) if strings::format_traverses(s) => self.report(
                            Rule::FormatTraversal,
                            range,
                            "format string traverses attributes or indexes".into(),
                            "use plain fields like '{x:.2f}'",
                        ),
                        Some(_) => {}
                        None => self.nonconst_format = true,
                    },
                    _ => {}
                }
                if RC_METHODS.contains(&name) {
                    fflags |= F_RC_RECEIVER;
                }
            }
            for k in &keywords {
                self.keyword(k);
            }
        }
        self.push_eb(func, d, ctx.plain().with(fflags));
        self.push_es(args, d, ctx.plain());
        for k in keywords {
            self.push_e(k.value, d, ctx.plain());
        }
    }

    fn keyword(&mut self, k: &ast::Keyword) {
        match &k.arg {
            Some(a) => {
                let a = normalize::ident(a.as_str());
                let a = a.as_ref();
                if strings::is_dunder(a) {
                    self.report(
                        Rule::DunderName,
                        k.range,
                        format!("dunder keyword {a}"),
                        "use ordinary keyword names",
                    );
                }
                match a {
                    "allow_pickle" | "usetex" if !is_falsy_const(&k.value) => self.report(
                        Rule::BannedKeyword,
                        k.range,
                        format!("{a} enabled: {}", keyword_reason(a)),
                        format!("remove {a}="),
                    ),
                    "backend" => {
                        let ok = const_str(&k.value)
                            .is_some_and(|v| v.eq_ignore_ascii_case("agg") || v == "matplotlib");
                        if !ok {
                            self.report(
                                Rule::BannedKeyword,
                                k.range,
                                "backend selects a module to import".into(),
                                "remove backend=",
                            );
                        }
                    }
                    _ => {}
                }
            }
            None => {
                if let Expr::Dict(dct) = &k.value {
                    for key in dct.keys.iter().flatten() {
                        if let Some(s) = const_str(key) {
                            let s = normalize::text(s);
                            if matches!(s.as_ref(), "allow_pickle" | "usetex" | "backend")
                                || strings::is_dunder(&s)
                            {
                                self.report(
                                    Rule::BannedKeyword,
                                    k.range,
                                    format!("{} passed through **", s.as_ref()),
                                    "pass keyword arguments directly",
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    fn rc_dict_ok(&self, e: &Expr) -> bool {
        match e {
            Expr::Dict(dct) => dct.keys.iter().all(|k| {
                k.as_ref()
                    .and_then(const_str)
                    .is_some_and(|s| !self.policy.setting_denied(s))
            }),
            _ => false,
        }
    }

    fn style_call(&mut self, args: &[Expr], kws: &[ast::Keyword], backend: bool, range: TextRange) {
        let ok_name = |s: &str| {
            if backend {
                s.eq_ignore_ascii_case("agg")
            } else {
                strings::style_name_ok(s)
            }
        };
        let ok = kws.iter().all(|k| {
            k.arg
                .as_ref()
                .is_some_and(|a| a.as_str() == "after_reset" || a.as_str() == "force")
        }) && args.len() == 1
            && match &args[0] {
                Expr::Constant(_) => const_str(&args[0]).is_some_and(ok_name),
                Expr::List(l) if !backend => {
                    l.elts.iter().all(|e| const_str(e).is_some_and(ok_name))
                }
                Expr::Tuple(t) if !backend => {
                    t.elts.iter().all(|e| const_str(e).is_some_and(ok_name))
                }
                Expr::Dict(_) if !backend => self.rc_dict_ok(&args[0]),
                _ => false,
            };
        if !ok {
            let (msg, hint) = if backend {
                (
                    "backend other than agg",
                    "the backend is already Agg; remove this call",
                )
            } else {
                (
                    "style from a path, variable or url",
                    "use a built-in style name, e.g. plt.style.use('ggplot')",
                )
            };
            self.report(Rule::DangerousSetting, range, msg.into(), hint);
        }
    }

    fn rc_call(&mut self, args: &[Expr], kws: &[ast::Keyword], range: TextRange) {
        let group = args.first().and_then(const_str);
        let ok = match group {
            Some(g) if args.len() == 1 => kws.iter().all(|k| match &k.arg {
                Some(a) => !self.policy.setting_denied(&format!("{g}.{}", a.as_str())),
                None => false,
            }),
            _ => false,
        };
        if !ok {
            self.report(
                Rule::DangerousSetting,
                range,
                "rc() with a non-literal group, ** or a denied setting".into(),
                "use plt.rc('font', size=12) with literal names",
            );
        }
    }

    fn rc_context_call(&mut self, args: &[Expr], kws: &[ast::Keyword], range: TextRange) {
        let mut ok = args.len() <= 1 && args.first().is_none_or(|a| self.rc_dict_ok(a));
        for k in kws {
            match k.arg.as_ref().map(|a| a.as_str()) {
                Some("rc") => ok &= self.rc_dict_ok(&k.value),
                _ => ok = false, // fname= reads settings from a file; ** hides keys
            }
        }
        if !ok {
            self.report(
                Rule::DangerousSetting,
                range,
                "rc_context with a file, a non-literal dict or a denied setting".into(),
                "use plt.rc_context({'font.size': 12})",
            );
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
            Stmt::AsyncFunctionDef(f) => {
                self.unsupported(f.range, "async function", "use an ordinary def");
                let id = self.new_fn(None);
                let scope = self.new_scope(ctx.scope, ScopeKind::Function);
                self.type_params(f.type_params, f.range, d, ctx);
                self.push_es(f.decorator_list, d, ctx.plain());
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
            Stmt::ClassDef(c) => {
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
                self.push_eb(f.target, d, ctx.plain());
                self.push_eb(f.iter, d, ctx.plain());
                self.push_ss(f.body, d, body_ctx);
                self.push_ss(f.orelse, d, body_ctx);
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
                for it in w.items {
                    self.push_e(it.context_expr, d, ctx.plain());
                    self.push_eo(it.optional_vars, d, ctx.plain());
                }
                self.push_ss(w.body, d, body_ctx);
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
                self.push_ss(t.body, d, body_ctx);
                self.handlers(t.handlers, d, ctx);
                self.push_ss(t.orelse, d, body_ctx);
                self.push_ss(t.finalbody, d, body_ctx);
            }
            Stmt::Assert(a) => {
                self.push_eb(a.test, d, ctx.plain());
                self.push_eo(a.msg, d, ctx.plain());
            }
            Stmt::Import(i) => self.import(i.names, ctx),
            Stmt::ImportFrom(f) => self.import_from(f, ctx),
            Stmt::Global(g) => {
                for n in g.names {
                    let name = normalize::ident(n.as_str()).into_owned();
                    self.global_decls.insert((ctx.scope, name));
                    self.declared_outer
                        .insert(normalize::ident(n.as_str()).into_owned());
                    self.bind_name(n.as_str(), g.range, ctx);
                }
            }
            Stmt::Nonlocal(g) => {
                for n in g.names {
                    self.declared_outer
                        .insert(normalize::ident(n.as_str()).into_owned());
                    self.bind_name(n.as_str(), g.range, ctx);
                }
            }
            Stmt::Expr(e) => self.push_eb(e.value, d, ctx.plain()),
            Stmt::Pass(_) | Stmt::Break(_) | Stmt::Continue(_) => {}
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

    // ---------------------------------------------------------------- whole program

    fn resolve_root(&self, root: &str) -> Option<String> {
        if let Some(p) = self.aliases.get(root) {
            return Some(p.clone());
        }
        // an injected name the job never rebinds stands for its module
        if self.bound.contains(root) {
            return None;
        }
        self.policy.module_for_injected(root)
    }

    fn finish(&mut self) {
        // Banned names and builtins inside functions, comprehensions and classes: a
        // binding is the job's own unless it is declared global; a read is allowed
        // when it resolves to such a binding of a function scope.
        for u in std::mem::take(&mut self.scoped_binds) {
            if self.global_decls.contains(&(u.scope, u.name.clone())) {
                self.check_bound_name(&u.name, u.range);
            }
        }
        for u in std::mem::take(&mut self.scoped_loads) {
            if !self.resolves_locally(u.scope, &u.name) {
                let _ = self.report_banned_builtin(&u.name, u.range)
                    || self.report_banned_name(&u.name, u.range);
            }
        }
        // shadowable names: banned unless the job binds them itself
        for (n, range) in std::mem::take(&mut self.shadow_uses) {
            if !self.bound.contains(&n) {
                self.report(
                    Rule::BannedName,
                    range,
                    format!("banned name {n}: {}", reason_for(&n)),
                    "bind it yourself first, e.g. from scipy import signal",
                );
            }
        }
        // self._x: allowed unless self is rebound in that method or declared outer
        for p in std::mem::take(&mut self.pending_private) {
            if self.fn_stores.contains(&(p.fn_id, p.base.clone()))
                || self.declared_outer.contains(&p.base)
            {
                self.out.push(p.raw);
            }
        }
        // m = np.lib style aliases (a few rounds for chains of aliases)
        for _ in 0..4 {
            let mut changed = false;
            for (t, root, attrs) in &self.assign_aliases {
                if self.aliases.contains_key(t) {
                    continue;
                }
                if let Some(base) = self.resolve_root(root) {
                    let mut p = base;
                    for a in attrs {
                        p.push('.');
                        p.push_str(a);
                    }
                    self.aliases.insert(t.clone(), p);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for ch in std::mem::take(&mut self.chains) {
            let Some(mut path) = self.resolve_root(&ch.root) else {
                continue;
            };
            let mut denied = self.policy.module_denied(&path);
            for a in &ch.attrs {
                if denied {
                    break;
                }
                path.push('.');
                path.push_str(a);
                denied = self.policy.module_denied(&path);
            }
            if denied {
                self.report(
                    Rule::SubmoduleDenied,
                    ch.range,
                    format!("reaches denied {}", crate::gate::verdict::quote(&path)),
                    self.policy.module_hint(&path),
                );
            } else if let Some(hint) = ch
                .attrs
                .last()
                .and_then(|last| self.policy.registrars.get(last))
            {
                self.report(
                    Rule::RegistryMutation,
                    ch.range,
                    format!(
                        "registers into library state shared with later jobs: {}",
                        crate::gate::verdict::quote(&path)
                    ),
                    format!("instead {hint}"),
                );
            } else if ch.store && !pandas_option_ok(self.policy, &path) {
                self.report(
                    Rule::ModuleMutation,
                    ch.range,
                    format!(
                        "changes library module attribute {}",
                        crate::gate::verdict::quote(&path)
                    ),
                    "do not modify library modules; keep your own variables",
                );
            }
        }
        if self.nonconst_format {
            for range in std::mem::take(&mut self.traversal_strings) {
                self.report(
                    Rule::FormatTraversal,
                    range,
                    "format string traverses attributes or indexes".into(),
                    "use plain fields like '{}' or '{:.2f}', or an f-string",
                );
            }
        }
    }
}

/// The bare-name receiver of a method call (`x` in `x.f()`), NFKC-normalised.
fn receiver_name(func: &Expr) -> Option<String> {
    match func {
        Expr::Attribute(a) => name_of(&a.value).map(|n| normalize::ident(n).into_owned()),
        _ => None,
    }
}

/// `pd.options.display.max_rows = 10` and `pd.options.mode.chained_assignment = None`
/// are ordinary pandas; options that import modules (`plotting.backend`, `io.*`) are not.
fn pandas_option_ok(policy: &Policy, path: &str) -> bool {
    match path.strip_prefix("pandas.options.") {
        Some(key) => key.contains('.') && !policy.setting_denied(key),
        None => false,
    }
}

fn builtin_hint(n: &str) -> &'static str {
    match n {
        "open" => "read files with pd.read_csv(srcpath('f.csv')), np.loadtxt(srcpath('f.txt')) or loadmat(srcpath('f.mat'))",
        "setattr" | "delattr" => "use plain attribute access (obj.name = value)",
        "eval" | "exec" | "compile" => "write the code directly instead of evaluating strings",
        "__import__" => "use an import statement with an allowed package",
        "exit" | "quit" => "let the script end normally, or raise an exception",
        "dir" | "vars" | "globals" | "locals" => "keep your own variables; introspection is not available",
        _ => "not available in this environment",
    }
}

fn keyword_reason(k: &str) -> &'static str {
    match k {
        "allow_pickle" => "unpickling runs arbitrary code",
        "usetex" => "spawns latex",
        _ => "not allowed",
    }
}
