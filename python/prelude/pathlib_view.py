"""The job's pathlib: every member of its view is one reviewed class, `_JobPath`, whose
pure methods compute on its text, whose file methods go through the job's open, and
whose questions about files are answered from the inputs and the job's own files only;
`_check_reviewed_classes` finds the class changed by a job.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import os
import pathlib
import posixpath
import stat
import time


# --- pathlib for jobs -------------------------------------------------------------------
#
# `from pathlib import Path` and `import pathlib` give a view of pathlib holding `Path`,
# `PurePath`, `PurePosixPath` and `PosixPath` (src/gate/policy.rs, MODULE_MEMBERS), each
# of them `_JobPath` below: one reviewed class owned by this module, never pathlib's own.
# Its pure methods compute on its text with pathlib's PurePosixPath (no file system call).
# What would touch the host answers against the job's files only: reads and writes go
# through the job's `open` (`_job_open`: inputs read, every write an artifact under its
# base name), `exists`/`is_file`/`is_dir`/`stat` see the inputs and what the job wrote,
# `iterdir`/`glob` list them, `mkdir` changes nothing on disk (every write lands in out/
# anyway), `resolve`/`absolute` are computed with `/mnt/data` as the working directory,
# and the rest (`unlink`, `rename`, `chmod`, links, `home`, ...) is refused with advice.
#
# A guard never calls a path object's methods: `_plain_path` accepts this class by exact
# type and reads its text through the slot descriptor kept below (`_PATH_TEXT`), so a
# job's subclass overriding `__fspath__` or `__str__` is no path a guard accepts, and
# patching the class changes nothing a guard sees (and retires the worker: see
# `_check_reviewed_classes`).

_MADE_DIRS = set()    # while a job runs: the folders it made with Path.mkdir (their text)


def _path_segment(value):
    """The text of one segment given to a path: an exact str copy, or the stored text of
    a path of this class (a job's subclass too: its text is read through the slot, its
    methods are not called). Anything else is a TypeError, as pathlib's own."""
    if isinstance(value, _JobPath):
        text = _exact_str(_PATH_TEXT(value))
    else:
        text = _exact_str(value)
    if text is None:
        raise TypeError(f"expected str or Path, not {type(value).__name__}: pass the path "
                        "as a str, such as Path('data') / 'sales.csv'")
    return text


def _new_path(*segments):
    """A path of this exact class (never a job's subclass) holding the joined text."""
    path = object.__new__(_JobPath)
    _PATH_SET(path, str(pathlib.PurePosixPath(*[_path_segment(s) for s in segments])))
    return path


def _path_refused(name, advice):
    def refused(self, *args, **kwargs):
        raise PermissionError(f"Path.{name}() is not available in this sandbox: {advice}")
    refused.__name__ = refused.__qualname__ = name
    return refused


_NO_DELETE = ("the inputs are read-only and every file the job writes is returned to the "
              "caller; write what you want under a new name instead")
_NO_HOME = ("there is no home or other host folder here: read inputs by name "
            "(Path('sales.csv') or Path('/mnt/data') / 'sales.csv') and write files by name")


