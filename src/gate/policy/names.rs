//! What the gate refuses by name, and why: the tables [`super::Policy`] is built from for
//! names, builtins, attributes and dunders, each entry with the reason the gate quotes,
//! and the teaching hints that say what to write instead.
//!
//! The walk (`gate::walk::names`) enforces these; the worker receives the same lists as
//! [`super::RuntimeRules`].

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
    (
        "pathlib",
        "file system access; only `from pathlib import Path` (pyward's reviewed Path) is available",
    ),
    (
        "glob",
        "file system listing; only `import glob` and glob.glob/iglob over the job's files are available",
    ),
    ("shutil", "copies, moves and deletes files"),
    ("tempfile", "creates files outside the job's folders"),
    ("fileinput", "opens files"),
    ("zipfile", "opens archives on disk"),
    ("tarfile", "opens archives on disk (path traversal)"),
    ("builtins", "the unrestricted builtins"),
    ("__builtins__", "the unrestricted builtins"),
    ("bltns", "enum's alias of the builtins module"),
    (
        "gc",
        "reaches every live object (gc.get_objects); `import gc` gives gc.collect only",
    ),
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
    (
        "platform",
        "runs programs to identify the host; `import platform` gives system, machine and python_version only",
    ),
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

/// The banned names that are also names of Python's builtins (the exception classes
/// above). A job's own binding of one can be deleted and the builtin read again, so
/// they stay refused wherever they are bound or read. Every other banned name is a
/// module's, which nothing in a job's namespace or builtins goes by: a job may use it
/// for a value of its own (`for site in sites`, `types = df["type"].unique()`,
/// `requests = 5`), and reads of it pass when the job binds it itself
/// ([`is_bindable_module_name`]); as an attribute, an import or a module reached
/// through it, it stays refused. `tests/it/gate.rs` checks this list against the
/// interpreter's builtins.
pub(crate) const BUILTIN_BANNED_NAMES: &[&str] = &[
    "BaseException",
    "SystemExit",
    "KeyboardInterrupt",
    "GeneratorExit",
    "BaseExceptionGroup",
    "ExceptionGroup",
];

/// Whether `n`, a banned name, is a module's name a job may bind for itself (see
/// [`BUILTIN_BANNED_NAMES`]).
pub(crate) fn is_bindable_module_name(n: &str) -> bool {
    !BUILTIN_BANNED_NAMES.contains(&n) && !crate::gate::strings::is_dunder(n)
}

/// Names banned as bare identifiers only when the job never binds them itself. They are
/// stdlib modules with dangerous powers, but their names collide with legitimate code:
/// `from scipy import signal`, `signal = np.sin(t)`, `for code in codes`, `scipy.io`,
/// `np.select(conditions, choices)`.
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
    // `np.select`, `df.select_dtypes`' neighbour: reached as an attribute only through
    // subprocess, selectors and socket, which are banned names.
    (
        "select",
        "network/file descriptor polling (stdlib select); np.select is available",
    ),
];

