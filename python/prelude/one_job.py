"""Running one job (`run_job`) and what its answer carries besides its files: its
output, capped; its error described with the job's own frames only; and the details
(error, figure notes, how each file was obtained, the bound it hit) as JSON for the host.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import io
import os
import random
import sys
import time
import traceback


# --- one job ----------------------------------------------------------------------------

class _CappedText(io.TextIOBase):
    """A text sink that keeps the first `cap` bytes (UTF-8, whole characters only) and
    counts the bytes of the rest: the caps the host documents are in bytes."""

    def __init__(self, cap):
        self._parts = []
        self._left = cap
        self.dropped = 0

    def writable(self):
        return True

    def write(self, s):
        # The exact copy: a str subclass's `__len__` or `isascii` must not size the cap.
        s = _exact_str(s)
        if s is None:
            raise TypeError("write() argument must be str")
        # Lone surrogates (which UTF-8 cannot carry) count as the '?' they become.
        data = None if s.isascii() else s.encode('utf-8', 'replace')
        size = len(s) if data is None else len(data)
        if size <= self._left:
            self._parts.append(s)
            self._left -= size
        elif self._left > 0:
            kept = (s[:self._left] if data is None
                    else data[:self._left].decode('utf-8', 'ignore'))
            kept_size = len(kept) if data is None else len(kept.encode('utf-8', 'replace'))
            self._parts.append(kept)
            self._left = 0
            self.dropped += size - kept_size
        else:
            self.dropped += size
        return len(s)

    def getvalue(self):
        return ''.join(self._parts)


def _truncate(text, cap=_MSG_CAP):
    """At most `cap` characters of `text`, measured on its exact copy: an exception's
    `str()` is the job's, and may be a `str` subclass whose `__len__` says 0."""
    text = _exact_str(text)
    if text is None:
        return '<not text>'
    return text if len(text) <= cap else text[:cap] + '... [truncated]'


_CONTEXT = BaseException.__dict__['__context__'].__get__
_SUPPRESS_CONTEXT = BaseException.__dict__['__suppress_context__'].__get__
_CAUSE = BaseException.__dict__['__cause__'].__get__


def _job_line(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == '<job>']
    return frames[-1].lineno if frames else None


def _masked_by_exit(exc, code):
    """The job's own error when leaving a `with` block raised another over it (the
    block's `__exit__`: `pd.ExcelWriter` saving a workbook with no sheet after its body
    failed), else None. Read through BaseException's own descriptors."""
    context = _CONTEXT(exc)
    if context is None or _SUPPRESS_CONTEXT(exc) or _CAUSE(exc) is not None:
        return None
    line, inner = _job_line(exc), _job_line(context)
    if line is None or inner is None:
        return None
    import ast
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    for node in ast.walk(tree):
        if (isinstance(node, (ast.With, ast.AsyncWith)) and node.lineno == line
                and node.body and node.body[0].lineno <= inner <= (node.end_lineno or line)):
            return context
    return None


def _describe(exc, code):
    """Type, message, user line and a traceback limited to the job's own frames. An
    error raised over the job's own by a `with` block's exit is reported second."""
    masked = _masked_by_exit(exc, code)
    if masked is not None:
        described = _describe_one(masked, code)
        try:
            after = f'{type(exc).__name__}: {exc}'
        except BaseException:
            after = type(exc).__name__
        note = (f"(leaving the `with` block at line {_job_line(exc)}, "
                f"{_truncate(after, 300)} followed)")
        described['hint'] = _truncate(' '.join(p for p in (described['hint'], note) if p), 1500)
        return described
    return _describe_one(exc, code)


def _describe_one(exc, code):
    """Type, message, user line and a traceback limited to the job's own frames."""
    lines = code.splitlines()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == '<job>']
    line = frames[-1].lineno if frames else None
    if isinstance(exc, SyntaxError) and exc.filename == '<job>':
        line = exc.lineno
    tb = []
    for f in frames:
        src = lines[f.lineno - 1].strip() if f.lineno and 0 < f.lineno <= len(lines) else ''
        where = '' if f.name == '<module>' else f', in {f.name}'
        tb.append(f'  line {f.lineno}{where}\n    {src}')
    try:
        message = str(exc)
    except BaseException:  # a job-defined __str__ may raise anything
        message = '<unprintable exception>'
    explained = _DIAGNOSE.explain(exc, code) if _DIAGNOSE is not None else {}
    # numpy's _ArrayMemoryError and friends: the supervisor knows MemoryError.
    type_name = 'MemoryError' if isinstance(exc, MemoryError) else _truncate(type(exc).__name__, 200)
    return {
        'type_name': type_name,
        'message': _truncate(explained.get('message') or message),
        'line': line,
        'traceback': _truncate('\n'.join(tb), 4000),
        'hint': _truncate(explained.get('hint') or '', 1500),
    }


def _details_json(error, notes, files=(), bound=None):
    """The structured part of a job's answer, as JSON (decoded by the worker into the
    protocol's types): the error, the figure notes, how each file the job wrote was
    obtained, and the artifact bound it hit."""
    import json
    files = list(files)
    try:
        return json.dumps({'error': error, 'figures': notes, 'files': files, 'bound': bound},
                          allow_nan=False)
    except (TypeError, ValueError) as exc:  # a summary value JSON cannot carry
        notes = {'errors': [f'figure notes not encodable: {exc}']}
        return json.dumps({'error': error, 'figures': notes, 'files': files, 'bound': bound},
                          allow_nan=False)


