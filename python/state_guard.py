"""Process-wide state between jobs (`Isolation::Reuse`): what allowlisted code can change
outside a job's own globals, snapshotted at warm-up and checked after every job.

A job can register something in a library registry (a colormap, a scale, a unit
converter, a font, a pandas accessor), edit a module-level table (`mcolors.CSS4_COLORS`,
`plt.style.library`, `pd.options`) or patch a library class (`type(fig).savefig = f`).
The next job on the same worker would see it: a channel between tenants,
or a silently wrong figure. This module closes that by mechanism, not per registry:

- At warm-up, `snapshot()` records, *by identity* (never `==`: a job's objects may not
  be comparable, and comparing could run job code), the contents of every mutable
  container reachable from the public names of the loaded allowlisted modules, one level
  into containers and plain objects found there, plus the private registries behind
  public registration functions (`EXTRA_REGISTRIES`) and the namespaces of the library
  classes jobs use (`GUARDED_CLASSES`).
- After each job, `check()` compares. A container or class that changed is restored
  exactly (the same objects put back) and compared again; what still differs, and any
  module newly imported by the job that holds state of its own, is reported: the
  supervisor then retires the worker (a fork from the zygote, ~10 ms).
- `functools` caches are not guarded. Clearing the ones a job grew was tried and broke
  font rendering in sandboxed workers (matplotlib keeps objects from several caches
  alive together); a cache can carry state only through a cached mutable value that a
  job reaches and changes, which `Isolation::Fresh` rules out.
- Context variables (numpy's error state and print options, decimal contexts) need no
  check: each job runs in a copy of the warm-up context (see prelude.run_job).

`check()` never raises: anything unexpected is itself a reported change.
"""

import sys
import types

# Private registries that public functions write to, with the function that reaches
# them. (Public module-level containers are found by the sweep and need no entry.)
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
    'pandas.set_option': 'EXTRA: pandas._config.config._global_config',
    'pandas.reset_option': 'EXTRA: pandas._config.config._global_config',
}

# Names that look like registering (matched on public names by discover_registrars).
_REGISTRAR_NAME = ('register', 'addfont', 'set_option', 'add_', 'install')


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


# Registries kept in C, snapshotted through their public API, when their module is
# loaded: (label, module, snapshot, same, restore).
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


CUSTOM = [('csv dialects', 'csv', _csv_snapshot, _csv_same, _csv_restore)]

# Library classes whose namespaces are checked (attribute set by identity): patching one
# changes every later figure or table. Registering a pandas accessor adds an attribute here.
GUARDED_CLASSES = [
    'matplotlib.figure.Figure', 'matplotlib.figure.FigureBase', 'matplotlib.figure.SubFigure',
    'matplotlib.axes.Axes', 'matplotlib.axes._base._AxesBase', 'matplotlib.artist.Artist',
    'matplotlib.lines.Line2D', 'matplotlib.text.Text', 'matplotlib.patches.Patch',
    'matplotlib.patches.Rectangle', 'matplotlib.collections.Collection',
    'matplotlib.image.AxesImage', 'matplotlib.axis.Axis', 'matplotlib.axis.XAxis',
    'matplotlib.axis.YAxis', 'matplotlib.legend.Legend', 'matplotlib.colors.Colormap',
    'matplotlib.colors.Normalize', 'matplotlib.markers.MarkerStyle', 'matplotlib.ticker.Formatter',
    'matplotlib.ticker.ScalarFormatter', 'matplotlib.ticker.Locator', 'matplotlib.ticker.AutoLocator',
    'matplotlib.backend_bases.FigureCanvasBase', 'matplotlib.backends.backend_agg.FigureCanvasAgg',
    'matplotlib.backends.backend_agg.RendererAgg', 'matplotlib.RcParams', 'matplotlib.dates.DateConverter',
    'pandas.DataFrame', 'pandas.Series', 'pandas.Index', 'pandas.core.generic.NDFrame',
    'pandas.DatetimeIndex', 'pandas.plotting.PlotAccessor',
]

_CONTAINERS = []        # [(label, container, snapshot)] in sweep order
_CLASSES = []           # [(label, class, ({name: value}, identities))]
_CUSTOM = []            # [(label, same, restore, saved)]
_MODULES = frozenset()  # names in sys.modules after warm-up
_ALLOWED = None         # callable(module name) -> bool, from the prelude


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


def _restore(obj, snap):
    items = snap[0]
    if isinstance(obj, dict):
        dict.clear(obj)
        dict.update(obj, items)
    elif isinstance(obj, list):
        list.__setitem__(obj, slice(None), items)
    else:
        set.clear(obj)
        set.update(obj, items)


def _plain_instance(obj):
    """A non-callable object of a library class with a `__dict__` (not a module, class,
    function or cache wrapper)."""
    return not isinstance(obj, (type, types.ModuleType)) and not callable(obj) \
        and isinstance(getattr(obj, '__dict__', None), dict)