/// Builtins rejected when called *or merely referenced* (`e = eval`, `f(eval)`, `[eval][0]`).
pub(crate) const BANNED_BUILTIN_REASONS: &[(&str, &str)] = &[
    ("eval", "evaluates strings as code"),
    ("exec", "executes strings as code"),
    ("compile", "builds code objects"),
    (
        "__import__",
        "imports bypassing the allowlist; use an import statement",
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
        "setattr" | "delattr" => "use plain attribute access (obj.name = value)",
        "eval" | "exec" | "compile" => "write the code directly instead of evaluating strings",
        "__import__" => "use an import statement with an allowed package",
        "dir" | "vars" | "globals" | "locals" => {
            "keep your own variables; introspection is not available"
        }
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
    // seaborn
    (
        "load_dataset",
        "downloads data from the network and reads a cache directory of the host",
    ),
    ("get_dataset_names", "lists datasets from the network"),
    (
        "get_data_home",
        "creates and names a cache directory of the host",
    ),
    ("dogplot", "downloads an image from the network"),
];

/// Banned names allowed as the name of an attribute read, because a reviewed class has a
/// method of that name: `Path('/mnt/data').glob('*.csv')` (python/prelude/pathlib_view.py, `_JobPath`,
/// lists the job's inputs). The name stays banned as a bare name, an import component,
/// an attribute store and, at run time, as an attribute of every module view and for the
/// curated `getattr` (the runtime rules keep every banned name).
pub(crate) const METHOD_NAMES_OF_BANNED: &[(&str, &str)] = &[(
    "glob",
    "Path.glob of the reviewed path class: lists the job's files",
)];

/// Dotted paths of allowed packages whose last component is named like a banned module,
/// and what they are: `pandas.api.types` (`pd.api.types.is_numeric_dtype`, `from
/// pandas.api.types import ...`) is pandas' public dtype checks, not the standard
/// library's `types`; `logging.Formatter` is the job's log formatter, not
/// `string.Formatter`.
pub(crate) const REVIEWED_PATHS: &[(&str, &str)] = &[
    (
        "pandas.api.types",
        "pandas' public dtype checks (is_numeric_dtype, is_string_dtype, CategoricalDtype)",
    ),
    (
        "logging.Formatter",
        "pyward's log formatter (python/prelude/job_logging.py), not string.Formatter",
    ),
    (
        "platform.system",
        "the system's name, 'Linux' (the job's platform view), not os.system",
    ),
];

/// Whether `a` is the last component of one of [`REVIEWED_PATHS`] (a cheap test before
/// the path is worked out).
pub(crate) fn is_reviewed_last(a: &str) -> bool {
    REVIEWED_PATHS
        .iter()
        .any(|(p, _)| p.rsplit('.').next() == Some(a))
}

/// Whether `path` is one of [`REVIEWED_PATHS`].
pub(crate) fn is_reviewed_path(path: &str) -> bool {
    REVIEWED_PATHS.iter().any(|(p, _)| *p == path)
}

/// Whether `a` is one of [`METHOD_NAMES_OF_BANNED`].
pub(crate) fn is_reviewed_method_name(a: &str) -> bool {
    METHOD_NAMES_OF_BANNED.iter().any(|(n, _)| *n == a)
}

/// The members of a named tuple's public API, underscored so as not to clash with field
/// names: `row._asdict()` of `df.itertuples()`, `p._replace(x=1)`, `Point._fields`, and
/// the positional names `_1`, `_2` that `itertuples` gives columns whose names are not
/// identifiers. Read only; no library object holds a dangerous member of these names
/// (reviewed over every class of the allowed packages: `ast` nodes' `_fields`, scipy's
/// resampling methods' `_asdict`, numpy's private `_replace` ufunc).
pub(crate) fn is_named_tuple_member(a: &str) -> bool {
    matches!(
        a,
        "_asdict" | "_replace" | "_fields" | "_make" | "_field_defaults"
    ) || a
        .strip_prefix('_')
        .is_some_and(|n| !n.is_empty() && n.len() <= 4 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The hint for a banned attribute: what to write instead, where one reason calls for
/// its own advice (the dataset loaders); the general advice otherwise.
pub(crate) fn attribute_hint(a: &str) -> &'static str {
    match a {
        "load_dataset" | "get_dataset_names" | "get_data_home" => {
            "there is no network and no dataset cache: pass the data as an input file and read it, e.g. df = pd.read_csv('tips.csv')"
        }
        "open" => {
            "open a file with the builtin open('name') (a Path works too: open(Path('data') / 'x.csv')), or use Path.read_text() / write_text()"
        }
        "testing" => {
            "compare with df.equals(other), np.allclose(a, b) or np.array_equal(a, b), then assert the result"
        }
        _ => "this attribute is not available; use the documented public API",
    }
}

/// Attribute name prefixes of frame, generator, coroutine, async-generator, traceback
/// and code objects (`gi_frame`, `cr_frame`, `ag_frame`, `tb_frame`, `co_code`, ...).
pub(crate) const BANNED_ATTRIBUTE_PREFIXES: &[&str] = &["gi_", "cr_", "ag_", "tb_", "co_"];

/// Dunder methods a job may *define* in its own classes. Defining `__init__` or `__repr__`
/// is ordinary code; defining hooks that the interpreter calls at odd times (`__del__`
/// after the job, `__getattr__`, `__init_subclass__`, `__set_name__`, `__reduce__`,
/// `__class_getitem__`) is not.
pub(super) const ALLOWED_DUNDER_METHODS: &[&str] = &[
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
pub(super) const ALLOWED_DUNDER_READS: &[&str] =
    &["__name__", "__qualname__", "__doc__", "__version__"];

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

/// What to write instead of assigning to a library module's attribute `path`.
pub(crate) fn mutation_hint(path: &str) -> &'static str {
    match path {
        "sys.stdout" | "sys.stderr" => {
            "print(..., file=f) writes to a file you opened, and print() alone is already \
             captured as the job's output"
        }
        _ => "do not modify library modules; keep your own variables",
    }
}
