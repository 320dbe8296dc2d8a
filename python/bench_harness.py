"""pyward bench's plain-Python baselines: the job as plain Python runs it, without pyward.

    python -I bench_harness.py once REQUEST   cold: import what the job needs, run it, exit
    python -I bench_harness.py serve          floor: warm once, then run requests from stdin

A request is one JSON object: {"code", "src", "out", "seed", "pandas", "loadmat"}. The
job sees what a pyward job sees (np, plt on Agg, pd and loadmat when it names them, SRC,
OUT, srcpath, listdir, walkfiles), with numpy's and random's generators seeded as pyward
seeds them and SVG ids salted as pyward salts them, so the figures can be compared byte
for byte. `serve` answers each request with one JSON line: {"ok", "exec_ms", "error"},
`exec_ms` timing the bare `exec` (the floor no executor can beat).
"""

import contextlib
import io
import json
import os
import random
import sys
import time


def warm(request, base=None):
    """Imports what the job needs; returns the globals every run starts from (`base`
    extended with what this job needs beyond it)."""
    if base is None:
        import matplotlib
        matplotlib.use('Agg')
        matplotlib.rcParams['svg.hashsalt'] = 'pyward'
        import matplotlib.pyplot as plt
        import numpy as np
        base = {'np': np, 'plt': plt}
    if request.get('pandas'):
        import pandas as pd
        base['pd'] = pd
    if request.get('loadmat'):
        from scipy.io import loadmat
        base['loadmat'] = loadmat
    return base


def run(request, base):
    """Runs the job once; the error's type and message, or None."""
    import numpy as np
    import matplotlib.pyplot as plt
    src = request['src']

    def srcpath(name):
        return os.path.join(src, name)

    def listdir(sub=''):
        return sorted(os.listdir(os.path.join(src, sub)))

    def walkfiles():
        found = []
        for root, _, files in os.walk(src):
            found += [os.path.relpath(os.path.join(root, f), src) for f in files]
        return sorted(found)

    job = dict(base, __name__='__main__', SRC=src, OUT=request['out'], srcpath=srcpath,
               listdir=listdir, walkfiles=walkfiles)
    seed = request['seed']
    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    printed = io.StringIO()  # what the job prints is not the harness's answer
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(request['code'], '<job>', 'exec'), job)
        return None
    except BaseException as exc:
        return f'{type(exc).__name__}: {exc}'
    finally:
        plt.close('all')


def main():
    mode = sys.argv[1]
    if mode == 'once':
        request = json.loads(sys.argv[2])
        error = run(request, warm(request))
        if error is not None:
            print(error, file=sys.stderr)
            sys.exit(1)
        return
    base = None
    for line in sys.stdin:
        request = json.loads(line)
        base = warm(request, base)
        start = time.perf_counter()
        error = run(request, base)
        exec_ms = (time.perf_counter() - start) * 1000.0
        print(json.dumps({'ok': error is None, 'exec_ms': exec_ms, 'error': error}), flush=True)


if __name__ == '__main__':
    main()
