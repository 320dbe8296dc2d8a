"""pyward worker prelude: warm-up, the job namespace, and running one job.

This module runs inside the embedded interpreter of a worker process. It is loaded once,
before the sandbox is applied; job code never sees this module, only the helpers it
injects into the job's globals (and module proxies, never the modules themselves).
"""

import __future__
import _string
import builtins
import contextvars
import io
import os
import pathlib
import random
import sys
import time
import traceback
import types
import warnings

_RULES = None        # runtime rules sent by the supervisor (dict)
_SRC = _OUT = _TMP = None
_SRC_REAL = _OUT_REAL = _TMP_REAL = None
_JOB_BUILTINS = None  # curated builtins, copied per job
_INJECTED = None      # names injected into every job's globals
_INJECTED_ON_USE = {}  # injected names warm-up did not import: name -> (module, member)
_SAVED_RC = None      # rcParams' stored values right after warm-up (deep copies)
_RC_MUTABLE = ()      # keys of _SAVED_RC whose values can change in place
_SAVED_WARNINGS = None
_FIGURES = None       # name -> bytes (or a raw image) while a job renders to memory, else None
_MEMORY_FORMATS = None  # formats rendered to memory: None for all (figures_in_memory)
_RAW_CAPTURE = None   # while a PNG save hands its pixels to the host: where they go
_PROXIES = {}         # id(module) -> proxy, so `np is np` holds across accesses
_STATE_GUARD = None   # the state_guard module once it has its warm snapshot
_DIAGNOSE = None      # the diagnose module: hints computed from a job's exception
_FIGURES_MOD = None   # the figures module: what a saved figure shows
_GUARDS = None        # the library_guards module: string engines, job-facing replacements
_NOTES = None         # while a job runs: its saves, show() calls and figures drawn
_WARM_CONTEXT = None  # context variables as warm-up left them
_WARM_DECIMAL = None  # the decimal Context warm-up left, copied for each job
_REAL_IMPORT = builtins.__import__
_MSG_CAP = 2000
# Bytes of what a job writes to sys.stderr that go to the host with its answer (a
# failure quotes the last STDERR_TAIL_CHARS of them, see src/outcome.rs).
_JOB_STDERR_CAP = 16384


# --- exact copies -----------------------------------------------------------------------
#
# A guard judges a name or a path that the job handed it, and the job may have handed it
# an object of its own making: a `str` subclass whose `startswith`, `__contains__`,
# `__eq__`, `__hash__`, `partition` or `__len__` answers what its author likes, an
# `os.PathLike` whose `__fspath__` gives one path when judged and another when used, an
# object whose `__class__` makes `isinstance` say `str`. So no guard asks the object:
# each takes an exact copy first, made by the C code of the exact base type (`type()` is
# the real type, `str.__str__` is str's own slot, not an override), judges the copy and
# passes the copy on, so that what was judged is what is used (RestrictedPython's
# `safer_getattr` checks `type(name) is str` for the same reason).

def _exact_str(value):
    """An exact `str` holding the text of `value` (a `str` or an instance of a `str`
    subclass); None for anything else. No method of `value` runs."""
    kind = type(value)
    if kind is str:
        return value
    if issubclass(kind, str):
        return str.__str__(value)
    return None


def _exact_bytes(value):
    """An exact `bytes` holding the bytes of `value` (a `bytes` or an instance of a
    `bytes` subclass); None for anything else. No method of `value` runs: bytes' own
    slicing copies a subclass's data into a new exact object."""
    kind = type(value)
    if kind is bytes:
        return value
    if issubclass(kind, bytes):
        return bytes.__getitem__(value, slice(None))
    return None


# pathlib's own concrete classes, exactly (not subclasses): their `__fspath__` is
# pathlib's code, run once by `_plain_path`, whose result is copied again.
_PATHLIB_TYPES = (pathlib.PurePosixPath, pathlib.PosixPath)


def _plain_path(value):
    """The text of a path argument as an exact `str` or `bytes`, or None when it is no
    path a guard accepts: `str` and `bytes` (subclasses copied), and paths of pathlib's
    own classes. Any other `os.PathLike` would run the job's `__fspath__`, whose answer
    may differ between the guard's call and the library's: refused (None), never
    called."""
    text = _exact_str(value)
    if text is None:
        text = _exact_bytes(value)
    if text is None and type(value) in _PATHLIB_TYPES:
        text = _exact_str(os.fspath(value))
    return text


# --- module access ----------------------------------------------------------------------

def _module_allowed(name):
    """True when a dotted module name is inside the allowlist and not denied. A
    members-only module is allowed (as a view holding its members), and so is a path to
    one of its members; a path to any other of its names is not."""
    top = name.partition('.')[0]
    if top not in _RULES['allowed_modules']:
        return False
    for module, members in _RULES['module_members'].items():
        if name == module:
            return True
        if name.startswith(module + '.'):
            return name[len(module) + 1:].partition('.')[0] in members
    for denied in _RULES['denied_modules']:
        if name == denied or name.startswith(denied + '.'):
            return False
    return True


