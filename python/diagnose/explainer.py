"""Why the job failed, read from its exception and its frames: `_Explainer` picks the
message rewrite and the hint `explain` returns; `uncalled_main` finds a script whose
`main()` is never called.

One namespace with the other files of python/diagnose/, which the worker runs in the
order of src/worker/modules.rs.
"""

import ast
import re
import sys


class _Explainer:
    def __init__(self, exc, code):
        self.exc = exc
        self.code = code
        self.message = _message(exc)
        self.frames = []  # (frame, lineno), outermost first
        tb = exc.__traceback__
        while tb is not None:
            self.frames.append((tb.tb_frame, tb.tb_lineno))
            tb = tb.tb_next
        job = [(f, n) for f, n in self.frames if f.f_code.co_filename == '<job>']
        self.job_frame, self.job_line = job[-1] if job else (None, None)

    def run(self):
        message, hint = None, None
        for handler in (self._refused_xml, self._left_out_package, self._other_writer,
                        self._unexpected_keyword, self._text_in_numbers,
                        self._missing_sheet,
                        self._missing_label,
                        self._name_error, self._attribute_error, self._key_error,
                        self._missing_column):
            found = handler()
            if found is not None:
                message, hint = found
                break
        # A removed API: its replacement beats any near-miss spelling.
        hint = _migration_for(self.exc, self.message) or hint
        older = _older_versions(self.exc, self.message)
        if older is not None:
            message, hint = older[0], older[1] or hint
        return {'message': message, 'hint': hint}

    # --- the job's frames and source --------------------------------------------------

    def _lookup(self, name):
        """A name as the job's innermost frame sees it."""
        frame = self.job_frame
        if frame is None:
            raise LookupError(name)
        for scope in (frame.f_locals, frame.f_globals):
            if name in scope:
                return scope[name]
        builtins = frame.f_globals.get('__builtins__')
        if isinstance(builtins, dict) and name in builtins:
            return builtins[name]
        raise LookupError(name)

    def _evaluate(self, node):
        """The value of a name or an attribute chain (`ax`, `plt.cm`); no calls, no
        private names."""
        if isinstance(node, ast.Name):
            return self._lookup(node.id)
        if isinstance(node, ast.Attribute) and not node.attr.startswith('_'):
            return getattr(self._evaluate(node.value), node.attr)
        raise LookupError(ast.dump(node))

    def _tree(self):
        """The job's code parsed, or None."""
        try:
            return ast.parse(self.code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def _nodes_on_line(self, kind):
        """Nodes of type `kind` whose span covers the failing line of the job, innermost
        (latest starting) first."""
        if self.job_line is None:
            return []
        tree = self._tree()
        if tree is None:
            return []
        line = self.job_line
        found = [n for n in ast.walk(tree)
                 if isinstance(n, kind) and n.lineno <= line <= (n.end_lineno or n.lineno)]
        found.sort(key=lambda n: (n.lineno, n.col_offset), reverse=True)
        return found

    def _library_locals(self):
        """Local variables of every frame, innermost first."""
        for frame, _ in reversed(self.frames):
            try:
                yield from frame.f_locals.items()
            except Exception:
                continue

    # --- NameError ----------------------------------------------------------------------

    def _name_error(self):
        if not isinstance(self.exc, NameError):
            return None
        name = getattr(self.exc, 'name', None)
        if not isinstance(name, str):
            match = re.search(r"(?:name|local variable) '(\w+)' is not defined", self.message)
            name = match.group(1) if match else None
        if name is None:
            return None
        if name in _FOREIGN_NAMES:
            return None, _FOREIGN_NAMES[name]
        frame = self.job_frame
        candidates = []
        if frame is not None:
            for scope in self._scopes():
                candidates += list(scope)
            builtins = frame.f_globals.get('__builtins__')
            if isinstance(builtins, dict):
                candidates += list(builtins)
        candidates = _public(candidates)
        own = self._own_names()
        if closest(name, candidates) is None:
            if name in ('pd', 'pandas', 'scipy', 'stats', 'math', 'datetime'):
                statement = {'pd': 'import pandas as pd', 'stats': 'from scipy import stats'}
                return None, f'Import it first: {statement.get(name, "import " + name)}.'
            if not own:
                return None, None  # the message says it all
        listing = [('The names the code defined', own, len(own))] if own else None
        return None, not_found([name], candidates, 'variable', listing)

    def _scopes(self):
        """The namespaces the failing job frame reads, innermost first: its locals, those
        of the job frames around it while it is a comprehension or a lambda
        (`[v * factr for v in values]` in a function sees the function's names), then
        the job's globals."""
        job = [f for f, _ in self.frames if f.f_code.co_filename == '<job>']
        scopes = []
        for frame in reversed(job):
            scopes.append(frame.f_locals)
            if not frame.f_code.co_name.startswith('<') or frame.f_code.co_name == '<module>':
                break
        return scopes + [self.job_frame.f_globals]

    def _own_names(self):
        """The names the job's code bound (assigned, imported, defined, its function's
        parameters) that its failing frame sees, locals first: not the builtins nor the
        names every job is given."""
        tree = self._tree()
        if self.job_frame is None or tree is None:
            return []
        bound = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.alias):
                bound.add(node.asname or node.name.partition('.')[0])
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) \
                    and node.name:
                bound.add(node.name)
        own = []
        for scope in self._scopes():
            for name in list(scope):
                if type(name) is str and name in bound and not name.startswith('_') \
                        and name not in own:
                    own.append(name)
        return own

    # --- AttributeError -----------------------------------------------------------------

    def _attribute_error(self):
        if not isinstance(self.exc, AttributeError):
            return None
        name = getattr(self.exc, 'name', None)
        obj = getattr(self.exc, 'obj', None)
        if not isinstance(name, str):
            return None
        columns = _frame_columns(obj)
        if columns is not None:
            best = closest(name, columns)
            where = f"The frame's columns: {quote_list(columns)}."
            if best is not None:
                return None, f'Did you mean: {best!r}? (a column) {where}'
            attr = closest(name, _public(dir(obj)))
            return None, _join(f'Did you mean: {attr!r}?' if attr else None, where)
        try:
            names = _public(dir(obj))
        except Exception:
            return None
        return None, did_you_mean(name, names)

    # --- a name looked up in a pandas object -----------------------------------------------

    def _missing_label(self):
        """A column (or row label) the job asked a pandas object for and that is not
        there, whichever internal raised it: a KeyError from an Index, a GroupBy, the plot
        accessor or `set_index`, a ValueError naming the labels, `query`'s
        UndefinedVariableError. Answered from the object the job's own call was on."""
        exc = self.exc
        if not isinstance(exc, (KeyError, ValueError, NameError)):
            return None
        pandas = _pandas()
        if pandas is None:
            return None
        if isinstance(exc, NameError) and (type(exc) is not pandas.errors.UndefinedVariableError
                                           or self.message.startswith('local variable')):
            return None  # a Python name, or query's @name: the job's variables answer
        if isinstance(exc, ValueError) and not _LOOKUP_MESSAGE.search(self.message):
            return None
        groups = self._groups_searched(pandas)
        if groups is not None:
            asked = _asked_names(exc, exc.args[0] if exc.args else None, self.message, groups)
            return None, not_found(asked, groups, 'group', 'The groups') if asked else None
        searched = self._searched(pandas)
        if searched is None:
            return None
        frames, rows = searched
        labels, listing, noun = _labels_of(frames, rows)
        if not labels:
            return None
        key = exc.args[0] if isinstance(exc, KeyError) and exc.args else None
        if noun == 'column' and type(key) is int and all(type(c) is str for c in labels):
            return None, (f'{key!r} is not a column (they are {quote_list(labels)}); '
                          f'rows by position are df.iloc[{key!r}], by label df.loc[...].')
        asked = _asked_names(exc, key, self.message, labels)
        if not asked:
            return None
        return None, _join(self._renamed(asked), not_found(asked, labels, noun, listing),
                           _header_row_hint(frames, asked, pandas))

    # --- a package a library asked for that the sandbox leaves out ---------------------

    def _left_out_package(self):
        """pandas' optional packages the sandbox does not install (it raises its own
        ImportError, or an AttributeError for `.style`): what to use instead."""
        if not isinstance(self.exc, (ImportError, AttributeError)):
            return None
        for pattern, advice in _LEFT_OUT_PACKAGES:
            if pattern.search(self.message):
                return None, advice
        return None

    def _other_writer(self):
        """openpyxl's API asked of an XlsxWriter workbook or sheet, or the other way
        round: pandas writes with XlsxWriter when no engine is named."""
        if not isinstance(self.exc, AttributeError):
            return None
        name = getattr(self.exc, 'name', None)
        kind = type(getattr(self.exc, 'obj', None))
        library = str(kind.__module__).partition('.')[0]
        if library == 'xlsxwriter' and name in _OPENPYXL_API.get(kind.__name__, ()):
            return None, (f"{name} is openpyxl's; this {kind.__name__} is XlsxWriter's, "
                          "pandas' writer when no engine is named: pass engine='openpyxl' "
                          "to pd.ExcelWriter for openpyxl's API, or use XlsxWriter's "
                          "(worksheet.set_column(0, 0, 20), workbook.add_format({'bold': True})).")
        if library == 'openpyxl' and name in _XLSXWRITER_API.get(kind.__name__, ()):
            return None, (f"{name} is XlsxWriter's; this {kind.__name__} is openpyxl's "
                          "(engine='openpyxl'): pass engine='xlsxwriter' for XlsxWriter's "
                          "API, or use openpyxl's (ws.column_dimensions['A'].width = 20, "
                          "cell.font = Font(bold=True)).")
        return None

    # --- a sheet of a workbook -----------------------------------------------------------

    def _refused_xml(self):
        """A workbook (or other XML) whose parts declare entities, refused by defusedxml
        under openpyxl, however the reader wrapped the refusal."""
        exc, seen = self.exc, 0
        while exc is not None and seen < 8:
            if type(exc).__module__ == 'defusedxml.common':
                return (f'the file\'s XML declares entities or a DTD ({type(exc).__name__}): '
                        'it is refused, not read (entity expansion, external entities '
                        'and DTDs are refused in every workbook)',
                        'ask for the file saved again from the spreadsheet program, or as CSV')
            exc, seen = exc.__cause__ or exc.__context__, seen + 1
        return None

    def _missing_sheet(self):
        """`pd.read_excel(..., sheet_name='x')` for a sheet the workbook does not have:
        the sheets it has, from pandas' reader of that workbook (exact strings only)."""
        exc = self.exc
        if type(exc) is not ValueError:
            return None
        match = _SHEET_MESSAGE.match(self.message)
        if match is None:
            return None
        for frame, _ in reversed(self.frames):
            owner = frame.f_locals.get('self')
            if type(owner).__module__ not in _EXCEL_READER_MODULES:
                continue
            try:
                sheets = [n for n in owner.sheet_names if type(n) is str]
            except Exception:
                return None
            asked = match.group(1)
            return None, not_found([asked], sheets, 'sheet', "The workbook's sheets")
        return None

    def _groups_searched(self, pandas):
        """The group keys, when `GroupBy.get_group` raised: a group, not a column."""
        from pandas.core.groupby import DataFrameGroupBy, SeriesGroupBy
        frame = self.frames[-1][0] if self.frames else None
        if frame is None or frame.f_code.co_name != 'get_group':
            return None
        owner = frame.f_locals.get('self')
        if type(owner) not in (DataFrameGroupBy, SeriesGroupBy):
            return None
        return [k for k in list(owner.groups)[:_MAX_LABELS]
                if type(k) in (str, int, float, bool, pandas.Timestamp)]

    def _searched(self, pandas):
        """([(role, DataFrame or Series)], rows) the failing lookup searched: the objects
        of the outermost library call the job made (its `self`, else its DataFrame
        arguments: both sides of a merge), each reached through exact pandas types only
        (a GroupBy's or `.loc`'s frame, the plot accessor's); `rows` when the innermost
        Index searched is that frame's index rather than its columns. None when the job's
        own frame raised."""
        calls = []
        for frame, _ in reversed(self.frames):
            if frame is self.job_frame:
                break
            calls.append(frame)
        calls.reverse()  # outermost first: the call as the job wrote it
        found = []
        for frame in calls:
            found = _owners(frame, pandas)
            if found:
                break
        if not found:
            return None
        first = found[0][1]
        rows = False
        for frame in reversed(calls):  # the innermost Index method: what get_loc searched
            try:
                owner = frame.f_locals.get('self')
            except Exception:
                continue
            if owner is None:
                continue
            if type(first) is pandas.DataFrame and owner is first.index \
                    and type(owner) is not pandas.RangeIndex:
                rows = True
            if owner is first.index or (type(first) is pandas.DataFrame
                                        and owner is first.columns):
                break
        return found, rows

    def _renamed(self, asked):
        """'x' was renamed: the job's `rename(columns={'x': 'y'})` took a name it asks for
        again."""
        tree = self._tree()
        if tree is None:
            return None
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == 'rename'):
                continue
            mappings = [k.value for k in node.keywords if k.arg == 'columns']
            if node.args and any(k.arg == 'axis' for k in node.keywords):
                mappings.append(node.args[0])
            for mapping in mappings:
                if not isinstance(mapping, ast.Dict):
                    continue
                for old, new in zip(mapping.keys, mapping.values):
                    if isinstance(old, ast.Constant) and old.value in asked \
                            and isinstance(new, ast.Constant) and type(new.value) is str:
                        return (f'{_shown(old.value)} was renamed to {new.value!r} at line '
                                f'{node.lineno}: use the new name.')
        return None

    # --- KeyError on a dict -----------------------------------------------------------------

    def _key_error(self):
        if not isinstance(self.exc, KeyError) or not self.exc.args:
            return None
        key = self.exc.args[0]
        mapping = self._mapping_on_line(key)
        if mapping is not None:
            keys = [k for k in mapping if type(k) in (str, int, float, bool)
                    and not (type(k) is str and k.startswith('__'))]
            return None, not_found([key], keys, 'key', 'Its keys')
        return None

    def _mapping_on_line(self, key):
        """The dict subscripted on the failing line that lacks `key` (a plain dict or a
        `loadmat` result), when the job's own frame raised. Exact dicts and keys only:
        `in` runs the key's own `__hash__` and `__eq__`."""
        if not self.frames or self.frames[-1][0] is not self.job_frame:
            return None
        if type(key) not in (str, int, float, bool, tuple) \
                or (type(key) is tuple and not all(type(k) in (str, int) for k in key)):
            return None
        for node in self._nodes_on_line(ast.Subscript):
            try:
                value = self._evaluate(node.value)
            except Exception:
                continue
            if type(value) is dict and key not in value:
                return value
        return None

    # --- missing columns of a file (parse_dates, usecols) ------------------------------------

    def _missing_column(self):
        if not isinstance(self.exc, ValueError):
            return None
        if not re.match(r"^(Missing column provided to '\w+'|Usecols do not match columns)",
                        self.message):
            return None
        for name, value in self._library_locals():
            if name in ('columns', 'orig_names', 'names') and type(value) in (list, tuple) \
                    and value and all(type(v) is str for v in value):
                asked = _asked_names(self.exc, None, self.message, value)
                if asked:
                    return None, not_found(asked, list(value), 'column', "The file's columns")
        return None

    # --- an unexpected keyword argument ---------------------------------------------------

    def _unexpected_keyword(self):
        match = (re.match(r"^(?:(\w+)\.set|([\w.]+))\(\) got an unexpected keyword argument "
                          r"'(\w+)'$", self.message)
                 or re.match(r"^'(\w+)' object has no property '(\w+)'$", self.message))
        if not match or not isinstance(self.exc, (TypeError, AttributeError)):
            return None
        keyword = match.groups()[-1]
        call = next((c for c in self._nodes_on_line(ast.Call)
                     if any(k.arg == keyword for k in c.keywords)), None)
        callee_text = ast.unparse(call.func) if call is not None else None
        candidates = []
        callee = None
        if call is not None:
            try:
                callee = self._evaluate(call.func)
            except Exception:
                callee = None
        if callee is not None:
            candidates += _parameters(callee)
        artist = self._artist_in_frames()
        if artist is not None:
            candidates += _artist_properties(artist)
        suffix = (callee_text or '').rsplit('.', 1)[-1]
        best = _KEYWORD_SYNONYMS.get((suffix, keyword)) or closest(keyword, candidates)
        message = None
        if callee_text is not None:
            message = f'{callee_text}() got an unexpected keyword argument {keyword!r}'
        hint = f'Did you mean: {best!r}?' if best else None
        if best is None and candidates:
            hint = f'Valid keywords include: {quote_list(sorted(set(candidates)))}.'
        return message, hint

    def _artist_in_frames(self):
        for frame, _ in reversed(self.frames):
            try:
                owner = frame.f_locals.get('self')
            except Exception:
                continue
            if owner is not None and hasattr(type(owner), 'set') and hasattr(owner, 'properties'):
                return owner
        return None

    # --- text where numbers were expected ---------------------------------------------------

    _TEXT_IN_NUMBERS = re.compile(
        r"Cannot perform reduction '\w+' with string dtype"
        r"|dtype '(str|object|string)' does not support operation"
        r"|can't multiply sequence by non-int"
        r"|unsupported operand type\(s\) for .*'str'"
        r"|can only concatenate str"
        r"|could not convert string to float"
        r"|Could not convert .* to numeric"
        r"|agg function failed")

    def _text_in_numbers(self):
        if not isinstance(self.exc, (TypeError, ValueError)) \
                or not self._TEXT_IN_NUMBERS.search(self.message):
            return None
        pandas = _pandas()
        if pandas is None:
            return None
        series, frame = None, None
        for _, value in self._library_locals():
            value = getattr(value, 'obj', value) if _is_groupby(value, pandas) else value
            if isinstance(value, pandas.Series) and not _is_numeric(value, pandas):
                series = value
                break
            if frame is None and isinstance(value, pandas.DataFrame):
                frame = value
        if series is not None:
            return None, _text_column_hint(series, pandas)
        if frame is not None:
            text = [c for c in frame.columns if not _is_numeric(frame[c], pandas)]
            if text:
                return None, (f'Columns {quote_list(text)} hold text, so they have no mean '
                              f'or sum: pass numeric_only=True (e.g. .mean(numeric_only=True)) '
                              f'or select the numeric columns first.')
        return None