class _JobPath:
    """pathlib's `Path` as a job gets it (see the banner above)."""

    __slots__ = ('_pyward_text',)

    def __init__(self, *segments):
        _PATH_SET(self, str(pathlib.PurePosixPath(*[_path_segment(s) for s in segments])))

    def __setattr__(self, name, value):
        raise AttributeError("Path objects are read-only")

    def __delattr__(self, name):
        raise AttributeError("Path objects are read-only")

    def __reduce__(self):
        return (_new_path, (_PATH_TEXT(self),))

    # -- pure: computed on the text ------------------------------------------------------

    def _pure(self):
        return pathlib.PurePosixPath(_PATH_TEXT(self))

    def __str__(self):
        return _PATH_TEXT(self)

    def __fspath__(self):
        return _PATH_TEXT(self)

    def as_posix(self):
        return _PATH_TEXT(self)

    def __bytes__(self):
        return os.fsencode(_PATH_TEXT(self))

    def __repr__(self):
        return f"PosixPath({_PATH_TEXT(self)!r})"

    def __hash__(self):
        return hash(self._pure())

    def __eq__(self, other):
        if not isinstance(other, _JobPath):
            return NotImplemented
        return self._pure() == pathlib.PurePosixPath(_path_segment(other))

    def _compare(self, other, op):
        if not isinstance(other, _JobPath):
            return NotImplemented
        return op(self._pure(), pathlib.PurePosixPath(_path_segment(other)))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __truediv__(self, other):
        try:
            return _new_path(self, other)
        except TypeError:
            return NotImplemented

    def __rtruediv__(self, other):
        try:
            return _new_path(other, self)
        except TypeError:
            return NotImplemented

    def joinpath(self, *others):
        return _new_path(self, *others)

    name = property(lambda self: self._pure().name)
    stem = property(lambda self: self._pure().stem)
    suffix = property(lambda self: self._pure().suffix)
    suffixes = property(lambda self: self._pure().suffixes)
    parts = property(lambda self: self._pure().parts)
    anchor = property(lambda self: self._pure().anchor)
    root = property(lambda self: self._pure().root)
    drive = property(lambda self: self._pure().drive)
    parent = property(lambda self: _new_path(str(self._pure().parent)))
    parents = property(lambda self: tuple(_new_path(str(p)) for p in self._pure().parents))

    def with_name(self, name):
        return _new_path(str(self._pure().with_name(_path_segment(name))))

    def with_stem(self, stem):
        return _new_path(str(self._pure().with_stem(_path_segment(stem))))

    def with_suffix(self, suffix):
        return _new_path(str(self._pure().with_suffix(_path_segment(suffix))))

    def relative_to(self, *other):
        return _new_path(str(self._pure().relative_to(*[_path_segment(o) for o in other])))

    def is_relative_to(self, *other):
        return self._pure().is_relative_to(*[_path_segment(o) for o in other])

    def is_absolute(self):
        return self._pure().is_absolute()

    def is_reserved(self):
        return False

    def match(self, pattern):
        return self._pure().match(_path_segment(pattern))

    def as_uri(self):
        return self._pure().as_uri()

    def absolute(self):
        """The path with `/mnt/data` (the job's folder as models know it) as the working
        directory; nothing on the host is looked at."""
        text = _PATH_TEXT(self)
        return self if text.startswith('/') else _new_path(_MNT_DATA, text)

    def resolve(self, strict=False):
        """`absolute()` with '.' and '..' removed by their text: no symlink is followed and
        no host path is looked at."""
        path = _new_path(posixpath.normpath(_PATH_TEXT(self.absolute())))
        if strict and not path.exists():
            raise FileNotFoundError(f"no input named {_PATH_TEXT(self)!r}; the inputs are: "
                                    f"{walkfiles()}")
        return path

    def expanduser(self):
        if _PATH_TEXT(self).startswith('~'):
            raise PermissionError(f"Path.expanduser() is not available in this sandbox: {_NO_HOME}")
        return self

    @classmethod
    def cwd(cls):
        """The job's working directory as models know it."""
        return _new_path(_MNT_DATA)

    home = classmethod(_path_refused('home', _NO_HOME))

    # -- the job's files only --------------------------------------------------------------

    def exists(self, follow_symlinks=True):
        return _job_path_kind(_PATH_TEXT(self)) is not None

    def is_file(self):
        return _job_path_kind(_PATH_TEXT(self)) == 'file'

    def is_dir(self):
        return _job_path_kind(_PATH_TEXT(self)) == 'dir'

    def is_symlink(self):
        return False

    def stat(self, follow_symlinks=True):
        return _job_stat(_PATH_TEXT(self))

    def open(self, mode='r', buffering=-1, encoding=None, errors=None, newline=None):
        return _job_open(_PATH_TEXT(self), mode, buffering, encoding, errors, newline)

    def read_text(self, encoding=None, errors=None):
        with _job_open(_PATH_TEXT(self), 'r', encoding=encoding, errors=errors) as f:
            return f.read()

    def read_bytes(self):
        with _job_open(_PATH_TEXT(self), 'rb') as f:
            return f.read()

    def write_text(self, data, encoding=None, errors=None, newline=None):
        if not isinstance(data, str):
            raise TypeError(f"data must be str, not {type(data).__name__}")
        with _job_open(_PATH_TEXT(self), 'w', encoding=encoding, errors=errors,
                       newline=newline) as f:
            return f.write(data)

    def write_bytes(self, data):
        view = memoryview(data)
        with _job_open(_PATH_TEXT(self), 'wb') as f:
            return f.write(view)

    def touch(self, mode=0o666, exist_ok=True):
        """An empty artifact of this name (an existing file of the job's is left as it is)."""
        if _job_path_kind(_PATH_TEXT(self)) is not None:
            if not exist_ok:
                raise FileExistsError(f"[Errno 17] File exists: {_PATH_TEXT(self)!r}")
            return
        _job_open(_PATH_TEXT(self), 'a').close()

    def mkdir(self, mode=0o777, parents=False, exist_ok=False):
        """Changes nothing on disk: every file the job writes, in whatever folder, is
        returned under its own name. The folder exists for the job's later questions."""
        text = _PATH_TEXT(self)
        if '\x00' in text:
            raise ValueError('embedded null byte')  # as os.mkdir says it
        kind = _job_path_kind(text)
        if kind == 'file' or (kind == 'dir' and not exist_ok):
            raise FileExistsError(f"[Errno 17] File exists: {text!r}")
        if kind is None:
            _MADE_DIRS.add(text)

    def iterdir(self):
        text = _PATH_TEXT(self)
        if _job_path_kind(text) != 'dir':
            raise FileNotFoundError(f"no input folder named {text!r}; the inputs are: "
                                    f"{walkfiles()}")
        return iter([_new_path(text, name) for name, _ in _job_folder(text)])

    def glob(self, pattern):
        return iter(_job_glob(_PATH_TEXT(self), _path_segment(pattern)))

    def rglob(self, pattern):
        return iter(_job_glob(_PATH_TEXT(self), '**/' + _path_segment(pattern)))

    unlink = _path_refused('unlink', _NO_DELETE)
    rmdir = _path_refused('rmdir', _NO_DELETE)
    rename = _path_refused('rename', "write the file under the name you want instead, "
                           "e.g. Path('new.csv').write_text(text) or df.to_csv('new.csv')")
    replace = _path_refused('replace', "write the file under the name you want instead")
    chmod = _path_refused('chmod', "file permissions are not available here")
    lchmod = _path_refused('lchmod', "file permissions are not available here")
    owner = _path_refused('owner', "file owners are not available here")
    group = _path_refused('group', "file owners are not available here")
    lstat = _path_refused('lstat', "use Path.stat() on an input or a file the job wrote")
    readlink = _path_refused('readlink', "links are not available here")
    symlink_to = _path_refused('symlink_to', "links are not available here")
    hardlink_to = _path_refused('hardlink_to', "links are not available here")
    link_to = _path_refused('link_to', "links are not available here")
    samefile = _path_refused('samefile', "compare the paths themselves (==)")