# Names the gate checks where they are called (settings, string evaluation, pickle
# loading): reached by string they would skip those checks, so the curated getattr and
# hasattr refuse them along with everything the gate refuses as an attribute.
_GETATTR_REFUSED = frozenset({
    'rcParams', 'rcParamsDefault', 'rcParamsOrig', 'rc', 'rc_context', 'rc_file',
    'use', 'context', 'switch_backend', 'set_option', 'option_context', 'query',
    'eval', 'load',
})


def _attribute_refusal(name):
    """Why job code may not reach attribute `name` by string; None when it may.

    Only an exact `str` is judged: an instance of a `str` subclass is refused (its
    `startswith` or `__eq__` would be judging itself, and passed on it would meet the
    attribute tables through its own `__hash__` and `__eq__`); callers that accept one
    judge and use its exact copy (`_attribute_name`). Anything else is no name at all
    and None is returned: getattr raises its own TypeError, calling no method of it."""
    if type(name) is not str:
        if issubclass(type(name), str):
            return "an attribute name must be a plain str, not an instance of a str subclass"
        return None
    if name.startswith('_'):
        return "names that begin with '_' are interpreter or library internals"
    if name in _RULES['banned_attributes']:
        return "it is a banned attribute"
    if name.startswith(_RULES['banned_attribute_prefixes']):
        return "frame, generator, traceback and code objects are not available"
    if name in _GETATTR_REFUSED:
        return "it is checked where it is used; write it as plain attribute access"
    return None


def _attribute_name(builtin, name):
    """The name `builtin` may use for attribute `name`: its exact `str` copy, judged.
    Raises PermissionError (which a getattr default does not swallow) when job code may
    not reach it. A value that is no `str` at all is returned as it is: the builtin
    refuses it with its own TypeError without calling any method of it."""
    text = _exact_str(name)
    if text is None:
        return name
    why = _attribute_refusal(text)
    if why is not None:
        raise PermissionError(f"{builtin}(..., {text!r}) is not allowed in this sandbox: {why}; "
                              "use the documented public API")
    return text


def _curated_getattr(obj, name, *default):
    """`getattr` for job code: the gate's attribute rules, applied at run time to a name
    that may not be a constant (RestrictedPython's `safer_getattr` does the same), and
    to the exact copy of it that the lookup then uses."""
    return getattr(obj, _attribute_name('getattr', name), *default)


def _curated_hasattr(obj, name):
    """`hasattr` for job code, with the rules of the curated `getattr`."""
    return hasattr(obj, _attribute_name('hasattr', name))


# --- format fields -----------------------------------------------------------------------
#
# `'{0.__class__}'.format(x)` is getattr by string: each `.name` step of a replacement
# field reads that attribute of the argument, and `{0.__globals__[os].environ}` prints
# what it finds. The gate refuses such fields in the literals it sees; a format string
# built at run time (`chr(46)`, `'_' * 2`) or handed to a library that formats with it
# (`StrMethodFormatter`, `bar_label(fmt=...)`) is judged here, when it is used. The
# worker replaces `str.format` and `str.format_map` in the `str` type itself with the
# two functions below (`STR_METHODS`, installed by src/worker/cpython.rs after
# warm-up), so every caller, job or library, goes through them. Each field's attribute
# steps meet the curated getattr's rules (`_attribute_refusal`), nested fields in
# format specs included, except the dunders the gate lets a job read too, which hold
# plain strings (`{cls.__name__}`, as matplotlib's own error messages write it); index
# steps (`{0[key]}`) read items, not attributes, and pass. The fields are parsed by the same C parser `str.format` uses
# (`_string.formatter_parser`) from the exact copy of the format string, and that copy
# is what is formatted. `string.Formatter`, which jobs cannot reach (a banned
# attribute) but libraries use (matplotlib's `StrMethodFormatter`), resolves fields in
# its own `get_field`, wrapped with the same rules (`_install_formatter_check`).
# `format(value, spec)` has no fields (a spec is no field name).

_STR_FORMAT = str.format
_STR_FORMAT_MAP = str.format_map
# Verdicts on format strings seen before (exact str keys, short strings only): tick
# labels format the same few strings thousands of times.
_FORMAT_VERDICTS = {}
_FORMAT_VERDICTS_MAX = 4096
_FORMAT_VERDICT_TEXT_MAX = 256


def _format_refusal(text, depth=0):
    """Why the exact format string `text` may not be used; None when it may."""
    if depth > 2:
        return None  # str.format refuses deeper nesting itself
    try:
        parsed = list(_string.formatter_parser(text))
    except ValueError:
        return None  # malformed: str.format raises the same error itself
    for _literal, field, spec, _conversion in parsed:
        if field is None:
            continue
        why = _field_refusal(field)
        if why is not None:
            return why
        if spec:
            why = _format_refusal(spec, depth + 1)
            if why is not None:
                return why
    return None


