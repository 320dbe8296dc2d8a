//! Tables as the checks read them: a CSV file, or one sheet of an `.xlsx` workbook, read
//! within bounds.
//!
//! What is read was written by a job (an output) or handed in by a caller (an input), so
//! every workbook is treated as hostile before any reader sees it:
//! - the file is at most [`MAX_TABLE_BYTES`];
//! - every part of the zip is inflated once here with a running count, and the workbook
//!   is refused past [`MAX_INFLATED_BYTES`] whatever sizes its directory declares (a zip
//!   bomb lies about them), or when it holds more than [`MAX_ZIP_ENTRIES`] parts;
//! - an XML part that declares a DTD is refused, as the worker's parser (defusedxml under
//!   openpyxl) refuses it;
//! - the shared-string count calamine reserves memory for is bounded first
//!   (`uniqueCount`), and cells are read one at a time through calamine's cell reader
//!   (never `worksheet_range`, which allocates the rectangle between the first and last
//!   cell), at most [`MAX_TABLE_CELLS`] of them, inside Excel's own sheet size;
//! - formula cells are found by this module's own scan of the sheet XML (calamine's
//!   formula reader sizes a table from a cell's shared-formula index);
//! - a panic inside the readers is caught and reported as a failed check: the host never
//!   fails because of what a job wrote.

use std::borrow::Cow;
use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};

use calamine::{DataRef, Reader, Xlsx};

use super::bounds::{truncate, MAX_TABLE_BYTES, MAX_TABLE_CELLS, NAMED};
use super::xlsx_parts::scan_parts;

/// Excel's own sheet size: rows and columns.
const MAX_ROWS: u32 = 1_048_576;
const MAX_COLS: u32 = 16_384;

/// One cell's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Empty,
    /// Text (every CSV field is text).
    Text(String),
    /// A number stored as a number (dates as their serial number).
    Number(f64),
    Bool(bool),
    /// A spreadsheet error value (`#DIV/0!`).
    Error(String),
}

impl Value {
    /// The value as a number: a number cell, or a text that reads as one (CSV).
    pub(crate) fn number(&self) -> Option<f64> {
        match self {
            Value::Number(x) => Some(*x),
            Value::Text(t) => t.trim().parse::<f64>().ok(),
            _ => None,
        }
    }

    /// Empty, or a text spelling a missing value, or a NaN number.
    pub(crate) fn is_missing(&self) -> bool {
        match self {
            Value::Empty => true,
            Value::Number(x) => x.is_nan(),
            Value::Text(t) => {
                let c = t.trim();
                c.is_empty()
                    || c.eq_ignore_ascii_case("nan")
                    || c.eq_ignore_ascii_case("na")
                    || c.eq_ignore_ascii_case("null")
            }
            Value::Bool(_) => false,
            Value::Error(_) => true,
        }
    }

    /// The value compared as a key or a copied-through value: numbers in one spelling
    /// (`101`, `101.0` and the number 101 are the same key across CSV and xlsx).
    pub(crate) fn canonical(&self) -> Cow<'_, str> {
        match self {
            Value::Number(x) => Cow::Owned(number_text(*x)),
            Value::Text(t) => {
                let t = t.trim();
                match t.parse::<f64>() {
                    Ok(x) if x.is_finite() && !t.is_empty() => Cow::Owned(number_text(x)),
                    _ => Cow::Borrowed(t),
                }
            }
            Value::Bool(b) => Cow::Owned(if *b { "True" } else { "False" }.to_string()),
            Value::Error(e) => Cow::Borrowed(e),
            Value::Empty => Cow::Borrowed(""),
        }
    }

    /// How the value is quoted in feedback.
    pub(crate) fn shown(&self) -> String {
        match self {
            Value::Text(t) => format!("{:?}", truncate(t, 60)),
            Value::Empty => "empty".into(),
            other => other.canonical().into_owned(),
        }
    }
}

