//! Checks over a CSV table a data job writes, expressed as data so that a backend can
//! configure them per job (JSON or TOML) without writing Rust.
//!
//! The cost-allocation task "split the total cost by each department's revenue weight,
//! R&D at least 10%, sales at most 35%" becomes: required columns, keys preserved from
//! the input table, no duplicate keys, no NaN in the amounts, the amounts summing to the
//! total, and per-row bounds on the share column.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::{ValidationContext, Validator};

/// Checks over one CSV artifact. Every list may be empty; a check that is not set is
/// not run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TableCheck {
    /// The CSV artifact, e.g. `allocation.csv`.
    pub artifact: String,
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
}

/// The output's key columns must hold the same set of values as the input's.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KeysFromInput {
    /// Input CSV (relative to SRC).
    pub input: String,
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

/// A parsed CSV table.
struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn parse(name: &str, bytes: &[u8]) -> Result<Table, String> {
        let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(bytes);
        let headers = reader
            .headers()
            .map_err(|e| format!("{name}: {e}"))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let rows = reader
            .records()
            .map(|r| r.map(|r| r.iter().map(str::to_string).collect()))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{name}: {e}"))?;
        Ok(Table { headers, rows })
    }

    fn column(&self, name: &str, table: &str) -> Result<usize, String> {
        self.headers.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "{table} has no column {name:?} (columns: {:?})",
                self.headers
            )
        })
    }

    fn number(&self, row: usize, col: usize, table: &str) -> Result<f64, String> {
        let cell = self.rows[row][col].trim();
        cell.parse::<f64>().map_err(|_| {
            format!(
                "{table} row {} column {:?}: {cell:?} is not a number",
                row + 1,
                self.headers[col]
            )
        })
    }

    fn keys(&self, cols: &[usize]) -> Vec<Vec<&str>> {
        self.rows
            .iter()
            .map(|r| cols.iter().map(|&c| r[c].trim()).collect())
            .collect()
    }
}

fn is_nan(cell: &str) -> bool {
    let c = cell.trim();
    c.is_empty()
        || c.eq_ignore_ascii_case("nan")
        || c.eq_ignore_ascii_case("na")
        || c.eq_ignore_ascii_case("null")
}

impl Validator for TableCheck {
    fn id(&self) -> String {
        format!("table:{}", self.artifact)
    }

