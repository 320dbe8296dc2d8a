"""The warm snapshot: the sweep over the allowed modules that finds every container,
class and module namespace a job could change (`snapshot`), taken at warm-up and again
after a forked worker's folders move (`rebase`).

One namespace with the other files of the state guard, which the worker runs in the
order of src/worker/modules.rs.
"""

import functools
import sys
import types


_CONTAINERS = []        # [(label, container, (items, fingerprint))] in sweep order
_CLASSES = []           # [(label, class, ({name: value}, fingerprint))]
_NAMESPACES = []        # [(module name, module dict, (items, fingerprint))]
_CUSTOM = []            # [[label, same, restore, saved]]
_SLOTS = []             # [(label, object, ((member descriptor, value), ...))]: pyward's own
_PARTIALS = []          # [(label, partial, (func, args, keywords, __dict__))]
_REINIT = ([], [], [], None)  # a class's properties, classmethods and staticmethods:
                              # labels, objects, what `__init__` would replace, fingerprint
_CELLS = ([], [], [], b'')  # closure cells of the functions swept: labels, cells, contents,
                            # and the contents' fingerprint (see cell_fingerprint)
_EXCLUDED = {}          # label -> reason, for what the sweep met and left out
_EXCLUDED_IDS = {}      # id of what was left out -> its label (for the coverage test)
_ALL_CLASSES = []       # every class the sweep reached (mutable or not)
_MODULES = frozenset()  # names in sys.modules after warm-up
_ALLOWED = None         # callable(module name) -> bool, from the prelude
_TAGS = {}              # list name -> version tags of its dicts (see src/worker/cpython.rs)
_LAST = {}              # the last check's numbers, for measurements (see last_check())


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


def _restore(obj, snap, graveyard):
    """Puts the template's items back; what the job left is kept alive in `graveyard`
    until every registry is restored (no finalizer of a job's object runs half-way)."""
    items = snap[0]
    if isinstance(obj, dict):
        graveyard.append(tuple(dict.items(obj)))
        dict.clear(obj)
        dict.update(obj, items)
    elif isinstance(obj, list):
        graveyard.append(tuple(list.__iter__(obj)))
        list.__setitem__(obj, slice(None), items)
    else:
        graveyard.append(tuple(set.__iter__(obj)))
        set.clear(obj)
        set.update(obj, items)


_DESCRIPTORS = (property, classmethod, staticmethod, types.MemberDescriptorType,
                types.GetSetDescriptorType)


def _plain_instance(obj):
    """A non-callable object of a library class with a `__dict__` (not a module, class,
    function, descriptor or cache wrapper)."""
    return not isinstance(obj, (type, types.ModuleType) + _DESCRIPTORS) and not callable(obj) \
        and isinstance(getattr(obj, '__dict__', None), dict)


def _excluded_instance(obj):
    """Why the attributes of this object are not guarded; None when they are."""
    import weakref
    import _weakrefset
    if isinstance(obj, (weakref.WeakValueDictionary, weakref.WeakKeyDictionary,
                        _weakrefset.WeakSet)):
        return ('holds only weak references: it cannot keep a job object alive, and its '
                'entries come and go with garbage collection')
    return None


def _public_module_names(allowed):
    return [n for n, m in sys.modules.items()
            if m is not None and allowed(n) and not any(c.startswith('_') for c in n.split('.'))]


def reached_modules(allowed):
    """Names of the modules whose state the guard covers: every loaded module of an
    allowlisted package (private and denied submodules included: their state is reached
    through the allowed ones) but `VIEW_ONLY_MODULES`, the C accelerators of allowed
    modules, and `STATE_MODULES`. One name per module object."""
    names = list(sys.modules)
    tops = {n.partition('.')[0] for n in names
            if allowed(n.partition('.')[0]) and n.partition('.')[0] not in VIEW_ONLY_MODULES}
    seen, found = set(), []
    for name in sorted(names):
        module = sys.modules.get(name)
        if not isinstance(module, types.ModuleType) or id(module) in seen:
            continue
        top = name.partition('.')[0]
        if top in tops or (top.startswith('_') and top[1:] in tops) or name in STATE_MODULES \
                or name in OWN_MODULES:
            seen.add(id(module))
            found.append(name)
    return found


