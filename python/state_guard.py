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
  their C accelerators (`_decimal`, `_csv`, ...) and the few stdlib modules whose state
  they use on a job's behalf (`STATE_MODULES`), and every class found in them. It
  records, *by identity* (never `==`: a job's objects may not be comparable, and
  comparing could run job code), the contents of
  - every mutable container (dict, list, set) held by a module or class attribute, one
    level into containers and plain objects found there, and in functions' defaults;
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
"""

import enum
import gc
import re
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
)

# Containers not guarded, each with the reason. Matched on the first label the sweep
# gives a container (module attribute, then class attribute, then nested).
EXCLUDED = {
    'matplotlib.rcParams': 'restored whole after every job by the prelude (_restore_rc)',
}
_SKIPPED = 'restored by the prelude after every job (passed to snapshot as skip)'

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


# --- registries kept in C or behind an API ------------------------------------------
#
# (label, module that must be loaded, snapshot() -> saved, same(saved) -> bool,
#  restore(saved) or None when the registry cannot be restored: a change retires).

def _csv_snapshot():
    import csv
    return {n: csv.get_dialect(n) for n in csv.list_dialects()}


def _csv_restore(saved):
    import csv
    for n in csv.list_dialects():
        if n not in saved:
            csv.unregister_dialect(n)
    for n, dialect in saved.items():
        if n not in csv.list_dialects() or csv.get_dialect(n) is not dialect:
            csv.register_dialect(n, dialect)


def _csv_same(saved):
    import csv
    names = csv.list_dialects()
    return len(names) == len(saved) and all(csv.get_dialect(n) is saved.get(n) for n in names)


def _option_tree():
    """pandas' option storage: (dotted path, dict) for every dict of the tree."""
    from pandas._config import config
    found, todo = [], [('', config._global_config)]
    while todo:
        path, d = todo.pop()
        found.append((path, d))
        for k, v in dict.items(d):
            if type(v) is dict:
                todo.append((f'{path}.{k}' if path else k, v))
    return found


def _option_leaf(root, key):
    """The dict holding option `key` and its last name; (None, None) when the tree no
    longer has that shape."""
    *parents, last = key.split('.')
    d = root
    for p in parents:
        d = dict.get(d, p)
        if type(d) is not dict:
            return None, None
    return d, last


_MISSING = object()


def _pandas_snapshot():
    """Every registered option (walked from `_registered_options`, not listed here)
    with its template value. The tree's dicts are also guarded as containers (see
    `_sweep`), which restores them; this is the registry-level check that every option
    reads its template value."""
    from pandas._config import config
    root = config._global_config
    values = {}
    for key in sorted(config._registered_options):
        d, last = _option_leaf(root, key)
        if d is not None:
            values[key] = dict.get(d, last, _MISSING)
    return {'root': root, 'values': values}


def _pandas_same(saved):
    from pandas._config import config
    root = config._global_config
    if root is not saved['root'] or len(config._registered_options) != len(saved['values']):
        return False
    for key, value in saved['values'].items():
        d, last = _option_leaf(root, key)
        if d is None or dict.get(d, last, _MISSING) is not value:
            return False
    return True


def _pandas_restore(saved):
    """Puts each template value back where it is stored, quietly: no validator and no
    callback runs (what callbacks changed is a library global or registry, restored by
    its own guard), and no deprecation warning is shown."""
    root = saved['root']
    for key, value in saved['values'].items():
        d, last = _option_leaf(root, key)
        if d is not None and value is not _MISSING and dict.get(d, last, _MISSING) is not value:
            dict.__setitem__(d, last, value)


_CONTEXT_FIELDS = ('prec', 'rounding', 'Emin', 'Emax', 'capitals', 'clamp')


def _decimal_snapshot():
    """The template contexts: `decimal.Context()` copies `DefaultContext`, so a job
    that sets `DefaultContext.prec` changes every later job's new contexts."""
    import decimal
    saved = {}
    for name in ('DefaultContext', 'BasicContext', 'ExtendedContext'):
        ctx = getattr(decimal, name)
        saved[name] = (ctx, {f: getattr(ctx, f) for f in _CONTEXT_FIELDS},
                       dict(ctx.flags), dict(ctx.traps))
    return saved


def _decimal_same(saved):
    import decimal
    for name, (ctx, fields, flags, traps) in saved.items():
        if getattr(decimal, name) is not ctx:
            return False
        if any(getattr(ctx, f) != v for f, v in fields.items()):
            return False
        if dict(ctx.flags) != flags or dict(ctx.traps) != traps:
            return False
    return True


