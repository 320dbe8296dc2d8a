//! Checks over a table a data job writes (CSV, or a sheet of an `.xlsx` workbook),
//! expressed as data so that a backend can configure them per job (JSON or TOML) without
//! writing Rust.
//!
//! The cost-allocation task "split the total cost by each department's revenue weight,
//! R&D at least 10%, sales at most 35%, round to cents" becomes: required columns, keys
//! preserved from the input table (which may be a workbook while the output is CSV, or
//! the other way round), input columns copied through unchanged, no duplicate keys, no
//! NaN in the amounts, the amounts summing to the total, per-row bounds on the share
//! column, amounts with at most two decimals, and no cell a spreadsheet program would run
//! as a formula. A failure names the cells (`result.xlsx!Sheet1!C7`) and the numbers.
//! Files are read within bounds (see [`sheet`](super::sheet)).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::bounds::{MAX_TABLE_BYTES, NAMED};
use super::sheet::{number_text, Select, Table, Value};
use super::{ValidationContext, Validator};

/// Checks over one table artifact (`.csv`, or `.xlsx`/`.xlsm`: a sheet of it). Every
/// list may be empty; a check that is not set is not run, except `no_formulas`, which is
/// on unless turned off.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TableCheck {
    /// The table artifact, e.g. `allocation.csv` or `result.xlsx`.
    pub artifact: String,
    /// The sheet of a workbook artifact (default: the first sheet).
    #[serde(default)]
    pub sheet: Option<String>,
    /// The header's row, counted from 1 (default: the first non-empty row).
    #[serde(default)]
    pub header_row: Option<u32>,
    /// Columns that must be present.
    #[serde(default)]
    pub required_columns: Vec<String>,
    /// Exact number of data rows.
    #[serde(default)]
    pub row_count: Option<usize>,
    /// Key columns whose set of values must equal that of an input table.
    #[serde(default)]
    pub keys_from_input: Option<KeysFromInput>,
    /// Columns whose combined values must be unique per row.
    #[serde(default)]
    pub unique_keys: Vec<String>,
    /// Columns that must have no empty or NaN cell.
    #[serde(default)]
    pub no_nan: Vec<String>,
    /// Columns that must sum to a total (amount conservation).
    #[serde(default)]
    pub sums: Vec<SumCheck>,
    /// Bounds on a column's values, optionally for selected rows only.
    #[serde(default)]
    pub bounds: Vec<BoundCheck>,
    /// Input columns the output copies through, which must equal the input's values
    /// row by row (matched by key).
    #[serde(default)]
    pub columns_unchanged: Option<ColumnsUnchanged>,
    /// Columns whose numbers must have at most so many decimals (amounts in cents).
    #[serde(default)]
    pub decimals: Vec<Decimals>,
    /// Refuse formula cells and text cells starting with `=`, `+`, `-` or `@` (or a tab
    /// or carriage return): a spreadsheet program runs them as formulas, the
    /// spreadsheet-injection vector. A negative number stored as a number is fine (in
    /// CSV, a field that reads as a number). On by default; in a workbook every sheet
    /// is looked at, and what runs or fetches outside the cells (macros, external
    /// links, formulas of rules and names that call out) is refused too.
    #[serde(default = "yes")]
    pub no_formulas: bool,
}

fn yes() -> bool {
    true
}

impl Default for TableCheck {
    fn default() -> Self {
        TableCheck {
            artifact: String::new(),
            sheet: None,
            header_row: None,
            required_columns: Vec::new(),
            row_count: None,
            keys_from_input: None,
            unique_keys: Vec::new(),
            no_nan: Vec::new(),
            sums: Vec::new(),
            bounds: Vec::new(),
            columns_unchanged: None,
            decimals: Vec::new(),
            no_formulas: true,
        }
    }
}

