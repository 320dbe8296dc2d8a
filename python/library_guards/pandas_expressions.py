"""pandas' expression language (`pd.eval`, `DataFrame.eval`, `DataFrame.query`), judged
before pandas runs it: the expression is parsed into a small grammar, its names are
resolved here, and pandas evaluates the canonical text written from the tree judged.

One namespace with the other files of python/library_guards/, which the worker runs in
the order of src/worker/modules.rs.
"""

import ast
import math
import sys
import types


_NOT_GIVEN = object()


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
    # pandas reads a CSV of 5 MB or more on several threads through a memory map of the
    # file; a job runs on one thread and maps no file, so it reads the serial way, as
    # `low_memory=False` or one core would (the same frame).
    try:
        pandas.set_option('mode.max_threads', 1)
    except (KeyError, ValueError):  # a pandas without the option reads serially anyway
        pass
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