def _decimal_restore(saved):
    for name, (ctx, fields, flags, traps) in saved.items():
        for f, v in fields.items():
            setattr(ctx, f, v)
        ctx.flags = dict(flags)
        ctx.traps = dict(traps)


def _locale_snapshot():
    import locale
    return locale.setlocale(locale.LC_ALL)


def _locale_same(saved):
    import locale
    return locale.setlocale(locale.LC_ALL) == saved


def _locale_restore(saved):
    import locale
    locale.setlocale(locale.LC_ALL, saved)


def _environ_snapshot():
    """The environment (`LANG`, `TZ`, `HOME`, `TMPDIR`...), which locale and time
    functions read. Taken again in a forked worker after it is pointed at its own
    directories (`rebase`, after `prelude.rebind`)."""
    import os
    return dict(os.environ)


def _environ_same(saved):
    import os
    env = os.environ
    return len(env) == len(saved) and all(
        type(k) is str and type(v) is str and saved.get(k) == v for k, v in env.items())


def _environ_restore(saved):
    import os
    import time
    tz = os.environ.get('TZ')
    os.environ.clear()
    os.environ.update(saved)
    if saved.get('TZ') != tz:
        time.tzset()


def _random_snapshot():
    """The global generators, which the prelude seeds before every job: numpy's legacy
    `RandomState` and its bit generator (only an MT19937 can be re-seeded the legacy
    way), and `random`'s hidden instance. State inside them is the seed's business;
    the objects themselves must be the template's."""
    import random
    saved = {'random': random._inst}
    mtrand = sys.modules.get('numpy.random.mtrand')
    if mtrand is not None:
        saved['numpy'] = (mtrand._rand, mtrand._rand._bit_generator)
    return saved


def _random_same(saved):
    import random
    if random._inst is not saved['random'] or type(random._inst) is not random.Random:
        return False
    if 'numpy' in saved:
        mtrand = sys.modules['numpy.random.mtrand']
        state, bits = saved['numpy']
        if mtrand._rand is not state or mtrand._rand._bit_generator is not bits:
            return False
    return True


def _abc_snapshot():
    """ABC registrations (`collections.abc.Mapping.register(int)` makes every later
    `isinstance(5, Mapping)` true, in pandas' and numpy's own checks). Kept in C: the
    cache token moves on every `register`, so the comparison is one integer; on a
    change the registries of the ABCs the sweep reached are compared and restored."""
    import _abc
    registries = {}
    for cls in _ALL_CLASSES:
        if '_abc_impl' in vars(cls):
            try:
                registry = _abc._get_dump(cls)[0]
            except TypeError:
                continue
            members = [r() for r in registry]
            registries[cls] = {id(c): c for c in members if c is not None}
    return {'token': _abc.get_cache_token(), 'registries': registries}


def _abc_same(saved):
    import _abc
    return _abc.get_cache_token() == saved['token']


def _abc_restore(saved):
    """Returns the classes whose registration it undid."""
    import _abc
    undone = []
    for cls, members in saved['registries'].items():
        now = [r() for r in _abc._get_dump(cls)[0]]
        now = [c for c in now if c is not None]
        if len(now) != len(members) or any(id(c) not in members for c in now):
            undone += [c for c in now if id(c) not in members]
            _abc._reset_registry(cls)
            for member in members.values():
                cls.register(member)
        _abc._reset_caches(cls)
    saved['token'] = _abc.get_cache_token()
    return undone


# Interpreter-wide hooks and settings that library code runs or obeys: a trace function
# left by a job would run inside every later job's frames.
_SYS_HOOKS = ('displayhook', 'excepthook', 'unraisablehook', 'breakpointhook',
              'meta_path', 'path_hooks', 'path')


def _sys_snapshot():
    return {
        'hooks': {name: getattr(sys, name) for name in _SYS_HOOKS},
        'trace': sys.gettrace(), 'profile': sys.getprofile(),
        'recursion': sys.getrecursionlimit(), 'switch': sys.getswitchinterval(),
        'int_digits': sys.get_int_max_str_digits(), 'dlopen': sys.getdlopenflags(),
        'bytecode': sys.dont_write_bytecode,
    }


def _sys_same(saved):
    return (all(getattr(sys, n, _MISSING) is v for n, v in saved['hooks'].items())
            and sys.gettrace() is saved['trace'] and sys.getprofile() is saved['profile']
            and sys.getrecursionlimit() == saved['recursion']
            and sys.getswitchinterval() == saved['switch']
            and sys.get_int_max_str_digits() == saved['int_digits']
            and sys.getdlopenflags() == saved['dlopen']
            and sys.dont_write_bytecode is saved['bytecode']
            and not hasattr(sys, 'last_value') and not hasattr(sys, 'last_traceback'))


