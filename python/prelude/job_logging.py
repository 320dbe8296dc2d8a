"""`logging` and `traceback` as model code uses them, answered by pyward's own stand-ins
behind the modules' views (src/gate/policy/modules.rs, MODULE_MEMBERS): a job's loggers
print to the job's stderr (or write an artifact through the job's `open`) and live for
one job; a traceback shows the job's own frames, as the job's error report does. The
real modules stay the libraries' (matplotlib and pandas log through `logging`), and no
job reaches their process-wide state.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import sys
import time


# --- traceback ---------------------------------------------------------------------------

_JOB_CODE = None  # while a job runs: its source, for the lines of its frames


def _job_source_line(lineno, lines=None):
    """Line `lineno` of the running job's source, stripped; '' when there is none."""
    lines = (_JOB_CODE or '').splitlines() if lines is None else lines
    return lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ''


def _job_frames(tb):
    """The job's own frames of a traceback, as `  File ..., line N, in f` lines."""
    import traceback
    lines = (_JOB_CODE or '').splitlines()
    out = []
    for frame in traceback.extract_tb(tb):
        if frame.filename != '<job>':
            continue
        out.append(f'  File "{_JOB_FILE}", line {frame.lineno}, in {frame.name}\n')
        line = _job_source_line(frame.lineno, lines)
        if line:
            out.append(f'    {line}\n')
    return out


def _exception_lines(exc, chain=True, depth=0):
    import traceback
    out = []
    cause, context = exc.__cause__, exc.__context__
    if chain and depth < 10:
        if cause is not None:
            out += _exception_lines(cause, chain, depth + 1)
            out.append('\nThe above exception was the direct cause of the following '
                       'exception:\n\n')
        elif context is not None and not exc.__suppress_context__:
            out += _exception_lines(context, chain, depth + 1)
            out.append('\nDuring handling of the above exception, another exception '
                       'occurred:\n\n')
    frames = _job_frames(exc.__traceback__)
    if frames:
        out.append('Traceback (most recent call last):\n')
        out += frames
    out += traceback.format_exception_only(type(exc), exc)
    return out


def _exception_of(args, what):
    """The exception `format_exception(exc)` or `(type, value, tb)` names."""
    exc = args[1] if len(args) >= 2 else args[0] if args else None
    if not isinstance(exc, BaseException):
        raise TypeError(f'{what}: expected an exception')
    return exc


def _tb_format_exc(limit=None, chain=True):
    """The exception being handled, as `traceback.format_exc()` writes it, with the job's
    own frames; 'NoneType: None' outside a handler."""
    exc = sys.exc_info()[1]
    return ''.join(_exception_lines(exc, chain)) if exc is not None else 'NoneType: None\n'


def _tb_print_exc(limit=None, file=None, chain=True):
    (file if file is not None else sys.stderr).write(_tb_format_exc(limit, chain))


def _tb_format_exception(*args, limit=None, chain=True, **_):
    return _exception_lines(_exception_of(args, 'format_exception'), chain)


def _tb_print_exception(*args, limit=None, file=None, chain=True, **_):
    lines = _exception_lines(_exception_of(args, 'print_exception'), chain)
    (file if file is not None else sys.stderr).write(''.join(lines))


_TRACEBACK = {'format_exc': _tb_format_exc, 'print_exc': _tb_print_exc,
              'format_exception': _tb_format_exception,
              'print_exception': _tb_print_exception}


# --- logging -----------------------------------------------------------------------------

_LEVELS = {'CRITICAL': 50, 'FATAL': 50, 'ERROR': 40, 'WARNING': 30, 'WARN': 30,
           'INFO': 20, 'DEBUG': 10, 'NOTSET': 0}
_NAMES = {50: 'CRITICAL', 40: 'ERROR', 30: 'WARNING', 20: 'INFO', 10: 'DEBUG', 0: 'NOTSET'}
_LOGGING = {}  # while a job runs: its loggers by name ('' the root) and its `disable` level


def _level(value):
    if isinstance(value, str):
        if value.upper() not in _LEVELS:
            raise ValueError(f'Unknown level: {value!r}')
        return _LEVELS[value.upper()]
    return int(value)


