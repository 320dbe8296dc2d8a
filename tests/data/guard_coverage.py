"""What the allowlist reaches against what the state guard guards (tests/it/
cross_job_state.rs runs this with the project's interpreter, the figure profile's runtime
rules on stdin). Walks sys.modules after the prelude's warm-up on its own, not with the
guard's sweep: every module of an allowed package (but those a job sees only as a view,
VIEW_ONLY_MODULES) and of pyward's own (`_pyward_*` but the guard's), every
class defined in one, every dict, list or set held by a module or class attribute
(private ones included). Each must be guarded, or excluded by the guard with a reason.
Prints JSON."""
import importlib.util  # noqa: F401  (kept: what the sweep finds loaded stays the same)
import json
import os
import sys
import tempfile
import types

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'python'))
from worker_modules import load  # noqa: E402  (the worker's modules, as it loads them)
del sys.path[0]

rules = json.load(sys.stdin)
prelude = load('_pyward_prelude')
guard = load('_pyward_state_guard')
options = {'state_guard': guard}
options['library_guards'] = load('_pyward_library_guards')
root = tempfile.mkdtemp(prefix='pyward-guard-coverage-')
dirs = [os.path.join(root, d) for d in ('src', 'out', 'tmp')]
for d in dirs:
    os.mkdir(d)
try:
    prelude.warm_up(rules, *dirs, True, None, None, **options)
except TypeError:  # a prelude without the library guards
    prelude.warm_up(rules, *dirs, True, None, None, guard)

import matplotlib  # noqa: E402

# The packages a job sees only through a view of pyward's own members are left out by
# the guard with a reason each (VIEW_ONLY_MODULES); pyward's own modules are in.
tops = set(rules['allowed_modules']) - set(guard.VIEW_ONLY_MODULES)
own = {name: m for name, m in list(sys.modules.items())
       if name.startswith('_pyward_') and name != '_pyward_state_guard'
       and isinstance(m, types.ModuleType)}
modules = {name: m for name, m in list(sys.modules.items())
           if isinstance(m, types.ModuleType) and name.partition('.')[0] in tops}
modules.update(own)
containers = {id(obj) for _, obj, _ in guard._CONTAINERS}
classes = {id(cls) for _, cls, _ in guard._CLASSES}
namespaces = {id(ns) for _, ns, _ in guard._NAMESPACES}
excluded = dict(guard._EXCLUDED_IDS)
restored_by_prelude = {id(matplotlib.rcParams)}
unguarded = []


def container(label, value):
    if isinstance(value, (dict, list, set)) and id(value) not in containers \
            and id(value) not in excluded and id(value) not in restored_by_prelude:
        unguarded.append(f'container {label} ({type(value).__name__}, {len(value)} items)')


seen_classes = set()
for name, module in sorted(modules.items()):
    if id(vars(module)) not in namespaces:
        unguarded.append(f'module namespace {name}')
    for attr, value in list(vars(module).items()):
        if attr == '__builtins__':
            continue
        container(f'{name}.{attr}', value)
        if isinstance(value, type) and getattr(value, '__module__', None) in modules \
                and id(value) not in seen_classes:
            seen_classes.add(id(value))
            if not value.__flags__ & (1 << 8) and id(value) not in classes:
                unguarded.append(f'class {value.__module__}.{value.__qualname__}')
            for cattr, cvalue in list(vars(value).items()):
                container(f'{value.__module__}.{value.__qualname__}.{cattr}', cvalue)

families = {
    'pandas option keys': sorted(prelude.sys.modules['pandas._config.config']._registered_options),
    'pandas option keys guarded': guard.registries()['pandas_options'],
    'rcParams keys': sorted(dict.keys(matplotlib.rcParams)),
    'rcParams keys restored': sorted(prelude._SAVED_RC),
    'custom': guard.registries()['custom'],
}
named = {
    'matplotlib.legend.Legend._default_handler_map': 'matplotlib.legend.Legend._default_handler_map',
    'matplotlib.ticker.MaxNLocator.default_params': 'matplotlib.ticker.MaxNLocator.default_params',
    'numpy default print options': 'numpy._core.printoptions.default_format_options_dict',
    'colormaps': 'matplotlib.colormaps._cmaps',
    'color sequences': 'matplotlib.color_sequences._color_sequences',
    'units': 'matplotlib.units.registry',
    'projections': 'matplotlib.projections.projection_registry._all_projection_types',
    'style library': 'matplotlib.style.library',
    'warnings filters': 'warnings.filters',
    'pandas option tree': 'pandas._config.config._global_config',
    'pandas registered options': 'pandas._config.config._registered_options',
    're cache': 're._cache',
}
missing_named = sorted(k for k, path in named.items() if id(guard._resolve(path)) not in containers)
print(json.dumps({
    'modules': len(modules),
    'classes': len(seen_classes),
    'guarded': {k: len(v) for k, v in guard.registries().items()},
    'unguarded': unguarded,
    'missing_named': missing_named,
    'families': families,
    'excluded': guard.registries()['excluded'],
}))