def _check_format(text, method):
    """Raises PermissionError when the exact format string `text` reads an attribute
    the curated getattr would refuse."""
    if '.' not in text:
        return  # every attribute step is written with a '.'
    why = _FORMAT_VERDICTS.get(text, _ABSENT)
    if why is _ABSENT:
        why = _format_refusal(text)
        if len(text) <= _FORMAT_VERDICT_TEXT_MAX:
            if len(_FORMAT_VERDICTS) >= _FORMAT_VERDICTS_MAX:
                _FORMAT_VERDICTS.clear()
            _FORMAT_VERDICTS[text] = why
    if why is not None:
        raise PermissionError(f"str.{method}() is not allowed in this sandbox here: {why}; "
                              "use plain fields such as '{}' or '{:.2f}', or an f-string")


def _checked_format(self, /, *args, **kwargs):
    text = _exact_str(self)
    if text is None:
        return _STR_FORMAT(self, *args, **kwargs)  # raises str.format's own TypeError
    _check_format(text, 'format')
    return _STR_FORMAT(text, *args, **kwargs)


def _checked_format_map(self, /, *args, **kwargs):
    text = _exact_str(self)
    if text is None:
        return _STR_FORMAT_MAP(self, *args, **kwargs)
    _check_format(text, 'format_map')
    return _STR_FORMAT_MAP(text, *args, **kwargs)


def _field_refusal(field_name):
    """Why one replacement field (`0.x[k].y`) may not be resolved; None when it may."""
    try:
        _first, rest = _string.formatter_field_name_split(field_name)
        steps = list(rest)
    except ValueError:
        return None  # the formatter raises the same error itself
    for is_attribute, key in steps:
        if is_attribute and key not in _RULES['allowed_dunder_reads']:
            why = _attribute_refusal(key)
            if why is not None:
                return f"the field {{{_truncate(field_name, 80)}}} reads attribute {_truncate(key, 80)!r}: {why}"
    return None


def _install_formatter_check():
    """`string.Formatter` resolves fields in Python, with the real getattr, in
    `get_field`: jobs cannot reach the class (a banned attribute), but libraries format
    job strings with it (matplotlib's `StrMethodFormatter` formats its `fmt` through a
    `string.Formatter` subclass). Its `get_field` is wrapped once, at warm-up (before the
    state guard's snapshot), with the field rules of `str.format`, judged on the exact
    copy of the field name that it then resolves."""
    import string
    stock = string.Formatter.get_field

    def get_field(self, field_name, args, kwargs):
        text = _exact_str(field_name)
        if text is None:
            return stock(self, field_name, args, kwargs)  # raises its own TypeError
        why = _field_refusal(text)
        if why is not None:
            raise PermissionError(f"string.Formatter is not allowed in this sandbox here: {why}; "
                                  "use plain fields such as '{x}' or '{x:.2f}'")
        return stock(self, text, args, kwargs)

    get_field.__doc__ = stock.__doc__
    get_field.__wrapped__ = stock
    string.Formatter.get_field = get_field


for _checked, _stock in ((_checked_format, _STR_FORMAT), (_checked_format_map, _STR_FORMAT_MAP)):
    _checked.__name__ = _stock.__name__
    _checked.__qualname__ = _stock.__qualname__
    _checked.__doc__ = _stock.__doc__
del _checked, _stock

# What the worker puts into the `str` type after warm-up (name -> function).
STR_METHODS = {'format': _checked_format, 'format_map': _checked_format_map}


def _future_placeholder(fromlist):
    """`from __future__ import annotations`: the compiler already applied the directive;
    the statement gets a fresh module holding the names, never the shared one."""
    placeholder = types.ModuleType('__future__')
    for feature in fromlist:
        setattr(placeholder, feature, feature)
    return placeholder


def _refuse_import(name):
    allowed = ', '.join(sorted(_RULES['allowed_modules']))
    if type(name) is not str:  # never formatted: its repr would be the job's code
        raise ImportError(f"a module name must be a plain str; allowed modules: {allowed}")
    raise ImportError(f"import of {name!r} is not allowed in this sandbox; allowed modules: {allowed}")


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


# Members of members-only modules that jobs get in a checked form.
_MEMBER_WRAPPERS = {('matplotlib.cbook', 'get_sample_data'): _sample_data}


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
        if name.startswith('_') or name in _RULES['banned_attributes']:
            raise AttributeError(f"{module.__name__}.{name} is not available in this sandbox")
        if members is not None:
            if name not in members:
                raise AttributeError(
                    f"{module.__name__}.{name} is not available in this sandbox; "
                    f"it offers only: {', '.join(sorted(members))}")
            wrapper = _MEMBER_WRAPPERS.get((module.__name__, name))
            if wrapper is not None:
                return wrapper
        value = getattr(module, name, _ABSENT)
        if value is _ABSENT:
            # Raised here, outside any handler, and naming the proxy: the error of the
            # failed lookup would carry the real module (`AttributeError.obj`, and its
            # context's).
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}",
                                 name=name, obj=self)
        # A library function replaced for jobs (python/library_guards.py): pd.eval
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
            _refuse_import(f"{text}.{item}")
    module = _REAL_IMPORT(text, None, None, names, 0)
    return _proxy(module)


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
    helpers = {'srcpath': srcpath, 'listdir': listdir, 'walkfiles': walkfiles}
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