    fn check(&self, ctx: &ValidationContext<'_>) -> Result<(), String> {
        let name = self.artifact.as_str();
        let table = Table::parse(name, &ctx.artifact(name)?.bytes)?;
        for c in &self.required_columns {
            table.column(c, name)?;
        }
        if let Some(n) = self.row_count {
            if table.rows.len() != n {
                return Err(format!(
                    "{name} has {} rows, expected {n}",
                    table.rows.len()
                ));
            }
        }
        for c in &self.no_nan {
            let col = table.column(c, name)?;
            if let Some(r) = table.rows.iter().position(|row| is_nan(&row[col])) {
                return Err(format!(
                    "{name} column {c:?} is empty or NaN in row {}",
                    r + 1
                ));
            }
        }
        if !self.unique_keys.is_empty() {
            let cols = self
                .unique_keys
                .iter()
                .map(|c| table.column(c, name))
                .collect::<Result<Vec<_>, _>>()?;
            let mut seen = HashSet::new();
            for key in table.keys(&cols) {
                if !seen.insert(key.clone()) {
                    return Err(format!(
                        "{name} has a duplicate key {key:?} in {:?}",
                        self.unique_keys
                    ));
                }
            }
        }
        if let Some(k) = &self.keys_from_input {
            let input_path = ctx.inputs.join(&k.input);
            let bytes =
                std::fs::read(&input_path).map_err(|e| format!("input {}: {e}", k.input))?;
            let input = Table::parse(&k.input, &bytes)?;
            let out_cols = k
                .columns
                .iter()
                .map(|c| table.column(c, name))
                .collect::<Result<Vec<_>, _>>()?;
            let in_cols = k
                .columns
                .iter()
                .map(|c| input.column(c, &k.input))
                .collect::<Result<Vec<_>, _>>()?;
            let got: HashSet<_> = table.keys(&out_cols).into_iter().collect();
            let want: HashSet<_> = input.keys(&in_cols).into_iter().collect();
            let missing: Vec<_> = want.difference(&got).take(5).collect();
            let extra: Vec<_> = got.difference(&want).take(5).collect();
            if !missing.is_empty() || !extra.is_empty() {
                return Err(format!(
                    "{name} does not keep the keys {:?} of {}: missing {missing:?}, unexpected {extra:?}",
                    k.columns, k.input
                ));
            }
        }
        for s in &self.sums {
            let col = table.column(&s.column, name)?;
            let mut sum = 0.0;
            for r in 0..table.rows.len() {
                sum += table.number(r, col, name)?;
            }
            if (sum - s.total).abs() > s.tolerance || sum.is_nan() {
                return Err(format!(
                    "{name} column {:?} sums to {sum}, expected {} (tolerance {})",
                    s.column, s.total, s.tolerance
                ));
            }
        }
        for b in &self.bounds {
            let col = table.column(&b.column, name)?;
            let selector = match (&b.where_column, &b.equals) {
                (Some(w), Some(v)) => Some((table.column(w, name)?, v.as_str())),
                _ => None,
            };
            for r in 0..table.rows.len() {
                if let Some((wc, v)) = selector {
                    if table.rows[r][wc].trim() != v {
                        continue;
                    }
                }
                let x = table.number(r, col, name)?;
                let low = b.min.is_some_and(|m| x < m);
                let high = b.max.is_some_and(|m| x > m);
                if low || high || x.is_nan() {
                    let bound = if low {
                        format!("at least {}", b.min.unwrap_or_default())
                    } else {
                        format!("at most {}", b.max.unwrap_or_default())
                    };
                    return Err(format!(
                        "{name} row {} column {:?} is {x}, must be {bound}",
                        r + 1,
                        b.column
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Artifact;

    fn ctx_check(check: &TableCheck, csv: &str, input: Option<&str>) -> Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        if let Some(i) = input {
            std::fs::write(dir.path().join("depts.csv"), i).unwrap();
        }
        let arts = [Artifact {
            name: "alloc.csv".into(),
            media_type: "text/csv".into(),
            bytes: csv.as_bytes().to_vec(),
            figure: None,
        }];
        check.check(&ValidationContext {
            artifacts: &arts,
            inputs: dir.path(),
        })
    }

    fn allocation_check() -> TableCheck {
        serde_json::from_str(
            r#"{"artifact": "alloc.csv",
                "required_columns": ["dept", "share", "amount"],
                "row_count": 3,
                "keys_from_input": {"input": "depts.csv", "columns": ["dept"]},
                "unique_keys": ["dept"],
                "no_nan": ["amount"],
                "sums": [{"column": "amount", "total": 1000, "tolerance": 0.01}],
                "bounds": [{"column": "share", "min": 0.10, "where_column": "dept", "equals": "rnd"},
                           {"column": "share", "max": 0.35, "where_column": "dept", "equals": "sales"}]}"#,
        )
        .unwrap()
    }

    const INPUT: &str = "dept,revenue\nrnd,100\nsales,300\nops,600\n";

    #[test]
    fn cost_allocation_passes_when_right() {
        let ok = "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\nops,0.5,500\n";
        ctx_check(&allocation_check(), ok, Some(INPUT)).unwrap();
    }

    #[test]
    fn each_table_rule_fails_with_a_specific_message() {
        let c = allocation_check();
        let cases = [
            (
                "dept,share\nrnd,0.1\nsales,0.3\nops,0.6\n",
                "no column \"amount\"",
            ),
            (
                "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\n",
                "has 2 rows",
            ),
            (
                "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\nhr,0.5,500\n",
                "does not keep the keys",
            ),
            (
                "dept,share,amount\nrnd,0.15,150\nrnd,0.35,350\nops,0.5,500\n",
                "duplicate key",
            ),
            (
                "dept,share,amount\nrnd,0.15,150\nsales,0.35,NaN\nops,0.5,500\n",
                "NaN in row 2",
            ),
            (
                "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\nops,0.5,400\n",
                "sums to 900",
            ),
            (
                "dept,share,amount\nrnd,0.05,50\nsales,0.35,350\nops,0.6,600\n",
                "at least 0.1",
            ),
            (
                "dept,share,amount\nrnd,0.15,150\nsales,0.45,450\nops,0.4,400\n",
                "at most 0.35",
            ),
        ];
        for (csv, want) in cases {
            let err = ctx_check(&c, csv, Some(INPUT)).unwrap_err();
            assert!(err.contains(want), "{want:?} not in {err:?}");
        }
    }

    #[test]
    fn unknown_fields_are_refused_when_loading() {
        assert!(
            serde_json::from_str::<TableCheck>(r#"{"artifact": "a.csv", "colums": []}"#).is_err()
        );
    }
}
