# The state of every process-wide registry a job can reach, key by key, as JSON on
# stdout (tests/it/cross_job_state.rs): the keys are listed at run time, never from a
# table, and each value is printed as a short hash of its repr (the worker's hash seed
# is fixed, so equal values hash alike in every worker). A job that ran before on the
# same worker and left a marker behind shows up as a changed hash or an extra key.
# The file is cut at the `# section:` lines; a section the gate refuses is left out of
# the gate-on run (the test says which).
import json
import warnings
import decimal
import random
import csv
import time
import numbers
import collections.abc
import matplotlib
import matplotlib.units as munits
from matplotlib import projections
from matplotlib.legend import Legend
from matplotlib.ticker import MaxNLocator

STATE = {}
ABCS = ('Awaitable', 'Coroutine', 'AsyncIterable', 'AsyncIterator', 'AsyncGenerator', 'Hashable',
        'Iterable', 'Iterator', 'Generator', 'Reversible', 'Sized', 'Container', 'Callable',
        'Collection', 'Set', 'MutableSet', 'Mapping', 'MutableMapping', 'MappingView',
        'KeysView', 'ItemsView', 'ValuesView', 'Sequence', 'MutableSequence', 'ByteString',
        'Buffer')


def h(value):
    try:
        return hash(repr(value)) & 0xFFFFFFFFFFFF
    except Exception as exc:
        return 'unrepresentable: ' + type(exc).__name__


def section(name, read):
    try:
        STATE[name] = read()
    except Exception as exc:
        STATE[name] = {'<error>': (type(exc).__name__ + ': ' + str(exc))[:300]}


def option_keys():
    text = pd.describe_option('', _print_desc=False)
    return sorted({line.split(' ')[0] for line in text.splitlines() if line and not line[0].isspace()})


# section: pandas options
section('pandas options', lambda: {k: h(pd.get_option(k)) for k in option_keys()})
# section: numpy print options
section('numpy print options', lambda: {k: h(v) for k, v in np.get_printoptions().items()})
# section: numpy error state
section('numpy error state', lambda: dict({k: h(v) for k, v in np.geterr().items()}, call=h(np.geterrcall())))
# section: numpy random state
section('numpy random state', lambda: {'first draws': h(np.random.random(4).tolist())})
# section: python random state
section('python random state', lambda: {'first draws': h([random.random() for _ in range(4)])})
# section: rcParams
section('rcParams', lambda: {k: h(plt.rcParams[k]) for k in sorted(plt.rcParams.keys())})
# section: colormaps
section('colormaps', lambda: {n: h((matplotlib.colormaps[n].name, matplotlib.colormaps[n](0.3), matplotlib.colormaps[n].get_bad().tolist())) for n in sorted(matplotlib.colormaps)})
# section: color sequences
section('color sequences', lambda: {n: h(matplotlib.color_sequences[n]) for n in sorted(matplotlib.color_sequences)})
# section: units registry
section('units registry', lambda: {repr(k): type(v).__qualname__ for k, v in munits.registry.items()})
# section: projections
section('projections', lambda: {n: projections.get_projection_class(n).__qualname__ for n in projections.get_projection_names()})
# section: style library
section('style library', lambda: dict({n: h(sorted((k, repr(v)) for k, v in d.items())) for n, d in plt.style.library.items()}, available=h(sorted(plt.style.available))))
# section: warnings
section('warnings', lambda: {'filters': h(warnings.filters), 'showwarning': warnings.showwarning.__qualname__, 'formatwarning': warnings.formatwarning.__qualname__, 'defaultaction': warnings.defaultaction})
# section: decimal contexts
section('decimal contexts', lambda: {name + '.' + f: h(getattr(ctx, f)) for name, ctx in [('current', decimal.getcontext()), ('DefaultContext', decimal.DefaultContext), ('BasicContext', decimal.BasicContext), ('ExtendedContext', decimal.ExtendedContext), ('Context()', decimal.Context())] for f in ('prec', 'rounding', 'Emin', 'Emax', 'capitals', 'clamp', 'flags', 'traps')})
# section: locale
section('locale', lambda: {'n': '{:n}'.format(1234567.891), 'strftime': time.strftime('%c %x %X %p', (2020, 1, 2, 3, 4, 5, 3, 2, 0)), 'tzname': time.tzname, 'timezone': time.timezone})
# section: ABC registrations
section('ABC registrations', lambda: {abc.__qualname__: sorted(t.__qualname__ for t in (int, float, complex, str, bytes, list, tuple, dict, set, frozenset, range, type(None), bool) if issubclass(t, abc)) for abc in [getattr(collections.abc, n) for n in ABCS if hasattr(collections.abc, n)] + [numbers.Number, numbers.Complex, numbers.Real, numbers.Rational, numbers.Integral]})
# section: csv dialects
section('csv dialects', lambda: {n: h([getattr(csv.get_dialect(n), a) for a in ('delimiter', 'quotechar', 'escapechar', 'doublequote', 'skipinitialspace', 'lineterminator', 'quoting', 'strict')]) for n in sorted(csv.list_dialects())})
# section: legend handler map
section('legend handler map', lambda: {repr(k): type(v).__qualname__ for k, v in Legend.get_default_handler_map().items()})
# section: MaxNLocator.default_params
section('MaxNLocator.default_params', lambda: {k: h(v) for k, v in MaxNLocator.default_params.items()})
# section: end
figure, axes = plt.subplots()
axes.plot([0, 1], [1, 0], label='a line')
axes.legend()
figure.savefig(OUT)
print('PYWARD-STATE ' + json.dumps(STATE, sort_keys=True))
