//! Names that lie: runtime guards judge an exact copy of a name or path, never the
//! object that claims to be it, and the gate refuses the classes that would lie.
//!
//! A `str` subclass whose `startswith`, `__contains__`, `__eq__`, `__hash__`,
//! `partition`, `__format__` or `__len__` answers what its author likes, a `bytes`
//! subclass doing the same, an `os.PathLike` whose `__fspath__` names one file to the
//! check and another to the open, and a format string built at run time
//! (`'{0' + chr(46) + '__class__}'`) were each let through by a guard that asked the
//! object about itself. Each layer is proved alone, through a real worker:
//!
//! - **gate off** ([`Policy::gate_disabled_for_testing`]): one probe hands lying objects
//!   to every guard of the curated runtime (curated `getattr`/`hasattr`, the module
//!   views and the imported-on-use stand-in, the guarded import's name, fromlist and
//!   level, `srcpath`, `listdir`, `get_sample_data`, the guarded `open` that numpy
//!   uses, the job's `Path` and a subclass of it that lies, savefig's output name,
//!   `str.format`/`format_map` and a library formatter).
//!   An attempt prints `REACHED` only if it got the object, imported the module or
//!   opened the file; the test asserts none did, that each attempt ended in the
//!   refusal of the guard meant to judge it (the message says which), and that the
//!   job otherwise ran normally (its figures, with the exact name of a lying file
//!   name). Two more jobs hand the output caps a lying `__len__`.
//! - **gate on** ([`Policy::figures`]): `gate::check` refuses every lying class form
//!   (`string-class`) and still allows the string classes plotting code writes; the
//!   issue's attack run through the executor is rejected before it runs, and a format
//!   traversal built with `chr()`, which no static rule can see, is refused by the
//!   runtime.
//!
//! The payloads are harmless if they succeed: they read `matplotlib`'s own rc file (a
//! file every worker may read, which only the curated `open` keeps a job from), print
//! the class of `1`, import `pty`, `tabnanny` or `matplotlib.testing`, or list the worker's own
//! directories.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{builder, expect_ok, png_size};
use pyward::gate::{self, Policy, Rule};
use pyward::{Job, JobFailure};

/// Lying `str` and `bytes` classes for the gate-off probe, built from tables so that
/// every method a guard might call answers whatever an instance's `answers` say (an
/// answer that is callable is called with the method's arguments) and honestly
/// otherwise. Also the probe's bookkeeping: `probe(key, attempt, reached)` records the
/// attempt's outcome, `REACHED` when `reached(value)` says it got what it aimed at.
const GATE_OFF_HEAD: &str = r#"
G = srcpath.__globals__
os = G['os']
sys = G['sys']
B = G['builtins']
json = B.__import__('json')
import matplotlib
import matplotlib.ticker as mticker
from matplotlib import cbook
import string

u = '_' * 2
DUNDER = u + 'class' + u
DOT = chr(46)

LIED = ['startswith', 'endswith', '__contains__', '__eq__', '__ne__', '__hash__', 'find',
        'rfind', 'index', 'rindex', 'split', 'rsplit', 'partition', 'rpartition',
        '__getitem__', '__iter__', '__str__', '__repr__', '__format__', '__len__', 'lower',
        'upper', 'strip', 'lstrip', 'rstrip', 'replace', 'encode', 'decode', 'casefold',
        'isascii', 'isidentifier', 'join', '__add__', '__radd__', '__mod__', '__lt__']

def lying(honest_type, name):
    honest = B.getattr(honest_type, name, None)
    def method(self, *args):
        answers = B.object.__getattribute__(self, '__dict__').get('answers', {})
        if name in answers:
            answer = answers[name]
            return answer(*args) if B.callable(answer) else answer
        if honest is None:
            raise TypeError(name)
        return honest(self, *args)
    return method