def _job_frame(frame):
    """The innermost frame of the job's own code from `frame` out; None if none runs."""
    while frame is not None and frame.f_code.co_filename != '<job>':
        frame = frame.f_back
    return frame


def _logging_line():
    """The line and function of the job's code that is logging."""
    frame = _job_frame(sys._getframe(1))
    return (frame.f_lineno, frame.f_code.co_name) if frame is not None else (0, '<module>')


class _JobRecord:
    """`logging.LogRecord`: the fields of one message as attributes."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def getMessage(self):
        return self.message


class _JobFormatter:
    """`logging.Formatter`: '%'-style (or '{'-style) fields of a record."""

    def __init__(self, fmt=None, datefmt=None, style='%', **_):
        self._fmt = fmt or ('%(message)s' if style == '%' else '{message}')
        self.datefmt, self._style = datefmt, style

    def formatTime(self, record, datefmt=None):
        stamp = time.localtime(record.created)
        if datefmt or self.datefmt:
            return time.strftime(datefmt or self.datefmt, stamp)
        return f"{time.strftime('%Y-%m-%d %H:%M:%S', stamp)},{int(record.msecs):03d}"

    def format(self, record):
        fields = dict(record.__dict__)
        fields['asctime'] = self.formatTime(record, self.datefmt)
        try:
            text = self._fmt.format(**fields) if self._style == '{' else self._fmt % fields
        except (KeyError, ValueError, TypeError, IndexError):
            text = fields['message']
        if fields.get('exc_text'):
            text = f"{text}\n{fields['exc_text'].rstrip()}"
        return text


class _JobHandler:
    """`logging.Handler`: a level and a formatter; `emit` writes one record."""

    def __init__(self, level=0):
        self.level, self.formatter = _level(level), None

    def setLevel(self, level):
        self.level = _level(level)

    def setFormatter(self, fmt):
        self.formatter = fmt

    def format(self, record):
        return (self.formatter or _DEFAULT_FORMATTER).format(record)

    def handle(self, record):
        if record.levelno >= self.level:
            self.emit(record)

    def emit(self, record):
        pass

    def flush(self):
        pass

    def close(self):
        pass


class _JobStreamHandler(_JobHandler):
    """`logging.StreamHandler`: the job's stderr unless given a stream."""

    def __init__(self, stream=None):
        super().__init__()
        self.stream = stream

    def emit(self, record):
        (self.stream if self.stream is not None else sys.stderr).write(self.format(record) + '\n')


class _JobFileHandler(_JobHandler):
    """`logging.FileHandler`: the log file is an artifact, written through the job's
    `open` (mode 'w' starts it empty)."""

    def __init__(self, filename, mode='a', encoding=None, delay=False, errors=None):
        super().__init__()
        self.baseFilename, self._encoding = _path_arg(filename, 'FileHandler'), encoding
        _job_open(self.baseFilename, 'w' if 'w' in mode else 'a', encoding=encoding).close()

    def emit(self, record):
        with _job_open(self.baseFilename, 'a', encoding=self._encoding) as f:
            f.write(self.format(record) + '\n')


