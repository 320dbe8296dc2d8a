"""pandas' string dispatch (`apply`/`agg`/`transform`/`filter` given a method name):
a name refused as an attribute is refused here too, and the exact copy judged is the
one passed on.

One namespace with the other files of python/library_guards/, which the worker runs in
the order of src/worker/modules.rs.
"""

import types


# --- pandas: string dispatch ----------------------------------------------------------------

_DISPATCH = {
    'pandas.core.generic.NDFrame': ('apply', 'agg', 'aggregate', 'transform'),
    'pandas.core.groupby.groupby.BaseGroupBy': ('apply', 'agg', 'aggregate', 'transform',
                                                'filter'),
    'pandas.core.resample.Resampler': ('apply', 'agg', 'aggregate', 'transform'),
    'pandas.core.window.rolling.BaseWindow': ('apply', 'agg', 'aggregate'),
}
# Keyword arguments of those methods that are never a function or a function name.
_NOT_FUNCTIONS = frozenset({'axis', 'raw', 'result_type', 'args', 'by_row', 'engine',
                            'engine_kwargs', 'dropna', 'include_groups', 'na_action'})


def _subclasses(cls):
    found, todo = [], [cls]
    while todo:
        c = todo.pop()
        if c not in found:
            found.append(c)
            todo.extend(c.__subclasses__())
    return found


def _install_dispatch(pandas):
    import importlib
    named_agg = getattr(pandas, 'NamedAgg', None)
    for path, methods in _DISPATCH.items():
        module_name, _, class_name = path.rpartition('.')
        base = getattr(importlib.import_module(module_name), class_name)
        for cls in _subclasses(base):
            for method in methods:
                stock = cls.__dict__.get(method)
                if isinstance(stock, types.FunctionType) and not getattr(stock, '_pyward_guard', False):
                    setattr(cls, method, _dispatching(cls, method, stock, named_agg))


def _dispatching(cls, method, stock, named_agg):
    where = f'{cls.__name__}.{method}'

    def dispatch(self, *args, **kwargs):
        if args:
            args = (_clean_function(args[0], where),) + args[1:]
        given = False
        for key in ('func', 'arg'):
            if key in kwargs:
                given = given or kwargs[key] is not None
                kwargs[key] = _clean_function(kwargs[key], where)
        if not given and (not args or args[0] is None):
            # Named aggregation: agg(total=('b', 'sum')) or agg(total='sum').
            for key, value in list(kwargs.items()):
                if key not in _NOT_FUNCTIONS:
                    kwargs[key] = _clean_named(value, where, named_agg)
        return stock(self, *args, **kwargs)

    dispatch = _named_like(dispatch, stock)
    try:
        import inspect
        dispatch.__signature__ = inspect.signature(stock)
    except (TypeError, ValueError):
        pass
    dispatch._pyward_guard = True
    return dispatch


def _clean_function(func, where, depth=0):
    """`func` as pandas will use it, with every method name in it judged like an
    attribute and replaced by its exact copy; lists, tuples and dicts are rebuilt, so
    that what pandas iterates is what was judged."""
    text = _exact_str(func)
    if text is not None:
        why = _attribute_refusal(text)
        if why is not None:
            raise PermissionError(
                f"{where}({_short(text)!r}) is not allowed in this sandbox: a method named by "
                f"a string is reached like an attribute, and {why}. Pass a function, or a "
                "plain method name such as 'sum', 'mean' or 'max'")
        return text
    if func is None or callable(func) or depth > 3 or isinstance(func, type):
        return func
    if type(func) is dict or (hasattr(func, 'keys') and hasattr(func, '__getitem__')):
        return {key: _clean_function(value, where, depth + 1) for key, value in func.items()}
    if hasattr(func, '__iter__') and not isinstance(func, (bytes, bytearray)):
        items = [_clean_function(value, where, depth + 1) for value in func]
        return tuple(items) if type(func) is tuple else items
    return func


def _clean_named(value, where, named_agg):
    """A named aggregation's value: `('column', func)`, `NamedAgg(column, func)` or a
    function (name); the column is a label, not judged."""
    kind = type(value)
    if named_agg is not None and kind is named_agg:
        return named_agg(value.column, _clean_function(value.aggfunc, where))
    if kind is tuple and len(value) == 2:
        return (value[0], _clean_function(value[1], where))
    return _clean_function(value, where)


def _short(text, cap=60):
    return text if len(text) <= cap else text[:cap] + '...'
