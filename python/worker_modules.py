"""Loads the worker's Python modules outside a worker, as the worker does: for the
scripts under tests/data and benches that run the prelude and its modules with the
project's interpreter. Not compiled into the worker.

Which files make up which module, and in what order, is written once, in the table of
src/worker/modules.rs; this reads that table. A module of several files is one
namespace: its files run in order into the same module, under the names the worker
gives them (`pyward_prelude/pathlib_view.py`).
"""

import os
import re
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, 'src', 'worker', 'modules.rs')


def files(name):
    """The files of the worker module `name` (`_pyward_prelude`), below python/, in the
    order they run."""
    with open(TABLE, encoding='utf-8') as table:
        text = table.read()
    entry = re.search(r'name: c"' + re.escape(name) + r'",.*?files: files!\[(.*?)\]', text, re.S)
    if entry is None:
        raise LookupError(f'{name} is not in the table of {TABLE}')
    return re.findall(r'"([^"]+)"', entry.group(1))


def load(name):
    """The worker module `name` (`_pyward_prelude`), loaded from python/ and put in
    sys.modules, as the worker loads it. Its docstring is its first file's."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    doc = None
    for i, file in enumerate(files(name)):
        with open(os.path.join(ROOT, 'python', file), encoding='utf-8') as f:
            source = f.read()
        if i == 0:
            module.__file__ = 'pyward_' + file
        exec(compile(source, 'pyward_' + file, 'exec', dont_inherit=True), module.__dict__)
        if i == 0:
            doc = module.__doc__
    module.__doc__ = doc
    return module
