//! Ordinary Python the gate used to refuse (names a function binds for itself, operator
//! dunders, `object`, `getattr`/`hasattr`, `__future__`, `unicodedata`, `stat`) passes
//! the gate and runs to the end; a hostile twin of each still fails, statically or at
//! run time with the gate off.

use crate::common;

use common::{builder, expect_ok};
use pyward::gate::{self, Policy};
use pyward::{Executor, Job, JobFailure};

const DRAW: &str = "plt.plot([1, 2]); plt.savefig(OUT)\n";

/// (what, code, the stdout it prints).
const ORDINARY: &[(&str, &str, &str)] = &[
    (
        "a __future__ directive",
        "from __future__ import annotations\ndef f(x: int) -> int:\n    return x + 1\nprint(f(1))\n",
        "2",
    ),
    (
        "parameters named like banned builtins and modules",
        "def f(input, traceback=None, *, open=3):\n    return input * 2 + open\nprint(f(2))\n",
        "7",
    ),
    (
        "a local and a closure named like a banned builtin",
        "def outer():\n    compile = 'c'\n    def inner():\n        return compile * 2\n    return inner()\nprint(outer())\n",
        "cc",
    ),
    (
        "`:=` in a comprehension binds the function's local",
        "def f():\n    return [eval for x in range(2) if (eval := x + 1)]\nprint(f())\n",
        "[1, 2]",
    ),
    (
        "a comprehension target named like a banned builtin",
        "print([input * 2 for input in range(3)])\n",
        "[0, 2, 4]",
    ),
    (
        "a class attribute named like a banned builtin",
        "class C:\n    input = 4\nprint(C.input)\n",
        "4",
    ),
    (
        "in-place, reflected and bitwise operator methods",
        "class V:\n    def __init__(self, x):\n        self.x = x\n    def __add__(self, o):\n        return V(self.x + o)\n\
         \x20   def __radd__(self, o):\n        return V(self.x + o)\n    def __iadd__(self, o):\n        self.x += 10 * o\n        return self\n\
         \x20   def __imatmul__(self, o):\n        return self\n    def __rpow__(self, o):\n        return o\n\
         \x20   def __or__(self, o):\n        return V(self.x | o)\n    def __invert__(self):\n        return V(-self.x)\n\
         v = V(1)\nv += 2\nv @= 3\nv = 1 + v\nprint(v.x, 2 ** v, (~(v | 0)).x)\n",
        "22 2 -22",
    ),
    (
        "object as a value and in annotations",
        "MISSING = object()\ndef g(x: object = MISSING) -> object:\n    return x is MISSING\nprint(g(), g(1))\n",
        "True False",
    ),
    (
        "getattr and hasattr on public names",
        "class P:\n    x = 5\nname = 'x'\nprint(getattr(P, 'x'), getattr(P, 'y', 7), hasattr(P, 'x'), hasattr(P, 'nope'), getattr(P(), name))\n",
        "5 7 True False 5",
    ),
    (
        "unicodedata and stat",
        "import unicodedata, stat\nprint(unicodedata.name('a'), stat.S_ISDIR(stat.S_IFDIR))\n",
        "LATIN SMALL LETTER A True",
    ),
];