# --- reading inputs ---------------------------------------------------------------------

def _inside_src(rel, what):
    """The real path of `rel` inside SRC, judged on the exact copy of `rel` (a `str`
    subclass's `__contains__`, `split` or `startswith` would otherwise judge itself)."""
    rel = _exact_str(rel)
    if rel is None or '\x00' in rel:
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
    name = _exact_str(name)  # a str: _inside_src refused anything else
    if not os.path.exists(path):
        raise FileNotFoundError(f"no input named {name!r}; the inputs are: {walkfiles()}")
    return path


def listdir(sub=''):
    """Sorted names in SRC (or in the subdirectory `sub` of SRC). `sub` is judged as
    its exact copy: its own `__bool__` or `__len__` does not decide what is listed."""
    text = '' if sub is None else _exact_str(sub)
    return sorted(os.listdir(_inside_src(sub, 'listdir') if text != '' else _SRC_REAL))


def walkfiles():
    """Sorted relative paths of every input file below SRC."""
    found = []
    for root, dirs, files in os.walk(_SRC_REAL):
        dirs.sort()
        rel = os.path.relpath(root, _SRC_REAL)
        for f in files:
            found.append(f if rel == '.' else os.path.join(rel, f))
    return sorted(found)


_REAL_OPEN = builtins.open


def _guarded_open(file, mode='r', buffering=-1, encoding=None, errors=None, newline=None,
                  closefd=True, opener=None):
    """`open` for C code that looks it up in the job's builtins.

    numpy's `fromfile` and `ndarray.tofile` find `open` through the builtins of the
    current frame, which are the job's. The gate refuses `open` in job code itself; this
    one serves numpy, reading only inside SRC, out/ and tmp/, writing only out/ and tmp/.

    The path and the mode are judged as exact copies (`_plain_path`, `_exact_str`) and
    the file opened is the real path that was judged: a lying `str` subclass, a second
    answer of `__fspath__` or a mode whose `__contains__` hides a 'w' cannot differ
    between the check and the open. A descriptor (an integer, `__index__`) is no path,
    and so is a job's own `os.PathLike`. `opener` and `closefd=False` are refused: an
    opener returns a descriptor of its choosing (numpy passes neither).
    """
    path = _plain_path(file)
    if path is None:
        raise PermissionError("open: only a plain str path is allowed in this sandbox (no file "
                              "descriptors, no path-like objects of your own); read inputs "
                              "through srcpath('name') and write to OUT")
    mode = _exact_str(mode)
    if mode is None:
        raise TypeError("open: mode must be a plain str such as 'r' or 'wb'")
    if opener is not None or closefd is not True:
        raise PermissionError("open: opener and closefd are not allowed in this sandbox")
    path = os.fsdecode(path)
    real = os.path.realpath(path)
    writing = any(c in mode for c in 'wax+')
    roots = (_OUT_REAL, _TMP_REAL) if writing else (_SRC_REAL, _OUT_REAL, _TMP_REAL)
    if not any(real == r or real.startswith(r + os.sep) for r in roots):
        what = 'writing' if writing else 'reading'
        raise PermissionError(f"{what} {path!r} is not allowed; read inputs through srcpath('name') and write to OUT")
    return _REAL_OPEN(real, mode, buffering, encoding, errors, newline)


# --- what the job did with its figures ----------------------------------------------------
#
# Read by the supervisor's output checks and feedback: which files each savefig wrote and
# what the figure showed then (python/figures.py), whether the job called show() (which
# displays nothing here), and which figures it drew but never saved.

def _note_save(figure, fname):
    notes = _NOTES
    if notes is None or type(fname) is not str:
        return  # outside a job, or a file object: nothing to say about a path
    try:
        path = fname  # an exact str: see _save_target
        real = os.path.realpath(path)
        in_out = os.path.dirname(real) == _OUT_REAL
        notes['saved_ids'].add(id(figure))
        summary = None
        if notes['describe']:
            start = time.perf_counter()
            summary = _FIGURES_MOD.summarize(figure)
            notes['describe_ms'] += (time.perf_counter() - start) * 1000.0
        others = []
        if not _FIGURES_MOD.has_content(figure):
            others = [num for num, fig in _open_figures()
                      if fig is not figure and _FIGURES_MOD.has_content(fig)]
        notes['saves'].append({
            'target': os.path.basename(real) if in_out else path,
            'in_out': in_out,
            'summary': summary,
            'other_figures_drawn': others,
        })
    except Exception as exc:  # describing must never break the save itself
        notes['errors'].append(f'{type(exc).__name__}: {_truncate(str(exc), 200)}')


def _open_figures():
    from matplotlib._pylab_helpers import Gcf
    return [(m.num, m.canvas.figure) for m in Gcf.get_all_fig_managers()]


