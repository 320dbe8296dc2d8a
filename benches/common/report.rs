//! Machine-readable bench results, shared by every bench and by the report.
//!
//! Each bench collects [`Row`]s in a [`Report`] and writes them, with a little context
//! about the run, to `target/pyward-bench/<bench>.json` ([`results_dir`]).
//! `examples/bench_report.rs` reads every file there ([`read_all`]) and turns them into
//! `docs/bench/REPORT.md` and `docs/bench/chart.png`.
//!
//! Included by path, so that it stays one small file and needs no crate of its own:
//! `#[path = "common/report.rs"] mod report;` in a bench, or
//! `#[path = "../benches/common/report.rs"] mod report;` in an example.
//!
//! Adding results: pick a `bench` name (one JSON file), then one `metric` per table.
//! Rows with the same `bench` and `metric` become one table in the report (workloads as
//! lines, variants as columns) and one panel in the chart, so new comparisons (say
//! `Isolation::Fresh` vs reuse) need no change to the report:
//!
//! ```ignore
//! let mut report = Report::new("isolation", "cargo bench --bench isolation");
//! report.latency("latency", "typical", "reuse", &reuse_samples);
//! report.latency("latency", "typical", "fresh", &fresh_samples);
//! report.ratio("latency", "typical", "fresh", "reuse"); // fresh / reuse
//! report.write();
//! ```

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

#[path = "stats.rs"]
pub mod stats;
#[allow(unused_imports)] // not every bench prints milliseconds
pub use stats::ms;

/// One measured number.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Row {
    /// The bench program that measured it (one JSON file per bench).
    pub bench: String,
    /// What was measured; rows with the same `bench` and `metric` form one table and
    /// one chart panel (e.g. `latency`, `throughput`, `memory after jobs`).
    pub metric: String,
    /// What ran (e.g. `typical`, `heavy`, `per-worker PSS`): a line of the table.
    pub workload: String,
    /// How it ran (e.g. `warm`, `cold`, `floor`, `2 workers`): a column of the table.
    pub variant: String,
    /// Unit of `value`: `ms`, `jobs/s`, `MiB`, ...
    pub unit: String,
    /// The headline number: for timing samples, their median.
    pub value: f64,
    /// Median in milliseconds (rows built from timing samples; equals `value`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<f64>,
    /// Fastest sample, ms (rows built from timing samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ms: Option<f64>,
    /// Slowest sample, ms (rows built from timing samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ms: Option<f64>,
    /// Number of samples (or of jobs, for throughput).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    /// `value` divided by the `value` of the row named by `ratio_vs` (same bench, metric
    /// and workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// The variant `ratio` is relative to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_vs: Option<String>,
    /// What exactly the number means, when the names do not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Row {
    /// Attaches an explanation.
    pub fn note(&mut self, text: impl Into<String>) -> &mut Row {
        self.note = Some(text.into());
        self
    }

    /// Records the number of samples or jobs behind the value.
    pub fn n(&mut self, n: usize) -> &mut Row {
        self.n = Some(n);
        self
    }
}

/// Everything one bench wrote: the rows plus the circumstances of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchFile {
    /// The bench program.
    pub bench: String,
    /// The command that produces this file.
    pub command: String,
    /// When the bench finished, seconds since the Unix epoch.
    pub finished_unix: u64,
    /// Logical cores of the machine.
    pub cores: usize,
    /// `/proc/loadavg` when the bench started (the machine may be shared).
    pub loadavg_at_start: String,
    /// Iteration scale (`PYWARD_BENCH_SCALE`, 1 = full counts).
    pub scale: f64,
    /// The measurements.
    pub rows: Vec<Row>,
}

/// Collects the rows of one bench and writes them as JSON.
pub struct Report {
    file: BenchFile,
}

impl Report {
    /// A report for `bench`, produced by `command` (e.g. `cargo bench --bench recycle`).
    pub fn new(bench: &str, command: &str) -> Report {
        Report {
            file: BenchFile {
                bench: bench.to_string(),
                command: command.to_string(),
                finished_unix: 0,
                cores: cores(),
                loadavg_at_start: loadavg(),
                scale: scale(),
                rows: Vec::new(),
            },
        }
    }

