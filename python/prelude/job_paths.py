"""Paths as the job names them: `_plain_path` (the exact text of a path argument, or None
for a path-like no guard may call), the input helpers (`srcpath`, `listdir`,
`walkfiles`), `/mnt/data` as the job's folder, and the job's view of `os.path`.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import os
import pathlib
import posixpath


# pathlib's own concrete classes, exactly (not subclasses): their `__fspath__` is
# pathlib's code, run once by `_plain_path`, whose result is copied again.
_PATHLIB_TYPES = (pathlib.PurePosixPath, pathlib.PosixPath)


def _plain_path(value):
    """The text of a path argument as an exact `str` or `bytes`, or None when it is no
    path a guard accepts: `str` and `bytes` (subclasses copied), the job's `Path` (the
    reviewed `_JobPath`, by exact type: its text read through the slot, no method
    called), and paths of pathlib's own classes. Any other `os.PathLike`, a subclass of
    `Path` included, would run the job's `__fspath__`, whose answer may differ between
    the guard's call and the library's: refused (None), never called."""
    text = _exact_str(value)
    if text is None:
        text = _exact_bytes(value)
    if text is None and type(value) is _JobPath:
        text = _exact_str(_PATH_TEXT(value))
    if text is None and type(value) in _PATHLIB_TYPES:
        text = _exact_str(os.fspath(value))
    return text


# --- reading inputs ---------------------------------------------------------------------

def _inside_src(rel, what):
    """The real path of `rel` inside SRC, judged on the exact copy of `rel` (a `str`
    subclass's `__contains__`, `split` or `startswith` would otherwise judge itself)."""
    rel = _exact_str(rel)
    if rel is None or '\x00' in rel:
        raise ValueError(f"{what}: expected a file name relative to SRC, such as 'data.csv'")
    parts = rel.replace('\\', '/').split('/')
    if os.path.isabs(rel) or '..' in parts:
        raise PermissionError(f"{what}: {rel!r} leaves SRC; use a name relative to SRC such as 'data.csv'")
    path = os.path.realpath(os.path.join(_SRC_REAL, rel))
    if path != _SRC_REAL and not path.startswith(_SRC_REAL + os.sep):
        raise PermissionError(f"{what}: {rel!r} leaves SRC")
    return path


def srcpath(name):
    """Absolute path of the input file `name` (relative to SRC); refuses to leave SRC."""
    path = _inside_src(name, 'srcpath')
    name = _exact_str(name)  # a str: _inside_src refused anything else
    if not os.path.exists(path):
        raise FileNotFoundError(f"no input named {name!r}; the inputs are: {walkfiles()}")
    return path


def listdir(sub=''):
    """Sorted names in SRC (or in the subdirectory `sub` of SRC). `sub` is judged as
    its exact copy: its own `__bool__` or `__len__` does not decide what is listed."""
    text = '' if sub is None else _exact_str(sub)
    return sorted(os.listdir(_inside_src(sub, 'listdir') if text != '' else _SRC_REAL))


def walkfiles():
    """Sorted relative paths of every input file below SRC."""
    found = []
    for root, dirs, files in os.walk(_SRC_REAL):
        dirs.sort()
        rel = os.path.relpath(root, _SRC_REAL)
        for f in files:
            found.append(f if rel == '.' else os.path.join(rel, f))
    return sorted(found)


def display(*objects, **options):
    """`display(df)` as notebook code (a code interpreter's) writes it: each object
    printed, a frame or series as its text table. Notebook options (`raw`, ...) are
    ignored."""
    for obj in objects:
        print(obj)


# `from IPython.display import display, Markdown, HTML, Image` as notebook code writes it
# (IPython is not installed): what a notebook would render comes back as text, so that
# `display(Markdown(f"**Total:** {t}"))` prints its line. Plain functions returning plain
# strings: a job gets no class of pyward's to change.

def _markdown(data=None, url=None, filename=None, metadata=None):
    """`IPython.display.Markdown(text)`: the text itself (printed by `display`)."""
    return _display_text('Markdown', data, url, filename)


def _html(data=None, url=None, filename=None, metadata=None):
    """`IPython.display.HTML(text)`: the text itself (printed by `display`)."""
    return _display_text('HTML', data, url, filename)


def _display_text(kind, data, url, filename):
    if url is not None or filename is not None:
        raise TypeError(f"{kind}(url=..., filename=...) is not available here; pass the text itself")
    return '' if data is None else str(data)


def _image(data=None, url=None, filename=None, format=None, embed=None, width=None,
           height=None, **options):
    """`IPython.display.Image(filename='chart.png')`: the image's name, as `display`
    prints it. Nothing is read: the image is already the job's file or bytes."""
    if filename is None and isinstance(data, str):
        filename = data
    name = filename if isinstance(filename, str) else url if isinstance(url, str) else 'bytes'
    return f"[image: {name}]"


def _clear_output(wait=False):
    """`IPython.display.clear_output()`: nothing to clear in a job's stdout."""


def _install_ipython_display():
    """At warm-up: the modules `from IPython.display import display` finds, views of
    pyward's stand-ins (src/gate/policy/module_members.rs). Only the job's import finds
    them (`_OWN_MODULES`): libraries take an `IPython` in `sys.modules` for a notebook
    (pyplot asks it for its shell). They are kept in `sys.modules` under private names,
    where the state guard watches them (`STATE_MODULES`)."""
    top = types.ModuleType('IPython', "Notebook display helpers, as pyward offers them.")
    shown = types.ModuleType('IPython.display', "Notebook display helpers, as pyward offers them.")
    members = {'display': display, 'Markdown': _markdown, 'HTML': _html, 'Image': _image,
               'clear_output': _clear_output}
    for name, function in members.items():
        setattr(shown, name, function)
        _MEMBER_WRAPPERS[('IPython.display', name)] = function
    top.display = shown
    _OWN_MODULES.update({'IPython': top, 'IPython.display': shown})
    sys.modules['_pyward_ipython'] = top
    sys.modules['_pyward_ipython_display'] = shown


# --- sys for jobs -----------------------------------------------------------------------
#
# `import sys` gives a view of a few members (src/gate/policy/modules.rs): `sys.exit` ends
# the job (status 0 or None: as the end of the code; any other: a failure), the job's
# own output streams, and plain facts about the interpreter.

def _sys_exit(status=None):
    """Ends the job as `python script.py` ends at `sys.exit(status)`."""
    done = SystemExit(status)
    done.pyward_exit = True
    raise done


def _ended_well(exc):
    """Whether `exc` is the job's `sys.exit(0)`, `exit()` or `raise SystemExit` with status
    0 or none: raised by pyward's exit or by the job's own line, not by a library it
    called. The status is judged by its exact type (no method of the job's runs)."""
    if type(exc) is not SystemExit:
        return False
    code = exc.code
    if not (code is None or (type(code) in (int, bool) and code == 0)):
        return False
    if getattr(exc, 'pyward_exit', False) is True:
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename == '<job>'


class _JobStream:
    """`sys.stdout` or `sys.stderr` of the job's view: what is written goes where the
    job's output is captured now (`print(..., file=sys.stderr)`)."""

    __slots__ = ('_pyward_errors',)
    encoding = 'utf-8'

    def __init__(self, errors):
        object.__setattr__(self, '_pyward_errors', errors)

    def write(self, text):
        return (sys.stderr if self._pyward_errors else sys.stdout).write(text)

    def flush(self):
        pass

    def reconfigure(self, **options):
        """The streams are UTF-8 text already."""

    def isatty(self):
        return False

    def __setattr__(self, name, value):
        raise AttributeError("the job's streams are read-only")


# `sys.argv` of the job: its script's name and no arguments (`if len(sys.argv) > 1:`),
# filled when it starts and emptied after it.
_JOB_ARGV = []

_SYS_MEMBERS = {'exit': _sys_exit, 'stdout': _JobStream(False), 'stderr': _JobStream(True),
                'argv': _JOB_ARGV}
_sys_exit.__name__ = _sys_exit.__qualname__ = 'exit'


# Members of the job's views of sys, platform and gc handed out as the real functions:
# each answers about its argument or the interpreter and reaches nothing else, and the
# views' check of re-exported capabilities would refuse them, being of those modules.
_REAL_MEMBERS = (('sys', 'getsizeof'), ('platform', 'system'), ('platform', 'machine'),
                 ('platform', 'python_version'), ('platform', 'python_implementation'),
                 ('gc', 'collect'))


def _install_sys_view():
    """At warm-up: the members of the job's `sys` view that are pyward's own, and the
    real functions of its `sys`, `platform` and `gc` views (`_REAL_MEMBERS`)."""
    import gc
    import platform
    for name in _RULES['module_members'].get('sys', ()):
        if name in _SYS_MEMBERS:
            _MEMBER_WRAPPERS[('sys', name)] = _SYS_MEMBERS[name]
    modules = {'sys': sys, 'platform': platform, 'gc': gc}
    for module, name in _REAL_MEMBERS:
        if name in _RULES['module_members'].get(module, ()):
            _MEMBER_WRAPPERS[(module, name)] = getattr(modules[module], name)


# --- os.path for jobs -------------------------------------------------------------------
#
# `import os` gives a view holding `path` only; `os.path` is a view of posixpath holding
# the members the policy lists (src/gate/policy.rs, MODULE_MEMBERS): posixpath's own
# string helpers, which touch no file, and `exists`/`isfile`, answered against the job's
# inputs and never against the host. A path is judged as its exact copy (`_plain_path`).

_MNT_DATA = '/mnt/data'
_JOB_FILE = _MNT_DATA + '/job.py'  # `__file__` of every job: its inputs sit beside it


def _inside_inputs(path):
    """The real path inside SRC (an input file, or a folder of them) that `path` names,
    or None. A relative name, or one below `/mnt/data/` (the inputs' folder as models
    know it), that stays inside SRC once symlinks are resolved; an absolute path
    elsewhere and any '..' are None without being looked at."""
    text = _plain_path(path)
    if text is None:
        return None
    if type(text) is bytes:
        text = os.fsdecode(text)
    if not text or '\x00' in text:
        return None
    if text in (_MNT_DATA, _MNT_DATA + '/'):
        return _SRC_REAL
    if text.startswith(_MNT_DATA + '/'):
        text = text[len(_MNT_DATA) + 1:]
    parts = text.replace('\\', '/').split('/')
    if os.path.isabs(text) or '..' in parts:
        return None
    real = os.path.realpath(os.path.join(_SRC_REAL, text))
    if real != _SRC_REAL and not real.startswith(_SRC_REAL + os.sep):
        return None
    return real if os.path.exists(real) else None


def _input_for(path):
    """The real path of the input file `path` names ('x.csv', 'sub/x.csv',
    '/mnt/data/x.csv'), or None when it names no input file (see `_inside_inputs`)."""
    real = _inside_inputs(path)
    return real if real is not None and os.path.isfile(real) else None


def _path_text(path):
    """The exact text of a path argument (`_plain_path`, bytes decoded), or None."""
    text = _plain_path(path)
    if type(text) is bytes:
        text = os.fsdecode(text)
    return text if text and '\x00' not in text else None


def _path_exists(path):
    """`os.path.exists` for jobs: whether `path` names one of the job's inputs (a file,
    or a folder of them), a file it wrote or a folder it made, as `Path.exists` says.
    Anything else is False and never looked at."""
    text = _path_text(path)
    return text is not None and _job_path_kind(text) is not None


def _path_isfile(path):
    """`os.path.isfile` for jobs: an input file or a file the job wrote."""
    text = _path_text(path)
    return text is not None and _job_path_kind(text) == 'file'


def _path_isdir(path):
    """`os.path.isdir` for jobs: a folder of inputs or one the job made."""
    text = _path_text(path)
    return text is not None and _job_path_kind(text) == 'dir'


def _path_getsize(path):
    """`os.path.getsize` for jobs: `Path.stat`'s size of an input or a file it wrote."""
    return _job_stat(_path_arg(path, 'getsize')).st_size


def _path_getmtime(path):
    """`os.path.getmtime` for jobs: `Path.stat`'s time of an input or a file it wrote."""
    return _job_stat(_path_arg(path, 'getmtime')).st_mtime


def _path_abspath(path):
    """`os.path.abspath` (and `realpath`) for jobs: as `Path.resolve()`, with /mnt/data as
    the working directory; nothing on the host is looked at."""
    text = _path_arg(path, 'abspath')
    return posixpath.normpath(posixpath.join(_MNT_DATA, text))


def _path_relpath(path, start=None):
    """`os.path.relpath` for jobs: computed with /mnt/data as the working directory."""
    return posixpath.relpath(_path_abspath(path),
                             _path_abspath(start) if start is not None else _MNT_DATA)


def _path_arg(path, what):
    text = _path_text(path)
    if text is None:
        raise TypeError(f"{what}: expected a file name such as 'sales.csv'")
    return text


for _f, _n in ((_path_exists, 'exists'), (_path_isfile, 'isfile'), (_path_isdir, 'isdir'),
               (_path_getsize, 'getsize'), (_path_getmtime, 'getmtime'),
               (_path_abspath, 'abspath'), (_path_relpath, 'relpath')):
    _f.__name__ = _f.__qualname__ = _n
del _f, _n

# posixpath's functions that only compute on their arguments (no file system call).
_PURE_PATH_FUNCTIONS = ('join', 'basename', 'dirname', 'splitext', 'split', 'normpath', 'isabs')
_STAND_INS = {}  # dotted name -> the view an import of it gives (`os.path`)
_OWN_MODULES = {}  # dotted name -> a module of pyward's own no library sees (`IPython`)


def _install_os_path():
    """At warm-up: the job's `os.path`, when the policy lets jobs import it."""
    members = _RULES['module_members'].get('os.path')
    if members is None or 'path' not in _RULES['module_members'].get('os', ()):
        return
    for name in _PURE_PATH_FUNCTIONS:
        _MEMBER_WRAPPERS[('posixpath', name)] = getattr(posixpath, name)
    for stand_in in (_path_exists, _path_isfile, _path_isdir, _path_getsize, _path_getmtime,
                     _path_abspath, _path_relpath):
        _MEMBER_WRAPPERS[('posixpath', stand_in.__name__)] = stand_in
    _MEMBER_WRAPPERS[('posixpath', 'realpath')] = _path_abspath
    # Any other member a policy lists meets the view's ordinary checks: a posixpath
    # function is a capability there, and refused.
    view = _ModuleProxy(posixpath, members)
    _MEMBER_WRAPPERS[('os', 'path')] = view
    _STAND_INS['os.path'] = view
