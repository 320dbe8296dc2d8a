"""Where a warm worker's time goes on the bench's figures: a cProfile report.

    .venv/bin/python benches/profile_render.py docs/bench/PROFILE.md   (make profile)

The interpreter is set up as a worker's is for a job's save: Agg, the worker's own
prelude (`python/prelude/`) with its raw-PNG capture installed (the pixels go to the
host, which encodes them), render-once (`python/render_once.py`) and the frozen text
metrics (`python/text_metrics.py`). The sandbox, the gate and the state guard run
outside the job's `exec` and are not in the profile; the job's code, figure creation,
drawing and the capture are.

For each workload: warm-up runs, then RUNS runs under cProfile. The report gives the
self time per job grouped by what it is for (the groups below), the top functions by self
time, and the cumulative time of the steps a figure goes through.
"""

import cProfile
import io
import os
import pstats
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(os.environ.get('PROFILE_RUNS', '40'))

WORKLOADS = {
    'tiny': 'plt.plot([1, 2, 3])\nplt.savefig(OUT)\n',
    'typical': open(os.path.join(ROOT, 'tests/data/figures/02_typical_line_scatter_legend.py')).read(),
}

# Self time grouped by purpose: the first group whose test matches a function wins.
# A function is (file, line, name) as cProfile records it; C functions have file '~'.
GROUPS = [
    ('text layout and glyphs (ft2font, mathtext, Text._get_layout, font lookup)',
     lambda f, n: 'ft2font' in n or 'mathtext' in f or '_mathtext' in f
     or f.endswith(('text.py', 'font_manager.py', 'textpath.py'))
     or 'get_text_width_height_descent' in n or 'draw_text' in n),
    ('Agg rasterising (draw_path, draw_markers, draw_image, clear)',
     lambda f, n: "RendererAgg" in n or f.endswith('backend_agg.py')),
    ('raw PNG capture (buffer copy handed to the host)',
     lambda f, n: 'pyward_prelude' in f or n == "<method 'tobytes' of 'numpy.ndarray' objects>"),
    ('ticks and locators (axis.py, ticker.py)',
     lambda f, n: f.endswith(('axis.py', 'ticker.py'))),
    ('transforms and paths',
     lambda f, n: f.endswith(('transforms.py', 'path.py', 'bezier.py', 'patches.py'))
     or '_path' in n),
    ('rcParams look-ups and validation',
     lambda f, n: f.endswith(('rcsetup.py', 'matplotlib/__init__.py'))),
    ('copying (copy, deepcopy)', lambda f, n: f.endswith('copy.py')),
    ('artist properties (artist.py, lines.py, collections.py, markers.py, colors.py, cbook)',
     lambda f, n: f.endswith(('artist.py', 'lines.py', 'collections.py', 'markers.py',
                              'colors.py', 'cbook.py', '__init__.py', '_api/__init__.py',
                              'docstring.py', 'deprecation.py'))),
    ('axes and figure set-up (figure.py, axes/_base.py, spines, gridspec, legend)',
     lambda f, n: f.endswith(('figure.py', '_base.py', '_axes.py', 'spines.py',
                              'gridspec.py', 'legend.py', 'legend_handler.py',
                              'offsetbox.py', 'pyplot.py', '_subplots.py', 'layout_engine.py',
                              'backend_bases.py', 'image.py'))),
    ('numpy', lambda f, n: 'numpy' in f or 'numpy' in n),
    ('render-once', lambda f, n: 'pyward_render_once' in f),
]
OTHER = 'other (Python built-ins, weakref, the job line itself, ...)'

# Steps a figure goes through, by the function that does them (cumulative time).
STEPS = [
    ('figure and axes creation', 'figure.py', 'subplots'),
    ('figure and axes creation (pyplot)', 'pyplot.py', 'figure'),
    ('Figure.draw (everything drawn)', 'figure.py', 'draw'),
    ('Axis.draw (ticks, tick labels, axis label)', 'axis.py', 'draw'),
    ('Axis._update_ticks', 'axis.py', '_update_ticks'),
    ('Axis._get_ticklabel_bboxes', 'axis.py', '_get_ticklabel_bboxes'),
    ('Text.draw', 'text.py', 'draw'),
    ('Text._get_layout', 'text.py', '_get_layout'),
    ('Legend.__init__', 'legend.py', '__init__'),
    ('Line2D.draw', 'lines.py', 'draw'),
    ('Collection.draw (scatter)', 'collections.py', 'draw'),
    ('raw capture (_print_pil)', 'pyward_prelude', '_print_pil'),
    ('savefig', 'pyplot.py', 'savefig'),
]