def _install_figure_notes():
    """plt.show() is noted (it would only warn here); the Axes methods that add data mark
    each artist with the job line that drew it."""
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    def show(*args, **kwargs):
        if _NOTES is not None:
            _NOTES['shown'] = True

    show.__doc__ = plt.show.__doc__
    plt.show = show
    for name in ('add_line', 'add_collection', 'add_image', 'add_container', 'add_table'):
        setattr(Axes, name, _noting_line(getattr(Axes, name)))


def _noting_line(stock):
    def add(self, artist, *args, **kwargs):
        if _NOTES is not None and _FIGURES_MOD is not None:
            _FIGURES_MOD.note_line(artist)
        return stock(self, artist, *args, **kwargs)

    add.__doc__ = stock.__doc__
    add.__wrapped__ = stock
    return add


def _figure_notes():
    """The job's figure notes as plain data, with the figures drawn but never saved."""
    notes = _NOTES
    unsaved = []
    try:
        unsaved = [num for num, fig in _open_figures()
                   if id(fig) not in notes['saved_ids'] and _FIGURES_MOD.has_content(fig)]
    except Exception as exc:
        notes['errors'].append(f'{type(exc).__name__}: {_truncate(str(exc), 200)}')
    return {'saves': notes['saves'], 'shown': notes['shown'], 'unsaved_figures': unsaved,
            'errors': notes['errors'], 'describe_ms': notes['describe_ms']}


# --- figures to memory ------------------------------------------------------------------

def _memory_target(figure, fname, kwargs):
    """(artifact name, format) when this save should go to memory instead of out/.

    Only while a job asked for figures in memory, and only for a path naming a file
    directly in out/ (OUT or a sibling). The format is chosen as matplotlib chooses it
    for a path: `format=`, else the extension, else rcParams['savefig.format'], which
    matplotlib then appends to the name.
    """
    if _FIGURES is None or type(fname) is not str:
        return None  # a file object or bytes; a path is an exact str (see _save_target)
    path = fname
    if os.path.dirname(os.path.realpath(path)) != _OUT_REAL:
        return None
    import matplotlib
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1][1:].lower()
    # Exact copies: `format=` is one already (savefig), an rcParams value may be a job's.
    fmt = _exact_str(kwargs.get('format') or ext or matplotlib.rcParams['savefig.format'])
    if fmt is None or fmt.lower() not in figure.canvas.get_supported_filetypes():
        return None  # stock savefig raises its own error
    if _MEMORY_FORMATS is not None and fmt.lower() not in _MEMORY_FORMATS:
        return None
    if not ext and kwargs.get('format') is None:
        name = f'{name}.{fmt}'
    return name, fmt.lower()


def _save_target(fname):
    """What a save writes to, as the notes, the memory target and matplotlib will all
    see it: a path as its exact copy (`_plain_path`), a file object as it is. A path-like
    object of the job's own is refused: its `__fspath__` could name one file to the
    checks and another to the writer."""
    path = _plain_path(fname)
    if path is not None:
        return path
    if issubclass(type(fname), os.PathLike):
        raise TypeError("savefig: pass the file name as a str, such as OUT or 'name.png'")
    return fname


def _install_memory_savefig():
    """Makes `Figure.savefig` render into memory for jobs that asked for it.

    pyplot.savefig, render-once's replacement of it, and fig.savefig all end in
    Figure.savefig, so this one place covers every ordinary way to save. Matplotlib
    writes the same bytes to a file object as to a path (the path is only opened and
    handed to the same writer); tests/it/figures_in_memory.rs holds us to that.
    """
    from matplotlib.figure import Figure
    stock = Figure.savefig

    def savefig(self, fname, **kwargs):
        global _RAW_CAPTURE
        fname = _save_target(fname)
        if kwargs.get('format') is not None:
            fmt = _exact_str(kwargs['format'])
            if fmt is None:
                raise TypeError("savefig: format must be a plain str such as 'png'")
            kwargs['format'] = fmt
        _note_save(self, fname)
        target = _memory_target(self, fname, kwargs)
        if target is None:
            return stock(self, fname, **kwargs)
        name, fmt = target
        buf = io.BytesIO()
        kwargs['format'] = fmt
        _RAW_CAPTURE = capture = {} if fmt == 'png' and _RAW_PNG_LIMIT else None
        try:
            stock(self, buf, **kwargs)
        finally:
            _RAW_CAPTURE = None
        _FIGURES[name] = capture['image'] if capture and 'image' in capture else buf.getvalue()

    savefig.__doc__ = stock.__doc__
    savefig.__wrapped__ = stock
    Figure.savefig = savefig


# --- PNG pixels to the host ------------------------------------------------------------
#
# Encoding a PNG (zlib at Pillow's default level) is the largest single cost of a typical
# job. With host encoding on, a PNG saved into out/ is rendered as always and its RGBA
# pixels, dpi and metadata go to the supervisor, which encodes them (src/encode.rs):
# the same pixels, the same text and pHYs chunks as matplotlib's own writer.

_RAW_PNG_LIMIT = 0    # largest pixel buffer handed over, bytes; 0: host encoding off


