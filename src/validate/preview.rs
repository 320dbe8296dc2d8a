//! What a table artifact holds, for the report: its shape, each column's name and kind,
//! and its first rows, bounded, so that a model (and the page) can check a result
//! without opening the file. Read in Rust with the same reader and bounds as the table
//! checks; a file that does not read as a table has no preview.

use serde::{Deserialize, Serialize};

use super::bounds::truncate;
use super::sheet::{is_workbook, Select, Table, Value};
use super::xlsx_parts::sheet_names;

/// Rows of a table shown in its preview.
pub const PREVIEW_ROWS: usize = 5;
/// Columns of a table shown in its preview (the shape counts them all).
pub const PREVIEW_COLUMNS: usize = 30;
/// Characters of one cell shown in a preview (longer text ends in `…`).
pub const PREVIEW_CELL_CHARS: usize = 40;

/// The first sheet (workbooks) or the file (CSV) of a table artifact, previewed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct TablePreview {
    /// The sheet previewed (workbooks: the first sheet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// Every sheet of a workbook, in order (empty for CSV).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sheets: Vec<String>,
    /// Data rows (the header not counted).
    pub rows: u64,
    /// Every column's name and kind, the first [`PREVIEW_COLUMNS`] of them.
    pub columns: Vec<ColumnPreview>,
    /// How many columns the table has (more than `columns` lists when it is wide).
    pub column_count: u64,
    /// The first [`PREVIEW_ROWS`] data rows, cell by cell as text (the file's data,
    /// quoted by JSON, never markup); as wide as `columns`.
    pub head: Vec<Vec<String>>,
}

/// One column: its header and the kind of its values.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct ColumnPreview {
    /// The header text.
    pub name: String,
    /// `integer`, `number`, `text`, `bool`, `empty` or `mixed`: what its non-missing
    /// values are (a CSV field that reads as a number is a number; a workbook's text
    /// cell is text, digits or not: an 18-digit tax number kept as text).
    pub kind: String,
}

impl TablePreview {
    /// The preview of artifact `name`, when it is a CSV or a workbook that reads as a
    /// table within the checks' bounds.
    pub fn of(name: &str, bytes: &[u8]) -> Option<TablePreview> {
        let lower = name.to_ascii_lowercase();
        let workbook = is_workbook(name);
        if !workbook && !lower.ends_with(".csv") {
            return None;
        }
        let table = Table::read(name, bytes, Select::default()).ok()?;
        let sheets = if workbook {
            sheet_names(name, bytes).unwrap_or_default()
        } else {
            Vec::new()
        };
        let shown = table.headers.len().min(PREVIEW_COLUMNS);
        let columns = (0..shown)
            .map(|c| ColumnPreview {
                name: truncate(&table.headers[c], PREVIEW_CELL_CHARS).into_owned(),
                kind: kind_of(table.rows.iter().map(|r| &r[c]), !workbook).into(),
            })
            .collect();
        let head = table
            .rows
            .iter()
            .take(PREVIEW_ROWS)
            .map(|row| row.iter().take(shown).map(cell_text).collect())
            .collect();
        Some(TablePreview {
            sheet: sheets.first().cloned(),
            sheets,
            rows: table.rows.len() as u64,
            columns,
            column_count: table.headers.len() as u64,
            head,
        })
    }
}

fn cell_text(value: &Value) -> String {
    match value {
        Value::Empty => String::new(),
        Value::Text(t) => truncate(t, PREVIEW_CELL_CHARS).into_owned(),
        other => other.canonical().into_owned(),
    }
}

