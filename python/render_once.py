"""Render each saved figure once: drop the redundant redraw at the end of ``plt.savefig``.

Upstream mechanism (matplotlib 3.11.2, checked by `check_assumptions`):

* ``matplotlib.pyplot.savefig`` is::

      fig = gcf()
      res = fig.savefig(fname, **kwargs)
      fig.canvas.draw_idle()  # Need this if 'transparent=True', to reset colors.
      return res

* ``Figure.savefig`` -> ``FigureCanvasBase.print_figure`` -> ``print_png`` ->
  ``FigureCanvasAgg.draw`` renders the figure once (plus, only for
  ``bbox_inches='tight'`` or a layout engine, one *no-output* walk with
  ``RendererBase._draw_disabled`` to compute the layout and the tight box).
* ``FigureCanvasBase.draw_idle`` is "request a redraw once control returns to the GUI
  event loop"; the base class (which Agg does not override) has no event loop, so it
  calls ``self.draw()`` at once: a second full Agg render of the figure, into the
  canvas buffer, whose pixels nobody reads in a headless worker. Its only purposes are
  refreshing a GUI window and undoing the savefig-time colours on screen.

What this module changes (``install``), at worker warm-up, on the real module/classes
(job code only ever sees read-only proxies of them):

1. ``pyplot.savefig`` keeps its first two statements and replaces ``draw_idle()`` by
   `_after_save`, which picks the cheapest of three ways that leaves *exactly* the state
   the stock redraw would have left:

   - **skip**: the save was a plain Agg render (raster format through this very canvas,
     at the figure's own dpi, no tight bbox, no layout engine before or after, no
     transparent/face/edge colour override, no animated artist). The save's own draw
     ran under the same conditions as the redraw would, so the redraw would recompute
     the same artist state and repaint the same pixels into the same renderer: nothing
     is left to do except the figure's ``stale`` flag, which print_figure's restores set
     and the redraw would clear.
   - **walk**: any other save (other dpi, tight bbox, layout engine, SVG/PDF, ...). We
     run upstream's own no-output draw (``Figure.draw`` with an Agg renderer at the
     figure's dpi inside ``renderer._draw_disabled()``, as ``draw_without_rendering``
     does), so every side effect of a draw on the artists (layout-engine positions,
     aspect/locator positions, tick objects, label positions, stale flags, draw_event)
     is exactly the stock one; only the rasterisation is skipped. The canvas is marked
     *pending*: its pixels are not the ones stock would hold.
   - **stock**: anything we cannot reason about calls the real ``draw_idle()``:
     a canvas other than a plain ``FigureCanvasAgg``, interactive mode, a toolbar,
     ``draw_event`` listeners (job code may count or react to draws), a Figure subclass
     or instance-level ``draw``/``draw_idle`` overrides, a draw already in progress.

2. Reading canvas pixels while pending (``canvas.buffer_rgba()``, ``tostring_argb()``,
   ``copy_from_bbox()``, ``restore_region()``, and the renderer's ``buffer_rgba()``,
   ``tostring_argb()``, ``restore_region()``) first performs the deferred render, so a
   job that saves and then grabs the pixels gets the stock bytes. Any real
   ``FigureCanvasAgg.draw`` (``fig.canvas.draw()``, the next PNG save) clears the mark.

Why this is safe headless: the worker uses the non-interactive Agg backend with no GUI
window; the redraw's pixels are never displayed, and every other effect of it is either
reproduced (walk) or provably already in place (skip). Output files are written inside
``print_figure``, before the redraw, so they never depend on it.

Caveat (documented, not handled): a job that, after ``plt.savefig``, *modifies* the
figure and then reads the canvas pixels *without* drawing (reading a knowingly stale
buffer) gets the pixels of the current figure rather than those of the savefig moment;
likewise for pixel reads/writes through the renderer's C-level methods
(``renderer.copy_from_bbox``, ``renderer.draw_*``) while pending.

Only matplotlib, numpy and the standard library are used.
"""

import ast
import functools
import hashlib
import inspect
import io
import os
import textwrap
import weakref

__all__ = ['install', 'uninstall', 'installed', 'check_assumptions', 'stats']