_JobPath.__name__ = _JobPath.__qualname__ = 'Path'
_JobPath.__module__ = 'pathlib'
_PATH_TEXT = _JobPath._pyward_text.__get__  # the slot's own reader: no method of a path runs
_PATH_SET = _JobPath._pyward_text.__set__
# (label, class, its namespace as reviewed): see _check_reviewed_classes.
_REVIEWED_CLASSES = [('pathlib.Path', _JobPath, dict(_JobPath.__dict__))]


def _job_file(text):
    """The real path of the job file `text` names, or None: a file the job wrote (its
    name, `/mnt/data/<name>`, the path it asked for when writing it, or a path in out/),
    an input or a folder of them (`_inside_inputs`, or an absolute path inside SRC). A
    path anywhere else is None and never looked at."""
    if not text or '\x00' in text:
        return None
    writes = _WRITES or {}
    written = _read_name(text)
    if written is not None:
        return os.path.join(_OUT_REAL, written)
    if os.path.isabs(text) and text != _MNT_DATA and not text.startswith(_MNT_DATA + '/'):
        norm = posixpath.normpath(text)
        for root, real_root in ((_SRC, _SRC_REAL), (_OUT, _OUT_REAL)):
            for prefix in (root, real_root):
                if prefix and _inside(norm, prefix):
                    real = os.path.realpath(real_root + norm[len(prefix):])
                    written = (os.path.dirname(real) == _OUT_REAL
                               and os.path.basename(real) in writes)
                    if _inside(real, real_root) and (written or os.path.exists(real)):
                        return real
        return None
    return _inside_inputs(text)


