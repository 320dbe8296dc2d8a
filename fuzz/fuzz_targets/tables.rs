//! The host reads the tables a job wrote (`.xlsx` and CSV) to check them, and the job's
//! code wrote every byte: any bytes, as an output workbook or CSV and as an input the
//! rules compare it with, must end in a verdict (passed, or a failure that says why),
//! never a panic or a hang, within the bounds of `src/validate/bounds.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pyward::validate::{TableCheck, ValidationContext, Validator};
use pyward::Artifact;

/// Every rule, on the columns a small table would have.
const RULES: &str = r#"{
    "artifact": "ARTIFACT",
    "required_columns": ["a"],
    "unique_keys": ["a"],
    "no_nan": ["b"],
    "keys_from_input": {"input": "INPUT", "columns": ["a"]},
    "columns_unchanged": {"input": "INPUT", "key": ["a"], "columns": ["b"]},
    "sums": [{"column": "b", "total": 10, "tolerance": 0.01}],
    "decimals": [{"column": "b", "max": 2}],
    "bounds": [{"column": "b", "min": 0, "max": 5}]
}"#;

fuzz_target!(|data: &[u8]| {
    // The first byte chooses the formats; the rest is the file, given as the output and
    // as the input alike.
    let Some((&choice, bytes)) = data.split_first() else {
        return;
    };
    let artifact = if choice & 1 == 0 {
        "out.xlsx"
    } else {
        "out.csv"
    };
    let input = if choice & 2 == 0 { "in.xlsx" } else { "in.csv" };
    // One folder for the run: each input is written over the last.
    static INPUTS: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let inputs = INPUTS.get_or_init(|| tempfile::tempdir().unwrap());
    std::fs::write(inputs.path().join(input), bytes).unwrap();
    let artifacts = [Artifact::new(artifact, "", bytes.to_vec())];
    let ctx = ValidationContext {
        artifacts: &artifacts,
        inputs: inputs.path(),
    };
    let check: TableCheck =
        serde_json::from_str(&RULES.replace("ARTIFACT", artifact).replace("INPUT", input)).unwrap();
    let _ = check.check(&ctx);
});
