"""Figures: what the job did with them (its saves, show() calls and the figures it drew,
read by the supervisor's checks and feedback), figures rendered to memory instead of
out/, and PNG pixels handed to the host, which encodes them.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import io
import os
import time


# --- what the job did with its figures ----------------------------------------------------
#
# Read by the supervisor's output checks and feedback: which files each savefig wrote and
# what the figure showed then (python/figures.py), whether the job called show() (which
# displays nothing here), and which figures it drew but never saved.

def _note_save(figure, fname):
    notes = _NOTES
    if notes is None:
        return  # outside a job
    if type(fname) is not str:
        # Saved into a file object the job holds (a buffer for an HTML report, bytes it
        # writes itself): not captured again at the end when the job wrote files of its
        # own (see _capture_figures).
        notes['buffered_ids'].add(id(figure))
        return
    if _SAVE_HOW == 'saved':
        notes['saved_by_job'] = True
    try:
        path = fname  # an exact str: see _save_target
        real = os.path.realpath(path)
        in_out = os.path.dirname(real) == _OUT_REAL
        notes['saved_ids'].add(id(figure))
        summary = None
        if notes['describe']:
            start = time.perf_counter()
            summary = _FIGURES_MOD.summarize(figure)
            notes['describe_ms'] += (time.perf_counter() - start) * 1000.0
        others = []
        if not _FIGURES_MOD.has_content(figure):
            others = [num for num, fig in _open_figures()
                      if fig is not figure and _FIGURES_MOD.has_content(fig)]
        notes['saves'].append({
            'target': os.path.basename(real) if in_out else path,
            'in_out': in_out,
            'summary': summary,
            'other_figures_drawn': others,
        })
    except Exception as exc:  # describing must never break the save itself
        notes['errors'].append(f'{type(exc).__name__}: {_truncate(str(exc), 200)}')


def _open_figures():
    from matplotlib._pylab_helpers import Gcf
    return [(m.num, m.canvas.figure) for m in Gcf.get_all_fig_managers()]


def _install_figure_notes():
    """plt.show() is noted (it would only warn here); the Axes methods that add data mark
    each artist with the job line that drew it."""
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    def show(*args, **kwargs):
        if _NOTES is not None:
            _NOTES['shown'] = True
            # `show(block=False)` (what plt.pause calls) updates a window while the
            # drawing goes on: the figure comes back when it is saved or at the end.
            if kwargs.get('block', True) is not False:
                _capture_figures('shown')

    def pause(interval):
        """`plt.pause`: draws the active figure; there is no window to wait for here."""
        from matplotlib import _pylab_helpers
        manager = _pylab_helpers.Gcf.get_active()
        if manager is not None and manager.canvas.figure.stale:
            manager.canvas.draw_idle()
        show(block=False)

    show.__doc__ = plt.show.__doc__
    plt.show = show
    pause.__name__, pause.__qualname__ = 'pause', 'pause'
    plt.pause = pause
    for name in ('add_line', 'add_collection', 'add_image', 'add_container', 'add_table'):
        setattr(Axes, name, _noting_line(getattr(Axes, name)))


def _capture_figures(how):
    """Saves into out/ each open figure that has something drawn and that no save or
    capture returned yet, as '<OUT's stem>_<figure number>.<OUT's format>' (png unless
    OUT names another figure format): `plt.show()` ('shown') and the figures a job left
    open without saving anything ('open_at_end'). A blank canvas is never captured."""
    global _SAVE_HOW
    notes = _NOTES
    stem, ext = os.path.splitext(notes['out_name'])
    ext = ext[1:].lower()
    if ext not in _FIGURE_FORMATS:
        ext = 'png'
    # A figure the job saved into a buffer is its own business when it wrote files: it
    # went into them (an HTML report, bytes written under a name). When it wrote none,
    # the figure is what the job made, and comes back.
    buffered = notes['buffered_ids'] if how == 'open_at_end' and _WRITES else ()
    for num, fig in _open_figures():
        if (id(fig) in notes['saved_ids'] or id(fig) in buffered
                or not _FIGURES_MOD.has_content(fig)):
            continue
        _SAVE_HOW = how
        try:
            fig.savefig(os.path.join(_OUT_REAL, f'{stem}_{num}.{ext}'))
        finally:
            _SAVE_HOW = 'saved'


_FIGURE_FORMATS = ('png', 'svg', 'pdf', 'jpg', 'jpeg', 'webp')
_SAVE_HOW = 'saved'   # how the save in progress was obtained: 'saved', or a capture's


def _noting_line(stock):
    def add(self, artist, *args, **kwargs):
        if _NOTES is not None and _FIGURES_MOD is not None:
            _FIGURES_MOD.note_line(artist)
        return stock(self, artist, *args, **kwargs)

    add.__doc__ = stock.__doc__
    add.__wrapped__ = stock
    return add


def _figure_notes():
    """The job's figure notes as plain data, with the figures drawn but never saved."""
    notes = _NOTES
    unsaved = []
    try:
        unsaved = [num for num, fig in _open_figures()
                   if id(fig) not in notes['saved_ids'] and _FIGURES_MOD.has_content(fig)]
    except Exception as exc:
        notes['errors'].append(f'{type(exc).__name__}: {_truncate(str(exc), 200)}')
    return {'saves': notes['saves'], 'shown': notes['shown'], 'unsaved_figures': unsaved,
            'errors': notes['errors'], 'describe_ms': notes['describe_ms']}


# --- figures to memory ------------------------------------------------------------------