# What model code asks of each writer's workbook and sheet that the other's lacks.
_OPENPYXL_API = {
    'Workbook': frozenset({'active', 'create_sheet', 'sheetnames', 'worksheets', 'save',
                           'remove', 'copy_worksheet', 'named_styles', 'add_named_style'}),
    'Worksheet': frozenset({'column_dimensions', 'row_dimensions', 'cell', 'iter_rows',
                            'iter_cols', 'max_row', 'max_column', 'append', 'merge_cells',
                            'auto_filter', 'conditional_formatting', 'add_image', 'add_chart',
                            'title', 'dimensions', 'sheet_view', 'columns', 'rows',
                            'insert_rows', 'delete_rows', 'insert_cols', 'delete_cols'}),
}
_XLSXWRITER_API = {
    'Workbook': frozenset({'add_format', 'add_worksheet', 'add_chart', 'define_name',
                           'set_properties', 'get_worksheet_by_name'}),
    'Worksheet': frozenset({'set_column', 'set_row', 'write', 'write_row', 'write_column',
                            'write_number', 'write_string', 'write_formula', 'write_datetime',
                            'write_url', 'conditional_format', 'insert_chart', 'insert_image',
                            'merge_range', 'autofit', 'add_table', 'autofilter',
                            'data_validation', 'hide_gridlines', 'set_landscape',
                            'set_zoom', 'set_column_pixels'}),
}


