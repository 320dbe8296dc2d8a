"""Process-wide state between jobs (`Isolation::Reuse`): what allowlisted code can change
outside a job's own globals, snapshotted at warm-up and checked after every job.

A job can register something in a library registry (a colormap, a scale, a unit
converter, a font, a pandas accessor), edit a module-level or class-level table
(`mcolors.CSS4_COLORS`, `plt.style.library`, `Legend.get_default_handler_map()`,
`MaxNLocator.default_params`), set a library option (`pd.set_option`), rebind a
library global or patch a library class (`type(fig).savefig = f`). The next job on the
same worker would see it: a channel between tenants, a job's code running inside later
jobs, or a silently wrong figure. This module closes that by mechanism, not per key:

- At warm-up, `snapshot()` walks every module of the allowlisted packages in
  `sys.modules` (private ones included: `pandas._config.config`, `matplotlib._api`),
  their C accelerators (`_decimal`, `_csv`, ...), the few stdlib modules whose state
  they use on a job's behalf (`STATE_MODULES`) and pyward's own modules (`OWN_MODULES`:
  a job reaches them through the functions it is given), and every class found in them. It
  records, *by identity* (never `==`: a job's objects may not be comparable, and
  comparing could run job code), the contents of
  - every mutable container (dict, list, set) held by a module or class attribute, one
    level into containers and plain objects found there, and in functions' defaults;
  - the slots of pyward's own objects found there (a module's view holds its module in
    one: `object.__setattr__` writes it, and no audit event reports that), and what the
    closure cells of the functions found there hold (a decorator's wrapped function:
    `cell_contents` is as writable, as unreported), and the containers they hold (a
    function's cache: scipy's LAPACK functions by dtype); what a `functools.partial`
    found there calls (`__setstate__` replaces it in place); what the properties,
    classmethods and staticmethods of the swept classes wrap (their `__init__` can be
    called again on the library's own object);
  - every module namespace (a rebound library global: `nanops._USE_BOTTLENECK`,
    `warnings.showwarning`);
  - every class namespace (a patched method, a replaced class-level table);
  - the registries kept in C or behind an API (`CUSTOM`: csv dialects, pandas' whole
    option tree, decimal's template contexts, the locale, the environment, the global
    random generators, ABC registrations, interpreter hooks, threads).
- After each job, `check()` compares (in Rust, through borrowed references and dicts'
  version tags: see src/worker/cpython.rs). A registry that changed is restored exactly
  (the template's objects put back: a job's entry in a cache or a table is dropped, a
  rebound global or a patched method is bound back), and named when it cannot be. When
  a restore dropped anything but plain values, the garbage is collected (descriptors a
  job kept in a table close now) and everything is compared once more (a finalizer may
  have run). What still differs, a registration made by a module the job imported first
  that the restore had to undo (outside `IMPORT_TABLES`), and a newly imported module
  with state of its own are reported: the supervisor retires the worker (reason
  `state_changed`; a fork from the zygote, ~10 ms).
- At the worker's birth (`rebase`), what its own set-up changed since warm-up becomes
  the template; after each reset the worker also compares the descriptors and scratch
  space it holds with its birth (src/worker/held.rs, with `font_files` and
  `release_font_files` here).
- Exclusions (`EXCLUDED`, `_excluded_instance`, `NOT_SWEPT`) are listed with their reason
  each; `registries()` reports them with everything guarded, for the tests
  (tests/it/cross_job_state.rs, tests/data/guard_coverage.py).
- `functools` caches are not guarded. Clearing the ones a job grew was tried and broke
  font rendering in sandboxed workers (matplotlib keeps objects from several caches
  alive together); a cache can carry state only through a cached mutable value that a
  job reaches and changes, which `Isolation::Fresh` rules out.
- Context variables (numpy's error state and print options, decimal contexts) need no
  check of their own: each job runs in a copy of the warm-up context (see
  prelude.run_job); their *defaults* (numpy's default print options dict) are
  module-level containers and guarded as such.

`check()` never raises: anything unexpected is itself a reported change.

The module is these files, run in this order into one namespace (src/worker/modules.rs):
state_guard/tables.py (this file: the reviewed tables, what is guarded, excluded and
why), state_guard/custom_state.py (state kept in C or behind an API, each with its own
snapshot, comparison and restore), state_guard/sweep.py (the warm snapshot) and
state_guard/check.py (the check after every job).
"""

import sys
import types