def _immutable_type(cls):
    return bool(cls.__flags__ & (1 << 8))  # Py_TPFLAGS_IMMUTABLETYPE


def _sweep(allowed, skip):
    """Every module namespace, class and container the allowlist reaches (see the module
    docs). `skip`: ids of containers restored elsewhere. Returns (containers, classes,
    namespaces)."""
    found = {}
    classes = {}
    excluded = {}
    slotted = {}
    cells = {}
    partials = {}
    reinit = {}

    def add(label, obj):
        """Guards container `obj` (once); True when it was new."""
        if not _is_container(obj) or id(obj) in found or id(obj) in excluded:
            return False
        if id(obj) in skip:
            excluded[id(obj)] = (label, EXCLUDED.get(label, _SKIPPED))
            return False
        if label in EXCLUDED:
            excluded[id(obj)] = (label, EXCLUDED[label])
            return False
        found[id(obj)] = (label, obj)
        return True

    def instance(label, obj):
        """A plain object's attributes: its `__dict__` and the containers in it (a
        registry object keeps its entries there; deeper data is its own)."""
        why = _excluded_instance(obj)
        if why is not None:
            excluded.setdefault(id(obj), (label, why))
            return
        if add(f'{label}.__dict__', vars(obj)):
            for a, v in list(vars(obj).items()):
                add(f'{label}.{a}', v)

    def nested(label, obj):
        values = ()
        if isinstance(obj, dict):
            values = list(dict.items(obj))
        elif isinstance(obj, list):
            values = list(enumerate(obj))
        for key, value in values:
            if add(f'{label}[{key!r:.40}]', value):
                continue
            if _plain_instance(value):
                instance(f'{label}[{key!r:.40}]', value)
            elif type(value) is functools.partial:
                partial(f'{label}[{key!r:.40}]', value)
            elif own_slots(value):
                slotted.setdefault(id(value), (f'{label}[{key!r:.40}]', value))

    def function(label, fn):
        """Mutable defaults (`def f(x, cache={})`): state every call shares; the cells
        of its closure (a decorator's wrapped function: `cell_contents` is writable
        and no audit event reports the write)."""
        for i, cell in enumerate(getattr(fn, '__closure__', None) or ()):
            cells.setdefault(id(cell), (f'{label}.__closure__[{i}]', cell))
            add(f'{label}.__closure__[{i}]', cell_value(cell))
        for i, value in enumerate(getattr(fn, '__defaults__', None) or ()):
            add(f'{label}.__defaults__[{i}]', value)
        kwdefaults = getattr(fn, '__kwdefaults__', None)
        if kwdefaults:
            add(f'{label}.__kwdefaults__', kwdefaults)
            for k, value in list(kwdefaults.items()):
                add(f'{label}.__kwdefaults__[{k!r}]', value)

    def partial(label, p):
        """A `functools.partial` a library keeps (numpy's array repr is one): what it
        calls, with what, and its keywords dict (`__setstate__` replaces them in place,
        and no audit event reports it)."""
        if id(p) not in partials:
            partials[id(p)] = (label, p)
            add(f'{label}.keywords', p.keywords)

    def attribute(label, value):
        if add(label, value):
            nested(label, value)
        elif isinstance(value, type):
            classes.setdefault(id(value), (label, value))
        elif isinstance(value, types.FunctionType):
            function(label, value)
        elif _plain_instance(value):
            instance(label, value)
        elif type(value) is functools.partial:
            partial(label, value)
        elif own_slots(value):
            slotted.setdefault(id(value), (label, value))

    modules = reached_modules(allowed)
    module_names = set(modules)
    namespaces = []
    for name in modules:
        namespace = vars(sys.modules[name])
        namespaces.append((name, namespace))
        for attr, value in list(namespace.items()):
            if attr == '__builtins__' or isinstance(value, types.ModuleType):
                continue
            attribute(f'{name}.{attr}', value)
    for path, _why in EXTRA_REGISTRIES:
        obj = _resolve(path)
        add(path, obj)
        nested(path, obj)  # even when found already, under another name
    # pandas' option tree, every level (the sweep above reaches its first).
    if 'pandas._config.config' in sys.modules:
        for path, d in _option_tree():
            add(f'pandas option tree {path or "(root)"}', d)
    # Classes: those bound in the modules, their nested classes, and subclasses defined
    # in the modules (made by a function, bound nowhere).
    todo = list(classes.values())
    while todo:
        label, cls = todo.pop()
        for attr, value in list(vars(cls).items()):
            if isinstance(value, type):
                if id(value) not in classes and getattr(value, '__module__', None) in module_names:
                    classes[id(value)] = (f'{label}.{attr}', value)
                    todo.append(classes[id(value)])
                continue
            if type(value) in _REINITIALISED:
                reinit.setdefault(id(value), (f'{label}.{attr}', value))
            if isinstance(value, (classmethod, staticmethod)):
                value = value.__func__
            attribute(f'{label}.{attr}', value)
        try:
            subclasses = type.__subclasses__(cls)
        except TypeError:
            subclasses = []
        for sub in subclasses:
            if id(sub) not in classes and getattr(sub, '__module__', None) in module_names:
                classes[id(sub)] = (f'{sub.__module__}.{sub.__qualname__}', sub)
                todo.append(classes[id(sub)])
    # Context variables' values as warm-up left them (a mutable value is shared by every
    # job's copy of the context).
    import contextvars
    for var, value in contextvars.copy_context().items():
        if add(f'context variable {var.name}', value):
            nested(f'context variable {var.name}', value)
    for key, (label, reason) in excluded.items():
        _EXCLUDED[label] = reason
        _EXCLUDED_IDS[key] = label
    _SLOTS[:] = [(label, obj, tuple((d, slot_value(d, obj)) for d in own_slots(obj)))
                 for label, obj in slotted.values()]
    _PARTIALS[:] = [(label, p, partial_state(p)) for label, p in partials.values()]
    _take_reinit([label for label, _ in reinit.values()], [d for _, d in reinit.values()])
    # In the order of their addresses: cells made together lie together, and the check
    # reads them in one sweep through memory (src/worker/cpython.rs, cell_contents).
    in_memory_order = sorted(cells.values(), key=lambda entry: id(entry[1]))
    _take_cells([label for label, _ in in_memory_order], [cell for _, cell in in_memory_order])
    return list(found.values()), sorted(classes.values(), key=lambda c: c[0]), namespaces