/// Input columns copied through to the output unchanged: for every output row whose key
/// is in the input, each column equals the input row's value (numbers within
/// `tolerance`, relative; text exactly, after trimming).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ColumnsUnchanged {
    /// Input table (relative to the inputs; CSV or a workbook).
    pub input: String,
    /// The input workbook's sheet (default: the first).
    #[serde(default)]
    pub sheet: Option<String>,
    /// The input's header row, counted from 1 (default: the first non-empty row).
    #[serde(default)]
    pub header_row: Option<u32>,
    /// Key columns matching output rows to input rows.
    pub key: Vec<String>,
    /// Columns that must be unchanged.
    pub columns: Vec<String>,
    /// Largest accepted relative difference between numbers.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
}

/// A column's numbers have at most `max` decimals.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Decimals {
    /// Numeric column.
    pub column: String,
    /// Most decimals.
    pub max: u32,
}

/// The output's key columns must hold the same set of values as the input's.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KeysFromInput {
    /// Input table (relative to the inputs; CSV or a workbook).
    pub input: String,
    /// The input workbook's sheet (default: the first).
    #[serde(default)]
    pub sheet: Option<String>,
    /// The input's header row, counted from 1 (default: the first non-empty row).
    #[serde(default)]
    pub header_row: Option<u32>,
    /// Key columns, present in both tables.
    pub columns: Vec<String>,
}

/// `sum(column) == total` within `tolerance`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SumCheck {
    /// Numeric column.
    pub column: String,
    /// Expected sum.
    pub total: f64,
    /// Largest accepted absolute difference.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
}

fn default_tolerance() -> f64 {
    1e-6
}

/// `min <= value <= max` for a column, in every row or in the rows where
/// `where_column == equals`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BoundCheck {
    /// Numeric column.
    pub column: String,
    /// Inclusive lower bound.
    #[serde(default)]
    pub min: Option<f64>,
    /// Inclusive upper bound.
    #[serde(default)]
    pub max: Option<f64>,
    /// Restrict to rows whose `where_column` equals `equals`.
    #[serde(default)]
    pub where_column: Option<String>,
    /// The value selecting rows.
    #[serde(default)]
    pub equals: Option<String>,
}

/// Reads the input `name` staged for the job, within [`MAX_TABLE_BYTES`]. The
/// name comes from a job's declaration: it is opened through a directory handle of the
/// inputs that cannot be left (no `..`, no absolute path, no symlink out).
fn read_input(inputs: &Path, name: &str, select: Select<'_>) -> Result<Table, String> {
    let dir = cap_std::fs::Dir::open_ambient_dir(inputs, cap_std::ambient_authority())
        .map_err(|e| format!("input {name}: {e}"))?;
    let file = dir
        .open(name)
        .map_err(|e| format!("input {name} cannot be opened: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_TABLE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("input {name}: {e}"))?;
    Table::read(name, &bytes, select)
}

/// `1,000,000.00` for 1e6 at 2 decimals.
fn grouped(x: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, x.abs());
    let (int, frac) = text
        .split_once('.')
        .map_or((text.as_str(), ""), |(i, f)| (i, f));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    if x < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.insert(0, '-');
    }
    out
}

/// Decimals to show a sum with: enough to see a difference of `tolerance`.
fn shown_decimals(tolerance: f64) -> usize {
    if tolerance > 0.0 && tolerance.is_finite() {
        ((-tolerance.log10()).ceil().max(0.0) as usize).clamp(2, 9)
    } else {
        6
    }
}

/// "A2, A5, A9 and 3 more" from a list of cells and how many there were.
fn listed(cells: &[String], total: usize) -> String {
    let mut s = cells.join("; ");
    if total > cells.len() {
        s.push_str(&format!("; and {} more", total - cells.len()));
    }
    s
}

/// Whether `x` has at most `max` decimals (within the binary representation's error);
/// a CSV field is judged by its digits as written.
fn within_decimals(value: &Value, x: f64, max: u32) -> bool {
    if let Value::Text(t) = value {
        let t = t.trim();
        if !t.contains(['e', 'E']) {
            return t.split_once('.').map_or(0, |(_, f)| f.len()) <= max as usize;
        }
    }
    let scaled = x * 10f64.powi(max as i32);
    // The product's own rounding error is a few ulps of it.
    (scaled - scaled.round()).abs() <= (scaled.abs() * 8.0 * f64::EPSILON).max(1e-9)
}

