# Job A of tests/it/cross_job_state.rs, run with the gate off: lists every settable key
# of every process-wide registry a job can reach, at run time (the same listings as
# dump.py), sets each to a value other than its current one (a text marker where the
# setter takes text), and leaves whatever it opened open. Prints, as JSON, what it set
# (the marker's repr, and whether that repr is a literal a gate-on job can write) and
# what it could not set, with the setter's own refusal.
import json
import warnings
import decimal
import random
import csv
import numbers
import collections.abc
import matplotlib
import matplotlib.units as munits
from matplotlib import projections
from matplotlib.colors import ListedColormap
from matplotlib.axes import Axes
from cycler import cycler

# The figure first: what follows breaks figures on purpose.
figure, axes = plt.subplots()
axes.plot([0, 1], [1, 0])
figure.savefig(OUT)
plt.close('all')

DONE = {}
SKIPPED = {}
KEEP = []   # what the job leaves open: errstate and locale contexts


def literal(value):
    if type(value) in (str, int, float, bool, type(None)):
        return True
    if type(value) in (list, tuple):
        return all(literal(v) for v in value)
    return False


def note(registry, key, value):
    DONE.setdefault(registry, {})[key] = {'marker': repr(value)[:200], 'literal': literal(value)}


def same(a, b):
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


# Values setters of choice-valued settings commonly accept, tried after the typed ones.
CHOICES = ['info', 'deep', 'latex', 'html', 'c', 't', 'b', 'naive', '|r|', 'raise', 'warn', 'table',
           'fixed', 'python', 'pyarrow', 'odf', 'calamine', 'xlrd', 'openpyxl', 'sqlalchemy',
           'fastparquet', 'latex-math', 'left', 'center', 'right', 'round', 'butt', 'projecting',
           'miter', 'bevel', 'bold', 'italic', 'oblique', 'dashed', 'dotted', '--', ':', 'none',
           'upper left', 'inout', 'in', 'out', 'serif', 'monospace', 'cursive', 'top', 'bottom',
           'tight', 'nearest', 'bilinear', 'lower', 'upper', 'equal', 'data', 'red', '#123456',
           'svg', 'pdf', 'jpg', 'unique', 'maxprec_equal', '+', ' ', 'legacy', 'figure',
           'constrained', 'antialiased', 'standard', 'sans', 'square', 'fancy', 'rounded',
           'medium', 'large', 'x-small', 'heavy', 'light', 'condensed', 'small-caps', 'zero',
           'plain', 'sci', 'log', 'both', 'major', 'minor', 'auto', 'scientific', 'default',
           'offset points', 'inline', 'path', 'none', 'text', 'tex', 'stix', 'cm', 'dejavuserif',
           'it', 'rm', 'custom', 'stixsans', 'dejavusans', 'ordinal', 'gray', 'binary', 'magma',
           True, False, None, 2, 0.5, 1, 0, -1]


def candidates(key, value):
    marker = 'PYWARD-A-' + key
    out = []
    if type(value) is bool:
        out += [not value]
    elif type(value) is int:
        out += [value + 7, 3, 1, 0]
    elif type(value) is float:
        out += [value + 0.75, round(value * 0.5, 3) + 0.25, 0.5, 1.0]
    elif type(value) is str:
        out += [marker]
    elif value is None:
        out += [marker, 5, 0.5, True]
    elif type(value) in (list, tuple) and value and all(type(v) in (int, float) for v in value):
        out += [type(value)(v * 1.5 + 0.5 for v in value)]
    elif type(value) in (list, tuple) and value and all(type(v) is str for v in value):
        out += [[marker], ['monospace'], ['#123456', '#654321']]
    elif type(value).__name__ == 'Cycler':
        out += [cycler(color=['#123456', '#654321'])]
    out += [marker] + CHOICES + [lambda x: 'PYWARD-A-callable', {'PYWARD-A': 1}]
    return [c for c in out if not same(c, value)]


def offered(message):
    """The values a refusal names as supported (`... are ['a', 'b']`, `[3, 42]`)."""
    start, end = message.rfind('['), message.rfind(']')
    values = []
    for item in message[start + 1:end].split(',') if 0 <= start < end else []:
        item = item.strip().strip("'").strip('"')
        values.append(int(item) if item.lstrip('-').isdigit() else item)
    return values


