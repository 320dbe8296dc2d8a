"""Code written against older library versions: the table of removed APIs
(python/migrations.json) and its advice, imports of removed names, and the LaTeX
commands matplotlib's mathtext does not know.

One namespace with the other files of python/diagnose/, which the worker runs in the
order of src/worker/modules.rs.
"""

import json
import re
import sys


_MIGRATIONS = []  # (type name, compiled pattern, advice), from python/migrations.json


def load_migrations(text):
    """Installs the table of removed APIs (`python/migrations.json`, passed in by the
    worker at warm-up)."""
    global _MIGRATIONS
    table = json.loads(text)
    _MIGRATIONS = [(m['error'], re.compile(m['pattern']), m['advice'])
                   for m in table['migrations']]
    for _, pattern, advice in _MIGRATIONS:
        # Formatted with the pattern's groups when it matches: a stray brace would
        # raise there and cost the job every hint. Checked now, so warm-up fails.
        advice.format(*([''] * pattern.groups))


def migration(type_name, message):
    """The advice of the first migration whose error type and pattern match."""
    for error, pattern, advice in _MIGRATIONS:
        if error == type_name:
            found = pattern.search(message)
            if found:
                return advice.format(*found.groups())
    return None


def _migration_for(exc, message):
    for cls in type(exc).__mro__:
        advice = migration(cls.__name__, message)
        if advice is not None:
            return advice
    # `from m import x`: the removal of `m.x` (see _import_as_attribute).
    as_attribute = _import_as_attribute(exc, message)
    return migration('AttributeError', as_attribute) if as_attribute else None


# --- code written against older versions ---------------------------------------------------
#
# A removed name reached by import (`from matplotlib.cm import get_cmap`) is the same
# removal as one reached by attribute (`cm.get_cmap`, `plt.cm.get_cmap`): the migration
# table is written for the attribute form, and the import form is looked up as that.
# A mathtext expression matplotlib cannot parse is quoted with the supported spelling of
# what it used.

_CANNOT_IMPORT = re.compile(r"^cannot import name '(\w+)' from '([\w.]+)'")


def _import_as_attribute(exc, message):
    """`module 'm' has no attribute 'x'` for an ImportError `cannot import name 'x' from
    'm'`, else None."""
    if not isinstance(exc, ImportError):
        return None
    found = _CANNOT_IMPORT.match(message)
    if found is None:
        return None
    return f"module '{found[2]}' has no attribute '{found[1]}'"


def _older_versions(exc, message):
    """(message, hint) for an import of a name a module does not have, or a mathtext
    expression matplotlib cannot parse; None for anything else."""
    found = _CANNOT_IMPORT.match(message) if isinstance(exc, ImportError) else None
    if found is not None:
        name, module = found[1], found[2]
        text = f"cannot import name {name!r} from {module!r}"
        advice = migration('AttributeError', _import_as_attribute(exc, message))
        if advice is None:
            loaded = sys.modules.get(module)
            names = _public(list(vars(loaded))) if loaded is not None else []
            advice = _join(f'{module} has no name {name!r}.', did_you_mean(name, names))
        return text, advice
    if isinstance(exc, ValueError):
        return _mathtext(message)
    return None


