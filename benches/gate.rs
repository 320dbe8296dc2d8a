//! Gate speed: the Rust gate on a realistic ~200-line script, side by side with the same
//! rules written in Python (`python/gate_reference.py`: `ast.parse` + `NodeVisitor`) run
//! in an embedded CPython through pyo3.
//!
//! Run: `cargo bench --bench gate` (criterion). After criterion's own output, the
//! medians of its estimates (`target/criterion/gate_realistic_200/*/new/estimates.json`)
//! also go to `target/pyward-bench/gate.json` (see `common/report.rs`).

use std::ffi::CString;

use criterion::{black_box, Criterion};
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyward::gate::{self, Policy};

#[path = "common/report.rs"]
mod report;

const SCRIPT: &str = include_str!("../tests/data/realistic_200.py");
const REFERENCE: &str = include_str!("../python/gate_reference.py");

fn bench(c: &mut Criterion) {
    Python::initialize();
    let policy = Policy::figures();
    assert!(gate::check(SCRIPT, &policy).expect("checked").is_allowed());
    let mut g = c.benchmark_group("gate_realistic_200");
    g.bench_function("rust_gate", |b| {
        b.iter(|| gate::check(black_box(SCRIPT), black_box(&policy)))
    });
    Python::attach(|py| {
        let code = CString::new(REFERENCE).expect("no nul");
        let m = PyModule::from_code(py, &code, c"gate_reference.py", c"gate_reference")
            .expect("reference module loads");
        let check = m.getattr("check").expect("check()");
        let src = SCRIPT.into_pyobject(py).expect("str");
        let out = check.call1((&src,)).expect("runs");
        assert_eq!(out.len().expect("list"), 0, "reference accepts the script");
        g.bench_function("python_ast_reference", |b| {
            b.iter(|| check.call1((black_box(&src),)).expect("runs"))
        });
    });
    g.finish();
}

fn main() {
    let started = std::time::SystemTime::now();
    // What `criterion_main!` does (criterion's defaults, then its command line), with
    // shorter measurements when `PYWARD_BENCH_SCALE` asks for a trial; then the rows.
    let mut c = Criterion::default();
    if report::scale() < 1.0 {
        c = c
            .warm_up_time(std::time::Duration::from_millis(500))
            .measurement_time(std::time::Duration::from_secs(1))
            .sample_size(20);
    }
    let mut c = c.configure_from_args();
    bench(&mut c);
    c.final_summary();
    write_rows(started);
}

/// Criterion's median estimate of `function` in ms, if this run measured it.
fn criterion_median_ms(function: &str, since: std::time::SystemTime) -> Option<f64> {
    let home = std::env::var_os("CRITERION_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            report::results_dir()
                .parent()
                .expect("results live in the target directory")
                .join("criterion")
        });
    let path = home
        .join("gate_realistic_200")
        .join(function)
        .join("new")
        .join("estimates.json");
    // Absent or older than this run: criterion did not measure (e.g. `--test`, a filter).
    if std::fs::metadata(&path).ok()?.modified().ok()? < since {
        return None;
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    Some(json["median"]["point_estimate"].as_f64()? / 1e6)
}

fn write_rows(since: std::time::SystemTime) {
    let rust = criterion_median_ms("rust_gate", since);
    let python = criterion_median_ms("python_ast_reference", since);
    let (Some(rust), Some(python)) = (rust, python) else {
        println!("gate: criterion estimates not found for this run, no JSON written");
        return;
    };
    let mut rep = report::Report::new("gate", "cargo bench --bench gate");
    let workload = "realistic 200-line script";
    let row = rep.value("check time", workload, "rust gate", "ms", rust);
    row.median_ms = Some(rust);
    row.note("criterion's median estimate of gate::check, parse included");
    let row = rep.value("check time", workload, "python ast reference", "ms", python);
    row.median_ms = Some(python);
    row.note("the same rules as a Python ast.NodeVisitor, embedded CPython");
    rep.ratio("check time", workload, "python ast reference", "rust gate");
    rep.write();
}
