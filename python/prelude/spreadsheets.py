"""Spreadsheets: openpyxl's `load_workbook` as a job gets it, workbooks saved without the
clock in their bytes, and the warm-up that writes and reads a workbook in the template
so that a job's first spreadsheet is warm.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import io
import os
import sys


# --- spreadsheets -----------------------------------------------------------------------
#
# pandas reads and writes .xlsx with openpyxl. With defusedxml installed (pinned beside it)
# openpyxl parses every XML part of a workbook through defusedxml's `fromstring` and
# `iterparse`, which refuse entity declarations (billion laughs) and external entities;
# warm-up proves that this is the parser openpyxl holds and fails otherwise. A job's
# `openpyxl.load_workbook` reads only what the job's `open` reads (its inputs, its own
# outputs, tmp/), never keeps a workbook's macros (`keep_vba`) or external links.

def _load_workbook(filename, read_only=False, keep_vba=False, data_only=False,
                   keep_links=True, rich_text=False):
    """`openpyxl.load_workbook` for jobs: a path is opened by the job's own `open`, so
    it is judged as any read of the job's is (its inputs, its own outputs, tmp/); a file
    object must be an exact BytesIO or a file the job opened. Macros (`keep_vba`) and
    external links are never kept."""
    import openpyxl
    text = _plain_path(filename)
    if type(text) is bytes:
        text = os.fsdecode(text)
    if type(text) is str:
        source = _guarded_open(text, 'rb')
    elif type(filename) in (io.BytesIO, io.BufferedReader):
        source = filename
    else:
        raise TypeError("load_workbook: pass a file name such as 'source.xlsx' (or io.BytesIO)")
    workbook = openpyxl.load_workbook(source, read_only=bool(read_only), keep_vba=False,
                                      data_only=bool(data_only), keep_links=False,
                                      rich_text=bool(rich_text))
    if source is not filename and not read_only:
        source.close()
    return workbook


_MEMBER_WRAPPERS[('openpyxl', 'load_workbook')] = _load_workbook


# A workbook's bytes depend on the clock twice: openpyxl stamps its document properties
# (created at `Workbook()`, modified at save) and zipfile stamps every entry. pyward
# writes workbooks as it renders figures, reproducibly: the same code on the same inputs
# writes the same bytes (a replay compares them), created and modified 1980-01-01, the
# zip format's first day.
_WORKBOOK_EPOCH = (1980, 1, 1, 0, 0, 0)


def _reproducible_save_workbook(workbook, filename):
    """openpyxl's `save_workbook` (openpyxl/writer/excel.py) with the clock left out."""
    import datetime
    import zipfile
    from openpyxl.writer.excel import ExcelWriter

    epoch = datetime.datetime(*_WORKBOOK_EPOCH)
    workbook.properties.created = epoch
    workbook.properties.modified = epoch

    class _Archive(zipfile.ZipFile):
        def writestr(self, zinfo_or_arcname, data, compress_type=None, compresslevel=None):
            if type(zinfo_or_arcname) is str:
                zinfo_or_arcname = zipfile.ZipInfo(zinfo_or_arcname, date_time=_WORKBOOK_EPOCH)
                zinfo_or_arcname.compress_type = zipfile.ZIP_DEFLATED
                zinfo_or_arcname.external_attr = 0o600 << 16
            return super().writestr(zinfo_or_arcname, data, compress_type, compresslevel)

        def write(self, filename, arcname=None, compress_type=None, compresslevel=None):
            # Write-only workbooks stage sheets in temporary files: their mtime is the
            # clock again.
            with open(filename, 'rb') as staged:
                data = staged.read()
            return self.writestr(arcname or filename, data, compress_type, compresslevel)

    archive = _Archive(filename, 'w', zipfile.ZIP_DEFLATED, allowZip64=True)
    ExcelWriter(workbook, archive).save()
    return True


# openpyxl serialises each cell through ElementTree's incremental writer (et_xmlfile):
# about 8 µs a cell, 250 ms of a 40,000-cell sheet's save. Rows of plain cells (numbers,
# booleans, text, each styled or not) are written here as one string each, the very bytes
# openpyxl writes for them (`_sheet_row_xml`, tested against stock openpyxl in
# tests/it/tables.rs); a row with anything else (a formula, a date, rich text, a comment,
# a link, a height) goes through openpyxl's own `write_row`.
_PLAIN_CELL_TYPES = {'n': (int, float), 'b': (bool,), 's': (str,)}
_CELL_WRITING = None  # (Cell, safe_string, get_column_letter, _escape_cdata), at install


