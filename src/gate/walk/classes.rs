//! Classes that answer for a string: subclasses of `str`, `bytes` and the other string
//! types that define behaviour of their own, and the ways around a class statement that
//! give a class such behaviour later.
//!
//! A run-time guard that asks a name about itself (`name.startswith('_')`, `'..' in
//! path`, `name == '__future__'`) is answered by the name's own class. The curated
//! runtime no longer asks (it judges exact copies, see python/prelude/), and this rule
//! is the layer before it: no plotting or table code needs a string that decides what
//! it answers, so a string class may hold constant members only (the `class
//! Color(str, Enum): RED = 'red'` idiom), and everything that would give it a method is
//! refused where the gate can see it:
//!
//! - a `def`, a `lambda` or any computed value in its body (the overridden method may
//!   be any of them: `startswith`, `__contains__`, `__eq__`, `__hash__`, `partition`,
//!   `__getitem__`, `__len__`, `__str__`, `__format__`, `__index__`, `__fspath__`...: the
//!   rule is "no behaviour at all", not a list of dangerous names);
//! - a base beside the string type that is not an enum (a mixin's methods come first in
//!   the method resolution order), and a decorator other than `enum.unique`;
//! - an attribute stored on the class, its members or an alias of it after the class
//!   statement (`S.startswith = f`, `Color.RED.find = f`), and an attribute stored
//!   through `type(x)` (`type(s).startswith = f`, refused as a restricted position of
//!   `type`);
//! - a class whose base is computed at run time (`class S(type(''))`, `class S(f())`,
//!   `class S(bases[0])`, `T = type(''); class S(T)`): the gate cannot tell that it is a
//!   string class;
//! - storing an attribute named like a string method that no figure code sets on
//!   anything (`x.startswith = f`, `x.partition = f`): an instance's attribute shadows
//!   its class's method for every caller that looks it up by name.
//!
//! A subclass of a job's own string class is a string class too, and so is a plain alias
//! of one (`T = S`), resolved once the whole program is known. What stays out of reach
//! of a static rule (an attribute stored on an instance under a common name such as
//! `lower`, a class reached through a container) is the curated runtime's: every guard
//! there judges an exact copy, whatever the object claims.

use super::*;

/// Types whose subclasses are strings to a guard: Python's, `collections.UserString`,
/// `enum.StrEnum` and numpy's scalar string types (`np.str_`, `np.bytes_`, with their
/// numpy 1 spellings).
const STRING_TYPES: &[&str] = &[
    "str",
    "bytes",
    "bytearray",
    "UserString",
    "StrEnum",
    "str_",
    "bytes_",
    "unicode_",
    "string_",
];

/// Bases a string class may have beside its string type: the `(str, Enum)` idiom.
const ENUM_BASES: &[&str] = &["Enum", "ReprEnum", "object"];

/// Calls that build a base class and are ordinary in figure code (`class
/// Point(namedtuple('Point', 'x y'))`): tuple classes, never strings.
const TUPLE_FACTORIES: &[&str] = &["namedtuple", "NamedTuple"];

/// Decorators a string class may carry.
const STRING_CLASS_DECORATORS: &[&str] = &["unique"];

/// String and bytes method names that plotting and table code never stores as an
/// attribute of anything, while a guard calls them on a name (`startswith`, `find`,
/// `partition`, ...): storing one makes an object's lookup of that method answer with
/// the job's value. Names that are ordinary attributes (`index`, `count`, `title`,
/// `format`, `center`, `lower`, `upper`, `split`, `strip`, `replace`, `join`) are left
/// to the run time.
const STRING_METHOD_STORES: &[&str] = &[
    "startswith",
    "endswith",
    "find",
    "rfind",
    "rindex",
    "partition",
    "rpartition",
    "rsplit",
    "lstrip",
    "rstrip",
    "casefold",
    "isidentifier",
    "isascii",
    "isalnum",
    "isalpha",
    "isdigit",
    "isdecimal",
    "isnumeric",
    "isspace",
    "isprintable",
    "removeprefix",
    "removesuffix",
    "encode",
    "decode",
    "splitlines",
    "expandtabs",
    "translate",
    "maketrans",
    "swapcase",
    "zfill",
    "format_map",
];

const HINT: &str = "use plain str (or bytes) values: name a set of strings with a dict or \
                    a plain Enum and read .value; a str subclass may hold constant members only";

