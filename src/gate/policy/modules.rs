//! The import allowlist: the top-level packages a job may import, the submodules denied
//! below them, the modules a job sees only as views of reviewed members, the names every
//! job finds in its globals, the modules whose objects carry file, process or import
//! access at run time, and what to suggest instead of a module that is not importable.
//!
//! Widening the import allowlist is a reviewed act. What each default module brings:
//!
//! | module | capability it brings | dangerous parts (banned by name) |
//! | --- | --- | --- |
//! | numpy | arrays, maths, file readers | `ctypeslib`, `f2py`, `testing`, `distutils`, `lib.format`, `lib._datasource`, `DataSource`, `memmap`, `as_strided`, `load(allow_pickle=True)` |
//! | scipy | signal, stats, optimize, io.loadmat | `scipy._lib` (private), `LowLevelCallable` (ctypes), `scipy.datasets` (downloads) |
//! | matplotlib | figures | `matplotlib.cbook` except reviewed members (`module_members.rs`), `matplotlib.os/.sys/.subprocess` attributes, `testing`, `animation` except `FuncAnimation`, `ArtistAnimation` and `PillowWriter` (the other writers spawn programs), `texmanager`/`dviread` (spawn TeX), rcParams writer paths, `text.usetex`, style files from paths, backends |
//! | mpl_toolkits | axes helpers (`axes_grid1`, `mplot3d`) | nothing beyond matplotlib |
//! | pandas | tables | `read_pickle`/`to_pickle`, `read_clipboard` (spawns xclip), `read_html`/`read_xml` (URLs), `read_sql*`, `read_hdf` (unpickles), `pandas.io`, `query`/`eval` strings with `@` or attribute access, `plotting.backend` (imports by name) |
//! | math, cmath, statistics, decimal, fractions, numbers, bisect, heapq | arithmetic | none |
//! | json, csv, re, textwrap, string, datetime, time | text, dates | `string.Formatter` (returns objects from format fields), `Formatter.get_field`, `vformat` |
//! | collections, itertools, functools, operator | containers, helpers | `functools.update_wrapper`/`wraps` (copy `__dict__`, attribute proxies), `operator.attrgetter`/`methodcaller` (take dunder strings) |
//! | random | random numbers | none (reseeded by the worker after each job) |
//! | cycler | property cycles (`cycler(color=[...])`), matplotlib's own dependency | none: imports only copy, functools, itertools, operator, typing |
//! | typing, dataclasses, enum | annotations, records | `typing.get_type_hints` and `ForwardRef` (evaluate string annotations), `dataclasses.make_dataclass` (dynamic classes), `enum.bltns` (the builtins module under a short alias) |
//! | seaborn | statistical plots over pandas and matplotlib | `load_dataset`, `get_dataset_names`, `get_data_home` (network, cache directories, reads any `data_home`), `dogplot` (network), `seaborn.utils` except reviewed members, `seaborn.external` (appdirs, docscrape: os, sys, inspect, pydoc), `seaborn.widgets` (interactive), `algorithms.bootstrap(func='name')` judged as an attribute at run time |
//! | colorsys, calendar, pprint | colour conversions, calendars, pretty printing | none: pure functions of their arguments |
//! | difflib, fnmatch, base64, html, hashlib | close-match names, name patterns, base64 and HTML escaping (an HTML report with an embedded chart), checksums | none: pure functions of their arguments (`hashlib.file_digest` reads a file object the job opened) |
//! | uuid (members only: `uuid4`, `uuid5`, `uuid3`, `UUID`, namespaces) | ids | `uuid1`/`getnode` (the host's hardware address) |
//! | abc (members only: `ABC`, `ABCMeta`, `abstractmethod`) | abstract base classes of the job's own | `get_cache_token`, `update_abstractmethods` (changes a class after the fact); registrations in library ABCs are guarded state |
//! | contextlib (members only: `suppress`, `nullcontext`, `contextmanager`, `closing`) | context-manager helpers | `redirect_stdout`/`redirect_stderr` (the process's streams), `chdir` |
//! | argparse (members only: `ArgumentParser`, `Namespace`, the formatters, actions, errors and constants, `FileType`) | scripts written for a shell: `parse_args()` reads the job's command line, its script's name and no arguments, so every option takes its default (python/prelude/job_arguments.py); `--help`/`parser.exit()` end the job as `sys.exit`; a parse error is the job's failure with argparse's message | argument files (`fromfile_prefix_chars`: argparse's own `open`), the terminal's width; `FileType` opens through the job's `open` |
//! | io (members only) | `StringIO`, `BytesIO`: text and bytes in memory | everything else (`open`, `FileIO`, `TextIOWrapper`, ...) |
//! | pathlib (members only: `Path`, `PurePath`, `PurePosixPath`, `PosixPath`) | paths as models write them (`Path("data") / "x.csv"`), each name pyward's one reviewed path class (python/prelude/pathlib_view.py, `_JobPath`): pure methods on its text; reads and writes through the job's `open` (inputs, artifacts); `exists`/`is_file`/`is_dir`/`stat`/`iterdir`/`glob` answered against the job's files only; `mkdir` a no-op; `resolve`/`absolute` computed with `/mnt/data` as working directory | pathlib's own classes and every other name of pathlib; `unlink`, `rename`, `chmod`, links, `home` and the like refused at run time; `pathlib` stays a banned name outside `import pathlib` and `pathlib.<member>` |
//! | logging (members only) | `basicConfig`, `getLogger`, loggers, handlers and formatters as pyward's per-job stand-ins (python/prelude/job_logging.py): records go to the job's stderr, or to a log file written as an artifact through the job's `open`; the level constants | the real module's loggers, handlers and manager (the process's and the libraries') |
//! | traceback (members only: `format_exc`, `print_exc`, `format_exception`, `print_exception`) | the exception with the job's own frames, as the job's error report shows them | frames, stack walking, every other name |
//! | glob (members only: `glob`, `iglob`) | the job's files that match a pattern, answered as the reviewed `Path.glob` answers | `root_dir`, `dir_fd`; every other name of glob |
//! | shutil (members only: `copy`, `copy2`, `copyfile`, `copyfileobj`, `rmtree`) | copies of the job's files (`shutil.copy('source.xlsx', 'result.xlsx')`), read and written through the job's `open` (an input or the job's own file in, an artifact out); `rmtree` of a folder the job made and wrote nothing into, as the clean-up `if os.path.exists('out'): shutil.rmtree('out')` at a script's start asks (a missing folder: `FileNotFoundError`, or nothing with `ignore_errors=True`) | shutil's own functions; `move`, `make_archive`, `which`, `chown`, `disk_usage` and every other name; `rmtree` of anything holding a file or of the job's own folder (files are never deleted) |
//! | os (members only: `path`, `makedirs`, `mkdir`, `listdir`, `getcwd`, `chdir`, `walk`, `environ`, `getenv`, `sep`, `name`) | folders as the reviewed `Path` answers them (`makedirs`/`mkdir` change nothing on disk, `listdir` lists the job's own folders, `getcwd` is `/mnt/data`, `chdir` to it, as `os.chdir(os.path.dirname(os.path.abspath(__file__)))` does, changes nothing and any other folder is refused); `os.path` string helpers (`join`, `basename`, `dirname`, `splitext`, `split`, `normpath`, `isabs`, `sep`) and `exists`/`isfile`/`isdir`/`getsize`/`getmtime` answered against the job's inputs and the files it wrote only, `abspath`/`realpath` as `Path.resolve` (with `/mnt/data` as the working directory) | every other name of `os` and of `os.path` (`expanduser`, `getcwdb`, ...); `os` stays a banned name outside `import os`, `os.<member>` and a value of the job's own bound to the name |
//! | openpyxl (members only) | workbooks (`Workbook`, `load_workbook`), cell styles (`openpyxl.styles`: `Font`, `Alignment`, `PatternFill`, `GradientFill`, `Border`, `Side`, `Color`, `Protection`, `NamedStyle`, the `FORMAT_*` strings of `styles.numbers`), charts of the workbook's own cells (`openpyxl.chart`: `BarChart`, `LineChart`, `PieChart`, `ScatterChart`, `AreaChart`, `DoughnutChart`, `Reference`, `Series`), Excel tables (`openpyxl.worksheet.table`: `Table`, `TableStyleInfo`), conditional formatting (`openpyxl.formatting.rule`: `ColorScaleRule`, `DataBarRule`, `IconSetRule`, `CellIsRule`, `FormulaRule`), drop-down lists and bounds (`openpyxl.worksheet.datavalidation.DataValidation`), pictures (`openpyxl.drawing.image.Image`, read by Pillow through the job's reads), `get_column_letter`, `column_index_from_string`, `dataframe_to_rows`; pandas' `to_excel`/`ExcelWriter` use it (and `read_excel(engine="openpyxl")`; the default reader is calamine, given only workbooks screened for DTDs and inflation, `python/prelude/spreadsheets.py`). Workbook XML is parsed through defusedxml (entities refused); `load_workbook` reads the job's inputs and outputs only and never keeps macros | every other module of openpyxl (readers, packaging, the rest of `drawing`, `xml`, `reader.excel`, `writer.excel`), `keep_vba`, external links |
//! | xlsxwriter (members only) | pandas' other `.xlsx` writer (`ExcelWriter(engine="xlsxwriter")`, `writer.book.add_format`, `worksheet.set_column`), `Workbook` for code that writes one directly, the cell-name helpers of `xlsxwriter.utility`. Write-only: it parses no XML. Its workbooks are kept in memory (no temporary files), saved reproducibly, and their images and themes are read through the job's `open` (`python/prelude/spreadsheets.py`) | every other module of xlsxwriter; macros (`add_vba_project`, `add_signed_vba_project`, `set_vba_name`) and `set_tempdir` refused at run time |
//! | sys (members only) | `sys.exit(status)` (0 or None ends the job as the end of its code; any other status is a failure), `sys.stdout`/`sys.stderr` (the job's captured streams; `reconfigure` accepted), `argv` (the job's own list: its script's name and no arguments), `version`, `version_info`, `maxsize`, `float_info`, `getsizeof` | everything else (`platform` is a banned name): modules, frames, paths, hooks |
//! | tabulate (members only) | `tabulate(rows, headers=...)`, the text tables `DataFrame.to_markdown()` also formats with | everything else of the module (its format tables are module state) |
//! | platform (members only: `system`, `machine`, `python_version`, `python_implementation`) | what fonts and paths scripts choose by (`if platform.system() == "Windows"`): `'Linux'`, the processor's kind, the interpreter's version | everything else (`node`, `uname`, `platform()`, `libc_ver`, `architecture`, which runs `file`) |
//! | gc (members only: `collect`) | frees the job's unreachable objects now, as memory-minded scripts ask | `get_objects`, `get_referrers`, `get_referents` (every live object), `freeze`, `callbacks`, `disable` |
//! | zoneinfo (members only: `ZoneInfo`, `ZoneInfoNotFoundError`) | time zones by IANA name, read from the tzdata package: the class pandas already hands out as a timestamp's `tz` | `reset_tzpath` (where zone files are read from), `available_timezones` (walks those folders), `TZPATH` |
//! | locale (members only: `setlocale`, `getlocale`, `localeconv`, `format_string`, `currency`, `str`, `atof`, `atoi`, `delocalize`, `getpreferredencoding`, `getencoding`, `normalize`, `Error`, the `LC_*` categories, `CHAR_MAX`) | thousands separators and currency as scripts format them (`try: locale.setlocale(locale.LC_ALL, 'en_US.UTF-8') except locale.Error: ...`). The C locale it changes is process state the state guard restores after every job; a locale the sandbox cannot read is `locale.Error`; `setlocale` takes exact text without a `/` (the C library reads such a name as a folder of locale files) | `resetlocale`, `bindtextdomain`, `textdomain` and the rest of the module |
//! | IPython (members only: `display.display`, `Markdown`, `HTML`, `Image`, `clear_output`) | notebook code's display helpers as pyward's own stand-ins (python/prelude/job_paths.py): each object printed, Markdown and HTML as their text, an image as its name | IPython itself (not installed): its shell, magics, kernels and every other name |
//! | dateutil (members only) | month arithmetic (`dateutil.relativedelta.relativedelta`) and date parsing (`dateutil.parser.parse`, `isoparse`), pandas' own dependencies | `dateutil.tz` (reads the system's zone files), `rrule`, `easter`, the parser's module state |

