"""Modules as job code sees them: the import guard (`_guarded_import`), the read-only
module views (`_ModuleProxy`) that hold back what an allowed module re-exports of file,
process and import capabilities, the checked members a view hands out instead of the
stock ones, and the injected names imported on first use.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import __future__
import builtins
import os
import sys
import types


def _future_placeholder(fromlist):
    """`from __future__ import annotations`: the compiler already applied the directive;
    the statement gets a fresh module holding the names, never the shared one."""
    placeholder = types.ModuleType('__future__')
    for feature in fromlist:
        setattr(placeholder, feature, feature)
    return placeholder


def _refuse_import(name, member=False):
    """A module refused as a missing one is (`ModuleNotFoundError`, so that a script's
    `except ModuleNotFoundError:` fallback runs as it would without the package); a name
    of a `from` import as a missing name is (`ImportError`)."""
    allowed = ', '.join(sorted(_RULES['allowed_modules']))
    if type(name) is not str:  # never formatted: its repr would be the job's code
        raise ImportError(f"a module name must be a plain str; allowed modules: {allowed}")
    message = f"import of {name!r} is not allowed in this sandbox; allowed modules: {allowed}"
    if member:
        raise ImportError(message)
    top = name.partition('.')[0]
    raise ModuleNotFoundError(message, name=name if top in _RULES['allowed_modules'] else top)


def _import_names(fromlist):
    """The names of an import's fromlist as a tuple of exact `str` copies (`None`: no
    names). The import statement passes None or a tuple of names, C code an empty
    list; anything else (a generator, a list subclass whose `__iter__` is the job's) is
    refused before it is iterated, and so is any name that is not a `str`."""
    if fromlist is None:
        return ()
    if type(fromlist) is not tuple and type(fromlist) is not list:
        raise ImportError("an import's fromlist must be a tuple of names")
    names = []
    for item in tuple(fromlist):
        text = _exact_str(item)
        if text is None:
            raise ImportError("an import's fromlist must hold plain str names")
        names.append(text)
    return tuple(names)


def _module_top(value):
    """Top-level package that defined a class or function, without a leading underscore
    (`_io` -> `io`); None when it does not say."""
    try:
        where = value.__module__ if isinstance(value, type) else getattr(value, '__module__', None)
    except Exception:
        return None
    if not isinstance(where, str):
        return None
    return where.partition('.')[0].lstrip('_') or None


def _gives_capability(value):
    """True for an object that opens files, starts processes or imports, re-exported by
    an allowed module under a harmless-looking name (`matplotlib.font_manager.Path` is
    `pathlib.Path`): a banned builtin itself, or a class or function defined by one of
    the capability modules (os, pathlib, subprocess, io, shutil, importlib, ...)."""
    if id(value) in _CAPABILITY_IDS:
        return True
    if not callable(value) or id(value) in _CAPABILITY_EXEMPT:
        return False
    return _module_top(value) in _RULES['capability_modules']


def _collect_capability_ids(exempt_names):
    """(refused, exempt) identities: the banned builtins and every public class and
    function the capability modules loaded at warm-up define (caught even where their
    `__module__` says something else); and the reviewed harmless ones (`io.StringIO`)."""
    exempt = set()
    for qualified in exempt_names:
        module, _, attr = qualified.rpartition('.')
        value = getattr(sys.modules.get(module), attr, None)
        if value is not None:
            exempt.add(id(value))
    ids = {id(builtins.__dict__[n]) for n in _RULES['banned_builtins'] if n in builtins.__dict__}
    capability = _RULES['capability_modules']
    for name, module in list(sys.modules.items()):
        if module is None or name.partition('.')[0].lstrip('_') not in capability:
            continue
        for attr, value in list(vars(module).items()):
            if not attr.startswith('_') and callable(value) and id(value) not in exempt \
                    and _module_top(value) in capability:
                ids.add(id(value))
    return frozenset(ids), frozenset(exempt)


_CAPABILITY_IDS = frozenset()
_CAPABILITY_EXEMPT = frozenset()


def _sample_data(fname, asfileobj=True):
    """`matplotlib.cbook.get_sample_data` for jobs: only files below mpl-data/sample_data
    (the stock function accepts any path, absolute ones included)."""
    import matplotlib
    import matplotlib.cbook as cbook
    fname = _exact_str(fname)
    if fname is None or '\x00' in fname:
        raise TypeError("get_sample_data: expected a file name such as 'goog.npz'")
    root = os.path.realpath(os.path.join(matplotlib.get_data_path(), 'sample_data'))
    path = os.path.realpath(os.path.join(root, fname))
    if not path.startswith(root + os.sep):
        raise PermissionError(f"get_sample_data: {fname!r} is not one of matplotlib's sample data files")
    return cbook.get_sample_data(os.path.relpath(path, root), asfileobj=bool(asfileobj))


def _setlocale(category, locale=None):
    """`locale.setlocale` for job code: a locale by its name only. The C library reads
    a name holding a `/` as a folder of locale files, a read below Python that only
    the kernel layer would stop; such a name is refused here first. The category and
    the name are taken as exact values (no method of the job's objects runs)."""
    import locale as real_locale
    if type(category) is not int:
        raise TypeError("locale.setlocale: the category is one of locale.LC_ALL, LC_NUMERIC, ...")
    name = None if locale is None else _exact_str(locale)
    if locale is not None and name is None:
        raise TypeError("locale.setlocale here takes the locale's name as text, e.g. 'en_US.UTF-8'")
    if name is not None and ('/' in name or '\0' in name or len(name) > 100):
        raise PermissionError(f"locale.setlocale: {name[:40]!r} is no locale name (a path is not read)")
    if name is not None and name.lower() in _C_LOCALE_NAMES:
        # '' (the environment's locale, the usual fallback), and C with UTF-8 (a locale
        # of files on this system, which the sandbox does not read): the C locale is
        # the one a job runs in.
        name = 'C'
    return real_locale.setlocale(category, name)


_C_LOCALE_NAMES = ('', 'c.utf-8', 'c.utf8')


# Members of members-only modules that jobs get in a checked form.
_MEMBER_WRAPPERS = {
    ('matplotlib.cbook', 'get_sample_data'): _sample_data,
    ('locale', 'setlocale'): _setlocale,
}


_ABSENT = object()


class _ModuleProxy:
    """A read-only view of an allowed module.

    Job code gets these instead of module objects, so that a module outside the
    allowlist can never reach it through an attribute of an allowed one
    (`matplotlib.subprocess`, `numpy.f2py.os`, ...), nor a file, process or import
    capability re-exported under another name (`matplotlib.font_manager.Path`), and so
    that job code cannot replace functions of modules the next job will use
    (`np.sum = ...`). The view of a members-only module holds its members only.
    """

    __slots__ = ('_pyward_module', '_pyward_members')

    def __init__(self, module, members=None):
        object.__setattr__(self, '_pyward_module', module)
        object.__setattr__(self, '_pyward_members', members)

    def __getattr__(self, name):
        module = object.__getattribute__(self, '_pyward_module')
        members = object.__getattribute__(self, '_pyward_members')
        # Judged and looked up as its exact copy (see _exact_str): a str subclass would
        # answer `startswith` itself and meet the module's dict through its own
        # `__hash__` and `__eq__`.
        name = _exact_str(name)
        if name is None:
            raise TypeError("attribute name must be a plain str")
        if name in _RULES['allowed_dunder_reads']:
            # `np.__version__`, `sns.__name__`: plain strings the gate lets a job read
            # (and what CPython names in `cannot import name 'x' from 'module'`).
            value = getattr(module, name, None)
            if type(value) is str:
                return value
            raise AttributeError(f"{module.__name__}.{name} is not available in this sandbox")
        if members is not None and name in members:
            # A reviewed stand-in answers for its member, even one named like a banned
            # module (`glob.glob`).
            wrapper = _MEMBER_WRAPPERS.get((module.__name__, name))
            if wrapper is not None:
                return wrapper
        if name.startswith('_') or (name in _RULES['banned_attributes'] and
                                    f'{module.__name__}.{name}' not in _RULES['reviewed_paths']):
            raise AttributeError(f"{module.__name__}.{name} is not available in this sandbox")
        if members is not None:
            if name not in members:
                raise AttributeError(
                    f"{module.__name__}.{name} is not available in this sandbox; "
                    f"it offers only: {', '.join(sorted(members))}")
        value = getattr(module, name, _ABSENT)
        if value is _ABSENT:
            # Raised here, outside any handler, and naming the proxy: the error of the
            # failed lookup would carry the real module (`AttributeError.obj`, and its
            # context's).
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}",
                                 name=name, obj=self)
        # A library function replaced for jobs (python/library_guards/): pd.eval
        # checked, np.load without pickles, host details not shown.
        replacement = _GUARDS.JOB_FACING.get(id(value)) if _GUARDS is not None else None
        if replacement is not None:
            return replacement
        if isinstance(value, types.ModuleType):
            return _proxy(value)
        if _gives_capability(value):
            raise AttributeError(
                f"{module.__name__}.{name} gives file, process or import access and is "
                f"not available in this sandbox")
        return value

    def __setattr__(self, name, value):
        raise AttributeError("modules are read-only in this sandbox")

    def __delattr__(self, name):
        raise AttributeError("modules are read-only in this sandbox")

    def __dir__(self):
        module = object.__getattribute__(self, '_pyward_module')
        members = object.__getattribute__(self, '_pyward_members')
        names = dir(module) if members is None else sorted(members)
        return [n for n in names
                if not n.startswith('_') and n not in _RULES['banned_attributes']]

    def __repr__(self):
        return f"<module {object.__getattribute__(self, '_pyward_module').__name__!r}>"