/// A class base as written.
pub(super) enum Base {
    /// A name or dotted name, or a subscript of one by a type (`Generic[T]`): its last
    /// component, NFKC-normalised.
    Named(String),
    /// A tuple class factory (`namedtuple(...)`).
    TupleFactory,
    /// Anything else: computed at run time (`type('')`, `f()`, `*bases`, `a or b`).
    Computed,
}

/// What the gate noted about one class statement.
pub(super) struct ClassInfo {
    name: String,
    range: TextRange,
    bases: Vec<Base>,
    /// The first thing in the body that a string class may not hold.
    offence: Option<String>,
    /// A decorator other than [`STRING_CLASS_DECORATORS`].
    decorated: bool,
}

/// The last component of a name or dotted name (`np.str_` -> `str_`).
fn last_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Name(n) => Some(normalize::ident(n.id.as_str()).into_owned()),
        Expr::Attribute(a) => Some(normalize::ident(a.attr.as_str()).into_owned()),
        _ => None,
    }
}

fn base_of(e: &Expr) -> Base {
    match e {
        Expr::Name(_) | Expr::Attribute(_) => last_name(e).map_or(Base::Computed, Base::Named),
        // `Generic[T]`, `Mapping[str, int]`; but an item picked by a constant index or
        // key (`bases[0]`, `kinds['text']`) is whatever the container holds.
        Expr::Subscript(s) if !matches!(&*s.slice, Expr::Constant(_)) => {
            last_name(&s.value).map_or(Base::Computed, Base::Named)
        }
        Expr::Call(c)
            if callee_name(&c.func).is_some_and(|n| TUPLE_FACTORIES.contains(&n.as_str())) =>
        {
            Base::TupleFactory
        }
        _ => Base::Computed,
    }
}

/// A value a string class may hold: a constant, a tuple or list of them, a negated
/// number, or `auto()`.
fn is_constant_member(e: &Expr) -> bool {
    match e {
        Expr::Constant(_) => true,
        Expr::Tuple(t) => t.elts.iter().all(is_constant_member),
        Expr::List(l) => l.elts.iter().all(is_constant_member),
        Expr::UnaryOp(u) => matches!(&*u.operand, Expr::Constant(_)),
        Expr::Call(c) => {
            c.args.is_empty()
                && c.keywords.is_empty()
                && callee_name(&c.func).as_deref() == Some("auto")
        }
        _ => false,
    }
}

/// The first statement of a class body that gives a string class behaviour, described.
fn body_offence(body: &[Stmt]) -> Option<String> {
    body.iter().find_map(|s| match s {
        Stmt::Pass(_) => None,
        Stmt::Expr(e) if matches!(&*e.value, Expr::Constant(_)) => None,
        Stmt::Assign(a)
            if a.targets.iter().all(|t| matches!(t, Expr::Name(_)))
                && is_constant_member(&a.value) =>
        {
            None
        }
        Stmt::AnnAssign(a)
            if matches!(&*a.target, Expr::Name(_))
                && a.value.as_deref().is_none_or(is_constant_member) =>
        {
            None
        }
        Stmt::FunctionDef(f) => Some(format!(
            "defines method {}",
            normalize::ident(f.name.as_str())
        )),
        Stmt::AsyncFunctionDef(f) => Some(format!(
            "defines method {}",
            normalize::ident(f.name.as_str())
        )),
        Stmt::Assign(a) => Some(match a.targets.first().and_then(last_name) {
            Some(n) => format!("assigns {n} a computed value"),
            None => "assigns a computed value".into(),
        }),
        Stmt::AnnAssign(a) => Some(match last_name(&a.target) {
            Some(n) => format!("assigns {n} a computed value"),
            None => "assigns a computed value".into(),
        }),
        Stmt::ClassDef(c) => Some(format!("defines class {}", c.name.as_str())),
        _ => Some("runs statements in its body".into()),
    })
}