def _sys_restore(saved):
    for name, value in saved['hooks'].items():
        setattr(sys, name, value)
    sys.settrace(saved['trace'])
    sys.setprofile(saved['profile'])
    sys.setrecursionlimit(saved['recursion'])
    sys.setswitchinterval(saved['switch'])
    sys.set_int_max_str_digits(saved['int_digits'])
    sys.setdlopenflags(saved['dlopen'])
    sys.dont_write_bytecode = saved['bytecode']
    for name in ('last_type', 'last_value', 'last_traceback'):
        if hasattr(sys, name):
            delattr(sys, name)


def _threads_snapshot():
    import _thread
    return _thread._count()


def _threads_same(saved):
    """A thread a job started that still runs would run during later jobs: nothing
    restores that."""
    import _thread
    return _thread._count() <= saved


def _hugepage_snapshot():
    from numpy._core import multiarray
    return multiarray._get_madvise_hugepage()


def _hugepage_same(saved):
    from numpy._core import multiarray
    return multiarray._get_madvise_hugepage() == saved


def _hugepage_restore(saved):
    from numpy._core import multiarray
    multiarray._set_madvise_hugepage(saved)


CUSTOM = [
    ('csv dialects', 'csv', _csv_snapshot, _csv_same, _csv_restore),
    ('pandas options', 'pandas._config.config', _pandas_snapshot, _pandas_same, _pandas_restore),
    ('decimal template contexts', 'decimal', _decimal_snapshot, _decimal_same, _decimal_restore),
    ('locale', 'locale', _locale_snapshot, _locale_same, _locale_restore),
    ('environment', 'os', _environ_snapshot, _environ_same, _environ_restore),
    ('global random generators', 'random', _random_snapshot, _random_same, None),
    ('ABC registrations', 'abc', _abc_snapshot, _abc_same, _abc_restore),
    ('interpreter hooks and limits', 'sys', _sys_snapshot, _sys_same, _sys_restore),
    ('threads', '_thread', _threads_snapshot, _threads_same, None),
    ('numpy hugepage advice', 'numpy._core.multiarray', _hugepage_snapshot, _hugepage_same,
     _hugepage_restore),
]

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

_CONTAINERS = []        # [(label, container, (items, fingerprint))] in sweep order
_CLASSES = []           # [(label, class, ({name: value}, fingerprint))]
_NAMESPACES = []        # [(module name, module dict, (items, fingerprint))]
_CUSTOM = []            # [[label, same, restore, saved]]
_EXCLUDED = {}          # label -> reason, for what the sweep met and left out
_EXCLUDED_IDS = {}      # id of what was left out -> its label (for the coverage test)
_ALL_CLASSES = []       # every class the sweep reached (mutable or not)
_MODULES = frozenset()  # names in sys.modules after warm-up
_ALLOWED = None         # callable(module name) -> bool, from the prelude
_TAGS = {}              # list name -> version tags of its dicts (see src/worker/cpython.rs)
_LAST = {}              # the last check's numbers, for measurements (see last_check())


def _resolve(path):
    """The object a dotted path names, starting from a loaded module; None if absent."""
    parts = path.split('.')
    for i in range(len(parts), 0, -1):
        module = sys.modules.get('.'.join(parts[:i]))
        if module is not None:
            obj = module
            for attr in parts[i:]:
                obj = getattr(obj, attr, None)
                if obj is None:
                    return None
            return obj
    return None


def _is_container(obj):
    return isinstance(obj, (dict, list, set))


def _record(obj):
    """A container's contents: (the objects, their identities). Identities are compared
    as lists of ints, in C; objects are kept so a restore can put them back."""
    if isinstance(obj, dict):
        items = tuple(dict.items(obj))
    elif isinstance(obj, list):
        items = tuple(list.__iter__(obj))
    else:
        items = tuple(set.__iter__(obj))
    return items, _identities(obj)


def _identities(obj):
    # The worker installs `identities` and `changed` (src/worker/cpython.rs): they
    # read elements without taking references, so the check writes no shared page.
    native = globals().get('identities')
    if native is not None:
        fingerprint = native(obj)
        if fingerprint is not None:
            return fingerprint
    if isinstance(obj, dict):
        return list(map(id, dict.keys(obj))) + list(map(id, dict.values(obj)))
    if isinstance(obj, list):
        return list(map(id, list.__iter__(obj)))
    return sorted(map(id, set.__iter__(obj)))


def _same(obj, snap):
    return _identities(obj) == snap[1]


def _class_identities(cls):
    native = globals().get('identities')
    if native is not None:
        fingerprint = native(cls)
        if fingerprint is not None:
            return fingerprint
    namespace = vars(cls)
    return list(map(id, namespace.keys())) + list(map(id, namespace.values()))


