"""What a figure shows, read from the figure object when it is saved, before it is encoded.

`summarize(fig)` returns plain data (JSON-safe: no NaN, no numpy types) that the
supervisor turns into `FigureSummary` (src/figure.rs): per axes its title, labels, scales,
limits, legend and texts, and per plotted series its kind, label, point count, NaN count,
data range and the job line that drew it. The supervisor's output checks read it (an
empty figure, a series that is all NaN), and a model reads its one-paragraph text to
check a figure it cannot see.

`note_line(artist)` is called by the Axes methods that add data (installed by the
prelude): it marks the artist with the job line that drew it.
"""

import math
import sys

_MAX_AXES = 30
_MAX_SERIES = 20
_MAX_TEXTS = 10
_MAX_CHARS = 100


def note_line(artist):
    """Marks `artist` with the line of the job's code that is drawing it."""
    try:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == '<job>':
                artist._pyward_line = frame.f_lineno
                return
            frame = frame.f_back
    except Exception:  # an artist that refuses attributes: no line, no failure
        pass


def has_content(fig):
    """Whether anything visible was drawn: cheaper than a summary, for figures nobody
    saved and for telling where a job's drawing went."""
    return bool(drawn(fig, first=True))


def drawn(fig, first=False):
    """What the figure shows, as kinds ('lines', 'legend', 'title', ...), from its
    artists: any visible line, collection, patch, image, table, text, title, suptitle or
    legend (one of proxy artists on otherwise empty axes included), on the figure, its
    subfigures and every axes and inset. Axis labels and ticks alone are not a drawing.
    With `first`, stops at the first kind found."""
    found = []

    def note(kind, artists):
        if kind not in found and any(_shows(a) for a in artists):
            found.append(kind)
        return first and found

    for figure in _figures(fig):
        if note('text', figure.texts) or note('title', _figure_titles(figure)) \
                or note('legend', figure.legends) or note('images', figure.images) \
                or note('patches', figure.patches) or note('lines', figure.lines) \
                or note('artists', figure.artists):
            return found
    for ax in _all_axes(fig):
        if not ax.get_visible():
            continue
        legend = ax.get_legend()
        if note('lines', ax.lines) or note('collections', ax.collections) \
                or note('patches', ax.patches) or note('images', ax.images) \
                or note('tables', ax.tables) or note('artists', ax.artists) \
                or note('text', ax.texts) or note('title', _titles(ax)) \
                or note('legend', [legend] if legend is not None else []):
            return found
    return found


def _shows(artist):
    """Whether an artist is visible and, for a text, says something."""
    from matplotlib.text import Text
    try:
        if not artist.get_visible():
            return False
        return not isinstance(artist, Text) or bool(_text(artist.get_text()))
    except Exception:  # an artist that cannot say: count it rather than call it empty
        return True


def _figures(fig):
    """The figure and its subfigures, depth first."""
    out = [fig]
    for sub in getattr(fig, 'subfigs', ()):
        out += _figures(sub)
    return out


def _figure_titles(figure):
    return [t for t in (getattr(figure, name, None)
                        for name in ('_suptitle', '_supxlabel', '_supylabel')) if t is not None]


def _titles(ax):
    """The axes' left, centre and right titles."""
    return [t for t in (getattr(ax, '_left_title', None), ax.title,
                        getattr(ax, '_right_title', None)) if t is not None]


def _all_axes(fig):
    """Every axes: the figure's (subfigures' included), then the insets made with
    `ax.inset_axes`, which the figure does not list (child axes of their parent)."""
    out = list(fig.axes)
    seen = {id(ax) for ax in out}
    i = 0
    while i < len(out):
        for child in getattr(out[i], 'child_axes', ()):
            if id(child) not in seen:
                seen.add(id(child))
                out.append(child)
        i += 1
    return out


