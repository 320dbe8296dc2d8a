//! The table job, side by side in one run: a 5,000-row workbook in, a groupby and a
//! cost allocation in pandas, a two-sheet workbook out, checked in Rust.
//!
//! The same code three ways, interleaved so that drift in the machine's load hits each
//! alike: through pyward's warm pool (gate, staging, sandboxed worker, the declared
//! table checks), as bare `exec` in an interpreter already warm inside this process
//! (pandas and openpyxl imported: the floor; beside it the same with pandas reading
//! through calamine, as the worker does), and as a fresh `python -I` (cold). Beside
//! them: the Rust checks alone on the result (targets: ≤ 5 ms for 5,000 rows), and the
//! fixed cost of a job that draws nothing and writes one small file, the part of a
//! table job's time that is pyward's own, broken into the outcome's timings.
//!
//! Writes `target/pyward-bench/tables.json` (see `common/report.rs`); `make bench` runs
//! it, `PYWARD_BENCH_SCALE=0.1` scales the iteration counts down for a trial.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyward::validate::{Expectations, ValidationContext, Validator};

#[path = "common/report.rs"]
mod report;

const ROWS: usize = 5_000;

/// Writes `source.xlsx` (sheet `Departments`: dept_id, 部门, dept_name, region, revenue,
/// headcount) with the virtualenv's pandas.
const MAKE_SOURCE: &str = "\
import numpy as np, pandas as pd
rng = np.random.default_rng(7)
n = int(ROWS)
regions = np.array(['North', 'South', 'East', 'West', 'HQ'])
df = pd.DataFrame({
    'dept_id': np.arange(10_000, 10_000 + n),
    '部门': [f'部门{i}' for i in range(n)],
    'dept_name': [f'Dept {i}' for i in range(n)],
    'region': regions[rng.integers(0, 5, n)],
    'revenue': rng.integers(10_000, 5_000_000, n),
    'headcount': rng.integers(3, 400, n),
})
df.to_excel('source.xlsx', sheet_name='Departments', index=False)
";

/// The job: model-style pandas for \"split 1,000,000 by revenue weight within each
/// region's share, round to cents, the remainder to the first row\".
const ALLOCATE: &str = "\
import pandas as pd
TOTAL = 1_000_000.00
df = pd.read_excel('source.xlsx', sheet_name='Departments')
by_region = df.groupby('region')['revenue'].sum()
region_share = by_region / by_region.sum()
df['share'] = df['revenue'] / df['region'].map(by_region) * df['region'].map(region_share)
df['cost_allocated'] = (df['share'] * TOTAL).round(2)
remainder = round(TOTAL - df['cost_allocated'].sum(), 2)
df.loc[df.index[0], 'cost_allocated'] = round(df.loc[df.index[0], 'cost_allocated'] + remainder, 2)
summary = df.groupby('region', as_index=False)['cost_allocated'].sum()
with pd.ExcelWriter('result.xlsx', engine='openpyxl') as writer:
    df.to_excel(writer, sheet_name='Allocation', index=False)
    summary.to_excel(writer, sheet_name='Summary', index=False)
";

const CHECKS: &str = r#"
version = 1
artifacts = ["result.xlsx"]

[[tables]]
artifact = "result.xlsx"
sheet = "Allocation"
required_columns = ["dept_id", "部门", "region", "share", "cost_allocated"]
row_count = 5000
unique_keys = ["dept_id"]
no_nan = ["cost_allocated", "share"]
keys_from_input = { input = "source.xlsx", sheet = "Departments", columns = ["dept_id"] }
columns_unchanged = { input = "source.xlsx", sheet = "Departments", key = ["dept_id"], columns = ["部门", "dept_name", "revenue"] }
sums = [{ column = "cost_allocated", total = 1000000, tolerance = 0.01 }]
decimals = [{ column = "cost_allocated", max = 2 }]
bounds = [{ column = "cost_allocated", min = 0 }]
"#;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn venv_python() -> PathBuf {
    PathBuf::from(env!("PYWARD_BUILD_PYTHON"))
}

/// An in-process interpreter with the virtualenv's packages; pandas and openpyxl
/// imported and one workbook read and written, as the pool's template does.
fn warm_in_process(dir: &Path) {
    Python::initialize();
    Python::attach(|py| {
        let sys = py.import("sys").unwrap();
        let path = sys.getattr("path").unwrap();
        for p in pyward::PythonEnv::from_build().paths {
            path.call_method1("append", (p,)).unwrap();
        }
        py.import("os")
            .unwrap()
            .call_method1("chdir", (dir.to_str().unwrap(),))
            .unwrap();
        py.run(
            c"import pandas as pd, openpyxl\npd.read_excel('source.xlsx').head(1).to_excel('warm.xlsx')",
            None,
            None,
        )
        .unwrap();
    });
}