def _public_module_names(allowed):
    return [n for n, m in sys.modules.items()
            if m is not None and allowed(n) and not any(c.startswith('_') for c in n.split('.'))]


def _sweep(allowed, skip):
    """Every container reachable from public module names, one level into containers
    and plain instances found there. `skip`: ids of containers restored elsewhere."""
    found = {}

    def add(label, obj):
        if _is_container(obj) and id(obj) not in skip and id(obj) not in found:
            found[id(obj)] = (label, obj)
            return True
        return False

    def nested(label, obj):
        values = ()
        if isinstance(obj, dict):
            values = list(dict.items(obj))
        elif isinstance(obj, list):
            values = list(enumerate(obj))
        for key, value in values:
            if not add(f'{label}[{key!r:.40}]', value) and _plain_instance(value):
                add(f'{label}[{key!r:.40}].__dict__', vars(value))

    for name in sorted(_public_module_names(allowed)):
        for attr, value in list(vars(sys.modules[name]).items()):
            if attr.startswith('_'):
                continue
            label = f'{name}.{attr}'
            if add(label, value):
                nested(label, value)
            elif _plain_instance(value) and add(f'{label}.__dict__', vars(value)):
                # A registry object keeps its entries in its attributes (one level);
                # deeper data of an instance (a colormap's colour rows) is its own.
                for a, v in list(vars(value).items()):
                    add(f'{label}.{a}', v)
    for path, _why in EXTRA_REGISTRIES:
        obj = _resolve(path)
        add(path, obj)
        nested(path, obj)  # even when found already, under a public name
    return list(found.values())


def snapshot(allowed, skip=()):
    """Records the warm state. `allowed(name)`: whether a module name is allowlisted;
    `skip`: containers restored by the prelude's own reset (rcParams)."""
    global _CONTAINERS, _CLASSES, _CUSTOM, _MODULES, _ALLOWED
    _ALLOWED = allowed
    skip = {id(x) for x in skip}
    _CONTAINERS = [(label, obj, _record(obj)) for label, obj in _sweep(allowed, skip)]
    _CLASSES = []
    for path in GUARDED_CLASSES:
        cls = _resolve(path)
        if isinstance(cls, type):
            _CLASSES.append((path, cls, (dict(vars(cls)), _class_identities(cls))))
    _CUSTOM = []
    for label, module, take, same, restore in CUSTOM:
        if module in sys.modules:
            _CUSTOM.append((label, same, restore, take()))
    _MODULES = frozenset(sys.modules)


def _class_same(cls, saved):
    return _class_identities(cls) == saved[1]


_MISSING = object()


def _class_restore(cls, saved):
    saved = saved[0]
    for k in [k for k in vars(cls) if k not in saved]:
        type.__delattr__(cls, k)
    for k, v in saved.items():
        if vars(cls).get(k, _MISSING) is not v:
            type.__setattr__(cls, k, v)


def check():
    """After a job: restores what can be restored; returns what could not (empty: the
    worker is as warm-up left it). Never raises."""
    try:
        return _check()
    except BaseException as exc:  # the guard itself must never fail a job
        return [f'state guard failed: {type(exc).__name__}: {exc!s:.200}']


def _check():
    problems = []
    native = globals().get('changed')
    suspects = native(_CONTAINERS) if native is not None else range(len(_CONTAINERS))
    for i in suspects:
        label, obj, snap = _CONTAINERS[i]
        if _identities(obj) == snap[1]:
            continue
        try:
            _restore(obj, snap)
        except BaseException as exc:
            problems.append(f'{label} changed and could not be restored ({type(exc).__name__})')
            continue
        if not _same(obj, snap):
            problems.append(f'{label} changed and could not be restored')
    suspects = native(_CLASSES) if native is not None else range(len(_CLASSES))
    for i in suspects:
        label, cls, saved = _CLASSES[i]
        if _class_same(cls, saved):
            continue
        try:
            _class_restore(cls, saved)
        except BaseException as exc:
            problems.append(f'class {label} changed and could not be restored ({type(exc).__name__})')
            continue
        if not _class_same(cls, saved):
            problems.append(f'class {label} changed and could not be restored')
    for label, same, restore, saved in _CUSTOM:
        if not same(saved):
            restore(saved)
            if not same(saved):
                problems.append(f'{label} changed and could not be restored')
    if len(sys.modules) != len(_MODULES):
        problems.extend(_new_module_state())
    return problems


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


def registries():
    """The guarded state, for tests: labels of containers, classes and C registries."""
    return {
        'containers': [label for label, _, _ in _CONTAINERS],
        'classes': [label for label, _, _ in _CLASSES],
        'custom': [label for label, _, _, _ in _CUSTOM],
    }