def liar_class(base):
    names = [n for n in LIED if B.hasattr(base, n)] + ['__fspath__', '__index__']
    return B.type('Liar', (base,), {n: lying(base, n) for n in names})

StrLiar = liar_class(str)
BytesLiar = liar_class(bytes)

def liar(text, **answers):
    s = (StrLiar if B.type(text) is str else BytesLiar)(text)
    s.answers = answers
    return s

def first_then(first, then):
    calls = [0]
    def answer(*args):
        calls[0] += 1
        return first if calls[0] == 1 else then
    return answer

def loaded(names):
    return sorted({B.str.__str__(k) for k in B.list(sys.modules)} & B.set(names))

WATCHED = ['pty', 'tabnanny', 'matplotlib.testing']
print('PRELOADED', json.dumps(loaded(WATCHED)))

REPORT = {}
def probe(key, attempt, reached=lambda value: True):
    try:
        value = attempt()
    except Exception as e:
        outcome = B.type(e).__name__ + ': ' + B.str(e)[:240]
    else:
        outcome = 'REACHED' if reached(value) else 'returned'
    if outcome == 'REACHED':
        print('REACHED', key)
    REPORT[key] = outcome

SRC_REAL = os.path.realpath(SRC)
OUT_DIR = os.path.dirname(OUT)
# The job runs in SRC (issue 38); its scratch folder is beside out/.
TMP = os.path.join(os.path.dirname(OUT_DIR), 'tmp')
# The real module's answer (the job's view refuses host details).
MPLRC = sys.modules['matplotlib'].get_data_path() + '/matplotlibrc'
INSIDE = TMP + '/inside.txt'
f = B.open(INSIDE, 'w')
f.write('inside')
f.close()

class Flip:
    """A path-like whose first answer is inside the job's folders and whose later
    answers are `later`."""
    def __init__(self, first, later):
        self.answers = [first, later]
    def __fspath__(self):
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

def inside_src(path):
    return path == SRC_REAL or path.startswith(SRC_REAL + '/')
"#;

/// The attempts, one per guard and kind of lie, each with what would mean it got
/// through.
const GATE_OFF_PROBE: &str = r#"
gen = (x for x in [1])
leaves = dict(__contains__=False, startswith=False, replace=lambda *a: 'x',
              split=lambda *a: ['x'])

# curated getattr and hasattr
probe('getattr|lying dunder', lambda: getattr(1, liar(DUNDER, startswith=False)),
      lambda r: r is B.int)
probe('hasattr|lying dunder', lambda: hasattr(1, liar(DUNDER, startswith=False)),
      lambda r: r is True)
probe('getattr|lying frame prefix', lambda: getattr(gen, liar('gi_frame', startswith=False)))
probe('getattr|lying checked name', lambda: getattr(plt, liar('rcParams', __eq__=False)))
probe('getattr|lying banned attribute',
      lambda: getattr(string, liar('Formatter', __eq__=False)))
# module views and the imported-on-use stand-in
probe('module view|lying private', lambda: np.__getattr__(liar('_NoValue', startswith=False)))
probe('imported on use|lying private', lambda: pd.__getattr__(liar('_libs', startswith=False)))
# the guarded import
probe('import|lying name (lazy path)',
      lambda: __import__(liar('pty', partition=lambda sep: ('numpy', '', ''), __eq__=False,
                                    __hash__=B.hash('numpy')), None, None, [], 0),
      lambda r: 'pty' in loaded(WATCHED))
probe('import|lying name',
      lambda: __import__(liar('tabnanny', partition=lambda sep: ('numpy', '', ''),
                                    startswith=False, __eq__=False)),
      lambda r: 'tabnanny' in loaded(WATCHED))
probe('import|lying fromlist name',
      lambda: __import__('matplotlib', None, None,
                         [liar('testing', __eq__=False, __format__=first_then('ticker', 'testing'))],
                         0),
      lambda r: 'matplotlib.testing' in loaded(WATCHED))
