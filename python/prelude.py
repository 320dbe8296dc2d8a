"""pyward worker prelude: warm-up, the job namespace, and running one job.

This module runs inside the embedded interpreter of a worker process. It is loaded once,
before the sandbox is applied; job code never sees this module, only the helpers it
injects into the job's globals (and module proxies, never the modules themselves).
"""

import builtins
import io
import os
import random
import sys
import time
import traceback
import types
import warnings

_RULES = None        # runtime rules sent by the supervisor (dict)
_SRC = _OUT = _TMP = None
_SRC_REAL = None
_JOB_BUILTINS = None  # curated builtins, copied per job
_INJECTED = None      # names injected into every job's globals
_SAVED_RC = None      # rcParams right after warm-up
_SAVED_WARNINGS = None
_PROXIES = {}         # id(module) -> proxy, so `np is np` holds across accesses
_REAL_IMPORT = builtins.__import__
_MSG_CAP = 2000


# --- module access ----------------------------------------------------------------------

def _module_allowed(name):
    """True when a dotted module name is inside the allowlist and not denied."""
    top = name.partition('.')[0]
    if top not in _RULES['allowed_modules']:
        return False
    for denied in _RULES['denied_modules']:
        if name == denied or name.startswith(denied + '.'):
            return False
    return True


def _refuse_import(name):
    allowed = ', '.join(sorted(_RULES['allowed_modules']))
    raise ImportError(f"import of {name!r} is not allowed in this sandbox; allowed modules: {allowed}")


class _ModuleProxy:
    """A read-only view of an allowed module.

    Job code gets these instead of module objects, so that a module outside the
    allowlist can never reach it through an attribute of an allowed one
    (`matplotlib.subprocess`, `numpy.f2py.os`, ...), and so that job code cannot replace
    functions of modules the next job will use (`np.sum = ...`).
    """

    __slots__ = ('_pyward_module',)

    def __init__(self, module):
        object.__setattr__(self, '_pyward_module', module)

    def __getattr__(self, name):
        module = object.__getattribute__(self, '_pyward_module')
        if name.startswith('_') or name in _RULES['banned_attributes']:
            raise AttributeError(f"{module.__name__}.{name} is not available in this sandbox")
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            return _proxy(value)
        return value

    def __setattr__(self, name, value):
        raise AttributeError("modules are read-only in this sandbox")

    def __delattr__(self, name):
        raise AttributeError("modules are read-only in this sandbox")

    def __dir__(self):
        module = object.__getattribute__(self, '_pyward_module')
        return [n for n in dir(module)
                if not n.startswith('_') and n not in _RULES['banned_attributes']]

    def __repr__(self):
        return f"<module {object.__getattribute__(self, '_pyward_module').__name__!r}>"


def _proxy(module):
    if not _module_allowed(module.__name__):
        raise AttributeError(f"module {module.__name__!r} is not available in this sandbox")
    proxy = _PROXIES.get(id(module))
    if proxy is None:
        proxy = _PROXIES[id(module)] = _ModuleProxy(module)
    return proxy


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    """`__import__` for job code: the policy's allowlist, enforced at run time too."""
    if level:
        raise ImportError("relative imports are not allowed in this sandbox")
    if not isinstance(name, str) or not _module_allowed(name):
        _refuse_import(name)
    for item in fromlist or ():
        if item == '*':
            raise ImportError("'from ... import *' is not allowed in this sandbox")
        if not _module_allowed(f"{name}.{item}"):
            _refuse_import(f"{name}.{item}")
    module = _REAL_IMPORT(name, None, None, fromlist, 0)
    return _proxy(module)


# --- reading inputs ---------------------------------------------------------------------

def _inside_src(rel, what):
    if not isinstance(rel, str) or '\x00' in rel:
        raise ValueError(f"{what}: expected a file name relative to SRC, such as 'data.csv'")
    parts = rel.replace('\\', '/').split('/')
    if os.path.isabs(rel) or '..' in parts:
        raise PermissionError(f"{what}: {rel!r} leaves SRC; use a name relative to SRC such as 'data.csv'")
    path = os.path.realpath(os.path.join(_SRC_REAL, rel))
    if path != _SRC_REAL and not path.startswith(_SRC_REAL + os.sep):
        raise PermissionError(f"{what}: {rel!r} leaves SRC")
    return path


def srcpath(name):
    """Absolute path of the input file `name` (relative to SRC); refuses to leave SRC."""
    path = _inside_src(name, 'srcpath')
    if not os.path.exists(path):
        raise FileNotFoundError(f"no input named {name!r}; the inputs are: {walkfiles()}")
    return path


def listdir(sub=''):
    """Sorted names in SRC (or in the subdirectory `sub` of SRC)."""
    return sorted(os.listdir(_inside_src(sub, 'listdir') if sub else _SRC_REAL))


def walkfiles():
    """Sorted relative paths of every input file below SRC."""
    found = []
    for root, dirs, files in os.walk(_SRC_REAL):
        dirs.sort()
        rel = os.path.relpath(root, _SRC_REAL)
        for f in files:
            found.append(f if rel == '.' else os.path.join(rel, f))
    return sorted(found)


# --- warm-up ----------------------------------------------------------------------------