def _sheet_row_xml(row, row_index, row_dimensions):
    """One `<row>` of openpyxl's sheet XML as its etree writer (`etree_write_cell`)
    writes it, or None when a cell is not plain."""
    Cell, safe_string, get_column_letter, _escape_cdata = _CELL_WRITING
    if row_index in row_dimensions:
        return None
    parts = [f'<row r="{row_index}">']
    for cell in row:
        if type(cell) is not Cell or cell._comment is not None or cell._hyperlink is not None:
            return None
        value, styled, kind = cell._value, cell.has_style, cell.data_type
        if value is None and not styled:
            continue
        plain = _PLAIN_CELL_TYPES.get(kind)
        if plain is None or (value is not None and type(value) not in plain):
            return None
        head = f'<c r="{get_column_letter(cell.column)}{row_index}"'
        if styled:
            head += f' s="{cell.style_id}"'
        head += ' t="inlineStr"' if kind == 's' else f' t="{kind}"'
        if value is None or value == '':
            parts.append(head + ' />')
        elif kind == 's':
            stripped = value.strip()
            space = ' xml:space="preserve"' if stripped and stripped != value else ''
            parts.append(f'{head}><is><t{space}>{_escape_cdata(value)}</t></is></c>')
        else:
            text = safe_string(value)
            if not text:  # NaN and infinities: openpyxl's own path
                return None
            parts.append(f'{head}><v>{text}</v></c>')
    parts.append('</row>')
    return ''.join(parts)


def _write_sheet_rows(self):
    """`WorksheetWriter.write_rows` (openpyxl/worksheet/_writer.py), plain rows written
    by `_sheet_row_xml`."""
    from et_xmlfile.xmlfile import _IncrementalFileWriter
    xf = self.xf.send(True)
    with xf.element("sheetData"):
        # Raw text goes to the writer's own stream, where its elements go; any other
        # writer (lxml's) gets every row through openpyxl.
        write = xf._file if type(xf) is _IncrementalFileWriter else None
        dimensions = self.ws.row_dimensions
        for row_index, row in self.rows():
            text = None if write is None else _sheet_row_xml(row, row_index, dimensions)
            if text is None:
                self.write_row(xf, row, row_index)
            else:
                write(text)
    self.xf.send(None)


def _install_workbook_saving():
    """At warm-up: every openpyxl save (pandas' `to_excel`, `ExcelWriter`, `wb.save`)
    goes through `_reproducible_save_workbook`, and writes plain rows through
    `_write_sheet_rows`."""
    global _CELL_WRITING
    import openpyxl.workbook.workbook as workbook_module
    import openpyxl.writer.excel as excel
    from openpyxl.cell.cell import Cell
    from openpyxl.compat import safe_string
    from openpyxl.utils.cell import get_column_letter
    from openpyxl.worksheet._writer import WorksheetWriter
    from xml.etree.ElementTree import _escape_cdata

    _CELL_WRITING = (Cell, safe_string, get_column_letter, _escape_cdata)
    excel.save_workbook = _reproducible_save_workbook
    workbook_module.save_workbook = _reproducible_save_workbook
    WorksheetWriter.write_rows = _write_sheet_rows


# XlsxWriter, pandas' other writer, as jobs get it: every workbook is kept in memory
# (its default stages each sheet in a temporary file, in a folder a job may name with
# `tmpdir` or `set_tempdir`), saved with the same 1980 creation date as openpyxl's (its
# default is the clock), and it writes no macros (`add_vba_project` would read a
# binary and make the output a macro workbook). Its images and themes are read through
# the library-facing `open`, as every library read is.

def _refuse_macros(*args, **kwargs):
    raise PermissionError("XlsxWriter macros are not available in this sandbox: "
                          "write data and formats only")


def _refuse_tempdir(*args, **kwargs):
    raise PermissionError("Workbook.set_tempdir is not available in this sandbox: "
                          "workbooks are kept in memory")


