"""After every job: what changed since the warm snapshot is restored, or named so the
worker retires (`check`), and checked once more (`_verify`); modules a job imported are
judged for state of their own; the font files the zygote releases; and the numbers
of the last check and the registries guarded, for measurements and tests.

One namespace with the other files of the state guard, which the worker runs in the
order of src/worker/modules.rs.
"""

import enum
import gc
import re
import sys
import types


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
    for label, obj, saved in _SLOTS:
        for descriptor, value in saved:
            now = slot_value(descriptor, obj)
            if now is value:
                continue
            restored.append(f'{label}.{descriptor.__name__}')
            graveyard.append((now,))
            try:
                if value is _MISSING:
                    descriptor.__delete__(obj)
                else:
                    descriptor.__set__(obj, value)
            except BaseException as exc:
                problems.append(f'{label}.{descriptor.__name__} changed and could not be '
                                f'restored ({type(exc).__name__})')
            undone(f'{label}.{descriptor.__name__}', (value,))
    for label, p, state in _PARTIALS:
        if partial_same(p, state):
            continue
        restored.append(label)
        graveyard.append(partial_state(p))
        try:
            p.__setstate__(state)
        except BaseException as exc:
            problems.append(f'{label} changed and could not be restored ({type(exc).__name__})')
        undone(label, state)
    for label, d, state in _changed_descriptors():
        restored.append(label)
        graveyard.append(reinit_state(d))
        try:
            type(d).__init__(d, *state)
        except BaseException as exc:
            problems.append(f'{label} changed and could not be restored ({type(exc).__name__})')
        undone(label, state)
    for label, cell, value in _changed_cells():
        restored.append(label)
        graveyard.append((cell_value(cell),))
        try:
            if value is _MISSING:
                del cell.cell_contents
            else:
                cell.cell_contents = value
        except BaseException as exc:
            problems.append(f'{label} changed and could not be restored ({type(exc).__name__})')
        undone(label, (value,))
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


def _changed_cells():
    """(label, cell, its template content) of each closure cell that holds something
    else now: one native fingerprint first, each cell only when it differs."""
    labels, cells, contents, fingerprint = _CELLS
    if fingerprint is not None and cell_fingerprint(cells) == fingerprint:
        return []
    return [(label, cell, value) for label, cell, value in zip(labels, cells, contents)
            if cell_value(cell) is not value]


def _changed_descriptors():
    """(label, descriptor, its template state) of each property, classmethod or
    staticmethod whose `__init__` was called again: one native fingerprint first."""
    labels, objs, states, fingerprint = _REINIT
    if fingerprint is not None and reinit_fingerprint(objs) == fingerprint:
        return []
    return [(label, d, state) for label, d, state in zip(labels, objs, states)
            if not _same_tuple(reinit_state(d), state)]


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
    again += [f'{label}.{d.__name__} changed during the reset' for label, obj, saved in _SLOTS
              for d, value in saved if slot_value(d, obj) is not value]
    again += [f'{label} changed during the reset' for label, _, _ in _changed_cells()]
    again += [f'{label} changed during the reset' for label, _, _ in _changed_descriptors()]
    again += [f'{label} changed during the reset' for label, p, state in _PARTIALS
              if not partial_same(p, state)]
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
    (pyward's own named apart too), slots, closure cells and C registries, the modules
    swept, the pandas options checked, and what was left out with its reason."""
    pandas_options = []
    for label, _, _, saved in _CUSTOM:
        if label == 'pandas options':
            pandas_options = sorted(saved['values'])
    return {
        'containers': [label for label, _, _ in _CONTAINERS],
        'classes': [label for label, _, _ in _CLASSES],
        'namespaces': [name for name, _, _ in _NAMESPACES],
        'own_namespaces': [name for name, _, _ in _NAMESPACES if name in OWN_MODULES],
        'own_slots': [label for label, _, _ in _SLOTS],
        'closure_cells': list(_CELLS[0]),
        'partials': [label for label, _, _ in _PARTIALS],
        'reinitialisable_descriptors': list(_REINIT[0]),
        'custom': [entry[0] for entry in _CUSTOM],
        'pandas_options': pandas_options,
        'excluded': dict(_EXCLUDED),
        'not_swept': dict(NOT_SWEPT),
    }