def summarize(fig):
    every = _all_axes(fig)
    listed = every[:_MAX_AXES]
    index = {id(ax): i for i, ax in enumerate(listed)}
    subfigures = {id(sub): n for n, sub in enumerate(_figures(fig)[1:], 1)}
    roles = [_unless_failing(_role, ax, index, listed) for ax in listed]
    twins = {id(ax) for ax, role in zip(listed, roles) if role and role['kind'] == 'twin'}
    shares = [_unless_failing(_shared, listed, index, twins, axis) or {} for axis in 'xy']
    axes = [_axes(ax, role, [shared.get(id(ax)) for shared in shares], subfigures)
            for ax, role in zip(listed, roles)]
    texts = []
    for figure in _figures(fig):
        suptitle = getattr(figure, '_suptitle', None)
        if suptitle is not None and suptitle.get_text():
            texts.append(_text(suptitle.get_text()))
        texts += [_text(t.get_text()) for t in figure.texts if t is not suptitle]
    texts = [t for t in texts if t]
    for legend in fig.legends:  # fig.legend(...): its entries are text on the figure
        texts += [t for t in (_text(x.get_text()) for x in legend.get_texts()) if t]
    texts += ['[image]' for _ in fig.images]  # fig.figimage(...)
    width, height = fig.get_size_inches()
    return {
        'width_in': _number(width),
        'height_in': _number(height),
        'axes': axes,
        'more_axes': max(0, len(every) - _MAX_AXES),
        'texts': texts[:_MAX_TEXTS],
    }


def _axes(ax, role, shares, subfigures):
    series = _series(ax)
    spec = ax.get_subplotspec() if hasattr(ax, 'get_subplotspec') else None
    grid, span = None, None
    if spec is not None:
        # The cell the code asked for: a colorbar that steals room (make_axes_gridspec)
        # nests the axes in a helper grid inside its cell; the outermost spec is the cell.
        top = spec.get_topmost_subplotspec()
        rows, cols = top.get_gridspec().get_geometry()
        grid = [int(rows), int(cols), int(top.rowspan.start), int(top.colspan.start)]
        span = [len(top.rowspan), len(top.colspan)]
    legend = ax.get_legend()
    entries = [_text(t.get_text()) for t in legend.get_texts()] if legend is not None else []
    entries = [e for e in entries if e]
    if legend is not None and not entries and legend.get_visible():
        entries = [_text(legend.get_title().get_text()) or '[legend]']
    titles = [_text(t.get_text()) for t in _titles(ax)]
    subfigure = subfigures.get(id(ax.get_figure(root=False)))
    summary = {
        'grid': grid,
        'span': span if span is not None and span != [1, 1] else None,
        'position': _position(ax),
        'role': role,
        'shares_x': shares[0],
        'shares_y': shares[1],
        'subfigure': subfigure,
        'projection': getattr(ax, 'name', 'rectilinear'),
        'colorbar': hasattr(ax, '_colorbar'),
        'title': _text(' '.join(t for t in titles if t)),
        'xlabel': _text(ax.get_xlabel()),
        'ylabel': _text(ax.get_ylabel()),
        'xscale': ax.get_xscale(),
        'yscale': ax.get_yscale(),
        'xlim': [_number(v) for v in ax.get_xlim()],
        'ylim': [_number(v) for v in ax.get_ylim()],
        # A 3D axes draws its panes and axes itself: axison is always off.
        'visible': bool(ax.get_visible() and getattr(ax, '_axis3don', ax.axison)),
        'legend': entries[:_MAX_SERIES],
        'texts': [t for t in (_text(t.get_text()) for t in ax.texts[:_MAX_TEXTS]) if t],
        'series': series[:_MAX_SERIES],
        'more_series': max(0, len(series) - _MAX_SERIES),
    }
    return summary


def _position(ax):
    """[left, bottom, width, height] of the axes in figure fractions, as placed when it
    was saved (a layout engine may still move it while drawing). The position the code
    set, unless a locator places the axes (insets, colorbars): computing the drawn one
    applies the aspect of every image, which costs more than the rest of a summary."""
    try:
        box = ax.get_position(original=ax.get_axes_locator() is None)
    except Exception:
        return None
    values = [_number(round(float(v), 3)) for v in box.bounds]
    return None if None in values else values


