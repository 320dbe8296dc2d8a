"""Sweeps every public name of every loaded, allowed module through the worker's module
proxies (tests/gallery.rs runs this with the project's interpreter).

Reads the runtime rules (JSON) on stdin, warms the prelude up as a worker does, and
prints JSON: `refused` (names the capability check refused, with what they really are)
and `leaked` (names that passed although an independent list below says they give file,
process or import access).
"""
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

rules = json.load(sys.stdin)
root = tempfile.mkdtemp(prefix='pyward-sweep-')
dirs = [os.path.join(root, d) for d in ('src', 'out', 'tmp')]
for d in dirs:
    os.mkdir(d)
prelude.warm_up(rules, *dirs, True, None)

# Independent of the prelude's rule: the capabilities themselves, by identity.
import builtins, glob, importlib, io, os as os_module, pathlib, shutil, socket, subprocess
import tempfile as tempfile_module
KNOWN = {
    id(v): f'{m.__name__}.{n}'
    for m in (os_module, pathlib, shutil, subprocess, glob, socket, tempfile_module, importlib)
    for n, v in vars(m).items()
    if not n.startswith('_') and callable(v) and getattr(v, '__module__', '').lstrip('_').split('.')[0]
    in {'os', 'posix', 'pathlib', 'shutil', 'subprocess', 'glob', 'socket', 'tempfile', 'importlib'}
}
KNOWN.pop(id(shutil.get_terminal_size), None)  # reviewed harmless
for n in ('open', 'eval', 'exec', 'compile', '__import__', 'getattr', 'setattr'):
    KNOWN[id(getattr(builtins, n))] = f'builtins.{n}'
KNOWN[id(io.open)] = 'io.open'
KNOWN[id(io.FileIO)] = 'io.FileIO'

refused, leaked, swept = [], [], 0
for name, module in sorted(sys.modules.items()):
    if module is None or any(c.startswith('_') for c in name.split('.')) \
            or not prelude._module_allowed(name):
        continue
    # A name whose module is registered under another name (`os.path` is posixpath)
    # is swept through the view an import of that name gives the job.
    proxy = prelude._STAND_INS.get(name)
    if proxy is None:
        proxy = prelude._proxy(module)
    for attr in dir(module):
        if attr.startswith('_'):
            continue
        swept += 1
        try:
            value = getattr(proxy, attr)
        except AttributeError as exc:
            if 'file, process or import access' in str(exc):
                real = getattr(module, attr)
                refused.append(f'{name}.{attr} = {getattr(real, "__module__", "?")}.'
                               f'{getattr(real, "__name__", "?")}')
            continue
        except Exception:
            continue
        if id(value) in KNOWN:
            leaked.append(f'{name}.{attr} = {KNOWN[id(value)]}')
print(json.dumps({'swept': swept, 'refused': refused, 'leaked': leaked}))