def _proxy(module):
    if not _module_allowed(module.__name__):
        raise AttributeError(f"module {module.__name__!r} is not available in this sandbox")
    proxy = _PROXIES.get(id(module))
    if proxy is None:
        if _GUARDS is not None:
            # A library imported on first use gets its guards before the job sees it.
            _GUARDS.on_module_view(module.__name__)
        members = _RULES['module_members'].get(module.__name__)
        proxy = _PROXIES[id(module)] = _ModuleProxy(module, members)
    return proxy


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    """`__import__` for job code: the policy's allowlist, enforced at run time too.

    C code that imports lazily while a job frame is the current frame (numpy's
    `x.mean()` importing `numpy._core._methods`) reaches this function too, because
    `PyImport_Import` takes `__import__` from the current frame's builtins. It passes
    an empty *list* as fromlist, where the import statement passes None or a tuple of
    names, and it needs the real module, private submodules included (numpy's
    `_core._methods`) and stdlib modules it already holds (`os`). That call is let
    through to the real import when its top-level package is allowed or the module is
    already loaded; nothing outside the allowlist is newly imported this way. Job code
    could make such a call only by reaching `__import__` itself, which the gate refuses
    (dunder name); the audit hook and the kernel hold either way.

    Every argument is judged as an exact copy and the copy is what the real import gets
    (see `_exact_str`): the module name, each fromlist name, and `level`, which must be
    exactly an `int` (an `int` subclass's `__bool__` could say 0 while its value says 1).
    """
    text = _exact_str(name)
    if text is None:
        _refuse_import(name)
    if type(level) is not int:
        raise ImportError("an import's level must be a plain int")
    if type(fromlist) is list and not fromlist and not level:
        if text.partition('.')[0] not in _RULES['allowed_modules'] and text not in sys.modules:
            _refuse_import(text)
        # Level 0: the globals name no package and are not needed.
        return _REAL_IMPORT(text, None, None, [], 0)
    if level:
        raise ImportError("relative imports are not allowed in this sandbox")
    names = _import_names(fromlist)
    if text == '__future__' and names and all(f in __future__.all_feature_names for f in names):
        return _future_placeholder(names)
    if not _module_allowed(text):
        _refuse_import(text)
    for item in names:
        if item == '*':
            raise ImportError("'from ... import *' is not allowed in this sandbox")
        if not _module_allowed(f"{text}.{item}"):
            _refuse_import(f"{text}.{item}", member=True)
    # `import IPython.display` gives the top module, as an import statement does.
    own = _OWN_MODULES.get(text if names else text.partition('.')[0])
    if own is not None:
        return _proxy(own)
    module = _REAL_IMPORT(text, None, None, names, 0)
    # `from os.path import join`: the import system hands back `posixpath`, whose
    # view is the reviewed `os.path` one.
    stand_in = _STAND_INS.get(text) if names else None
    return stand_in if stand_in is not None else _proxy(module)


