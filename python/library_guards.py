"""pyward worker: library functions that would act for the job with a reach of their own.

Loaded by the worker next to the prelude (src/worker/mod.rs), configured and installed
by the prelude's warm-up, before the state guard's snapshot: every worker of a pool,
forked ones included, starts with these in place. Nothing here is visible to jobs but
the replacements themselves.

- **String engines.** pandas' expression language (`pd.eval`, `DataFrame.eval`,
  `DataFrame.query`) follows attributes, indexes and calls the objects it names, in a
  library frame: with a string built at run time (`chr(95) * 2`) or `resolvers=` it
  walks to `os`. Each is replaced by a checked version: the expression is parsed with
  Python's `ast` into a small grammar (columns, `@` references to plain values of the
  job, literals, arithmetic, comparisons, `in`, boolean operators, pandas' maths
  functions), the names are resolved here, and pandas evaluates the canonical text
  this check wrote from the tree it judged, never the job's own text.
- **String dispatch.** `apply`/`agg`/`aggregate`/`transform` (and groupby's `filter`)
  of frames, series, groupbys, resamplers and windows take a method *name* and call
  `getattr(obj, name)`: a name refused as an attribute (`'eval'`, `'__getattribute__'`)
  is refused here too, judged and passed on as its exact copy.
- **Job-facing replacements** (`JOB_FACING`, consulted by the prelude's module views):
  `np.load` without `allow_pickle` however it is passed; `pd.eval` checked;
  `pd.show_versions`, `np.show_runtime`, `np.show_config`, `scipy.show_config` print
  the sandbox's view (versions only); matplotlib's host directories are refused.
- **String annotations.** typing evaluates them (`functools.singledispatch().register`
  does, for any function a job registers): a forward reference may name types only.
- **Imports by name in libraries.** matplotlib's backend registry imports any module
  named `module://x` and returns it: limited to matplotlib's allowed backends.
- **Unimportable modules** (`seal`, `close_imports`): the modules of
  `src/worker/audit.rs`'s `UNIMPORTABLE` list leave `sys.modules` after warm-up, and a
  finder at the head of `sys.meta_path` refuses to load any of them from any frame
  (`importlib.import_module` raises no `import` audit event, so the hook alone would
  miss it). The few that allowed libraries import again when a job first imports them
  (ctypes for scipy.stats, ...) are loaded by warm-up and kept, and the worker's
  `builtins.__import__` and `importlib.import_module` refuse them to everyone but code
  running for the import of a library module.
"""

import ast
import math
import sys
import types

# Set by configure() from the prelude.
_exact_str = None          # value -> exact str copy, or None
_attribute_refusal = None  # exact str -> why refused, or None
_module_allowed = None     # dotted name -> bool
_VIEW_TYPES = ()           # the prelude's module view classes

# id(stock function) -> what a job's module view hands out instead. The stock objects
# are kept alive in _KEEP, so an id is never reused while it is a key here.
JOB_FACING = {}
_KEEP = []

# Modules taken out of sys.modules after warm-up (name -> module), kept so that the
# libraries holding them keep working.
SEALED = {}

_PANDAS_DONE = False
_NOT_GIVEN = object()


def configure(exact_str, attribute_refusal, module_allowed, view_types):
    global _exact_str, _attribute_refusal, _module_allowed, _VIEW_TYPES
    _exact_str = exact_str
    _attribute_refusal = attribute_refusal
    _module_allowed = module_allowed
    _VIEW_TYPES = tuple(view_types)


def install():
    """At warm-up: every guard for the libraries loaded now. Returns the names of the
    libraries guarded."""
    done = []
    _install_typing()
    done.append('typing')
    if 'numpy' in sys.modules:
        _install_numpy()
        done.append('numpy')
    if 'scipy' in sys.modules:
        _install_scipy()
        done.append('scipy')
    if 'matplotlib' in sys.modules:
        _install_matplotlib()
        done.append('matplotlib')
    if 'pandas' in sys.modules:
        install_pandas()
        done.append('pandas')
    return done


def on_module_view(name):
    """The prelude is about to hand a job a view of module `name` for the first time: a
    library imported on first use (`pd` under `preload_pandas(false)`) gets its guards
    before the job touches it."""
    top = name.partition('.')[0]
    if top == 'pandas' and not _PANDAS_DONE and 'pandas' in sys.modules:
        install_pandas()
    elif top == 'scipy' and 'scipy' in sys.modules:
        _install_scipy()