def _role(ax, index, listed):
    """What an axes is to another: a colorbar (of which axes, on which side), a twin
    (twinx: a second y-axis; twiny: a second x-axis), or an inset; None for a plain
    axes. Read from matplotlib's own records (the colorbar's parents, the twin group,
    child axes) and, for axes placed by hand, from the positions."""
    if hasattr(ax, '_colorbar'):
        info = getattr(ax, '_colorbar_info', None) or {}
        parents = list(info.get('parents') or [])
        if not parents:  # cax=...: the axes of what it maps
            owner = getattr(getattr(ax._colorbar, 'mappable', None), 'axes', None)
            parents = [owner] if owner is not None else []
        of = [index[id(p)] for p in parents if id(p) in index]
        side = info.get('location')
        if side is None and of:
            side = _side(ax, listed[of[0]])
        return {'kind': 'colorbar', 'of': of, 'side': side}
    twins = [t for t in ax._twinned_axes.get_siblings(ax) if id(t) in index]
    if len(twins) > 1:
        original = min(twins, key=lambda t: index[id(t)])
        if original is not ax:
            axis = 'y' if ax.get_shared_x_axes().joined(ax, original) else 'x'
            return {'kind': 'twin', 'of': index[id(original)], 'axis': axis}
        return None
    for parent in listed:
        if ax in getattr(parent, 'child_axes', ()):
            return {'kind': 'inset', 'of': index[id(parent)]}
    if ax.get_subplotspec() is None:  # placed by hand (add_axes, an axes locator)
        here = _position(ax)
        best = None
        for other in listed:
            there = _position(other)
            if other is ax or hasattr(other, '_colorbar') or here is None or there is None:
                continue
            smaller = here[2] * here[3] < there[2] * there[3] \
                or (ax.get_axes_locator() is not None and here == there)
            if smaller and _inside(here, there) and \
                    (best is None or there[2] * there[3] < best[1][2] * best[1][3]):
                best = (other, there)
        if best is not None:
            return {'kind': 'inset', 'of': index[id(best[0])]}
    return None


def _inside(inner, outer, slack=0.005):
    return inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack \
        and inner[0] + inner[2] <= outer[0] + outer[2] + slack \
        and inner[1] + inner[3] <= outer[1] + outer[3] + slack


def _side(ax, parent):
    """Where `ax` is relative to `parent`: right, left, top, bottom or inside."""
    here, there = _position(ax), _position(parent)
    if here is None or there is None:
        return None
    if _inside(here, there):
        return 'inside'
    if here[0] >= there[0] + there[2] - 0.005:
        return 'right'
    if here[0] + here[2] <= there[0] + 0.005:
        return 'left'
    return 'top' if here[1] >= there[1] + there[3] - 0.005 else 'bottom'


def _unless_failing(read, *args):
    """`read(*args)`, or None when an unusual axes (a third-party projection) does not
    have what it reads: the rest of the description stands."""
    try:
        return read(*args)
    except Exception:
        return None


def _shared(listed, index, twins, axis):
    """{id(axes): the first listed axes of its group} for the axes sharing their `axis`
    ('x' or 'y') with another, twins left out (a twin shares by construction)."""
    first = {}
    for ax in listed:
        if id(ax) in first or id(ax) in twins:
            continue
        group = getattr(ax, f'get_shared_{axis}_axes')().get_siblings(ax)
        members = [m for m in group if id(m) in index and id(m) not in twins]
        if len(members) > 1:
            root = min(index[id(m)] for m in members)
            first.update((id(m), root) for m in members)
    return first


def _series(ax):
    import numpy as np
    out = []
    in_containers = set()
    for container in ax.containers:
        kind = type(container).__name__
        if kind == 'BarContainer':
            values = np.asarray(getattr(container, 'datavalues', []), dtype=float)
            out.append(_entry('bar', container, values=values))
        elif kind == 'ErrorbarContainer':
            out.append(_entry('errorbar', container, points=len(container.lines[0].get_xdata())
                              if container.lines and container.lines[0] is not None else 0))
        else:
            out.append(_entry(kind.replace('Container', '').lower() or 'container', container,
                              points=len(container)))
        for artist in container.get_children():
            in_containers.add(id(artist))
    for line in ax.lines:
        if id(line) in in_containers:
            continue
        xy = np.asarray(line.get_xydata(), dtype=float).reshape(-1, 2)
        kind = 'markers' if line.get_linestyle() in ('None', '', ' ', 'none') else 'line'
        out.append(_entry(kind, line, x=xy[:, 0], values=xy[:, 1]))
    for collection in ax.collections:
        if id(collection) in in_containers:
            continue
        out.append(_collection(collection, np))
    for image in ax.images:
        data = image.get_array()
        entry = _entry('image', image, values=_masked_values(data, np))
        if data is not None:
            entry['shape'] = [int(n) for n in data.shape[:2]]
        out.append(entry)
    counts = {}
    for patch in ax.patches:
        if id(patch) in in_containers:
            continue
        kind = {'Wedge': 'wedge', 'Rectangle': 'rectangle', 'Polygon': 'polygon',
                'Circle': 'circle', 'Ellipse': 'ellipse'}.get(type(patch).__name__, 'patch')
        counts.setdefault(kind, []).append(patch)
    for kind, patches in counts.items():
        labels = [p.get_label() for p in patches if not p.get_label().startswith('_')]
        entry = _entry(kind, patches[0], points=len(patches))
        entry['label'] = _text(labels[0]) if len(labels) == 1 else None
        out.append(entry)
    if ax.tables:
        out.append({'kind': 'table', 'label': None, 'points': len(ax.tables), 'nan': 0,
                    'x': None, 'y': None, 'line': None})
    if ax.artists:  # add_artist: offset images, annotation boxes, ...
        out.append({'kind': 'artist', 'label': None, 'points': len(ax.artists), 'nan': 0,
                    'x': None, 'y': None, 'line': None})
    return out