/// Bare `exec` of `code` in fresh globals holding `pd`, in `dir`, pandas reading
/// `.xlsx` with `reader` (pandas' default is openpyxl; pyward's worker reads with
/// calamine).
fn floor_reading_with(code: &str, reader: &str) {
    Python::attach(|py| {
        let pd = py.import("pandas").unwrap();
        let g = PyDict::new(py);
        g.set_item("pd", &pd).unwrap();
        let code = std::ffi::CString::new(code).unwrap();
        let option = pd
            .call_method1("option_context", ("io.excel.xlsx.reader", reader))
            .unwrap();
        option.call_method0("__enter__").unwrap();
        let ran = py.run(&code, Some(&g), None);
        option
            .call_method1("__exit__", (py.None(), py.None(), py.None()))
            .unwrap();
        ran.unwrap();
    });
}

fn floor(code: &str) {
    floor_reading_with(code, "openpyxl");
}

fn cold(code: &str, dir: &Path) {
    let status = Command::new(venv_python())
        .args(["-I", "-c", code])
        .current_dir(dir)
        .env("OPENBLAS_NUM_THREADS", "1")
        .status()
        .expect("python runs");
    assert!(status.success());
}

fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness=false benches this way
    }
    let quick = std::env::args().any(|a| a == "--test");
    let (n_warm, n_cold) = if quick {
        (2, 1)
    } else {
        (report::iterations(20, 3), report::iterations(5, 1))
    };
    // The floor runs in the job's folder (its code reads and writes bare names): the
    // results folder is fixed first, as a relative CARGO_TARGET_DIR would then move.
    if std::env::var_os("PYWARD_BENCH_DIR").is_none() {
        let dir = std::path::absolute(report::results_dir()).expect("a results folder");
        std::env::set_var("PYWARD_BENCH_DIR", dir);
    }
    let mut rep = report::Report::new("tables", "cargo bench --bench tables");
    let dir = tempfile::tempdir().unwrap();
    let make = format!("ROWS = {ROWS}\n{MAKE_SOURCE}");
    cold(&make, dir.path());
    let source = std::fs::read(dir.path().join("source.xlsx")).unwrap();
    let expect = Expectations::from_toml(CHECKS).expect("checks parse");

    warm_in_process(dir.path());
    let exec = pyward::Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
        .workers(1)
        .build()
        .expect("pool starts");
    let warm = || {
        let job = pyward::Job::new(ALLOCATE)
            .src_bytes("source.xlsx", source.clone())
            .expect(&expect);
        let (t, o) = timed(|| exec.run(job).unwrap());
        assert!(o.is_success(), "{:?}", o.result);
        (t, o)
    };
    // First uses (the pool's first pandas job, the floor's first read) are not compared.
    let (_, first) = warm();
    floor(ALLOCATE);
    floor_reading_with(ALLOCATE, "calamine");
    let (mut f, mut fc, mut w, mut c) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..n_warm {
        f.push(timed(|| floor(ALLOCATE)).0);
        fc.push(timed(|| floor_reading_with(ALLOCATE, "calamine")).0);
        w.push(warm().0);
        if i < n_cold {
            c.push(timed(|| cold(ALLOCATE, dir.path())).0);
        }
    }
    rep.latency("latency", "table job", "floor", &f)
        .note("bare exec in a warm in-process interpreter (pandas, openpyxl imported)");
    rep.latency("latency", "table job", "floor, calamine reader", &fc)
        .note("the same bare exec with pandas reading .xlsx through calamine, as the worker does");
    rep.latency("latency", "table job", "warm", &w)
        .note("Executor::run with the declared checks: gate, staging, sandboxed worker, Rust table checks");
    rep.latency("latency", "table job", "cold", &c)
        .note("a fresh `python -I` that imports pandas and runs the code");
    rep.ratio("latency", "table job", "warm", "floor");
    rep.ratio("latency", "table job", "warm", "floor, calamine reader");
    rep.ratio("latency", "table job", "cold", "warm");
    let (fm, fcm, wm, cm) = (median(f), median(fc), median(w), median(c));
    println!(
        "{:<16} {:>10} {:>14} {:>10} {:>10} {:>11} {:>10}",
        "workload", "floor ms", "floor calamine", "warm ms", "cold ms", "warm/floor", "cold/warm"
    );
    println!(
        "{:<16} {:>10.1} {:>14.1} {:>10.1} {:>10.1} {:>11.2} {:>10.1}",
        "table job",
        report::ms(fm),
        report::ms(fcm),
        report::ms(wm),
        report::ms(cm),
        report::ms(wm) / report::ms(fm),
        report::ms(cm) / report::ms(wm)
    );

    // The Rust checks alone, on the result the pool wrote.
    let inputs = tempfile::tempdir().unwrap();
    std::fs::write(inputs.path().join("source.xlsx"), &source).unwrap();
    let ctx = ValidationContext {
        artifacts: first.artifacts(),
        inputs: inputs.path(),
    };
    let checks: Vec<Duration> = (0..n_warm * 3)
        .map(|_| {
            let (t, verdict) =
                timed(|| expect.tables.iter().try_for_each(|check| check.check(&ctx)));
            verdict.expect("the checks pass");
            t
        })
        .collect();
    rep.latency("table checks", "5,000 rows", "rust", &checks)
        .note("every declared check on result.xlsx, keys and columns against source.xlsx");
    println!(
        "{:<16} {:>10.2} ms",
        "checks (Rust)",
        report::ms(median(checks))
    );

    // What a job that draws nothing costs through the pool, and where it goes: it
    // writes one small file, as a table job does.
    let nothing = "with open('note.txt', 'w') as f:\n    f.write('1')\n";
    floor(nothing);
    let (mut f, mut w) = (Vec::new(), Vec::new());
    let mut parts: Vec<pyward::Timings> = Vec::new();
    for _ in 0..n_warm * 5 {
        f.push(timed(|| floor(nothing)).0);
        let (t, o) = timed(|| exec.run(pyward::Job::new(nothing)).unwrap());
        assert!(o.is_success(), "{:?}", o.result);
        w.push(t);
        parts.push(o.timings);
    }
    rep.latency("no-figure fixed cost", "one small file", "floor", &f)
        .note("bare exec of the same code");
    rep.latency("no-figure fixed cost", "one small file", "warm", &w)
        .note("Executor::run of a job that draws nothing and writes one small file");
    // Each step of the call: the outcome's timings, then what they leave (the slot's
    // own steps around the job: choosing the worker, the nonce, emptying the slot's
    // directories, the memory reading) and the hand-off of the outcome from the slot's
    // thread to the caller's (`total` ends where the slot sends it). Per job the steps
    // add up to the call; their medians need not add up to the call's.
    const STEPS: [&str; 9] = [
        "queue",
        "gate",
        "stage",
        "exec (in worker)",
        "frames + prelude",
        "validate",
        "reset (waited)",
        "slot steps",
        "hand-off to caller",
    ];
    let per_job: Vec<[Duration; 9]> = (w.iter().zip(&parts))
        .map(|(call, t)| {
            let timed = t.queue + t.gate + t.stage + t.answer + t.validate + t.reset;
            [
                t.queue,
                t.gate,
                t.stage,
                t.exec,
                t.answer.saturating_sub(t.exec),
                t.validate,
                t.reset,
                t.total.saturating_sub(timed),
                call.saturating_sub(t.total),
            ]
        })
        .collect();
    let (fm, wm) = (median(f), median(w));
    println!(
        "\nno-figure job: floor {:.2} ms, warm {:.2} ms (floor + {:.2} ms); per step, median and 75th percentile:",
        report::ms(fm),
        report::ms(wm),
        report::ms(wm) - report::ms(fm)
    );
    let mut summed = Duration::ZERO;
    for (step, name) in STEPS.iter().enumerate() {
        let mut v: Vec<Duration> = per_job.iter().map(|d| d[step]).collect();
        v.sort();
        let (mid, p75) = (v[v.len() / 2], v[v.len() * 3 / 4]);
        summed += mid;
        rep.value(
            "no-figure fixed cost",
            "one small file",
            name,
            "ms",
            report::ms(mid),
        );
        println!(
            "  {name:<20} {:>7.3} ms {:>7.3} ms",
            report::ms(mid),
            report::ms(p75)
        );
    }
    println!(
        "  {:<20} {:>7.3} ms (the call's median less the sum of the medians)",
        "not additive",
        report::ms(wm) - report::ms(summed)
    );
    rep.write();
}