# Private registries that public functions write to, with the function that reaches
# them. (Module- and class-level containers are found by the sweep and need no entry;
# these are the ones held deeper, by an instance or an attribute of one.)
EXTRA_REGISTRIES = [
    ('matplotlib.scale._scale_mapping', 'matplotlib.scale.register_scale'),
    ('matplotlib.colors._colors_full_map', 'matplotlib.colors.get_named_colors_mapping() returns it'),
    ('matplotlib.colors._colors_full_map.cache', 'the named-colour lookup cache'),
    ('matplotlib.colormaps._cmaps', 'matplotlib.colormaps.register'),
    ('matplotlib.color_sequences._color_sequences', 'matplotlib.color_sequences.register'),
    ('matplotlib.projections.projection_registry._all_projection_types',
     'matplotlib.projections.register_projection'),
    ('matplotlib.font_manager.fontManager.ttflist', 'fontManager.addfont'),
    ('matplotlib.font_manager.fontManager.afmlist', 'fontManager.addfont'),
    ('matplotlib.units.registry', 'unit converters (pandas.plotting.register_matplotlib_converters)'),
    ('matplotlib.RcParams.validate', 'rcParams validators (rcParams.validate is a public dict)'),
    ('pandas._config.config._global_config', 'pandas.set_option and pd.options'),
    ('pandas._config.config._registered_options', 'pandas options and their validators'),
    ('pandas.core.dtypes.base._registry.dtypes', 'pandas.api.extensions.register_extension_dtype'),
    ('warnings.filters', 'warning filters (also restored by the reset)'),
    ('matplotlib.backend_bases._default_backends', 'matplotlib.backend_bases.register_backend'),
    ('matplotlib.legend.Legend._default_handler_map', 'Legend.get_default_handler_map() returns it'),
    ('matplotlib.ticker.MaxNLocator.default_params', 'a class-level dict of defaults'),
    ('sys.meta_path', 'import finders: one added would run inside every later import'),
    ('sys.path_hooks', 'import path hooks'),
    ('sys.path', 'where imports look'),
]

# Every public function of an allowed module that registers or installs something
# process-wide, and what covers it. `discover_registrars()` finds such functions by name;
# tests/it/state_guard.rs fails when one appears that is not reviewed here.
REGISTRARS = {
    'csv.register_dialect': 'CUSTOM: csv dialects',
    'csv.unregister_dialect': 'CUSTOM: csv dialects',
    'matplotlib.backend_bases.get_registered_canvas_class': 'reads only',
    'matplotlib.backend_bases.register_backend': 'EXTRA: matplotlib.backend_bases._default_backends',
    'matplotlib.backend_tools.add_tools_to_container': 'GUI toolbars; workers have none',
    'matplotlib.backend_tools.add_tools_to_manager': 'GUI toolbars; workers have none',
    'matplotlib.colors.ColorSequenceRegistry.register': 'EXTRA: matplotlib.color_sequences._color_sequences',
    'matplotlib.colors.ColorSequenceRegistry.unregister': 'EXTRA: matplotlib.color_sequences._color_sequences',
    'matplotlib.cm.ColormapRegistry.register': 'EXTRA: matplotlib.colormaps._cmaps',
    'matplotlib.cm.ColormapRegistry.unregister': 'EXTRA: matplotlib.colormaps._cmaps',
    'matplotlib.font_manager.FontManager.addfont': 'EXTRA: fontManager.ttflist and afmlist',
    'matplotlib.projections.ProjectionRegistry.register': 'EXTRA: projection_registry',
    'matplotlib.projections.register_projection': 'EXTRA: projection_registry',
    'matplotlib.pyplot.install_repl_displayhook': 'banned attribute (interpreter hooks)',
    'matplotlib.pyplot.uninstall_repl_displayhook': 'undoes a hook that workers never install',
    'matplotlib.scale.register_scale': 'EXTRA: matplotlib.scale._scale_mapping',
    'numpy.lib.add_docstring': 'banned attribute (docstrings of C objects are process-wide)',
    'numpy.lib.add_newdoc': 'banned attribute (docstrings of C objects are process-wide)',
    'pandas._libs.tslibs.np_datetime.add_overflowsafe': 'arithmetic, registers nothing',
    'pandas.api.extensions.register_dataframe_accessor': 'CLASS: pandas.DataFrame',
    'pandas.api.extensions.register_extension_dtype': 'EXTRA: pandas.core.dtypes.base._registry.dtypes',
    'pandas.api.extensions.register_index_accessor': 'CLASS: pandas.Index',
    'pandas.api.extensions.register_series_accessor': 'CLASS: pandas.Series',
    'pandas.core.config_init.register_converter_cb': 'option callback; EXTRA: matplotlib.units.registry',
    'pandas.core.config_init.register_plotting_backend_cb': 'option callback; the option is a denied setting',
    'pandas.core.dtypes.base.Registry.register': 'EXTRA: pandas.core.dtypes.base._registry.dtypes',
    'pandas.plotting.deregister': 'EXTRA: matplotlib.units.registry',
    'pandas.plotting.register': 'EXTRA: matplotlib.units.registry',
    'pandas.set_option': 'CUSTOM: pandas options (the whole option tree)',
    'posix.register_at_fork': "os: a job's os is a view holding path only (never reached)",
    'scipy.fft._backend.register_backend': 'CUSTOM: scipy.fft backends (uarray)',
    'shutil.register_archive_format': "a job's shutil is a view of its copies and rmtree (never reached); the sweep guards shutil._ARCHIVE_FORMATS",
    'shutil.register_unpack_format': "a job's shutil is a view of its copies and rmtree (never reached); the sweep guards shutil._UNPACK_FORMATS",
    'shutil.unregister_archive_format': "a job's shutil is a view of its copies and rmtree (never reached); the sweep guards shutil._ARCHIVE_FORMATS",
    'shutil.unregister_unpack_format': "a job's shutil is a view of its copies and rmtree (never reached); the sweep guards shutil._UNPACK_FORMATS",
    'pandas.reset_option': 'CUSTOM: pandas options (the whole option tree)',
}

