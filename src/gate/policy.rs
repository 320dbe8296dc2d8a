//! The policy as data: what the gate allows, what it bans, and why.
//!
//! Every list here is an allowlist or a reviewed denylist. Each entry carries its reason in
//! the tables below ([`BANNED_NAME_REASONS`], [`BANNED_ATTRIBUTE_REASONS`], ...); the gate
//! quotes those reasons in its hints, so a model retrying its code learns *why*.
//!
//! Widening the import allowlist is a reviewed act. What each default module brings:
//!
//! | module | capability it brings | dangerous parts (banned by name) |
//! | --- | --- | --- |
//! | numpy | arrays, maths, file readers | `ctypeslib`, `f2py`, `testing`, `distutils`, `lib.format`, `lib._datasource`, `DataSource`, `memmap`, `as_strided`, `load(allow_pickle=True)` |
//! | scipy | signal, stats, optimize, io.loadmat | `scipy._lib` (private), `LowLevelCallable` (ctypes), `scipy.datasets` (downloads) |
//! | matplotlib | figures | `matplotlib.cbook` except reviewed members ([`MODULE_MEMBERS`]), `matplotlib.os/.sys/.subprocess` attributes, `testing`, `animation` (writers spawn programs), `texmanager`/`dviread` (spawn TeX), rcParams writer paths, `text.usetex`, style files from paths, backends |
//! | mpl_toolkits | axes helpers (`axes_grid1`, `mplot3d`) | nothing beyond matplotlib |
//! | pandas | tables | `read_pickle`/`to_pickle`, `read_clipboard` (spawns xclip), `read_html`/`read_xml` (URLs), `read_sql*`, `read_hdf` (unpickles), `pandas.io`, `query`/`eval` strings with `@` or attribute access, `plotting.backend` (imports by name) |
//! | math, cmath, statistics, decimal, fractions, numbers, bisect, heapq | arithmetic | none |
//! | json, csv, re, textwrap, string, datetime, time | text, dates | `string.Formatter` (returns objects from format fields), `Formatter.get_field`, `vformat` |
//! | collections, itertools, functools, operator | containers, helpers | `functools.update_wrapper`/`wraps` (copy `__dict__`, attribute proxies), `operator.attrgetter`/`methodcaller` (take dunder strings) |
//! | random | random numbers | none (reseeded by the worker after each job) |
//! | cycler | property cycles (`cycler(color=[...])`), matplotlib's own dependency | none: imports only copy, functools, itertools, operator, typing |
//! | typing, dataclasses, enum | annotations, records | `typing.get_type_hints` and `ForwardRef` (evaluate string annotations), `dataclasses.make_dataclass` (dynamic classes), `enum.bltns` (the builtins module under a short alias) |

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Why each strictly banned name is banned. Rejected as a bare name, an attribute name, an
/// import component and an alias target.
pub(crate) const BANNED_NAME_REASONS: &[(&str, &str)] = &[
    ("os", "processes, files and environment of the host"),
    ("posix", "the os module under its platform name"),
    ("nt", "the os module under its platform name"),
    ("sys", "interpreter internals: modules, frames, exit"),
    ("subprocess", "starts programs"),
    ("_posixsubprocess", "starts programs"),
    ("socket", "network access"),
    ("ssl", "network access"),
    ("select", "network/file descriptor polling"),
    ("selectors", "network/file descriptor polling"),
    ("ctypes", "raw memory and C calls"),
    ("cffi", "raw memory and C calls"),
    ("importlib", "imports anything, bypassing the allowlist"),
    ("imp", "imports anything, bypassing the allowlist"),
    ("zipimport", "imports code from archives"),
    ("pkgutil", "finds and loads modules"),
    ("runpy", "runs modules as scripts"),
    ("site", "interpreter start-up hooks"),
    ("sysconfig", "interpreter layout and paths"),
    ("pickle", "unpickling runs arbitrary code"),
    ("cPickle", "unpickling runs arbitrary code"),
    ("_pickle", "unpickling runs arbitrary code"),
    ("dill", "unpickling runs arbitrary code"),
    ("cloudpickle", "unpickling runs arbitrary code"),
    ("joblib", "unpickling runs arbitrary code"),
    ("copyreg", "pickle hooks"),
    ("marshal", "loads code objects"),
    ("shelve", "pickle-backed files"),
    ("pathlib", "file system access; use srcpath()"),
    ("glob", "file system listing; use listdir()/walkfiles()"),
    ("shutil", "copies, moves and deletes files"),
    ("tempfile", "creates files outside the job's folders"),
    ("fileinput", "opens files"),
    ("zipfile", "opens archives on disk"),
    ("tarfile", "opens archives on disk (path traversal)"),
    ("builtins", "the unrestricted builtins"),
    ("__builtins__", "the unrestricted builtins"),
    ("bltns", "enum's alias of the builtins module"),
    ("gc", "reaches every live object (gc.get_objects)"),
    ("inspect", "frames, source and globals of any function"),
    ("traceback", "frames of the running program"),
    ("types", "builds functions and code objects"),
    ("dis", "code object internals"),
    ("weakref", "finalizers that run outside the job"),
    ("atexit", "code that runs after the job"),
    ("faulthandler", "signal handlers and file descriptors"),
    ("tracemalloc", "interpreter internals"),
    ("threading", "threads outlive the job"),
    ("_thread", "threads outlive the job"),
    ("multiprocessing", "starts processes"),
    ("concurrent", "threads and processes"),
    ("asyncio", "event loop, subprocesses and sockets"),
    ("resource", "changes the worker's limits"),
    ("urllib", "network access"),
    ("urllib3", "network access"),
    ("http", "network access"),
    ("requests", "network access"),
    ("ftplib", "network access"),
    ("smtplib", "network access"),
    ("telnetlib", "network access"),
    ("webbrowser", "starts programs"),
    ("codeop", "compiles source code"),
    ("pty", "spawns a shell"),
    ("fcntl", "file descriptor control"),
    ("termios", "terminal control"),
    ("mmap", "maps files and memory"),
    ("platform", "runs programs to identify the host"),
    ("pdb", "debugger: evaluates strings"),
    ("bdb", "debugger: evaluates strings"),
    (
        "BaseException",
        "catching it hides SystemExit/KeyboardInterrupt from the runner",
    ),
    ("SystemExit", "ends the worker instead of the job"),
    (
        "KeyboardInterrupt",
        "interrupt handling belongs to the runner",
    ),
    ("GeneratorExit", "interpreter control flow"),
    (
        "BaseExceptionGroup",
        "exception-group type confusion (CVE-2025-22153)",
    ),
    (
        "ExceptionGroup",
        "exception-group type confusion (CVE-2025-22153)",
    ),
];