def _memory_target(figure, fname, kwargs):
    """(artifact name, format) when this save should go to memory instead of out/.

    Only while a job asked for figures in memory, and only for a path naming a file
    directly in out/ (OUT or a sibling). The format is chosen as matplotlib chooses it
    for a path: `format=`, else the extension, else rcParams['savefig.format'], which
    matplotlib then appends to the name.
    """
    if _FIGURES is None or type(fname) is not str:
        return None  # a file object or bytes; a path is an exact str (see _save_target)
    path = fname
    if os.path.dirname(os.path.realpath(path)) != _OUT_REAL:
        return None
    import matplotlib
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1][1:].lower()
    # Exact copies: `format=` is one already (savefig), an rcParams value may be a job's.
    fmt = _exact_str(kwargs.get('format') or ext or matplotlib.rcParams['savefig.format'])
    if fmt is None or fmt.lower() not in figure.canvas.get_supported_filetypes():
        return None  # stock savefig raises its own error
    if _MEMORY_FORMATS is not None and fmt.lower() not in _MEMORY_FORMATS:
        return None
    if not ext and kwargs.get('format') is None:
        name = f'{name}.{fmt}'
    return name, fmt.lower()


def _save_target(fname):
    """What a save writes to, as the notes, the memory target and matplotlib will all
    see it: a path as its exact copy (`_plain_path`), a file object as it is. A path-like
    object of the job's own is refused: its `__fspath__` could name one file to the
    checks and another to the writer."""
    path = _plain_path(fname)
    if path is not None:
        return path
    if issubclass(type(fname), os.PathLike):
        raise TypeError("savefig: pass the file name as a str, such as OUT or 'name.png'")
    return fname


def _figure_file(fname, kwargs):
    """Where a job's save to the path `fname` goes (`_write_target`), noted as an
    artifact. A name without an extension gets the one matplotlib would append."""
    text = os.fsdecode(fname)
    if kwargs.get('format') is None and not os.path.splitext(text)[1]:
        import matplotlib
        fmt = _exact_str(matplotlib.rcParams['savefig.format'])
        if fmt is not None:
            text = f'{text}.{fmt}'
    real, name, requested = _write_target(text)
    if name is not None:
        _note_write(name, _SAVE_HOW, requested)
    return real


def _install_memory_savefig():
    """Makes `Figure.savefig` render into memory for jobs that asked for it.

    pyplot.savefig, render-once's replacement of it, and fig.savefig all end in
    Figure.savefig, so this one place covers every ordinary way to save. Matplotlib
    writes the same bytes to a file object as to a path (the path is only opened and
    handed to the same writer); tests/it/figures_in_memory.rs holds us to that.
    """
    from matplotlib.figure import Figure
    stock = Figure.savefig

    def savefig(self, fname, **kwargs):
        global _RAW_CAPTURE
        fname = _save_target(fname)
        if kwargs.get('format') is not None:
            fmt = _exact_str(kwargs['format'])
            if fmt is None:
                raise TypeError("savefig: format must be a plain str such as 'png'")
            kwargs['format'] = fmt
        if _WRITES is not None and type(fname) in (str, bytes):
            fname = _figure_file(fname, kwargs)
        _note_save(self, fname)
        target = _memory_target(self, fname, kwargs)
        if target is None:
            return stock(self, fname, **kwargs)
        name, fmt = target
        buf = io.BytesIO()
        kwargs['format'] = fmt
        _RAW_CAPTURE = capture = {} if fmt == 'png' and _RAW_PNG_LIMIT else None
        try:
            stock(self, buf, **kwargs)
        finally:
            _RAW_CAPTURE = None
        _FIGURES[name] = capture['image'] if capture and 'image' in capture else buf.getvalue()

    savefig.__doc__ = stock.__doc__
    savefig.__wrapped__ = stock
    Figure.savefig = savefig


# --- PNG pixels to the host ------------------------------------------------------------
#
# Encoding a PNG (zlib at Pillow's default level) is the largest single cost of a typical
# job. With host encoding on, a PNG saved into out/ is rendered as always and its RGBA
# pixels, dpi and metadata go to the supervisor, which encodes them (src/encode.rs):
# the same pixels, the same text and pHYs chunks as matplotlib's own writer.

_RAW_PNG_LIMIT = 0    # largest pixel buffer handed over, bytes; 0: host encoding off


def _install_raw_png():
    """Wraps `FigureCanvasAgg._print_pil`, the one writer behind every PNG save: while a
    save captures (`_RAW_CAPTURE`), it renders exactly as stock (`FigureCanvasAgg.draw`)
    and keeps the pixels instead of calling `matplotlib.image.imsave`."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    stock = FigureCanvasAgg._print_pil

    def _print_pil(self, filename_or_obj, fmt, pil_kwargs, metadata=None):
        capture = _RAW_CAPTURE
        if capture is None or fmt != 'png' or pil_kwargs or 'image' in capture:
            return stock(self, filename_or_obj, fmt, pil_kwargs, metadata)
        FigureCanvasAgg.draw(self)
        pixels = self.buffer_rgba()
        height, width = pixels.shape[:2]
        if height * width * 4 > _RAW_PNG_LIMIT:
            return stock(self, filename_or_obj, fmt, pil_kwargs, metadata)
        # As matplotlib.image.imsave writes them for a PNG.
        text = {'Software': f'Matplotlib version{matplotlib.__version__}, https://matplotlib.org/',
                **(metadata if metadata is not None else {})}
        capture['image'] = {
            'width': int(width),
            'height': int(height),
            'dpi': float(self.figure.dpi),
            'text': [(str(k), v if isinstance(v, str) else str(v))
                     for k, v in text.items() if v is not None],
            'rgba': bytes(pixels),
        }

    _print_pil.__doc__ = stock.__doc__
    _print_pil.__wrapped__ = stock
    FigureCanvasAgg._print_pil = _print_pil