_ORIGINALS = {}          # (owner, name) -> original attribute, while installed
_INSTALLED = False
_PENDING = '_pyward_render_pending'   # attribute on canvas (-> renderer) and renderer (-> weakref canvas)
# Raster formats that FigureCanvasAgg renders through FigureCanvasAgg.draw on this very
# canvas (print_png/print_raw/print_rgba); anything else takes the walk path.
_PLAIN_FORMATS = frozenset({'png', 'raw', 'rgba'})
_SAVE_KWARGS = frozenset({'format', 'dpi', 'metadata', 'pil_kwargs', 'bbox_inches', 'pad_inches',
                          'bbox_extra_artists', 'transparent', 'facecolor', 'edgecolor',
                          'orientation', 'backend'})
_PENDING_CANVASES = weakref.WeakSet()
stats = {'skip': 0, 'walk': 0, 'stock': 0, 'flush': 0}

# sha256 (first 16 hex digits) of the AST (docstrings dropped) of the upstream functions
# whose exact code the logic below relies on or replicates. Any change to one of them
# (a matplotlib upgrade) makes check_assumptions fail, and the worker keeps stock
# behaviour until someone re-audits this module against the new code and updates a pin.
_PINS = {
    'Figure.savefig': '7c036cb5837d0721',
    'Figure.draw': 'd415e2f0b370331a',
    'FigureCanvasBase.print_figure': '2315b24fe59ce167',
    'RendererBase._draw_disabled': 'a0526a33eb151e9f',
    'FigureCanvasAgg.draw': 'b9123745724fd08e',
    'FigureCanvasAgg.get_renderer': 'e0517e9d57217841',
    'FigureCanvasAgg.print_raw': 'b07fde9d3365704e',
    'FigureCanvasAgg._print_pil': '507c961d6a555210',
}

_PYPLOT_SAVEFIG_BODY = """
fig = gcf()
res = fig.savefig(fname, **kwargs)
fig.canvas.draw_idle()
return res
"""

_DRAW_IDLE_BODY = """
if not self._is_idle_drawing:
    with self._idle_draw_cntx():
        self.draw(*args, **kwargs)
"""


# --- upstream objects -------------------------------------------------------------------

def _mods():
    import matplotlib
    import matplotlib.pyplot as pyplot
    from matplotlib import backend_bases, figure
    from matplotlib.backends import backend_agg
    return matplotlib, pyplot, backend_bases, figure, backend_agg


def _original(owner, name):
    """The upstream attribute, whether or not we are installed."""
    return _ORIGINALS.get((owner, name), owner.__dict__[name] if isinstance(owner, type)
                          else getattr(owner, name))


def _pinned_functions():
    _, _, backend_bases, figure, backend_agg = _mods()
    Canvas = backend_agg.FigureCanvasAgg
    return {
        'Figure.savefig': figure.Figure.savefig,
        'Figure.draw': figure.Figure.draw,
        'FigureCanvasBase.print_figure': backend_bases.FigureCanvasBase.print_figure,
        'RendererBase._draw_disabled': backend_bases.RendererBase._draw_disabled,
        'FigureCanvasAgg.draw': _original(Canvas, 'draw'),
        'FigureCanvasAgg.get_renderer': Canvas.get_renderer,
        'FigureCanvasAgg.print_raw': Canvas.print_raw,
        'FigureCanvasAgg._print_pil': Canvas._print_pil,
    }


def _function_ast(func):
    func = inspect.unwrap(func)
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise RuntimeError(f"render_once: cannot read the source of {func!r}")
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    node.body = body
    return node


def _ast_pin(func):
    return hashlib.sha256(ast.dump(_function_ast(func)).encode()).hexdigest()[:16]


def _body_is(func, expected):
    got = [ast.dump(s) for s in _function_ast(func).body]
    want = [ast.dump(s) for s in ast.parse(textwrap.dedent(expected)).body]
    return got == want


def _calls(func):
    """Attribute names called anywhere in func (e.g. {'print_figure', ...})."""
    names = set()
    for n in ast.walk(_function_ast(func)):
        if isinstance(n, ast.Call):
            f = n.func
            names.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, 'id', None))
    return names