def _job_facing(stock, replacement):
    if stock is None:
        return
    _KEEP.append(stock)
    JOB_FACING[id(stock)] = replacement


def _named_like(function, stock, name=None):
    function.__name__ = name or getattr(stock, '__name__', function.__name__)
    function.__qualname__ = getattr(stock, '__qualname__', function.__name__)
    function.__doc__ = getattr(stock, '__doc__', None)
    module = getattr(stock, '__module__', None)
    if isinstance(module, str):
        function.__module__ = module
    return function


# --- host details ------------------------------------------------------------------------

def _versions():
    """The versions a job may see: Python and the libraries it uses (the report's worker
    section carries Python's, numpy's and matplotlib's)."""
    found = {'python': sys.version.split()[0]}
    for name in ('numpy', 'scipy', 'matplotlib', 'pandas'):
        module = sys.modules.get(name)
        version = getattr(module, '__version__', None) if module is not None else None
        if isinstance(version, str):
            found[name] = version
    return found


_SANDBOX_NOTE = 'host details (OS, kernel, machine, paths, build) are not shown in this sandbox'


def _print_versions(title):
    print(f'\n{title}\n' + '-' * len(title))
    for name, version in _versions().items():
        print(f'{name:<12}: {version}')
    print(f'({_SANDBOX_NOTE})')


def _sandbox_show_versions(as_json=False):
    """pandas.show_versions in this sandbox: the versions pyward exposes, nothing of the
    host; `as_json` prints them as JSON (no file is written)."""
    if as_json:
        import json
        print(json.dumps({'system': {'note': _SANDBOX_NOTE}, 'dependencies': _versions()},
                         indent=2))
        return None
    _print_versions('INSTALLED VERSIONS')
    return None


def _sandbox_show_runtime():
    """numpy.show_runtime in this sandbox: versions only."""
    _print_versions('RUNTIME (this sandbox)')


def _sandbox_show_config(mode='stdout'):
    """numpy/scipy show_config in this sandbox: versions only; mode='dicts' returns them."""
    if mode == 'dicts':
        return {'Python Information': {'version': _versions()['python']},
                'Versions': _versions(), 'Note': _SANDBOX_NOTE}
    _print_versions('CONFIGURATION (this sandbox)')
    return None


def _refuse_host_directory(name):
    def refused(*args, **kwargs):
        raise PermissionError(
            f"matplotlib.{name}() is not available in this sandbox: it names a directory "
            "of the host. Read matplotlib's sample data with cbook.get_sample_data('name'), "
            "list styles with plt.style.available, and save figures with plt.savefig(OUT)")
    refused.__name__ = refused.__qualname__ = name
    return refused


# --- numpy -------------------------------------------------------------------------------

def _install_numpy():
    import numpy
    stock_load = numpy.load

    def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding='ASCII',
             **kwargs):
        # Judged by identity and exact type, never by asking the object (a job's object
        # could say False here and True to numpy): then numpy is told False itself.
        off = (allow_pickle is False or allow_pickle is None
               or (type(allow_pickle) is int and allow_pickle == 0)
               or (type(allow_pickle) is numpy.bool_ and allow_pickle == numpy.False_))
        if not off:
            raise PermissionError(
                "np.load(..., allow_pickle=True) is not allowed in this sandbox: unpickling "
                "runs arbitrary code. Load arrays saved without object dtype: "
                "np.load(srcpath('x.npy'))")
        return stock_load(file, mmap_mode, False, fix_imports, encoding, **kwargs)

    _job_facing(stock_load, _named_like(load, stock_load))
    _job_facing(getattr(numpy, 'show_runtime', None),
                _named_like(_sandbox_show_runtime, numpy.show_runtime))
    config = sys.modules.get('numpy.__config__')
    for stock in {getattr(numpy, 'show_config', None), getattr(config, 'show', None),
                  getattr(config, 'show_config', None)} - {None}:
        _job_facing(stock, _named_like(_copy_function(_sandbox_show_config), stock))


def _install_scipy():
    scipy = sys.modules.get('scipy')
    config = sys.modules.get('scipy.__config__')
    for stock in {getattr(scipy, 'show_config', None), getattr(config, 'show', None),
                  getattr(config, 'show_config', None)} - {None}:
        if id(stock) not in JOB_FACING:
            _job_facing(stock, _named_like(_copy_function(_sandbox_show_config), stock))