class _JobLogger:
    """`logging.Logger` of one job: its records go to its handlers, then its parents'."""

    def __init__(self, name, level=0):
        self.name, self.level, self.handlers = name, level, []
        self.propagate, self.disabled = True, False

    def setLevel(self, level):
        self.level = _level(level)

    def addHandler(self, handler):
        if handler not in self.handlers:
            self.handlers.append(handler)

    def removeHandler(self, handler):
        if handler in self.handlers:
            self.handlers.remove(handler)

    def hasHandlers(self):
        return any(logger.handlers for logger in self._chain())

    def getChild(self, suffix):
        return _get_logger(f'{self.name}.{suffix}' if self.name != 'root' else suffix)

    def _chain(self):
        """This logger and its parents by name, the root last."""
        loggers = _LOGGING.setdefault('loggers', {})
        chain, name = [self], self.name
        while name and name != 'root':
            name = name.rpartition('.')[0]
            parent = loggers.get(name) if name else _root()
            if parent is not None and parent is not chain[-1]:
                chain.append(parent)
        return chain

    def getEffectiveLevel(self):
        return next((logger.level for logger in self._chain() if logger.level), 30)

    def isEnabledFor(self, level):
        return level > _LOGGING.get('disable', -1) and level >= self.getEffectiveLevel()

    def log(self, level, msg, *args, exc_info=None, stack_info=False, stacklevel=1,
            extra=None):
        level = _level(level)
        if self.disabled or not self.isEnabledFor(level):
            return
        created = time.time()
        message = str(msg) % args if args else str(msg)
        line, function = _logging_line()
        fields = {'name': self.name, 'levelno': level,
                  'levelname': _NAMES.get(level, f'Level {level}'), 'message': message,
                  'msg': msg, 'args': args, 'created': created,
                  'msecs': (created - int(created)) * 1000, 'relativeCreated': 0.0,
                  'lineno': line, 'funcName': function, 'filename': 'job.py',
                  'module': 'job', 'pathname': _JOB_FILE, 'process': 1,
                  'processName': 'MainProcess', 'thread': 1, 'threadName': 'MainThread',
                  'exc_text': _tb_format_exc() if exc_info else None}
        if isinstance(extra, dict):
            fields.update((k, v) for k, v in extra.items() if k not in fields)
        record = _JobRecord(fields)
        handled = False
        for logger in self._chain():
            for handler in list(logger.handlers):
                handler.handle(record)
                handled = True
            if not logger.propagate:
                break
        if not handled and level >= 30:
            sys.stderr.write(message + '\n')  # the last resort: plain message, WARNING up

    def debug(self, msg, *args, **kwargs):
        self.log(10, msg, *args, **kwargs)

    def info(self, msg, *args, **kwargs):
        self.log(20, msg, *args, **kwargs)

    def warning(self, msg, *args, **kwargs):
        self.log(30, msg, *args, **kwargs)

    warn = warning

    def error(self, msg, *args, **kwargs):
        self.log(40, msg, *args, **kwargs)

    def exception(self, msg, *args, exc_info=True, **kwargs):
        self.log(40, msg, *args, exc_info=exc_info, **kwargs)

    def critical(self, msg, *args, **kwargs):
        self.log(50, msg, *args, **kwargs)

    fatal = critical


class _JobNullHandler(_JobHandler):
    """`logging.NullHandler`: drops every record."""


_DEFAULT_FORMATTER = _JobFormatter()
_BASIC_FORMAT = '%(levelname)s:%(name)s:%(message)s'


def _root():
    loggers = _LOGGING.setdefault('loggers', {})
    if '' not in loggers:
        loggers[''] = _JobLogger('root', 30)
    return loggers['']


def _get_logger(name=None):
    """`logging.getLogger(name)`: one logger per name for the job ('__main__' included)."""
    if name is None or name == '' or name == 'root':
        return _root()
    name = str(name)
    loggers = _LOGGING.setdefault('loggers', {})
    if name not in loggers:
        loggers[name] = _JobLogger(name)
    return loggers[name]


def _basic_config(*, filename=None, filemode='a', format=None, datefmt=None, style='%',
                  level=None, stream=None, handlers=None, force=False, encoding=None,
                  errors=None):
    """`logging.basicConfig`: the root's one handler (stderr, a stream, or a log file
    written as an artifact) and level; once per job unless `force`."""
    root = _root()
    if root.handlers and not force:
        return
    root.handlers = []
    if handlers is None:
        handlers = [_JobFileHandler(filename, filemode, encoding) if filename is not None
                    else _JobStreamHandler(stream)]
    formatter = _JobFormatter(format or (_BASIC_FORMAT if style == '%' else None), datefmt,
                              style)
    for handler in handlers:
        if handler.formatter is None:
            handler.setFormatter(formatter)
        root.addHandler(handler)
    if level is not None:
        root.setLevel(level)


def _module_log(level):
    def log(msg, *args, **kwargs):
        root = _root()
        if not root.handlers:
            _basic_config()
        root.log(level, msg, *args, **kwargs)
    return log


