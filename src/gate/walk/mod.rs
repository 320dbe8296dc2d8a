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
//! This file holds the walker itself: its state, the context flags, the explicit stack
//! and the loop that drains it. The exhaustive dispatch is in `statements` and
//! `expressions` (expressions and match patterns); the rules live beside them: `names`
//! (names and attributes), `imports`, `calls` (calls, keywords and the library-specific
//! settings rules), `classes` (string classes) and `program` (what needs the whole
//! program).

use std::collections::{HashMap, HashSet};

use rustpython_parser::ast::{
    self, Constant, ExceptHandler, Expr, ExprContext, Pattern, Stmt, TypeParam,
};
use rustpython_parser::text_size::TextRange;

use crate::gate::normalize;
use crate::gate::policy::names::{reason_for, RESTRICTED_BUILTINS};
use crate::gate::policy::Policy;
use crate::gate::strings;
use crate::gate::verdict::Rule;

mod calls;
mod classes;
mod expressions;
mod imports;
mod names;
mod program;
mod statements;

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
/// This name is the value of an attribute that is a member of its view (`os.path`,
/// `pathlib.Path`): the one way a job may name `os` or `pathlib`, banned names whose
/// modules it may import as views holding reviewed members only. What follows
/// `os.path.` is judged by the whole-program pass against the members of `os.path`.
const F_VIEW_MEMBER: u16 = 256;
/// The value of a `.__name__` or `.__qualname__` read: `x.__class__` may appear here
/// (`e.__class__.__name__` names a type as `type(e).__name__` does).
const F_NAME_OF: u16 = 512;
/// A statement directly in the body of a `try` whose handlers catch `ImportError`: an
/// import of a package this environment lacks (`from tqdm import tqdm`) may appear
/// here, as the import fails at run time into the job's own fallback.
const F_IMPORT_FALLBACK: u16 = 1024;

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
    /// Banned module names the job binds for a value of its own (never the view an
    /// `import os` binds), and the reads of such names, decided in `finish`.
    own_module_names: HashSet<String>,
    module_name_reads: Vec<(String, TextRange)>,
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
            own_module_names: HashSet::new(),
            module_name_reads: Vec::new(),
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

    fn unsupported(&mut self, range: TextRange, what: &str, hint: &str) {
        if self.checking {
            self.report(Rule::UnsupportedSyntax, range, what.into(), hint);
        }
    }
}
