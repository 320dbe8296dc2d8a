"""Plain Python for the model-style corpus, without paying its start-up per script.

numpy, pandas, matplotlib (Agg), seaborn and scipy.io are imported once; each script
then runs as `python __script__.py` would, in a child forked from this process (a
fresh interpreter state for every script), with the script's folder as working
directory and its output discarded. Reads one folder per line on stdin and answers
`ok` or `failed` per line on stdout.
"""

import os
import runpy
import sys
import traceback

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402,F401
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401
import scipy.io  # noqa: E402,F401
import seaborn  # noqa: E402,F401


def run(folder):
    """The child's part: the script as `python __script__.py` in `folder`; never returns."""
    code = 1
    try:
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.chdir(folder)
        script = os.path.join(folder, "__script__.py")
        sys.argv = [script]
        sys.path[0] = folder
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as e:
            code = 0 if e.code in (None, 0) else 1
        except BaseException:
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        run(line.rstrip("\n"))
    _, status = os.waitpid(pid, 0)
    print("ok" if os.waitstatus_to_exitcode(status) == 0 else "failed", flush=True)