LyingList = B.type('LyingList', (B.list,), {'__iter__': lambda self: B.iter(['testing'])})
probe('import|lying fromlist container',
      lambda: __import__('matplotlib', None, None, LyingList(['ticker']), 0),
      lambda r: 'matplotlib.testing' in loaded(WATCHED))
LyingInt = B.type('LyingInt', (B.int,), {'__bool__': lambda self: False})
probe('import|lying level', lambda: __import__('numpy', None, None, [], LyingInt(1)))
# inputs
probe('srcpath|lying ..', lambda: srcpath(liar('..', **leaves)), lambda r: not inside_src(r))
probe('srcpath|path-like', lambda: srcpath(Flip('data.csv', '..')), lambda r: not inside_src(r))
probe('listdir|lying ..', lambda: listdir(liar('..', **leaves)), lambda r: 'src' in r)
probe('listdir|lying length', lambda: listdir(liar('..', __len__=0)), lambda r: 'src' in r)
probe('get_sample_data|lying ..',
      lambda: cbook.get_sample_data(liar('../matplotlibrc', **leaves), asfileobj=True))
# the guarded open (numpy's `open`)
probe('open|lying str', lambda: open(liar(MPLRC, startswith=True, __contains__=False)))
probe('open|lying bytes', lambda: open(liar(MPLRC.encode(), startswith=True)))
probe('open|path-like second answer', lambda: open(Flip(INSIDE, MPLRC)))
probe('open|lying mode', lambda: open(SRC + '/data.csv', liar('w', __contains__=False)))
probe('open|opener', lambda: open(TMP + '/opened.txt', 'w', opener=lambda p, f: os.dup(1)))
probe('open|descriptor', lambda: open(1, 'w', closefd=False))
probe('open|bytes inside', lambda: open(INSIDE.encode()).read(), lambda r: r != 'inside')
probe('np.fromfile|lying str',
      lambda: np.fromfile(liar(MPLRC, startswith=True, __contains__=False), dtype=np.uint8))
probe('np.fromfile|path-like lying str',
      lambda: np.fromfile(Flip(liar(MPLRC, startswith=True), None), dtype=np.uint8))
# the job's Path: guards read the reviewed class's text, never a subclass's methods
from pathlib import Path
class LyingPath(Path):
    def __fspath__(self):
        return MPLRC
    def __str__(self):
        return MPLRC
probe('open|Path subclass', lambda: open(LyingPath('data.csv')))
probe('Path.read_text|Path subclass', lambda: LyingPath('data.csv').read_text(),
      lambda r: r != 'a,b\n1,2\n')
probe('Path|lying str', lambda: Path(liar(MPLRC, startswith=True, __contains__=False)).read_text())
probe('Path|path-like', lambda: Path(Flip(INSIDE, MPLRC)).read_text())
# savefig's output name
plt.figure()
plt.plot([1, 3, 2])
probe('savefig|lying name',
      lambda: plt.savefig(liar(OUT_DIR + '/lie.png', rfind=0, startswith=True, endswith=True,
                               __contains__=False)),
      lambda r: False)
probe('savefig|path-like', lambda: plt.savefig(Flip(OUT_DIR + '/flip.png', '/tmp/flip.png')))
probe('savefig|Path subclass', lambda: plt.savefig(LyingPath(OUT_DIR + '/sub.png')))
probe('savefig|lying format',
      lambda: plt.savefig(OUT_DIR + '/fmt.png', format=liar('png', lower=lambda: 'svg')),
      lambda r: False)
# format fields built at run time, whoever formats them
probe('str.format|dunder', lambda: ('{0' + DOT + DUNDER + '}').format(1),
      lambda r: 'int' in r)
probe('str.format|environment',
      lambda: ('{0' + DOT + u + 'globals' + u + '[os]' + DOT + 'environ}').format(srcpath),
      lambda r: 'MPLBACKEND' in r)