def _restore(obj, snap, graveyard):
    """Puts the template's items back; what the job left is kept alive in `graveyard`
    until every registry is restored (no finalizer of a job's object runs half-way)."""
    items = snap[0]
    if isinstance(obj, dict):
        graveyard.append(tuple(dict.items(obj)))
        dict.clear(obj)
        dict.update(obj, items)
    elif isinstance(obj, list):
        graveyard.append(tuple(list.__iter__(obj)))
        list.__setitem__(obj, slice(None), items)
    else:
        graveyard.append(tuple(set.__iter__(obj)))
        set.clear(obj)
        set.update(obj, items)


_DESCRIPTORS = (property, classmethod, staticmethod, types.MemberDescriptorType,
                types.GetSetDescriptorType)


def _plain_instance(obj):
    """A non-callable object of a library class with a `__dict__` (not a module, class,
    function, descriptor or cache wrapper)."""
    return not isinstance(obj, (type, types.ModuleType) + _DESCRIPTORS) and not callable(obj) \
        and isinstance(getattr(obj, '__dict__', None), dict)


def _excluded_instance(obj):
    """Why the attributes of this object are not guarded; None when they are."""
    import weakref
    import _weakrefset
    if isinstance(obj, (weakref.WeakValueDictionary, weakref.WeakKeyDictionary,
                        _weakrefset.WeakSet)):
        return ('holds only weak references: it cannot keep a job object alive, and its '
                'entries come and go with garbage collection')
    return None


def _public_module_names(allowed):
    return [n for n, m in sys.modules.items()
            if m is not None and allowed(n) and not any(c.startswith('_') for c in n.split('.'))]


def reached_modules(allowed):
    """Names of the modules whose state the guard covers: every loaded module of an
    allowlisted package (private and denied submodules included: their state is reached
    through the allowed ones), the C accelerators of allowed modules, and
    `STATE_MODULES`. One name per module object."""
    names = list(sys.modules)
    tops = {n.partition('.')[0] for n in names if allowed(n.partition('.')[0])}
    seen, found = set(), []
    for name in sorted(names):
        module = sys.modules.get(name)
        if not isinstance(module, types.ModuleType) or id(module) in seen:
            continue
        top = name.partition('.')[0]
        if top in tops or (top.startswith('_') and top[1:] in tops) or name in STATE_MODULES:
            seen.add(id(module))
            found.append(name)
    return found


def _immutable_type(cls):
    return bool(cls.__flags__ & (1 << 8))  # Py_TPFLAGS_IMMUTABLETYPE


