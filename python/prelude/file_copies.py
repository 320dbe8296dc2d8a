"""`shutil` as model code uses it: copies of the job's files (`shutil.copy('source.xlsx',
'result.xlsx')` before adding a sheet), and the clean-up of an output folder before the
job writes into it (`if os.path.exists('out'): shutil.rmtree('out')`).

A copy reads through the job's `open` and writes through it: what it may read and where
the copy lands are exactly what `open` allows (an input or the job's own file in, an
artifact out), and nothing of the host is named or reached. `rmtree` forgets a folder
the job made and wrote nothing into, answers a missing one as shutil does, and refuses
the rest: the job's files are never deleted (its folder starts empty, so a clean-up at
its start has nothing to do). `shutil`'s own functions stay out of the job's reach.
"""


def _shutil_path(value, what):
    """The exact text of a path argument, or a TypeError naming the function."""
    text = _path_text(value)
    if text is None:
        raise TypeError(f"shutil.{what}: expected a file name such as 'sales.csv'")
    return text


def _shutil_copyfileobj(fsrc, fdst, length=0):
    """What `fsrc` reads, written to `fdst` in chunks, as shutil copies."""
    size = length if type(length) is int and length > 0 else 1 << 16
    read, write = fsrc.read, fdst.write
    while True:
        chunk = read(size)
        if not chunk:
            return
        write(chunk)


def _shutil_copyfile(src, dst, *, follow_symlinks=True):
    """The bytes of `src` (an input, or a file the job wrote) as the file `dst`; returns
    `dst`."""
    source, target = _shutil_path(src, 'copyfile'), _shutil_path(dst, 'copyfile')
    if _path_abspath(source) == _path_abspath(target):
        raise OSError(f"{source!r} and {target!r} are the same file")
    if _job_path_kind(target) == 'dir':
        raise IsADirectoryError(21, 'Is a directory', target)
    with _job_open(source, 'rb') as fsrc, _job_open(target, 'wb') as fdst:
        _shutil_copyfileobj(fsrc, fdst)
    return dst


def _shutil_copy(src, dst, *, follow_symlinks=True):
    """As `copyfile`, into the folder `dst` under the source's name when `dst` is a
    folder; returns where the copy went. (Permission bits and times are the sandbox's:
    `copy2` is the same copy.)"""
    source, target = _shutil_path(src, 'copy'), _shutil_path(dst, 'copy')
    if _job_path_kind(target) == 'dir':
        target = posixpath.join(target, posixpath.basename(source))
        dst = target
    _shutil_copyfile(source, target)
    return dst


def _shutil_rmtree(path, ignore_errors=False, onerror=None, *, onexc=None, dir_fd=None):
    """A folder the job made and wrote nothing into is forgotten (as if removed); a
    missing one is `FileNotFoundError` (nothing with `ignore_errors=True`), as shutil
    answers. Anything else (the inputs, the job's folder, files the job wrote) is
    refused: files are never deleted here."""
    text = _shutil_path(path, 'rmtree')
    place = _place(text)
    if place.startswith('/') or place == '..' or place.startswith('../'):
        raise PermissionError(f"shutil.rmtree({text!r}): only folders the job made may be "
                              "removed; the host's folders are out of its reach")
    kind = _job_path_kind(text)
    if kind is None:
        if ignore_errors:
            return
        raise FileNotFoundError(2, 'No such file or directory', text)
    if kind == 'dir' and place != '.' and _made_folder(text) \
            and not any(files for _, _, files in _os_walk(text)):
        for made in list(_MADE_DIRS):
            made_place = _place(made)
            if made_place == place or made_place.startswith(place + '/'):
                _MADE_DIRS.discard(made)
        parent = posixpath.dirname(place)
        if parent:  # `os.makedirs('out/plots')` made `out` too, and it stays
            _MADE_DIRS.add(parent)
        return
    if ignore_errors:
        return
    raise PermissionError(
        f"shutil.rmtree({text!r}): files are not deleted in this sandbox. The job's folder "
        "starts empty, so there is nothing to clean before writing; a file written again "
        "under its name replaces it")


_SHUTIL_MEMBERS = {'copyfileobj': _shutil_copyfileobj, 'copyfile': _shutil_copyfile,
                   'copy': _shutil_copy, 'copy2': _shutil_copy, 'rmtree': _shutil_rmtree}
for _name, _stand_in in _SHUTIL_MEMBERS.items():
    if _name != 'copy2':
        _stand_in.__name__ = _stand_in.__qualname__ = _name
del _name, _stand_in


def _install_shutil():
    """At warm-up: the members of the job's shutil view are the stand-ins above
    (src/gate/policy/module_members.rs)."""
    members = _RULES['module_members'].get('shutil', ())
    for name, stand_in in _SHUTIL_MEMBERS.items():
        if name in members:
            _MEMBER_WRAPPERS[('shutil', name)] = stand_in
