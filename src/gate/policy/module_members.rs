//! The modules a job sees only as views of reviewed members: each member with what it
//! is, and the stand-ins some views hand out (see `modules` for the allowlist they
//! belong to).

/// What each name of the `pathlib` view is.
const PATH_CLASS: &str = "pyward's one reviewed path class (python/prelude.py, _JobPath), never pathlib's own: pure methods on its text, reads and writes through the job's open, questions answered against the job's files only, the rest refused";

/// What each member of the job's `logging` view is: pyward's stand-in
/// (python/prelude/job_logging.py), never the real module's, whose loggers are the
/// process's and the libraries'.
const LOGGING_STAND_IN: &str = "pyward's per-job stand-in: records go to the job's stderr, or to a log file written as an artifact";

/// The job's `argparse.ArgumentParser` (python/prelude/job_arguments.py).
const ARGPARSE_STAND_IN: &str = "argparse's parser reading the job's command line (its script's name, no arguments: every option at its default); no argument files";

/// What each member of the job's `traceback` view is.
const TRACEBACK_STAND_IN: &str =
    "pyward's stand-in: the exception with the job's own frames, as its error report shows them";

/// What each member of the job's `IPython.display` view is: pyward's stand-in
/// (python/prelude/job_paths.py); IPython itself is not installed.
const IPYTHON_STAND_IN: &str = "pyward's stand-in: what a notebook would show, printed to the job's stdout (Markdown and HTML as their text, an image as its name)";

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
        "shutil",
        &[
            (
                "copy",
                "a copy through the job's open: an input or the job's own file in, an artifact out (into a folder under the source's name)",
            ),
            ("copy2", "as copy"),
            ("copyfile", "as copy, to a file name"),
            (
                "copyfileobj",
                "copies between two file objects the job opened",
            ),
            (
                "rmtree",
                "forgets a folder the job made and wrote nothing into; deletes no file",
            ),
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
            ("workbook", "the view of openpyxl.workbook below"),
            ("cell", "the view of openpyxl.cell below"),
        ],
    ),
    // Where openpyxl defines its workbook and cell classes, as scripts import them
    // (`from openpyxl.cell.cell import MergedCell` to skip merged cells when sizing
    // columns): values and classes of the job's own workbook, nothing that opens a file.
    (
        "openpyxl.workbook",
        &[
            ("Workbook", "the same class as openpyxl.Workbook"),
            ("defined_name", "the view of openpyxl.workbook.defined_name below"),
            ("protection", "the view of openpyxl.workbook.protection below"),
        ],
    ),
    (
        "openpyxl.workbook.defined_name",
        &[(
            "DefinedName",
            "a named range of the job's workbook: formula text, which the table checks judge (no_formulas)",
        )],
    ),
    (
        "openpyxl.workbook.protection",
        &[("WorkbookProtection", "workbook structure lock settings: values")],
    ),
    (
        "openpyxl.cell",
        &[
            ("Cell", "the class of a sheet's cells (isinstance checks)"),
            ("cell", "the view of openpyxl.cell.cell below"),
            ("rich_text", "the view of openpyxl.cell.rich_text below"),
            ("text", "the view of openpyxl.cell.text below"),
        ],
    ),
    (
        "openpyxl.cell.cell",
        &[
            ("Cell", "the class of a sheet's cells (isinstance checks)"),
            ("MergedCell", "the class of the covered cells of a merged range (isinstance checks)"),
        ],
    ),
    (
        "openpyxl.cell.rich_text",
        &[
            ("CellRichText", "a cell's text in runs of several fonts: values"),
            ("TextBlock", "one run of such text: values"),
        ],
    ),
    ("openpyxl.cell.text", &[("InlineFont", "the font of one run of rich text: values")]),
    (
        "openpyxl.comments",
        &[("Comment", "a note on a cell of the job's workbook: text and author")],
    ),
    (
        "openpyxl.drawing",
        &[
            ("image", "the view of openpyxl.drawing.image below"),
            ("text", "the view of openpyxl.drawing.text below"),
        ],
    ),
    (
        "openpyxl.drawing.text",
        &[
            ("Paragraph", "text settings of a chart's title or axis: values"),
            ("ParagraphProperties", "text settings of a chart's title or axis: values"),
            ("CharacterProperties", "text settings of a chart's title or axis: values"),
            ("RichTextProperties", "text settings of a chart's title or axis: values"),
            ("Font", "text settings of a chart's title or axis: values"),
        ],
    ),
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
            ("axis", "the view of openpyxl.chart.axis below"),
            ("series", "the view of openpyxl.chart.series below"),
            ("text", "the view of openpyxl.chart.text below"),
        ],
    ),
    (
        "openpyxl.chart.axis",
        &[
            ("DateAxis", "a chart axis: chart settings"),
            ("NumericAxis", "a chart axis: chart settings"),
            ("TextAxis", "a chart axis: chart settings"),
        ],
    ),
    (
        "openpyxl.chart.series",
        &[
            ("Series", "a chart series, the class openpyxl.chart.Series makes"),
            ("SeriesLabel", "a chart series' name: chart settings"),
        ],
    ),
    (
        "openpyxl.chart.text",
        &[
            ("RichText", "text settings of a chart's title or axis: values"),
            ("Text", "text settings of a chart's title or axis: values"),
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
            ("worksheet", "the view of openpyxl.worksheet.worksheet below"),
            ("page", "the view of openpyxl.worksheet.page below"),
            ("properties", "the view of openpyxl.worksheet.properties below"),
            ("cell_range", "the view of openpyxl.worksheet.cell_range below"),
            ("dimensions", "the view of openpyxl.worksheet.dimensions below"),
        ],
    ),
    (
        "openpyxl.worksheet.worksheet",
        &[("Worksheet", "the class of a workbook's sheets (type hints, isinstance checks)")],
    ),
    (
        "openpyxl.worksheet.page",
        &[
            ("PageMargins", "print settings of a sheet: values"),
            ("PrintPageSetup", "print settings of a sheet: values"),
            ("PrintOptions", "print settings of a sheet: values"),
        ],
    ),
    (
        "openpyxl.worksheet.properties",
        &[
            ("PageSetupProperties", "sheet settings (fit to page, outline): values"),
            ("WorksheetProperties", "sheet settings (tab colour, outline): values"),
            ("Outline", "sheet settings (outline): values"),
        ],
    ),
    (
        "openpyxl.worksheet.cell_range",
        &[
            ("CellRange", "a range of cells by its bounds: pure arithmetic on names"),
            ("MultiCellRange", "ranges of cells by their bounds: pure arithmetic on names"),
        ],
    ),
    (
        "openpyxl.worksheet.dimensions",
        &[
            ("ColumnDimension", "a column's width and style: values"),
            ("RowDimension", "a row's height and style: values"),
            ("DimensionHolder", "a sheet's column settings: values"),
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
                "Rule",
                "a conditional-format rule of any type (formula text in the workbook, as a FormulaRule's)",
            ),
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
            ("differential", "the view of openpyxl.styles.differential below"),
            ("protection", "the view of openpyxl.styles.protection below"),
        ],
    ),
    (
        "openpyxl.styles.differential",
        &[("DifferentialStyle", "the style a conditional-format rule applies: values")],
    ),
    ("openpyxl.styles.protection", &[("Protection", "cell style value")]),
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
            ("workbook", "the view of xlsxwriter.workbook below"),
            ("exceptions", "the view of xlsxwriter.exceptions below"),
        ],
    ),
    (
        "xlsxwriter.workbook",
        &[("Workbook", "the same class as xlsxwriter.Workbook")],
    ),
    (
        "xlsxwriter.exceptions",
        &[
            ("XlsxWriterException", "an exception class (to catch)"),
            ("XlsxFileError", "an exception class (to catch)"),
            ("FileCreateError", "an exception class (to catch)"),
            ("DuplicateWorksheetName", "an exception class (to catch)"),
            ("InvalidWorksheetName", "an exception class (to catch)"),
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
        "locale",
        &[
            ("setlocale", "sets or reads the C locale (process state the guard restores after the job)"),
            ("getlocale", "the current locale"),
            ("localeconv", "the current locale's number and money conventions"),
            ("format_string", "numbers with the locale's separators"),
            ("currency", "money in the locale's format"),
            ("str", "a float as the locale writes it"),
            ("atof", "a number from text in the locale's format"),
            ("atoi", "an integer from text in the locale's format"),
            ("delocalize", "a number's text back in the C format"),
            ("getpreferredencoding", "the encoding text files use"),
            ("getencoding", "the locale's encoding"),
            ("normalize", "a locale name in its usual form"),
            ("Error", "what setlocale raises for a locale it cannot set"),
            ("LC_ALL", "every category"),
            ("LC_CTYPE", "the category of characters"),
            ("LC_COLLATE", "the category of sorting"),
            ("LC_TIME", "the category of dates"),
            ("LC_MONETARY", "the category of money"),
            ("LC_NUMERIC", "the category of numbers"),
            ("LC_MESSAGES", "the category of messages"),
            ("CHAR_MAX", "localeconv's value for 'not set'"),
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
        "IPython",
        &[("display", "the view of IPython.display below")],
    ),
    (
        "IPython.display",
        &[
            ("display", IPYTHON_STAND_IN),
            ("Markdown", IPYTHON_STAND_IN),
            ("HTML", IPYTHON_STAND_IN),
            ("Image", IPYTHON_STAND_IN),
            ("clear_output", IPYTHON_STAND_IN),
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