probe('str.format|frame prefix', lambda: ('{0' + DOT + 'gi_frame}').format(gen))
probe('str.format|nested spec', lambda: ('{0:{1' + DOT + DUNDER + '}}').format(1, 2))
probe('str.format_map|dunder', lambda: ('{x' + DOT + DUNDER + '}').format_map({'x': 1}),
      lambda r: 'int' in r)
probe('str.format|lying format string',
      lambda: liar('{0' + DOT + DUNDER + '}', __contains__=False).format(1),
      lambda r: 'int' in r)
probe('str.format|unbound', lambda: str.format('{0' + DOT + DUNDER + '}', 1),
      lambda r: 'int' in r)
probe('str.format|np.str_', lambda: np.str_('{0' + DOT + DUNDER + '}').format(1),
      lambda r: 'int' in r)
probe('StrMethodFormatter|dunder',
      lambda: mticker.StrMethodFormatter('{x' + DOT + DUNDER + '}')(1.0),
      lambda r: 'float' in r)
# ordinary formatting still works, with the dunders the gate lets a job read
probe('str.format|__name__', lambda: ('{0' + DOT + u + 'name' + u + '}').format(B.int),
      lambda r: r != 'int')
probe('library message|cls.__name__', lambda: plt.plot([1], colour='r'))
print('FORMATTED', '{0:.2f} {x[0]} {0.real} {name:>3}|'.format(1.5, x=[3], name='a'),
      '{a:,}'.format_map({'a': 1000}), mticker.StrMethodFormatter('{x:.1f}')(2.25))

print('REPORT', json.dumps(REPORT))
plt.figure()
plt.plot([1, 2])
plt.savefig(OUT)
"#;