def _import_dotted(path):
    """The job's view of a module, imported as the job's own import statement would."""
    view = _guarded_import(path)
    for part in path.split('.')[1:]:
        view = getattr(view, part)
    return view


class _ImportedOnUse:
    """An injected module that warm-up did not import (`pd` under
    `preload_pandas(false)`): the first attribute a job reads imports it, as the job's
    own `import pandas as pd` would, so that every injected name is always there. Made
    for each job (so the view it keeps after the first import is that job's alone);
    read-only like a module view."""

    __slots__ = ('_pyward_target', '_pyward_view')

    def __init__(self, target):
        object.__setattr__(self, '_pyward_target', target)
        object.__setattr__(self, '_pyward_view', None)

    def __getattr__(self, name):
        # The exact copy, before the real getattr meets the view's own slots with it.
        name = _exact_str(name)
        if name is None:
            raise TypeError("attribute name must be a plain str")
        view = object.__getattribute__(self, '_pyward_view')
        if view is None:
            view = _import_dotted(object.__getattribute__(self, '_pyward_target'))
            object.__setattr__(self, '_pyward_view', view)
        return getattr(view, name)

    def __setattr__(self, name, value):
        raise AttributeError("modules are read-only in this sandbox")

    def __delattr__(self, name):
        raise AttributeError("modules are read-only in this sandbox")

    def __repr__(self):
        return f"<module {object.__getattribute__(self, '_pyward_target')!r}>"