def _sweep(allowed, skip):
    """Every module namespace, class and container the allowlist reaches (see the module
    docs). `skip`: ids of containers restored elsewhere. Returns (containers, classes,
    namespaces)."""
    found = {}
    classes = {}
    excluded = {}

    def add(label, obj):
        """Guards container `obj` (once); True when it was new."""
        if not _is_container(obj) or id(obj) in found or id(obj) in excluded:
            return False
        if id(obj) in skip:
            excluded[id(obj)] = (label, EXCLUDED.get(label, _SKIPPED))
            return False
        if label in EXCLUDED:
            excluded[id(obj)] = (label, EXCLUDED[label])
            return False
        found[id(obj)] = (label, obj)
        return True

    def instance(label, obj):
        """A plain object's attributes: its `__dict__` and the containers in it (a
        registry object keeps its entries there; deeper data is its own)."""
        why = _excluded_instance(obj)
        if why is not None:
            excluded.setdefault(id(obj), (label, why))
            return
        if add(f'{label}.__dict__', vars(obj)):
            for a, v in list(vars(obj).items()):
                add(f'{label}.{a}', v)

    def nested(label, obj):
        values = ()
        if isinstance(obj, dict):
            values = list(dict.items(obj))
        elif isinstance(obj, list):
            values = list(enumerate(obj))
        for key, value in values:
            if not add(f'{label}[{key!r:.40}]', value) and _plain_instance(value):
                instance(f'{label}[{key!r:.40}]', value)

    def function(label, fn):
        """Mutable defaults (`def f(x, cache={})`): state every call shares."""
        for i, value in enumerate(getattr(fn, '__defaults__', None) or ()):
            add(f'{label}.__defaults__[{i}]', value)
        kwdefaults = getattr(fn, '__kwdefaults__', None)
        if kwdefaults:
            add(f'{label}.__kwdefaults__', kwdefaults)
            for k, value in list(kwdefaults.items()):
                add(f'{label}.__kwdefaults__[{k!r}]', value)

    def attribute(label, value):
        if add(label, value):
            nested(label, value)
        elif isinstance(value, type):
            classes.setdefault(id(value), (label, value))
        elif isinstance(value, types.FunctionType):
            function(label, value)
        elif _plain_instance(value):
            instance(label, value)

    modules = reached_modules(allowed)
    module_names = set(modules)
    namespaces = []
    for name in modules:
        namespace = vars(sys.modules[name])
        namespaces.append((name, namespace))
        for attr, value in list(namespace.items()):
            if attr == '__builtins__' or isinstance(value, types.ModuleType):
                continue
            attribute(f'{name}.{attr}', value)
    for path, _why in EXTRA_REGISTRIES:
        obj = _resolve(path)
        add(path, obj)
        nested(path, obj)  # even when found already, under another name
    # pandas' option tree, every level (the sweep above reaches its first).
    if 'pandas._config.config' in sys.modules:
        for path, d in _option_tree():
            add(f'pandas option tree {path or "(root)"}', d)
    # Classes: those bound in the modules, their nested classes, and subclasses defined
    # in the modules (made by a function, bound nowhere).
    todo = list(classes.values())
    while todo:
        label, cls = todo.pop()
        for attr, value in list(vars(cls).items()):
            if isinstance(value, type):
                if id(value) not in classes and getattr(value, '__module__', None) in module_names:
                    classes[id(value)] = (f'{label}.{attr}', value)
                    todo.append(classes[id(value)])
                continue
            if isinstance(value, (classmethod, staticmethod)):
                value = value.__func__
            attribute(f'{label}.{attr}', value)
        try:
            subclasses = type.__subclasses__(cls)
        except TypeError:
            subclasses = []
        for sub in subclasses:
            if id(sub) not in classes and getattr(sub, '__module__', None) in module_names:
                classes[id(sub)] = (f'{sub.__module__}.{sub.__qualname__}', sub)
                todo.append(classes[id(sub)])
    # Context variables' values as warm-up left them (a mutable value is shared by every
    # job's copy of the context).
    import contextvars
    for var, value in contextvars.copy_context().items():
        if add(f'context variable {var.name}', value):
            nested(f'context variable {var.name}', value)
    for key, (label, reason) in excluded.items():
        _EXCLUDED[label] = reason
        _EXCLUDED_IDS[key] = label
    return list(found.values()), sorted(classes.values(), key=lambda c: c[0]), namespaces


def snapshot(allowed, skip=()):
    """Records the warm state. `allowed(name)`: whether a module name is allowlisted;
    `skip`: containers restored by the prelude's own reset (rcParams)."""
    global _CONTAINERS, _CLASSES, _NAMESPACES, _CUSTOM, _MODULES, _ALLOWED, _ALL_CLASSES
    _ALLOWED = allowed
    skip = {id(x) for x in skip}
    _EXCLUDED.clear()
    _EXCLUDED_IDS.clear()
    containers, classes, namespaces = _sweep(allowed, skip)
    _CONTAINERS = [(label, obj, _record(obj)) for label, obj in containers]
    _ALL_CLASSES = [cls for _, cls in classes]
    _CLASSES = []
    for label, cls in classes:
        if not _immutable_type(cls):
            _CLASSES.append((label, cls, (dict(vars(cls)), _class_identities(cls))))
    _NAMESPACES = [(name, ns, _record(ns)) for name, ns in namespaces]
    _TAGS.clear()
    versions = globals().get('versions')
    # Version tags (PEP 509) exist, and move on every change, up to CPython 3.13.
    if versions is not None and sys.version_info[:2] <= (3, 13):
        for name in ('_CONTAINERS', '_CLASSES', '_NAMESPACES'):
            _TAGS[name] = versions(globals()[name])
    _CUSTOM = []
    for label, module, take, same, restore in CUSTOM:
        if module in sys.modules:
            try:
                saved = take()
                if not same(saved):
                    raise RuntimeError('differs from itself')
            except Exception as exc:  # noqa: BLE001 - a registry this Python lacks
                _EXCLUDED[f'CUSTOM {label}'] = f'cannot be read here: {type(exc).__name__}: {exc!s:.100}'
                continue
            _CUSTOM.append([label, same, restore, saved])
    _MODULES = frozenset(sys.modules)