def _log(level, msg, *args, **kwargs):
    _module_log(_level(level))(msg, *args, **kwargs)


def _exception(msg, *args, exc_info=True, **kwargs):
    _module_log(40)(msg, *args, exc_info=exc_info, **kwargs)


def _disable(level=50):
    _LOGGING['disable'] = _level(level)


def _get_level_name(level):
    if isinstance(level, str):
        return _LEVELS.get(level.upper(), f'Level {level}')
    return _NAMES.get(level, f'Level {level}')


def _capture_warnings(capture):
    """Warnings stay where Python prints them (the job's stderr)."""


def _shutdown():
    """Log files are written as each record comes: nothing is left to flush."""


_LOGGING_MEMBERS = {
    'LogRecord': _JobRecord,
    'basicConfig': _basic_config, 'getLogger': _get_logger, 'Logger': _JobLogger,
    'Handler': _JobHandler, 'StreamHandler': _JobStreamHandler,
    'FileHandler': _JobFileHandler, 'NullHandler': _JobNullHandler,
    'Formatter': _JobFormatter, 'debug': _module_log(10), 'info': _module_log(20),
    'warning': _module_log(30), 'warn': _module_log(30), 'error': _module_log(40),
    'exception': _exception, 'critical': _module_log(50), 'fatal': _module_log(50),
    'log': _log, 'disable': _disable, 'getLevelName': _get_level_name,
    'captureWarnings': _capture_warnings, 'shutdown': _shutdown,
}
for _name, _stand_in in _LOGGING_MEMBERS.items():
    _stand_in.__name__ = _stand_in.__qualname__ = _name
    _stand_in.__module__ = 'logging'
for _name, _stand_in in _TRACEBACK.items():
    _stand_in.__name__ = _stand_in.__qualname__ = _name
    _stand_in.__module__ = 'traceback'
del _name, _stand_in


_REVIEWED_CLASSES.extend((f'logging.{name}', cls, dict(cls.__dict__)) for name, cls in (
    ('LogRecord', _JobRecord), ('Formatter', _JobFormatter), ('Handler', _JobHandler),
    ('StreamHandler', _JobStreamHandler), ('FileHandler', _JobFileHandler),
    ('NullHandler', _JobNullHandler), ('Logger', _JobLogger)))


# --- warnings ------------------------------------------------------------------------------

def _show_warning(message, category, filename, lineno, file=None, line=None):
    """`warnings.showwarning` in a worker: a warning is said where plain Python says it.
    The job's own code is `__file__` (as in its tracebacks), its line quoted. A warning a
    library raised from pyward's own frames (matplotlib's `warn_external` stops at the
    first frame outside matplotlib: during a job's `savefig`, the prelude's) is said at
    the job's line that was running, as plain Python says it at the script's `savefig`;
    with no job frame running (a figure captured after the job's end), without a place."""
    import warnings
    place, job_line = (filename, lineno), None
    if filename == '<job>':
        place, job_line = (_JOB_FILE, lineno), lineno
    elif filename.startswith('pyward_'):
        frame = _job_frame(sys._getframe(1))
        job_line = frame.f_lineno if frame is not None else None
        place = (_JOB_FILE, job_line) if job_line is not None else None
    if job_line is not None and line is None:
        line = _job_source_line(job_line)
    try:
        if place is None:
            text = f'{category.__name__}: {message}\n'
        else:
            text = warnings.formatwarning(message, category, place[0], place[1], line)
        (file if file is not None else sys.stderr).write(text)
    except OSError:
        pass


def _install_logging():
    """At warm-up: the members of the job's `logging` and `traceback` views that are
    pyward's own (the level constants are the real module's numbers), and the worker's
    `warnings.showwarning`."""
    import warnings
    warnings.showwarning = _show_warning
    for module, stand_ins in (('logging', _LOGGING_MEMBERS), ('traceback', _TRACEBACK)):
        for name in _RULES['module_members'].get(module, ()):
            if name in stand_ins:
                _MEMBER_WRAPPERS[(module, name)] = stand_ins[name]