def try_set(registry, key, current, setter, options=None):
    """Sets `key` to the first value its setter takes that differs from `current`;
    after the typed candidates, the values the setter's own refusal names."""
    refusals = []
    tried = list(options if options is not None else candidates(key, current))
    while tried:
        value = tried.pop(0)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                setter(value)
            note(registry, key, value)
            return
        except Exception as exc:
            message = (type(exc).__name__ + ': ' + str(exc))[:300]
            if not refusals:
                tried = [v for v in offered(message) if not same(v, current)] + tried
            refusals.append(message)
    SKIPPED.setdefault(registry, {})[key] = refusals[0] if refusals else 'no candidate value'


def option_keys():
    text = pd.describe_option('', _print_desc=False)
    return sorted({line.split(' ')[0] for line in text.splitlines() if line and not line[0].isspace()})


# pandas options: every registered option.
for key in option_keys():
    try_set('pandas options', key, pd.get_option(key), lambda v, k=key: pd.set_option(k, v))

# numpy print options.
for key, value in np.get_printoptions().items():
    options = None
    if key == 'formatter':
        options = [{'float': lambda x: 'PYWARD-A-float'}]
    elif key == 'legacy':
        options = ['1.25', '1.13', '2.1']
    elif key == 'override_repr':
        options = [lambda a: 'PYWARD-A-repr']
    elif key == 'floatmode':
        options = ['fixed', 'unique', 'maxprec_equal']
    elif key == 'sign':
        options = ['+', ' ']
    try_set('numpy print options', key, value, lambda v, k=key: np.set_printoptions(**{k: v}), options)

# Global random generators.
try_set('numpy random state', 'first draws', None, lambda v: np.random.seed(v), [987654])
try_set('python random state', 'first draws', None, lambda v: random.seed(v), [987654])

# rcParams: every key.
for key in sorted(plt.rcParams.keys()):
    def put(v, k=key):
        plt.rcParams[k] = v
    try_set('rcParams', key, plt.rcParams[key], put)

# Registries: every entry replaced by a marker, and one marker entry added.
cmaps = matplotlib.colormaps._cmaps
for name in sorted(cmaps):
    def put(v, n=name):
        cmaps[n] = v
    try_set('colormaps', name, None, put, [ListedColormap(['#123456'], name='PYWARD-A-' + name)])
    cmaps[name].set_bad('#654321')
matplotlib.colormaps.register(ListedColormap(['#123456'], name='PYWARD-A-cmap'))
note('colormaps', 'PYWARD-A-cmap (added)', 'PYWARD-A-cmap')

sequences = matplotlib.color_sequences._color_sequences
for name in sorted(sequences):
    def put(v, n=name):
        sequences[n] = v
    try_set('color sequences', name, None, put, [['#123456']])
matplotlib.color_sequences.register('PYWARD-A-seq', ['#123456'])
note('color sequences', 'PYWARD-A-seq (added)', 'PYWARD-A-seq')


class MarkerConverter(munits.ConversionInterface):
    pass


for key in list(munits.registry):
    def put(v, k=key):
        munits.registry[k] = v
    try_set('units registry', repr(key), None, put, [MarkerConverter()])
munits.registry[complex] = MarkerConverter()
note('units registry', 'complex (added)', 'MarkerConverter')


class MarkerAxes(Axes):
    name = 'PYWARD-A-proj'


kinds = projections.projection_registry._all_projection_types
for name in list(kinds):
    def put(v, n=name):
        kinds[n] = v
    try_set('projections', name, None, put, [MarkerAxes])
projections.register_projection(MarkerAxes)
note('projections', 'PYWARD-A-proj (added)', 'MarkerAxes')

for name in sorted(plt.style.library):
    def put(v, n=name):
        plt.style.library[n]['lines.linewidth'] = v
        plt.style.library[n]['axes.titlesize'] = v + 21
    try_set('style library', name, None, put, [9.75])
plt.style.library['PYWARD-A-style'] = {'lines.linewidth': 9.75}
plt.style.available.append('PYWARD-A-style')
note('style library', 'PYWARD-A-style (added)', 'PYWARD-A-style')