    /// Adds a row for any number (`unit` says what it is).
    pub fn value(
        &mut self,
        metric: &str,
        workload: &str,
        variant: &str,
        unit: &str,
        value: f64,
    ) -> &mut Row {
        self.file.rows.push(Row {
            bench: self.file.bench.clone(),
            metric: metric.to_string(),
            workload: workload.to_string(),
            variant: variant.to_string(),
            unit: unit.to_string(),
            value,
            ..Row::default()
        });
        self.file.rows.last_mut().expect("just pushed")
    }

    /// Adds a row from timing samples: median (the value), min, max and count, in ms.
    pub fn latency(
        &mut self,
        metric: &str,
        workload: &str,
        variant: &str,
        samples: &[Duration],
    ) -> &mut Row {
        let (median, min, max) = summary_ms(samples);
        let row = self.value(metric, workload, variant, "ms", median);
        row.median_ms = Some(median);
        row.min_ms = Some(min);
        row.max_ms = Some(max);
        row.n = Some(samples.len());
        row
    }

    /// The rows so far.
    pub fn rows(&self) -> &[Row] {
        &self.file.rows
    }

    /// Sets `ratio` of the row (`metric`, `workload`, `variant`) to its value divided by
    /// the value of the row (`metric`, `workload`, `vs`). Both rows must exist.
    pub fn ratio(&mut self, metric: &str, workload: &str, variant: &str, vs: &str) -> f64 {
        let find = |rows: &[Row], v: &str| {
            rows.iter()
                .position(|r| r.metric == metric && r.workload == workload && r.variant == v)
                .unwrap_or_else(|| panic!("no row {metric}/{workload}/{v}"))
        };
        let base = self.file.rows[find(&self.file.rows, vs)].value;
        let at = find(&self.file.rows, variant);
        let row = &mut self.file.rows[at];
        let ratio = row.value / base;
        row.ratio = Some(ratio);
        row.ratio_vs = Some(vs.to_string());
        ratio
    }

    /// Writes `<results_dir>/<bench>.json` (atomically) and says where.
    pub fn write(&mut self) -> PathBuf {
        self.file.finished_unix = now_unix();
        let dir = results_dir();
        std::fs::create_dir_all(&dir).expect("creating the bench results directory");
        let path = dir.join(format!("{}.json", self.file.bench));
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(&self.file).expect("rows serialise");
        std::fs::write(&tmp, text + "\n").expect("writing bench results");
        std::fs::rename(&tmp, &path).expect("renaming bench results");
        println!("results: {}", path.display());
        path
    }
}

/// Median, min and max of `samples` in milliseconds (zeros when empty).
pub fn summary_ms(samples: &[Duration]) -> (f64, f64, f64) {
    let s = stats::Summary::of(samples);
    (s.median_ms, s.min_ms, s.max_ms)
}

/// `target/pyward-bench`, or `$PYWARD_BENCH_DIR`; honours `CARGO_TARGET_DIR`.
pub fn results_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PYWARD_BENCH_DIR") {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("pyward-bench")
}

/// Every `*.json` in [`results_dir`], sorted by file name.
pub fn read_all() -> Vec<(PathBuf, BenchFile)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(results_dir())
        .map(|dir| {
            dir.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            match serde_json::from_str(&text) {
                Ok(file) => Some((p, file)),
                Err(e) => {
                    eprintln!("skipping {}: {e}", p.display());
                    None
                }
            }
        })
        .collect()
}

/// Iteration scale from `PYWARD_BENCH_SCALE` (default 1: full counts; e.g. 0.1 for a
/// quick trial).
pub fn scale() -> f64 {
    std::env::var("PYWARD_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(1.0)
}

/// `full` iterations times [`scale`], at least `min`.
pub fn iterations(full: usize, min: usize) -> usize {
    ((full as f64 * scale()).round() as usize).max(min)
}

/// Logical cores of this machine.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The first three fields of `/proc/loadavg` (1, 5 and 15 minute load).
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Seconds since the Unix epoch.
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYY-MM-DD HH:MM UTC` for a Unix time (from the run records' stamp).
pub fn format_utc(unix: u64) -> String {
    let t = pyward::record::utc_stamp(unix); // YYYYMMDDTHHMMSSZ
    format!(
        "{}-{}-{} {}:{} UTC",
        &t[0..4],
        &t[4..6],
        &t[6..8],
        &t[9..11],
        &t[11..13]
    )
}
