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
//! | matplotlib | figures | `matplotlib.cbook` except reviewed members ([`MODULE_MEMBERS`]), `matplotlib.os/.sys/.subprocess` attributes, `testing`, `animation` except `FuncAnimation`, `ArtistAnimation` and `PillowWriter` (the other writers spawn programs), `texmanager`/`dviread` (spawn TeX), rcParams writer paths, `text.usetex`, style files from paths, backends |
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
//! | os (members only: `path`, `makedirs`, `mkdir`, `listdir`, `getcwd`, `chdir`, `walk`, `environ`, `getenv`, `sep`, `name`) | folders as the reviewed `Path` answers them (`makedirs`/`mkdir` change nothing on disk, `listdir` lists the job's own folders, `getcwd` is `/mnt/data`, `chdir` to it, as `os.chdir(os.path.dirname(os.path.abspath(__file__)))` does, changes nothing and any other folder is refused); `os.path` string helpers (`join`, `basename`, `dirname`, `splitext`, `split`, `normpath`, `isabs`, `sep`) and `exists`/`isfile`/`isdir`/`getsize`/`getmtime` answered against the job's inputs and the files it wrote only, `abspath`/`realpath` as `Path.resolve` (with `/mnt/data` as the working directory) | every other name of `os` and of `os.path` (`expanduser`, `getcwdb`, ...); `os` stays a banned name outside `import os`, `os.<member>` and a value of the job's own bound to the name |
//! | openpyxl (members only) | workbooks (`Workbook`, `load_workbook`), cell styles (`openpyxl.styles`: `Font`, `Alignment`, `PatternFill`, `GradientFill`, `Border`, `Side`, `Color`, `Protection`, `NamedStyle`, the `FORMAT_*` strings of `styles.numbers`), charts of the workbook's own cells (`openpyxl.chart`: `BarChart`, `LineChart`, `PieChart`, `ScatterChart`, `AreaChart`, `DoughnutChart`, `Reference`, `Series`), Excel tables (`openpyxl.worksheet.table`: `Table`, `TableStyleInfo`), conditional formatting (`openpyxl.formatting.rule`: `ColorScaleRule`, `DataBarRule`, `IconSetRule`, `CellIsRule`, `FormulaRule`), drop-down lists and bounds (`openpyxl.worksheet.datavalidation.DataValidation`), pictures (`openpyxl.drawing.image.Image`, read by Pillow through the job's reads), `get_column_letter`, `column_index_from_string`, `dataframe_to_rows`; pandas' `to_excel`/`ExcelWriter` use it (and `read_excel(engine="openpyxl")`; the default reader is calamine, given only workbooks screened for DTDs and inflation, `python/prelude/spreadsheets.py`). Workbook XML is parsed through defusedxml (entities refused); `load_workbook` reads the job's inputs and outputs only and never keeps macros | every other module of openpyxl (readers, packaging, the rest of `drawing`, `xml`, `reader.excel`, `writer.excel`), `keep_vba`, external links |
//! | xlsxwriter (members only) | pandas' other `.xlsx` writer (`ExcelWriter(engine="xlsxwriter")`, `writer.book.add_format`, `worksheet.set_column`), `Workbook` for code that writes one directly, the cell-name helpers of `xlsxwriter.utility`. Write-only: it parses no XML. Its workbooks are kept in memory (no temporary files), saved reproducibly, and their images and themes are read through the job's `open` (`python/prelude/spreadsheets.py`) | every other module of xlsxwriter; macros (`add_vba_project`, `add_signed_vba_project`, `set_vba_name`) and `set_tempdir` refused at run time |
//! | sys (members only) | `sys.exit(status)` (0 or None ends the job as the end of its code; any other status is a failure), `sys.stdout`/`sys.stderr` (the job's captured streams; `reconfigure` accepted), `argv` (the job's own list: its script's name and no arguments), `version`, `version_info`, `maxsize`, `float_info`, `getsizeof` | everything else (`platform` is a banned name): modules, frames, paths, hooks |
//! | tabulate (members only) | `tabulate(rows, headers=...)`, the text tables `DataFrame.to_markdown()` also formats with | everything else of the module (its format tables are module state) |
//! | platform (members only: `system`, `machine`, `python_version`, `python_implementation`) | what fonts and paths scripts choose by (`if platform.system() == "Windows"`): `'Linux'`, the processor's kind, the interpreter's version | everything else (`node`, `uname`, `platform()`, `libc_ver`, `architecture`, which runs `file`) |
//! | gc (members only: `collect`) | frees the job's unreachable objects now, as memory-minded scripts ask | `get_objects`, `get_referrers`, `get_referents` (every live object), `freeze`, `callbacks`, `disable` |
//! | zoneinfo (members only: `ZoneInfo`, `ZoneInfoNotFoundError`) | time zones by IANA name, read from the tzdata package: the class pandas already hands out as a timestamp's `tz` | `reset_tzpath` (where zone files are read from), `available_timezones` (walks those folders), `TZPATH` |
//! | dateutil (members only) | month arithmetic (`dateutil.relativedelta.relativedelta`) and date parsing (`dateutil.parser.parse`, `isoparse`), pandas' own dependencies | `dateutil.tz` (reads the system's zone files), `rrule`, `easter`, the parser's module state |

