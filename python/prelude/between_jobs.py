"""Between jobs: putting the worker back as warm-up left it after each job
(`reset_after_job` and its housekeeping steps), so the next job sees nothing of this
one.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import os
import sys
import warnings


# --- between jobs -----------------------------------------------------------------------
#
# What one job leaves behind must never reach the next. Each step restores one kind of
# state without comparing values (a job's values may not be comparable: numpy arrays in a
# cycler raise on `!=`) and is guarded on its own: a step that fails is reported, the
# other steps still run, and the supervisor retires the worker instead of letting it
# serve another job in an unknown state. The job's own result stands either way.

def _snapshot_rc():
    """rcParams as stored right after warm-up: every value deep-copied once, and the keys
    whose values can change in place (lists, cyclers) noted, so a restore hands out
    copies of those and never the snapshot itself."""
    global _SAVED_RC, _RC_MUTABLE
    import copy
    import matplotlib
    stored = dict(dict.items(matplotlib.rcParams))
    _SAVED_RC = copy.deepcopy(stored)
    _RC_MUTABLE = tuple(k for k, v in _SAVED_RC.items()
                        if not isinstance(v, (str, int, float, bool, type(None), tuple)))


def _fresh_rc():
    """The values a restore installs: the snapshot's, with its own deep copies of the
    values that can change in place (~0.15 ms, most of it the cycler's copy)."""
    import copy
    values = dict(_SAVED_RC)
    for key in _RC_MUTABLE:
        values[key] = copy.deepcopy(_SAVED_RC[key])
    return values


def prepare_next_reset():
    """Makes, while the worker waits for its next job (the worker calls this once the
    reset's verdict is sent), the copies the next restore of rcParams installs, and
    returns them: the worker holds them in its own frame, where no job reaches them
    (never in a global of this module, which a job's function reaches), and hands them to
    the next `reset_after_job`. A copy made now is as fresh then as one made then, and
    the wait for the reset is shorter by its making."""
    return _fresh_rc()


def _restore_rc(prepared=None):
    """Puts every stored rcParams value back, bypassing the validators: the snapshot was
    validated when warm-up set it, and a job may have replaced them. Installs the copies
    `prepare_next_reset` made (made here if there are none)."""
    import matplotlib
    values = prepared if type(prepared) is dict else _fresh_rc()
    dict.clear(matplotlib.rcParams)
    dict.update(matplotlib.rcParams, values)


def _close_figures():
    import matplotlib.pyplot as plt
    plt.close('all')
    if plt.isinteractive():
        plt.ioff()


def _restore_warnings():
    warnings.filters[:] = _SAVED_WARNINGS
    warnings.onceregistry.clear()
    # Invalidates every module's __warningregistry__: a warning one job triggered is
    # shown again to the next instead of being remembered as already shown.
    mutated = getattr(warnings, "_filters_mutated", None)
    if mutated is not None:
        mutated()


def _collect_garbage():
    """Frees what the job made, now rather than during the next job: a generator left
    suspended inside `with plt.style.context(...)` (or any `finally`) in a reference
    cycle would otherwise run its exit code in the middle of another job. It runs after
    the figures are closed, so that their reference cycles go too: left to the next
    job's automatic collections, a heavy figure's (800 bars) cost that job 25-50 ms."""
    import gc
    gc.collect()


def _fresh_context_objects():
    """In the job's context copy: context variables whose *values* are mutable objects
    (the decimal module's current Context, changed in place by `getcontext().prec = 3`)
    get a copy of their warm-up value, so the copy of the context is a copy all through."""
    decimal = sys.modules.get('decimal')
    if decimal is not None:
        decimal.setcontext(_WARM_DECIMAL.copy() if _WARM_DECIMAL is not None else decimal.Context())


def _restore_cwd():
    os.chdir(_TMP)


# Run in this order after every job; the state guard's check follows (see reset_after_job).
# (`_restore_rc` is given the copies `prepare_next_reset` made, if any.)
_HOUSEKEEPING = [
    ('close figures', _close_figures),
    ('collect garbage', _collect_garbage),
    ('restore rcParams', _restore_rc),
    ('restore warning filters', _restore_warnings),
    ('restore working directory', _restore_cwd),
    ('check the reviewed classes', _check_reviewed_classes),
]


def _housekeeping(prepared_rc=None):
    """Runs every between-job step; returns the failures as text (empty: all clean).
    Never raises: anything a step raises, SystemExit included, is a failure to report."""
    failures = []
    for name, step in _HOUSEKEEPING:
        try:
            step(prepared_rc) if step is _restore_rc else step()
        except BaseException as exc:  # a job's leftovers may raise anything
            try:
                failures.append(f'{name}: {type(exc).__name__}: {_truncate(str(exc), 200)}')
            except BaseException:
                failures.append(f'{name}: {type(exc).__name__}')
    return failures


def reset_after_job(prepared_rc=None, state_guard=None):
    """The between-job reset, run after the job's answer has gone out (the host encodes
    and checks the figures meanwhile) and before the host hands this worker another job:
    every housekeeping step, then the state guard's check. Anything the job's leftovers
    print now (a generator's `finally` run by the collection) is dropped: the job's
    output has been sent. `state_guard`: the guard's module, which the worker holds and
    no job reaches (it is in no module's globals, nor in `sys.modules`). Never raises."""
    saved_streams = sys.stdout, sys.stderr
    sink = _CappedText(0)
    try:
        sys.stdout = sys.stderr = sink
        leftovers = _housekeeping(prepared_rc)
        try:
            changes = state_guard.check() if state_guard is not None else []
        except BaseException as exc:
            changes = [f'the state check failed: {type(exc).__name__}']
    finally:
        sys.stdout, sys.stderr = saved_streams
    return {'housekeeping_failures': leftovers, 'state_changes': changes}