# --- the replacement for pyplot.savefig -------------------------------------------------

def _stock_draw_idle(canvas):
    stats['stock'] += 1
    canvas.draw_idle()


def _resolved_format(canvas, fname, kwargs):
    # Mirrors FigureCanvasBase.print_figure (pinned above).
    fmt = kwargs.get('format')
    if fmt is None:
        if isinstance(fname, os.PathLike):
            fname = os.fspath(fname)
        if isinstance(fname, str):
            fmt = os.path.splitext(fname)[1][1:]
        if fmt is None or fmt == '':
            fmt = canvas.get_default_filetype()
    return fmt.lower() if isinstance(fmt, str) else None


def _has_animated(fig):
    # Axes.draw drops animated artists unless the canvas is saving: the save drew them,
    # the redraw would not.
    stack = list(fig.axes)
    while stack:
        ax = stack.pop()
        if ax.get_animated():
            return True
        for child in ax.get_children():
            if child.get_animated():
                return True
        stack.extend(ax.child_axes)
    return False


def _save_was_plain(fig, canvas, fname, kwargs, engine_before):
    """True when the save's own draw ran under exactly the redraw's conditions."""
    import matplotlib as mpl
    from matplotlib.layout_engine import PlaceHolderLayoutEngine
    from matplotlib import cbook
    if not _SAVE_KWARGS.issuperset(kwargs):
        return False
    if kwargs.get('backend') is not None:
        return False
    if _resolved_format(canvas, fname, kwargs) not in _PLAIN_FORMATS:
        return False
    dpi = mpl._val_or_rc(kwargs.get('dpi'), 'savefig.dpi')
    if isinstance(dpi, str) and dpi == 'figure':
        dpi = getattr(fig, '_original_dpi', fig.dpi)
    if isinstance(dpi, str) or dpi != fig.dpi:
        return False
    if mpl._val_or_rc(kwargs.get('bbox_inches'), 'savefig.bbox'):
        return False
    if mpl._val_or_rc(kwargs.get('transparent'), 'savefig.transparent'):
        return False
    for prop in ('facecolor', 'edgecolor'):
        if not cbook._str_equal(mpl._val_or_rc(kwargs.get(prop), f'savefig.{prop}'), 'auto'):
            return False
    for engine in (engine_before, fig.get_layout_engine()):
        if engine is not None and not isinstance(engine, PlaceHolderLayoutEngine):
            return False
    if canvas.device_pixel_ratio != 1:
        return False
    return not _has_animated(fig)


def _mark_pending(canvas, renderer):
    _PENDING_CANVASES.add(canvas)
    canvas.__dict__[_PENDING] = renderer
    renderer.__dict__[_PENDING] = weakref.ref(canvas)


def _clear_pending(canvas):
    _PENDING_CANVASES.discard(canvas)
    renderer = canvas.__dict__.pop(_PENDING, None)
    if renderer is not None:
        renderer.__dict__.pop(_PENDING, None)


def _flush(canvas):
    """Performs the render that a 'walk' deferred, before its pixels are read."""
    if canvas.__dict__.get(_PENDING) is not None:
        stats['flush'] += 1
        _clear_pending(canvas)
        _, _, _, _, backend_agg = _mods()
        _original(backend_agg.FigureCanvasAgg, 'draw')(canvas)


def _after_save(fig, fname, kwargs, engine_before):
    """Stands in for `fig.canvas.draw_idle()` at the end of pyplot.savefig."""
    matplotlib, _, _, figure, backend_agg = _mods()
    canvas = fig.canvas
    if (type(canvas) is not backend_agg.FigureCanvasAgg
            or type(fig) is not figure.Figure
            or canvas.toolbar is not None
            or canvas._is_idle_drawing
            or matplotlib.is_interactive()
            or canvas.callbacks.callbacks.get('draw_event')
            or 'draw' in fig.__dict__
            or 'draw' in canvas.__dict__ or 'draw_idle' in canvas.__dict__):
        _stock_draw_idle(canvas)
        return
    if _save_was_plain(fig, canvas, fname, kwargs, engine_before):
        # The save's draw left what the redraw would: same renderer, same pixels, same
        # artist state. Only the figure's stale flag, set again by print_figure's
        # restores (dpi, layout engine), would be cleared by Figure.draw.
        stats['skip'] += 1
        if fig.get_visible():
            fig.stale = False
        return
    # Upstream's no-output draw (Figure.draw_without_rendering, but with the renderer
    # FigureCanvasAgg.draw would use, inside draw_idle's idle-draw context).
    stats['walk'] += 1
    with canvas._idle_draw_cntx():
        renderer = canvas.get_renderer()
        canvas.renderer = renderer
        with renderer._draw_disabled():
            fig.draw(renderer)
    _mark_pending(canvas, renderer)