def _job_stat(text):
    """`Path.stat()` of a job file (`_job_file`): an input or a file the job wrote, one
    kept in memory (a figure not yet on disk) included. Errors name the job's path."""
    real = _job_file(text)
    if real is None:
        raise PermissionError(f"stat answers for the job's inputs and the files it wrote "
                              f"only, not {_truncate(repr(text), 120)}; the inputs are: "
                              f"{walkfiles()}")
    try:
        return os.stat(real)
    except FileNotFoundError:
        pass
    name = os.path.basename(real)
    if os.path.dirname(real) == _OUT_REAL and name in (_WRITES or {}):
        saved = _saved_figure(name)
        size = len(saved) if saved is not None else 0
        now = time.time()
        return os.stat_result((stat.S_IFREG | 0o644, 0, 0, 1, 0, 0, size, now, now, now))
    raise FileNotFoundError(2, 'No such file or directory', text)


def _job_path_kind(text):
    """'file', 'dir' or None: what the job's own files say `text` is (`_job_file`); the
    job's folder itself ('.', /mnt/data) and the folders it made are 'dir'."""
    if text in ('.', _MNT_DATA) or _made_folder(text):
        return 'dir'
    real = _job_file(text)
    if real is None:
        return None
    if os.path.dirname(real) == _OUT_REAL and os.path.basename(real) in (_WRITES or {}):
        return 'file'  # written, perhaps rendered to memory and not on disk yet
    return 'file' if os.path.isfile(real) else 'dir' if os.path.isdir(real) else None


def _job_folder(text):
    """[(name, is folder)] directly in the folder `text` names, sorted: the inputs and
    what the job wrote in its own folder (`.`, /mnt/data, SRC), an input folder's
    entries (none that a symlink takes out of the inputs), or the files the job wrote
    into out/ or into a folder it made."""
    writes = _WRITES or {}
    real = _SRC_REAL if text in ('.', _MNT_DATA) else _job_file(text)
    entries = {}
    if real is not None and _inside(real, _SRC_REAL) and os.path.isdir(real):
        for name in os.listdir(real):
            entry = os.path.realpath(os.path.join(real, name))
            if _inside(entry, _SRC_REAL):  # a symlink out of the inputs is no input
                entries[name] = os.path.isdir(entry)
    folder = '.' if real == _SRC_REAL else _place(text)
    if real == _OUT_REAL:
        entries.update((name, False) for name in writes)
    # The files the job wrote here: under the name it wrote them (`reports/a.csv` is
    # listed in `reports`, `/tmp/x.png` nowhere but out/), and the folders it made here.
    for name, entry in writes.items():
        place = _place(entry['requested']) if entry['requested'] is not None else name
        if (posixpath.dirname(place) or '.') == folder:
            entries[posixpath.basename(place)] = False
    for made in _MADE_DIRS:
        parts = _place(made).split('/')
        for i, part in enumerate(parts):
            if part not in ('', '.', '..') and ('/'.join(parts[:i]) or '.') == folder:
                entries.setdefault(part, True)
    return sorted(entries.items())