/// Names banned as bare identifiers only when the job never binds them itself. They are
/// stdlib modules with dangerous powers, but their names collide with legitimate code:
/// `from scipy import signal`, `signal = np.sin(t)`, `for code in codes`, `scipy.io`.
/// As attribute names they are allowed (`scipy.io.loadmat`, `scipy.signal.butter`); the
/// dangerous members of the stdlib modules (`io.open`, `signal.alarm`,
/// `code.interact`) are banned attribute names instead.
pub(crate) const SHADOWABLE_NAME_REASONS: &[(&str, &str)] = &[
    (
        "io",
        "the standard library's io (file handles) is not available",
    ),
    (
        "signal",
        "process signals (stdlib signal); use from scipy import signal",
    ),
    ("code", "interactive interpreter (stdlib code)"),
];

/// What to use instead of a module jobs cannot import: the models' usual reasons to
/// reach for it, answered with what this environment offers.
const IMPORT_ALTERNATIVES: &[(&[&str], &str)] = &[
    (
        &["os", "pathlib", "glob", "shutil", "fnmatch"],
        "list the inputs with listdir() or walkfiles() and get a path with srcpath('name')",
    ),
    (
        &["sys"],
        "not needed: print() writes output, listdir() lists the inputs, srcpath('name') gives a path",
    ),
    (
        &["io", "tempfile"],
        "read inputs with pd.read_csv(srcpath('name')) or np.loadtxt(srcpath('name')); for text in memory use str methods (text.splitlines())",
    ),
    (
        &["seaborn"],
        "draw with plt (matplotlib) and pd (pandas); plt.style.use('seaborn-v0_8') gives seaborn's look",
    ),
    (
        &["plotly", "bokeh", "altair", "pygal"],
        "draw with plt (matplotlib)",
    ),
    (
        &["sklearn", "statsmodels"],
        "use numpy and scipy: np.polyfit, scipy.stats (linregress, ttest_ind), scipy.optimize.curve_fit, scipy.cluster",
    ),
    (
        &["PIL", "cv2", "imageio", "skimage"],
        "read images with plt.imread(srcpath('name.png')); process them with numpy and scipy.ndimage",
    ),
    (
        &["requests", "urllib", "http", "socket", "urllib3", "httpx"],
        "there is no network: the data is in the input files (listdir() lists them)",
    ),
    (
        &["pickle", "joblib", "shelve", "dill"],
        "read data with pd.read_csv, np.load or loadmat on srcpath('name') (pickles are not loaded)",
    ),
    (
        &["subprocess", "multiprocessing", "threading", "ctypes"],
        "jobs run single-threaded Python without programs or native code; use numpy for speed",
    ),
    (&["tqdm"], "progress bars are not needed: remove it"),
    (&["torch", "tensorflow", "jax"], "use numpy"),
];

/// The hint for an import of `top`, a module jobs cannot import.
pub(crate) fn import_alternative(top: &str) -> String {
    IMPORT_ALTERNATIVES
        .iter()
        .find(|(modules, _)| modules.contains(&top))
        .map_or_else(
            || "not available here; the allowed imports are listed below".to_string(),
            |(_, alternative)| (*alternative).to_string(),
        )
}

/// Builtins rejected when called *or merely referenced* (`e = eval`, `f(eval)`, `[eval][0]`).
pub(crate) const BANNED_BUILTIN_REASONS: &[(&str, &str)] = &[
    ("eval", "evaluates strings as code"),
    ("exec", "executes strings as code"),
    ("compile", "builds code objects"),
    (
        "__import__",
        "imports bypassing the allowlist; use an import statement",
    ),
    (
        "open",
        "opens files anywhere; use srcpath() with the numpy/pandas readers",
    ),
    ("setattr", "attribute writes by string"),
    ("delattr", "attribute deletion by string"),
    ("globals", "exposes the job's namespace and builtins"),
    ("locals", "exposes frame namespaces"),
    ("vars", "exposes __dict__ of any object"),
    ("dir", "enumerates hidden attributes"),
    ("input", "reads standard input; jobs have none"),
    ("breakpoint", "starts a debugger"),
    ("help", "interactive help runs a pager"),
    ("exit", "ends the worker instead of the job"),
    ("quit", "ends the worker instead of the job"),
    ("memoryview", "raw buffer access"),
    ("copyright", "interactive helper that reads files"),
    ("credits", "interactive helper that reads files"),
    ("license", "interactive helper that reads files"),
    ("__build_class__", "class construction internals"),
    ("__loader__", "module loader: reads and imports files"),
    ("__spec__", "module spec: loader access"),
    ("aiter", "async iteration is not supported"),
    ("anext", "async iteration is not supported"),
];

/// What to write instead of a banned builtin (the teaching hint beside its reason in
/// [`BANNED_BUILTIN_REASONS`]).
pub(crate) fn builtin_hint(n: &str) -> &'static str {
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

/// Why a banned keyword argument (`allow_pickle=True`, `usetex=True`) is refused.
pub(crate) fn keyword_reason(k: &str) -> &'static str {
    match k {
        "allow_pickle" => "unpickling runs arbitrary code",
        "usetex" => "spawns latex",
        _ => "not allowed",
    }
}