def own_slots(obj):
    """The slots (member descriptors) of an object of a class of pyward's own (a
    module's view holds its module in one), or () for any other object. A job writes
    a slot with `object.__setattr__`, which no audit event reports."""
    cls = type(obj)
    if isinstance(obj, type) or _TYPE_MODULE(cls) not in OWN_MODULES:
        return ()
    return tuple(d for c in cls.__mro__ for d in vars(c).values()
                 if type(d) is types.MemberDescriptorType)


def slot_value(descriptor, obj):
    """A slot's value read through the descriptor itself (no method of the object's
    runs); `_MISSING` when it is empty."""
    try:
        return descriptor.__get__(obj, type(obj))
    except AttributeError:
        return _MISSING


# Descriptors whose `__init__` a job can call again on the library's own object
# (`vars(Figure)['dpi'].__init__(f)` rewires every later `fig.dpi`), which no audit
# event reports.
_REINITIALISED = (property, classmethod, staticmethod)


def reinit_state(d):
    """What `d.__init__` would replace, as its `__init__` takes it back."""
    if type(d) is property:
        return (d.fget, d.fset, d.fdel, d.__doc__)
    return (d.__func__,)


def reinit_fingerprint(objs):
    """The identities of those fields, read in place by the worker's native
    `descriptor_fields` (src/worker/cpython.rs); None without it."""
    native = globals().get('descriptor_fields')
    return native(objs) if native is not None else None


def _take_reinit(labels, objs):
    global _REINIT
    _REINIT = (labels, objs, [reinit_state(d) for d in objs], reinit_fingerprint(objs))


def partial_state(p):
    """A partial's state as `__setstate__` takes it back, read through its C members."""
    return (p.func, p.args, p.keywords, vars(p))