# Names that look like registering (matched on public names by discover_registrars).
_REGISTRAR_NAME = ('register', 'addfont', 'set_option', 'add_', 'install')

# Modules outside the allowlist whose state allowed code keeps or reads on a job's
# behalf: swept like the allowed ones. (`_x`, the C accelerator of an allowed `x`, is
# swept too: `_decimal`, `_csv`, `_json`, `_warnings`, ...)
STATE_MODULES = (
    'builtins',          # every library's builtins: a rebound `open` or `len` reaches all code
    'copyreg',           # copy.copy/deepcopy reducers (copy.dispatch_table is copyreg's)
    'locale',            # _override_localeconv; the C locale itself is CUSTOM
    '_strptime',         # time.strptime / datetime.strptime caches (hold format strings)
    '_collections_abc',  # collections.abc's classes live here
    '_pyward_ipython',   # the job's IPython and IPython.display (python/prelude/job_paths.py)
    '_pyward_ipython_display',
)

# pyward's own modules in the worker: a job reaches their objects (a function's
# `__globals__`, with the gate off; a library's real `sys.modules`), and their state
# decides what every later job gets (the rules, the views, the stand-ins). Swept as the
# allowed modules are; what the prelude binds for one job it binds back to its warm
# object when the job ends (python/prelude/one_job.py), so an ordinary job leaves them
# as they were. The state guard's own module is not among them: the worker holds it,
# out of every module's reach (src/worker/modules.rs, `unlist`).
OWN_MODULES = ('_pyward_prelude', '_pyward_library_guards', '_pyward_render_once',
               '_pyward_text_metrics', '_pyward_figures', '_pyward_diagnose')

# Containers not guarded, each with the reason. Matched on the first label the sweep
# gives a container (module attribute, then class attribute, then nested).
EXCLUDED = {
    'matplotlib.rcParams': 'restored whole after every job by the prelude (_restore_rc)',
}
_SKIPPED = 'restored by the prelude after every job (passed to snapshot as skip)'

# Allowlisted packages whose namespace the sweep does not walk: a job reaches them only
# through a view of pyward's own members, and their namespace is the interpreter's.
VIEW_ONLY_MODULES = {
    'sys': "a job's view holds pyward's exit and streams and immutable facts (version, "
           'maxsize); sys.modules, sys.path and the import hooks are judged as before',
    'logging': "a job's view holds pyward's per-job loggers and the level numbers; the real "
               "module's manager and loggers are the libraries' (see NOT_SWEPT)",
    'traceback': "a job's view holds pyward's formatting of the job's own frames",
    'glob': "a job's view holds pyward's glob over the job's files",
}