def _install_raw_png():
    """Wraps `FigureCanvasAgg._print_pil`, the one writer behind every PNG save: while a
    save captures (`_RAW_CAPTURE`), it renders exactly as stock (`FigureCanvasAgg.draw`)
    and keeps the pixels instead of calling `matplotlib.image.imsave`."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    stock = FigureCanvasAgg._print_pil

    def _print_pil(self, filename_or_obj, fmt, pil_kwargs, metadata=None):
        capture = _RAW_CAPTURE
        if capture is None or fmt != 'png' or pil_kwargs or 'image' in capture:
            return stock(self, filename_or_obj, fmt, pil_kwargs, metadata)
        FigureCanvasAgg.draw(self)
        pixels = self.buffer_rgba()
        height, width = pixels.shape[:2]
        if height * width * 4 > _RAW_PNG_LIMIT:
            return stock(self, filename_or_obj, fmt, pil_kwargs, metadata)
        # As matplotlib.image.imsave writes them for a PNG.
        text = {'Software': f'Matplotlib version{matplotlib.__version__}, https://matplotlib.org/',
                **(metadata if metadata is not None else {})}
        capture['image'] = {
            'width': int(width),
            'height': int(height),
            'dpi': float(self.figure.dpi),
            'text': [(str(k), v if isinstance(v, str) else str(v))
                     for k, v in text.items() if v is not None],
            'rgba': bytes(pixels),
        }

    _print_pil.__doc__ = stock.__doc__
    _print_pil.__wrapped__ = stock
    FigureCanvasAgg._print_pil = _print_pil


# --- warm-up ----------------------------------------------------------------------------

def warm_up(rules, src, out, tmp, preload_pandas, render_once=None, before_render_once=None,
            state_guard=None, one_shot=False, preload_loadmat=True, diagnose=None,
            figures=None, text_metrics=None, library_guards=None):
    """Imports the scientific stack, renders one figure, freezes the warm state."""
    global _RULES, _SRC, _OUT, _TMP, _SRC_REAL, _OUT_REAL, _TMP_REAL, _JOB_BUILTINS, _INJECTED, _INJECTED_ON_USE, _SAVED_WARNINGS
    global _CAPABILITY_IDS, _CAPABILITY_EXEMPT, _STATE_GUARD, _WARM_CONTEXT, _WARM_DECIMAL
    global _DIAGNOSE, _FIGURES_MOD, _GUARDS
    _DIAGNOSE, _FIGURES_MOD = diagnose, figures
    _RULES = {
        'allowed_modules': frozenset(rules['allowed_modules']),
        'denied_modules': tuple(rules['denied_modules']),
        'module_members': {m: frozenset(names) for m, names in rules['module_members'].items()},
        'banned_attributes': frozenset(rules['banned_attributes']),
        'banned_builtins': frozenset(rules['banned_builtins']),
        'banned_attribute_prefixes': tuple(rules.get('banned_attribute_prefixes', ())),
        'allowed_dunder_reads': frozenset(rules.get('allowed_dunder_reads', ())),
        # Builtins are refused by name (banned_builtins), never wholesale: `str` and
        # `int` are no capability.
        'capability_modules': frozenset(m.lstrip('_') for m in rules['capability_modules'])
        - {'builtins'},
    }
    _SRC, _OUT, _TMP = src, out, tmp
    _SRC_REAL = os.path.realpath(src)
    _OUT_REAL = os.path.realpath(out)
    _TMP_REAL = os.path.realpath(tmp)

    import numpy
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
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
    if preload_pandas:
        import pandas  # noqa: F401  (injected as `pd`: see _injected_globals)

    _install_memory_savefig()
    _install_raw_png()
    _install_figure_notes()
    _install_formatter_check()
    # Library functions that would act for the job with a reach of their own (pandas'
    # expression engine, string dispatch, np.load's pickles, host details, backends
    # imported by name): checked versions, before the state guard's snapshot. See
    # python/library_guards.py.
    if library_guards is not None:
        library_guards.configure(_exact_str, _attribute_refusal, _module_allowed,
                                 (_ModuleProxy, _ImportedOnUse))
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
    for name in ('__loader__', '__spec__', '__package__'):
        curated.pop(name, None)
    curated['__import__'] = _guarded_import
    curated['open'] = _guarded_open
    curated['getattr'] = _curated_getattr
    curated['hasattr'] = _curated_hasattr
    _JOB_BUILTINS = curated

    _CAPABILITY_IDS, _CAPABILITY_EXEMPT = _collect_capability_ids(rules['capability_exempt'])
    _INJECTED, _INJECTED_ON_USE = _injected_globals(rules['injected'])
    if _GUARDS is not None:
        # After the capability identities are collected from them, before the state
        # guard's snapshot of sys.modules (src/worker/audit.rs: UNIMPORTABLE).
        _GUARDS.seal(rules.get('unimportable', ()), rules.get('unimportable_kept', ()))

    if state_guard is not None:
        state_guard.snapshot(_module_allowed, skip=[matplotlib.rcParams])
        _STATE_GUARD = state_guard
    # Every job runs in a copy of this context: what it sets in a context variable
    # (numpy's error state and print options, a decimal context) dies with the copy.
    _WARM_CONTEXT = contextvars.copy_context()
    if 'decimal' in sys.modules:
        _WARM_DECIMAL = sys.modules['decimal'].getcontext().copy()

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
    sys.meta_path (python/library_guards.py)."""
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


