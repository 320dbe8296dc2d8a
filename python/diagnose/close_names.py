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

Every "this name is not among these" (a column, a row label, a group, a dict key, a file's
column, a sheet, an undefined variable: listed with the names the job's code defined) is
answered by one function, `not_found`, from the object the lookup was on: for
pandas, the object of the outermost library call the job made (its `self`, a GroupBy's or
`.loc`'s frame, both frames of a merge), found in the traceback's frames through exact
pandas types, so the answer does not depend on which internal raised or on its wording.
Labels are matched and quoted only when they are exact strings or numbers: a job's str
subclass would run its own `__eq__`/`__repr__` here.

The module is four files of python/diagnose/, run in this order into one namespace
(src/worker/modules.rs): this one (`explain`, the limits of a hint, and the names
closest to one that is missing), explainer.py (the walk that picks the hint),
job_objects.py (reading the job's objects safely) and older_versions.py (removed APIs).
"""

import difflib
import re
import unicodedata

_MAX_LISTED = 30   # names listed in a hint before "... (N in all)"
_MAX_VALUES = 3    # offending values quoted
_MAX_MATCHES = 3   # close names offered for one missing name
_MAX_NAME = 60     # characters of one listed name
_MAX_LABELS = 5000  # labels read from an index (a frame of a million rows is not listed)

# Names models use for libraries that are not there, and what to write instead.
_FOREIGN_NAMES = {
    'sns': 'Import seaborn first: import seaborn as sns (or draw with plt (matplotlib), '
           'e.g. plt.hist(...)).',
    'seaborn': 'Import seaborn first: import seaborn (or draw with plt (matplotlib)).',
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
    shown = ', '.join(_shown(n) for n in names[:_MAX_LISTED])
    if total > _MAX_LISTED:
        shown += f', ... ({total} in all)'
    return shown


def _shown(value):
    """A name as a hint quotes it: exact strings (cut to `_MAX_NAME` characters) and plain
    numbers by their repr, nothing else: a job's object would run its own `__repr__`."""
    kind = type(value)
    if kind is str:
        return repr(value if len(value) <= _MAX_NAME else value[:_MAX_NAME] + '…')
    if kind in (int, float, bool) or value is None:
        return repr(value)
    pandas = _pandas()
    if pandas is not None and kind is pandas.Timestamp:
        return repr(str(value))
    return '<' + ('a value' if kind.__module__ == '__main__' else kind.__qualname__) + '>'


def _folded(text):
    """The form two spellings of one name share: NFKC (full-width letters), case folded."""
    return unicodedata.normalize('NFKC', text).casefold()


def _squashed(text):
    return re.sub(r'[\s_\-.]+', '', _folded(text))


def closest_matches(word, candidates, n=_MAX_MATCHES):
    """The candidates a model most likely meant by `word`, best first, at most `n`: the
    same name but for case, width, spaces or underscores ('Revenue', 'unit price' for
    'unit_price'), then the nearest by string similarity, then names that contain the
    other ('部门名称' for '部门', 'signal' for 'sig'). Only exact strings are compared."""
    if type(word) is not str or not word:
        return []
    strings = []
    seen = {word}
    for c in candidates:
        if type(c) is str and c not in seen:
            seen.add(c)
            strings.append(c)
    found = []

    def add(names):
        for name in names:
            if name not in found and len(found) < n:
                found.append(name)

    folded, squashed = _folded(word), _squashed(word)
    add(c for c in strings if _folded(c) == folded)
    add(c for c in strings if _squashed(c) == squashed)
    by_folded = {}
    for c in strings[:_MAX_LABELS]:
        by_folded.setdefault(_folded(c), c)
    add(by_folded[m] for m in difflib.get_close_matches(folded, list(by_folded), n=n,
                                                          cutoff=0.7))
    # One name inside the other: 'sig' for 'signal', 'num_points' for 'num', '部门' for
    # '部门名称'. Three letters at least, two for scripts whose characters are words.
    shortest = 3 if squashed.isascii() else 2
    if len(squashed) >= shortest:
        inside = [c for low, c in ((_squashed(c), c) for c in strings[:_MAX_LABELS])
                  if len(low) >= shortest and (squashed in low or low in squashed)]
        inside.sort(key=lambda c: abs(len(c) - len(word)))
        if len(inside) <= n:  # not a common fragment ('id', 'val'): an answer, not a list
            add(inside)
    return found


def closest(word, candidates):
    """The candidate a model most likely meant, or None (see `closest_matches`)."""
    found = closest_matches(word, candidates, n=1)
    return found[0] if found else None


def did_you_mean(word, candidates):
    best = closest(word, candidates)
    return f'Did you mean: {best!r}?' if best is not None else None


def not_found(missing, available, noun='column', listing="The frame's columns"):
    """The one text for names asked for that do not exist, whatever raised: which name,
    the closest existing ones, then what exists, at most `_MAX_LISTED` names per list.
    `listing` heads the list of `available`, or is [(heading, names, how many in all)]
    for several lists (both frames of a merge, an index cut at `_MAX_LABELS`), or None.
    Only exact strings are matched, and only exact strings and numbers are quoted."""
    missing = list(missing)
    available = list(available)
    parts = []
    if len(missing) == 1:
        matches = closest_matches(missing[0], available)
        parts.append(f'No {noun} {_shown(missing[0])}.')
        if matches:
            parts.append(f'Did you mean: {matches[0]!r}?')
            if len(matches) > 1:
                parts.append(f'(also close: {quote_list(matches[1:])})')
    else:
        parts.append(f'No {noun}s {quote_list(missing[:_MAX_VALUES], len(missing))}.')
        for label in missing[:_MAX_VALUES]:
            matches = closest_matches(label, available, n=1)
            if matches:
                parts.append(f'{_shown(label)}: did you mean {matches[0]!r}?')
    if type(listing) is str:
        listing = [(listing, available, len(available))]
    for heading, names, total in listing or ():
        parts.append(f'{heading}: {quote_list(names, total)}.')
    return ' '.join(parts)


_SHEET_MESSAGE = re.compile(r"Worksheet named '(.{0,200})' not found$", re.S)
# pandas' readers whose `sheet_names` a missing sheet's feedback lists (calamine is the
# worker's default, openpyxl the one a job can ask for).
_EXCEL_READER_MODULES = ('pandas.io.excel._calamine', 'pandas.io.excel._openpyxl')


def _header_row_hint(frames, asked, pandas):
    """When a name asked for is a value in the first rows of the frame read (a title
    above the header): the row the header is in, and how to read it."""
    for _, frame in frames:
        if type(frame) is not pandas.DataFrame:
            continue
        head = frame.head(20)
        for position in range(len(head)):
            row = head.iloc[position]
            if any(type(v) is str and v in asked for v in row.tolist()):
                return (f'The header is not the first row read: {quote_list(asked)} is in '
                        f'row {position + 2} of the sheet; read it with header={position + 1} '
                        f'(e.g. pd.read_excel(..., header={position + 1})).')
    return None


def _public(names):
    return [n for n in names if isinstance(n, str) and not n.startswith('_')]


def _join(*parts):
    text = ' '.join(p for p in parts if p)
    return text or None