def _same_tuple(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def partial_same(p, state):
    return p.func is state[0] and p.args is state[1] and p.keywords is state[2] \
        and vars(p) is state[3]


def cell_value(cell):
    """What a closure cell holds; `_MISSING` when it is empty."""
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def cell_fingerprint(cells):
    """The identities of what `cells` hold, read in place by the worker's native
    `cell_contents` (src/worker/cpython.rs); None without it (then every cell is
    compared in Python)."""
    native = globals().get('cell_contents')
    return native(cells) if native is not None else None


def _take_cells(labels, cells):
    global _CELLS
    _CELLS = (labels, cells, [cell_value(c) for c in cells], cell_fingerprint(cells))


def snapshot(allowed, skip=()):
    """Records the warm state. `allowed(name)`: whether a module name is allowlisted;
    `skip`: containers restored by the prelude's own reset (rcParams)."""
    global _CONTAINERS, _CLASSES, _NAMESPACES, _CUSTOM, _MODULES, _ALLOWED, _ALL_CLASSES
    _ALLOWED = allowed
    skip = {id(x) for x in skip}
    _EXCLUDED.clear()
    _EXCLUDED_IDS.clear()
    containers, classes, namespaces = _sweep(allowed, skip)
    _CONTAINERS = [(label, obj, _record(obj)) for label, obj in containers]
    _ALL_CLASSES = [cls for _, cls in classes]
    _CLASSES = []
    for label, cls in classes:
        if not _immutable_type(cls):
            _CLASSES.append((label, cls, (dict(vars(cls)), _class_identities(cls))))
    _NAMESPACES = [(name, ns, _record(ns)) for name, ns in namespaces]
    _TAGS.clear()
    versions = globals().get('versions')
    # Version tags (PEP 509) exist, and move on every change, up to CPython 3.13.
    if versions is not None and sys.version_info[:2] <= (3, 13):
        for name in ('_CONTAINERS', '_CLASSES', '_NAMESPACES'):
            _TAGS[name] = versions(globals()[name])
    _CUSTOM = []
    for label, module, take, same, restore in CUSTOM:
        if module in sys.modules:
            try:
                saved = take()
                if not same(saved):
                    raise RuntimeError('differs from itself')
            except Exception as exc:  # noqa: BLE001 - a registry this Python lacks
                _EXCLUDED[f'CUSTOM {label}'] = f'cannot be read here: {type(exc).__name__}: {exc!s:.100}'
                continue
            _CUSTOM.append([label, same, restore, saved])
    _MODULES = frozenset(sys.modules)


def rebase():
    """At the worker's birth, right before its first job (src/worker/held.rs): what the
    worker's own set-up changed since the snapshot (a forked worker's environment and
    directories, the modules taken out of `sys.modules` and the finder put at the head
    of `sys.meta_path` when imports close) is the template from now on. Returns how many
    registries were taken again."""
    global _MODULES
    taken = 0
    for name in ('_CONTAINERS', '_NAMESPACES'):
        entries = globals()[name]
        for i in list(_suspects(name)):
            label, obj, snap = entries[i]
            if _identities(obj) != snap[1]:
                entries[i] = (label, obj, _record(obj))
                taken += 1
    for i in list(_suspects('_CLASSES')):
        label, cls, saved = _CLASSES[i]
        if not _class_same(cls, saved):
            _CLASSES[i] = (label, cls, (dict(vars(cls)), _class_identities(cls)))
            taken += 1
    labels, cells, contents, _ = _CELLS
    if any(cell_value(c) is not v for c, v in zip(cells, contents)):
        _take_cells(labels, cells)
        taken += 1
    labels, objs, states, _ = _REINIT
    if any(not _same_tuple(reinit_state(d), s) for d, s in zip(objs, states)):
        _take_reinit(labels, objs)
        taken += 1
    for entry in _CUSTOM:
        if not entry[1](entry[3]):
            take = next(t for label, _, t, _, _ in CUSTOM if label == entry[0])
            entry[3] = take()
            taken += 1
    if len(sys.modules) != len(_MODULES):
        # (A forked worker whose set-up imported nothing keeps the zygote's set, and
        # does not copy the pages of every module name a new set would touch.)
        _MODULES = frozenset(sys.modules)
    versions = globals().get('versions')
    if _TAGS and versions is not None:
        for name in _TAGS:
            _TAGS[name] = versions(globals()[name])
    return taken