pub(crate) fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// A table read from a file: its header and data rows, and where each cell was.
#[derive(Debug)]
pub(crate) struct Table {
    /// How cells are named: `result.csv` or `result.xlsx!Sheet1`.
    pub(crate) label: String,
    /// Column names (an empty header is `Unnamed: i`, as pandas names it).
    pub(crate) headers: Vec<String>,
    /// Data rows, each as wide as `headers`.
    pub(crate) rows: Vec<Vec<Value>>,
    /// The sheet row (0-based) of each data row.
    lines: Vec<u32>,
    /// The sheet row (0-based) of the header.
    header_line: u32,
    /// The sheet column (0-based) of the first column.
    first_col: u32,
    /// The first rows of the sheet (for saying where a header really is).
    head: Vec<(u32, Vec<String>)>,
    /// Spreadsheet-injection findings (formula cells, text cells starting with `=`,
    /// `+`, `-`, `@`), named, at most [`NAMED`]; and how many there were.
    pub(crate) injections: Vec<String>,
    pub(crate) injection_count: usize,
    /// What a spreadsheet program runs or fetches outside the cells (a workbook's
    /// macros, external links, formulas that call out: see `active_content`), named, at
    /// most [`NAMED`]; and how many there were. Read with the injections.
    pub(crate) active: Vec<String>,
    pub(crate) active_count: usize,
}

/// Which table of a file, and how to read it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Select<'a> {
    /// The sheet (xlsx); the first sheet when `None`.
    pub(crate) sheet: Option<&'a str>,
    /// The header's row, 1-based; the first non-empty row when `None`.
    pub(crate) header_row: Option<u32>,
    /// Whether to look for spreadsheet-injection cells.
    pub(crate) injections: bool,
}

/// Whether `name` is read as a workbook.
pub(crate) fn is_workbook(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".xlsx") || lower.ends_with(".xlsm")
}

impl Table {
    /// Reads `bytes` (the file `name`) as a table: a workbook by its suffix, else CSV.
    pub(crate) fn read(name: &str, bytes: &[u8], select: Select<'_>) -> Result<Table, String> {
        if bytes.len() as u64 > MAX_TABLE_BYTES {
            return Err(format!(
                "{name} is {} bytes, more than the {} a table check reads",
                bytes.len(),
                MAX_TABLE_BYTES
            ));
        }
        let read = || {
            if is_workbook(name) {
                read_workbook(name, bytes, select)
            } else {
                read_csv(name, bytes, select)
            }
        };
        match catch_unwind(AssertUnwindSafe(read)) {
            Ok(result) => result,
            Err(_) => Err(format!("{name} could not be read: the reader failed on it")),
        }
    }

    /// The name of a data cell: `result.xlsx!Sheet1!C7`.
    pub(crate) fn cell(&self, row: usize, col: usize) -> String {
        let line = self.lines.get(row).copied().unwrap_or(0);
        format!("{}!{}", self.label, a1(line, self.first_col + col as u32))
    }

    /// The cells of a column from the first data row to the last: `C2:C11`.
    pub(crate) fn span(&self, col: usize) -> String {
        let c = self.first_col + col as u32;
        match (self.lines.first(), self.lines.last()) {
            (Some(&a), Some(&b)) => format!("{}!{}:{}", self.label, a1(a, c), a1(b, c)),
            _ => format!("{} (no rows)", self.label),
        }
    }

    /// When the header read is not the table's: the row (of the first twenty) that holds
    /// more of the columns `named` than the header read does, said as a finding (title
    /// rows written above a table are read as its header).
    pub(crate) fn misread_header(&self, named: &[&str]) -> Option<String> {
        let count = |cells: &[String]| {
            named
                .iter()
                .filter(|n| cells.iter().any(|c| c.trim() == n.trim()))
                .count()
        };
        let read = count(&self.headers);
        let (line, cells) = self
            .head
            .iter()
            .filter(|(line, _)| *line != self.header_line)
            .max_by_key(|(line, cells)| (count(cells), std::cmp::Reverse(*line)))?;
        if count(cells) <= read {
            return None;
        }
        Some(format!(
            "{}: the table's header is row {}, not row {}: the rows above it were read as its header (columns read: {}); write the table with its header in the first row (no title rows above it), or the checks must say header_row = {}",
            self.label,
            line + 1,
            self.header_line + 1,
            self.headers_listed(),
            line + 1
        ))
    }

