"""What job code may reach by a name it computes at run time, judged where the name is
used: modules (`_module_allowed`), attributes read by string (the curated `getattr` and
`hasattr`), and the attribute steps of format fields (`str.format`, `str.format_map`,
`string.Formatter`).

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import _string


# --- module access ----------------------------------------------------------------------

def _module_allowed(name):
    """True when a dotted module name is inside the allowlist and not denied. A
    members-only module is allowed (as a view holding its members), and so is a path to
    one of its members; a path to any other of its names is not."""
    top = name.partition('.')[0]
    if top not in _RULES['allowed_modules']:
        return False
    # Deepest module first: `os.path.join` is judged by the members of `os.path`, not
    # as something below `os`'s member `path`.
    for module, members in sorted(_RULES['module_members'].items(), reverse=True):
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