def rebase():
    """At the worker's birth, right before its first job (src/worker/held.rs): what the
    worker's own set-up changed since the snapshot (a forked worker's environment and
    directories, the modules taken out of `sys.modules` and the finder put at the head
    of `sys.meta_path` when imports close) is the template from now on. Returns how many
    registries were taken again."""
    global _MODULES
    taken = 0
    for name in ('_CONTAINERS', '_NAMESPACES'):
        entries = globals()[name]
        for i in list(_suspects(name)):
            label, obj, snap = entries[i]
            if _identities(obj) != snap[1]:
                entries[i] = (label, obj, _record(obj))
                taken += 1
    for i in list(_suspects('_CLASSES')):
        label, cls, saved = _CLASSES[i]
        if not _class_same(cls, saved):
            _CLASSES[i] = (label, cls, (dict(vars(cls)), _class_identities(cls)))
            taken += 1
    for entry in _CUSTOM:
        if not entry[1](entry[3]):
            take = next(t for label, _, t, _, _ in CUSTOM if label == entry[0])
            entry[3] = take()
            taken += 1
    _MODULES = frozenset(sys.modules)
    versions = globals().get('versions')
    if _TAGS and versions is not None:
        for name in _TAGS:
            _TAGS[name] = versions(globals()[name])
    return taken


def _class_same(cls, saved):
    return _class_identities(cls) == saved[1]


def _class_restore(cls, saved, graveyard):
    saved = saved[0]
    graveyard.append(dict(vars(cls)))
    for k in [k for k in vars(cls) if k not in saved]:
        type.__delattr__(cls, k)
    for k, v in saved.items():
        if vars(cls).get(k, _MISSING) is not v:
            type.__setattr__(cls, k, v)


def _mapping_is(current, template):
    """Whether a namespace (a dict, or a class's read-only view of one) binds exactly
    the template's names to the template's objects. Looked up with the template's own
    keys (library strings), so no key of a job's is hashed or compared."""
    if len(current) != len(template):
        return False
    get = current.get if type(current) is types.MappingProxyType else \
        (lambda k, d: dict.get(current, k, d))
    return all(get(k, _MISSING) is v for k, v in template.items())


def _namespace_restore(name, namespace, saved, graveyard):
    """Puts a module's template bindings back (a rebound global, a deleted or added
    name); a submodule bound by its first import is accepted. Returns (the refreshed
    snapshot when the namespace now matches, else None; whether anything besides
    accepted submodules had changed)."""
    current = dict(dict.items(namespace))
    want = dict(saved[0])
    accepted = {k: v for k, v in current.items()
                if type(k) is str and k not in want and _accepted_addition(name, k, v)}
    for k in accepted:
        del current[k]
    if _mapping_is(current, want):
        return _record(namespace), False
    graveyard.append(current)
    dict.clear(namespace)
    dict.update(namespace, want)
    dict.update(namespace, accepted)
    want.update(accepted)
    return (_record(namespace) if _mapping_is(namespace, want) else None), True


_TYPE_MODULE = type.__dict__['__module__'].__get__
_FUNCTION_MODULE = types.FunctionType.__dict__['__module__'].__get__


def _origin(obj):
    """The module an object says it comes from (a string: the name it is), read through
    the C getters of its type, so no method of a job's object runs; None if unknown."""
    try:
        kind = type(obj)
        if kind is str:
            return obj
        if kind is types.ModuleType:
            name = dict.get(vars(obj), '__name__')
            return name if type(name) is str else None
        if kind is types.FunctionType:
            name = _FUNCTION_MODULE(obj)
        elif isinstance(obj, type):
            name = _TYPE_MODULE(obj)
        else:
            name = _TYPE_MODULE(kind)
        return name if type(name) is str else None
    except Exception:  # noqa: BLE001 - a type without a module name
        return None


def _changed_names(before, template):
    """The names (exact str keys) a namespace's restore changed back, for messages."""
    names = [k for k, v in before.items()
             if type(k) is str and template.get(k, _MISSING) is not v]
    names += [k for k in template if dict.get(before, k, _MISSING) is _MISSING]
    return names


def _added(before, template):
    """What a restore dropped that the template did not hold: the job's additions (for
    a mapping, keys and values of the pairs it added or rebound)."""
    if isinstance(before, dict):
        pairs = before.items()
    elif before and isinstance(before[0], tuple) and len(before[0]) == 2 and \
            template and isinstance(template[0], tuple):
        pairs = before
    else:
        kept = {id(x) for x in template}
        return [x for x in before if id(x) not in kept]
    kept = {(id(k), id(v)) for k, v in (template.items() if isinstance(template, dict) else template)}
    out = []
    for k, v in pairs:
        if (id(k), id(v)) not in kept:
            out += (k, v)
    return out


_INERT = (str, bytes, int, float, complex, bool, type(None), re.Pattern)