def _install_xlsxwriter():
    """In a pool's template at warm-up (before the state guard's snapshot), or when a
    job first loads XlsxWriter (`_install_on_load`)."""
    import datetime
    import xlsxwriter.core
    from xlsxwriter.workbook import Workbook

    stock_init = Workbook.__init__

    def __init__(self, filename=None, options=None):
        if options is not None and type(options) is not dict:
            raise TypeError("Workbook options must be a dict")
        options = dict(options or {})
        options.pop('tmpdir', None)
        options['in_memory'] = True
        stock_init(self, filename, options)

    __init__.__doc__ = stock_init.__doc__
    __init__.__wrapped__ = stock_init
    Workbook.__init__ = __init__
    for name in ('add_vba_project', 'add_signed_vba_project', 'set_vba_name'):
        setattr(Workbook, name, _refuse_macros)
    Workbook.set_tempdir = _refuse_tempdir

    epoch = datetime.datetime(*_WORKBOOK_EPOCH, tzinfo=datetime.timezone.utc)
    stock_properties = xlsxwriter.core.Core._set_properties

    def _set_properties(self, properties):
        if not isinstance(properties.get('created'), datetime.datetime):
            properties = {**properties, 'created': epoch}
        stock_properties(self, properties)

    xlsxwriter.core.Core._set_properties = _set_properties


class _InstallAfterLoad:
    """A meta path finder for a worker that imports what its job uses when the job uses
    it: the first load of `top` (by the job, or by pandas for `to_excel`) runs `install`
    once the package has executed, before anyone gets it. The module is found as the
    default path finder finds it."""

    def __init__(self, top, install):
        self.top, self.install = top, install

    def find_spec(self, name, path=None, target=None):
        if name != self.top:
            return None
        import importlib.machinery
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _LoadThenInstall(spec.loader, self.install)
        return spec

    def invalidate_caches(self):
        pass


class _LoadThenInstall:
    """A module loader that runs `install` after the stock loader executed the module."""

    def __init__(self, loader, install):
        self._loader, self._install = loader, install

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._install()

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _install_on_load(top, install):
    """A worker whose template does not import `top` (one-shot, or without pandas):
    `install` runs when the package is first loaded."""
    sys.meta_path.insert(0, _InstallAfterLoad(top, install))


# pandas reads .xlsx with calamine, a Rust reader (python-calamine, pinned; the reader
# pandas announces as its next default), about ten times faster than openpyxl on a
# 5,000-row sheet. calamine's XML parser neither expands entities nor fetches external
# ones, but it does not refuse them either: pyward reads the workbook's bytes once and
# screens them before calamine sees them (those same bytes, so nothing can change in
# between): a DTD in any part is refused as openpyxl under defusedxml refuses it,
# the parts may inflate to a bounded size (a zip bomb ends here, named, not in the
# reader's allocator), and a sheet of more cells than the host's table checks read is
# refused before it becomes Python objects. `engine='openpyxl'` still reads through
# openpyxl and defusedxml.
_WORKBOOK_INFLATE_BOUND = 256 << 20
# As MAX_TABLE_CELLS in src/validate/bounds.rs: what the host's checks read of a sheet.
_SHEET_CELL_BOUND = 2_000_000


# Parts that are not XML (macros, images): inflated within the bound, not searched.
_BINARY_PARTS = ('.bin', '.png', '.jpeg', '.jpg', '.gif', '.bmp', '.tif', '.tiff',
                 '.emf', '.wmf')


def _screen_workbook(data):
    """Raises unless the workbook bytes `data` are fit for calamine: every part inflated
    within `_WORKBOOK_INFLATE_BOUND` in all, and none but the binary ones declaring a DTD
    (whatever its name: a sheet part's name is the workbook's choice). A file that is
    not a zip archive is left to the reader (which says so)."""
    import zipfile
    from defusedxml import DTDForbidden, EntitiesForbidden

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return
    budget = _WORKBOOK_INFLATE_BOUND
    with archive:
        for info in archive.infolist():
            searched = not info.filename.lower().endswith(_BINARY_PARTS)
            with archive.open(info) as part:
                tail = b''
                while True:
                    chunk = part.read(1 << 20)
                    if not chunk:
                        break
                    budget -= len(chunk)
                    if budget < 0:
                        raise MemoryError(
                            f'the workbook inflates past {_WORKBOOK_INFLATE_BOUND >> 20} MiB '
                            f'(at {info.filename}): a zip bomb, or a workbook larger than '
                            'a job reads')
                    window = tail + chunk
                    if not searched:
                        continue
                    if b'<!ENTITY' in window:
                        raise EntitiesForbidden(info.filename, None, None, None, None, None)
                    if b'<!DOCTYPE' in window:
                        raise DTDForbidden(info.filename, None, None)
                    tail = chunk[-16:]