# Commands of LaTeX that matplotlib's mathtext does not know, with what to write instead
# (checked against the pinned matplotlib: each fails to parse, each advice parses).
_MATHTEXT = {
    'tfrac': r'\frac{a}{b}', 'cfrac': r'\frac{a}{b}',
    'displaystyle': 'nothing: remove it', 'textstyle': 'nothing: remove it',
    'scriptstyle': 'nothing: remove it', 'limits': 'nothing: remove it',
    'nolimits': 'nothing: remove it', 'tiny': 'nothing: remove it (use fontsize=)',
    'small': 'nothing: remove it (use fontsize=)', 'large': 'nothing: remove it (use fontsize=)',
    'Large': 'nothing: remove it (use fontsize=)', 'huge': 'nothing: remove it (use fontsize=)',
    'textbf': r'\mathbf{...}', 'textit': r'\mathit{...}', 'textrm': r'\mathrm{...}',
    'textsf': r'\mathsf{...}', 'texttt': r'\mathtt{...}', 'emph': r'\mathit{...}',
    'mbox': r'\text{...}', 'hbox': r'\text{...}', 'ensuremath': 'its argument alone',
    'bm': r'\boldsymbol{...}', 'le': r'\leq', 'ge': r'\geq',
    'lvert': '|', 'rvert': '|', 'lVert': r'\Vert', 'rVert': r'\Vert',
    'big': r'\left( ... \right) or a plain bracket', 'Big': r'\left( ... \right) or a plain bracket',
    'bigg': r'\left( ... \right) or a plain bracket', 'Bigg': r'\left( ... \right) or a plain bracket',
    'bigl': 'a plain bracket', 'bigr': 'a plain bracket', 'middle': 'nothing: remove it',
    'begin': r'separate lines of text (environments such as matrix, align and cases are not supported)',
    'end': r'separate lines of text (environments are not supported)',
    'tag': 'nothing: remove it', 'label': 'nothing: remove it',
    'underbrace': r'\underset{label}{...}', 'overbrace': r'\overset{label}{...}',
    'xrightarrow': r'\overset{a}{\rightarrow}', 'xleftarrow': r'\overset{a}{\leftarrow}',
    'stackrel': r'\overset{a}{b}', 'iff': r'\Leftrightarrow', 'implies': r'\Rightarrow',
    'impliedby': r'\Leftarrow', 'color': 'the color= argument of the text call',
    'textcolor': 'the color= argument of the text call', 'mathop': r'\operatorname{...}',
    'ce': r'\mathrm{H_2O}-style subscripts', 'si': r'\mathrm{...} for the unit',
    'SI': r'the number followed by \mathrm{unit}', 'textdegree': r'^\circ',
    'textsuperscript': '^{...}', 'textsubscript': '_{...}', 'operatorname*': r'\operatorname{...}',
}
_MATHTEXT_UNKNOWN = re.compile(r"Unknown symbol: \\(\w+)")
_MATHTEXT_TEXT = re.compile(r"Expected \\text, found '(\w+)'")
_MATHTEXT_OPNAME = re.compile(r"Expected \\operatorname\{name\}, found '\*'")
_MATHTEXT_BRACES = re.compile(r"Expected \\(frac|dfrac|sqrt|binom)\{.*\}, found '([^']*)'")


def _mathtext(message):
    """(message, hint) for a mathtext parse error: the offending TeX quoted (the first
    line of matplotlib's message) and the supported spelling of the command it used."""
    lines = message.strip('\n').split('\n')
    if len(lines) < 2 or 'Parse' not in message:
        return None
    tex = lines[0].strip()[:200]
    command, advice = None, None
    found = _MATHTEXT_UNKNOWN.search(message)
    if found is not None:
        command = found[1]
    elif _MATHTEXT_TEXT.search(message):
        command = 'text' + _MATHTEXT_TEXT.search(message)[1]
    elif _MATHTEXT_OPNAME.search(message):
        command = 'operatorname*'
    elif _MATHTEXT_BRACES.search(message):
        braces = _MATHTEXT_BRACES.search(message)
        advice = (f'\\{braces[1]} needs its arguments in braces: write '
                  f'\\{braces[1]}{{1}}{{2}}, not \\{braces[1]}{braces[2][:10]}.')
    if command is not None:
        instead = _MATHTEXT.get(command)
        if instead is not None:
            advice = (f"matplotlib's mathtext has no \\{command}: write {instead} instead "
                      f"(text.usetex is not available here).")
        else:
            advice = (f"matplotlib's mathtext has no \\{command}: use a supported command "
                      f"(\\frac, \\mathrm, \\mathbf, \\sqrt, \\sum, Greek letters ...) or plain text.")
    if advice is None:
        return None
    return f'mathtext cannot parse ${tex}$', advice