# (message pattern, advice): the packages pandas reaches for by itself that the sandbox
# leaves out, and what the job can use instead.
_LEFT_OUT_PACKAGES = [(re.compile(p), a) for p, a in (
    (r"jinja2",
     "pandas' Styler (df.style) needs jinja2, a template engine this sandbox leaves out: "
     "write the frame with df.to_excel and format cells with openpyxl (cell.number_format, "
     "Font, PatternFill, ColorScaleRule) or with XlsxWriter formats "
     "(engine='xlsxwriter', writer.book.add_format)."),
    (r"pyarrow|fastparquet",
     "Parquet and Feather need pyarrow, which this sandbox leaves out: write the table "
     "with df.to_csv('name.csv') or df.to_excel('name.xlsx')."),
    (r"\bxlrd\b",
     "Legacy .xls workbooks need xlrd, which this sandbox leaves out: ask for the file "
     "as .xlsx (read with pd.read_excel) or CSV."),
    (r"\b(lxml|html5lib|bs4|beautifulsoup4)\b",
     "HTML and XML parsing packages are left out of this sandbox: ask for the data as "
     "CSV or .xlsx."),
    (r"\b(tables|pytables|sqlalchemy|odf|pyxlsb)\b",
     "That file format's package is left out of this sandbox: read and write CSV or "
     ".xlsx instead."),
)]


def uncalled_main(code, namespace):
    """True when the job's code defines a function `main` at its top level and never
    calls it (a script written for `python script.py` without its last line): read
    from the code, not from the job's objects."""
    if type(namespace.get('main')) is not type(uncalled_main):
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if not any(isinstance(n, ast.FunctionDef) and n.name == 'main' for n in tree.body):
        return False
    return not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id == 'main' for n in ast.walk(tree))