def warm_up(rules, src, out, tmp, preload_pandas):
    """Imports the scientific stack, renders one figure, freezes the warm state."""
    global _RULES, _SRC, _OUT, _TMP, _SRC_REAL, _JOB_BUILTINS, _INJECTED, _SAVED_RC, _SAVED_WARNINGS
    _RULES = {
        'allowed_modules': frozenset(rules['allowed_modules']),
        'denied_modules': tuple(rules['denied_modules']),
        'banned_attributes': frozenset(rules['banned_attributes']),
    }
    _SRC, _OUT, _TMP = src, out, tmp
    _SRC_REAL = os.path.realpath(src)

    import numpy
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from scipy.io import loadmat
    injected = {'np': numpy, 'plt': plt}
    if preload_pandas:
        import pandas
        injected['pd'] = pandas

    # One real render: fills the font cache, the mathtext parser and Agg's state.
    fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
    ax.plot([0, 1, 2], [0, 1, 0], label='warm')
    ax.scatter([0, 1], [1, 0])
    ax.set_title(r'warm-up $\alpha$')
    ax.legend()
    fig.savefig(io.BytesIO(), format='png')
    plt.close('all')

    _SAVED_RC = matplotlib.rcParams.copy()
    _SAVED_WARNINGS = list(warnings.filters)

    curated = dict(builtins.__dict__)
    for name in rules['banned_builtins']:
        curated.pop(name, None)
    for name in ('__loader__', '__spec__', '__package__'):
        curated.pop(name, None)
    curated['__import__'] = _guarded_import
    _JOB_BUILTINS = curated

    _INJECTED = {name: _proxy(mod) for name, mod in injected.items()}
    _INJECTED.update(loadmat=loadmat, srcpath=srcpath, listdir=listdir, walkfiles=walkfiles)

    import gc
    gc.collect()
    gc.freeze()
    return {
        'python': sys.version.split()[0],
        'numpy': numpy.__version__,
        'matplotlib': matplotlib.__version__,
    }


# --- one job ----------------------------------------------------------------------------

class _CappedText(io.TextIOBase):
    """A text sink that keeps the first `cap` characters and counts the rest."""

    def __init__(self, cap):
        self._parts = []
        self._left = cap
        self.dropped = 0

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        n = len(s)
        if self._left > 0:
            kept = s[:self._left]
            self._parts.append(kept)
            self._left -= len(kept)
            self.dropped += n - len(kept)
        else:
            self.dropped += n
        return n

    def getvalue(self):
        return ''.join(self._parts)


def _truncate(text, cap=_MSG_CAP):
    return text if len(text) <= cap else text[:cap] + '... [truncated]'


def _describe(exc, code):
    """Type, message, user line and a traceback limited to the job's own frames."""
    lines = code.splitlines()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == '<job>']
    line = frames[-1].lineno if frames else None
    if isinstance(exc, SyntaxError) and exc.filename == '<job>':
        line = exc.lineno
    tb = []
    for f in frames:
        src = lines[f.lineno - 1].strip() if f.lineno and 0 < f.lineno <= len(lines) else ''
        where = '' if f.name == '<module>' else f', in {f.name}'
        tb.append(f'  line {f.lineno}{where}\n    {src}')
    try:
        message = str(exc)
    except BaseException:  # a job-defined __str__ may raise anything
        message = '<unprintable exception>'
    return {
        'type_name': type(exc).__name__,
        'message': _truncate(message),
        'line': line,
        'traceback': _truncate('\n'.join(tb), 4000),
    }


def _reset():
    """Leaves the interpreter as warm-up left it for the next job."""
    import matplotlib
    import matplotlib.pyplot as plt
    plt.close('all')
    rc = matplotlib.rcParams
    changed = {k: v for k, v in _SAVED_RC.items() if rc.get(k) != v}
    if changed:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            rc.update(changed)
    warnings.filters[:] = _SAVED_WARNINGS
    os.chdir(_TMP)


def run_job(code, seed, out_name, stdout_cap):
    """Runs one job; never raises (job exceptions, SystemExit included, are described)."""
    import numpy
    random.seed(seed)
    numpy.random.seed(seed % (1 << 32))
    job_globals = {
        '__builtins__': dict(_JOB_BUILTINS),
        '__name__': '__main__',
        '__doc__': None,
        'SRC': _SRC,
        'OUT': os.path.join(_OUT, out_name),
    }
    job_globals.update(_INJECTED)
    out, err = _CappedText(stdout_cap), _CappedText(16384)
    saved_streams = sys.stdout, sys.stderr
    error = None
    os.chdir(_TMP)
    start = time.perf_counter()
    try:
        sys.stdout, sys.stderr = out, err
        exec(compile(code, '<job>', 'exec', dont_inherit=True), job_globals)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are job failures too
        error = _describe(exc, code)
    finally:
        sys.stdout, sys.stderr = saved_streams
    exec_ms = (time.perf_counter() - start) * 1000.0
    job_globals.clear()
    try:
        _reset()
    except BaseException as exc:
        if error is None:
            error = _describe(exc, code)
    return {
        'exec_ms': exec_ms,
        'stdout': out.getvalue(),
        'stdout_dropped': out.dropped,
        'stderr': err.getvalue(),
        'error': error,
    }