    /// The header as feedback quotes it: `"dept", "cost"`.
    fn headers_listed(&self) -> String {
        self.headers
            .iter()
            .map(|h| format!("{h:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The index of column `name`, or what is wrong: the columns that exist, and where
    /// the header seems to be when it is not the row read.
    pub(crate) fn column(&self, name: &str) -> Result<usize, String> {
        if let Some(i) = self.headers.iter().position(|h| h == name) {
            return Ok(i);
        }
        if let Some(i) = self.headers.iter().position(|h| h.trim() == name.trim()) {
            return Ok(i);
        }
        let mut message = format!(
            "{} has no column {name:?} (columns: {})",
            self.label,
            self.headers_listed()
        );
        if let Some((line, _)) = self
            .head
            .iter()
            .find(|(line, cells)| *line != self.header_line && cells.iter().any(|c| c == name))
        {
            message.push_str(&format!(
                "; {name:?} is in row {}: the header is row {}, not row {} (header_row = {})",
                line + 1,
                line + 1,
                self.header_line + 1,
                line + 1
            ));
        }
        Err(message)
    }
}

/// `C7` for 0-based row 6, column 2.
pub(crate) fn a1(row: u32, col: u32) -> String {
    let mut letters = Vec::new();
    let mut c = col + 1;
    while c > 0 {
        let r = (c - 1) % 26;
        letters.push(b'A' + r as u8);
        c = (c - 1) / 26;
    }
    letters.reverse();
    format!("{}{}", String::from_utf8_lossy(&letters), row + 1)
}

/// Whether a text would be run as a formula by a spreadsheet program that opens it.
pub(crate) fn starts_like_formula(text: &str) -> bool {
    matches!(
        text.chars().next(),
        Some('=' | '+' | '-' | '@' | '\t' | '\r')
    )
}

/// Sparse rows: (sheet row, cells as (column, value)), in sheet order.
type Grid = Vec<(u32, Vec<(u32, Value)>)>;

fn read_csv(name: &str, bytes: &[u8], select: Select<'_>) -> Result<Table, String> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut grid: Grid = Vec::new();
    let mut cells = 0u64;
    let mut injections = Injections::default();
    for (line, record) in reader.records().enumerate() {
        let record = record.map_err(|e| format!("{name} is not valid CSV: {e}"))?;
        cells += record.len() as u64;
        if cells > MAX_TABLE_CELLS {
            return Err(too_many_cells(name));
        }
        let line = u32::try_from(line).map_err(|_| too_many_cells(name))?;
        let row = record
            .iter()
            .enumerate()
            .map(|(c, field)| {
                if select.injections
                    && starts_like_formula(field)
                    && field.trim().parse::<f64>().is_err()
                {
                    injections.text(&format!("{name}!{}", a1(line, c as u32)), field);
                }
                (c as u32, Value::Text(field.to_string()))
            })
            .collect();
        grid.push((line, row));
    }
    let mut table = from_grid(name.to_string(), grid, select.header_row)?;
    (table.injections, table.injection_count) = (injections.named, injections.count);
    Ok(table)
}

/// The header row and the data rows of a sparse grid.
fn from_grid(label: String, grid: Grid, header_row: Option<u32>) -> Result<Table, String> {
    let head: Vec<(u32, Vec<String>)> = grid
        .iter()
        .take(20)
        .map(|(line, cells)| {
            let texts = cells
                .iter()
                .map(|(_, v)| v.canonical().into_owned())
                .collect();
            (*line, texts)
        })
        .collect();
    let non_empty = |cells: &Vec<(u32, Value)>| cells.iter().any(|(_, v)| *v != Value::Empty);
    let header_index = match header_row {
        Some(0) => return Err("header_row counts from 1".into()),
        Some(r) => grid.iter().position(|(line, _)| *line == r - 1),
        None => grid.iter().position(|(_, cells)| non_empty(cells)),
    };
    let Some(header_index) = header_index else {
        return Ok(Table {
            label,
            headers: Vec::new(),
            rows: Vec::new(),
            lines: Vec::new(),
            header_line: header_row.map_or(0, |r| r - 1),
            first_col: 0,
            head,
            injections: Vec::new(),
            injection_count: 0,
            active: Vec::new(),
            active_count: 0,
        });
    };
    let (header_line, header_cells) = grid[header_index].clone();
    let header_line = &header_line;
    let first_col = header_cells
        .iter()
        .find(|(_, v)| *v != Value::Empty)
        .map_or(0, |(c, _)| *c)
        .min(
            grid[header_index..]
                .iter()
                .flat_map(|(_, cells)| cells.iter().find(|(_, v)| *v != Value::Empty))
                .map(|(c, _)| *c)
                .min()
                .unwrap_or(0),
        );
    let last_col = grid[header_index..]
        .iter()
        .flat_map(|(_, cells)| cells.iter().rev().find(|(_, v)| *v != Value::Empty))
        .map(|(c, _)| *c)
        .max()
        .unwrap_or(first_col);
    let width = (last_col - first_col + 1) as usize;
    let data_lines = grid
        .iter()
        .rev()
        .find(|(_, cells)| non_empty(cells))
        .map_or(0, |(line, _)| line.saturating_sub(*header_line)) as u64;
    if data_lines.saturating_mul(width as u64) > MAX_TABLE_CELLS {
        return Err(format!(
            "{label} spans {data_lines} rows by {width} columns, more than the {MAX_TABLE_CELLS} cells a table check reads"
        ));
    }
    let mut headers = vec![String::new(); width];
    for (c, v) in &header_cells {
        if let Some(h) = c
            .checked_sub(first_col)
            .and_then(|i| headers.get_mut(i as usize))
        {
            *h = v.canonical().trim().to_string();
        }
    }
    for (i, h) in headers.iter_mut().enumerate() {
        if h.is_empty() {
            *h = format!("Unnamed: {i}");
        }
    }
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    let mut next = header_line + 1;
    let last = header_line + data_lines as u32;
    for (line, cells) in grid.into_iter().skip(header_index + 1) {
        if line > last {
            break;
        }
        while next < line {
            rows.push(vec![Value::Empty; width]);
            lines.push(next);
            next += 1;
        }
        let mut row = vec![Value::Empty; width];
        for (c, v) in cells {
            if let Some(slot) = c
                .checked_sub(first_col)
                .and_then(|i| row.get_mut(i as usize))
            {
                *slot = v;
            }
        }
        rows.push(row);
        lines.push(line);
        next = line + 1;
    }
    Ok(Table {
        label,
        headers,
        rows,
        lines,
        header_line: *header_line,
        first_col,
        head,
        injections: Vec::new(),
        injection_count: 0,
        active: Vec::new(),
        active_count: 0,
    })
}

fn too_many_cells(name: &str) -> String {
    format!("{name} has more than the {MAX_TABLE_CELLS} cells a table check reads")
}

/// Spreadsheet-injection findings, the first few named.
#[derive(Default)]
struct Injections {
    named: Vec<String>,
    count: usize,
}

impl Injections {
    fn text(&mut self, cell: &str, text: &str) {
        self.note(format!(
            "{cell} is the text {:?}, which a spreadsheet program runs as a formula",
            truncate(text, 40)
        ));
    }

    fn formula(&mut self, cell: &str, formula: &str) {
        self.note(format!(
            "{cell} holds the formula ={}",
            truncate(formula.trim_start_matches('='), 40)
        ));
    }

    fn note(&mut self, finding: String) {
        self.count += 1;
        if self.named.len() < NAMED {
            self.named.push(finding);
        }
    }
}

fn read_workbook(name: &str, bytes: &[u8], select: Select<'_>) -> Result<Table, String> {
    let parts = scan_parts(name, bytes, select.injections)?;
    let names: Vec<&str> = parts.sheets.iter().map(|(n, _)| n.as_str()).collect();
    let sheet = match select.sheet {
        Some(s) => names
            .iter()
            .find(|n| **n == s)
            .copied()
            .ok_or_else(|| format!("{name} has no sheet {s:?} (sheets: {names:?})"))?,
        None => names
            .first()
            .copied()
            .ok_or_else(|| format!("{name} has no sheet"))?,
    };
    let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(|e| {
        format!(
            "{name} is not a readable workbook: {}",
            truncate(&e.to_string(), 200)
        )
    })?;
    let mut injections = Injections::default();
    let mut cells = 0u64;
    let mut grid: Grid = Vec::new();
    for (sheet_name, part) in &parts.sheets {
        let wanted = sheet_name == sheet;
        if !wanted && !select.injections {
            continue;
        }
        let label = format!("{name}!{sheet_name}");
        if let Some(list) = parts.formulas.get(part) {
            for (cell, formula) in list {
                injections.formula(&format!("{label}!{cell}"), formula);
            }
        }
        let mut reader = match workbook.worksheet_cells_reader(sheet_name) {
            Ok(r) => r,
            // A chart sheet or a dialog sheet has no cells.
            Err(calamine::XlsxError::NotAWorksheet(_)) if !wanted => continue,
            Err(e) => {
                return Err(format!(
                    "{label} cannot be read: {}",
                    truncate(&e.to_string(), 200)
                ))
            }
        };
        loop {
            let cell = reader.next_cell().map_err(|e| {
                format!("{label} cannot be read: {}", truncate(&e.to_string(), 200))
            })?;
            let Some(cell) = cell else { break };
            cells += 1;
            if cells > MAX_TABLE_CELLS {
                return Err(too_many_cells(name));
            }
            let (row, col) = cell.get_position();
            if row >= MAX_ROWS || col >= MAX_COLS {
                return Err(format!(
                    "{label} has a cell outside a sheet's {MAX_ROWS} rows and {MAX_COLS} columns"
                ));
            }
            let value = match cell.get_value() {
                DataRef::Empty => Value::Empty,
                DataRef::String(s) => Value::Text(s.clone()),
                DataRef::SharedString(s) => Value::Text((*s).to_string()),
                DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => Value::Text(s.clone()),
                DataRef::Float(x) => Value::Number(*x),
                DataRef::Int(x) => Value::Number(*x as f64),
                DataRef::DateTime(d) => Value::Number(d.as_f64()),
                DataRef::Bool(b) => Value::Bool(*b),
                DataRef::Error(e) => Value::Error(format!("{e}")),
            };
            if select.injections {
                if let Value::Text(t) = &value {
                    if starts_like_formula(t) {
                        injections.text(&format!("{label}!{}", a1(row, col)), t);
                    }
                }
            }
            if !wanted {
                continue;
            }
            match grid.last_mut() {
                Some((line, cells)) if *line == row => cells.push((col, value)),
                _ => grid.push((row, vec![(col, value)])),
            }
        }
    }
    injections.count += parts
        .formula_count
        .saturating_sub(parts.formulas.values().map(Vec::len).sum::<usize>());
    // Cells arrive in sheet order in every workbook a program writes; a hand-made one
    // may list them otherwise.
    grid.sort_by_key(|(line, _)| *line);
    for (_, cells) in &mut grid {
        cells.sort_by_key(|(c, _)| *c);
    }
    let mut table = from_grid(format!("{name}!{sheet}"), grid, select.header_row)?;
    (table.injections, table.injection_count) = (injections.named, injections.count);
    (table.active, table.active_count) = (parts.active, parts.active_count);
    Ok(table)
}

#[cfg(test)]
pub(crate) mod tests;