# --- one job ----------------------------------------------------------------------------

class _CappedText(io.TextIOBase):
    """A text sink that keeps the first `cap` bytes (UTF-8, whole characters only) and
    counts the bytes of the rest: the caps the host documents are in bytes."""

    def __init__(self, cap):
        self._parts = []
        self._left = cap
        self.dropped = 0

    def writable(self):
        return True

    def write(self, s):
        # The exact copy: a str subclass's `__len__` or `isascii` must not size the cap.
        s = _exact_str(s)
        if s is None:
            raise TypeError("write() argument must be str")
        # Lone surrogates (which UTF-8 cannot carry) count as the '?' they become.
        data = None if s.isascii() else s.encode('utf-8', 'replace')
        size = len(s) if data is None else len(data)
        if size <= self._left:
            self._parts.append(s)
            self._left -= size
        elif self._left > 0:
            kept = (s[:self._left] if data is None
                    else data[:self._left].decode('utf-8', 'ignore'))
            kept_size = len(kept) if data is None else len(kept.encode('utf-8', 'replace'))
            self._parts.append(kept)
            self._left = 0
            self.dropped += size - kept_size
        else:
            self.dropped += size
        return len(s)

    def getvalue(self):
        return ''.join(self._parts)


def _truncate(text, cap=_MSG_CAP):
    """At most `cap` characters of `text`, measured on its exact copy: an exception's
    `str()` is the job's, and may be a `str` subclass whose `__len__` says 0."""
    text = _exact_str(text)
    if text is None:
        return '<not text>'
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
    explained = _DIAGNOSE.explain(exc, code) if _DIAGNOSE is not None else {}
    # numpy's _ArrayMemoryError and friends: the supervisor knows MemoryError.
    type_name = 'MemoryError' if isinstance(exc, MemoryError) else _truncate(type(exc).__name__, 200)
    return {
        'type_name': type_name,
        'message': _truncate(explained.get('message') or message),
        'line': line,
        'traceback': _truncate('\n'.join(tb), 4000),
        'hint': _truncate(explained.get('hint') or '', 1500),
    }


def _details_json(error, notes):
    """The structured part of a job's answer, as JSON (decoded by the worker into the
    protocol's types)."""
    import json
    try:
        return json.dumps({'error': error, 'figures': notes}, allow_nan=False)
    except (TypeError, ValueError) as exc:  # a summary value JSON cannot carry
        notes = {'errors': [f'figure notes not encodable: {exc}']}
        return json.dumps({'error': error, 'figures': notes}, allow_nan=False)


# --- between jobs -----------------------------------------------------------------------
#
# What one job leaves behind must never reach the next. Each step restores one kind of
# state without comparing values (a job's values may not be comparable: numpy arrays in a
# cycler raise on `!=`) and is guarded on its own: a step that fails is reported, the
# other steps still run, and the supervisor retires the worker instead of letting it
# serve another job in an unknown state. The job's own result stands either way.

def _snapshot_rc():
    """rcParams as stored right after warm-up: every value deep-copied once, and the keys
    whose values can change in place (lists, cyclers) noted, so a restore hands out
    copies of those and never the snapshot itself."""
    global _SAVED_RC, _RC_MUTABLE
    import copy
    import matplotlib
    stored = dict(dict.items(matplotlib.rcParams))
    _SAVED_RC = copy.deepcopy(stored)
    _RC_MUTABLE = tuple(k for k, v in _SAVED_RC.items()
                        if not isinstance(v, (str, int, float, bool, type(None), tuple)))


def _restore_rc():
    """Puts every stored rcParams value back (~0.3 ms), bypassing the validators: the
    snapshot was validated when warm-up set it, and a job may have replaced them."""
    import copy
    import matplotlib
    values = dict(_SAVED_RC)
    for key in _RC_MUTABLE:
        values[key] = copy.deepcopy(_SAVED_RC[key])
    dict.clear(matplotlib.rcParams)
    dict.update(matplotlib.rcParams, values)


def _close_figures():
    import matplotlib.pyplot as plt
    plt.close('all')
    if plt.isinteractive():
        plt.ioff()


def _restore_warnings():
    warnings.filters[:] = _SAVED_WARNINGS
    warnings.onceregistry.clear()
    # Invalidates every module's __warningregistry__: a warning one job triggered is
    # shown again to the next instead of being remembered as already shown.
    mutated = getattr(warnings, "_filters_mutated", None)
    if mutated is not None:
        mutated()


def _collect_garbage():
    """Frees what the job made, now rather than during the next job: a generator left
    suspended inside `with plt.style.context(...)` (or any `finally`) in a reference
    cycle would otherwise run its exit code in the middle of another job. It runs after
    the figures are closed, so that their reference cycles go too: left to the next
    job's automatic collections, a heavy figure's (800 bars) cost that job 25-50 ms."""
    import gc
    gc.collect()