def _clear_per_job():
    """Empties what the job's views hand it for one job only: the folders it made, its
    loggers, its environment and its argv. Never raises (dropping a value the job put
    there may run its code)."""
    for held in (_MADE_DIRS, _LOGGING, _JOB_ENVIRON, _JOB_ARGV):
        try:
            held.clear()
        except BaseException:
            pass


def run_job(code, seed, out_name, stdout_cap, figures_in_memory=False, arrays=None,
            describe_figures=True, raw_png_limit=0, max_artifacts=64):
    """Runs one job; never raises (job exceptions, SystemExit included, are described).
    `describe_figures` false: no summary of saved figures (python/figures.py).
    `raw_png_limit` > 0: PNGs saved into out/ come back as pixels for the host to encode
    (see _install_raw_png). The between-job reset is `reset_after_job`, which the worker
    runs once the answer has gone out."""
    global _FIGURES, _NOTES, _MEMORY_FORMATS, _RAW_PNG_LIMIT, _WRITES, _WRITES_MAX, _HOME_REAL
    global _JOB_CODE, _PROXIES
    # The views of the modules: warm-up's, none a job before made or planted.
    _PROXIES = dict(_WARM_PROXIES)
    import numpy
    random.seed(seed)
    numpy.random.seed(seed % (1 << 32))
    job_globals = {
        '__builtins__': dict(_JOB_BUILTINS),
        '__name__': '__main__',
        '__doc__': None,
        '__file__': _JOB_FILE,
        'SRC': _SRC,
        'OUT': os.path.join(_OUT, out_name),
    }
    job_globals.update(_INJECTED)
    job_globals.update(_on_use(_INJECTED_ON_USE))
    if arrays:
        job_globals.update(arrays)  # names checked by the supervisor: no clash
    out, err = _CappedText(stdout_cap), _CappedText(_JOB_STDERR_CAP)
    saved_streams = sys.stdout, sys.stderr
    error = None
    # The inputs' folder: every reader finds an input by its bare name (see _write_target
    # for where writes go).
    os.chdir(_SRC_REAL)
    home = os.environ.get('HOME')
    _HOME_REAL = os.path.realpath(home) if home else None
    _WRITES, _WRITES_MAX, _NOTES_LIMIT[0] = {}, max_artifacts, None
    _clear_per_job()
    _JOB_ARGV.append(_JOB_FILE)
    _JOB_CODE = code
    _RAW_PNG_LIMIT = raw_png_limit
    _MEMORY_FORMATS = None if figures_in_memory else ({'png'} if raw_png_limit else set())
    _FIGURES = {} if figures_in_memory or raw_png_limit else None
    _NOTES = {'describe': describe_figures, 'saves': [], 'saved_ids': set(),
              'buffered_ids': set(), 'shown': False, 'saved_by_job': False,
              'errors': [], 'describe_ms': 0.0, 'out_name': out_name}
    start = time.perf_counter()
    try:
        sys.stdout, sys.stderr = out, err
        try:
            compiled = compile(code, '<job>', 'exec', dont_inherit=True)
            context = _WARM_CONTEXT.copy()
            context.run(_fresh_context_objects)
            try:
                context.run(exec, compiled, job_globals)
            except SystemExit as exc:
                if not _ended_well(exc):
                    raise
            if not _NOTES['saved_by_job']:
                # Saved no figure itself: the drawn figures left open (after the last
                # plt.show(), or without one) are what the code made.
                context.run(_capture_figures, 'open_at_end')
        except BaseException as exc:  # SystemExit and KeyboardInterrupt are job failures too
            error = _describe(exc, code)
        exec_ms = (time.perf_counter() - start) * 1000.0
        memory, _FIGURES = sorted((_FIGURES or {}).items()), None
        figures = [(name, value) for name, value in memory if isinstance(value, bytes)]
        raw = [(name, value) for name, value in memory if not isinstance(value, bytes)]
        notes, _NOTES = _figure_notes(), None
        files = [{'name': name, **entry} for name, entry in sorted(_WRITES.items())]
        _WRITES = None
        if error is None and _DIAGNOSE is not None:
            # A script written for `python script.py` that never calls its main().
            notes['uncalled_main'] = _DIAGNOSE.uncalled_main(code, job_globals)
        # Dropping the job's names may run its code (a suspended generator's `finally`):
        # still under capture, so what it prints stays the job's.
        try:
            job_globals.clear()
        except BaseException:
            pass
        # So are the values it put in its environment, argv and loggers (the `finally`
        # below empties them again, outside the capture, where nothing is left to run).
        _clear_per_job()
    finally:
        sys.stdout, sys.stderr = saved_streams
        # Every name bound for this job back to its warm object: the state guard finds
        # the prelude as warm-up left it (python/state_guard/tables.py, OWN_MODULES).
        _FIGURES = _NOTES = _MEMORY_FORMATS = _WRITES = None
        _clear_per_job()
        _JOB_CODE = None
        _RAW_PNG_LIMIT = _WRITES_MAX = 0
        _HOME_REAL = None
        _PROXIES = _WARM_PROXIES
    return {
        'details': _details_json(error, notes, files, _NOTES_LIMIT[0]),
        'exec_ms': exec_ms,
        'stdout': out.getvalue(),
        'stdout_dropped': out.dropped,
        'stderr': err.getvalue(),
        'figures': figures,
        'raw_figures': raw,
    }