/// What to use instead of a module jobs cannot import: the models' usual reasons to
/// reach for it, answered with what this environment offers.
const IMPORT_ALTERNATIVES: &[(&[&str], &str)] = &[
    (
        &["os", "glob", "shutil"],
        "list the inputs with glob.glob('*.csv'), listdir(), walkfiles() or Path('/mnt/data').glob('*.csv') and read them by name; of os, only os.path's string helpers (join, basename, dirname, splitext, exists, isfile), the folder functions makedirs, listdir, walk and getcwd, and chdir to the job's own folder are available; copy a file with shutil.copy('in.xlsx', 'copy.xlsx'); files are not deleted or moved (the job's folder starts empty)",
    ),
    (
        &["sys"],
        "of sys, only exit, stdout, stderr, argv (the script's name, no arguments) and the interpreter's version are available: print() writes output, listdir() lists the inputs, srcpath('name') gives a path",
    ),
    (
        &["io", "tempfile"],
        "read inputs with pd.read_csv(srcpath('name')) or np.loadtxt(srcpath('name')); for text or bytes in memory use io.StringIO or io.BytesIO",
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
        &["pickle", "joblib", "shelve", "dill", "sqlite3"],
        "read data with pd.read_csv, np.load or loadmat on srcpath('name') (pickles and databases are not opened); query frames with pandas: df.merge, df.groupby, df.query",
    ),
    (
        &["subprocess", "multiprocessing", "threading", "ctypes", "concurrent"],
        "jobs run single-threaded Python without programs or native code: loop over the items in turn; use numpy for speed",
    ),
    (&["tqdm"], "progress bars are not needed: remove it"),
    (
        &["secrets"],
        "for random values use random (seeded for each job, so a run can be replayed), e.g. random.getrandbits(64), or uuid.uuid4().hex",
    ),
    (
        &["getpass"],
        "the user's name and passwords are not available here: write a fixed name where one is needed, e.g. prepared_by = 'analyst'",
    ),
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

/// Names every job finds in its globals, with what they stand for: a module, a
/// `module:member`, or nothing (the prelude's own helpers, and `SRC`/`OUT`). The one
/// list: the gate reads `pd.x` as `pandas.x`, the supervisor refuses an array that
/// would shadow a name, and the worker builds each job's globals from it (what warm-up
/// did not import is imported on first use, as the job's own import would).
pub(super) const INJECTED: &[(&str, &str)] = &[
    ("np", "numpy"),
    ("plt", "matplotlib.pyplot"),
    ("pd", "pandas"),
    ("loadmat", "scipy.io:loadmat"),
    ("SRC", ""),
    ("OUT", ""),
    ("srcpath", ""),
    ("listdir", ""),
    ("walkfiles", ""),
    // What notebook code (a code interpreter's) shows a table or value with: printed.
    ("display", ""),
];

/// Default import allowlist for figure code (top-level packages).
pub(super) const FIGURE_MODULES: &[&str] = &[
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
    "seaborn",
    "colorsys",
    "calendar",
    "pprint",
    // Pure helpers scripts reach for: fuzzy names, name patterns, encodings for HTML
    // reports, checksums.
    "difflib",
    "fnmatch",
    "base64",
    "html",
    "hashlib",
    // Members only (see module_members.rs): random ids; context-manager helpers; command
    // lines of scripts written for a shell (every option at its default); abstract base
    // classes of the job's own.
    "uuid",
    "contextlib",
    "argparse",
    "abc",
    // Members only (see module_members.rs): in-memory buffers, os.path's string helpers,
    // and pathlib's Path as the reviewed class.
    "io",
    "os",
    "pathlib",
    "glob",
    // Members only (see module_members.rs): copies of the job's files through its `open`,
    // and the clean-up of a folder it made (python/prelude/file_copies.py).
    "shutil",
    // Members only (see module_members.rs): pyward's own loggers, and tracebacks of the
    // job's own frames.
    "logging",
    "traceback",
    // pyward's own stand-in for the display helper of OpenAI's code interpreter.
    "ace_tools",
    // Members only (see module_members.rs): pyward's own stand-in for the display
    // helpers notebook code imports (`from IPython.display import display`).
    "IPython",
    // Members only (see module_members.rs): workbooks and their styles.
    "openpyxl",
    // Members only (see module_members.rs): the workbook writer and its cell-name helpers.
    "xlsxwriter",
    // Members only (see module_members.rs): text tables; month arithmetic and date parsing.
    "tabulate",
    "dateutil",
    // Members only (see module_members.rs): time zones by name; the system's name (scripts
    // choose fonts by it); a collection now.
    "zoneinfo",
    "platform",
    "gc",
    // Members only (see module_members.rs): numbers and money in a locale's format.
    "locale",
    // Members only (see module_members.rs): exit, the job's streams, interpreter facts.
    "sys",
];

/// Extra modules for the table profile: calendars and text helpers for table code.
pub(super) const TABLE_EXTRA_MODULES: &[&str] = &["calendar", "unicodedata", "pprint"];

/// Dotted submodules denied even under an allowed package (prefix match).
pub(super) const DENIED_MODULES: &[&str] = &[
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
    "pandas.io", // clipboard, pickle, sql, html, pytables, common (os)
    "pandas.testing",
    "pandas._testing",
    "pandas.util",
    "pandas.compat",
    "pandas.core.computation", // the eval engine
    "seaborn.external",        // appdirs (os, cache dirs), docscrape (inspect, pydoc)
    "seaborn.widgets",         // interactive widgets (ipywidgets)
];

/// A package reachable again as another module's attribute: a path through it is judged
/// as the package's own path, so `plt.matplotlib.ticker.PercentFormatter` passes as
/// `matplotlib.ticker.PercentFormatter` does and `plt.matplotlib.cbook.open_file_cm`
/// is refused as `matplotlib.cbook.open_file_cm` is. (At run time the attribute is the
/// same guarded view of the package.)
pub(crate) const PACKAGE_ALIASES: &[(&str, &str)] =
    &[("matplotlib.pyplot.matplotlib", "matplotlib")];

/// Modules besides the banned names whose classes and functions give file, process or
/// import access when an allowed module re-exports them (see
/// [`super::RuntimeRules::capability_modules`]).
pub(super) const CAPABILITY_MODULES: &[(&str, &str)] = &[
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
pub(super) const CAPABILITY_EXEMPT: &[(&str, &str)] = &[
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
