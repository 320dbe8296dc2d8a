"""What a model needs to fix a failed job in one step, read from the live exception.

`explain(exc, code)` runs in the worker right after the job raised, while the job's
frames and objects still exist. It never raises and returns a dict:

* ``message``: the exception's message, rewritten where the raw one misleads (an artist's
  ``Line2D.set()`` becomes the function the user called, ``plt.plot()``), else None;
* ``hint``: one or two sentences that say what exists and what to write instead (the
  closest name, the frame's columns, the keys of a dict, the replacement of a removed
  API, the text values in a numeric column), else None.

CPython 3.11 computes "Did you mean" only in its C-level exception printer, so ``str(exc)``
never has it: this module computes it from the exception's ``name``/``obj`` and the
job's frames. Only names, attribute chains without calls and plain lookups are
evaluated; anything the job's objects raise while being looked at is ignored.
"""

import ast
import difflib
import json
import re
import sys

_MIGRATIONS = []  # (type name, compiled pattern, advice), from python/migrations.json

_MAX_LISTED = 30   # names listed in a hint before "... (N in all)"
_MAX_VALUES = 3    # offending values quoted

# Names models use for libraries that are not there, and what to write instead.
_FOREIGN_NAMES = {
    'sns': 'seaborn is not available here: draw with plt (matplotlib) and pd (pandas), '
           'e.g. plt.hist(...), df.plot(...), or plt.style.use(\'seaborn-v0_8\') for its look.',
    'seaborn': 'seaborn is not available here: draw with plt (matplotlib) and pd (pandas).',
    'px': 'plotly is not available here: draw with plt (matplotlib).',
    'go': 'plotly is not available here: draw with plt (matplotlib).',
    'tf': 'tensorflow is not available here.',
    'torch': 'torch is not available here: use numpy.',
    'cv2': 'OpenCV is not available here: use numpy and scipy.ndimage.',
}

# Keywords whose right spelling no string distance finds: (callee suffix, keyword) ->
# keyword to use.
_KEYWORD_SYNONYMS = {
    ('scatter', 'size'): 's',
    ('scatter', 'sizes'): 's',
    ('scatter', 'colors'): 'c',
    ('scatter', 'markersize'): 's',
    ('legend', 'location'): 'loc',
    ('legend', 'position'): 'loc',
    ('subplots', 'size'): 'figsize',
    ('figure', 'size'): 'figsize',
    ('savefig', 'resolution'): 'dpi',
}


def load_migrations(text):
    """Installs the table of removed APIs (`python/migrations.json`, passed in by the
    worker at warm-up)."""
    global _MIGRATIONS
    table = json.loads(text)
    _MIGRATIONS = [(m['error'], re.compile(m['pattern']), m['advice'])
                   for m in table['migrations']]


def migration(type_name, message):
    """The advice of the first migration whose error type and pattern match."""
    for error, pattern, advice in _MIGRATIONS:
        if error == type_name:
            found = pattern.search(message)
            if found:
                return advice.format(*found.groups())
    return None


def explain(exc, code):
    """The message rewrite and hint for `exc` raised by the job's `code` (see module doc)."""
    try:
        return _Explainer(exc, code).run()
    except BaseException:  # an explanation must never cost the job's own error
        return {'message': None, 'hint': None}


def quote_list(names, total=None):
    """'a', 'b', 'c' (and how many there are when cut)."""
    names = list(names)
    total = len(names) if total is None else total
    shown = ', '.join(repr(n) for n in names[:_MAX_LISTED])
    if total > _MAX_LISTED:
        shown += f', ... ({total} in all)'
    return shown


def closest(word, candidates):
    """The candidate a model most likely meant: same spelling but case first, then the
    nearest by string similarity; None when nothing is close."""
    if not isinstance(word, str):
        return None
    strings = [c for c in candidates if isinstance(c, str) and c != word]
    lowered = word.lower()
    for c in strings:
        if c.lower() == lowered:
            return c
    squashed = lowered.replace('_', '')
    for c in strings:
        if c.lower().replace('_', '') == squashed:
            return c
    by_lower = {}
    for c in strings:
        by_lower.setdefault(c.lower(), c)
    found = difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=0.7)
    if found:
        return by_lower[found[0]]
    # One name that starts the other: 'sig' for 'signal', 'num_points' for 'num'.
    if len(lowered) >= 3:
        prefixed = {c for low, c in by_lower.items()
                    if len(low) >= 3 and (low.startswith(lowered) or lowered.startswith(low))}
        if len(prefixed) == 1:
            return prefixed.pop()
    return None