/// Builtins allowed only in one reviewed position; anywhere else they are rejected.
///
/// - `type`: only `type(x)` with one argument (three arguments build classes dynamically).
/// - `super`: only `super()` with no arguments (two-argument `super` rebinds to any object).
/// - `classmethod`, `staticmethod`, `property`: only as decorators.
///
/// `object` is an ordinary value (`MISSING = object()`, `x: object`): the walks that
/// start from it (`object.__subclasses__()`) need a dunder attribute, refused by the
/// gate and by the runtime proxies either way.
pub(crate) const RESTRICTED_BUILTINS: &[&str] =
    &["type", "super", "classmethod", "staticmethod", "property"];

/// Attribute names rejected wherever they appear (`x.NAME`, `from m import NAME`, match
/// class keyword patterns). Every strictly banned name is also a banned attribute.
pub(crate) const BANNED_ATTRIBUTE_REASONS: &[(&str, &str)] = &[
    // stdlib module members reachable through allowed modules or shadowable names
    ("system", "runs a shell command"),
    ("popen", "starts a program"),
    ("Popen", "starts a program"),
    ("spawnv", "starts a program"),
    ("spawnl", "starts a program"),
    ("execv", "replaces the process"),
    ("execve", "replaces the process"),
    ("execl", "replaces the process"),
    ("fork", "forks the worker"),
    ("check_output", "starts a program"),
    ("check_call", "starts a program"),
    ("getoutput", "starts a program"),
    ("open", "opens files anywhere; use srcpath() with a reader"),
    ("FileIO", "raw file handles"),
    ("open_code", "opens files"),
    ("alarm", "process signals"),
    ("setitimer", "process signals"),
    ("pthread_kill", "signals other threads"),
    ("raise_signal", "signals the worker"),
    ("interact", "interactive interpreter"),
    ("InteractiveConsole", "interactive interpreter"),
    ("InteractiveInterpreter", "interactive interpreter"),
    ("compile_command", "compiles source"),
    ("modules", "sys.modules: every loaded module"),
    ("mro", "walks the class hierarchy to object"),
    (
        "obj",
        "AttributeError.obj leaks the object (CVE-2024-47532)",
    ),
    ("with_traceback", "traceback and frame access"),
    // frame / generator / coroutine / traceback / function internals (no dunders needed)
    ("f_back", "frame introspection"),
    ("f_builtins", "frame introspection"),
    ("f_code", "frame introspection"),
    ("f_globals", "frame introspection"),
    ("f_locals", "frame introspection"),
    ("f_lasti", "frame introspection"),
    ("f_lineno", "frame introspection"),
    ("f_trace", "frame introspection"),
    ("f_trace_lines", "frame introspection"),
    ("f_trace_opcodes", "frame introspection"),
    ("f_generator", "frame introspection"),
    ("func_globals", "function globals (py2 spelling)"),
    ("func_code", "function code (py2 spelling)"),
    ("func_closure", "function closure (py2 spelling)"),
    ("func_defaults", "function defaults (py2 spelling)"),
    ("func_dict", "function namespace (py2 spelling)"),
    ("im_func", "bound method internals"),
    ("im_self", "bound method internals"),
    ("im_class", "bound method internals"),
    ("cell_contents", "closure cell internals"),
    // string evaluation and attribute proxies
    (
        "Formatter",
        "string.Formatter.get_field returns objects from format fields",
    ),
    ("get_field", "returns objects named by a format field"),
    ("vformat", "format with attribute traversal"),
    ("attrgetter", "takes dunder strings (operator.attrgetter)"),
    ("methodcaller", "calls methods named by strings"),
    (
        "update_wrapper",
        "copies __dict__ and sets __wrapped__ (attribute proxy)",
    ),
    (
        "wraps",
        "copies __dict__ and sets __wrapped__ (attribute proxy)",
    ),
    ("get_type_hints", "evaluates string annotations"),
    ("ForwardRef", "evaluates string annotations"),
    ("make_dataclass", "builds classes dynamically"),
    ("getattr_static", "attribute access by string"),
    // numpy
    ("ctypeslib", "numpy.ctypeslib: raw memory through ctypes"),
    ("f2py", "numpy.f2py: compiles and runs programs"),
    ("distutils", "compiler and subprocess access"),
    (
        "testing",
        "test helpers that spawn processes and touch files",
    ),
    (
        "DataSource",
        "numpy DataSource: opens files and URLs with the real open",
    ),
    (
        "memmap",
        "maps files (including /proc/self/mem) into arrays",
    ),
    ("open_memmap", "maps files into arrays"),
    ("as_strided", "arrays over arbitrary memory"),
    // matplotlib
    ("rc_file", "loads settings from an arbitrary file"),
    (
        "rc_params_from_file",
        "loads settings from an arbitrary file",
    ),
    ("rc_file_defaults", "reloads settings from files"),
    ("texmanager", "spawns TeX"),
    ("dviread", "spawns kpsewhich"),
    ("animation", "writers spawn ffmpeg/imagemagick"),
    ("install_repl_displayhook", "interpreter hooks"),
    (
        "add_docstring",
        "sets docstrings of C objects for the whole process",
    ),
    (
        "add_newdoc",
        "sets docstrings of library objects for the whole process",
    ),
    // pandas
    ("read_pickle", "unpickling runs arbitrary code"),
    ("to_pickle", "writes pickles"),
    ("read_clipboard", "spawns clipboard programs"),
    ("to_clipboard", "spawns clipboard programs"),
    ("read_html", "fetches URLs and parses untrusted HTML"),
    ("read_xml", "fetches URLs and resolves external entities"),
    ("to_xml", "XML writer with stylesheet processing"),
    ("read_sql", "database connections"),
    ("read_sql_query", "database connections"),
    ("read_sql_table", "database connections"),
    ("to_sql", "database connections"),
    ("read_gbq", "network access"),
    ("to_gbq", "network access"),
    ("read_hdf", "HDF5 stores can unpickle objects"),
    ("to_hdf", "HDF5 stores pickle objects"),
    ("HDFStore", "HDF5 stores can unpickle objects"),
    ("read_spss", "external reader library"),
    // scipy
    ("LowLevelCallable", "wraps raw C function pointers"),
];