def _make_savefig(stock_savefig, pyplot):
    def savefig(fname, **kwargs):
        fig = pyplot.gcf()
        engine_before = fig.get_layout_engine()
        res = fig.savefig(fname, **kwargs)
        _after_save(fig, fname, kwargs, engine_before)
        return res
    functools.update_wrapper(savefig, stock_savefig)
    return savefig


# --- pixel readers ----------------------------------------------------------------------

def _canvas_reader(orig):
    @functools.wraps(orig)
    def reader(self, *args, **kwargs):
        if self.__dict__.get(_PENDING) is not None:
            _flush(self)
        return orig(self, *args, **kwargs)
    return reader


def _renderer_reader(orig):
    @functools.wraps(orig)
    def reader(self, *args, **kwargs):
        ref = self.__dict__.get(_PENDING)
        if ref is not None:
            canvas = ref()
            self.__dict__.pop(_PENDING, None)
            if canvas is not None and canvas.__dict__.get(_PENDING) is self:
                _flush(canvas)
        return orig(self, *args, **kwargs)
    return reader


def _renderer_clear(orig):
    @functools.wraps(orig)
    def clear(self):
        # A cleared buffer is the same whether or not the render was deferred.
        ref = self.__dict__.pop(_PENDING, None)
        if ref is not None:
            canvas = ref()
            if canvas is not None and canvas.__dict__.get(_PENDING) is self:
                _clear_pending(canvas)
        return orig(self)
    return clear


def _canvas_draw(orig):
    @functools.wraps(orig)
    def draw(self, *args, **kwargs):
        if _PENDING in self.__dict__:
            _clear_pending(self)
        return orig(self, *args, **kwargs)
    return draw


# --- checks -----------------------------------------------------------------------------

def _fail(msg):
    raise RuntimeError(f"render_once: {msg}; keeping matplotlib's stock savefig")


class _DrawCounter:
    """Counts Figure.draw calls (full renders vs no-output walks) on one figure, by
    wrapping the class attribute for the duration of the self-test."""

    def __init__(self, figure_cls):
        self.cls, self.orig = figure_cls, figure_cls.__dict__['draw']
        self.fig, self.counts = None, {'render': 0, 'walk': 0}

    def __enter__(self):
        orig, counter = self.orig, self

        @functools.wraps(orig)
        def draw(fig, renderer):
            if fig is counter.fig:
                counter.counts['walk' if 'draw_path' in vars(renderer) else 'render'] += 1
            return orig(fig, renderer)
        self.cls.draw = draw
        return self

    def __exit__(self, *exc):
        self.cls.draw = self.orig