class _ScreenedWorkbook:
    """What pandas' calamine reader uses of a `CalamineWorkbook`, and nothing else: the
    job reaches the reader's `book` (`pd.ExcelFile(...).book`), and the workbook class's
    `from_path` would open a path in Rust, past the job's `open`."""

    __slots__ = ('_book',)

    def __init__(self, book):
        self._book = book

    @property
    def sheets_metadata(self):
        return self._book.sheets_metadata

    @property
    def sheet_names(self):
        return self._book.sheet_names

    def get_sheet_by_name(self, name):
        return self._book.get_sheet_by_name(name)

    def get_sheet_by_index(self, index):
        return self._book.get_sheet_by_index(index)

    def close(self):
        self._book.close()


def _install_workbook_reader():
    """At warm-up: pandas' `calamine` engine becomes the screening reader below, and the
    default reader of .xlsx and .xlsm."""
    import pandas
    from pandas.io.excel import _base
    from pandas.io.excel._calamine import CalamineReader

    class ScreenedCalamineReader(CalamineReader):
        """pandas' calamine reader, given bytes that `_screen_workbook` passed."""

        @property
        def _workbook_class(self):
            return _ScreenedWorkbook

        def load_workbook(self, filepath_or_buffer, engine_kwargs):
            from python_calamine import load_workbook
            data = filepath_or_buffer.read()
            if type(data) is not bytes:
                raise TypeError('read_excel: the file must be opened in binary mode')
            _screen_workbook(data)
            return _ScreenedWorkbook(load_workbook(io.BytesIO(data), **engine_kwargs))

        def get_sheet_data(self, sheet, file_rows_needed=None):
            cells = sheet.height * sheet.width
            if cells > _SHEET_CELL_BOUND:
                raise MemoryError(
                    f'sheet {sheet.name!r} has {sheet.height:,} rows and {sheet.width} '
                    f'columns: {cells:,} cells, more than the {_SHEET_CELL_BOUND:,} a job '
                    'reads from one sheet')
            return super().get_sheet_data(sheet, file_rows_needed)

    ScreenedCalamineReader.__module__ = CalamineReader.__module__
    ScreenedCalamineReader.__qualname__ = ScreenedCalamineReader.__name__
    engines = dict(_base.ExcelFile._engines)
    engines['calamine'] = ScreenedCalamineReader
    _base.ExcelFile._engines = engines
    pandas.set_option('io.excel.xlsx.reader', 'calamine')
    pandas.set_option('io.excel.xlsm.reader', 'calamine')


def _warm_spreadsheets():
    """At warm-up, in the template: openpyxl imported, its XML parser checked, and one
    workbook written (by openpyxl and by XlsxWriter) and read in memory the way jobs do
    (several sheets, styles, `sheet_name=None`), so that neither the imports nor the first-use caches (mimetypes,
    zipfile's codecs, pandas' Excel formatters) are paid by a job or added by one."""
    import openpyxl
    import openpyxl.xml.functions as xml_functions
    import defusedxml.ElementTree as defused
    if not (openpyxl.DEFUSEDXML and xml_functions.iterparse is defused.iterparse
            and (openpyxl.LXML or xml_functions.fromstring is defused.fromstring)):
        raise RuntimeError("openpyxl does not parse workbook XML through defusedxml: "
                           "install python/requirements.txt (defusedxml) and leave "
                           "OPENPYXL_DEFUSEDXML unset")
    _install_workbook_saving()
    _install_workbook_reader()
    _install_xlsxwriter()
    import pandas
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter
    frame = pandas.DataFrame({'部门': ['研发', 'Sales'], 'amount': [1.5, -2.25]})
    buffer = io.BytesIO()
    with pandas.ExcelWriter(buffer, engine='openpyxl') as writer:
        frame.to_excel(writer, sheet_name='one', index=False)
        frame.to_excel(writer, sheet_name='two')
        sheet = writer.sheets['one']
        for cell in sheet[1]:
            cell.font = Font(bold=True)
            cell.alignment = Alignment(horizontal='center')
            cell.fill = PatternFill('solid', start_color='DDDDDD')
        sheet.column_dimensions[get_column_letter(2)].width = 12
        sheet['B2'].number_format = '#,##0.00'
    with pandas.ExcelWriter(io.BytesIO(), engine='xlsxwriter') as writer:
        frame.to_excel(writer, sheet_name='one', index=False)
        money = writer.book.add_format({'num_format': '#,##0.00', 'bold': True})
        writer.sheets['one'].set_column(0, 1, 12, money)
    buffer.seek(0)
    pandas.read_excel(buffer, sheet_name=None)
    buffer.seek(0)
    pandas.read_excel(buffer, sheet_name='two', index_col=0)
    buffer.seek(0)
    pandas.read_excel(buffer, engine='openpyxl')
    buffer.seek(0)
    openpyxl.load_workbook(buffer).active['A1'].value
