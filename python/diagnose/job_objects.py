"""The job's objects, read without running the job's code: an exception's message, plain
values, a DataFrame's columns and labels, the pandas object a failed call was made on,
a function's parameters, an artist's properties.

One namespace with the other files of python/diagnose/, which the worker runs in the
order of src/worker/modules.rs.
"""

import ast
import re
import sys


def _message(exc):
    """`str(exc)` when that runs no code of the job's (its class and `__str__` are a
    library's or Python's and its arguments plain values), else ''. An exact copy."""
    kind = type(exc)
    args = BaseException.args.__get__(exc)
    stock = kind.__str__ in (BaseException.__str__, KeyError.__str__)
    if kind.__module__ == '__main__' or not all(_plain_value(a) for a in args) \
            or not (stock or kind.__module__.partition('.')[0] in sys.modules):
        return ''
    try:
        text = str(exc)
    except Exception:
        return ''
    return text if type(text) is str else str.__str__(text)


def _plain_value(value, depth=0):
    """Whether `value` is made of exact builtin strings, numbers and containers only."""
    kind = type(value)
    if kind in (str, bytes, int, float, bool, complex) or value is None:
        return True
    if kind in (list, tuple) and depth < 2 and len(value) <= 1000:
        return all(_plain_value(v, depth + 1) for v in value)
    return False


def _pandas():
    """pandas if something already imported it: no DataFrame exists otherwise, and a
    diagnosis must not pay for the import."""
    return sys.modules.get('pandas')


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


# A lookup's message: labels not found, whatever the wording of the pandas internal.
_LOOKUP_MESSAGE = re.compile(
    r"not in (index|axis|the)|not found|are in the|not present|do(es)? not exist|"
    r"not (a )?columns?|is not defined|does not appear|not contained|could not interpret|"
    r"^Missing column", re.IGNORECASE)
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def _asked_names(exc, key, message, present):
    """The names a failed lookup asked for and did not find (at most 10): the key itself
    when it is a plain label, the labels of a list key, else the names a lookup message
    quotes ("None of [Index(['a'])] are in the [columns]", "Column not found: a", "name
    'a' is not defined", seaborn's `a`) that are not among `present`."""
    present = {p for p in present if type(p) is str}
    if type(key) in (list, tuple) and key and all(type(k) in (str, int) for k in key):
        return [k for k in key if k not in present][:10] or list(key)[:10]
    if type(key) is str and not _LOOKUP_MESSAGE.search(key):
        return [key]
    if type(key) in (int, float):
        return [key]
    text = key if type(key) is str else message
    if type(text) is not str:
        return []
    text = re.sub(r"\b(dtype|name|freq)='[^']*'", '', text[:4000])
    head, colon, tail = text.partition(': ')
    if colon and not _LOOKUP_MESSAGE.search(tail):  # "Missing column provided to 'x': 'y'"
        text = tail
    ticks = re.findall(r'`([^`]+)`', text)
    if ticks:  # seaborn: "Could not interpret value `x` for `y`": the first one
        return [ticks[0]] if ticks[0] not in present else []
    names = []
    for quoted in _QUOTED.findall(text):
        try:
            name = ast.literal_eval(quoted)
        except (ValueError, SyntaxError):
            continue
        if type(name) is str and name not in present and name not in names:
            names.append(name)
    bare = text.strip()
    if not names and colon and bare and bare not in present:  # "Column not found: x"
        names.append(bare)
    return names[:10]


def _owners(frame, pandas):
    """[(role, DataFrame or Series)] a library frame works on: its `self`, else its
    DataFrame arguments (left and right of a merge), each through exact pandas types."""
    try:
        values = frame.f_locals
        code = frame.f_code
    except Exception:
        return []
    owner = _as_owner(values.get('self'), pandas)
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    found = [('self', owner)] if owner is not None else []
    for name in params:
        if name == 'self':
            continue
        value = values.get(name)
        if type(value) is pandas.DataFrame and all(value is not f for _, f in found):
            found.append((name, value))
    return found


def _as_owner(value, pandas):
    """The DataFrame or Series behind `value`: itself, a GroupBy's, `.loc`'s, the plot
    accessor's; None for anything else (a job's own class included)."""
    kind = type(value)
    if kind in (pandas.DataFrame, pandas.Series):
        return value
    from pandas.core import indexing
    from pandas.core.groupby import DataFrameGroupBy, SeriesGroupBy
    from pandas.plotting import PlotAccessor
    if kind in (DataFrameGroupBy, SeriesGroupBy, indexing._LocIndexer, indexing._iLocIndexer,
                indexing._AtIndexer, indexing._iAtIndexer):
        inner = value.obj
    elif kind is PlotAccessor:
        inner = value._parent
    else:
        return None
    return inner if type(inner) in (pandas.DataFrame, pandas.Series) else None


def _labels_of(frames, rows):
    """(labels, listing, noun) of what a lookup searched: the columns of a frame (of both
    frames of a merge, each listed), the index's labels, or a Series' labels; `listing`
    as `not_found` takes it. At most `_MAX_LABELS` labels are read from one index, and
    only plain ones (exact strings, numbers, timestamps)."""
    pandas = _pandas()
    plain = (str, int, float, bool, pandas.Timestamp)
    labels, listing, noun = [], [], 'column'
    if rows:
        frames = frames[:1]
    headings = ("The left frame's columns", "The right frame's columns") \
        if len(frames) > 1 else ("The frame's columns",)
    for (_, owner), heading in zip(frames, headings):
        if type(owner) is pandas.Series:
            index, heading, noun = owner.index, "The Series' labels", 'label'
        elif rows:
            index, heading, noun = owner.index, "The index's labels", 'row label'
        else:
            index = owner.columns
        own = [v for v in index[:_MAX_LABELS] if type(v) in plain]
        listing.append((heading, own, len(index)))
        labels += [v for v in own if v not in labels]
    return labels, listing, noun


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
