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
    """Whether anything was drawn: cheaper than a summary, for figures nobody saved."""
    if fig.texts or fig.images or fig.legends:
        return True
    return any(ax.lines or ax.collections or ax.patches or ax.images or ax.texts or ax.tables
               or ax.artists for ax in fig.axes)


def summarize(fig):
    axes = [_axes(ax) for ax in fig.axes[:_MAX_AXES]]
    texts = []
    suptitle = getattr(fig, '_suptitle', None)
    if suptitle is not None and suptitle.get_text():
        texts.append(_text(suptitle.get_text()))
    texts += [_text(t.get_text()) for t in fig.texts if t is not suptitle]
    texts = [t for t in texts if t]
    for legend in fig.legends:  # fig.legend(...): its entries are text on the figure
        texts += [t for t in (_text(x.get_text()) for x in legend.get_texts()) if t]
    texts += ['[image]' for _ in fig.images]  # fig.figimage(...)
    width, height = fig.get_size_inches()
    return {
        'width_in': _number(width),
        'height_in': _number(height),
        'axes': axes,
        'more_axes': max(0, len(fig.axes) - _MAX_AXES),
        'texts': texts[:_MAX_TEXTS],
    }


def _axes(ax):
    series = _series(ax)
    spec = ax.get_subplotspec() if hasattr(ax, 'get_subplotspec') else None
    grid = None
    if spec is not None:
        rows, cols, start, _ = spec.get_geometry()
        grid = [int(rows), int(cols), int(start // cols), int(start % cols)]
    legend = ax.get_legend()
    entries = [_text(t.get_text()) for t in legend.get_texts()] if legend is not None else []
    entries = [e for e in entries if e]
    summary = {
        'grid': grid,
        'projection': getattr(ax, 'name', 'rectilinear'),
        'colorbar': hasattr(ax, '_colorbar'),
        'title': _text(ax.get_title()),
        'xlabel': _text(ax.get_xlabel()),
        'ylabel': _text(ax.get_ylabel()),
        'xscale': ax.get_xscale(),
        'yscale': ax.get_yscale(),
        'xlim': [_number(v) for v in ax.get_xlim()],
        'ylim': [_number(v) for v in ax.get_ylim()],
        'visible': bool(ax.get_visible() and ax.axison),
        'legend': entries[:_MAX_SERIES],
        'texts': [t for t in (_text(t.get_text()) for t in ax.texts[:_MAX_TEXTS]) if t],
        'series': series[:_MAX_SERIES],
        'more_series': max(0, len(series) - _MAX_SERIES),
    }
    return summary


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