/// What each gate-off attempt must end in: the start of its recorded outcome (the
/// exception type and the refusal of the guard meant to judge it), or `returned` for
/// the attempts that must work on the exact copy.
const EXPECT: &[(&str, &str)] = &[
    (
        "getattr|lying dunder",
        "PermissionError: getattr(..., '__class__') is not allowed",
    ),
    (
        "hasattr|lying dunder",
        "PermissionError: hasattr(..., '__class__') is not allowed",
    ),
    (
        "getattr|lying frame prefix",
        "PermissionError: getattr(..., 'gi_frame') is not allowed",
    ),
    (
        "getattr|lying checked name",
        "PermissionError: getattr(..., 'rcParams') is not allowed",
    ),
    (
        "getattr|lying banned attribute",
        "PermissionError: getattr(..., 'Formatter') is not allowed",
    ),
    (
        "module view|lying private",
        "AttributeError: numpy._NoValue is not available",
    ),
    (
        "imported on use|lying private",
        "AttributeError: pandas._libs is not available",
    ),
    (
        "import|lying name (lazy path)",
        "ModuleNotFoundError: import of 'pty' is not allowed",
    ),
    (
        "import|lying name",
        "ModuleNotFoundError: import of 'tabnanny' is not allowed",
    ),
    (
        "import|lying fromlist name",
        "ImportError: import of 'matplotlib.testing' is not allowed",
    ),
    (
        "import|lying fromlist container",
        "ImportError: an import's fromlist must be a tuple",
    ),
    (
        "import|lying level",
        "ImportError: an import's level must be a plain int",
    ),
    ("srcpath|lying ..", "PermissionError: srcpath: '..' leaves SRC"),
    ("srcpath|path-like", "ValueError: srcpath: expected a file name"),
    ("listdir|lying ..", "PermissionError: listdir: '..' leaves SRC"),
    ("listdir|lying length", "PermissionError: listdir: '..' leaves SRC"),
    (
        "get_sample_data|lying ..",
        "PermissionError: get_sample_data: '../matplotlibrc' is not one of",
    ),
    ("open|lying str", "PermissionError: reading '/"),
    ("open|lying bytes", "PermissionError: reading '/"),
    (
        "open|path-like second answer",
        "PermissionError: open: only a plain str path",
    ),
    // The mode judged is the exact 'w': a write into the inputs, refused.
    ("open|lying mode", "PermissionError: the inputs are read-only"),
    (
        "open|opener",
        "PermissionError: open: opener and closefd are not allowed",
    ),
    ("open|descriptor", "PermissionError: open: only a plain str path"),
    ("open|bytes inside", "returned"),
    ("np.fromfile|lying str", "PermissionError: reading '/"),
    ("np.fromfile|path-like lying str", "PermissionError: reading '/"),
    ("open|Path subclass", "PermissionError: open: only a plain str path"),
    ("Path.read_text|Path subclass", "returned"),
    ("Path|lying str", "PermissionError: reading '/"),
    ("Path|path-like", "TypeError: expected str or Path, not Flip"),
    ("savefig|lying name", "returned"),
    (
        "savefig|Path subclass",
        "TypeError: savefig: pass the file name as a str",
    ),
    (
        "savefig|path-like",
        "TypeError: savefig: pass the file name as a str",
    ),
    ("savefig|lying format", "returned"),
    (
        "str.format|dunder",
        "PermissionError: str.format() is not allowed in this sandbox here: the field {0.__class__}",
    ),
    (
        "str.format|environment",
        "PermissionError: str.format() is not allowed in this sandbox here: the field {0.__globals__[os].environ}",
    ),
    (
        "str.format|frame prefix",
        "PermissionError: str.format() is not allowed in this sandbox here: the field {0.gi_frame}",
    ),
    (
        "str.format|nested spec",
        "PermissionError: str.format() is not allowed in this sandbox here: the field {1.__class__}",
    ),
    (
        "str.format_map|dunder",
        "PermissionError: str.format_map() is not allowed",
    ),
    (
        "str.format|lying format string",
        "PermissionError: str.format() is not allowed",
    ),
    ("str.format|unbound", "PermissionError: str.format() is not allowed"),
    ("str.format|np.str_", "PermissionError: str.format() is not allowed"),
    ("str.format|__name__", "returned"),
    (
        "library message|cls.__name__",
        "AttributeError: Line2D.set() got an unexpected keyword argument 'colour'",
    ),
    (
        "StrMethodFormatter|dunder",
        "PermissionError: string.Formatter is not allowed in this sandbox here: the field {x.__class__}",
    ),
];

fn stdout_json(stdout: &str, tag: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(tag))
        .unwrap_or_else(|| panic!("no {tag} line in stdout:\n{stdout}"));
    serde_json::from_str(line.trim()).unwrap()
}

#[test]
fn gate_off_every_guard_judges_an_exact_copy() {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let code = format!("{GATE_OFF_HEAD}{GATE_OFF_PROBE}");
    let o = exec
        .run(
            Job::new(code)
                .src_bytes("data.csv", b"a,b\n1,2\n".to_vec())
                .timeout(Duration::from_secs(60)),
        )
        .unwrap();
    // The job otherwise ran normally: it ended, and its answer passed the host's checks
    // (a lying file name would have sent an artifact name that is no plain file name).
    expect_ok(&o);
    assert!(
        !o.stdout.contains("REACHED"),
        "a guard let a lie through:\n{}",
        o.stdout
    );
    assert_eq!(
        stdout_json(&o.stdout, "PRELOADED"),
        serde_json::json!([]),
        "the import canaries must not be loaded before the probe"
    );
    let report: BTreeMap<String, String> =
        serde_json::from_value(stdout_json(&o.stdout, "REPORT")).unwrap();
    let mut wrong = Vec::new();
    for (key, expected) in EXPECT {
        match report.get(*key) {
            Some(outcome) if outcome.starts_with(expected) => {}
            other => wrong.push(format!("{key}: expected {expected:?}, got {other:?}")),
        }
    }
    assert_eq!(report.len(), EXPECT.len(), "probed: {:?}", report.keys());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        o.stdout.contains("FORMATTED 1.50 3 1.5   a| 1,000 2.2"),
        "{}",
        o.stdout
    );
    // The lying file name was saved under its exact text, the other saves as asked.
    let mut names: Vec<&str> = o.artifacts().iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["figure.png", "fmt.png", "lie.png"], "artifacts");
    for a in o.artifacts() {
        assert_eq!(png_size(&a.bytes), (640, 480), "{}", a.name);
    }
}

