"""Checks python/render_once.py against the figure corpus: identical bytes, fewer draws.

For every tests/data/figures/NN_name.py (pyward job code: `np`, `plt`, `OUT` given), runs
it in this process with matplotlib's stock savefig and then with render_once installed,
from the same fresh globals (read-only module proxies, as in the worker), closing figures
and restoring rcParams and the RNG seeds between runs, and compares every file the job
wrote byte for byte (PNG, SVG, PDF, JPEG). Then times each script both ways (median of
N interleaved runs) and prints a table. Exits 1 on any byte difference, failing script
or failed upstream assumption (a matplotlib upgrade that breaks render_once fails here).

    .venv/bin/python python/render_once_check.py [--runs 5] [--only 02,26] [--corpus DIR]
"""

import argparse
import builtins
import filecmp
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import types
import warnings

# Deterministic vector output: PDF/SVG dates from SOURCE_DATE_EPOCH (read at save time),
# SVG ids from svg.hashsalt (set below). Job code cannot do either, the checker does.
os.environ['SOURCE_DATE_EPOCH'] = '0'

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy  # noqa: E402
import matplotlib  # noqa: E402
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import figure as mfigure  # noqa: E402

import render_once  # noqa: E402


# --- job environment (a small stand-in for the prelude's proxies) -----------------------

class _Proxy:
    __slots__ = ('_m',)

    def __init__(self, module):
        object.__setattr__(self, '_m', module)

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)
        value = getattr(object.__getattribute__(self, '_m'), name)
        return _proxy(value) if isinstance(value, types.ModuleType) else value

    def __setattr__(self, name, value):
        raise AttributeError('modules are read-only')


_PROXIES = {}


def _proxy(module):
    p = _PROXIES.get(id(module))
    if p is None:
        p = _PROXIES[id(module)] = _Proxy(module)
    return p


def _job_import(name, globals=None, locals=None, fromlist=(), level=0):
    return _proxy(builtins.__import__(name, None, None, fromlist, level))


_JOB_BUILTINS = dict(builtins.__dict__, __import__=_job_import)


def _fresh_globals(out):
    return {'__builtins__': dict(_JOB_BUILTINS), '__name__': '__main__', 'OUT': out,
            'np': _proxy(numpy), 'plt': _proxy(plt)}


# --- running ----------------------------------------------------------------------------

_RC0 = None


def _reset():
    plt.close('all')
    rc = matplotlib.rcParams
    changed = {k: v for k, v in _RC0.items() if rc.get(k) != v}
    if changed:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            rc.update(changed)
    random.seed(0)
    numpy.random.seed(0)


class _RenderCounter:
    """Counts Figure.draw calls with a live renderer (full renders) vs disabled (walks)."""

    def __init__(self):
        self.orig = mfigure.Figure.__dict__['draw']
        self.render = self.walk = 0

    def __enter__(self):
        orig, me = self.orig, self

        def draw(fig, renderer):
            if 'draw_path' in vars(renderer):
                me.walk += 1
            else:
                me.render += 1
            return orig(fig, renderer)
        draw.__wrapped__ = orig
        mfigure.Figure.draw = draw
        return self

    def __exit__(self, *exc):
        mfigure.Figure.draw = self.orig


def run_job(code, outdir, name):
    """Runs one job with OUT in outdir; returns ((wall s, cpu s), error or None)."""
    _reset()
    os.makedirs(outdir, exist_ok=True)
    g = _fresh_globals(os.path.join(outdir, name + '.png'))
    compiled = compile(code, '<job>', 'exec', dont_inherit=True)
    error = None
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            exec(compiled, g)
        except Exception as exc:  # report, keep going
            error = f'{type(exc).__name__}: {exc}'
        dt = (time.perf_counter() - t0, time.process_time() - c0)
    g.clear()
    _reset()
    return dt, error


def _set_mode(once):
    if once:
        render_once.install(self_test=False)
    else:
        render_once.uninstall()


def _compare(a, b):
    fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
    problems = []
    if fa != fb:
        problems.append(f'files differ: stock {fa} vs once {fb}')
    for f in sorted(set(fa) & set(fb)):
        if not filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False):
            problems.append(f'{f}: bytes differ')
    return fa, problems