impl Walker<'_> {
    /// Notes a class statement before its parts are walked (and moved).
    pub(super) fn note_class(&mut self, c: &ast::StmtClassDef) {
        if !self.checking {
            return;
        }
        let decorated = c.decorator_list.iter().any(|d| {
            let target = match d {
                Expr::Call(call) => &call.func,
                other => other,
            };
            !last_name(target).is_some_and(|n| STRING_CLASS_DECORATORS.contains(&n.as_str()))
        });
        self.classes.push(ClassInfo {
            name: normalize::ident(c.name.as_str()).into_owned(),
            range: c.range,
            bases: c.bases.iter().map(base_of).collect(),
            offence: body_offence(&c.body),
            decorated,
        });
    }

    /// Notes `T = type(x)`: a class base written as `T` is computed at run time.
    pub(super) fn note_type_alias(&mut self, targets: &[Expr], value: &Expr) {
        if !self.checking {
            return;
        }
        let is_type_call = matches!(value, Expr::Call(c)
            if name_of(&c.func).map(normalize::ident).as_deref() == Some("type"));
        if is_type_call {
            for t in targets {
                if let Some(n) = name_of(t) {
                    self.type_aliases.insert(normalize::ident(n).into_owned());
                }
            }
        }
    }

    /// An attribute stored or deleted (`ectx` not `Load`): through `type(x)`, or under
    /// the name of a string method.
    pub(super) fn check_attribute_store(&mut self, value: &Expr, attr: &str, range: TextRange) {
        let through_type = matches!(value, Expr::Call(c)
            if name_of(&c.func).map(normalize::ident).as_deref() == Some("type"));
        if through_type {
            self.report(
                Rule::RestrictedBuiltin,
                range,
                format!("sets attribute {attr} of a class through type(...)"),
                "set attributes on your own objects; a class is changed in its class statement",
            );
        }
        if STRING_METHOD_STORES.contains(&attr) {
            self.report(
                Rule::StringClass,
                range,
                format!("sets attribute {attr}, a string method's name: an object that answers for a string"),
                HINT,
            );
        }
    }

    /// The class rules, once every class, alias and attribute store of the program is
    /// known (see the module docs).
    pub(super) fn check_classes(&mut self) {
        let mut import_targets: HashMap<&str, &str> = HashMap::new();
        for (alias, path) in &self.aliases {
            import_targets.insert(alias, path.rsplit('.').next().unwrap_or(path));
        }
        // A base as its name, seen through an import alias (`from collections import
        // UserString as U`).
        let resolve =
            |n: &str| -> String { import_targets.get(n).copied().unwrap_or(n).to_string() };
        let mut stringy: HashSet<String> = STRING_TYPES.iter().map(|s| s.to_string()).collect();
        // The job's own string classes and plain aliases of them, to a fixed point.
        loop {
            let mut grew = false;
            for c in &self.classes {
                let is_string = c
                    .bases
                    .iter()
                    .any(|b| matches!(b, Base::Named(n) if stringy.contains(&resolve(n))));
                if is_string && stringy.insert(c.name.clone()) {
                    grew = true;
                }
            }
            for (target, root, attrs) in &self.assign_aliases {
                let from_string = stringy.contains(&resolve(root))
                    || attrs.last().is_some_and(|a| stringy.contains(a));
                if from_string && stringy.insert(target.clone()) {
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let mut found: Vec<(TextRange, String, &str)> = Vec::new();
        for c in &self.classes {
            let named = |b: &Base| match b {
                Base::Named(n) => Some(resolve(n)),
                _ => None,
            };
            let computed = c.bases.iter().any(|b| match b {
                Base::Computed => true,
                Base::Named(n) => self.type_aliases.contains(n),
                Base::TupleFactory => false,
            });
            if computed {
                found.push((
                    c.range,
                    format!(
                        "class {} has a base computed at run time, which could be a string type",
                        c.name
                    ),
                    "write the base class by name, e.g. class Reading(Base):",
                ));
                continue;
            }
            let Some(base) = c
                .bases
                .iter()
                .filter_map(named)
                .find(|n| stringy.contains(n))
            else {
                continue;
            };
            let what = if let Some(offence) = &c.offence {
                offence.clone()
            } else if let Some(other) = c
                .bases
                .iter()
                .filter_map(named)
                .find(|n| !stringy.contains(n) && !ENUM_BASES.contains(&n.as_str()))
            {
                format!("mixes in {other}, whose methods would answer for the string")
            } else if c.bases.iter().any(|b| matches!(b, Base::TupleFactory)) {
                "mixes in a tuple class".into()
            } else if c.decorated {
                "is decorated".into()
            } else {
                continue;
            };
            found.push((
                c.range,
                format!(
                    "class {} subclasses {base} and {what}: a string that decides what it answers",
                    c.name
                ),
                HINT,
            ));
        }
        for ch in &self.chains {
            if ch.store && stringy.contains(&ch.root) {
                found.push((
                    ch.range,
                    format!(
                        "changes {}.{} of string class {} after its class statement",
                        ch.root,
                        ch.attrs.join("."),
                        ch.root
                    ),
                    HINT,
                ));
            }
        }
        for (range, message, hint) in found {
            self.report(Rule::StringClass, range, message, hint);
        }
    }
}