/// A figure, so that a job's only failure is the one it aims at.
const SAVE: &str = "plt.plot([1, 2])\nplt.savefig(OUT)\n";

/// The output caps measure exact copies: a `str` subclass whose `__len__` says 0 (and
/// `isascii` says yes) is still capped on stdout, and an exception whose `str()` is such
/// a string (9 MiB, more than a message frame may carry) is still cut to the message cap.
#[test]
fn gate_off_output_caps_measure_exact_copies() {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let stdout = format!(
        "{GATE_OFF_HEAD}sys.stdout.write(liar('x' * 200000, __len__=0, isascii=True))\nprint('after')\n{SAVE}"
    );
    let o = exec.run(Job::new(stdout)).unwrap();
    assert!(o.result.is_ok(), "{:?}", o.result);
    assert!(
        o.stdout.len() <= 64 * 1024,
        "stdout of {} bytes",
        o.stdout.len()
    );
    assert!(o.stdout_dropped > 0, "nothing dropped");

    let raised = format!(
        "{GATE_OFF_HEAD}class E(Exception):\n    def __str__(self):\n        return liar('y' * (9 << 20), __len__=0)\n{SAVE}raise E()\n"
    );
    let o = exec.run(Job::new(raised)).unwrap();
    match o.failure() {
        Some(JobFailure::PythonError(e)) => {
            assert_eq!(e.type_name, "E");
            assert!(
                e.message.chars().count() <= 2100,
                "{} chars",
                e.message.len()
            );
            assert!(
                e.message.ends_with("... [truncated]"),
                "{}",
                &e.message[..40]
            );
        }
        other => panic!("expected the job's own exception, got {other:?}"),
    }
}

// ------------------------------------------------------------------ gate on

#[track_caller]
fn string_class(src: &str) {
    let v = gate::check(src, &Policy::figures()).expect("not bad input");
    assert!(
        v.violations.iter().any(|x| x.rule == Rule::StringClass),
        "expected string-class for:\n{src}\ngot {:#?}",
        v.violations
    );
}

#[track_caller]
fn allowed(src: &str) {
    for policy in [Policy::figures(), Policy::tables()] {
        let v = gate::check(src, &policy).expect("not bad input");
        assert!(
            v.is_allowed(),
            "expected allowed:\n{src}\n{:#?}",
            v.violations
        );
    }
}

/// The string types a job can subclass, as a job writes each (with its import).
const STRING_BASES: &[(&str, &str)] = &[
    ("", "str"),
    ("", "bytes"),
    ("", "bytearray"),
    ("import collections\n", "collections.UserString"),
    ("from collections import UserString\n", "UserString"),
    ("from collections import UserString as U\n", "U"),
    ("", "np.str_"),
    ("", "np.bytes_"),
    ("import enum\n", "enum.StrEnum"),
    ("from enum import Enum\n", "str, Enum"),
];

/// Methods a guard might ask a name about, and the ones that turn a string into a
/// descriptor or a path.
const OVERRIDES: &[&str] = &[
    "startswith",
    "endswith",
    "__contains__",
    "__eq__",
    "__ne__",
    "__hash__",
    "find",
    "rfind",
    "index",
    "split",
    "partition",
    "__getitem__",
    "__iter__",
    "__str__",
    "__format__",
    "__index__",
    "__fspath__",
    "lower",
    "upper",
    "strip",
    "replace",
    "encode",
    "decode",
    "casefold",
    "__len__",
    "__bool__",
    "helper",
];