def _inert(obj, depth=0):
    """Whether dropping the last reference to `obj` can run no code: plain values, tuples
    of them, compiled patterns, and classes and enum members of the libraries (their
    modules still hold them). Anything else may be a job's object with a finalizer."""
    kind = type(obj)
    if kind in _INERT:
        return True
    if kind is tuple or kind is frozenset:
        return depth < 3 and all(_inert(x, depth + 1) for x in obj)
    try:
        if isinstance(obj, type):
            return _TYPE_MODULE(obj) in _MODULES and _TYPE_MODULE(obj) != '__main__'
        if isinstance(obj, enum.Enum):
            return _TYPE_MODULE(kind) in _MODULES and _TYPE_MODULE(kind) != '__main__'
    except Exception:  # noqa: BLE001 - a class without a module name
        return False
    return False


def _registered_by_import(dropped, new_modules):
    """Problems for restores that undid what a module imported by this job registered
    in a guarded registry at its import (a deprecation table, a copy reducer, an ABC
    registration): the worker can neither keep that (no template holds it) nor serve
    on without it. Attribution is by the module an object names; one that names a new
    module falsely only retires the worker."""
    found = []
    for label, objects in dropped:
        if label in IMPORT_TABLES:
            continue
        origin = next((o for o in map(_origin, objects) if o in new_modules), None)
        if origin is not None:
            found.append(f'{label}: {origin} (imported by the job) registered in it at its '
                         'import; the reset undid that')
    return found[:5]


def check():
    """After a job: restores what can be restored; returns what could not (empty: the
    worker is as warm-up left it). Never raises."""
    try:
        return _check()
    except BaseException as exc:  # the guard itself must never fail a job
        return [f'state guard failed: {type(exc).__name__}: {exc!s:.200}']


def _suspects(name):
    """Indices of the entries of list `name` that may differ from their snapshot."""
    entries = globals()[name]
    native = globals().get('changed')
    return native(entries, _TAGS.get(name)) if native is not None else range(len(entries))


def _check():
    problems = []
    graveyard = []
    restored = []
    dropped = []   # (label, the job's additions), kept only when the job imported modules
    collect = False  # whether a restore dropped an object whose release may run code
    new_modules = frozenset(n for n in sys.modules if n not in _MODULES) \
        if len(sys.modules) != len(_MODULES) else frozenset()

    def undone(label, template):
        """After a restore: what the job had added, judged and kept for attribution."""
        nonlocal collect
        added = _added(graveyard[-1], template)
        if not collect and not all(_inert(x) for x in added):
            collect = True
        if new_modules:
            dropped.append((label, added))

    for i in _suspects('_CONTAINERS'):
        label, obj, snap = _CONTAINERS[i]
        if _identities(obj) == snap[1]:
            continue
        restored.append(label)
        try:
            _restore(obj, snap, graveyard)
        except BaseException as exc:
            problems.append(f'{label} changed and could not be restored ({type(exc).__name__})')
            collect = True
            continue
        undone(label, snap[0])
        if not _same(obj, snap):
            problems.append(f'{label} changed and could not be restored')
    for i in _suspects('_CLASSES'):
        label, cls, saved = _CLASSES[i]
        if _class_same(cls, saved):
            continue
        if _mapping_is(vars(cls), saved[0]):
            # The same bindings in another order: the new order is the template's.
            _CLASSES[i] = (label, cls, (saved[0], _class_identities(cls)))
            continue
        restored.append(f'class {label}')
        try:
            _class_restore(cls, saved, graveyard)
        except BaseException as exc:
            problems.append(f'class {label} changed and could not be restored ({type(exc).__name__})')
            collect = True
            continue
        undone(f'class {label}', saved[0])
        if _mapping_is(vars(cls), saved[0]):
            _CLASSES[i] = (label, cls, (saved[0], _class_identities(cls)))
        else:
            problems.append(f'class {label} changed and could not be restored')
    for i in _suspects('_NAMESPACES'):
        name, namespace, snap = _NAMESPACES[i]
        if _identities(namespace) == snap[1]:
            continue
        try:
            fresh, changed_back = _namespace_restore(name, namespace, snap, graveyard)
        except BaseException as exc:
            problems.append(f'module {name} changed and could not be restored ({type(exc).__name__})')
            collect = True
            continue
        if changed_back:
            names = _changed_names(graveyard[-1], dict(snap[0]))
            restored.append(f'module {name} ({", ".join(names[:5])})')
            undone(f'module {name}', snap[0])
        if fresh is None:
            problems.append(f'module {name} changed and could not be restored')
        else:
            _NAMESPACES[i] = (name, namespace, fresh)
    for entry in _CUSTOM:
        label, same, restore, saved = entry
        if same(saved):
            continue
        if restore is None:
            problems.append(f'{label} changed (cannot be restored)')
            continue
        restored.append(label)
        collect = True
        try:
            taken_back = restore(saved)
        except BaseException as exc:
            problems.append(f'{label} changed and could not be restored ({type(exc).__name__})')
            continue
        if new_modules and taken_back:
            dropped.append((label, list(taken_back)))
        if not same(saved):
            problems.append(f'{label} changed and could not be restored')
    if new_modules:
        problems.extend(_registered_by_import(dropped, new_modules))
        problems.extend(_new_module_state())
    del dropped[:]
    del graveyard[:]
    if collect:
        # What the job left in the restored registries goes now (a file it kept open
        # there closes), then everything is compared once more: a finalizer that ran
        # just now may have changed what was checked before it. (When every object a
        # restore dropped is a plain value, nothing can have run.)
        gc.collect()
        problems.extend(_verify())
    _LAST.update(restored=len(restored), labels=restored[:20], collected=collect)
    return problems


