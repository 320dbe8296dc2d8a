//! What a job must write and the checks on it, in one versioned form that every door
//! accepts (JSON, or TOML for files): the library ([`Job::expect`](crate::Job::expect)),
//! and later the CLI, HTTP, the queue and run records.
//!
//! ```toml
//! version = 1
//! artifacts = ["result.xlsx", "summary.csv"]   # no figure: a table job
//!
//! [[tables]]
//! artifact = "result.xlsx"
//! sheet = "Allocation"
//! required_columns = ["dept_id", "cost_allocated"]
//! sums = [{ column = "cost_allocated", total = 1000000, tolerance = 0.01 }]
//! decimals = [{ column = "cost_allocated", max = 2 }]
//! ```

use serde::{Deserialize, Serialize};

use super::TableCheck;
use crate::outcome::is_figure;
use crate::output_dir::{check_file_name, check_out_name};

/// The version of [`Expectations`] this library reads and writes.
pub const EXPECTATIONS_VERSION: u32 = 1;

/// The artifacts a job must write and the table checks on them.
///
/// A job declared with artifacts and no figure among them is a table job: its `OUT` is
/// the first artifact (so `df.to_excel(OUT)` writes it) and no figure is required. A
/// figure listed (`figure.png`) becomes `OUT`. A table check's artifact is required
/// whether listed or not.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The form's version: [`EXPECTATIONS_VERSION`].
    pub version: u32,
    /// Files the job must write (`result.xlsx`, `summary.csv`, `figure.png`), plain
    /// names.
    #[serde(default)]
    pub artifacts: Vec<String>,
    /// Checks over table artifacts.
    #[serde(default)]
    pub tables: Vec<TableCheck>,
}

/// Why a declaration was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ExpectationsError {
    /// The JSON text did not parse or did not match the form.
    #[error("expectations json: {0}")]
    Json(String),
    /// The TOML text did not parse or did not match the form.
    #[error("expectations toml: {0}")]
    Toml(String),
    /// The form parsed but says something this library does not accept.
    #[error("invalid expectations: {0}")]
    Invalid(String),
}

impl Expectations {
    /// Reads the JSON form.
    pub fn from_json(text: &str) -> Result<Expectations, ExpectationsError> {
        serde_json::from_str::<Expectations>(text)
            .map_err(|e| ExpectationsError::Json(e.to_string()))?
            .validated()
    }

    /// Reads the TOML form.
    pub fn from_toml(text: &str) -> Result<Expectations, ExpectationsError> {
        toml::from_str::<Expectations>(text)
            .map_err(|e| ExpectationsError::Toml(e.to_string()))?
            .validated()
    }

    /// The JSON form.
    pub fn to_json(&self) -> String {
        // Strings, numbers and lists only: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The figure the job must write, if one is listed.
    pub fn figure(&self) -> Option<&str> {
        self.artifacts
            .iter()
            .map(String::as_str)
            .find(|a| is_figure(a))
    }

    /// The name `OUT` stands for: the figure listed, else the first artifact (or the
    /// first checked table); `None` when nothing is listed (a figure job as before).
    pub fn out_name(&self) -> Option<&str> {
        self.figure()
            .or(self.artifacts.first().map(String::as_str))
            .or(self.tables.first().map(|t| t.artifact.as_str()))
    }

    /// Every artifact the job must write: those listed, then the checked tables'.
    pub fn required(&self) -> Vec<String> {
        let mut all = self.artifacts.clone();
        for t in &self.tables {
            if !all.contains(&t.artifact) {
                all.push(t.artifact.clone());
            }
        }
        all
    }

    fn validated(self) -> Result<Expectations, ExpectationsError> {
        let invalid = |m: String| Err(ExpectationsError::Invalid(m));
        if self.version != EXPECTATIONS_VERSION {
            return invalid(format!(
                "version {} is not known (this pyward reads version {EXPECTATIONS_VERSION})",
                self.version
            ));
        }
        for a in self.required() {
            if let Err(e) = check_file_name(&a) {
                return invalid(format!("artifact {a:?}: {e}"));
            }
        }
        if let Some(out) = self.out_name() {
            if let Err(e) = check_out_name(out) {
                return invalid(format!("artifact {out:?}: {e}"));
            }
        }
        for t in &self.tables {
            let inputs = t
                .keys_from_input
                .iter()
                .map(|k| &k.input)
                .chain(t.columns_unchanged.iter().map(|c| &c.input));
            for input in inputs {
                let plain = !input.is_empty()
                    && !input.starts_with('/')
                    && input
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != "..");
                if !plain {
                    return invalid(format!(
                        "input {input:?} of the check on {}: name an input by its relative path",
                        t.artifact
                    ));
                }
            }
            if t.header_row == Some(0) {
                return invalid(format!("header_row of {} counts from 1", t.artifact));
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = r#"
version = 1
artifacts = ["result.xlsx", "summary.csv"]

[[tables]]
artifact = "result.xlsx"
sheet = "Allocation"
required_columns = ["dept_id", "cost_allocated"]
keys_from_input = { input = "source.xlsx", columns = ["dept_id"] }
sums = [{ column = "cost_allocated", total = 1000000, tolerance = 0.01 }]
decimals = [{ column = "cost_allocated", max = 2 }]
"#;

    #[test]
    fn toml_and_json_are_one_form() {
        let e = Expectations::from_toml(TOML).unwrap();
        assert_eq!(e.out_name(), Some("result.xlsx"));
        assert_eq!(e.figure(), None);
        assert!(e.tables[0].no_formulas, "on by default");
        assert_eq!(Expectations::from_json(&e.to_json()).unwrap(), e);
    }

    #[test]
    fn refusals_say_why() {
        let bad = [
            (
                TOML.replace("version = 1", "version = 2"),
                "version 2 is not known",
            ),
            (
                TOML.replace("\"summary.csv\"", "\"../x.csv\""),
                "artifact \"../x.csv\"",
            ),
            (
                TOML.replace("input = \"source.xlsx\"", "input = \"../../etc/passwd\""),
                "relative path",
            ),
            (TOML.replace("sheet =", "sheeet ="), "unknown field"),
        ];
        for (text, want) in bad {
            let err = Expectations::from_toml(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{want:?} not in {err:?}");
        }
        let figure =
            Expectations::from_json(r#"{"version": 1, "artifacts": ["t.csv", "plot.svg"]}"#)
                .unwrap();
        assert_eq!(figure.out_name(), Some("plot.svg"));
    }
}