#[test]
fn gate_refuses_every_string_class_with_behaviour() {
    for (import, base) in STRING_BASES {
        for method in OVERRIDES {
            string_class(&format!(
                "{import}class S({base}):\n    def {method}(self, *args):\n        return False\n"
            ));
        }
        // Behaviour without a `def`: a lambda, a function defined elsewhere, a computed
        // member, a nested class, a decorator.
        string_class(&format!(
            "{import}class S({base}):\n    startswith = lambda self, *a: False\n"
        ));
        string_class(&format!(
            "def f(self, *a):\n    return False\n{import}class S({base}):\n    find = f\n"
        ));
        string_class(&format!("{import}class S({base}):\n    x = len('ab')\n"));
        string_class(&format!(
            "{import}class S({base}):\n    class Inner:\n        pass\n"
        ));
        string_class(&format!(
            "def deco(c):\n    return c\n{import}@deco\nclass S({base}):\n    pass\n"
        ));
        // A mixin whose methods come first, and a subclass of a plain string class.
        string_class(&format!(
            "class M:\n    def startswith(self, *a):\n        return False\n{import}class S(M, {base}):\n    A = 'a'\n"
        ));
        string_class(&format!(
            "{import}class A({base}):\n    pass\nclass S(A):\n    def startswith(self, *a):\n        return False\n"
        ));
        // Behaviour given after the class statement.
        string_class(&format!(
            "{import}class S({base}):\n    A = 'a'\nS.startswith = lambda self, *a: False\n"
        ));
        string_class(&format!(
            "{import}class S({base}):\n    A = 'a'\nT = S\nT.lower = lambda self: 'x'\n"
        ));
    }
    // An enum member, an alias of str, a class whose base is computed at run time.
    string_class("from enum import Enum\nclass C(str, Enum):\n    A = 'a'\nC.A.find = 1\n");
    string_class("T = str\nclass S(T):\n    def find(self, *a):\n        return 0\n");
    string_class("class S(type('')):\n    def find(self, *a):\n        return 0\n");
    string_class("T = type('')\nclass S(T):\n    pass\n");
    string_class("def base():\n    return str\nclass S(base()):\n    pass\n");
    string_class("bases = [str]\nclass S(*bases):\n    pass\n");
    string_class("bases = [str]\nclass S(bases[0]):\n    def find(self, *a):\n        return 0\n");
    string_class(
        "class H:\n    base = str\nclass S(H.base):\n    def find(self, *a):\n        return 0\n",
    );
    // A string method's name stored on any object shadows the method for every caller.
    string_class("class P:\n    pass\np = P()\np.startswith = lambda *a: False\n");
    string_class("x = 'a'\nx.partition = 1\n");
    // The issue's attack, and its bytes and PathLike cousins.
    string_class(ISSUE_ATTACK);
    string_class(
        "class P:\n    pass\nclass B(bytes):\n    def __fspath__(self):\n        return '/etc/passwd'\n",
    );
    // Patching a class through type(x) is refused as a position of `type`.
    let v = gate::check("s = 'x'\ntype(s).title = 1\n", &Policy::figures()).unwrap();
    assert!(
        v.violations
            .iter()
            .any(|x| x.rule == Rule::RestrictedBuiltin),
        "{:#?}",
        v.violations
    );
}