def _self_test(pyplot, figure, backend_agg):
    """A tiny figure saved the stock way and the render-once way must match byte for byte,
    and stock must really redraw after the save (else there is nothing to remove)."""
    import numpy as np
    stock = _original(pyplot, 'savefig')
    once = _make_savefig(stock, pyplot)
    previous = pyplot.gcf() if pyplot.get_fignums() else None
    saved = dict(stats)
    try:
        for kwargs, path in (({'format': 'png'}, 'skip'),
                             ({'format': 'png', 'dpi': 30}, 'walk')):
            results = []
            for fn in (stock, once):
                fig = pyplot.figure(figsize=(2, 1.5), dpi=40)
                try:
                    if type(fig.canvas) is not backend_agg.FigureCanvasAgg:
                        _fail(f"pyplot figures get a {type(fig.canvas).__name__} canvas")
                    ax = fig.add_subplot()
                    ax.plot([0, 1, 2], [0, 1, 0])
                    buf = io.BytesIO()
                    with _DrawCounter(figure.Figure) as counter:
                        counter.fig = fig
                        fn(buf, **kwargs)
                    after = counter.counts
                    stale = fig.stale
                    _flush(fig.canvas)  # what the patched pixel readers do first
                    pixels = np.asarray(fig.canvas.buffer_rgba()).copy() \
                        if kwargs['format'] == 'png' else None
                    results.append((buf.getvalue(), after, stale, pixels))
                finally:
                    _clear_pending(fig.canvas)
                    pyplot.close(fig)
            (b0, c0, s0, p0), (b1, c1, s1, p1) = results
            fmt_renders = 1  # the save's own render (Agg or SVG renderer)
            if c0 != {'render': fmt_renders + 1, 'walk': 0}:
                _fail(f"stock pyplot.savefig({kwargs}) drew {c0}, expected the save's render "
                      "plus one draw_idle redraw")
            want = {'render': fmt_renders, 'walk': 0 if path == 'skip' else 1}
            if c1 != want:
                _fail(f"render-once savefig({kwargs}) drew {c1}, expected {want}")
            if b0 != b1:
                _fail(f"render-once savefig({kwargs}) changed the output bytes")
            if s0 != s1:
                _fail(f"render-once savefig({kwargs}) left figure.stale={s1}, stock {s0}")
            if p0 is not None and not np.array_equal(p0, p1):
                _fail(f"render-once savefig({kwargs}) left different canvas pixels")
    finally:
        stats.update(saved)
        if previous is not None and previous.number in pyplot.get_fignums():
            pyplot.figure(previous.number)


def check_assumptions(self_test=True):
    """Raises RuntimeError unless the upstream behaviour this module relies on holds for
    the installed matplotlib (static checks of the code, then a tiny render test)."""
    try:
        matplotlib, pyplot, backend_bases, figure, backend_agg = _mods()
    except Exception as exc:  # pragma: no cover - matplotlib missing or broken
        _fail(f"cannot import matplotlib: {exc!r}")
    if str(matplotlib.get_backend()).lower() != 'agg':
        _fail(f"the pyplot backend is {matplotlib.get_backend()!r}, not Agg")
    Canvas, Renderer = backend_agg.FigureCanvasAgg, backend_agg.RendererAgg
    # 1. pyplot.savefig is exactly "save, then canvas.draw_idle()": what we neutralise.
    if not _body_is(_original(pyplot, 'savefig'), _PYPLOT_SAVEFIG_BODY):
        _fail("pyplot.savefig is no longer `fig = gcf(); res = fig.savefig(...); "
              "fig.canvas.draw_idle(); return res`")
    # 2. Agg's draw_idle is the base one, which draws at once (no event loop).
    if 'draw_idle' in vars(Canvas) or not hasattr(backend_bases.FigureCanvasBase, 'draw_idle'):
        _fail("FigureCanvasAgg overrides draw_idle")
    if not _body_is(backend_bases.FigureCanvasBase.draw_idle, _DRAW_IDLE_BODY):
        _fail("FigureCanvasBase.draw_idle no longer calls self.draw() at once")
    # 3. Figure.savefig / print_figure do not redraw after writing the file themselves
    #    (print_figure's only Figure.draw is the no-output layout walk, pinned below).
    if {'draw_idle', 'draw'} & _calls(figure.Figure.savefig):
        _fail("Figure.savefig calls draw/draw_idle itself")
    if 'draw_idle' in _calls(backend_bases.FigureCanvasBase.print_figure):
        _fail("print_figure calls draw_idle itself")
    if 'print_figure' not in _calls(figure.Figure.savefig):
        _fail("Figure.savefig does not call canvas.print_figure")
    # 4. What the walk uses.
    if not callable(getattr(backend_bases.RendererBase, '_draw_disabled', None)) or \
            not callable(getattr(Canvas, '_idle_draw_cntx', None)):
        _fail("RendererBase._draw_disabled or FigureCanvasBase._idle_draw_cntx is gone")
    for owner, name in ((Canvas, 'draw'), (Canvas, 'buffer_rgba'), (Canvas, 'tostring_argb'),
                        (Canvas, 'copy_from_bbox'), (Canvas, 'restore_region'),
                        (Renderer, 'buffer_rgba'), (Renderer, 'tostring_argb'),
                        (Renderer, 'restore_region'), (Renderer, 'clear')):
        if not callable(_original(owner, name)):
            _fail(f"{owner.__name__}.{name} is missing")
    # 5. The exact code whose semantics the skip/walk decision mirrors.
    for label, func in _pinned_functions().items():
        got, pin = _ast_pin(func), _PINS.get(label)
        if got != pin:
            _fail(f"{label} changed (AST pin {got}, audited {pin}); re-audit render_once.py")
    # 6. The only effect of `canvas.is_saving()` on drawing is Axes.draw's animated filter.
    users = _is_saving_users(matplotlib)
    if users != {'axes/_base.py', 'animation.py', 'pyplot.py', 'widgets.py'}:
        _fail(f"canvas.is_saving() is now read by {sorted(users)}")
    if self_test:
        _self_test(pyplot, figure, backend_agg)


