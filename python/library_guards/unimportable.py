"""Modules nobody imports once jobs run: taken out of `sys.modules` after warm-up, and
refused by a finder at the head of `sys.meta_path` and by the worker's import functions,
except for a library module's own import of the few kept for it.

One namespace with the other files of python/library_guards/, which the worker runs in
the order of src/worker/modules.rs.
"""

import sys


# Modules taken out of sys.modules after warm-up (name -> module), kept so that the
# libraries holding them keep working.
SEALED = {}


# --- modules nobody imports once jobs run -----------------------------------------------------

class _Unimportable:
    """A meta path finder at the head of `sys.meta_path`: the modules of the list are not
    loaded again, whoever asks (the job, a library frame, `importlib.import_module`,
    which raises no `import` audit event)."""

    def __init__(self, tops):
        self.tops = tops

    def find_spec(self, name, path=None, target=None):
        if type(name) is str and name.partition('.')[0] in self.tops:
            raise ModuleNotFoundError(f"import of {name!r} is not allowed in this sandbox",
                                      name=name)
        return None

    def invalidate_caches(self):
        pass


_TOPS = frozenset()   # every unimportable top-level name
_KEPT = frozenset()   # those left loaded for the libraries that import them again


def seal(names, kept=()):
    """At warm-up: loads the modules of `kept` (allowed libraries import them again when
    a job first imports those libraries: an import of a loaded module is no fresh load)
    and takes every other module of `names` (top-level names; submodules go with them)
    out of `sys.modules`. Libraries that hold one keep it; nobody gets it by importing.
    Idempotent. Returns the names taken out so far."""
    global _TOPS, _KEPT
    for name in kept:
        if name not in sys.modules:
            __import__(name)
    _TOPS = _TOPS | frozenset(names) | frozenset(kept)
    _KEPT = _KEPT | frozenset(kept)
    for name in list(sys.modules):
        top = name.partition('.')[0]
        if top in _TOPS and top not in _KEPT:
            module = sys.modules.pop(name, None)
            if module is not None:
                SEALED.setdefault(name, module)
    return sorted(SEALED)


def close_imports():
    """Right before the audit hook is armed: seals again (anything loaded since warm-up),
    puts the finder at the head of `sys.meta_path`, and makes `__import__` and
    `importlib.import_module` refuse the kept modules (see `_library_module_init`)."""
    global _ORIGINAL_IMPORT, _ORIGINAL_IMPORT_MODULE, _SEALED_LEN
    # A worker forked from a zygote that closed its imports finds them closed: nothing
    # but pyward's own start-up ran since, and walking sys.modules again would copy the
    # pages of every module object the walk touches.
    if len(sys.modules) != _SEALED_LEN:
        seal(())
        _SEALED_LEN = len(sys.modules)
    if not any(type(f) is _Unimportable for f in sys.meta_path):
        sys.meta_path.insert(0, _Unimportable(_TOPS))
    import builtins
    import importlib
    if _ORIGINAL_IMPORT is None:
        _ORIGINAL_IMPORT = builtins.__import__
        builtins.__import__ = _named_like(_import, _ORIGINAL_IMPORT)
    if _ORIGINAL_IMPORT_MODULE is None:
        _ORIGINAL_IMPORT_MODULE = importlib.import_module
        importlib.import_module = _named_like(_import_module, _ORIGINAL_IMPORT_MODULE)
    return sorted(SEALED)


# A kept module is in sys.modules, so importing it raises no audit event and asks no
# finder: the import functions themselves refuse it. Every import statement of library
# code (and C code's PyImport_Import) calls builtins.__import__; pandas' plotting backend
# loader and other by-name loaders call importlib.import_module. One importer keeps it:
# code running for the import of a library module (scipy.stats' `import ctypes` when a
# job first imports scipy.stats), which keeps it in the library's own namespace, where no
# module view reaches.
_ORIGINAL_IMPORT = None
_ORIGINAL_IMPORT_MODULE = None
_SEALED_LEN = -1  # len(sys.modules) after the last close_imports


def _library_module_init(frame):
    """Whether `frame` runs for the import of a library module: walking out from it, a
    module-level frame of a module being imported comes before any frame of the job's
    own code (numpy.ctypeslib's `import _ctypes`, in a function its module-level code
    calls, while scipy.stats is imported for the job). A frame of the job's code first
    (the job itself, or a callback of the job's that a module's import ran) refuses; no
    job frame at all is the worker's own code."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename == '<job>':
            return False
        if code.co_name == '<module>' and _initializing(frame):
            return True
        frame = frame.f_back
    return True


def _initializing(frame):
    name = _exact_str(frame.f_globals.get('__name__'))
    module = sys.modules.get(name) if name else None
    if module is None or getattr(module, '__dict__', None) is not frame.f_globals:
        return False
    return getattr(frame.f_globals.get('__spec__'), '_initializing', False) is True


def _kept_top(name, package):
    """The kept top-level module an import of `name` (relative to the exact str
    `package`) resolves to, or None."""
    if name.startswith('.') or package is not None:
        base = package if package is not None else ''
        top = (base or name.lstrip('.')).partition('.')[0]
    else:
        top = name.partition('.')[0]
    return top if top in _KEPT else None


def _package_of(globals, level):
    """The package a relative import (`level` > 0) is resolved against, as CPython finds
    it in `globals`: an exact str, '' when there is none, or None when it cannot tell
    (then the import is judged as one of a kept module)."""
    if type(globals) is not dict:
        return ''  # the real import refuses a relative import without a dict
    package = globals.get('__package__')
    if package is None:
        spec = globals.get('__spec__')
        if spec is not None:
            return None
        package = globals.get('__name__')
        if package is not None and '__path__' not in globals:
            package = _exact_str(package)
            return None if package is None else package.rpartition('.')[0]
    if package is None:
        return ''
    return _exact_str(package)


def _refuse_kept(top):
    raise ModuleNotFoundError(f"import of {top!r} is not allowed in this sandbox", name=top)


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    text = _exact_str(name)
    # C code's PyImport_Import passes an empty *list* as fromlist (the import statement
    # None or a tuple): scipy's quad imports ctypes so on every call, to tell a ctypes
    # callback from a Python one. It keeps what it imports; no name of the job's reaches
    # it but through an object of the job's, refused by the gate and the module views.
    if type(fromlist) is list and not fromlist:
        return _ORIGINAL_IMPORT(name if text is None else text, globals, locals, fromlist,
                                level)
    if text is not None and _KEPT:
        if type(level) is int and level == 0:
            top = _kept_top(text, None)
        else:
            package = _package_of(globals, level)
            top = '?' if package is None else _kept_top('.' + text, package)
        if top is not None and not _library_module_init(sys._getframe(1)):
            _refuse_kept(top)
        name = text
    return _ORIGINAL_IMPORT(name, globals, locals, fromlist, level)


def _import_module(name, package=None):
    text = _exact_str(name)
    if text is not None and _KEPT:
        base = None if package is None else _exact_str(package)
        top = '?' if package is not None and base is None else \
            _kept_top(text, base if text.startswith('.') else None)
        if top is not None and not _library_module_init(sys._getframe(1)):
            _refuse_kept(top)
        name = text
    return _ORIGINAL_IMPORT_MODULE(name, package)
