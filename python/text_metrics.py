"""Text measurements made once at warm-up and frozen: the same pixels, less work per job.

A typical figure spends a large part of its time measuring text (make profile,
docs/bench/PROFILE.md). Two measurements are recomputed by every job although they
never change between jobs:

- The size of a string. matplotlib caches it per *renderer*, and every new figure has a
  new renderer, so the tick labels "0.0", "0.5", "1.0" are shaped again by every job (a
  third of a millisecond each). For Agg and text that is not math, the size depends only
  on the string, the font files, the size in points, the renderer's dpi, the hinting
  flag and the font rcParams in the key below.
- A font's metric tables (`OS/2`, `hhea`, `head`), which `Text._get_layout` reads from
  the font file on every layout: they are constants of the file.

Both are measured here at warm-up, for the strings and fonts jobs use most, and then
frozen: nothing a job does adds to them or changes them, so a job's timing can say
nothing about what another job drew (a cache that jobs filled would be a channel between
them). Jobs cannot reach the tables: they live in closures of functions matplotlib calls,
and the gate refuses the private names and dunder attributes that lead there. A lookup
that misses runs stock matplotlib.

`install` checks what it assumes of matplotlib's code (the names it replaces, and that
`Text._get_layout` uses its font only to read metric tables) and raises on any doubt:
the worker then keeps stock behaviour and says why.
"""

import ast
import inspect
import textwrap
import types

_STOCK = {}          # (module, name) -> the function install() replaced
_TABLE_NAMES = ('OS/2', 'hhea', 'head')
_MINUS = '\N{MINUS SIGN}'


def _tick_labels():
    """What matplotlib's default tick formatter writes for common axis ranges."""
    def fmt(value, decimals):
        text = f'{value:.{decimals}f}'
        return text.replace('-', _MINUS) if value < 0 else text
    labels = set()
    labels.update(fmt(v, 0) for v in range(-20, 101))
    labels.update(fmt(v, 0) for v in range(-1000, 1001, 10))
    labels.update(fmt(v, 0) for v in range(0, 10001, 100))
    labels.update(fmt(v / 10, 1) for v in range(-20, 101))
    labels.update(fmt(v / 100, 2) for v in range(-100, 301, 5))
    labels.update(fmt(v / 4, 2) for v in range(0, 41))
    labels.discard(_MINUS + '0')
    return sorted(labels)


def _face(path):
    """(file, face index) of one entry of a font list (a path, or a `FontPath`)."""
    return (str(getattr(path, 'path', path)), getattr(path, 'face_index', 0))


def _faces(paths):
    """The font list `FontManager._find_fonts_by_props` returned, as a hashable key."""
    if isinstance(paths, (str, bytes)):
        return (_face(paths),)
    return tuple(_face(p) for p in paths)


def _check_layout_uses_font_for_tables_only(layout):
    """`Text._get_layout` must get its font from `get_font(...)` and use it only as
    `font.get_sfnt_table(<constant>)`: then a stand-in with those tables is the same."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(layout)))
    assigned = reads = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == 'font' for t in node.targets):
            call = node.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id == 'get_font'):
                raise RuntimeError('Text._get_layout assigns its font from something else')
            assigned += 1
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == 'font' and isinstance(node.ctx, ast.Load):
            reads += 1
    table_reads = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name) and node.func.value.id == 'font'
        and node.func.attr == 'get_sfnt_table'
    ]
    if assigned != 1 or reads != len(table_reads) or not table_reads:
        raise RuntimeError('Text._get_layout uses its font for more than metric tables')


def _frozen(table):
    """A read-only view of one metric table (its values are numbers, tuples, bytes)."""
    return None if table is None else types.MappingProxyType(dict(table))


class _FontTables:
    """Stands in for an `FT2Font` in `Text._get_layout`: its metric tables, each read
    handing out a fresh copy (as `FT2Font.get_sfnt_table` does)."""

    __slots__ = ('_tables',)

    def __init__(self, tables):
        self._tables = tables

    def get_sfnt_table(self, name):
        table = self._tables[name]
        return None if table is None else dict(table)


def install(dpis=(100.0,)):
    """Measures, freezes and installs; returns how many string sizes were frozen."""
    import matplotlib
    import matplotlib.text as text
    from matplotlib import font_manager
    from matplotlib.backends import backend_agg
    from matplotlib.font_manager import FontProperties, fontManager

    renderer_cls = backend_agg.RendererAgg
    hinting_flag = backend_agg.get_hinting_flag
    stock_metrics = text._get_text_metrics_with_cache
    stock_get_font = text.get_font
    if stock_get_font is not font_manager.get_font:
        raise RuntimeError('matplotlib.text.get_font is not font_manager.get_font')
    params = list(inspect.signature(stock_metrics).parameters)
    if params != ['renderer', 'text', 'fontprop', 'ismath', 'dpi']:
        raise RuntimeError(f'_get_text_metrics_with_cache takes {params}')
    _check_layout_uses_font_for_tables_only(text.Text._get_layout)
    rc = matplotlib.rcParams

    def size_key(renderer, string, fontprop):
        return (string, _faces(fontManager._find_fonts_by_props(fontprop)),
                fontprop.get_size_in_points(), renderer.dpi, hinting_flag(),
                rc['text.hinting_factor'], rc['text.kerning_factor'],
                rc['font.enable_last_resort'])

    # Sizes of tick labels at the default tick label size, measured as stock
    # matplotlib measures them.
    sizes = {}
    prop = FontProperties(size=rc['xtick.labelsize'])
    for dpi in dpis:
        renderer = renderer_cls(1, 1, dpi)
        for string in _tick_labels() + ['lp']:
            sizes[size_key(renderer, string, prop)] = tuple(
                renderer.get_text_width_height_descent(string, prop, False))

    # Metric tables of every font matplotlib knows, by its file and face: constants of
    # the file (a fallback list's tables are those of its first font).
    tables = {}
    for entry in fontManager.ttflist:
        if entry.index:  # one face of a collection: left to stock matplotlib
            continue
        font = stock_get_font(entry.fname)
        tables[(entry.fname, 0)] = types.MappingProxyType(
            {name: _frozen(font.get_sfnt_table(name)) for name in _TABLE_NAMES})
    frozen_sizes = types.MappingProxyType(sizes)
    frozen_tables = types.MappingProxyType(tables)

    def _get_text_metrics_with_cache(renderer, text, fontprop, ismath, dpi):
        if ismath is False and type(renderer) is renderer_cls:
            found = frozen_sizes.get(size_key(renderer, text, fontprop))
            if found is not None:
                return found
        return stock_metrics(renderer, text, fontprop, ismath, dpi)

    def get_font(font_filepaths, hinting_factor=None):
        found = None
        if isinstance(font_filepaths, (str, bytes)):
            found = frozen_tables.get(_face(font_filepaths))
        elif isinstance(font_filepaths, (list, tuple)) and font_filepaths:
            found = frozen_tables.get(_face(font_filepaths[0]))
        if found is None:
            return stock_get_font(font_filepaths, hinting_factor)
        return _FontTables(found)

    for name, replacement in (('_get_text_metrics_with_cache', _get_text_metrics_with_cache),
                              ('get_font', get_font)):
        _STOCK[name] = getattr(text, name)
        replacement.__doc__ = _STOCK[name].__doc__
        setattr(text, name, replacement)
    return len(frozen_sizes)


def uninstall():
    """Puts back what `install` replaced."""
    import matplotlib.text as text
    for name, stock in _STOCK.items():
        setattr(text, name, stock)
    _STOCK.clear()
