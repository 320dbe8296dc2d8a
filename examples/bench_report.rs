//! The bench report: collects every bench's JSON results (`target/pyward-bench/*.json`,
//! written through `benches/common/report.rs`) into `docs/bench/REPORT.md`, and renders
//! `docs/bench/chart.png` through pyward itself: the results go to a job as an
//! in-memory CSV (`Job::src_bytes`), the job plots them, and its artifact is the chart.
//!
//! Run: `cargo run --release --example bench_report [-- OUT_DIR]` after the benches
//! (`make bench` runs all of them and then this). Needs the `pyward-worker` program
//! next to the example's directory (`cargo build --release --workspace --bins`) or in `PYWARD_WORKER`.
//!
//! Report layout: one section per bench, one table per metric; workloads are lines,
//! variants are columns, and each row's ratios (`ratio`, relative to `ratio_vs`) are
//! listed at the end of the line. The chart has one panel per (bench, metric) with more
//! than one number; a panel whose values span more than 20× is drawn on a log axis.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use pyward::{Executor, Job};

#[path = "../benches/common/report.rs"]
mod report;

use report::{BenchFile, Row};

/// The job that draws the chart from `results.csv`.
const CHART: &str = r#"import numpy as np
df = pd.read_csv(srcpath('results.csv'))


def short(v):
    if v != v:
        return ''
    if abs(v) >= 100:
        return '%.0f' % v
    if abs(v) >= 10:
        return '%.1f' % v
    if abs(v) >= 1:
        return '%.2f' % v
    return '%.3f' % v


panels = []
for bench, metric in zip(df['bench'], df['metric']):
    part = df[(df['bench'] == bench) & (df['metric'] == metric)]
    if (bench, metric) not in panels and len(part) > 1:
        panels.append((bench, metric))
ncols = 2
nrows = max(1, (len(panels) + ncols - 1) // ncols)
fig, axes = plt.subplots(nrows, ncols, figsize=(13, 3.8 * nrows), squeeze=False)
for ax, (bench, metric) in zip(axes.flat, panels):
    part = df[(df['bench'] == bench) & (df['metric'] == metric)]
    workloads = list(dict.fromkeys(part['workload']))
    variants = list(dict.fromkeys(part['variant']))
    width = 0.8 / len(variants)
    x = np.arange(len(workloads))
    for i, variant in enumerate(variants):
        rows = part[part['variant'] == variant].set_index('workload')['value']
        values = [rows.get(w, np.nan) for w in workloads]
        offset = (i - (len(variants) - 1) / 2) * width
        bars = ax.bar(x + offset, values, width, label=variant)
        ax.bar_label(bars, labels=[short(v) for v in values], fontsize=6)
    values = part['value']
    if (values > 0).all() and values.max() / values.min() > 20:
        ax.set_yscale('log')
        ax.set_ylabel(part['unit'].iloc[0] + ' (log)')
    else:
        ax.set_ylabel(part['unit'].iloc[0])
    ax.set_xticks(x)
    ax.set_xticklabels(workloads, fontsize=7, rotation=12, ha='right')
    ax.set_title(bench + ': ' + metric, fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(axis='y', alpha=0.3)
for ax in axes.flat[len(panels):]:
    ax.axis('off')
fig.suptitle(TITLE, fontsize=11)
fig.tight_layout(rect=(0, 0, 1, 0.985))
plt.savefig(OUT, dpi=100)
"#;

fn main() {
    let out_dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/bench"));
    let files = report::read_all();
    if files.is_empty() {
        eprintln!(
            "no results in {}: run the benches first (make bench)",
            report::results_dir().display()
        );
        std::process::exit(1);
    }
    std::fs::create_dir_all(&out_dir).expect("creating the report directory");
    // In the order the benches ran.
    let mut files: Vec<BenchFile> = files.into_iter().map(|(_, f)| f).collect();
    files.sort_by_key(|f| f.finished_unix);
    let trial = files.iter().any(|f| f.scale < 1.0);

    let markdown = render_markdown(&files, trial);
    let md_path = out_dir.join("REPORT.md");
    std::fs::write(&md_path, markdown).expect("writing REPORT.md");
    println!("wrote {}", md_path.display());

    let chart = render_chart(&files, trial);
    let png_path = out_dir.join("chart.png");
    std::fs::write(&png_path, chart).expect("writing chart.png");
    println!("wrote {}", png_path.display());
}

/// The chart, drawn by a pyward job from the rows as CSV.
fn render_chart(files: &[BenchFile], trial: bool) -> Vec<u8> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "bench", "metric", "workload", "variant", "unit", "value", "ratio", "ratio_vs",
    ])
    .expect("csv");
    for row in files.iter().flat_map(|f| &f.rows) {
        csv.write_record([
            row.bench.as_str(),
            &row.metric,
            &row.workload,
            &row.variant,
            &row.unit,
            &row.value.to_string(),
            &row.ratio.map(|r| r.to_string()).unwrap_or_default(),
            row.ratio_vs.as_deref().unwrap_or(""),
        ])
        .expect("csv");
    }
    let csv = csv.into_inner().expect("csv");
    let title = format!(
        "pyward benchmarks, {}, {} cores{}",
        report::format_utc(latest(files)),
        report::cores(),
        if trial {
            " (TRIAL: scaled-down iteration counts)"
        } else {
            ""
        }
    );
    let code = format!("TITLE = {title:?}\n{CHART}");
    let exec = Executor::builder()
        .workers(1)
        .zygote(false)
        .timeout(Duration::from_secs(60))
        .build()
        .expect("pyward starts (is pyward-worker built? cargo build --release --workspace --bins)");
    let outcome = exec
        .run(Job::new(code).src_bytes("results.csv", csv))
        .expect("the executor runs the chart job");
    match outcome.result {
        Ok(mut artifacts) => artifacts.swap_remove(0).bytes,
        Err(failure) => panic!("the chart job failed:\n{}", failure.feedback()),
    }
}