def _made_folder(text):
    """Whether `text` is a folder the job made (`os.makedirs('out/plots')` makes `out`
    too)."""
    place = _place(text)
    return any(made == text or _place(made) == place or _place(made).startswith(place + '/')
               for made in _MADE_DIRS)


def _job_glob(text, pattern):
    """`Path.glob` over the job's files (`_job_folder`): '*', '?' and '[...]' within a
    name, '**' for any depth of folders; sorted."""
    import fnmatch
    if pattern.startswith('/') or not pattern:
        raise ValueError(f"glob: a relative pattern such as '*.csv', not {pattern!r}")
    if _job_path_kind(text) != 'dir':
        return []
    parts = [p for p in pattern.split('/') if p not in ('', '.')]
    found = []

    def walk(folder, i):
        if i == len(parts):
            found.append(folder)
            return
        if parts[i] == '**':
            walk(folder, i + 1)
            for name, is_dir in _job_folder(folder):
                if is_dir:
                    walk(str(pathlib.PurePosixPath(folder, name)), i)
            return
        for name, is_dir in _job_folder(folder):
            if fnmatch.fnmatchcase(name, parts[i]) and (is_dir or i == len(parts) - 1):
                walk(str(pathlib.PurePosixPath(folder, name)), i + 1)

    walk(text, 0)
    return [_new_path(t) for t in sorted(set(found))]


def _check_reviewed_classes():
    """After each job: pyward's classes a job is handed (the path class, the loggers) as
    they were reviewed. A job with the gate off can rebind their methods
    (`type.__setattr__`); they are put back and the worker is retired."""
    changed = []
    for label, cls, saved in _REVIEWED_CLASSES:
        now = dict(cls.__dict__)
        if now.keys() == saved.keys() and all(now[k] is v for k, v in saved.items()):
            continue
        for key in now.keys() - saved.keys():
            type.__delattr__(cls, key)
        for key, value in saved.items():
            if now.get(key) is not value:
                type.__setattr__(cls, key, value)
        changed.append(label)
    if changed:
        raise RuntimeError(f"the job changed {', '.join(changed)}'s class")


def _install_pathlib():
    """At warm-up: every member of the job's pathlib view is the reviewed class, and the
    folder functions of the job's `os` view are answered by it."""
    for name in _RULES['module_members'].get('pathlib', ()):
        _MEMBER_WRAPPERS[('pathlib', name)] = _JobPath
    members = _RULES['module_members'].get('os', ())
    for name, stand_in in _OS_FOLDERS.items():
        if name in members:
            _MEMBER_WRAPPERS[('os', name)] = stand_in
    if 'environ' in members:
        _MEMBER_WRAPPERS[('os', 'environ')] = _JOB_ENVIRON
    members = _RULES['module_members'].get('glob', ())
    for name, stand_in in (('glob', _glob_glob), ('iglob', _glob_iglob)):
        if name in members:
            _MEMBER_WRAPPERS[('glob', name)] = stand_in


# `glob` as model code uses it (`glob.glob('/mnt/data/*.csv')`), answered as Path.glob.