/// What to use instead of a module jobs cannot import: the models' usual reasons to
/// reach for it, answered with what this environment offers.
const IMPORT_ALTERNATIVES: &[(&[&str], &str)] = &[
    (
        &["os", "glob", "shutil"],
        "list the inputs with glob.glob('*.csv'), listdir(), walkfiles() or Path('/mnt/data').glob('*.csv') and read them by name; of os, only os.path's string helpers (join, basename, dirname, splitext, exists, isfile), the folder functions makedirs, listdir, walk and getcwd, and chdir to the job's own folder are available",
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
    // Members only (see MODULE_MEMBERS): random ids; context-manager helpers; command
    // lines of scripts written for a shell (every option at its default); abstract base
    // classes of the job's own.
    "uuid",
    "contextlib",
    "argparse",
    "abc",
    // Members only (see MODULE_MEMBERS): in-memory buffers, os.path's string helpers,
    // and pathlib's Path as the reviewed class.
    "io",
    "os",
    "pathlib",
    "glob",
    // Members only (see MODULE_MEMBERS): pyward's own loggers, and tracebacks of the
    // job's own frames.
    "logging",
    "traceback",
    // pyward's own stand-in for the display helper of OpenAI's code interpreter.
    "ace_tools",
    // Members only (see MODULE_MEMBERS): workbooks and their styles.
    "openpyxl",
    // Members only (see MODULE_MEMBERS): the workbook writer and its cell-name helpers.
    "xlsxwriter",
    // Members only (see MODULE_MEMBERS): text tables; month arithmetic and date parsing.
    "tabulate",
    "dateutil",
    // Members only (see MODULE_MEMBERS): time zones by name; the system's name (scripts
    // choose fonts by it); a collection now.
    "zoneinfo",
    "platform",
    "gc",
    // Members only (see MODULE_MEMBERS): exit, the job's streams, interpreter facts.
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

/// What each member of the job's `logging` view is: pyward's stand-in
/// (python/prelude/job_logging.py), never the real module's, whose loggers are the
/// process's and the libraries'.
const LOGGING_STAND_IN: &str = "pyward's per-job stand-in: records go to the job's stderr, or to a log file written as an artifact";

/// The job's `argparse.ArgumentParser` (python/prelude/job_arguments.py).
const ARGPARSE_STAND_IN: &str = "argparse's parser reading the job's command line (its script's name, no arguments: every option at its default); no argument files";

/// What each member of the job's `traceback` view is.
const TRACEBACK_STAND_IN: &str =
    "pyward's stand-in: the exception with the job's own frames, as its error report shows them";

/// Modules denied as a whole but with reviewed members a job may use: the job gets a
/// view of the module that holds these names only, never the module. `matplotlib.cbook`
/// keeps file and subprocess helpers (`_get_data_path`, `open_file_cm`, `to_filehandle`,
/// `_unmultiplied_rgba8888_to_premultiplied_argb32`'s neighbours...) beside pure helpers
/// that plotting scripts call.
///
/// `io` is the standard library's file layer; jobs get its two in-memory buffers.
/// `os` is a banned name: `import os` gives a view holding `path` only, and `os.path`
/// is a view holding the string helpers (`posixpath`'s own functions, which touch no
/// file) and `exists`/`isfile`, which the worker answers against the job's inputs and
/// never against the host (python/prelude/job_paths.py, `_input_for`). `pathlib` is a banned name
/// too: `import pathlib` and `from pathlib import Path` give a view whose four names are
/// all pyward's reviewed path class, never pathlib's own (the `.glob` method of that class
/// is why `glob` is allowed as an attribute name: see
/// [`super::names::METHOD_NAMES_OF_BANNED`]).
/// `seaborn.utils` keeps the
/// dataset loaders (network, cache directories), `os`, `inspect` and `urlopen` beside
/// colour and axes helpers.
pub(super) const MODULE_MEMBERS: &[(&str, &[(&str, &str)])] = &[
    (
        "io",
        &[
            ("StringIO", "text in memory"),
            ("BytesIO", "bytes in memory"),
        ],
    ),
    (
        "os",
        &[
            ("path", "the view of os.path below"),
            (
                "makedirs",
                "Path.mkdir's stand-in: nothing changes on disk, the folder exists for the job's later questions",
            ),
            ("mkdir", "as makedirs"),
            (
                "listdir",
                "the job's own folders only (its inputs, /mnt/data, folders it made), as Path.iterdir",
            ),
            ("getcwd", "'/mnt/data', the job's folder"),
            ("walk", "the job's own folders, as listdir lists them"),
            (
                "environ",
                "the job's own environment: empty when it starts, emptied after it",
            ),
            ("getenv", "reads the job's own environment"),
            ("sep", "a constant"),
            ("name", "'posix', a constant"),
            (
                "chdir",
                "to the job's folder only (/mnt/data, __file__'s folder), where the job already is: nothing changes; any other folder refused",
            ),
        ],
    ),
    (
        "logging",
        &[
            ("basicConfig", LOGGING_STAND_IN),
            ("getLogger", LOGGING_STAND_IN),
            ("Logger", LOGGING_STAND_IN),
            ("LogRecord", LOGGING_STAND_IN),
            ("Handler", LOGGING_STAND_IN),
            ("StreamHandler", LOGGING_STAND_IN),
            ("FileHandler", LOGGING_STAND_IN),
            ("NullHandler", LOGGING_STAND_IN),
            ("Formatter", LOGGING_STAND_IN),
            ("debug", LOGGING_STAND_IN),
            ("info", LOGGING_STAND_IN),
            ("warning", LOGGING_STAND_IN),
            ("warn", LOGGING_STAND_IN),
            ("error", LOGGING_STAND_IN),
            ("exception", LOGGING_STAND_IN),
            ("critical", LOGGING_STAND_IN),
            ("fatal", LOGGING_STAND_IN),
            ("log", LOGGING_STAND_IN),
            ("disable", LOGGING_STAND_IN),
            ("getLevelName", LOGGING_STAND_IN),
            ("captureWarnings", LOGGING_STAND_IN),
            ("shutdown", LOGGING_STAND_IN),
            ("DEBUG", "a number"),
            ("INFO", "a number"),
            ("WARNING", "a number"),
            ("WARN", "a number"),
            ("ERROR", "a number"),
            ("CRITICAL", "a number"),
            ("FATAL", "a number"),
            ("NOTSET", "a number"),
        ],
    ),
    (
        "traceback",
        &[
            ("format_exc", TRACEBACK_STAND_IN),
            ("print_exc", TRACEBACK_STAND_IN),
            ("format_exception", TRACEBACK_STAND_IN),
            ("print_exception", TRACEBACK_STAND_IN),
        ],
    ),
    (
        "uuid",
        &[
            ("uuid4", "a random id"),
            ("uuid5", "an id from a name (SHA-1)"),
            ("uuid3", "an id from a name (MD5)"),
            ("UUID", "the id type"),
            ("NAMESPACE_DNS", "a constant"),
            ("NAMESPACE_URL", "a constant"),
        ],
    ),
    (
        "contextlib",
        &[
            ("suppress", "ignores the exceptions named"),
            ("nullcontext", "a context manager that does nothing"),
            ("contextmanager", "a context manager from the job's own generator"),
            ("closing", "closes the job's own object at the end of the block"),
        ],
    ),
    (
        "abc",
        &[
            ("ABC", "the base of the job's own abstract classes"),
            ("ABCMeta", "the metaclass of the job's own abstract classes"),
            ("abstractmethod", "marks a method the job's subclasses must define"),
        ],
    ),
    (
        "argparse",
        &[
            ("ArgumentParser", ARGPARSE_STAND_IN),
            ("FileType", "a file argument, opened by the job's open (its inputs, its artifacts)"),
            ("Namespace", "the parsed options: a plain record"),
            ("ArgumentTypeError", "an exception class"),
            ("ArgumentError", "an exception class"),
            ("Action", "a class the job's own actions derive from"),
            ("BooleanOptionalAction", "--flag/--no-flag options"),
            ("HelpFormatter", "formats the help text (80 columns)"),
            ("RawTextHelpFormatter", "formats the help text (80 columns)"),
            ("RawDescriptionHelpFormatter", "formats the help text (80 columns)"),
            ("ArgumentDefaultsHelpFormatter", "formats the help text (80 columns)"),
            ("MetavarTypeHelpFormatter", "formats the help text (80 columns)"),
            ("SUPPRESS", "a constant"),
            ("OPTIONAL", "a constant"),
            ("ZERO_OR_MORE", "a constant"),
            ("ONE_OR_MORE", "a constant"),
            ("REMAINDER", "a constant"),
        ],
    ),
    (
        "glob",
        &[
            (
                "glob",
                "Path.glob's answer: the job's inputs and the files it wrote that match",
            ),
            ("iglob", "as glob, one at a time"),
        ],
    ),
    (
        "pathlib",
        &[
            ("Path", PATH_CLASS),
            ("PurePath", PATH_CLASS),
            ("PurePosixPath", PATH_CLASS),
            ("PosixPath", PATH_CLASS),
        ],
    ),
    (
        "openpyxl",
        &[
            ("Workbook", "a new workbook in memory; save() writes an artifact"),
            (
                "load_workbook",
                "reads the job's inputs or outputs only; never keeps macros or external links (python/prelude.py)",
            ),
            ("styles", "the view of openpyxl.styles below"),
            ("utils", "the view of openpyxl.utils below"),
            ("chart", "the view of openpyxl.chart below"),
            ("worksheet", "the view of openpyxl.worksheet below"),
            ("formatting", "the view of openpyxl.formatting below"),
            ("drawing", "the view of openpyxl.drawing below"),
            ("comments", "the view of openpyxl.comments below"),
        ],
    ),
    (
        "openpyxl.comments",
        &[("Comment", "a note on a cell of the job's workbook: text and author")],
    ),
    ("openpyxl.drawing", &[("image", "the view of openpyxl.drawing.image below")]),
    (
        "openpyxl.drawing.image",
        &[(
            "Image",
            "a picture in the job's workbook, read by Pillow through the job's reads (its own figures, its inputs)",
        )],
    ),
    (
        "openpyxl.chart",
        &[
            ("BarChart", "a chart of the job's own cells, written into its workbook"),
            ("LineChart", "a chart of the job's own cells, written into its workbook"),
            ("PieChart", "a chart of the job's own cells, written into its workbook"),
            ("ScatterChart", "a chart of the job's own cells, written into its workbook"),
            ("AreaChart", "a chart of the job's own cells, written into its workbook"),
            ("DoughnutChart", "a chart of the job's own cells, written into its workbook"),
            ("BubbleChart", "a chart of the job's own cells, written into its workbook"),
            ("RadarChart", "a chart of the job's own cells, written into its workbook"),
            ("BarChart3D", "a chart of the job's own cells, written into its workbook"),
            ("Reference", "a range of a sheet of the job's workbook"),
            ("Series", "a chart series over such a range"),
            ("label", "the view of openpyxl.chart.label below"),
            ("trendline", "the view of openpyxl.chart.trendline below"),
            ("marker", "the view of openpyxl.chart.marker below"),
            ("layout", "the view of openpyxl.chart.layout below"),
        ],
    ),
    (
        "openpyxl.chart.label",
        &[
            ("DataLabelList", "value labels of a chart series: chart settings"),
            ("DataLabel", "one value label: chart settings"),
        ],
    ),
    (
        "openpyxl.chart.trendline",
        &[("Trendline", "a fitted line of a chart series: chart settings")],
    ),
    (
        "openpyxl.chart.marker",
        &[("Marker", "point markers of a chart series: chart settings")],
    ),
    (
        "openpyxl.chart.layout",
        &[
            ("Layout", "where a chart's parts sit: chart settings"),
            ("ManualLayout", "where a chart's parts sit: chart settings"),
        ],
    ),
    (
        "openpyxl.worksheet",
        &[
            ("table", "the view of openpyxl.worksheet.table below"),
            (
                "datavalidation",
                "the view of openpyxl.worksheet.datavalidation below",
            ),
        ],
    ),
    (
        "openpyxl.worksheet.datavalidation",
        &[(
            "DataValidation",
            "a cell range's allowed values (a drop-down list, bounds): formula text in the workbook, as a CellIsRule's",
        )],
    ),
    (
        "openpyxl.worksheet.table",
        &[
            ("Table", "an Excel table over a range of the job's sheet"),
            ("TableStyleInfo", "its built-in style, by name"),
        ],
    ),
    ("openpyxl.formatting", &[("rule", "the view of openpyxl.formatting.rule below")]),
    (
        "openpyxl.formatting.rule",
        &[
            ("ColorScaleRule", "conditional formatting by value"),
            ("DataBarRule", "conditional formatting by value"),
            ("IconSetRule", "conditional formatting by value"),
            ("CellIsRule", "conditional formatting by comparison with a value"),
            (
                "FormulaRule",
                "conditional formatting by a formula over the sheet's cells (formula text in the workbook, as a CellIsRule's; no cell formula)",
            ),
        ],
    ),
    (
        "openpyxl.styles",
        &[
            ("Font", "cell style value"),
            ("Alignment", "cell style value"),
            ("PatternFill", "cell style value"),
            ("Border", "cell style value"),
            ("Side", "cell style value"),
            ("Color", "cell style value"),
            ("NamedStyle", "a style registered in the job's own workbook"),
            ("GradientFill", "cell style value"),
            ("Protection", "cell style value"),
            ("numbers", "the view of openpyxl.styles.numbers below"),
            ("fonts", "the view of openpyxl.styles.fonts below"),
            ("borders", "the view of openpyxl.styles.borders below"),
            ("fills", "the view of openpyxl.styles.fills below"),
            ("alignment", "the view of openpyxl.styles.alignment below"),
            ("colors", "the view of openpyxl.styles.colors below"),
        ],
    ),
    // Where openpyxl defines the style values above (`from openpyxl.styles.borders
    // import Border, Side`): the same classes.
    ("openpyxl.styles.fonts", &[("Font", "cell style value")]),
    (
        "openpyxl.styles.borders",
        &[("Border", "cell style value"), ("Side", "cell style value")],
    ),
    (
        "openpyxl.styles.fills",
        &[
            ("PatternFill", "cell style value"),
            ("GradientFill", "cell style value"),
        ],
    ),
    ("openpyxl.styles.alignment", &[("Alignment", "cell style value")]),
    ("openpyxl.styles.colors", &[("Color", "cell style value")]),
    (
        "openpyxl.styles.numbers",
        &[
            ("FORMAT_GENERAL", "a number format string"),
            ("FORMAT_TEXT", "a number format string"),
            ("FORMAT_NUMBER", "a number format string"),
            ("FORMAT_NUMBER_00", "a number format string"),
            ("FORMAT_NUMBER_COMMA_SEPARATED1", "a number format string"),
            ("FORMAT_NUMBER_COMMA_SEPARATED2", "a number format string"),
            ("FORMAT_PERCENTAGE", "a number format string"),
            ("FORMAT_PERCENTAGE_00", "a number format string"),
            ("FORMAT_DATE_YYYYMMDD2", "a number format string"),
            ("FORMAT_DATE_YYMMDD", "a number format string"),
            ("FORMAT_DATE_DDMMYY", "a number format string"),
            ("FORMAT_DATE_DMYSLASH", "a number format string"),
            ("FORMAT_DATE_DMYMINUS", "a number format string"),
            ("FORMAT_DATE_DMMINUS", "a number format string"),
            ("FORMAT_DATE_MYMINUS", "a number format string"),
            ("FORMAT_DATE_XLSX14", "a number format string"),
            ("FORMAT_DATE_XLSX15", "a number format string"),
            ("FORMAT_DATE_XLSX16", "a number format string"),
            ("FORMAT_DATE_XLSX17", "a number format string"),
            ("FORMAT_DATE_XLSX22", "a number format string"),
            ("FORMAT_DATE_DATETIME", "a number format string"),
            ("FORMAT_DATE_TIME1", "a number format string"),
            ("FORMAT_DATE_TIME2", "a number format string"),
            ("FORMAT_DATE_TIME3", "a number format string"),
            ("FORMAT_DATE_TIME4", "a number format string"),
            ("FORMAT_DATE_TIME5", "a number format string"),
            ("FORMAT_DATE_TIME6", "a number format string"),
            ("FORMAT_DATE_TIME7", "a number format string"),
            ("FORMAT_DATE_TIME8", "a number format string"),
            ("FORMAT_DATE_TIMEDELTA", "a number format string"),
            ("FORMAT_DATE_YYMMDDSLASH", "a number format string"),
            ("FORMAT_CURRENCY_USD_SIMPLE", "a number format string"),
            ("FORMAT_CURRENCY_USD", "a number format string"),
            ("FORMAT_CURRENCY_EUR_SIMPLE", "a number format string"),
        ],
    ),
    (
        "openpyxl.utils",
        &[
            ("get_column_letter", "pure string helper"),
            ("column_index_from_string", "pure string helper"),
            ("dataframe", "the view of openpyxl.utils.dataframe below"),
            ("cell", "the view of openpyxl.utils.cell below"),
        ],
    ),
    (
        "openpyxl.utils.cell",
        &[
            ("get_column_letter", "pure string helper"),
            ("column_index_from_string", "pure string helper"),
            ("coordinate_from_string", "pure string helper"),
            ("range_boundaries", "pure string helper"),
        ],
    ),
    (
        "openpyxl.utils.dataframe",
        &[("dataframe_to_rows", "pure iterator over a DataFrame")],
    ),
    (
        "xlsxwriter",
        &[
            (
                "Workbook",
                "a new workbook in memory; close() writes an artifact; no macros (python/prelude/spreadsheets.py)",
            ),
            ("utility", "the view of xlsxwriter.utility below"),
        ],
    ),
    (
        "sys",
        &[
            (
                "exit",
                "ends the job: status 0 or None as the end of the code, any other a failure (python/prelude/job_paths.py)",
            ),
            ("stdout", "the job's captured output"),
            ("stderr", "the job's captured errors"),
            (
                "argv",
                "the job's own: ['/mnt/data/job.py'], no arguments; refilled for each job",
            ),
            ("version", "a string"),
            ("version_info", "a tuple"),
            ("maxsize", "a number"),
            ("float_info", "a tuple of numbers"),
            ("getsizeof", "an object's size in bytes"),
        ],
    ),
    (
        "platform",
        &[
            ("system", "the system's name: 'Linux'"),
            ("machine", "the processor's kind: 'x86_64'"),
            ("python_version", "the interpreter's version, as text"),
            ("python_implementation", "'CPython'"),
        ],
    ),
    (
        "gc",
        &[(
            "collect",
            "frees the job's unreachable objects now (the worker collects after every job too)",
        )],
    ),
    (
        "tabulate",
        &[(
            "tabulate",
            "formats rows as a text table (what DataFrame.to_markdown calls)",
        )],
    ),
    (
        "dateutil",
        &[
            ("relativedelta", "the view of dateutil.relativedelta below"),
            ("parser", "the view of dateutil.parser below"),
        ],
    ),
    (
        "zoneinfo",
        &[
            (
                "ZoneInfo",
                "a time zone by IANA name (the tzdata package's files); what pandas gives as a timestamp's tz",
            ),
            ("ZoneInfoNotFoundError", "the error for an unknown zone name"),
        ],
    ),
    (
        "matplotlib.animation",
        &[
            (
                "FuncAnimation",
                "frames drawn by calling the job's function; saved through a writer",
            ),
            ("ArtistAnimation", "frames from lists of the job's artists"),
            (
                "PillowWriter",
                "writes a GIF in the process through Pillow (no program started); the \
                 other writers (ffmpeg, ImageMagick) start programs and are not members",
            ),
        ],
    ),
    (
        "dateutil.relativedelta",
        &[("relativedelta", "calendar arithmetic on dates (months, weekdays)")],
    ),
    (
        "dateutil.parser",
        &[
            ("parse", "a date from text, with the default parser"),
            ("isoparse", "a date from ISO 8601 text"),
            ("ParserError", "the error parse raises"),
        ],
    ),
    (
        "xlsxwriter.utility",
        &[
            ("xl_rowcol_to_cell", "pure string helper"),
            ("xl_col_to_name", "pure string helper"),
            ("xl_cell_to_rowcol", "pure string helper"),
            ("xl_range", "pure string helper"),
            ("xl_range_abs", "pure string helper"),
        ],
    ),
    (
        "ace_tools",
        &[(
            "display_dataframe_to_user",
            "pyward's own: the table as a CSV artifact and its head in stdout",
        )],
    ),
    (
        "os.path",
        &[
            ("join", "string helper"),
            ("basename", "string helper"),
            ("dirname", "string helper"),
            ("splitext", "string helper"),
            ("split", "string helper"),
            ("normpath", "string helper"),
            ("isabs", "string helper"),
            ("sep", "a constant"),
            (
                "exists",
                "answered against the job's inputs and the files it wrote (never a host path)",
            ),
            ("isfile", "as exists"),
            ("isdir", "as exists: the inputs' folders and the folders the job made"),
            ("getsize", "Path.stat's size: the job's inputs and the files it wrote"),
            ("getmtime", "Path.stat's time: the job's inputs and the files it wrote"),
            (
                "abspath",
                "Path.resolve's answer: /mnt/data is the working directory, nothing is looked at",
            ),
            ("realpath", "as abspath"),
            ("relpath", "computed with /mnt/data as the working directory"),
        ],
    ),
    (
        "seaborn.utils",
        &[
            ("despine", "axes helper"),
            ("move_legend", "legend helper"),
            ("adjust_legend_subtitles", "legend helper"),
            ("axlabel", "axes helper (deprecated by seaborn)"),
            ("axis_ticklabels_overlap", "axes helper"),
            ("axes_ticklabels_overlap", "axes helper"),
            ("locator_to_legend_entries", "legend helper"),
            ("get_color_cycle", "reads rcParams' colour cycle"),
            ("desaturate", "pure colour helper"),
            ("saturate", "pure colour helper"),
            ("set_hls_values", "pure colour helper"),
            ("relative_luminance", "pure colour helper"),
            ("ci", "pure statistics helper"),
            ("ci_to_errsize", "pure statistics helper"),
            ("remove_na", "pure array helper"),
            ("to_utf8", "pure string helper"),
        ],
    ),
    (
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
    ),
];

/// What each name of the `pathlib` view is.
const PATH_CLASS: &str = "pyward's one reviewed path class (python/prelude.py, _JobPath), never pathlib's own: pure methods on its text, reads and writes through the job's open, questions answered against the job's files only, the rest refused";

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