def _verify():
    """Compares everything again without restoring: what differs now changed during
    the restore itself."""
    again = [f'{_CONTAINERS[i][0]} changed during the reset' for i in _suspects('_CONTAINERS')
             if _identities(_CONTAINERS[i][1]) != _CONTAINERS[i][2][1]]
    again += [f'class {_CLASSES[i][0]} changed during the reset' for i in _suspects('_CLASSES')
              if not _class_same(_CLASSES[i][1], _CLASSES[i][2])]
    again += [f'module {_NAMESPACES[i][0]} changed during the reset' for i in _suspects('_NAMESPACES')
              if _identities(_NAMESPACES[i][1]) != _NAMESPACES[i][2][1]]
    again += [f'{label} changed during the reset' for label, same, _, saved in _CUSTOM
              if not same(saved)]
    return again


def _new_module_state():
    """Modules the job imported that hold mutable state of their own: the guard has no
    pristine snapshot of them (the job ran alongside their initialisation), so it cannot
    vouch for the worker. Modules without such state join the known set."""
    global _MODULES
    found = []
    names = [n for n in sys.modules if n not in _MODULES]
    for name in names:
        module = sys.modules.get(name)
        if module is None or any(c.startswith('_') for c in name.split('.')) or not _ALLOWED(name):
            continue
        for attr, value in list(vars(module).items()):
            if not attr.startswith('_') and (_is_container(value) or _plain_instance(value)):
                found.append(f'{name} (imported by the job) holds process-wide state ({attr})')
                break
    if not found:
        _MODULES = _MODULES.union(names)
    return found[:5]


def font_files():
    """The font files matplotlib may open (its font list): the descriptors a worker holds
    on these belong to matplotlib's font caches, which keep fonts open on purpose. The
    worker counts them apart from every other descriptor (src/worker/held.rs)."""
    font_manager = sys.modules.get('matplotlib.font_manager')
    manager = getattr(font_manager, 'fontManager', None)
    paths = set()
    for entry in list(getattr(manager, 'ttflist', ())) + list(getattr(manager, 'afmlist', ())):
        fname = getattr(entry, 'fname', None)
        if type(fname) is str:
            paths.add(fname)
    return sorted(paths)


def release_font_files():
    """Drops the font objects matplotlib's caches keep (each holds its font file open:
    `font_manager._get_font`, mathtext's parse cache and the caches of its font
    classes) and collects: run when the worker holds more font files after a job than
    it may (see src/worker/held.rs), before they are counted again. The next job that
    draws text opens its fonts again."""
    caches = []
    font_manager = sys.modules.get('matplotlib.font_manager')
    caches.append(getattr(font_manager, '_get_font', None))
    mathtext = sys.modules.get('matplotlib.mathtext')
    caches.append(getattr(getattr(mathtext, 'MathTextParser', None), '_parse_cached', None))
    internals = sys.modules.get('matplotlib._mathtext')
    for value in list(vars(internals).values()) if internals is not None else ():
        if isinstance(value, type):
            caches.extend(vars(value).values())
    for cache in caches:
        clear = getattr(cache, 'cache_clear', None)
        if clear is not None:
            clear()
    gc.collect()


def last_check():
    """How many registries the last check restored, and the first of their names."""
    return dict(_LAST)


def registries():
    """The guarded state, for tests: labels of containers, classes, module namespaces
    and C registries, the modules swept, the pandas options checked, and what was left
    out with its reason."""
    pandas_options = []
    for label, _, _, saved in _CUSTOM:
        if label == 'pandas options':
            pandas_options = sorted(saved['values'])
    return {
        'containers': [label for label, _, _ in _CONTAINERS],
        'classes': [label for label, _, _ in _CLASSES],
        'namespaces': [name for name, _, _ in _NAMESPACES],
        'custom': [entry[0] for entry in _CUSTOM],
        'pandas_options': pandas_options,
        'excluded': dict(_EXCLUDED),
        'not_swept': dict(NOT_SWEPT),
    }