# State the sweep leaves out on purpose (not met by it), reported with the exclusions.
NOT_SWEPT = {
    'sys.modules': 'modules a job imports are judged by _new_module_state: one with state '
                   'of its own retires the worker',
    'sys.path_importer_cache': "the import system's cache of finders by directory, filled by "
                               'first imports; the finders come from sys.path_hooks, guarded',
    'functools caches': 'see the module docs (clearing them broke font rendering)',
    'numpy arrays held by modules': 'contents of arrays are not containers: comparing them '
                                    'costs their size; none is a registry',
    'logging': "loggers are reached through library attributes (matplotlib._log): their "
               "__dict__ and handler lists are guarded as plain instances; the logging "
               "manager's logger table is not",
}

# Tables that modules fill at their import, where undoing the entries of a module a job
# imported first is harmless (so the worker is not retired for it), with the reason.
# Anywhere else, an import's registration undone by the reset retires the worker.
IMPORT_TABLES = {
    'typing._overload_registry': 'read only by typing.get_overloads, which no library calls',
    'matplotlib._api.deprecation.DECORATORS': 'read only while pyplot builds its wrappers, at '
                                              'its own import (done at warm-up)',
    'scipy._lib._array_api.xp_capabilities_table': "read only by scipy's test and docs helpers",
    'matplotlib.backend_bases._default_backends': 'a format resolves to its canvas class on first '
                                                  'use; undone, the next save resolves it again',
}

# Module namespace entries a job's ordinary work adds, accepted into the template (not
# removed) when they appear.
def _accepted_addition(module_name, key, value):
    """A submodule bound on its parent by its first import (the import system does
    this only once: removing it would leave `parent.child` unreachable while
    `sys.modules` holds the child). Whether the new module itself holds state is judged
    by `_new_module_state`."""
    return (type(key) is str and isinstance(value, types.ModuleType)
            and sys.modules.get(f'{module_name}.{key}') is value)


def discover_registrars(allowed):
    """Qualified names of public functions (and methods of public module-level objects)
    of loaded allowlisted modules whose names say they register or install something."""
    def looks(name):
        return not name.startswith('_') and any(
            name.startswith(p) if p.endswith('_') else p in name for p in _REGISTRAR_NAME)
    found = set()
    for name in _public_module_names(allowed):
        for attr, value in list(vars(sys.modules[name]).items()):
            if attr.startswith('_'):
                continue
            if callable(value) and not isinstance(value, type) and looks(attr):
                where = getattr(value, '__module__', None) or name
                # `_csv.register_dialect` is csv's: name C helpers by their module.
                found.add(f"{where.lstrip('_')}.{getattr(value, '__qualname__', attr)}")
            elif _plain_instance(value):
                cls = type(value)
                for m in dir(cls):
                    if looks(m) and callable(getattr(cls, m, None)):
                        found.add(f'{cls.__module__}.{cls.__qualname__}.{m}')
    return sorted(found)


# Library classes that must be among the guarded ones (the sweep finds every class of
# the allowed modules; these are the ones jobs use most, checked by the tests).
GUARDED_CLASSES = [
    'matplotlib.figure.Figure', 'matplotlib.figure.FigureBase', 'matplotlib.figure.SubFigure',
    'matplotlib.axes.Axes', 'matplotlib.axes._base._AxesBase', 'matplotlib.artist.Artist',
    'matplotlib.lines.Line2D', 'matplotlib.text.Text', 'matplotlib.patches.Patch',
    'matplotlib.patches.Rectangle', 'matplotlib.collections.Collection',
    'matplotlib.image.AxesImage', 'matplotlib.axis.Axis', 'matplotlib.axis.XAxis',
    'matplotlib.axis.YAxis', 'matplotlib.legend.Legend', 'matplotlib.colors.Colormap',
    'matplotlib.colors.Normalize', 'matplotlib.markers.MarkerStyle', 'matplotlib.ticker.Formatter',
    'matplotlib.ticker.ScalarFormatter', 'matplotlib.ticker.Locator', 'matplotlib.ticker.AutoLocator',
    'matplotlib.ticker.MaxNLocator',
    'matplotlib.backend_bases.FigureCanvasBase', 'matplotlib.backends.backend_agg.FigureCanvasAgg',
    'matplotlib.backends.backend_agg.RendererAgg', 'matplotlib.RcParams', 'matplotlib.dates.DateConverter',
    'pandas.DataFrame', 'pandas.Series', 'pandas.Index', 'pandas.core.generic.NDFrame',
    'pandas.DatetimeIndex', 'pandas.plotting.PlotAccessor',
]