/// Attribute name prefixes of frame, generator, coroutine, async-generator, traceback
/// and code objects (`gi_frame`, `cr_frame`, `ag_frame`, `tb_frame`, `co_code`, ...).
pub(crate) const BANNED_ATTRIBUTE_PREFIXES: &[&str] = &["gi_", "cr_", "ag_", "tb_", "co_"];

/// Dunder methods a job may *define* in its own classes. Defining `__init__` or `__repr__`
/// is ordinary code; defining hooks that the interpreter calls at odd times (`__del__`
/// after the job, `__getattr__`, `__init_subclass__`, `__set_name__`, `__reduce__`,
/// `__class_getitem__`) is not.
const ALLOWED_DUNDER_METHODS: &[&str] = &[
    "__init__",
    "__post_init__",
    "__repr__",
    "__str__",
    "__format__",
    "__len__",
    "__iter__",
    "__next__",
    "__getitem__",
    "__setitem__",
    "__contains__",
    "__call__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__bool__",
    "__delitem__",
    "__reversed__",
    "__missing__",
    "__length_hint__",
    // Arithmetic and bitwise operators, each with its reflected (`__radd__`) and
    // in-place (`__iadd__`) form: ordinary methods the interpreter calls only for an
    // operator the job's own code applies to its own objects.
    "__add__",
    "__radd__",
    "__iadd__",
    "__sub__",
    "__rsub__",
    "__isub__",
    "__mul__",
    "__rmul__",
    "__imul__",
    "__truediv__",
    "__rtruediv__",
    "__itruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__ifloordiv__",
    "__mod__",
    "__rmod__",
    "__imod__",
    "__divmod__",
    "__rdivmod__",
    "__pow__",
    "__rpow__",
    "__ipow__",
    "__matmul__",
    "__rmatmul__",
    "__imatmul__",
    "__and__",
    "__rand__",
    "__iand__",
    "__or__",
    "__ror__",
    "__ior__",
    "__xor__",
    "__rxor__",
    "__ixor__",
    "__lshift__",
    "__rlshift__",
    "__ilshift__",
    "__rshift__",
    "__rrshift__",
    "__irshift__",
    "__neg__",
    "__pos__",
    "__abs__",
    "__invert__",
    "__round__",
    "__trunc__",
    "__floor__",
    "__ceil__",
    "__int__",
    "__float__",
    "__complex__",
    "__index__",
    "__enter__",
    "__exit__",
];

/// Dunder attributes that may be *read*: they hold plain strings (`type(x).__name__`,
/// `np.__version__`, `f.__doc__`), which scripts print and put in titles. Writing them
/// is still refused.
const ALLOWED_DUNDER_READS: &[&str] = &["__name__", "__qualname__", "__doc__", "__version__"];

/// matplotlib / pandas settings that start programs, import modules by name or read
/// files. Compared as lower-case prefixes of the setting key.
const DENIED_SETTING_PREFIXES: &[&str] = &[
    "animation.",        // *_path / *_args / writer: ffmpeg, imagemagick
    "text.usetex",       // spawns latex, dvipng, ghostscript
    "text.latex.",       // latex preamble
    "pgf.",              // pgf.texsystem: which TeX program is spawned
    "ps.usedistiller",   // spawns ghostscript / xpdf
    "webagg.",           // web server backend
    "savefig.directory", // GUI save dialog default
    "backend",           // backend switch imports GUI toolkits (also backend_fallback)
    "interactive",       // interactive mode hooks
    "tk.",               // GUI toolkit
    "macosx.",           // GUI toolkit
    "toolbar",           // GUI toolkit
    "figure.hooks",      // pyplot imports "module:function" names and calls them
    "plotting.backend",  // pandas: imports any module named here
    "io.",               // pandas: reader/writer engines imported by name
];

/// Names every job finds in its globals, with what they stand for: a module, a
/// `module:member`, or nothing (the prelude's own helpers, and `SRC`/`OUT`). The one
/// list: the gate reads `pd.x` as `pandas.x`, the supervisor refuses an array that
/// would shadow a name, and the worker builds each job's globals from it (what warm-up
/// did not import is imported on first use, as the job's own import would).
const INJECTED: &[(&str, &str)] = &[
    ("np", "numpy"),
    ("plt", "matplotlib.pyplot"),
    ("pd", "pandas"),
    ("loadmat", "scipy.io:loadmat"),
    ("SRC", ""),
    ("OUT", ""),
    ("srcpath", ""),
    ("listdir", ""),
    ("walkfiles", ""),
];

/// Default import allowlist for figure code (top-level packages).
const FIGURE_MODULES: &[&str] = &[
    "numpy",
    "scipy",
    "matplotlib",
    "mpl_toolkits",
    "pandas",
    "math",
    "cmath",
    "statistics",
    "json",
    "csv",
    "datetime",
    "time",
    "unicodedata",
    "stat",
    "collections",
    "itertools",
    "functools",
    "re",
    "random",
    "decimal",
    "fractions",
    "textwrap",
    "string",
    "typing",
    "dataclasses",
    "enum",
    "numbers",
    "bisect",
    "heapq",
    "operator",
    "copy",
    "warnings",
    "cycler",
];

/// Extra modules for the table profile: calendars and text helpers for table code.
const TABLE_EXTRA_MODULES: &[&str] = &["calendar", "zoneinfo", "unicodedata", "difflib", "pprint"];