def _member_on_use(module, member):
    """An injected function whose module warm-up did not import (`loadmat`): imported on
    the first call. Made for each job, like the function it keeps after that call."""
    found = []

    def on_use(*args, **kwargs):
        if not found:
            found.append(getattr(_import_dotted(module), member))
        return found[0](*args, **kwargs)
    on_use.__name__ = on_use.__qualname__ = member
    return on_use


def _injected_globals(table):
    """Builds the injected names from the policy's table (name, module or
    `module:member` or '' for a prelude helper): what warm-up imported becomes a module
    view or the member itself; the rest is imported on first use (see `_on_use`)."""
    helpers = {'srcpath': srcpath, 'listdir': listdir, 'walkfiles': walkfiles,
               'display': display}
    now, on_use = {}, {}
    for name, target in table:
        if not target:
            if name in helpers:
                now[name] = helpers[name]
            continue  # SRC and OUT: set for each job
        module, _, member = target.partition(':')
        loaded = sys.modules.get(module)
        if loaded is None:
            on_use[name] = (module, member)
        elif member:
            now[name] = getattr(loaded, member)
        else:
            now[name] = _proxy(loaded)
    return now, on_use


def _on_use(table):
    """Fresh stand-ins, for one job, of the injected names warm-up did not import."""
    return {name: _member_on_use(module, member) if member else _ImportedOnUse(module)
            for name, (module, member) in table.items()}