def _copy_function(f):
    """A new function object running `f`'s code (so each replacement has its own name)."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__,
                              f.__closure__)


# --- matplotlib --------------------------------------------------------------------------

def _install_matplotlib():
    import matplotlib
    for name in ('get_cachedir', 'get_configdir', 'get_data_path', 'matplotlib_fname'):
        stock = getattr(matplotlib, name, None)
        if stock is not None:
            _job_facing(stock, _refuse_host_directory(name))
    registry = sys.modules.get('matplotlib.backends.registry')
    cls = getattr(registry, 'BackendRegistry', None)
    if cls is not None and not getattr(cls.load_backend_module, '_pyward_guard', False):
        _guard_backend_registry(cls)


def _guard_backend_registry(cls):
    """`backend_registry.load_backend_module('module://os')` imports any module by name
    and returns it to the caller, the real module: only matplotlib's own backends that
    the policy allows are loaded."""
    stock = cls.load_backend_module
    module_name_of = cls._backend_module_name

    def load_backend_module(self, backend):
        text = _exact_str(backend)
        if text is None:
            raise TypeError("backend must be a str")
        module = module_name_of(self, text)
        if type(module) is not str or not module.startswith('matplotlib.backends.') \
                or not _module_allowed(module):
            raise ImportError(
                f"the backend {text!r} is not available in this sandbox: figures render "
                "with Agg; save them with plt.savefig(OUT)")
        return stock(self, text)

    load_backend_module._pyward_guard = True
    cls.load_backend_module = _named_like(load_backend_module, stock)


# --- typing: annotations given as strings ---------------------------------------------------
#
# typing evaluates a string annotation with `eval` in its own frame (ForwardRef), and
# `functools.singledispatch().register` does so for any function a job registers: an
# annotation built at run time (`'(lambda: 0).' + chr(95) * 2 + 'globals' + ...`) walks
# anywhere, and the result comes back in the error message or the dispatch registry. A
# forward reference may name types only: names and public attributes, subscripts,
# tuples and lists of them, `X | Y`, and constants (`None`, strings: nested references,
# checked when they are evaluated in turn).

_ANNOTATION_MAX_CHARS = 500
_ANNOTATION_NODES = (ast.Expression, ast.Name, ast.Load, ast.Attribute, ast.Subscript,
                     ast.Tuple, ast.List, ast.Constant, ast.BinOp, ast.BitOr)


def _annotation_refusal(text):
    """Why the exact str `text` may not be evaluated as an annotation; None if it may."""
    if len(text) > _ANNOTATION_MAX_CHARS:
        return 'it is too long'
    try:
        tree = ast.parse(text.strip(), mode='eval')
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # typing compiled it already, or raises its own SyntaxError
    for node in ast.walk(tree):
        if not isinstance(node, _ANNOTATION_NODES):
            return f'it holds {type(node).__name__.lower()} syntax, not a type'
        if type(node) is ast.BinOp and type(node.op) is not ast.BitOr:
            return 'it computes, where a type is named'
        name = node.id if type(node) is ast.Name else node.attr if type(node) is ast.Attribute else None
        why = None if name is None else _attribute_refusal(name)
        if why is not None:
            return f'it names {name!r}: {why}'
        if type(node) is ast.Constant and not isinstance(node.value, (str, type(None), type(...))):
            return 'it holds a literal other than None or a string'
    return None


def _install_typing():
    import typing
    cls = typing.ForwardRef
    stock = cls._evaluate
    if getattr(stock, '_pyward_guard', False):
        return

    def _evaluate(self, *args, **kwargs):
        text = _exact_str(cls.__forward_arg__.__get__(self))
        why = 'it is not a string' if text is None else _annotation_refusal(text)
        if why is not None:
            shown = '?' if text is None else _short(text)
            raise PermissionError(
                f"evaluating the annotation {shown!r} is not allowed in this sandbox: {why}; "
                "annotations name types (int, 'MyClass', list[int], np.ndarray)")
        return stock(self, *args, **kwargs)

    _evaluate._pyward_guard = True
    cls._evaluate = _named_like(_evaluate, stock)


# --- pandas: the expression language --------------------------------------------------------

class _Refused(Exception):
    """Why an expression is refused (turned into the engine's PermissionError)."""


class _Undefined(Exception):
    """A name that is no column of the frame (pandas' UndefinedVariableError)."""


_EXPR_MAX_CHARS = 4000
_EXPR_MAX_DEPTH = 64
_TICK = 'PYWARDTICK'
_LOCAL = 'PYWARDLOCAL'
_CONSTANT_NAMES = frozenset({'True', 'False', 'None', 'inf', 'Inf'})
_MATH_FUNCS = frozenset({
    'sin', 'cos', 'tan', 'exp', 'log', 'expm1', 'log1p', 'sqrt', 'sinh', 'cosh', 'tanh',
    'arcsin', 'arccos', 'arctan', 'arccosh', 'arcsinh', 'arctanh', 'abs', 'log10', 'floor',
    'ceil', 'arctan2',
})
_BINOPS = {ast.Add: '+', ast.Sub: '-', ast.Mult: '*', ast.Div: '/', ast.FloorDiv: '//',
           ast.Mod: '%', ast.Pow: '**', ast.BitAnd: '&', ast.BitOr: '|', ast.BitXor: '^'}
_UNARY = {ast.Not: 'not ', ast.USub: '-', ast.UAdd: '+', ast.Invert: '~'}
_COMPARE = {ast.Eq: '==', ast.NotEq: '!=', ast.Lt: '<', ast.LtE: '<=', ast.Gt: '>',
            ast.GtE: '>=', ast.In: 'in', ast.NotIn: 'not in'}
_NODE_WHY = {
    ast.Attribute: 'attribute access (a name followed by a dot)',
    ast.Subscript: 'indexing with [...]',
    ast.Lambda: 'lambda',
    ast.IfExp: 'conditional expressions',
    ast.Dict: 'dict literals',
    ast.Set: 'set literals',
    ast.ListComp: 'comprehensions', ast.SetComp: 'comprehensions',
    ast.DictComp: 'comprehensions', ast.GeneratorExp: 'comprehensions',
    ast.JoinedStr: 'f-strings', ast.FormattedValue: 'f-strings',
    ast.Starred: 'unpacking', ast.NamedExpr: 'assignment expressions',
    ast.Await: 'await', ast.Yield: 'yield', ast.YieldFrom: 'yield',
}


def _literal_end(s, i):
    """The index just past the string literal that starts with the quote at `i`."""
    quote = s[i]
    close = quote * 3 if s.startswith(quote * 3, i) else quote
    j = i + len(close)
    while j < len(s):
        c = s[j]
        if c == '\\':
            j += 2
            continue
        if s.startswith(close, j):
            return j + len(close)
        if c == '\n' and len(close) == 1:
            break
        j += 1
    raise _Refused('a string literal is not closed')


def _preparse(expr, pandas_parser):
    """The expression as Python source for `ast`, with pandas' own syntax mapped:
    backtick-quoted column names and `@name` references become placeholder names, and
    under pandas' parser `&` and `|` become `and` and `or` (as pandas' preparser makes
    them, with their precedence). Returns (source, {placeholder: local name},
    {placeholder: backtick text})."""
    if _TICK in expr or _LOCAL in expr:
        raise _Refused('the expression uses a name reserved by the sandbox')
    out, local_names, ticks = [], {}, {}
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in '\'"':
            j = _literal_end(expr, i)
            out.append(expr[i:j])
            i = j
        elif c == '#':
            j = expr.find('\n', i)
            i = n if j < 0 else j
        elif c == '`':
            j = expr.find('`', i + 1)
            if j < 0:
                raise _Refused('a backtick-quoted name is not closed')
            text = expr[i + 1:j]
            if not text or '\n' in text:
                raise _Refused('an empty or multi-line backtick-quoted name')
            key = f'{_TICK}{len(ticks)}'
            ticks[key] = text
            out.append(f' {key} ')
            i = j + 1
        elif c == '@':
            j = i + 1
            while j < n and (expr[j] == '_' or expr[j].isalnum()):
                j += 1
            name = expr[i + 1:j]
            if not name.isidentifier():
                raise _Refused("'@' must be followed by the name of a variable")
            import unicodedata
            key = f'{_LOCAL}{len(local_names)}'
            local_names[key] = unicodedata.normalize('NFKC', name)
            out.append(f' {key} ')
            i = j
        elif pandas_parser and c in '&|':
            out.append(' and ' if c == '&' else ' or ')
            i += 1
        else:
            out.append(c)
            i += 1
    return ''.join(out), local_names, ticks


class _Expression:
    """One expression judged against its context: the canonical text pandas evaluates
    and the names it references."""

    def __init__(self, names, tick_ok, local_ok, calls_ok=_MATH_FUNCS):
        self.names = names          # plain names allowed (columns, index names)
        self.tick_ok = tick_ok      # backtick text -> bool (a column of the frame)
        self.local_ok = local_ok    # whether @name references are allowed
        self.calls_ok = calls_ok
        self.locals = {}            # placeholder -> local name
        self.ticks = {}             # placeholder -> backtick text
        self.used_locals = []       # @names referenced, in order
        self.used_names = []        # plain names referenced, in order
        self.assigned = set()

    def statements(self, source, assign):
        """The canonical text of `source` (several lines when `assign`)."""
        # Each line on its own, as pandas strips them (a leading space is no indent).
        source = '\n'.join(line.lstrip() for line in source.split('\n'))
        try:
            module = ast.parse(source, mode='exec')
        except SyntaxError as exc:
            raise SyntaxError(f'invalid expression: {exc.msg}') from None
        except (ValueError, RecursionError, MemoryError):
            raise _Refused('the expression cannot be parsed') from None
        if not module.body:
            raise SyntaxError('the expression is empty')
        lines = []
        for stmt in module.body:
            kind = type(stmt)
            if kind is ast.Expr:
                lines.append(self.expr(stmt.value, 0))
            elif kind is ast.Assign and assign and len(stmt.targets) == 1 \
                    and type(stmt.targets[0]) is ast.Name:
                value = self.expr(stmt.value, 0)
                target = self.target(stmt.targets[0].id)
                lines.append(f'{target} = {value}')
            elif kind in (ast.Assign, ast.AugAssign, ast.AnnAssign):
                raise _Refused('assignment here' if not assign else
                               'assignment other than one column name = expression')
            else:
                raise _Refused(f'{kind.__name__.lower()} statements')
        if len(lines) > 1 and not assign:
            raise _Refused('more than one expression')
        return '\n'.join(lines)

    def target(self, name):
        if name.startswith(_TICK):
            text = self.ticks_text(name)
            self.assigned.add(('tick', text))
            return f'`{text}`'
        if name.startswith(_LOCAL):
            raise _Refused('assignment to an @ reference')
        if name.startswith('_'):
            raise _Refused("names that begin with '_'")
        self.assigned.add(name)
        return name

    def ticks_text(self, key):
        text = self.ticks.get(key)
        if text is None:
            raise _Refused('the expression uses a name reserved by the sandbox')
        return text

    def expr(self, node, depth):
        if depth > _EXPR_MAX_DEPTH:
            raise _Refused('the expression is nested too deeply')
        d = depth + 1
        kind = type(node)
        if kind is ast.BoolOp:
            op = ' and ' if type(node.op) is ast.And else ' or '
            return '(' + op.join(self.expr(v, d) for v in node.values) + ')'
        if kind is ast.BinOp:
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise _Refused(f'the operator {type(node.op).__name__}')
            return f'({self.expr(node.left, d)} {op} {self.expr(node.right, d)})'
        if kind is ast.UnaryOp:
            return f'({_UNARY[type(node.op)]}{self.expr(node.operand, d)})'
        if kind is ast.Compare:
            parts = [self.expr(node.left, d)]
            for op, right in zip(node.ops, node.comparators):
                symbol = _COMPARE.get(type(op))
                if symbol is None:
                    raise _Refused(f'the comparison {type(op).__name__}')
                parts += [symbol, self.expr(right, d)]
            return '(' + ' '.join(parts) + ')'
        if kind is ast.Name:
            return self.name(node.id)
        if kind is ast.Constant:
            return _constant(node.value)
        if kind is ast.List or kind is ast.Tuple:
            items = [self.expr(e, d) for e in node.elts]
            if kind is ast.List:
                return '[' + ', '.join(items) + ']'
            return '(' + ', '.join(items) + (',)' if len(items) == 1 else ')')
        if kind is ast.Call:
            func = node.func
            if type(func) is not ast.Name or func.id not in self.calls_ok:
                raise _Refused('calls other than the maths functions '
                               + ', '.join(sorted(self.calls_ok)))
            if node.keywords:
                raise _Refused('keyword arguments')
            return func.id + '(' + ', '.join(self.expr(a, d) for a in node.args) + ')'
        raise _Refused(_NODE_WHY.get(kind, f'{kind.__name__} expressions'))

    def name(self, name):
        if name.startswith(_LOCAL):
            local = self.locals.get(name)
            if local is None:
                raise _Refused('the expression uses a name reserved by the sandbox')
            if not self.local_ok:
                raise _Refused("'@' references (name the variable directly)")
            if local.startswith('_'):
                raise _Refused("names that begin with '_'")
            self.used_locals.append(local)
            return '@' + local
        if name.startswith(_TICK):
            text = self.ticks_text(name)
            if ('tick', text) not in self.assigned and not self.tick_ok(text):
                raise _Refused(f'`{text}` is not a column of this DataFrame')
            return f'`{text}`'
        if name.startswith('_'):
            raise _Refused("names that begin with '_'")
        if name in _CONSTANT_NAMES:
            return name
        if name in self.assigned or (self.names is not None and name in self.names):
            self.used_names.append(name)
            return name
        if self.names is None:  # pd.eval: the job's variables, checked by the caller
            self.used_names.append(name)
            return name
        raise _Undefined(name)


def _constant(value):
    kind = type(value)
    if value is None or kind is bool:
        return repr(value)
    if kind is int:
        return repr(value)
    if kind is float:
        if math.isnan(value):
            raise _Refused('a NaN literal')
        return repr(value) if math.isfinite(value) else ('1e999' if value > 0 else '(-1e999)')
    if kind is complex:
        if not (math.isfinite(value.real) and math.isfinite(value.imag)):
            raise _Refused('a non-finite complex literal')
        return repr(value)
    if kind is str:
        # pandas splits the text at backticks with its own reading of quotes, which a
        # backslash before a closing quote confuses: such strings are not passed on.
        if '\\' in value or '`' in value:
            raise _Refused('a string literal holding a backslash or a backtick')
        return repr(value)
    raise _Refused(f'{kind.__name__} literals')


def _plain_value(value, depth=0):
    """Whether a value may take part in an expression: data, never code or a module
    (classes, functions, methods, modules and module views are refused; Python
    containers are looked into). Decided from the exact types, calling nothing of the
    value but the container's own iteration."""
    kind = type(value)
    if issubclass(kind, (type, types.ModuleType) + _VIEW_TYPES) or _callable_type(kind):
        return False
    if kind in (list, tuple, set, frozenset) and depth < 2:
        return all(_plain_value(v, depth + 1) for v in value)
    if kind is dict and depth < 2:
        return all(_plain_value(v, depth + 1) for v in value.values())
    return True


def _callable_type(kind):
    return any('__call__' in vars(k) for k in kind.__mro__ if k is not object)


def _job_frame():
    """The innermost frame of the job's own code (the code that asked for the engine)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename != '<job>':
        frame = frame.f_back
    return frame


_MISSING = object()


def _job_values(names, what, kind):
    """{name: value} of the job's variables `names`, each a plain value."""
    frame = _job_frame()
    found = {}
    for name in names:
        if name in found:
            continue
        value = _MISSING
        if frame is not None:
            value = frame.f_locals.get(name, _MISSING)
            if value is _MISSING:
                value = frame.f_globals.get(name, _MISSING)
        if value is _MISSING:
            from pandas.errors import UndefinedVariableError
            raise UndefinedVariableError(name, kind == 'local')
        if not _plain_value(value):
            raise PermissionError(
                f"{what} is not allowed in this sandbox here: {kind} variable {name!r} "
                f"holds a {type(value).__name__}; an expression may use data "
                "(numbers, strings, dates, lists, arrays, Series, DataFrames), not code or "
                "modules")
        found[name] = value
    return found


_HINTS = {
    'query': "filter with boolean indexing instead, e.g. df[(df['a'] > 3) & (df['b'] == 'x')], "
             "or df[df['name'].str.contains('x')]",
    'eval': "compute with column arithmetic instead, e.g. df['c'] = df['a'] + df['b']",
    'pd.eval': "write the expression directly, e.g. df1['a'] + df2['b']",
}


def _refusal(what, hint, why):
    return PermissionError(f"{what} is not allowed in this sandbox: the expression uses {why}. "
                           f"Expressions may use column names, @variables holding data, "
                           f"literals, arithmetic, comparisons, in, and/or/not; {_HINTS[hint]}")


def _options(what, kwargs, allowed):
    """The engine options of a call: parser and engine as exact known strings; any
    keyword outside `allowed` is refused."""
    extra = [k for k in kwargs if k not in allowed]
    if extra:
        raise PermissionError(
            f"{what} is not allowed in this sandbox with {', '.join(map(str, extra))}=: "
            "it would let the expression reach objects other than columns and @variables")
    parser = kwargs.get('parser', 'pandas')
    engine = kwargs.get('engine', None)
    parser_text = _exact_str(parser)
    if parser_text not in ('pandas', 'python'):
        raise ValueError(f"{what}: parser must be 'pandas' or 'python'")
    engine_text = None if engine is None else _exact_str(engine)
    if engine is not None and engine_text not in ('python', 'numexpr'):
        raise ValueError(f"{what}: engine must be None, 'python' or 'numexpr'")
    return parser_text, engine_text


def _check(what, hint, expr, parser, names, tick_ok, local_ok, assign):
    text = _exact_str(expr)
    if text is None:
        raise ValueError(f"{what}: the expression must be a str, {type(expr).__name__} given")
    if len(text) > _EXPR_MAX_CHARS:
        raise _refusal(what, hint, f'more than {_EXPR_MAX_CHARS} characters')
    try:
        source, local_names, ticks = _preparse(text, parser == 'pandas')
        checked = _Expression(names, tick_ok, local_ok)
        checked.locals, checked.ticks = local_names, ticks
        canonical = checked.statements(source, assign)
    except _Refused as exc:
        raise _refusal(what, hint, exc.args[0]) from None
    except _Undefined as exc:
        from pandas.errors import UndefinedVariableError
        raise UndefinedVariableError(exc.args[0], False) from None
    return canonical, checked


class _PandasEngines:
    """The stock engines and the checked ones that replace them."""

    def __init__(self, pandas):
        from pandas.api.extensions import no_default
        from pandas.core.computation.parsing import (
            clean_column_name, create_valid_python_identifier)
        self.pandas = pandas
        self.no_default = no_default
        self.clean_column_name = clean_column_name
        self.valid_identifier = create_valid_python_identifier
        frame = pandas.DataFrame
        self.stock_eval = frame.eval
        self.stock_query = frame.query
        self.stock_pd_eval = pandas.eval
        # (canonical text, local dict) of checked queries in flight: the stock query
        # calls self.eval with them, which passes them on unchanged.
        self.in_flight = []

    def frame_names(self, frame):
        """(plain names, backtick test) of a frame: its cleaned column and index names,
        as pandas' resolvers name them."""
        clean = self.clean_column_name
        names = set()
        for label in frame.columns:
            cleaned = clean(label)
            if type(cleaned) is str:
                names.add(cleaned)
        # The index resolvers (pandas' NDFrame._get_axis_resolvers): each axis by name,
        # and each of its levels by its name or as ilevel_<i> / clevel_<i>.
        for axis_name in ('index', 'columns'):
            names.add(axis_name)
            for i, level in enumerate(getattr(frame, axis_name).names):
                key = clean(level if level is not None else f'{axis_name[0]}level_{i}')
                if type(key) is str:
                    names.add(key)

        def tick_ok(text):
            try:
                return self.valid_identifier(text) in names
            except SyntaxError:
                return False
        return frozenset(names), tick_ok

    def checked_eval(self):
        engines = self

        def eval(self, expr, *, inplace=engines.no_default, **kwargs):
            if engines.in_flight:
                canonical, local_dict = engines.in_flight[-1]
                if kwargs.get('local_dict') is local_dict and type(expr) is str \
                        and expr == canonical:
                    return engines.stock_eval(self, expr, inplace=inplace, **kwargs)
            parser, engine = _options('DataFrame.eval', kwargs, ('parser', 'engine'))
            names, tick_ok = engines.frame_names(self)
            canonical, checked = _check('DataFrame.eval', 'eval', expr, parser, names,
                                        tick_ok, True, True)
            local_dict = _job_values(checked.used_locals, 'DataFrame.eval', 'local')
            options = {} if inplace is engines.no_default else {'inplace': inplace}
            return engines.stock_eval(self, canonical, parser=parser, engine=engine,
                                      local_dict=local_dict, global_dict={}, **options)

        return _named_like(eval, self.stock_eval)

    def checked_query(self):
        engines = self

        def query(self, expr, **kwargs):
            inplace = kwargs.pop('inplace', _NOT_GIVEN)
            parser, engine = _options('DataFrame.query', kwargs, ('parser', 'engine'))
            names, tick_ok = engines.frame_names(self)
            canonical, checked = _check('DataFrame.query', 'query', expr, parser, names,
                                        tick_ok, True, False)
            local_dict = _job_values(checked.used_locals, 'DataFrame.query', 'local')
            options = {} if inplace is _NOT_GIVEN else {'inplace': inplace}
            engines.in_flight.append((canonical, local_dict))
            try:
                return engines.stock_query(self, canonical, parser=parser, engine=engine,
                                           local_dict=local_dict, global_dict={}, **options)
            finally:
                engines.in_flight.pop()

        return _named_like(query, self.stock_query)

    def checked_pd_eval(self):
        engines = self

        def eval(expr, parser='pandas', engine=None, local_dict=None, global_dict=None,
                 resolvers=(), level=0, target=None, inplace=engines.no_default):
            extra = [k for k, given in (('local_dict', local_dict is not None),
                                        ('global_dict', global_dict is not None),
                                        ('resolvers', not (type(resolvers) is tuple
                                                           and len(resolvers) == 0)),
                                        ('level', not (type(level) is int and level == 0)))
                     if given]
            if extra:
                _options('pd.eval', dict.fromkeys(extra), ())
            parser, engine = _options('pd.eval', {'parser': parser, 'engine': engine},
                                      ('parser', 'engine'))
            if target is not None and not isinstance(target, engines.pandas.DataFrame):
                raise PermissionError("pd.eval is not allowed in this sandbox with a target "
                                      "other than a DataFrame")
            canonical, checked = _check('pd.eval', 'pd.eval', expr, parser, None,
                                        lambda text: False, False, target is not None)
            values = _job_values(checked.used_names, 'pd.eval', 'the')
            options = {} if inplace is engines.no_default else {'inplace': inplace}
            return engines.stock_pd_eval(canonical, parser=parser, engine=engine,
                                         local_dict=values, global_dict={}, target=target,
                                         **options)

        return _named_like(eval, self.stock_pd_eval)


def _refusing(what, hint, stock):
    def refused(*args, **kwargs):
        raise PermissionError(f"{what} is not available in this sandbox; {_HINTS[hint]}")
    return _named_like(refused, stock)


def install_pandas():
    """Checked engines and string dispatch for pandas; on any doubt (a pandas whose
    internals moved), the engines are refused outright instead."""
    global _PANDAS_DONE
    if _PANDAS_DONE:
        return
    _PANDAS_DONE = True
    import pandas
    frame = pandas.DataFrame
    stock_eval, stock_query, stock_pd_eval = frame.eval, frame.query, pandas.eval
    try:
        engines = _PandasEngines(pandas)
        checked = (engines.checked_eval(), engines.checked_query(), engines.checked_pd_eval())
        frame.eval, frame.query = checked[0], checked[1]
        _self_test(pandas)
        _job_facing(stock_pd_eval, checked[2])
    except Exception as exc:
        print(f'pyward: pandas expression engines refused, the checked ones failed their '
              f'self-test: {type(exc).__name__}: {exc!s:.300}', file=sys.__stderr__)
        frame.eval = _refusing('DataFrame.eval', 'eval', stock_eval)
        frame.query = _refusing('DataFrame.query', 'query', stock_query)
        _job_facing(stock_pd_eval, _refusing('pd.eval', 'pd.eval', stock_pd_eval))
    _install_dispatch(pandas)
    _job_facing(getattr(pandas, 'show_versions', None),
                _named_like(_copy_function(_sandbox_show_versions), pandas.show_versions))


def _self_test(pandas):
    """The checked engines give pandas' answers on a small frame."""
    df = pandas.DataFrame({'a': [1, 2, 3, 4], 'b': ['x', 'y', 'x', 'z'], 'c d': [1.0, 0, 2, 1]})
    got = df.query('a > 1 and b == "x"')
    if list(got.index) != [2]:
        raise AssertionError(f'query gave rows {list(got.index)}')
    got = df.query('a >= 2 & `c d` > 0.5 | b in ["z"]')
    if list(got.index) != [2, 3]:
        raise AssertionError(f'query with & | gave rows {list(got.index)}')
    got = df.eval('e = a * 2 + `c d`')
    if list(got['e']) != [3.0, 4.0, 8.0, 9.0]:
        raise AssertionError(f'eval gave {list(got["e"])}')
    for refused in ('a.__class__', 'a.sum()', 'a[0]', '__import__("os")'):
        try:
            df.query(refused)
        except PermissionError:
            continue
        raise AssertionError(f'query accepted {refused!r}')


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
    global _ORIGINAL_IMPORT, _ORIGINAL_IMPORT_MODULE
    seal(())
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