def _is_saving_users(matplotlib):
    root = os.path.dirname(matplotlib.__file__)
    users = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ('tests', '__pycache__', 'mpl-data')]
        for fn in filenames:
            if fn.endswith('.py'):
                path = os.path.join(dirpath, fn)
                with open(path, 'rb') as fh:
                    if b'is_saving()' in fh.read():
                        users.add(os.path.relpath(path, root).replace(os.sep, '/'))
    return users


# --- install / uninstall ----------------------------------------------------------------

def installed():
    return _INSTALLED


def install(self_test=True):
    """Checks the assumptions, then patches; idempotent. Raises RuntimeError (with nothing
    patched) when the installed matplotlib does not behave as audited."""
    global _INSTALLED
    if _INSTALLED:
        return
    check_assumptions(self_test=self_test)
    import sys
    _, pyplot, _, _, backend_agg = _mods()
    Canvas, Renderer = backend_agg.FigureCanvasAgg, backend_agg.RendererAgg
    stock_savefig = pyplot.savefig
    patches = [(pyplot, 'savefig', _make_savefig(stock_savefig, pyplot))]
    # `from matplotlib.pyplot import *` copies (matplotlib.pylab, pylab): patch the copies
    # that exist now; later imports copy the patched function.
    for name in ('matplotlib.pylab', 'pylab'):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, 'savefig', None) is stock_savefig:
            patches.append((mod, 'savefig', patches[0][2]))
    patches += [
        (Canvas, 'draw', _canvas_draw(Canvas.draw)),
        (Canvas, 'buffer_rgba', _canvas_reader(Canvas.buffer_rgba)),
        (Canvas, 'tostring_argb', _canvas_reader(Canvas.tostring_argb)),
        (Canvas, 'copy_from_bbox', _canvas_reader(Canvas.copy_from_bbox)),
        (Canvas, 'restore_region', _canvas_reader(Canvas.restore_region)),
        (Renderer, 'buffer_rgba', _renderer_reader(Renderer.buffer_rgba)),
        (Renderer, 'tostring_argb', _renderer_reader(Renderer.tostring_argb)),
        (Renderer, 'restore_region', _renderer_reader(Renderer.restore_region)),
        (Renderer, 'clear', _renderer_clear(Renderer.clear)),
    ]
    for owner, name, new in patches:
        _ORIGINALS[(owner, name)] = owner.__dict__[name] if isinstance(owner, type) \
            else getattr(owner, name)
        setattr(owner, name, new)
    _INSTALLED = True


def uninstall():
    """Restores every patched attribute; idempotent. Pending canvases are rendered first."""
    global _INSTALLED
    if not _INSTALLED:
        return
    for canvas in list(_PENDING_CANVASES):
        _flush(canvas)
    for (owner, name), orig in _ORIGINALS.items():
        setattr(owner, name, orig)
    _ORIGINALS.clear()
    _INSTALLED = False