def did_you_mean(word, candidates):
    best = closest(word, candidates)
    return f'Did you mean: {best!r}?' if best is not None else None


def _public(names):
    return [n for n in names if isinstance(n, str) and not n.startswith('_')]


def _join(*parts):
    text = ' '.join(p for p in parts if p)
    return text or None


class _Explainer:
    def __init__(self, exc, code):
        self.exc = exc
        self.code = code
        self.message = str(exc)
        self.frames = []  # (frame, lineno), outermost first
        tb = exc.__traceback__
        while tb is not None:
            self.frames.append((tb.tb_frame, tb.tb_lineno))
            tb = tb.tb_next
        job = [(f, n) for f, n in self.frames if f.f_code.co_filename == '<job>']
        self.job_frame, self.job_line = job[-1] if job else (None, None)

    def run(self):
        message, hint = None, None
        for handler in (self._unexpected_keyword, self._text_in_numbers, self._name_error,
                        self._attribute_error, self._key_error, self._missing_column):
            found = handler()
            if found is not None:
                message, hint = found
                break
        # A removed API: its replacement beats any near-miss spelling.
        hint = _migration_for(self.exc, self.message) or hint
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

    def _nodes_on_line(self, kind):
        """Nodes of type `kind` whose span covers the failing line of the job, innermost
        (latest starting) first."""
        if self.job_line is None:
            return []
        try:
            tree = ast.parse(self.code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
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
            match = re.search(r"name '(\w+)' is not defined", self.message)
            name = match.group(1) if match else None
        if name is None:
            return None
        if name in _FOREIGN_NAMES:
            return None, _FOREIGN_NAMES[name]
        frame = self.job_frame
        candidates = []
        if frame is not None:
            candidates += list(frame.f_locals) + list(frame.f_globals)
            builtins = frame.f_globals.get('__builtins__')
            if isinstance(builtins, dict):
                candidates += list(builtins)
        hint = did_you_mean(name, _public(candidates))
        if hint is None and name in ('pd', 'pandas', 'scipy', 'stats', 'math', 'datetime'):
            statement = {'pd': 'import pandas as pd', 'stats': 'from scipy import stats'}
            hint = f'Import it first: {statement.get(name, "import " + name)}.'
        return None, hint

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

    # --- KeyError -----------------------------------------------------------------------

    def _key_error(self):
        if not isinstance(self.exc, KeyError) or not self.exc.args:
            return None
        key = self.exc.args[0]
        missing = [key]
        if isinstance(key, str):
            listed = re.match(r"^\[(.*)\] not in index$", key) or re.match(
                r"^None of \[Index\(\[(.*)\],.*\)\] are in the \[columns\]$", key)
            if listed:
                try:
                    missing = list(ast.literal_eval(f'[{listed.group(1)}]'))
                except (ValueError, SyntaxError):
                    pass
        found = self._labels_in_frames()
        if found is not None:
            labels, what = found
            if what == 'columns' and not isinstance(key, str) \
                    and all(isinstance(c, str) for c in labels):
                return None, (f'{key!r} is not a column (they are {quote_list(labels)}); '
                              f'rows by position are df.iloc[{key!r}], by label df.loc[...].')
            listing = "The frame's columns" if what == 'columns' else "The index's labels"
            return None, _missing_labels(missing, labels, listing)
        mapping = self._mapping_on_line(key)
        if mapping is not None:
            keys = [k for k in mapping if not (isinstance(k, str) and k.startswith('__'))]
            return None, _missing_labels(missing, keys, 'Its keys', noun='key')
        return None

    def _labels_in_frames(self):
        """(labels, 'columns' or 'index') the failing pandas lookup searched: the
        innermost Index of strings in the library's frames, named by the DataFrame it
        belongs to, else that DataFrame's columns."""
        index, frame = None, None
        for f, _ in reversed(self.frames):
            if f.f_code.co_filename == '<job>':
                break
            try:
                values = list(f.f_locals.values())
            except Exception:
                continue
            for value in values:
                if type(value).__name__ in ('_LocIndexer', '_iLocIndexer', '_AtIndexer'):
                    value = getattr(value, 'obj', value)  # df.loc[...]: its frame
                if frame is None and _frame_columns(value) is not None:
                    frame = value
                if index is None and _is_index(value) and len(value) \
                        and all(isinstance(v, str) for v in value):
                    index = value
        if index is not None:
            is_rows = frame is not None and index is frame.index
            return list(index), 'index' if is_rows else 'columns'
        if frame is not None:
            return list(frame.columns), 'columns'
        return None

    def _mapping_on_line(self, key):
        """The dict subscripted on the failing line that lacks `key` (a plain dict or a
        `loadmat` result), when the job's own frame raised."""
        if not self.frames or self.frames[-1][0] is not self.job_frame:
            return None
        for node in self._nodes_on_line(ast.Subscript):
            try:
                value = self._evaluate(node.value)
            except Exception:
                continue
            if isinstance(value, dict):
                try:
                    if key not in value:
                        return value
                except TypeError:
                    continue
        return None

    # --- missing columns named in a ValueError (parse_dates, usecols) ----------------------

    def _missing_column(self):
        if not isinstance(self.exc, ValueError):
            return None
        match = (re.match(r"^Missing column provided to '(\w+)': (.*)$", self.message)
                 or re.match(r"^Usecols do not match columns, columns expected but not "
                             r"found: (\[.*\])$", self.message))
        if not match:
            return None
        try:
            named = ast.literal_eval(match.group(match.lastindex))
        except (ValueError, SyntaxError):
            return None
        missing = named if isinstance(named, list) else [named]
        for name, value in self._library_locals():
            if name in ('columns', 'orig_names') and isinstance(value, (list, tuple)) \
                    and value and all(isinstance(v, str) for v in value):
                return None, _missing_labels(missing, list(value), "The file's columns")
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


def _migration_for(exc, message):
    for cls in type(exc).__mro__:
        advice = migration(cls.__name__, message)
        if advice is not None:
            return advice
    return None


def _pandas():
    """pandas if something already imported it: no DataFrame exists otherwise, and a
    diagnosis must not pay for the import."""
    return sys.modules.get('pandas')


def _is_index(value):
    pandas = _pandas()
    return pandas is not None and isinstance(value, pandas.Index)


def _frame_columns(value):
    """The column names of a DataFrame (as a list), else None."""
    pandas = _pandas()
    if pandas is not None and isinstance(value, pandas.DataFrame):
        return list(value.columns)
    return None


def _is_groupby(value, pandas):
    return isinstance(value, pandas.core.groupby.GroupBy)


def _is_numeric(series, pandas):
    return pandas.api.types.is_numeric_dtype(series.dtype) \
        or pandas.api.types.is_datetime64_any_dtype(series.dtype) \
        or pandas.api.types.is_bool_dtype(series.dtype)


def _text_column_hint(series, pandas):
    name = series.name
    numbers = pandas.to_numeric(series, errors='coerce')
    bad = series[numbers.isna() & series.notna()].astype(str).unique()[:_MAX_VALUES]
    what = f'Column {name!r}' if name is not None else 'The data'
    shown = ', '.join(repr(v) for v in bad)
    target = f"df[{name!r}]" if name is not None else 'the column'
    if any(re.fullmatch(r'-?\d{1,3}(,\d{3})+(\.\d+)?', v) for v in bad):
        fix = (f"read the file with pd.read_csv(..., thousands=',') or convert it: "
               f"pd.to_numeric({target}.str.replace(',', ''), errors='coerce')")
    else:
        fix = f"convert it first: pd.to_numeric({target}, errors='coerce') (text becomes NaN)"
    return f'{what} holds text, not numbers (e.g. {shown}): {fix}.'


def _missing_labels(missing, available, listing, noun='column'):
    """Which of `missing` is closest to what exists, and what exists."""
    parts = []
    for label in missing[:3]:
        best = closest(label, available)
        if best is not None:
            parts.append(f'Did you mean: {best!r}?' if len(missing) == 1
                         else f'{label!r}: did you mean {best!r}?')
    if not parts:
        parts.append(f'No {noun} {quote_list(missing)}.')
    parts.append(f'{listing}: {quote_list(available)}.')
    return ' '.join(parts)


def _parameters(func):
    """Keyword parameter names of a callable, [] when it has no signature."""
    import inspect
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [p.name for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _artist_properties(artist):
    """What `artist.set(...)` accepts: its setters and their aliases (lw, c, ...)."""
    names = [n[4:] for n in dir(type(artist)) if n.startswith('set_')]
    aliases = getattr(type(artist), '_alias_map', None) or {}
    for alias_list in aliases.values():
        names += list(alias_list)
    return names