fn latest(files: &[BenchFile]) -> u64 {
    files.iter().map(|f| f.finished_unix).max().unwrap_or(0)
}

fn render_markdown(files: &[BenchFile], trial: bool) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# pyward benchmarks\n");
    if trial {
        let _ = writeln!(
            md,
            "**TRIAL RUN: iteration counts were scaled down (`PYWARD_BENCH_SCALE` < 1); \
             the numbers are noisy.**\n"
        );
    }
    let _ = writeln!(
        md,
        "Generated {} by `make bench`, which runs each bench's command below in sequence, \
         then `cargo run --release --example bench_report` (this file and `chart.png`, \
         drawn by a pyward job from the results).\n",
        report::format_utc(latest(files))
    );
    let _ = writeln!(md, "Machine: {}.\n", machine());
    if let Some(commit) = git_commit() {
        let _ = writeln!(md, "Commit when the report was written: {commit}.\n");
    }
    let _ = writeln!(
        md,
        "| bench | command | finished | load average at start (1/5/15 min) | iteration scale |"
    );
    let _ = writeln!(md, "| --- | --- | --- | --- | --- |");
    for f in files {
        let _ = writeln!(
            md,
            "| {} | `{}` | {} | {} | {} |",
            f.bench,
            f.command,
            report::format_utc(f.finished_unix),
            f.loadavg_at_start,
            f.scale
        );
    }
    let _ = writeln!(md, "\n![chart](chart.png)\n");
    let _ = writeln!(
        md,
        "Timings are medians unless a note says otherwise; ratios are `value / value of the \
         named variant` on the same line. Raw rows: `target/pyward-bench/*.json`.\n"
    );
    for f in files {
        let _ = writeln!(md, "## {}\n", f.bench);
        for metric in unique(f.rows.iter().map(|r| r.metric.as_str())) {
            let rows: Vec<&Row> = f.rows.iter().filter(|r| r.metric == metric).collect();
            table(&mut md, metric, &rows);
        }
    }
    md
}

/// One metric's rows as a table: workloads down, variants across, then the ratios and
/// the notes.
fn table(md: &mut String, metric: &str, rows: &[&Row]) {
    let workloads = unique(rows.iter().map(|r| r.workload.as_str()));
    let variants = unique(rows.iter().map(|r| r.variant.as_str()));
    let units = unique(rows.iter().map(|r| r.unit.as_str()));
    let _ = writeln!(md, "### {metric} ({})\n", units.join(", "));
    let _ = writeln!(md, "| workload | {} | ratios |", variants.join(" | "));
    let _ = writeln!(md, "| --- |{} --- |", " ---: |".repeat(variants.len()));
    for w in &workloads {
        let cells: Vec<String> = variants
            .iter()
            .map(|v| {
                rows.iter()
                    .find(|r| r.workload == *w && r.variant == *v)
                    .map_or(String::new(), |r| {
                        let n =
                            r.n.map(|n| format!(" <sub>n={n}</sub>"))
                                .unwrap_or_default();
                        format!("{}{n}", number(r.value))
                    })
            })
            .collect();
        let ratios: Vec<String> = rows
            .iter()
            .filter(|r| r.workload == *w)
            .filter_map(|r| {
                let vs = r.ratio_vs.as_ref()?;
                Some(format!("{}/{vs} {:.2}×", r.variant, r.ratio?))
            })
            .collect();
        let _ = writeln!(
            md,
            "| {w} | {} | {} |",
            cells.join(" | "),
            ratios.join(", ")
        );
    }
    // Notes, each once, labelled with what it applies to.
    let notes = unique(rows.iter().filter_map(|r| r.note.as_deref()));
    if !notes.is_empty() {
        md.push('\n');
    }
    for note in notes {
        let with: Vec<&&Row> = rows
            .iter()
            .filter(|r| r.note.as_deref() == Some(note))
            .collect();
        let their_workloads = unique(with.iter().map(|r| r.workload.as_str()));
        let their_variants = unique(with.iter().map(|r| r.variant.as_str()));
        let all_workloads = their_workloads.len() == workloads.len();
        let all_variants = their_variants.len() == variants.len();
        let label = match (all_workloads, all_variants) {
            (true, true) => "all".to_string(),
            (true, false) => their_variants.join(", "),
            (false, true) => their_workloads.join(", "),
            (false, false) => with
                .iter()
                .map(|r| format!("{} / {}", r.workload, r.variant))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let _ = writeln!(md, "- *{label}*: {note}");
    }
    md.push('\n');
}

/// Distinct items in order of first appearance.
fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    items.filter(|i| seen.insert(*i)).collect()
}

/// Three significant digits or so, without exponent notation.
fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Core count, CPU model and kernel.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    format!("{} logical cores, {cpu}, Linux {kernel}", report::cores())
}

/// The commit the benches ran on (say so if the tree had changes).
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short", "HEAD"])?;
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("`{head}` (with uncommitted changes in the working tree)")
    } else {
        format!("`{head}`")
    })
}