/// Dotted submodules denied even under an allowed package (prefix match).
const DENIED_MODULES: &[&str] = &[
    "numpy.f2py",            // compiles and runs programs; its namespace holds os
    "numpy.ctypeslib",       // raw memory
    "numpy.testing",         // subprocess and file helpers
    "numpy.distutils",       // compilers
    "numpy.lib.format",      // read_array(allow_pickle), open_memmap
    "numpy.lib._datasource", // the real open
    "numpy.lib.npyio",       // DataSource-backed loaders
    "numpy.core",            // deprecated alias of private numpy._core
    "numpy._core",
    "numpy._utils",
    "scipy._lib",     // a private importlib and os
    "scipy.datasets", // downloads
    "scipy.LowLevelCallable",
    "matplotlib.testing",    // subprocess helpers
    "matplotlib.animation",  // writers spawn programs
    "matplotlib.texmanager", // spawns TeX
    "matplotlib.dviread",    // spawns kpsewhich
    // Backends that spawn programs (pgf: TeX), serve the web or load GUI toolkits;
    // backend_pdf (PdfPages), backend_agg and backend_svg stay allowed.
    "matplotlib.backends.backend_pgf",
    "matplotlib.backends.backend_ps",
    "matplotlib.backends.backend_webagg",
    "matplotlib.backends.backend_webagg_core",
    "matplotlib.backends.backend_nbagg",
    "matplotlib.backends.backend_tkagg",
    "matplotlib.backends.backend_tkcairo",
    "matplotlib.backends.backend_qt",
    "matplotlib.backends.backend_qtagg",
    "matplotlib.backends.backend_qt5agg",
    "matplotlib.backends.backend_qtcairo",
    "matplotlib.backends.backend_gtk3agg",
    "matplotlib.backends.backend_gtk4agg",
    "matplotlib.backends.backend_wxagg",
    "matplotlib.backends.backend_macosx",
    "matplotlib.backends.qt_compat",
    "matplotlib.sphinxext",
    "matplotlib.pyplot.matplotlib", // the package again, through pyplot: use it directly
    "pandas.io",                    // clipboard, pickle, sql, html, pytables, common (os)
    "pandas.testing",
    "pandas._testing",
    "pandas.util",
    "pandas.compat",
    "pandas.core.computation", // the eval engine
];

/// Modules denied as a whole but with reviewed members a job may use: the job gets a
/// view of the module that holds these names only, never the module. `matplotlib.cbook`
/// keeps file and subprocess helpers (`_get_data_path`, `open_file_cm`, `to_filehandle`,
/// `_unmultiplied_rgba8888_to_premultiplied_argb32`'s neighbours...) beside pure helpers
/// that plotting scripts call.
const MODULE_MEMBERS: &[(&str, &[(&str, &str)])] = &[(
    "matplotlib.cbook",
    &[
        ("boxplot_stats", "pure statistics for bxp()"),
        ("violin_stats", "pure statistics for violin()"),
        ("contiguous_regions", "pure array helper"),
        ("simple_linear_interpolation", "pure array helper"),
        ("pts_to_prestep", "pure array helper for step plots"),
        ("pts_to_poststep", "pure array helper for step plots"),
        ("pts_to_midstep", "pure array helper for step plots"),
        ("flatten", "pure iterator helper"),
        ("index_of", "pure array helper"),
        ("delete_masked_points", "pure array helper"),
        ("safe_masked_invalid", "pure array helper"),
        ("is_math_text", "pure string helper"),
        ("strip_math", "pure string helper"),
        ("normalize_kwargs", "pure dict helper"),
        (
            "get_sample_data",
            "reads matplotlib's bundled sample data; the worker refuses any name that resolves outside mpl-data/sample_data",
        ),
    ],
)];

/// Modules besides the banned names whose classes and functions give file, process or
/// import access when an allowed module re-exports them (see
/// [`RuntimeRules::capability_modules`]).
const CAPABILITY_MODULES: &[(&str, &str)] = &[
    ("codecs", "codecs.open opens files"),
    ("gzip", "opens files"),
    ("bz2", "opens files"),
    ("lzma", "opens files"),
    (
        "posixpath",
        "probes the file system (realpath, exists, expanduser)",
    ),
    ("genericpath", "probes the file system"),
    ("frozen_importlib", "the import system"),
    (
        "frozen_importlib_external",
        "the import system: loaders read files",
    ),
    ("imp", "the import system"),
    ("tokenize", "tokenize.open opens files"),
    ("linecache", "reads source files"),
    ("sqlite3", "opens database files"),
    ("dbm", "opens database files"),
];

/// Classes and functions of capability modules that allowed modules re-export and that
/// give no file, process or import access: the run-time check lets these through.
const CAPABILITY_EXEMPT: &[(&str, &str)] = &[
    ("io.StringIO", "text in memory"),
    ("io.BytesIO", "bytes in memory"),
    ("types.SimpleNamespace", "a plain record"),
    ("types.GenericAlias", "typing annotations"),
    ("types.MappingProxyType", "a read-only view of a dict"),
    (
        "types.DynamicClassAttribute",
        "a descriptor for enum members",
    ),
    (
        "weakref.WeakKeyDictionary",
        "a container (weakref.finalize stays refused)",
    ),
    (
        "weakref.WeakValueDictionary",
        "a container (weakref.finalize stays refused)",
    ),
    ("threading.RLock", "a lock; starts no thread"),
    ("_thread.RLock", "a lock; starts no thread"),
    ("sys.getsizeof", "a number"),
    (
        "shutil.get_terminal_size",
        "reads COLUMNS/LINES or returns the fallback",
    ),
];