/// A value as keys and copied-through values compare it, without the text
/// [`Value::canonical`] spells it in: a number (a text that reads as a finite number
/// is one) by its value, anything else by that text. Two values are equal here exactly
/// when their canonical texts are: a finite number's text is its value's shortest
/// spelling (`-0` is `0`), and the text of a non-finite one (`NaN`, `inf`, `-inf`) is
/// compared as text, as a text spelling it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Canon<'t> {
    /// The bits of a finite number (zero as `+0`).
    Number(u64),
    Text(&'t str),
}

impl<'t> Canon<'t> {
    fn number(x: f64) -> Canon<'t> {
        if x.is_finite() {
            Canon::Number(if x == 0.0 { 0 } else { x.to_bits() })
        } else if x.is_nan() {
            Canon::Text("NaN")
        } else if x > 0.0 {
            Canon::Text("inf")
        } else {
            Canon::Text("-inf")
        }
    }

    /// [`Value::canonical`], as compared.
    fn of(value: &'t Value) -> Canon<'t> {
        match value {
            Value::Number(x) => Canon::number(*x),
            Value::Text(t) => {
                let t = t.trim();
                match t.parse::<f64>() {
                    Ok(x) if x.is_finite() && !t.is_empty() => Canon::number(x),
                    _ => Canon::Text(t),
                }
            }
            Value::Bool(b) => Canon::Text(if *b { "True" } else { "False" }),
            Value::Error(e) => Canon::Text(e),
            Value::Empty => Canon::Text(""),
        }
    }

    /// The canonical text.
    fn text(self) -> String {
        match self {
            Canon::Number(bits) => number_text(f64::from_bits(bits)),
            Canon::Text(t) => t.to_string(),
        }
    }
}

/// A key as failures show it: its canonical texts.
fn key_texts(key: &[Canon<'_>]) -> Vec<String> {
    key.iter().map(|c| c.text()).collect()
}

/// What the comparison of a copied-through value needs of it: its number, whether it
/// is missing, its canonical value (the text of a CSV field read once).
struct Look<'t> {
    number: Option<f64>,
    missing: bool,
    canon: Canon<'t>,
}

impl<'t> Look<'t> {
    /// [`Value::number`], [`Value::is_missing`] and [`Canon::of`] of `value`.
    fn at(value: &'t Value) -> Look<'t> {
        match value {
            Value::Number(x) => Look {
                number: Some(*x),
                missing: x.is_nan(),
                canon: Canon::number(*x),
            },
            Value::Text(t) => {
                let t = t.trim();
                let parsed = t.parse::<f64>().ok();
                Look {
                    number: parsed,
                    missing: t.is_empty()
                        || t.eq_ignore_ascii_case("nan")
                        || t.eq_ignore_ascii_case("na")
                        || t.eq_ignore_ascii_case("null"),
                    canon: match parsed {
                        Some(x) if x.is_finite() => Canon::number(x),
                        _ => Canon::Text(t),
                    },
                }
            }
            other => Look {
                number: other.number(),
                missing: other.is_missing(),
                canon: Canon::of(other),
            },
        }
    }
}

/// The key of every row of a table over some columns, side by side.
struct Keys<'t> {
    width: usize,
    rows: usize,
    cells: Vec<Canon<'t>>,
}