#[test]
fn gate_allows_the_string_classes_plotting_code_writes() {
    allowed("class Label(str):\n    pass\nprint(Label('x').upper())");
    allowed("class Label(str):\n    \"\"\"A label.\"\"\"\n");
    allowed("from enum import Enum\nclass Color(str, Enum):\n    RED = 'tab:red'\n    GREEN = 'tab:green'\nplt.plot([1], color=Color.RED.value)");
    allowed("from enum import Enum, auto, unique\n@unique\nclass Unit(str, Enum):\n    KG = 'kg'\n    N: str = 'n'\n    X = auto()");
    allowed("import enum\nclass Kind(enum.StrEnum):\n    LINE = 'line'\n    BAR = 'bar'");
    allowed("from enum import Enum\nclass Level(Enum):\n    LOW = 1\n    def label(self):\n        return self.name.lower()");
    allowed("from collections import namedtuple\nclass Point(namedtuple('Point', 'x y')):\n    def norm(self):\n        return (self.x ** 2 + self.y ** 2) ** 0.5");
    allowed("import matplotlib.ticker as mticker\nclass Fmt(mticker.ScalarFormatter):\n    def __call__(self, x, pos=None):\n        return f'{x:.1f}'");
    allowed("from typing import Generic, TypeVar\nT = TypeVar('T')\nclass Box(Generic[T]):\n    def get(self):\n        return 1");
    allowed("class Bounds:\n    def __init__(self):\n        self.lower = 0\n        self.upper = 1\n        self.index = 2\n        self.title = 't'\n        self.format = 'png'\n        self.split = 0.2\nb = Bounds()\nb.lower = -1");
    allowed("df = pd.DataFrame({'a': [1, 2]})\ndf.index = ['x', 'y']\ndf.columns = ['b']");
    allowed("T = str\nprint(T(1), type('x'), type('x').__name__)");
    allowed("class E(Exception):\n    def __str__(self):\n        return 'e'");
}

/// The issue's attack as a model would write it: a `str` subclass that answers
/// `startswith` and `__contains__` as it likes, a dunder built at run time, the
/// curated `getattr`, and the usual walk from the class of `1` to the import machinery.
const ISSUE_ATTACK: &str = r#"
class S(str):
    def startswith(self, *args):
        return False
    def endswith(self, *args):
        return False
    def __contains__(self, item):
        return False

u = '_' * 2
cls = getattr(1, S(u + 'class' + u))
print('REACHED', cls)
for c in getattr(getattr(cls, S(u + 'base' + u)), S(u + 'subclasses' + u))():
    if getattr(c, S(u + 'name' + u)) == 'BuiltinImporter':
        print('REACHED', c.load_module('posix').environ)
"#;

#[test]
fn gate_on_the_attack_is_rejected_and_a_built_format_field_refused_at_run_time() {
    let exec = builder().policy(Policy::figures()).build().unwrap();
    let o = exec.run(Job::new(ISSUE_ATTACK)).unwrap();
    match o.failure() {
        Some(JobFailure::Rejected { violations, .. }) => {
            assert!(
                violations.iter().any(|v| v.rule == Rule::StringClass),
                "{violations:#?}"
            );
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert!(o.worker.is_none(), "rejected code reached a worker");

    // No literal holds a traversal or a dunder: the gate cannot see it; the runtime
    // refuses the field when the string is formatted.
    let built = "f = '{0' + chr(46) + '_' * 2 + 'globals' + '_' * 2 + '[os]' + chr(46) + 'environ}'\nprint('REACHED', f.format(srcpath))\n";
    assert!(gate::check(built, &Policy::figures()).unwrap().is_allowed());
    let o = exec.run(Job::new(built)).unwrap();
    match o.failure() {
        Some(JobFailure::PythonError(e)) => {
            assert_eq!(e.type_name, "PermissionError", "{e:?}");
            assert!(
                e.message.contains("{0.__globals__[os].environ}"),
                "{}",
                e.message
            );
        }
        other => panic!("expected the runtime's refusal, got {other:?}"),
    }
    assert!(!o.stdout.contains("REACHED"), "{}", o.stdout);

    // The same worker still serves figures.
    let next = exec
        .run(Job::new(
            "plt.plot([1, 2]); plt.title('{:.1f}'.format(2.25)); plt.savefig(OUT)",
        ))
        .unwrap();
    expect_ok(&next);
}