/// Library functions that register into process-wide registries, with how to do the
/// same for one figure. Refused where they are reached through a module (not on a job's
/// own objects); the after-job state guard restores what a missed one changes.
const REGISTRAR_HINTS: &[(&str, &str)] = &[
    (
        "register",
        "pass the object directly: plt.imshow(x, cmap=my_cmap), ax.set_prop_cycle(color=[...])",
    ),
    (
        "register_cmap",
        "pass the colormap directly: plt.imshow(x, cmap=my_cmap)",
    ),
    (
        "register_scale",
        "use the scale directly: ax.set_yscale('function', functions=(f, inverse))",
    ),
    (
        "register_projection",
        "use the axes class directly: fig.add_subplot(axes_class=MyAxes)",
    ),
    (
        "register_backend",
        "figures are saved with plt.savefig(OUT)",
    ),
    (
        "addfont",
        "use the fonts that are installed: fontfamily='DejaVu Sans'",
    ),
    (
        "register_dataframe_accessor",
        "write a function and call it directly: summarize(df)",
    ),
    (
        "register_series_accessor",
        "write a function and call it directly: summarize(s)",
    ),
    (
        "register_index_accessor",
        "write a function and call it directly: summarize(idx)",
    ),
    ("register_extension_dtype", "use the built-in dtypes"),
    ("register_option", "use pd.set_option for existing options"),
];

/// How a dotted module path may be reached (see [`Policy::module_access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ModuleAccess {
    /// Allowed (or not a module path the policy names).
    Allowed,
    /// A denied submodule, or a path below one.
    Denied,
    /// A member of a module that allows only some members, and not one of them.
    NotAMember {
        /// The module.
        module: String,
        /// The members it allows.
        allowed: Vec<String>,
    },
}

/// Errors while loading a policy.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PolicyError {
    /// The TOML text did not parse or did not match the policy's shape.
    #[error("policy toml: {0}")]
    Toml(String),
    /// The JSON text did not parse or did not match the policy's shape.
    #[error("policy json: {0}")]
    Json(String),
    /// The policy parsed but a value is out of range.
    #[error("invalid policy: {0}")]
    Invalid(String),
}

/// A gate policy: which imports, names, builtins and attributes code may use.
///
/// Loadable from TOML/JSON; fields absent from the text take the [`Policy::figures`]
/// defaults, so a file can override one list only. All fields are private so a policy
/// can only be built through the profiles or the validated loaders.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Profile name, for records.
    pub(crate) profile: String,
    /// Static rules on; off only through [`Policy::gate_disabled_for_testing`].
    pub(crate) gate_enabled: bool,
    /// Largest accepted source in bytes (default 256 KiB).
    pub(crate) max_source_bytes: usize,
    /// Deepest accepted bracket nesting (default 200, CPython's own tokenizer limit).
    pub(crate) max_bracket_depth: usize,
    /// Deepest accepted syntax tree (default 1000; CPython's compiler gives up near 2000).
    pub(crate) max_ast_depth: usize,
    /// Top-level packages that may be imported.
    pub(crate) allowed_modules: BTreeSet<String>,
    /// Dotted submodules denied under an allowed package (prefix match).
    pub(crate) denied_modules: BTreeSet<String>,
    /// Modules a job may reach only through reviewed members: module -> member -> reason.
    pub(crate) module_members: BTreeMap<String, BTreeMap<String, String>>,
    /// Names rejected in every position.
    pub(crate) banned_names: BTreeSet<String>,
    /// Names rejected as bare names unless the job binds them itself.
    pub(crate) shadowable_names: BTreeSet<String>,
    /// Builtins rejected when called or referenced.
    pub(crate) banned_builtins: BTreeSet<String>,
    /// Attribute names rejected wherever they appear.
    pub(crate) banned_attributes: BTreeSet<String>,
    /// Attribute name prefixes rejected wherever they appear.
    pub(crate) banned_attribute_prefixes: BTreeSet<String>,
    /// Underscore-prefixed attribute names allowed on any object (reviewed; empty by
    /// default). `self._x` inside a job's own methods is allowed without listing.
    pub(crate) private_attribute_allowlist: BTreeSet<String>,
    /// Dunder methods a job's class may define.
    pub(crate) allowed_dunder_methods: BTreeSet<String>,
    /// Dunder attributes that may be read (never written).
    pub(crate) allowed_dunder_reads: BTreeSet<String>,
    /// Registering functions refused when reached through a module: name -> hint.
    pub(crate) registrars: BTreeMap<String, String>,
    /// Setting keys (rcParams, pandas options) that may not be written (prefix match).
    pub(crate) denied_setting_prefixes: BTreeSet<String>,
    /// Names injected into the job's globals, mapped to the module path they stand for
    /// (empty path: a helper, not a module).
    pub(crate) injected_names: BTreeMap<String, String>,
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn names(table: &[(&str, &str)]) -> BTreeSet<String> {
    table.iter().map(|(n, _)| n.to_string()).collect()
}

impl Default for Policy {
    fn default() -> Self {
        Policy::figures()
    }
}

impl Policy {
    /// The default profile for figure code: numpy, scipy, matplotlib, pandas and a
    /// reviewed set of pure stdlib modules.
    pub fn figures() -> Policy {
        Policy {
            profile: "figures".into(),
            gate_enabled: true,
            max_source_bytes: 256 * 1024,
            max_bracket_depth: 200,
            max_ast_depth: 1000,
            allowed_modules: set(FIGURE_MODULES),
            denied_modules: set(DENIED_MODULES),
            module_members: MODULE_MEMBERS
                .iter()
                .map(|(m, members)| {
                    let members = members
                        .iter()
                        .map(|(n, r)| (n.to_string(), r.to_string()))
                        .collect();
                    (m.to_string(), members)
                })
                .collect(),
            banned_names: names(BANNED_NAME_REASONS),
            shadowable_names: names(SHADOWABLE_NAME_REASONS),
            banned_builtins: names(BANNED_BUILTIN_REASONS),
            banned_attributes: names(BANNED_ATTRIBUTE_REASONS),
            banned_attribute_prefixes: set(BANNED_ATTRIBUTE_PREFIXES),
            private_attribute_allowlist: BTreeSet::new(),
            allowed_dunder_methods: set(ALLOWED_DUNDER_METHODS),
            allowed_dunder_reads: set(ALLOWED_DUNDER_READS),
            denied_setting_prefixes: set(DENIED_SETTING_PREFIXES),
            registrars: REGISTRAR_HINTS
                .iter()
                .map(|(n, h)| (n.to_string(), h.to_string()))
                .collect(),
            injected_names: INJECTED
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        }
    }

