"""Lists the registering functions of the allowed modules that the state guard's
REGISTRARS table does not review (tests/state_guard.rs runs this with the project's
interpreter). Reads the runtime rules (JSON) on stdin; prints JSON."""
import importlib.util  # noqa: F401  (kept: what the sweep finds loaded stays the same)
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'python'))
from worker_modules import load  # noqa: E402  (the worker's modules, as it loads them)
del sys.path[0]

prelude = load('_pyward_prelude')
guard = load('_pyward_state_guard')
root = tempfile.mkdtemp(prefix='pyward-registry-sweep-')
dirs = [os.path.join(root, d) for d in ('src', 'out', 'tmp')]
for d in dirs:
    os.mkdir(d)
prelude.warm_up(json.load(sys.stdin), *dirs, True, None, None, guard)
found = guard.discover_registrars(prelude._module_allowed)
print(json.dumps({
    'found': found,
    'unreviewed': [f for f in found if f not in guard.REGISTRARS],
    'guarded': {k: len(v) for k, v in guard.registries().items()},
}))
