"""Warm-up, once per worker before the sandbox: the runtime rules stored, the scientific
stack imported and its guards installed, one figure rendered, the job's builtins and
injected names made, the warm state frozen for the state guard; and the steps of the
zygote and of a forked worker before their first job.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import builtins
import contextvars
import io
import os
import sys
import warnings


# --- warm-up ----------------------------------------------------------------------------

def warm_up(rules, src, out, tmp, preload_pandas, render_once=None, before_render_once=None,
            state_guard=None, one_shot=False, preload_loadmat=True, diagnose=None,
            figures=None, text_metrics=None, library_guards=None):
    """Imports the scientific stack, renders one figure, freezes the warm state."""
    global _RULES, _SRC, _OUT, _TMP, _SRC_REAL, _OUT_REAL, _TMP_REAL, _JOB_BUILTINS, _INJECTED, _INJECTED_ON_USE, _SAVED_WARNINGS
    global _CAPABILITY_IDS, _CAPABILITY_EXEMPT, _WARM_CONTEXT, _WARM_DECIMAL, _WARM_PROXIES
    global _DIAGNOSE, _FIGURES_MOD, _GUARDS
    _DIAGNOSE, _FIGURES_MOD = diagnose, figures
    _RULES = {
        'allowed_modules': frozenset(rules['allowed_modules']),
        'denied_modules': tuple(rules['denied_modules']),
        'module_members': {m: frozenset(names) for m, names in rules['module_members'].items()},
        'banned_attributes': frozenset(rules['banned_attributes']),
        'banned_builtins': frozenset(rules['banned_builtins']),
        'banned_attribute_prefixes': tuple(rules.get('banned_attribute_prefixes', ())),
        'guarded_setting_prefixes': tuple(rules.get('guarded_setting_prefixes', ())),
        'allowed_dunder_reads': frozenset(rules.get('allowed_dunder_reads', ())),
        'reviewed_paths': frozenset(rules.get('reviewed_paths', ())),
        # Builtins are refused by name (banned_builtins), never wholesale: `str` and
        # `int` are no capability.
        'capability_modules': frozenset(m.lstrip('_') for m in rules['capability_modules'])
        - {'builtins'},
    }
    _SRC, _OUT, _TMP = src, out, tmp
    _SRC_REAL = os.path.realpath(src)
    _OUT_REAL = os.path.realpath(out)
    _TMP_REAL = os.path.realpath(tmp)
    _install_os_path()
    _install_pathlib()
    _install_sys_view()
    _install_logging()
    _install_argparse()

    import numpy
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    # Before anything measures or renders text: the font names desktop code asks for,
    # and CJK glyphs from an installed CJK font (python/prelude/fonts.py). On any doubt
    # (matplotlib's font manager changed), stock fonts: a matplotlib upgrade must cost
    # glyphs, never the pool.
    try:
        _install_fonts()
    except Exception as exc:
        print(f'pyward: desktop font names and the CJK fallback off: {type(exc).__name__}: '
              f'{_truncate(str(exc), 300)}', file=sys.stderr)
    if preload_loadmat:
        import scipy.io  # noqa: F401  (injected as `loadmat`: see _injected_globals)
    if before_render_once:
        # Tests only (ExecutorBuilder::warm_up_code_for_testing): breaks matplotlib on
        # purpose to prove that render-once falls back instead of failing warm-up.
        exec(compile(before_render_once, '<warm-up test code>', 'exec'), {})
    render_once_off = None if render_once is not None else 'not requested'
    if render_once is not None:
        # Checks that matplotlib still behaves as the patch assumes (and renders a test
        # figure both ways). On any doubt, any exception at all (a private name moved:
        # AttributeError, ImportError; no installed sources: OSError), the worker keeps
        # stock savefig: a matplotlib upgrade must cost speed, never the pool.
        render_once_off = _try_render_once(render_once, 'install')
    if 'openpyxl' in _RULES['allowed_modules']:
        # The MIME tables openpyxl extends when it is imported: read here from the
        # system's files, which the sandbox closes (a one-shot worker, or one without
        # pandas, imports openpyxl when its job does; a pool's template imports it below).
        import mimetypes
        mimetypes.init()
    if preload_pandas:
        import pandas  # noqa: F401  (injected as `pd`: see _injected_globals)
        if not one_shot and 'seaborn' in _RULES['allowed_modules']:
            # Built on pandas; in the template so that a job's `import seaborn` costs
            # nothing and its module state is guarded from the start. (A one-shot
            # worker imports it when its job does.) Its objects interface too: its
            # classes keep a theme of their own (`Plot.config.theme`), which the state
            # guard can restore only when the template holds it.
            import seaborn  # noqa: F401
            import seaborn.objects  # noqa: F401
            # Imported by pandas on first use of DataFrame.to_dict, which seaborn's
            # categorical plots call: a module new to the template retires the worker.
            import pandas.core.methods.to_dict  # noqa: F401
        if not one_shot:
            # What printing a frame and DataFrame.to_markdown() import on first use (a
            # new module retires the worker that ran the job): model code prints its
            # tables these ways.
            import pandas.io.formats.string  # noqa: F401
            import tabulate  # noqa: F401
    # Small pure modules model code imports: in the template, so a job importing
    # them adds no module (a new module with state of its own retires the worker).
    for name in ('colorsys', 'calendar', 'pprint', 'glob', 'logging', 'traceback', 'difflib',
                 'fnmatch', 'base64', 'html', 'hashlib', 'uuid', 'contextlib', 'argparse',
                 'zoneinfo'):
        if name in _RULES['allowed_modules']:
            __import__(name)
    # The answers the job's `platform` view gives are cached by the module on first
    # use: filled here, so a job's first call changes no module state.
    if 'platform' in _RULES['allowed_modules']:
        import platform
        platform.uname(), platform.python_version(), platform.python_implementation()
    # What C code imports on first use while a job's frame is current (its import goes
    # through the job's `__import__`, which lets through only modules already loaded):
    # `datetime.strptime` and `time.strptime` import `_strptime`.
    import _strptime  # noqa: F401

    _install_memory_savefig()
    _install_open()
    _install_shutil()
    if 'ace_tools' in _RULES['allowed_modules']:
        _install_ace_tools()
    if 'IPython' in _RULES['allowed_modules']:
        _install_ipython_display()
    if preload_pandas and 'openpyxl' in _RULES['allowed_modules']:
        if one_shot:
            # Its job imports the rest when it uses it (openpyxl's saving is set up when
            # it is loaded, below); its workbooks must still come out as a pool's do.
            _install_workbook_reader()
        else:
            _warm_spreadsheets()
    # Writers not in the template (a one-shot worker, or one without pandas): set up
    # when first loaded, so that their workbooks come out as a pool's do.
    if 'openpyxl' in _RULES['allowed_modules'] and 'openpyxl' not in sys.modules:
        _install_on_load('openpyxl', _install_workbook_saving)
    if 'xlsxwriter' in _RULES['allowed_modules'] and 'xlsxwriter' not in sys.modules:
        _install_on_load('xlsxwriter', _install_xlsxwriter)
    _install_raw_png()
    _install_figure_notes()
    _install_formatter_check()
    # Library functions that would act for the job with a reach of their own (pandas'
    # expression engine, string dispatch, np.load's pickles, host details, backends
    # imported by name): checked versions, before the state guard's snapshot. See
    # python/library_guards/.
    if library_guards is not None:
        library_guards.configure(_exact_str, _attribute_refusal, _module_allowed,
                                 (_ModuleProxy, _ImportedOnUse),
                                 _RULES['guarded_setting_prefixes'])
        library_guards.install()
        _GUARDS = library_guards
    # On SIGUSR1 (sent by the supervisor when a job's deadline passes, just before the
    # kill) the main thread's Python stack goes to stderr, written by a C signal
    # handler: the timeout's feedback then says which line and loop were running.
    import faulthandler
    import signal
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=False)

    try:
        if not one_shot:
            # A one-shot worker's job fills these caches itself.
            warm_render()
    except Exception as exc:
        if render_once_off is not None:
            raise
        # Passed its self-test but broke a real render: stock savefig, then try again.
        render_once_off = f'the warm-up render failed with it: {type(exc).__name__}: {exc}'
        _try_render_once(render_once, 'uninstall')
        warm_render()
    text_metrics_count, text_metrics_off = 0, None
    if text_metrics is not None:
        # Frozen now, before the state snapshot and the freeze of the warm heap: no job
        # ever adds to them (see python/text_metrics.py). On any doubt, stock measuring.
        try:
            text_metrics_count = text_metrics.install()
        except Exception as exc:
            text_metrics_off = f'{type(exc).__name__}: {_truncate(str(exc), 300)}'
            print(f'pyward: frozen text metrics off, stock measuring kept: {text_metrics_off}',
                  file=sys.stderr)
            try:
                text_metrics.uninstall()
            except Exception:
                pass

    # SVG element ids come from a salted hash; a fixed salt makes SVG output reproducible.
    matplotlib.rcParams['svg.hashsalt'] = 'pyward'
    _snapshot_rc()
    _SAVED_WARNINGS = list(warnings.filters)

    curated = dict(builtins.__dict__)
    for name in rules['banned_builtins']:
        curated.pop(name, None)
    for name in ('__loader__', '__spec__', '__package__', 'exit', 'quit'):
        curated.pop(name, None)
    # exit() and quit() as a script's last word: sys.exit's stand-in ends the job.
    curated['exit'] = curated['quit'] = _sys_exit
    curated['__import__'] = _guarded_import
    curated['open'] = _job_open
    curated['getattr'] = _curated_getattr
    curated['hasattr'] = _curated_hasattr
    _JOB_BUILTINS = curated

    _CAPABILITY_IDS, _CAPABILITY_EXEMPT = _collect_capability_ids(rules['capability_exempt'])
    _INJECTED, _INJECTED_ON_USE = _injected_globals(rules['injected'])
    if _GUARDS is not None:
        # After the capability identities are collected from them, before the state
        # guard's snapshot of sys.modules (src/worker/audit.rs: UNIMPORTABLE).
        _GUARDS.seal(rules.get('unimportable', ()), rules.get('unimportable_kept', ()))

    # Every job runs in a copy of this context: what it sets in a context variable
    # (numpy's error state and print options, a decimal context) dies with the copy.
    _WARM_CONTEXT = contextvars.copy_context()
    if 'decimal' in sys.modules:
        _WARM_DECIMAL = sys.modules['decimal'].getcontext().copy()
    # Each job starts from a copy of the views warm-up made (run_job), and the name is
    # bound back to these when it ends: the views a job makes die with it.
    _WARM_PROXIES = _PROXIES
    if state_guard is not None:
        # Last: the prelude's own state is guarded too (state_guard/tables.py,
        # OWN_MODULES). The guard itself is kept by the worker, never here: a job
        # reaches this module's globals, and must not reach the template.
        state_guard.snapshot(_module_allowed, skip=[matplotlib.rcParams])

    if not one_shot:
        # Nothing of the warm state is collected or written by a later collection:
        # pages stay shared with the zygote's forks.
        import gc
        gc.collect()
        gc.freeze()
    return {
        'python': sys.version.split()[0],
        'numpy': numpy.__version__,
        'matplotlib': matplotlib.__version__,
        'render_once': render_once_off is None,
        'render_once_off': render_once_off,
        'text_metrics': text_metrics_count,
        'text_metrics_off': text_metrics_off,
    }


def _try_render_once(module, action):
    """Runs render-once's install (or uninstall); returns why it is off, None if on."""
    try:
        getattr(module, action)()
        return None
    except Exception as exc:
        reason = f'{type(exc).__name__}: {_truncate(str(exc), 300)}'
        print(f'pyward: render-once disabled, stock savefig kept: {reason}', file=sys.stderr)
        try:
            module.uninstall()
        except Exception:
            pass
        return reason