def _collection(collection, np):
    name = type(collection).__name__
    if name in ('PathCollection', 'Path3DCollection'):
        offsets = _masked_values(collection.get_offsets(), np).reshape(-1, 2)
        return _entry('scatter', collection, x=offsets[:, 0], values=offsets[:, 1])
    if name in ('QuadMesh', 'PolyQuadMesh'):
        return _entry('mesh', collection, values=_masked_values(collection.get_array(), np))
    if 'Contour' in name:
        return _entry('contour', collection, points=len(getattr(collection, 'levels', [])))
    kind = {'LineCollection': 'lines', 'PolyCollection': 'fill',
            'FillBetweenPolyCollection': 'fill', 'Poly3DCollection': 'surface',
            'EventCollection': 'events', 'PatchCollection': 'patches'}.get(name, 'collection')
    return _entry(kind, collection, points=len(collection.get_paths()))


def _masked_values(data, np):
    """An image's or mesh's values as a float array, masked cells as NaN (no copy for a
    plain float array)."""
    if data is None:
        return None
    if np.ma.isMaskedArray(data):
        if not np.ma.getmask(data).any():
            data = np.ma.getdata(data)
        else:
            return np.ma.asarray(data, dtype=float).filled(np.nan)
    return np.asarray(data, dtype=float)


def _stats(values, np):
    """(points, NaN count, finite min, finite max) in one pass each, without copying
    the data: large images stay cheap."""
    values = np.asarray(values, dtype=float).ravel()
    nan = int(np.count_nonzero(np.isnan(values)))
    if nan == values.size:
        return values.size, nan, None, None
    lo, hi = np.fmin.reduce(values), np.fmax.reduce(values)  # NaN-skipping, no warning
    if not (math.isfinite(lo) and math.isfinite(hi)):
        finite = values[np.isfinite(values)]  # infinities present: the rare slow path
        if not finite.size:
            return values.size, nan, None, None
        lo, hi = finite.min(), finite.max()
    return values.size, nan, lo, hi


def _entry(kind, artist, values=None, x=None, points=None):
    """One series: `values` are its data (y, bar heights, pixel values), NaN counted."""
    import numpy as np
    label = artist.get_label() if hasattr(artist, 'get_label') else None
    entry = {
        'kind': kind,
        'label': _text(label) if isinstance(label, str) and label and not label.startswith('_') else None,
        'points': 0 if points is None else int(points),
        'nan': 0,
        'x': None,
        'y': None,
        'line': getattr(artist, '_pyward_line', None),
    }
    if values is not None:
        size, nan, lo, hi = _stats(values, np)
        entry['points'], entry['nan'] = int(size), nan
        if lo is not None:
            entry['y'] = [_number(lo), _number(hi)]
    if x is not None:
        _, _, lo, hi = _stats(x, np)
        if lo is not None:
            entry['x'] = [_number(lo), _number(hi)]
    return entry


def _number(value):
    value = float(value)
    if math.isfinite(value):
        return value
    return None


def _text(value):
    if not isinstance(value, str):
        return None
    value = ' '.join(value.split())
    if not value:
        return None
    return value if len(value) <= _MAX_CHARS else value[:_MAX_CHARS] + '…'
