"""pyward worker prelude: warm-up, the job namespace, and running one job.

This module runs inside the embedded interpreter of a worker process. It is loaded once,
before the sandbox is applied; job code never sees this module, only the helpers it
injects into the job's globals (and module proxies, never the modules themselves).

The module is these files, run in this order into one namespace (src/worker/modules.rs),
so that warm-up, a job and the reset share the state below and every guard keeps one
identity whichever file defines it:

- prelude/state.py (this file): the state warm-up, a job and the reset share, and the
  exact copies every guard judges;
- prelude/name_rules.py: modules, attributes and format fields reached by a name;
- prelude/module_views.py: the import guard and the module views;
- prelude/job_paths.py: path arguments, the input helpers, /mnt/data, os.path;
- prelude/pathlib_view.py: the job's pathlib (the reviewed `_JobPath` class);
- prelude/writes.py: the write point (every file the job writes, the artifact limit);
- prelude/spreadsheets.py: openpyxl as jobs get it, reproducible workbooks;
- prelude/figure_capture.py: figure notes, figures to memory, PNG pixels to the host;
- prelude/warm_up.py: warm-up, the zygote's and a forked worker's steps;
- prelude/one_job.py: running one job, its output, its error, the details of its answer;
- prelude/between_jobs.py: the reset after every job.
"""

import builtins

_RULES = None        # runtime rules sent by the supervisor (dict)
_SRC = _OUT = _TMP = None
_SRC_REAL = _OUT_REAL = _TMP_REAL = None
_JOB_BUILTINS = None  # curated builtins, copied per job
_INJECTED = None      # names injected into every job's globals
_INJECTED_ON_USE = {}  # injected names warm-up did not import: name -> (module, member)
_SAVED_RC = None      # rcParams' stored values right after warm-up (deep copies)
_RC_MUTABLE = ()      # keys of _SAVED_RC whose values can change in place
_SAVED_WARNINGS = None
_FIGURES = None       # name -> bytes (or a raw image) while a job renders to memory, else None
_MEMORY_FORMATS = None  # formats rendered to memory: None for all (figures_in_memory)
_RAW_CAPTURE = None   # while a PNG save hands its pixels to the host: where they go
_PROXIES = {}         # id(module) -> proxy, so `np is np` holds across accesses
_WARM_PROXIES = {}    # the views warm-up made: every job's _PROXIES starts as a copy
_DIAGNOSE = None      # the diagnose module: hints computed from a job's exception
_FIGURES_MOD = None   # the figures module: what a saved figure shows
_GUARDS = None        # the library_guards module: string engines, job-facing replacements
_NOTES = None         # while a job runs: its saves, show() calls and figures drawn
_WARM_CONTEXT = None  # context variables as warm-up left them
_WARM_DECIMAL = None  # the decimal Context warm-up left, copied for each job
_REAL_IMPORT = builtins.__import__
_MSG_CAP = 2000
# Bytes of what a job writes to sys.stderr that go to the host with its answer (a
# failure quotes the last STDERR_TAIL_CHARS of them; JOB_STDERR_CAP in src/outcome.rs is
# this number, which the host holds the answer to).
_JOB_STDERR_CAP = 16384


# --- exact copies -----------------------------------------------------------------------
#
# A guard judges a name or a path that the job handed it, and the job may have handed it
# an object of its own making: a `str` subclass whose `startswith`, `__contains__`,
# `__eq__`, `__hash__`, `partition` or `__len__` answers what its author likes, an
# `os.PathLike` whose `__fspath__` gives one path when judged and another when used, an
# object whose `__class__` makes `isinstance` say `str`. So no guard asks the object:
# each takes an exact copy first, made by the C code of the exact base type (`type()` is
# the real type, `str.__str__` is str's own slot, not an override), judges the copy and
# passes the copy on, so that what was judged is what is used (RestrictedPython's
# `safer_getattr` checks `type(name) is str` for the same reason).

def _exact_str(value):
    """An exact `str` holding the text of `value` (a `str` or an instance of a `str`
    subclass); None for anything else. No method of `value` runs."""
    kind = type(value)
    if kind is str:
        return value
    if issubclass(kind, str):
        return str.__str__(value)
    return None


def _exact_bytes(value):
    """An exact `bytes` holding the bytes of `value` (a `bytes` or an instance of a
    `bytes` subclass); None for anything else. No method of `value` runs: bytes' own
    slicing copies a subclass's data into a new exact object."""
    kind = type(value)
    if kind is bytes:
        return value
    if issubclass(kind, bytes):
        return bytes.__getitem__(value, slice(None))
    return None