    /// The pandas/table profile: the figure profile plus a few pure stdlib helpers that
    /// table code uses (`calendar`, `zoneinfo`, `unicodedata`, `difflib`, `pprint`).
    pub fn tables() -> Policy {
        let mut p = Policy::figures();
        p.profile = "tables".into();
        p.allowed_modules
            .extend(TABLE_EXTRA_MODULES.iter().map(|s| s.to_string()));
        p
    }

    /// **Testing only**: every static rule off. Syntax, encoding, size and depth are still
    /// checked (they protect the host, not the job), and [`Policy::runtime_rules`] are the
    /// figure profile's, so containment tests prove the run-time layers alone.
    pub fn gate_disabled_for_testing() -> Policy {
        let mut p = Policy::figures();
        p.profile = "gate-disabled-for-testing".into();
        p.gate_enabled = false;
        p
    }

    /// Whether the static rules run.
    pub fn gate_enabled(&self) -> bool {
        self.gate_enabled
    }

    /// Profile name.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// Loads a policy from TOML; absent fields take the figure defaults.
    pub fn from_toml(s: &str) -> Result<Policy, PolicyError> {
        let p: Policy = toml::from_str(s).map_err(|e| PolicyError::Toml(e.to_string()))?;
        p.validate()
    }

    /// Loads a policy from JSON; absent fields take the figure defaults.
    pub fn from_json(s: &str) -> Result<Policy, PolicyError> {
        let p: Policy = serde_json::from_str(s).map_err(|e| PolicyError::Json(e.to_string()))?;
        p.validate()
    }

    /// Serialises the policy as JSON (the canonical form hashed by [`Policy::hash`]).
    pub fn to_json(&self) -> String {
        // Serialising plain strings, sets and maps cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    fn validate(self) -> Result<Policy, PolicyError> {
        if self.max_source_bytes == 0 {
            return Err(PolicyError::Invalid("max_source_bytes must be > 0".into()));
        }
        if self.max_bracket_depth == 0 || self.max_ast_depth == 0 {
            return Err(PolicyError::Invalid("depth limits must be > 0".into()));
        }
        // The hard ceilings keep the big-stack walk within its stack (see mod.rs).
        if self.max_bracket_depth > 10_000 || self.max_ast_depth > 100_000 {
            return Err(PolicyError::Invalid(
                "depth limits above the hard ceiling".into(),
            ));
        }
        // Hard ceiling: a tree level costs at least one source byte, and the gate's
        // big-stack thread is sized for trees of this many levels (see gate::BIG_STACK).
        if self.max_source_bytes > 1024 * 1024 {
            return Err(PolicyError::Invalid("max_source_bytes above 1 MiB".into()));
        }
        for (m, members) in &self.module_members {
            if self.denied_modules.contains(m) {
                return Err(PolicyError::Invalid(format!(
                    "module {m:?} is both denied and limited to members"
                )));
            }
            if let Some(bad) = members
                .keys()
                .find(|n| n.starts_with('_') || n.contains('.'))
            {
                return Err(PolicyError::Invalid(format!(
                    "member {bad:?} of {m:?}: members are public names"
                )));
            }
        }
        for m in &self.allowed_modules {
            if m.contains('.') || m.is_empty() {
                return Err(PolicyError::Invalid(format!(
                    "allowed_modules holds top-level packages, not {m:?}"
                )));
            }
            if self.banned_names.contains(m) {
                return Err(PolicyError::Invalid(format!("module {m:?} is also banned")));
            }
        }
        Ok(self)
    }

    /// Largest accepted source in bytes (default 256 KiB).
    pub fn max_source_bytes(&self) -> usize {
        self.max_source_bytes
    }

    /// Deepest accepted bracket nesting.
    pub fn max_bracket_depth(&self) -> usize {
        self.max_bracket_depth
    }

    /// Deepest accepted syntax tree.
    pub fn max_ast_depth(&self) -> usize {
        self.max_ast_depth
    }