# Decimal: the job's context and the template contexts, every field.
FIELDS = {'prec': [3], 'rounding': [decimal.ROUND_UP], 'Emin': [-9], 'Emax': [9], 'capitals': [0],
          'clamp': [1]}


def put_field(ctx, field, value):
    if field == 'prec':
        ctx.prec = value
    elif field == 'rounding':
        ctx.rounding = value
    elif field == 'Emin':
        ctx.Emin = value
    elif field == 'Emax':
        ctx.Emax = value
    elif field == 'capitals':
        ctx.capitals = value
    elif field == 'clamp':
        ctx.clamp = value
for name, ctx in [('current', decimal.getcontext()), ('DefaultContext', decimal.DefaultContext),
                  ('BasicContext', decimal.BasicContext), ('ExtendedContext', decimal.ExtendedContext)]:
    for field, options in FIELDS.items():
        def put(v, c=ctx, f=field):
            put_field(c, f, v)
        try_set('decimal contexts', name + '.' + field, getattr(ctx, field), put,
                [o for o in options + [decimal.ROUND_DOWN, 5, -5, 1] if not same(o, getattr(ctx, field))])
    for field in ('flags', 'traps'):
        def put(v, c=ctx, f=field):
            getattr(c, f)[decimal.Inexact] = v
        try_set('decimal contexts', name + '.' + field, None, put,
                [not getattr(ctx, field)[decimal.Inexact]])

# The locale, through pandas' own setter, left entered (no `locale` import is allowed).
try:
    from pandas._config import localization
except ImportError as exc:
    SKIPPED['locale'] = {'every category': 'no setter reachable: ' + str(exc)[:150]}
else:
    for category, name in [(0, 'LC_CTYPE'), (4, 'LC_NUMERIC'), (2, 'LC_TIME'), (6, 'LC_ALL')]:
        def put(v, c=category):
            context = localization.set_locale(v, c)
            context.__enter__()
            KEEP.append(context)
        try_set('locale', name, None, put, ['C', 'POSIX'])

# ABC registrations: a builtin type registered where it does not belong.
for abc in [collections.abc.Mapping, collections.abc.Sequence, numbers.Integral]:
    try_set('ABC registrations', abc.__qualname__, None, abc.register, [complex, frozenset])

# csv dialects: every dialect replaced, one added.
for name in csv.list_dialects():
    try_set('csv dialects', name, None, lambda v, n=name: csv.register_dialect(n, delimiter=v), [';'])
csv.register_dialect('PYWARD-A-dialect', delimiter='|')
note('csv dialects', 'PYWARD-A-dialect (added)', '|')

# Last, as they change how the rest of this job runs: warnings and numpy's error state.
# Warnings: the filters, the hooks, the default action.
warnings.simplefilter('error')
warnings.filters.insert(0, ('ignore', None, Warning, None, 0))
note('warnings', 'filters', "simplefilter('error')")


def put_showwarning(value):
    warnings.showwarning = value


def put_formatwarning(value):
    warnings.formatwarning = value


def put_defaultaction(value):
    warnings.defaultaction = value


try_set('warnings', 'showwarning', None, put_showwarning,
        [lambda *a, **k: print('PYWARD-A-showwarning', a)])
try_set('warnings', 'formatwarning', None, put_formatwarning,
        [lambda *a, **k: 'PYWARD-A-formatwarning'])
try_set('warnings', 'defaultaction', None, put_defaultaction, ['error'])

# numpy error state, an error callback, and an errstate left open.
for key, value in np.geterr().items():
    try_set('numpy error state', key, value, lambda v, k=key: np.seterr(**{k: v}),
            [o for o in ('raise', 'ignore', 'print', 'log', 'call') if o != value])
try_set('numpy error state', 'call', None, np.seterrcall, [lambda *a: print('PYWARD-A-errcall', a)])
state = np.errstate(all='raise')
state.__enter__()
KEEP.append(state)
note('numpy error state', 'errstate(all=raise) left open', 'raise')

print('PYWARD-SET ' + json.dumps({'set': DONE, 'skipped': SKIPPED}, sort_keys=True))