def _fresh_context_objects():
    """In the job's context copy: context variables whose *values* are mutable objects
    (the decimal module's current Context, changed in place by `getcontext().prec = 3`)
    get a copy of their warm-up value, so the copy of the context is a copy all through."""
    decimal = sys.modules.get('decimal')
    if decimal is not None:
        decimal.setcontext(_WARM_DECIMAL.copy() if _WARM_DECIMAL is not None else decimal.Context())


def _restore_cwd():
    os.chdir(_TMP)


# Run in this order after every job; the state guard's check follows (see reset_after_job).
_HOUSEKEEPING = [
    ('close figures', _close_figures),
    ('collect garbage', _collect_garbage),
    ('restore rcParams', _restore_rc),
    ('restore warning filters', _restore_warnings),
    ('restore working directory', _restore_cwd),
]


def _housekeeping():
    """Runs every between-job step; returns the failures as text (empty: all clean).
    Never raises: anything a step raises, SystemExit included, is a failure to report."""
    failures = []
    for name, step in _HOUSEKEEPING:
        try:
            step()
        except BaseException as exc:  # a job's leftovers may raise anything
            try:
                failures.append(f'{name}: {type(exc).__name__}: {_truncate(str(exc), 200)}')
            except BaseException:
                failures.append(f'{name}: {type(exc).__name__}')
    return failures


def run_job(code, seed, out_name, stdout_cap, figures_in_memory=False, arrays=None,
            describe_figures=True, raw_png_limit=0):
    """Runs one job; never raises (job exceptions, SystemExit included, are described).
    `describe_figures` false: no summary of saved figures (python/figures.py).
    `raw_png_limit` > 0: PNGs saved into out/ come back as pixels for the host to encode
    (see _install_raw_png). The between-job reset is `reset_after_job`, which the worker
    runs once the answer has gone out."""
    global _FIGURES, _NOTES, _MEMORY_FORMATS, _RAW_PNG_LIMIT
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
    job_globals.update(_on_use(_INJECTED_ON_USE))
    if arrays:
        job_globals.update(arrays)  # names checked by the supervisor: no clash
    out, err = _CappedText(stdout_cap), _CappedText(_JOB_STDERR_CAP)
    saved_streams = sys.stdout, sys.stderr
    error = None
    os.chdir(_TMP)
    _RAW_PNG_LIMIT = raw_png_limit
    _MEMORY_FORMATS = None if figures_in_memory else ({'png'} if raw_png_limit else set())
    _FIGURES = {} if figures_in_memory or raw_png_limit else None
    _NOTES = {'describe': describe_figures, 'saves': [], 'saved_ids': set(), 'shown': False,
              'errors': [], 'describe_ms': 0.0}
    start = time.perf_counter()
    try:
        sys.stdout, sys.stderr = out, err
        try:
            compiled = compile(code, '<job>', 'exec', dont_inherit=True)
            context = _WARM_CONTEXT.copy()
            context.run(_fresh_context_objects)
            context.run(exec, compiled, job_globals)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt are job failures too
            error = _describe(exc, code)
        exec_ms = (time.perf_counter() - start) * 1000.0
        memory, _FIGURES = sorted((_FIGURES or {}).items()), None
        figures = [(name, value) for name, value in memory if isinstance(value, bytes)]
        raw = [(name, value) for name, value in memory if not isinstance(value, bytes)]
        notes, _NOTES = _figure_notes(), None
        # Dropping the job's names may run its code (a suspended generator's `finally`):
        # still under capture, so what it prints stays the job's.
        try:
            job_globals.clear()
        except BaseException:
            pass
    finally:
        sys.stdout, sys.stderr = saved_streams
        _FIGURES = _NOTES = _MEMORY_FORMATS = None
        _RAW_PNG_LIMIT = 0
    return {
        'details': _details_json(error, notes),
        'exec_ms': exec_ms,
        'stdout': out.getvalue(),
        'stdout_dropped': out.dropped,
        'stderr': err.getvalue(),
        'figures': figures,
        'raw_figures': raw,
    }


def reset_after_job():
    """The between-job reset, run after the job's answer has gone out (the host encodes
    and checks the figures meanwhile) and before the host hands this worker another job:
    every housekeeping step, then the state guard's check. Anything the job's leftovers
    print now (a generator's `finally` run by the collection) is dropped: the job's
    output has been sent. Never raises."""
    saved_streams = sys.stdout, sys.stderr
    sink = _CappedText(0)
    try:
        sys.stdout = sys.stderr = sink
        leftovers = _housekeeping()
        try:
            changes = _STATE_GUARD.check() if _STATE_GUARD is not None else []
        except BaseException as exc:
            changes = [f'the state check failed: {type(exc).__name__}']
    finally:
        sys.stdout, sys.stderr = saved_streams
    return {'housekeeping_failures': leftovers, 'state_changes': changes}
