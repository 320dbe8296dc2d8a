"""Process-wide state kept in C or behind an API, which no sweep of containers sees: csv
dialects, pandas options, decimal contexts, the locale, the environment, the global
random generators, ABC registrations, interpreter hooks, threads, numpy's hugepage
advice, scipy.fft's backends. Each is snapshotted, compared and restored (or retires
the worker) by its own three functions (`CUSTOM`).

One namespace with the other files of the state guard, which the worker runs in the
order of src/worker/modules.rs.
"""

import sys


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
    groups = {}   # the path of the dict holding options -> [(name, template value)]
    for key in sorted(config._registered_options):
        d, last = _option_leaf(root, key)
        if d is not None:
            values[key] = dict.get(d, last, _MISSING)
            groups.setdefault(tuple(key.split('.')[:-1]), []).append((last, values[key]))
    return {'root': root, 'values': values, 'groups': list(groups.items())}


def _pandas_same(saved):
    """Every option reads its template value; each dict of the tree is walked to once,
    not once per option (after every job: ~0.06 -> ~0.01 ms)."""
    from pandas._config import config
    root = config._global_config
    if root is not saved['root'] or len(config._registered_options) != len(saved['values']):
        return False
    for parents, options in saved['groups']:
        d = root
        for p in parents:
            d = dict.get(d, p)
            if type(d) is not dict:
                return False
        for last, value in options:
            if dict.get(d, last, _MISSING) is not value:
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


def _uarray_state():
    from scipy._lib._uarray import _uarray
    return _uarray


def _uarray_snapshot():
    """scipy.fft's backends (`register_backend`, `set_global_backend`), kept by uarray
    in C: a job's backend class would run inside every later job's `scipy.fft.fft`."""
    return _uarray_state().get_state()


def _uarray_same(saved):
    """Per domain: the same global backend (by identity), flags, and registered
    backends (by identity)."""
    now, then = _uarray_state().get_state()._pickle()[0], saved._pickle()[0]
    if now.keys() != then.keys():
        return False
    for domain, (glob, registered, flag) in then.items():
        g, r, f = now[domain]
        if len(g) != len(glob) or any(a is not b for a, b in zip(g, glob)) or f != flag \
                or len(r) != len(registered) or any(a is not b for a, b in zip(r, registered)):
            return False
    return True


def _uarray_restore(saved):
    _uarray_state().set_state(saved)


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
    ('scipy.fft backends (uarray)', 'scipy._lib._uarray._uarray', _uarray_snapshot, _uarray_same,
     _uarray_restore),
]