def setup():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot  # noqa: F401  (imported as a worker imports it)
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(ROOT, 'python'))
    from worker_modules import load  # the worker's modules, as it loads them
    del sys.path[0]
    prelude = load('_pyward_prelude')
    render_once = load('_pyward_render_once')
    render_once.install()
    prelude._install_raw_png()
    load('_pyward_text_metrics').install()
    prelude._RAW_PNG_LIMIT = 64 << 20
    return prelude


def run(prelude, code, out):
    import numpy as np
    import matplotlib.pyplot as plt
    prelude._RAW_CAPTURE = {}
    exec(code, {'np': np, 'plt': plt, 'OUT': out, '__name__': '__main__'})
    plt.close('all')
    if 'image' not in prelude._RAW_CAPTURE:
        raise SystemExit('the save did not reach the raw capture: the profile would be wrong')


def profile(prelude, name, source, out):
    code = compile(source, '<job>', 'exec')
    for _ in range(5):
        run(prelude, code, out)
    walls = []
    for _ in range(RUNS):
        t = time.perf_counter()
        run(prelude, code, out)
        walls.append((time.perf_counter() - t) * 1000)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(RUNS):
        run(prelude, code, out)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    return statistics.median(walls), stats


def group_of(func):
    file, _, name = func
    for label, test in GROUPS:
        if test(file, name):
            return label
    return OTHER


def short(func):
    file, line, name = func
    if file == '~':
        return name
    parts = file.split('/')
    where = '/'.join(parts[parts.index('site-packages') + 1:]) if 'site-packages' in parts else parts[-1]
    return f'{where}:{line}({name})'


def report(name, source, wall, stats):
    per = 1000.0 / RUNS
    entries = stats.stats  # func -> (cc, nc, tt, ct, callers)
    total = sum(tt for _, _, tt, _, _ in entries.values()) * per
    lines = [f'## {name}', '', '```python', source.rstrip(), '```', '',
             f'Median wall time per job without the profiler: **{wall:.1f} ms** '
             f'({RUNS} runs). Under cProfile: {total:.1f} ms of self time per job '
             f'(the profiler roughly doubles Python-heavy code; compare shares, not '
             f'milliseconds).', '', '| what | self ms/job | share |', '| --- | --- | --- |']
    groups = {}
    for func, (_, _, tt, _, _) in entries.items():
        groups[group_of(func)] = groups.get(group_of(func), 0.0) + tt * per
    for label, ms in sorted(groups.items(), key=lambda kv: -kv[1]):
        lines.append(f'| {label} | {ms:.2f} | {ms / total:.0%} |')
    lines += ['', 'Top 25 functions by self time:', '',
              '| function | calls/job | self ms/job | cumulative ms/job |', '| --- | --- | --- | --- |']
    top = sorted(entries.items(), key=lambda kv: -kv[1][2])[:25]
    for func, (_, nc, tt, ct, _) in top:
        lines.append(f'| `{short(func)}` | {nc / RUNS:.0f} | {tt * per:.2f} | {ct * per:.2f} |')
    lines += ['', 'Steps (cumulative, including what they call):', '',
              '| step | calls/job | cumulative ms/job |', '| --- | --- | --- |']
    for label, file_part, fname in STEPS:
        found = [(nc, ct) for (f, _, n), (_, nc, _, ct, _) in entries.items()
                 if n == fname and file_part in f]
        if found:
            nc, ct = max(found, key=lambda x: x[1])
            lines.append(f'| {label} | {nc / RUNS:.1f} | {ct * per:.2f} |')
    return '\n'.join(lines) + '\n'


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else None
    import matplotlib
    import numpy
    prelude = setup()
    out = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'pyward-profile-{os.getpid()}.png')
    parts = ['# Where a warm worker spends a figure\n',
             f'`make profile` (`benches/profile_render.py`): Python {sys.version.split()[0]}, '
             f'matplotlib {matplotlib.__version__}, numpy {numpy.__version__}; the worker\'s '
             'prelude with its raw-PNG capture (the PNG is encoded by the host, outside this '
             'profile), render-once and the frozen text metrics installed, as in a worker. '
             'Self time is grouped by purpose; C functions count where they are called '
             'from.\n']
    for name, source in WORKLOADS.items():
        wall, stats = profile(prelude, name, source, out)
        parts.append(report(name, source, wall, stats))
    text = '\n'.join(parts)
    if target:
        with open(target, 'w') as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == '__main__':
    main()