/// The kind shared by a column's non-missing values; text that reads as a number is a
/// number when `text_is_typeless` (every CSV field is text).
fn kind_of<'a>(values: impl Iterator<Item = &'a Value>, text_is_typeless: bool) -> &'static str {
    let mut kind: Option<&'static str> = None;
    for value in values.filter(|v| !v.is_missing()) {
        let this = match value {
            Value::Bool(_) => "bool",
            Value::Text(_) if !text_is_typeless => "text",
            v => match v.number() {
                Some(x) if x.is_finite() && x.fract() == 0.0 => "integer",
                Some(_) => "number",
                None => "text",
            },
        };
        kind = Some(match (kind, this) {
            (None, k) => k,
            (Some(a), b) if a == b => a,
            (Some("integer" | "number"), "integer" | "number") => "number",
            _ => return "mixed",
        });
    }
    kind.unwrap_or("empty")
}

#[cfg(test)]
mod tests {
    use super::super::sheet::tests::{row, workbook};
    use super::*;

    #[test]
    fn a_csv_is_previewed_with_kinds_and_first_rows() {
        let mut csv = String::from("dept,amount,n,note,flag\n");
        for i in 0..12 {
            csv.push_str(&format!("d{i},{}.5,{i},,x\n", i * 10));
        }
        let p = TablePreview::of("summary.csv", csv.as_bytes()).unwrap();
        assert_eq!(p.rows, 12);
        assert_eq!(p.column_count, 5);
        let kinds: Vec<_> = p.columns.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(kinds, ["text", "number", "integer", "empty", "text"]);
        assert_eq!(p.head.len(), PREVIEW_ROWS);
        assert_eq!(p.head[1], ["d1", "10.5", "1", "", "x"]);
        assert!(p.sheets.is_empty() && p.sheet.is_none());
    }

    #[test]
    fn a_workbook_is_previewed_from_its_first_sheet_and_lists_every_sheet() {
        let body = [
            row(1, &["部门", "cost"]),
            row(2, &["研发", "1.25"]),
            row(3, &[&"很长".repeat(40), "2"]),
        ]
        .concat();
        let bytes = workbook(&[("Allocation", &body), ("Summary", &row(1, &["x"]))], &[]);
        let p = TablePreview::of("result.xlsx", &bytes).unwrap();
        assert_eq!(p.sheet.as_deref(), Some("Allocation"));
        assert_eq!(p.sheets, ["Allocation", "Summary"]);
        assert_eq!(p.rows, 2);
        assert_eq!(p.columns[0].name, "部门");
        assert_eq!(p.head[0][0], "研发");
        assert!(p.head[1][0].ends_with('…'));
        assert!(p.head[1][0].chars().count() <= PREVIEW_CELL_CHARS + 1);
    }

    #[test]
    fn a_workbook_s_text_of_digits_is_text() {
        let body = [
            row(1, &["税号", "n"]),
            row(2, &["'911101080000123456", "3"]),
            row(3, &["'911101080000654321", "4"]),
        ]
        .concat();
        let p = TablePreview::of("ids.xlsx", &workbook(&[("S", &body)], &[])).unwrap();
        let kinds: Vec<_> = p.columns.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(kinds, ["text", "integer"]);
        assert_eq!(p.head[0][0], "911101080000123456");
    }

    #[test]
    fn what_is_no_table_has_no_preview() {
        assert!(TablePreview::of("figure.png", b"\x89PNG").is_none());
        assert!(TablePreview::of("result.xlsx", b"not a zip").is_none());
        assert!(TablePreview::of("notes.txt", b"a,b\n1,2\n").is_none());
    }

    #[test]
    fn a_wide_table_lists_its_first_columns_and_counts_all() {
        let header: Vec<String> = (0..50).map(|i| format!("c{i}")).collect();
        let csv = format!("{}\n{}\n", header.join(","), vec!["1"; 50].join(","));
        let p = TablePreview::of("wide.csv", csv.as_bytes()).unwrap();
        assert_eq!(p.column_count, 50);
        assert_eq!(p.columns.len(), PREVIEW_COLUMNS);
        assert_eq!(p.head[0].len(), PREVIEW_COLUMNS);
    }
}