def _glob_glob(pathname, *, root_dir=None, dir_fd=None, recursive=False, include_hidden=False):
    """The job's files that match `pathname` ('*.csv', '/mnt/data/*.xlsx', 'data/**/*.csv'
    with `recursive=True`), sorted, written as the pattern was: `Path.glob` answers."""
    text = _path_text(pathname)
    if text is None:
        raise TypeError("glob: expected a pattern such as '*.csv'")
    if root_dir is not None or dir_fd is not None:
        raise PermissionError("glob: root_dir and dir_fd are not available here; write the "
                              "folder into the pattern, such as glob.glob('data/*.csv')")
    parts = text.split('/')
    magic = [i for i, part in enumerate(parts) if any(c in part for c in '*?[')]
    if not magic:
        return [text] if _job_path_kind(text) is not None else []
    folder = '/'.join(parts[:magic[0]]) or ('/' if text.startswith('/') else '.')
    rest = '/'.join(parts[magic[0]:])
    if not recursive:
        rest = rest.replace('**', '*')
    found = [_PATH_TEXT(path) for path in _job_glob(folder, rest)]
    if not include_hidden:
        found = [f for f in found
                 if not any(p.startswith('.') and p not in ('.', '..')
                            for p in f[len(folder):].split('/'))]
    return found


def _glob_iglob(pathname, **options):
    """As `glob`, one at a time."""
    return iter(_glob_glob(pathname, **options))


_glob_glob.__name__ = _glob_glob.__qualname__ = 'glob'
_glob_iglob.__name__ = _glob_iglob.__qualname__ = 'iglob'


# `os` as model code uses it for folders (`os.makedirs('output', exist_ok=True)` before
# saving there, `os.listdir('/mnt/data')`), answered as the reviewed Path answers.

def _os_makedirs(name, mode=0o777, exist_ok=False):
    """Changes nothing on disk (as `Path(name).mkdir(parents=True)`): every file the job
    writes, in whatever folder, is returned under its own name."""
    _JobPath(name).mkdir(parents=True, exist_ok=exist_ok)


def _os_mkdir(path, mode=0o777):
    """As `Path(path).mkdir()`: nothing changes on disk."""
    _JobPath(path).mkdir()


def _os_listdir(path='.'):
    """The names in one of the job's folders (its inputs, /mnt/data, a folder it made),
    as `Path(path).iterdir()` lists them."""
    return [entry.name for entry in _JobPath(path).iterdir()]


def _os_getcwd():
    """The job's folder, as its paths are written."""
    return _MNT_DATA


def _os_walk(top='.', topdown=True, onerror=None, followlinks=False):
    """`os.walk` over one of the job's folders: (folder, its folders, its files) for it
    and each folder below, as `Path.iterdir` lists them."""
    text = _path_text(top)
    if text is None or _job_path_kind(text) != 'dir':
        return
    pending = [text]
    while pending:
        folder = pending.pop(0)
        entries = _job_folder(folder)
        dirs = [name for name, is_dir in entries if is_dir]
        yield folder, dirs, [name for name, is_dir in entries if not is_dir]
        pending[:0] = [posixpath.join(folder, name) for name in dirs]


def _os_chdir(path):
    """`os.chdir` to the job's folder (`os.chdir(os.path.dirname(os.path.abspath(__file__)))`,
    `os.chdir('/mnt/data')`), where the job already runs: nothing changes. The working
    directory is the worker's, so any other folder is refused."""
    text = _path_text(path)
    if text is not None and _place(text) in ('.', _MNT_DATA):
        return
    raise PermissionError(f"os.chdir: the job runs in its own folder, {_MNT_DATA}, and stays "
                          "there; read and write files by their names or paths from it")


def _os_getenv(key, default=None):
    """`os.getenv`: the job's own environment (`os.environ`), empty when it starts."""
    return _JOB_ENVIRON.get(key, default)


# `os.environ` of the job: no variable of the worker's, emptied before and after each job
# (a script sets `os.environ['MPLBACKEND']` or reads a setting with a default).
_JOB_ENVIRON = {}

_OS_FOLDERS = {'makedirs': _os_makedirs, 'mkdir': _os_mkdir, 'listdir': _os_listdir,
               'getcwd': _os_getcwd, 'walk': _os_walk, 'getenv': _os_getenv,
               'chdir': _os_chdir}
for _name, _stand_in in _OS_FOLDERS.items():
    _stand_in.__name__ = _stand_in.__qualname__ = _name
del _name, _stand_in