def main():
    global _RC0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--corpus', default=os.path.join(HERE, '..', 'tests', 'data', 'figures'))
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--only', default='', help='comma-separated name prefixes')
    ap.add_argument('--keep', action='store_true', help='keep the output directory')
    args = ap.parse_args()

    matplotlib.rcParams['svg.hashsalt'] = 'pyward'
    # Warm the interpreter as the worker does (fonts, mathtext, Agg) before anything.
    fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
    ax.plot([0, 1, 2], [0, 1, 0], label='warm')
    ax.set_title(r'warm-up $\alpha$')
    ax.legend()
    fig.savefig(os.devnull, format='png')
    plt.close('all')
    _RC0 = matplotlib.rcParams.copy()

    try:
        render_once.check_assumptions()
    except RuntimeError as exc:
        print(f'FAIL: {exc}')
        return 1
    print(f'matplotlib {matplotlib.__version__}, numpy {numpy.__version__}: '
          'upstream assumptions hold (static checks + self-test)')

    corpus = os.path.abspath(args.corpus)
    names = sorted(f[:-3] for f in os.listdir(corpus) if f.endswith('.py') and f[:2].isdigit())
    if args.only:
        wanted = tuple(args.only.split(','))
        names = [n for n in names if n.startswith(wanted)]
    tmp = tempfile.mkdtemp(prefix='render_once_check_')
    failures, rows = [], []
    exts = set()
    nfiles = 0
    try:
        for name in names:
            with open(os.path.join(corpus, name + '.py')) as fh:
                code = fh.read()
            counts, dirs = {}, {}
            for mode in ('stock', 'once'):
                _set_mode(mode == 'once')
                dirs[mode] = os.path.join(tmp, mode, name)
                before = dict(render_once.stats)
                with _RenderCounter() as rc:
                    _, err = run_job(code, dirs[mode], name)
                paths = {k: render_once.stats[k] - before[k] for k in before}
                counts[mode] = (rc.render, rc.walk, paths)
                if err:
                    failures.append(f'{name} ({mode}): {err}')
            files, problems = _compare(dirs['stock'], dirs['once'])
            if problems:
                # Distinguish a render_once difference from a non-deterministic script.
                _set_mode(False)
                again = os.path.join(tmp, 'stock2', name)
                run_job(code, again, name)
                _, noise = _compare(dirs['stock'], again)
                tag = ' (stock itself is not deterministic)' if noise else ''
                failures += [f'{name}: {p}{tag}' for p in problems]
            nfiles += len(files)
            exts.update(os.path.splitext(f)[1] for f in files)

            times = {'stock': [], 'once': []}
            for _ in range(args.runs):
                for mode in ('stock', 'once'):
                    _set_mode(mode == 'once')
                    dt, _ = run_job(code, os.path.join(tmp, 'timing', mode, name), name)
                    times[mode].append(dt)
            s = statistics.median(t[0] for t in times['stock'])
            o = statistics.median(t[0] for t in times['once'])
            cs = statistics.median(t[1] for t in times['stock'])
            co = statistics.median(t[1] for t in times['once'])
            rows.append((name, s, o, counts, len(files), bool(problems), cs, co))
            print(f'  {name:42s} wall {s * 1e3:8.1f} {o * 1e3:8.1f} {o / s:5.2f}x   '
                  f'cpu {cs * 1e3:8.1f} {co * 1e3:8.1f} {co / cs:5.2f}x', flush=True)
    finally:
        render_once.uninstall()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f'outputs kept in {tmp}')

    print()
    print(f'{"script":40s} {"stock ms":>8s} {"once ms":>8s} {"wall":>6s} {"cpu":>6s}  '
          f'{"renders":>8s} {"walks":>6s}  {"once path":22s} files bytes')
    for name, s, o, counts, nf, bad, cs, co in rows:
        (rs, ws, _), (ro, wo, p) = counts['stock'], counts['once']
        path = ' '.join(f'{k}={v}' for k, v in p.items() if v) or '-'
        print(f'{name:40s} {s * 1e3:8.1f} {o * 1e3:8.1f} {o / s:5.2f}x {co / cs:5.2f}x  '
              f'{rs:>3d} -> {ro:<3d} {ws:>2d}->{wo:<2d}  {path:22s} {nf:>5d} '
              f'{"DIFF" if bad else "same"}')
    if rows:
        for label, si, oi in (('wall', 1, 2), ('cpu', 6, 7)):
            tot_s = sum(r[si] for r in rows)
            tot_o = sum(r[oi] for r in rows)
            geo = statistics.geometric_mean([r[oi] / r[si] for r in rows])
            print(f'{label:4s}: total {tot_s * 1e3:.0f} ms stock vs {tot_o * 1e3:.0f} ms '
                  f'render-once: ratio {tot_o / tot_s:.3f}x (geometric mean {geo:.3f}x)')
        print(f'{len(rows)} scripts, {nfiles} output files ({", ".join(sorted(exts))}), '
              f'median of {args.runs} interleaved runs each way')
    if failures:
        print(f'\nFAIL: {len(failures)} problem(s)')
        for f in failures:
            print('  ' + f)
        return 1
    print('OK: 0 byte differences')
    return 0


if __name__ == '__main__':
    sys.exit(main())