def close_imports():
    """Right before the audit hook is armed (src/worker/mod.rs): the modules nothing
    imports from now on leave sys.modules again and a finder refusing them heads
    sys.meta_path (python/library_guards/)."""
    if _GUARDS is not None:
        _GUARDS.close_imports()


def release_files():
    """In the zygote, before it forks workers: closes the font files matplotlib keeps
    open. A forked worker closes every descriptor it inherits; a cached font object
    would then read from a closed descriptor (``RuntimeError: failed to load glyph``),
    or from whatever file the worker later opens under the same number. The supervisor
    checks afterwards that no descriptor is left (see ``worker::fork``)."""
    import gc
    from matplotlib import font_manager, mathtext
    for cache in (getattr(font_manager, '_get_font', None),
                  getattr(getattr(mathtext, 'MathTextParser', None), '_parse_cached', None)):
        clear = getattr(cache, 'cache_clear', None)
        if clear is not None:
            clear()
    # Frozen objects are never collected: thaw, collect, freeze again.
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def warm_render():
    """One real render at warm-up: fills the font cache, the mathtext parser and Agg's
    state before the warm heap is frozen."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
    ax.plot([0, 1, 2], [0, 1, 0], label='warm')
    ax.scatter([0, 1], [1, 0])
    ax.set_title(r'warm-up $\alpha$')
    ax.legend()
    fig.savefig(io.BytesIO(), format='png')
    plt.close('all')


def prewarm():
    """In a worker forked for `Isolation::Fresh`, before `Ready`: the smallest render
    that pays what a first job would otherwise pay on its latency (matplotlib empties
    its font cache in a forked child; a render takes the copy-on-write faults of Agg,
    ticks and text). Measured in a forked child (typical figure, job latency vs a reused
    worker / CPU of the prewarm): nothing 1.47x / 0 ms; this line plot 1.16x / 18 ms;
    the full warm-up render with mathtext, legend and a PNG 1.12x / 35 ms."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
    ax.plot([0, 1, 2], [0, 1, 0])
    fig.canvas.draw()
    plt.close('all')


def rebind(src, out, tmp, home):
    """In a worker forked from the zygote: points the job namespace at this slot's dirs.

    The zygote warmed up with directories of its own; everything that names SRC, OUT or
    TMP reads these globals, so this is all a forked child needs before its sandbox
    (whose Landlock rules name the slot's directories) goes on.
    """
    global _SRC, _OUT, _TMP, _SRC_REAL, _OUT_REAL, _TMP_REAL
    _SRC, _OUT, _TMP = src, out, tmp
    _SRC_REAL = os.path.realpath(src)
    _OUT_REAL = os.path.realpath(out)
    _TMP_REAL = os.path.realpath(tmp)
    if home:
        os.environ['HOME'] = home
    os.environ['TMPDIR'] = tmp
    tempfile = sys.modules.get('tempfile')
    if tempfile is not None:
        tempfile.tempdir = None
    os.chdir(tmp)
