"""The write point: every file the job writes goes through one open (the job's `open`,
`builtins.open` and `io.open` while it runs, numpy's opener) that places it in out/
under its base name, holds it to the artifact limit and records the path the code asked
for; `/mnt/data/<name>` reads the job's own output of that name first.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import builtins
import io
import os
import posixpath
import shutil
import sys
import types


_REAL_OPEN = builtins.open

# --- files as models write them ---------------------------------------------------------
#
# A job runs with SRC as its working directory: every reader (pandas, numpy, scipy, C
# code and its existence checks included) finds an input by its bare name as in a plain
# `python script.py` next to its data. Writes go through one choke point, `open`
# (builtins.open and io.open while a job runs, the job's own `open`, and Figure.savefig),
# which places every file the job writes in out/ under its base name (`_write_target`):
# 'novice.png', 'out/fig1.png', '/mnt/data/plot.png', '/tmp/x.png' and '../x.png' all
# become an artifact, and a name that was not already plain is recorded as the path the
# code asked for. `/mnt/data/<name>` reads the job's output of that name if it wrote one,
# else its input (`_read_target`). Nothing here widens what the process may do: the
# audit hook and Landlock still refuse any write outside out/ and tmp/ and any read
# outside src/, out/, tmp/ and the Python install; a write this code does not map (a
# path it never sees) meets them and fails.

_WRITES = None        # while a job runs: name -> {'how', 'requested'} of what it wrote
_WRITES_MAX = 0       # most artifacts the job may write (RunMsg.max_artifacts)
_HOME_REAL = None     # the worker's private HOME (libraries' caches), never an artifact


class ArtifactLimitError(OSError):
    """The job wrote more files than a job may return (`max_artifacts`)."""


def _inside(real, root):
    return real == root or real.startswith(root + os.sep)


def _plain_text_path(value):
    """An exact `str` of a path argument (`_plain_path`, bytes decoded), or None."""
    text = _plain_path(value)
    if type(text) is bytes:
        text = os.fsdecode(text)
    return text


def _artifact_name(text):
    """The artifact name a write to `text` gets: its last component, which must be one
    plain file name (the host checks the same: src/output_dir.rs check_file_name)."""
    import unicodedata
    name = text.replace('\\', '/').rsplit('/', 1)[-1]
    bad = (not name or name in ('.', '..') or '\x00' in name
           or any(unicodedata.category(c) == 'Cc' for c in name))
    if not bad:
        try:
            bad = len(name.encode('utf-8')) > 255
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 name
            bad = True
    if bad:
        raise ValueError(f"cannot write to {_truncate(repr(text), 120)}: give the file a plain "
                         "name such as 'figure.png' or 'summary.csv'")
    return name


def _note_write(name, how, requested):
    """Records that the job wrote the artifact `name`; refuses the write past the bound."""
    writes = _WRITES
    if writes is None:
        return
    if name not in writes and len(writes) >= _WRITES_MAX:
        _NOTES_LIMIT[0] = 'max_artifacts'
        raise ArtifactLimitError(
            f"writing {_truncate(repr(name), 80)}: a job returns at most {_WRITES_MAX} files "
            "(max_artifacts); write fewer files, several plots in one figure with subplots")
    entry = writes.get(name)
    if entry is None:
        writes[name] = {'how': how, 'requested': requested}
        return
    # The same file again: a save outranks the writer's own open of the file it
    # saves (matplotlib opens the path it was given), and the path the code asked
    # for stays known.
    if how != 'written':
        entry['how'] = how
    if requested is not None:
        entry['requested'] = requested


_NOTES_LIMIT = [None]  # the bound a job hit, if any: 'max_artifacts'


def _write_target(text):
    """(real path, artifact name or None, requested path or None) for a write to the
    path `text` (an exact str) while a job runs. In out/ (OUT, or a plain name) it is
    that artifact; in tmp/ (or HOME) a scratch file; inside the inputs refused;
    anywhere else the artifact of its base name, with `text` as the path asked for."""
    if not text or '\x00' in text:
        raise ValueError("open: expected a file name such as 'summary.csv'")
    real = os.path.realpath(text)
    if os.path.isabs(text):
        if os.path.dirname(real) == _OUT_REAL:
            return real, _artifact_name(real), None
        if _inside(real, _OUT_REAL) or _inside(real, _TMP_REAL) or (
                _HOME_REAL and _inside(real, _HOME_REAL)):
            return real, None, None
        if _inside(real, _SRC_REAL):
            raise PermissionError(f"the inputs are read-only: write {os.path.basename(text)!r} "
                                  "under its own name instead")
    name = _distinct_name(_artifact_name(text), text)
    plain = not os.path.isabs(text) and '/' not in text.replace('\\', '/')
    target = os.path.join(_OUT_REAL, name)
    if os.path.islink(target) or os.path.dirname(os.path.realpath(target)) != _OUT_REAL:
        raise PermissionError(f"cannot write {name!r}: not a plain file")
    # The path asked for is kept when it is not the name: a folder, or a plain name
    # that another file of the job already had ('units.csv' kept as 'units-2.csv').
    return target, name, None if plain and name == text else text


def _place(text):
    """Where a path the job names is, as one text: relative to the job's folder (a
    `/mnt/data/` prefix dropped), normalised, '/' separated."""
    text = text.replace('\\', '/')
    if text.startswith(_MNT_DATA + '/'):
        text = text[len(_MNT_DATA) + 1:]
    return posixpath.normpath(text)


def _written_name(text):
    """The artifact name of the file the job wrote at `text` (its name, `/mnt/data/<name>`
    or the path it asked for), or None."""
    writes = _WRITES
    if not writes or not text:
        return None
    place = _place(text)
    for name, entry in writes.items():
        requested = entry['requested']
        if _place(requested if requested is not None else name) == place:
            return name
    return None


def _read_name(text):
    """The artifact a read of `text` finds: the file the job wrote there, or one it wrote
    under that bare name anywhere ('out/fig.png', then 'fig.png'), as every write lands
    in one folder."""
    name = _written_name(text)
    if name is None and _WRITES and not os.path.isabs(text) and text in _WRITES:
        name = text
    return name


def _distinct_name(name, text):
    """The artifact name for a write to the folder path `text` whose file name is
    `name`: `name` itself unless the job already wrote another file of that name
    elsewhere ('north/trend.png', then 'south/trend.png'), in which case the folders
    join the name ('south-trend.png'), so no file the job wrote replaces another."""
    writes = _WRITES
    taken = _written_name(text)
    if taken is not None:
        return taken  # the same file again
    if not writes or name not in writes:
        return name
    parts = [p for p in _place(text).split('/') if p not in ('', '.', '..')]
    for k in range(2, len(parts) + 1):
        candidate = '-'.join(parts[-k:])
        if candidate not in writes and len(candidate.encode('utf-8', 'replace')) <= 255:
            return candidate
    stem, ext = os.path.splitext(name)
    for n in range(2, _WRITES_MAX + 2):
        candidate = f'{stem}-{n}{ext}'
        if candidate not in writes:
            return candidate
    return name  # past max_artifacts: _note_write refuses it


def _read_target(text, strict):
    """The real path a read of `text` (an exact str) opens while a job runs: a name the
    job wrote (bare or below /mnt/data) is its output, else an input by bare name or
    below /mnt/data (`_input_for`: no '..', no symlink out of SRC). Any other path is
    returned as it is when not `strict` (library code reading its own files; the audit
    hook judges it), and refused when `strict` unless it is inside SRC, out/ or tmp/.
    A name that is no input raises FileNotFoundError listing the inputs."""
    mnt = text.startswith(_MNT_DATA + '/')
    bare = text[len(_MNT_DATA) + 1:] if mnt else text
    if not os.path.isabs(bare):
        written = _read_name(bare)
        if written is not None:
            return os.path.join(_OUT_REAL, written)
        real = _input_for(bare)
        if real is not None:
            return real
        if mnt or strict or not os.path.exists(text):
            raise FileNotFoundError(f"no input named {bare!r}; the inputs are: {walkfiles()}")
        return text
    real = os.path.realpath(text)
    if strict and not any(_inside(real, r) for r in (_SRC_REAL, _OUT_REAL, _TMP_REAL)):
        raise PermissionError(f"reading {_truncate(repr(text), 120)} is not allowed; read "
                              f"inputs by name: {walkfiles()}")
    return text if not strict else real


def _writes(mode):
    return any(c in mode for c in 'wax+')


def _seed_from_input(text, real, mode):
    """A write that keeps what the file holds ('a', 'r+': `pd.ExcelWriter(mode='a')`
    adding a sheet to an input workbook, a log appended to an input) starts from the
    input of that name: the artifact gets the input's bytes, then the job's changes;
    the input stays as it was."""
    if ('a' in mode or ('r' in mode and '+' in mode)) and not os.path.exists(real):
        source = _input_for(text)
        if source is not None:
            with _REAL_OPEN(source, 'rb') as given, _REAL_OPEN(real, 'wb') as artifact:
                shutil.copyfileobj(given, artifact)


def _saved_figure(path):
    """The bytes of a figure this job saved to memory under `path` (`chart.png`,
    `/mnt/data/chart.png`, OUT, or the folder path it saved to: `output/chart.png`,
    kept as the artifact `chart.png`), for the job or a library reading it back (a
    picture of its own chart in its workbook); None for any other path. A PNG kept as
    pixels for the host to encode is encoded here."""
    if _FIGURES is None:
        return None
    name = _read_name(path)
    if name is None:
        mnt = path.startswith(_MNT_DATA + '/')
        name = path[len(_MNT_DATA) + 1:] if mnt else path
        if os.path.isabs(name):
            if os.path.dirname(os.path.realpath(name)) != _OUT_REAL:
                return None
            name = os.path.basename(name)
    saved = _FIGURES.get(name)
    if saved is None or type(saved) is bytes:
        return saved
    from PIL import Image, PngImagePlugin
    info = PngImagePlugin.PngInfo()
    for key, value in saved['text']:
        info.add_text(key, value)
    size = (saved['width'], saved['height'])
    picture = Image.frombuffer('RGBA', size, saved['rgba'], 'raw', 'RGBA', 0, 1)
    buffer = io.BytesIO()
    picture.save(buffer, format='png', dpi=(saved['dpi'], saved['dpi']), pnginfo=info)
    return buffer.getvalue()


def _job_open(file, mode='r', buffering=-1, encoding=None, errors=None, newline=None,
              closefd=True, opener=None):
    """`open` for jobs (and for numpy's `fromfile`/`tofile`, which look it up in the
    job's builtins): reads inputs and the job's own outputs, writes artifacts
    (`_write_target`).

    The path and the mode are judged as exact copies (`_plain_path`, `_exact_str`) and
    the file opened is the real path that was judged: a lying `str` subclass, a second
    answer of `__fspath__` or a mode whose `__contains__` hides a 'w' cannot differ
    between the check and the open. A descriptor (an integer, `__index__`) is no path,
    and so is a job's own `os.PathLike`. `opener` and `closefd=False` are refused: an
    opener returns a descriptor of its choosing.
    """
    path = _plain_text_path(file)
    if path is None:
        raise PermissionError("open: only a plain str path is allowed in this sandbox (no file "
                              "descriptors, no path-like objects of your own), such as "
                              "open('notes.txt') or open('stats.json', 'w')")
    mode = _exact_str(mode)
    if mode is None:
        raise TypeError("open: mode must be a plain str such as 'r' or 'wb'")
    if opener is not None or closefd is not True:
        raise PermissionError("open: opener and closefd are not allowed in this sandbox")
    if _writes(mode):
        real, name, requested = _write_target(path)
        if name is not None:
            _note_write(name, 'written', requested)
            _seed_from_input(path, real, mode)
    elif _WRITES is not None:
        saved = _saved_figure(path) if 'b' in mode else None
        if saved is not None:
            return io.BytesIO(saved)
        real = _read_target(path, strict=True)
    else:
        real = os.path.realpath(path)
        if not any(_inside(real, r) for r in (_SRC_REAL, _OUT_REAL, _TMP_REAL)):
            raise PermissionError(f"reading {path!r} is not allowed")
    return _REAL_OPEN(real, mode, buffering, encoding, errors, newline)


_job_open.__name__ = _job_open.__qualname__ = 'open'
_guarded_open = _job_open


def _library_open(file, mode='r', *args, **kwargs):
    """builtins.open and io.open while a job runs, for the library code it calls
    (pandas' writers and readers, np.save/np.load, scipy, zipfile under openpyxl):
    the same mapping as the job's `open` for paths a job names (bare names, /mnt/data,
    writes outside out/ and tmp/); everything else, and anything that is not an exact
    path, goes to the stock open untouched, where the audit hook judges it."""
    if _WRITES is None:
        return _REAL_OPEN(file, mode, *args, **kwargs)
    path = _plain_text_path(file)
    plain_mode = _exact_str(mode)
    if path is None or plain_mode is None or not path:
        return _REAL_OPEN(file, mode, *args, **kwargs)
    if _writes(plain_mode):
        real, name, requested = _write_target(path)
        if name is not None:
            _note_write(name, 'written', requested)
            _seed_from_input(path, real, plain_mode)
    else:
        saved = _saved_figure(path) if 'b' in plain_mode else None
        if saved is not None:
            return io.BytesIO(saved)
        real = _read_target(path, strict=False)
    return _REAL_OPEN(real, plain_mode, *args, **kwargs)


def _display_dataframe_to_user(name, dataframe):
    """`ace_tools.display_dataframe_to_user(name, dataframe)` as OpenAI's code
    interpreter offers it: the table comes back as the CSV artifact '<name>.csv' and its
    first rows are printed."""
    text = _exact_str(name)
    if text is None:
        raise TypeError("display_dataframe_to_user: name must be a str, such as 'Sales by month'")
    import pandas
    if not isinstance(dataframe, (pandas.DataFrame, pandas.Series)):
        raise TypeError("display_dataframe_to_user: dataframe must be a pandas DataFrame")
    stem = ''.join(c if c.isalnum() or c in ' -_.' else '_' for c in text).strip(' .')[:100]
    dataframe.to_csv(os.path.join(_OUT_REAL, f"{stem or 'table'}.csv"))
    print(f"{text}:\n{dataframe.head().to_string()}")


def _install_ace_tools():
    """At warm-up: the module `import ace_tools` finds (a view of it holding its one
    function: src/gate/policy.rs, MODULE_MEMBERS)."""
    module = types.ModuleType('ace_tools', 'Display helpers of a code interpreter, as pyward offers them.')
    module.display_dataframe_to_user = _display_dataframe_to_user
    _display_dataframe_to_user.__module__ = 'ace_tools'
    sys.modules['ace_tools'] = module
    _MEMBER_WRAPPERS[('ace_tools', 'display_dataframe_to_user')] = _display_dataframe_to_user


def _install_open():
    """At warm-up, before the state guard's snapshot: the library-facing open, and
    numpy's text reader/writer opener (np.loadtxt/genfromtxt/savetxt check a path's
    existence themselves before opening it)."""
    _library_open.__doc__ = _REAL_OPEN.__doc__
    builtins.open = _library_open
    io.open = _library_open
    pandas_common = sys.modules.get('pandas.io.common')
    if pandas_common is not None:
        # pandas' writers refuse a path whose folder does not exist before opening it
        # ('/mnt/data/top10.csv'): while a job runs, the open above decides.
        stock_check = pandas_common.check_parent_directory

        def check_parent_directory(path):
            if _WRITES is None:
                return stock_check(path)

        check_parent_directory.__doc__ = stock_check.__doc__
        check_parent_directory.__wrapped__ = stock_check
        # Every pandas module that imported it by name (to_html and to_string check
        # through pandas.io.formats.format's own reference).
        for module_name, module in list(sys.modules.items()):
            if (module_name.startswith('pandas.') and module is not None
                    and getattr(module, 'check_parent_directory', None) is stock_check):
                module.check_parent_directory = check_parent_directory
    try:
        from numpy.lib import _datasource
    except ImportError:
        return
    stock = _datasource.open

    def ds_open(path, mode='r', *args, **kwargs):
        text = _plain_text_path(path)
        plain_mode = _exact_str(mode)
        if _WRITES is not None and text and plain_mode is not None:
            if _writes(plain_mode):
                path, name, requested = _write_target(text)
                if name is not None:
                    _note_write(name, 'written', requested)
            else:
                path = _read_target(text, strict=False)
        return stock(path, mode, *args, **kwargs)

    ds_open.__doc__ = stock.__doc__
    ds_open.__wrapped__ = stock
    _datasource.open = ds_open
