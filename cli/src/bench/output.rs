//! What `pyward bench` reports: the table for a person, the versioned JSON report with
//! every sample, and the chart, drawn by a pyward job.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use pyward::protocol::Versions;
use pyward::{Executor, Job};

use super::{BenchArgs, FileResult, Mode};
use crate::terminal::say;

/// Version of the JSON report's shape; grows when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON report of one `pyward bench` run.
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Always `bench`.
    pub kind: &'static str,
    /// Where it ran.
    pub machine: Machine,
    /// How it ran.
    pub settings: Settings,
    /// One entry per file, in the order given.
    pub files: Vec<FileResult>,
}

/// The machine and the software measured.
#[derive(Debug, Serialize)]
pub struct Machine {
    /// Logical cores.
    pub cores: usize,
    /// `/proc/loadavg` at the end (the machine may be shared).
    pub loadavg: String,
    /// Python, numpy and matplotlib of the workers (and of the baselines).
    pub versions: Option<Versions>,
}

/// The run's settings.
#[derive(Debug, Serialize)]
pub struct Settings {
    /// Timed runs asked for, per file and mode.
    pub runs: u32,
    /// Rounds completed (fewer than `runs` when the budget ran out).
    pub rounds: u32,
    /// The time budget, in seconds.
    pub budget_s: Option<f64>,
    /// Workers of the warm pool.
    pub workers: u16,
    /// The modes measured.
    pub modes: Vec<Mode>,
    /// The seed every mode gave the generators.
    pub seed: u64,
}

impl BenchReport {
    /// The report of a finished run.
    pub fn new(
        args: &BenchArgs,
        modes: Vec<Mode>,
        versions: Option<Versions>,
        rounds: u32,
        files: Vec<FileResult>,
    ) -> BenchReport {
        BenchReport {
            schema_version: SCHEMA_VERSION,
            kind: "bench",
            machine: Machine {
                cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
                loadavg: std::fs::read_to_string("/proc/loadavg")
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default(),
                versions,
            },
            settings: Settings {
                runs: args.runs,
                rounds,
                budget_s: args.budget,
                workers: args.workers,
                modes,
                seed: super::SEED,
            },
            files,
        }
    }
}

/// The table: per file, each mode's median, p95 and run count, then the ratios and
/// whether pyward drew what plain Python draws.
pub fn print_table(report: &BenchReport) {
    let mut t = String::new();
    let names: Vec<String> = report.files.iter().map(|f| file_name(&f.file)).collect();
    let w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(
        t,
        "{:<w$} {:<6} {:>11} {:>11} {:>5}",
        "file", "mode", "median ms", "p95 ms", "runs"
    );
    for (f, name) in report.files.iter().zip(names) {
        if f.status != "ok" {
            let _ = writeln!(t, "{name:<w$} {} (not timed)", f.status);
            for line in f.feedback.as_deref().unwrap_or("").lines() {
                let _ = writeln!(t, "    {line}");
            }
            continue;
        }
        for (i, (mode, m)) in f.modes.iter().enumerate() {
            let shown = if i == 0 { name.as_str() } else { "" };
            let _ = writeln!(
                t,
                "{shown:<w$} {:<6} {:>11.2} {:>11.2} {:>5}",
                mode.name(),
                m.summary.median_ms,
                m.summary.p95_ms,
                m.summary.n
            );
            if let Some(e) = &m.error {
                let _ = writeln!(t, "{:<w$}   a run failed: {}", "", first_line(e));
            }
        }
        let ratios: Vec<String> = f
            .ratios
            .iter()
            .map(|(k, v)| format!("{k} {v:.2}x"))
            .collect();
        let same = match &f.same_output {
            Some(c) if c.identical_bytes => "same bytes as plain Python".to_string(),
            Some(c) if c.identical_pixels == Some(true) => {
                "same pixels as plain Python".to_string()
            }
            Some(c) => format!(
                "differs from plain Python: {}",
                c.detail.as_deref().unwrap_or("?")
            ),
            None => String::new(),
        };
        let _ = writeln!(t, "{:<w$}   {}; {same}", "", ratios.join(", "));
    }
    let s = &report.settings;
    let _ = writeln!(
        t,
        "{} of {} rounds, modes interleaved in a shuffled order each round; seed {}",
        s.rounds, s.runs, s.seed
    );
    // Feedback and a failed run's stderr are the job's or plain Python's words.
    say!("{}", t.trim_end_matches('\n'));
}

/// The file name of a path as given (the whole path when it has none).
pub fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The chart job: grouped bars of the medians per file and mode, log scale.
const CHART: &str = r#"import numpy as np
df = pd.read_csv(srcpath('medians.csv'))
files = list(dict.fromkeys(df['file']))
modes = list(dict.fromkeys(df['mode']))
fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(files) * len(modes) / 2), 4.2))
width = 0.8 / len(modes)
x = np.arange(len(files))
for i, mode in enumerate(modes):
    part = df[df['mode'] == mode].set_index('file')['median_ms']
    values = [part.get(f, np.nan) for f in files]
    bars = ax.bar(x + (i - (len(modes) - 1) / 2) * width, values, width, label=mode)
    ax.bar_label(bars, labels=['%.0f' % v if v >= 10 else '%.1f' % v for v in values], fontsize=7)
ax.set_yscale('log')
ax.set_ylabel('median ms per run (log)')
ax.set_xticks(x)
ax.set_xticklabels(files, fontsize=8)
ax.set_title(TITLE, fontsize=10)
ax.legend(fontsize=8)
ax.grid(axis='y', alpha=0.3)
fig.tight_layout()
fig.savefig(OUT, dpi=100)
"#;

/// Draws the chart with a job on `exec` and writes it to `path`.
pub fn chart(exec: &Executor, report: &BenchReport, path: &Path) -> Result<(), String> {
    let mut csv = String::from("file,mode,median_ms\n");
    for f in report.files.iter().filter(|f| f.status == "ok") {
        let name = file_name(&f.file);
        for (mode, m) in &f.modes {
            if m.summary.n > 0 {
                let _ = writeln!(
                    csv,
                    "\"{}\",{},{}",
                    name.replace('"', "\"\""),
                    mode.name(),
                    m.summary.median_ms
                );
            }
        }
    }
    let title = format!(
        "pyward bench: median per run, {} cores, {} rounds",
        report.machine.cores, report.settings.rounds
    );
    let job = Job::new(format!("TITLE = {title:?}\n{CHART}"))
        .src_bytes("medians.csv", csv.into_bytes())
        .describe_figures(false);
    let outcome = exec.run(job).map_err(|e| e.to_string())?;
    match outcome.result {
        Ok(artifacts) => std::fs::write(path, &artifacts[0].bytes)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(failure) => Err(failure.feedback()),
    }
}