    /// Stable hex hash (FNV-1a 64) of the canonical JSON form; sets serialise sorted.
    pub fn hash(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.to_json().as_bytes() {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// What the worker enforces at run time with the same lists.
    pub fn runtime_rules(&self) -> RuntimeRules {
        let mut attrs: BTreeSet<String> = self.banned_attributes.clone();
        attrs.extend(self.banned_names.iter().cloned());
        RuntimeRules {
            allowed_modules: self.allowed_modules.iter().cloned().collect(),
            denied_modules: self.denied_modules.iter().cloned().collect(),
            module_members: self
                .module_members
                .iter()
                .map(|(m, members)| (m.clone(), members.keys().cloned().collect()))
                .collect(),
            // `__import__` is replaced by the guarded import rather than removed, and
            // `__build_class__` must stay for `class` statements to work.
            banned_builtins: self
                .banned_builtins
                .iter()
                .filter(|b| *b != "__import__" && *b != "__build_class__")
                .cloned()
                .collect(),
            banned_attributes: attrs.into_iter().collect(),
            banned_attribute_prefixes: self.banned_attribute_prefixes.iter().cloned().collect(),
            injected: self
                .injected_names
                .iter()
                .map(|(n, t)| (n.clone(), t.clone()))
                .collect(),
            allowed_dunder_reads: self.allowed_dunder_reads.iter().cloned().collect(),
            capability_exempt: CAPABILITY_EXEMPT
                .iter()
                .map(|(n, _)| n.to_string())
                .collect(),
            capability_modules: self
                .banned_names
                .iter()
                .chain(&self.shadowable_names)
                .map(String::as_str)
                .chain(CAPABILITY_MODULES.iter().map(|(m, _)| *m))
                .map(str::to_string)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
        }
    }

    /// Allowed top-level packages, sorted (for teaching texts).
    pub fn allowed_imports(&self) -> Vec<String> {
        self.allowed_modules.iter().cloned().collect()
    }

    /// The dotted path an injected name stands for (`pd`: `pandas`, `loadmat`:
    /// `scipy.io.loadmat`); `None` for names that are no module or member.
    pub(crate) fn module_for_injected(&self, name: &str) -> Option<String> {
        self.injected_names
            .get(name)
            .filter(|s| !s.is_empty())
            .map(|s| s.replace(':', "."))
    }

    /// The names every job finds in its globals.
    pub(crate) fn injected_names(&self) -> impl Iterator<Item = &str> {
        self.injected_names.keys().map(String::as_str)
    }

    /// True when `path` (dotted) may not be reached: a denied submodule or a path below
    /// one, or a member a members-only module does not allow.
    pub(crate) fn module_denied(&self, path: &str) -> bool {
        self.module_access(path) != ModuleAccess::Allowed
    }

    /// How `path` (dotted) may be reached. A members-only module itself is allowed (the
    /// job gets a view that holds only the members), and so is anything below an allowed
    /// member.
    pub(crate) fn module_access(&self, path: &str) -> ModuleAccess {
        let under = |p: &str, d: &str| p.starts_with(d) && p.as_bytes().get(d.len()) == Some(&b'.');
        for (module, members) in &self.module_members {
            if path == module {
                return ModuleAccess::Allowed;
            }
            if under(path, module) {
                let member = path[module.len() + 1..].split('.').next().unwrap_or("");
                return if members.contains_key(member) {
                    ModuleAccess::Allowed
                } else {
                    ModuleAccess::NotAMember {
                        module: module.clone(),
                        allowed: members.keys().cloned().collect(),
                    }
                };
            }
        }
        if self
            .denied_modules
            .iter()
            .any(|d| path == d || under(path, d))
        {
            ModuleAccess::Denied
        } else {
            ModuleAccess::Allowed
        }
    }

    /// The hint for a path [`Policy::module_access`] refuses.
    pub(crate) fn module_hint(&self, path: &str) -> String {
        match self.module_access(path) {
            ModuleAccess::NotAMember { module, allowed } => format!(
                "{module} offers only these names here: {}",
                allowed.join(", ")
            ),
            _ => "use the package's public plotting/analysis API".into(),
        }
    }

    /// True when a setting key (rcParams / pandas option) may not be written.
    pub(crate) fn setting_denied(&self, key: &str) -> bool {
        let k = key.trim().to_ascii_lowercase();
        self.denied_setting_prefixes
            .iter()
            .any(|p| k.starts_with(p.as_str()))
    }

    /// Denied setting prefixes that contain a dot: safe to look for in any string constant.
    pub(crate) fn setting_denied_dotted(&self, key: &str) -> bool {
        if key.len() > 64 || !key.contains('.') {
            return false;
        }
        let k = key.trim().to_ascii_lowercase();
        self.denied_setting_prefixes
            .iter()
            .filter(|p| p.contains('.'))
            .any(|p| k.starts_with(p.as_str()))
    }
}

/// Rules the Python worker enforces at run time (guarded `__import__`, module proxies,
/// curated builtins). Sent to the worker as JSON.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RuntimeRules {
    /// Top-level packages allowed.
    pub allowed_modules: Vec<String>,
    /// Dotted submodules denied even under an allowed package (`numpy.f2py`, ...).
    pub denied_modules: Vec<String>,
    /// Members-only modules: the job's view of each holds only these names.
    #[serde(default)]
    pub module_members: BTreeMap<String, Vec<String>>,
    /// Names removed from the job's builtins.
    pub banned_builtins: Vec<String>,
    /// Modules whose classes and functions give file, process or import access: a
    /// module proxy refuses such an object wherever an allowed module re-exports it.
    #[serde(default)]
    pub capability_modules: Vec<String>,
    /// `module.name` of re-exported classes and functions of capability modules that
    /// give no capability (`io.StringIO`): the proxy lets these through.
    #[serde(default)]
    pub capability_exempt: Vec<String>,
    /// Attribute names a module proxy must refuse (`os`, `sys`, `subprocess`, ...); a
    /// proxy must also refuse any `_`-prefixed name and any attribute whose value is a
    /// module outside the allowlist.
    pub banned_attributes: Vec<String>,
    /// Attribute prefixes of frame, generator and code objects (`gi_`, `tb_`, ...),
    /// refused by the curated `getattr`/`hasattr`.
    #[serde(default)]
    pub banned_attribute_prefixes: Vec<String>,
    /// Names every job finds in its globals: (name, module or `module:member`, or
    /// empty for the prelude's own helpers).
    #[serde(default)]
    pub injected: Vec<(String, String)>,
    /// Dunder attributes that hold plain strings (`__name__`, `__doc__`, ...): the
    /// gate's `allowed_dunder_reads`. A replacement field of a format string may read
    /// these (`'{cls.__name__}'`, in matplotlib's own error messages); every other `_`
    /// name is refused there, as by the curated `getattr`.
    #[serde(default)]
    pub allowed_dunder_reads: Vec<String>,
}

/// Looks up the documented reason for a banned name, builtin or attribute.
pub(crate) fn reason_for(name: &str) -> &'static str {
    for table in [
        BANNED_NAME_REASONS,
        BANNED_BUILTIN_REASONS,
        SHADOWABLE_NAME_REASONS,
        BANNED_ATTRIBUTE_REASONS,
    ] {
        if let Some((_, r)) = table.iter().find(|(n, _)| *n == name) {
            return r;
        }
    }
    "not allowed by the policy"
}