/// Hostile twins the gate refuses: (what, code, the rule that must fire).
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "a local os does not unlock os.system",
        "def f(os):\n    return os.system('true')\n",
        "banned-attribute",
    ),
    (
        "a read of a banned builtin nobody bound",
        "def f():\n    return eval('1 + 1')\n",
        "banned-builtin",
    ),
    (
        "a global declaration rebinds the module's builtin",
        "def f():\n    global input\n    input = 3\n",
        "banned-builtin",
    ),
    (
        "module-scope rebinding of a builtin",
        "input = 3\n",
        "banned-builtin",
    ),
    (
        "a class body's read can reach the builtins",
        "class C:\n    eval = 1\n    x = eval\n",
        "banned-builtin",
    ),
    (
        "a method does not see its class's names",
        "class C:\n    compile = 1\n    def m(self):\n        return compile('1', 'x', 'eval')\n",
        "banned-builtin",
    ),
    (
        "a comprehension's first iterable is the enclosing scope's",
        "x = [eval for eval in eval('[1]')]\n",
        "banned-builtin",
    ),
    (
        "`:=` in a module-level comprehension rebinds the module's builtin",
        "xs = [eval for x in range(1) if (eval := 1)]\n",
        "banned-builtin",
    ),
    (
        "object's subclasses",
        "print(object.__subclasses__())\n",
        "dunder-attribute",
    ),
    (
        "getattr of a private name",
        "getattr(plt, '_pylab_helpers')\n",
        "private-attribute",
    ),
    (
        "getattr of a banned attribute",
        "getattr(np, 'system')\n",
        "banned-attribute",
    ),
    (
        "a __future__ import that is no directive",
        "from __future__ import braces\n",
        "import-not-allowed",
    ),
    (
        "an unreviewed stdlib module",
        "import queue\n",
        "import-not-allowed",
    ),
];

fn run(exec: &Executor, code: &str) -> pyward::Outcome {
    exec.run(Job::new(format!("{code}{DRAW}"))).unwrap()
}

#[test]
fn ordinary_python_passes_the_gate_and_runs_to_the_end() {
    let policy = Policy::figures();
    let exec = builder().build().unwrap();
    for (what, code, printed) in ORDINARY {
        let verdict = gate::check(code, &policy).unwrap();
        assert!(
            verdict.is_allowed(),
            "{what}: {}",
            verdict.teaching_text(&policy)
        );
        let o = run(&exec, code);
        expect_ok(&o);
        assert_eq!(o.stdout.trim(), *printed, "{what}");
    }
}

#[test]
fn each_hostile_twin_is_still_refused_by_the_gate() {
    let policy = Policy::figures();
    for (what, code, rule) in REFUSED {
        let verdict = gate::check(code, &policy).unwrap();
        let rules: Vec<&str> = verdict.violations.iter().map(|v| v.rule.id()).collect();
        assert!(
            rules.contains(rule),
            "{what}: expected {rule}, got {rules:?}"
        );
    }
}

/// The message of the job's Python error (panics on any other outcome).
fn python_error(o: &pyward::Outcome) -> (String, String) {
    match o.failure() {
        Some(JobFailure::PythonError(e)) => (e.type_name.clone(), e.message.clone()),
        other => panic!("expected a Python error, got {other:?}"),
    }
}

#[test]
fn with_the_gate_off_the_runtime_refuses_what_getattr_must_not_reach() {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    for (call, name) in [
        ("getattr(1, '__class__')", "__class__"),
        ("getattr(np, 'system')", "system"),
        ("getattr(plt, 'rc' + 'Params')", "rcParams"),
        ("hasattr(np, '_core')", "_core"),
        ("getattr((lambda: (yield))(), 'gi_frame')", "gi_frame"),
        ("getattr(np, 'load')", "load"),
    ] {
        let o = run(&exec, &format!("print({call})\n"));
        let (kind, message) = python_error(&o);
        assert_eq!(kind, "PermissionError", "{call}: {message}");
        assert!(
            message.contains(name) && message.contains("not allowed"),
            "{call}: {message}"
        );
        assert!(o.stdout.is_empty(), "{call} printed {:?}", o.stdout);
    }
    // A default does not swallow the refusal.
    let o = run(&exec, "print(getattr(np, '_core', 'fallback'))\n");
    assert_eq!(python_error(&o).0, "PermissionError");
}

#[test]
fn a_missing_attribute_of_a_module_names_the_proxy_not_the_real_module() {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let o = run(
        &exec,
        "try:\n    np.no_such_name_zz\nexcept AttributeError as e:\n    \
         print(type(e.obj).__name__, e.obj is np, e.name, e.__context__, e.__cause__)\n",
    );
    expect_ok(&o);
    assert_eq!(
        o.stdout.trim(),
        "_ModuleProxy True no_such_name_zz None None"
    );
}