impl<'t> Keys<'t> {
    fn of(table: &'t Table, cols: &[usize]) -> Keys<'t> {
        let mut cells = Vec::with_capacity(table.rows.len() * cols.len());
        for row in &table.rows {
            cells.extend(cols.iter().map(|&c| Canon::of(&row[c])));
        }
        Keys {
            width: cols.len(),
            rows: table.rows.len(),
            cells,
        }
    }

    fn row(&self, r: usize) -> &[Canon<'t>] {
        &self.cells[r * self.width..(r + 1) * self.width]
    }

    fn iter(&self) -> impl Iterator<Item = &[Canon<'t>]> + '_ {
        (0..self.rows).map(|r| self.row(r))
    }
}

/// Keys already built, by table and columns: the rules that key the same table by the
/// same columns share them.
#[derive(Default)]
struct KeyCache<'t> {
    built: Vec<(*const Table, Vec<usize>, Rc<Keys<'t>>)>,
}

impl<'t> KeyCache<'t> {
    fn keys(&mut self, table: &'t Table, cols: &[usize]) -> Rc<Keys<'t>> {
        let found = self
            .built
            .iter()
            .find(|(t, c, _)| std::ptr::eq(*t, table) && c == cols);
        if let Some((_, _, keys)) = found {
            return Rc::clone(keys);
        }
        let keys = Rc::new(Keys::of(table, cols));
        self.built.push((table, cols.to_vec(), Rc::clone(&keys)));
        keys
    }

    /// The keys of the output `table` and of the `input` it is compared with, on the
    /// columns `names` (which both must have).
    fn both(
        &mut self,
        table: &'t Table,
        input: &'t Table,
        names: &[String],
    ) -> Result<(Rc<Keys<'t>>, Rc<Keys<'t>>), String> {
        let out_cols = TableCheck::columns(table, names)?;
        let in_cols = TableCheck::columns(input, names)?;
        Ok((self.keys(table, &out_cols), self.keys(input, &in_cols)))
    }
}

/// An input table as a rule names it: file, sheet, header row.
type InputKey = (String, Option<String>, Option<u32>);

/// The input tables a check compares its artifact with, each read once however many
/// rules name it, with what reading it gave.
struct InputTables {
    tables: Vec<(InputKey, Result<Table, String>)>,
}

impl InputTables {
    fn read(check: &TableCheck, inputs: &Path) -> InputTables {
        let mut read = InputTables { tables: Vec::new() };
        let wanted = [
            check
                .keys_from_input
                .as_ref()
                .map(|k| (&k.input, k.sheet.as_deref(), k.header_row)),
            check
                .columns_unchanged
                .as_ref()
                .map(|u| (&u.input, u.sheet.as_deref(), u.header_row)),
        ];
        for (name, sheet, header_row) in wanted.into_iter().flatten() {
            if read.position(name, sheet, header_row).is_none() {
                let select = Select {
                    sheet,
                    header_row,
                    injections: false,
                };
                let key = (name.clone(), sheet.map(str::to_string), header_row);
                read.tables.push((key, read_input(inputs, name, select)));
            }
        }
        read
    }

    fn position(&self, name: &str, sheet: Option<&str>, header_row: Option<u32>) -> Option<usize> {
        self.tables
            .iter()
            .position(|((n, s, h), _)| n == name && s.as_deref() == sheet && *h == header_row)
    }

    /// What reading an input gave (every input a rule names was read by
    /// [`InputTables::read`]).
    fn get(
        &self,
        name: &str,
        sheet: Option<&str>,
        header_row: Option<u32>,
    ) -> Result<&Table, String> {
        match self.position(name, sheet, header_row) {
            Some(i) => self.tables[i].1.as_ref().map_err(Clone::clone),
            None => Err(format!("input {name} was not read")),
        }
    }
}

impl TableCheck {
    fn select(&self) -> Select<'_> {
        Select {
            sheet: self.sheet.as_deref(),
            header_row: self.header_row,
            injections: self.no_formulas,
        }
    }

    fn columns(table: &Table, names: &[String]) -> Result<Vec<usize>, String> {
        names.iter().map(|c| table.column(c)).collect()
    }

    /// Every rule over an already read table and its inputs; each failing rule adds
    /// one line.
    fn failures(&self, table: &Table, inputs: &InputTables) -> Vec<String> {
        let mut failed = Vec::new();
        let mut keys = KeyCache::default();
        let mut fail = |r: Result<(), String>| {
            if let Err(e) = r {
                failed.push(e);
            }
        };
        if self.no_formulas && table.injection_count > 0 {
            fail(Err(format!(
                "{} cells of {} are run as formulas by a spreadsheet program (write amounts as numbers, and do not start text with =, +, - or @): {}",
                table.injection_count,
                self.artifact,
                listed(&table.injections, table.injection_count)
            )));
        }
        if self.no_formulas && table.active_count > 0 {
            fail(Err(format!(
                "{} holds what a spreadsheet program runs or fetches on its own (write values and formatting only: no macros, links to other files, or formulas that call out): {}",
                self.artifact,
                listed(&table.active, table.active_count)
            )));
        }
        // Title rows above the table read as its header: said once, as what it is;
        // every rule below would be measured against the wrong rows.
        if let Some(misread) = table.misread_header(&self.columns_named()) {
            fail(Err(misread));
            return failed;
        }
        for c in &self.required_columns {
            fail(table.column(c).map(|_| ()));
        }
        if let Some(n) = self.row_count {
            if table.rows.len() != n {
                fail(Err(format!(
                    "{} has {} rows, expected {n}",
                    table.label,
                    table.rows.len()
                )));
            }
        }
        for c in &self.no_nan {
            fail(self.no_nan(table, c));
        }
        if !self.unique_keys.is_empty() {
            fail(self.unique(table, &mut keys));
        }
        if let Some(k) = &self.keys_from_input {
            let input = inputs.get(&k.input, k.sheet.as_deref(), k.header_row);
            fail(input.and_then(|input| self.keys_kept(table, k, input, &mut keys)));
        }
        if let Some(u) = &self.columns_unchanged {
            let input = inputs.get(&u.input, u.sheet.as_deref(), u.header_row);
            fail(input.and_then(|input| self.unchanged(table, u, input, &mut keys)));
        }
        for s in &self.sums {
            fail(self.sum(table, s));
        }
        for b in &self.bounds {
            fail(self.bound(table, b));
        }
        for d in &self.decimals {
            fail(self.rounded(table, d));
        }
        failed
    }

    /// Every output column a rule names.
    fn columns_named(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .required_columns
            .iter()
            .chain(&self.no_nan)
            .chain(&self.unique_keys)
            .map(String::as_str)
            .collect();
        names.extend(
            self.keys_from_input
                .iter()
                .flat_map(|k| k.columns.iter().map(String::as_str)),
        );
        if let Some(u) = &self.columns_unchanged {
            names.extend(u.key.iter().chain(&u.columns).map(String::as_str));
        }
        names.extend(self.sums.iter().map(|s| s.column.as_str()));
        names.extend(self.bounds.iter().map(|b| b.column.as_str()));
        names.extend(self.decimals.iter().map(|d| d.column.as_str()));
        names
    }

    fn no_nan(&self, table: &Table, c: &str) -> Result<(), String> {
        let col = table.column(c)?;
        let rows: Vec<usize> = (0..table.rows.len())
            .filter(|&r| table.rows[r][col].is_missing())
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        let cells: Vec<String> = rows
            .iter()
            .take(NAMED)
            .map(|&r| table.cell(r, col))
            .collect();
        Err(format!(
            "column {c:?} is empty or NaN in {} rows: {}",
            rows.len(),
            listed(&cells, rows.len())
        ))
    }

    fn unique<'t>(&self, table: &'t Table, keys: &mut KeyCache<'t>) -> Result<(), String> {
        let cols = Self::columns(table, &self.unique_keys)?;
        let keys = keys.keys(table, &cols);
        let mut seen: HashMap<&[Canon<'_>], usize> = HashMap::with_capacity(keys.rows);
        let mut dups = Vec::new();
        let mut count = 0;
        for (r, key) in keys.iter().enumerate() {
            match seen.entry(key) {
                Entry::Occupied(first) => {
                    count += 1;
                    if dups.len() < NAMED {
                        dups.push(format!(
                            "{:?} in {} and {}",
                            key_texts(key),
                            table.cell(*first.get(), cols[0]),
                            table.cell(r, cols[0])
                        ));
                    }
                }
                Entry::Vacant(slot) => {
                    slot.insert(r);
                }
            }
        }
        if count == 0 {
            return Ok(());
        }
        Err(format!(
            "{} has {count} duplicate keys in {:?}: {}",
            table.label,
            self.unique_keys,
            listed(&dups, count)
        ))
    }

    fn keys_kept<'t>(
        &self,
        table: &'t Table,
        k: &KeysFromInput,
        input: &'t Table,
        keys: &mut KeyCache<'t>,
    ) -> Result<(), String> {
        let (out_keys, in_keys) = keys.both(table, input, &k.columns)?;
        let got: HashSet<&[Canon<'_>]> = out_keys.iter().collect();
        let want: HashSet<&[Canon<'_>]> = in_keys.iter().collect();
        if got == want {
            return Ok(());
        }
        let mut missing: Vec<Vec<String>> = want.difference(&got).map(|k| key_texts(k)).collect();
        let mut extra: Vec<Vec<String>> = got.difference(&want).map(|k| key_texts(k)).collect();
        missing.sort();
        extra.sort();
        let (nm, ne) = (missing.len(), extra.len());
        missing.truncate(NAMED);
        extra.truncate(NAMED);
        Err(format!(
            "{} does not keep the keys {:?} of {}: {nm} missing {missing:?}, {ne} unexpected {extra:?}",
            table.label, k.columns, input.label
        ))
    }

    fn unchanged<'t>(
        &self,
        table: &'t Table,
        u: &ColumnsUnchanged,
        input: &'t Table,
        keys: &mut KeyCache<'t>,
    ) -> Result<(), String> {
        let (out_keys, in_keys) = keys.both(table, input, &u.key)?;
        let mut by_key: HashMap<&[Canon<'_>], usize> = HashMap::with_capacity(in_keys.rows);
        for (r, key) in in_keys.iter().enumerate() {
            by_key.entry(key).or_insert(r);
        }
        // The input row of each output row (None: a key the input does not have).
        let matched: Vec<Option<usize>> = out_keys
            .iter()
            .map(|key| by_key.get(key).copied())
            .collect();
        let mut problems = Vec::new();
        for c in &u.columns {
            let (oc, ic) = (table.column(c)?, input.column(c)?);
            let mut differ = Vec::new();
            let mut count = 0;
            for (r, ir) in matched.iter().enumerate() {
                let Some(ir) = *ir else {
                    continue;
                };
                let (got, want) = (&table.rows[r][oc], &input.rows[ir][ic]);
                let (a, b) = (Look::at(got), Look::at(want));
                let same = match (a.number, b.number) {
                    (Some(x), Some(y)) if !a.missing && !b.missing => {
                        (x - y).abs() <= u.tolerance * y.abs().max(1.0)
                    }
                    _ => a.canon == b.canon || (a.missing && b.missing),
                };
                if !same {
                    count += 1;
                    if differ.len() < NAMED {
                        differ.push(format!(
                            "{} is {}, {} is {}",
                            table.cell(r, oc),
                            got.shown(),
                            input.cell(ir, ic),
                            want.shown()
                        ));
                    }
                }
            }
            if count > 0 {
                problems.push(format!(
                    "{count} rows differ from input on {c}: {}",
                    listed(&differ, count)
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} must copy {:?} from {} unchanged (by {:?}): {}",
                table.label,
                u.columns,
                input.label,
                u.key,
                problems.join("; ")
            ))
        }
    }

    fn numbers(
        table: &Table,
        col: usize,
        rows: impl Iterator<Item = usize>,
    ) -> Result<Vec<(usize, f64)>, String> {
        let mut out = Vec::new();
        for r in rows {
            let v = &table.rows[r][col];
            match v.number() {
                Some(x) => out.push((r, x)),
                None => {
                    return Err(format!(
                        "{} is {}, not a number",
                        table.cell(r, col),
                        v.shown()
                    ))
                }
            }
        }
        Ok(out)
    }

    fn sum(&self, table: &Table, s: &SumCheck) -> Result<(), String> {
        let col = table.column(&s.column)?;
        let values = Self::numbers(table, col, 0..table.rows.len())?;
        let sum: f64 = values.iter().map(|(_, x)| x).sum();
        if (sum - s.total).abs() <= s.tolerance && !sum.is_nan() {
            return Ok(());
        }
        let d = shown_decimals(s.tolerance);
        Err(format!(
            "sum of {} is {}, expected {} ± {} ({})",
            s.column,
            grouped(sum, d),
            grouped(s.total, d),
            s.tolerance,
            table.span(col)
        ))
    }

    fn bound(&self, table: &Table, b: &BoundCheck) -> Result<(), String> {
        let col = table.column(&b.column)?;
        let selector = match (&b.where_column, &b.equals) {
            (Some(w), Some(v)) => Some((table.column(w)?, v.as_str())),
            _ => None,
        };
        let wanted = selector.map(|(_, v)| Value::Text(v.into()));
        let wanted = wanted.as_ref().map(Canon::of);
        let rows = (0..table.rows.len()).filter(|&r| match (selector, wanted) {
            (Some((wc, _)), Some(w)) => Canon::of(&table.rows[r][wc]) == w,
            _ => true,
        });
        let mut out = Vec::new();
        let mut count = 0;
        for (r, x) in Self::numbers(table, col, rows)? {
            let low = b.min.is_some_and(|m| x < m);
            let high = b.max.is_some_and(|m| x > m);
            if low || high || x.is_nan() {
                count += 1;
                if out.len() < NAMED {
                    let bound = if low {
                        format!("at least {}", b.min.unwrap_or_default())
                    } else {
                        format!("at most {}", b.max.unwrap_or_default())
                    };
                    out.push(format!("{} is {x}, must be {bound}", table.cell(r, col)));
                }
            }
        }
        if count == 0 {
            return Ok(());
        }
        let which = match selector {
            Some((wc, v)) => format!(" where {} = {v:?}", table.headers[wc]),
            None => String::new(),
        };
        Err(format!(
            "{} out of bounds{which} in {count} rows: {}",
            b.column,
            listed(&out, count)
        ))
    }

    fn rounded(&self, table: &Table, d: &Decimals) -> Result<(), String> {
        let col = table.column(&d.column)?;
        let mut out = Vec::new();
        let mut count = 0;
        for (r, x) in Self::numbers(table, col, 0..table.rows.len())? {
            if !within_decimals(&table.rows[r][col], x, d.max) {
                count += 1;
                if out.len() < NAMED {
                    out.push(format!(
                        "{} is {}",
                        table.cell(r, col),
                        table.rows[r][col].shown()
                    ));
                }
            }
        }
        if count == 0 {
            return Ok(());
        }
        Err(format!(
            "{} must have at most {} decimals; {count} rows have more: {}",
            d.column,
            d.max,
            listed(&out, count)
        ))
    }
}

impl Validator for TableCheck {
    fn id(&self) -> String {
        format!("table:{}", self.artifact)
    }

    fn check(&self, ctx: &ValidationContext<'_>) -> Result<(), String> {
        let name = self.artifact.as_str();
        let bytes = &ctx.artifact(name)?.bytes;
        // The output and the inputs it is compared with are read side by side: each
        // is a whole workbook parse.
        let (table, inputs) = std::thread::scope(|scope| {
            let inputs = scope.spawn(|| InputTables::read(self, ctx.inputs));
            let table = Table::read(name, bytes, self.select());
            (table, inputs.join())
        });
        let inputs = inputs.map_err(|_| format!("reading the inputs of {name} failed"))?;
        let failed = self.failures(&table?, &inputs);
        if failed.is_empty() {
            Ok(())
        } else {
            Err(failed.join("\n"))
        }
    }
}

#[cfg(test)]
mod tests;
