//! `pyward bench FILE...`: warm versus cold on the user's own scripts.
//!
//! Each file runs four ways, measured side by side in one run with the modes interleaved
//! in a shuffled order every round (machine drift hits all alike):
//!
//! - **warm**: the pool (`Isolation::Reuse`), `Executor::run` from call to outcome;
//! - **fresh**: `Isolation::Fresh`, a process forked for every job;
//! - **cold**: a new `python -I` of the same interpreter that imports what the job needs
//!   and runs it, process start to exit;
//! - **floor**: bare `exec` in an interpreter that is already warm, stock matplotlib.
//!
//! Every file is checked first: a failing job is reported with its feedback and not
//! timed, and the figure pyward draws is compared with the one plain Python draws
//! (bytes, else pixels).

mod baseline;
mod output;
#[path = "../../../benches/common/stats.rs"]
mod stats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use serde::Serialize;

use pyward::{Executor, Isolation, Job, PythonEnv};

use baseline::{Floor, Harness, Request};
use stats::Summary;

use crate::exit::{EXIT_INFRA, EXIT_JOB_FAILED, EXIT_USAGE};
use crate::terminal::tell;

/// The seed every mode gives numpy's and `random`'s generators.
const SEED: u64 = 1;

/// `pyward bench` arguments.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Python files to measure.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Directory of input files, readable by the code through srcpath('name').
    #[arg(long)]
    src: Option<PathBuf>,
    /// Timed runs per file and mode.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Worker processes of the warm pool.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// The modes to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "warm,fresh,cold,floor")]
    modes: Vec<Mode>,
    /// Print the versioned JSON report (every sample) instead of the table.
    #[arg(long)]
    json: bool,
    /// Write a PNG bar chart of the medians (log scale), drawn by a pyward job.
    #[arg(long)]
    chart: Option<PathBuf>,
    /// Stop timing after this many seconds; the report says how many runs each mode got.
    #[arg(long)]
    budget: Option<f64>,
    /// Per-run wall-clock limit, in seconds.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
}

/// One way of running a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The warm pool.
    Warm,
    /// A process forked for every job.
    Fresh,
    /// A new `python -I` per run.
    Cold,
    /// Bare `exec` in a warm interpreter.
    Floor,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Warm => "warm",
            Mode::Fresh => "fresh",
            Mode::Cold => "cold",
            Mode::Floor => "floor",
        }
    }
}

/// One file's script and what it needs.
struct Script {
    path: PathBuf,
    code: String,
    pandas: bool,
    loadmat: bool,
}

/// Everything a run needs: the pools, the harness, the floor's interpreter.
struct Runners {
    warm: Executor,
    fresh: Option<Executor>,
    harness: Harness,
    floor: Option<Floor>,
    src: PathBuf,
    scratch: tempfile::TempDir,
    /// Python, numpy and matplotlib of the workers, from the first job.
    versions: Option<pyward::protocol::Versions>,
}

impl Script {
    /// This script as a plain-Python run reading `src` and writing `out`.
    fn request<'a>(&'a self, src: &'a Path, out: &'a Path) -> Request<'a> {
        Request {
            code: &self.code,
            src,
            out,
            seed: SEED,
            pandas: self.pandas,
            loadmat: self.loadmat,
        }
    }
}

impl Runners {
    fn job(&self, script: &Script) -> Job {
        Job::new(script.code.as_str()).src_dir(&self.src).seed(SEED)
    }

    /// One timed run of `script` in `mode`.
    fn time(&mut self, script: &Script, mode: Mode) -> Result<Duration, String> {
        let out = self.scratch.path().join("timed.png");
        match mode {
            Mode::Warm | Mode::Fresh => {
                let exec = if mode == Mode::Warm {
                    &self.warm
                } else {
                    self.fresh.as_ref().expect("fresh pool built")
                };
                let start = Instant::now();
                let outcome = exec.run(self.job(script)).map_err(|e| e.to_string())?;
                let elapsed = start.elapsed();
                match outcome.failure() {
                    None => Ok(elapsed),
                    Some(f) => Err(f.feedback()),
                }
            }
            Mode::Cold => self.harness.cold(&script.request(&self.src, &out)),
            Mode::Floor => self
                .floor
                .as_mut()
                .expect("floor started")
                .run(&script.request(&self.src, &out)),
        }
    }
}

/// What `pyward bench` found for one file.
#[derive(Debug, Serialize)]
pub struct FileResult {
    /// The file as given.
    pub file: String,
    /// `ok`, or the failure's status word (then nothing was timed).
    pub status: String,
    /// The failure's feedback, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Whether pyward's figure and plain Python's are the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_output: Option<Comparison>,
    /// Per mode: the summary and every sample, in ms.
    pub modes: BTreeMap<Mode, ModeResult>,
    /// warm/floor, cold/warm, fresh/warm of the medians (when both were measured).
    pub ratios: BTreeMap<String, f64>,
}

/// Timing of one mode.
#[derive(Debug, Serialize)]
pub struct ModeResult {
    /// Median, p95, min, max.
    #[serde(flatten)]
    pub summary: Summary,
    /// Every sample, in ms, in the order taken.
    pub samples_ms: Vec<f64>,
    /// A run that failed while timing (it is not a sample).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// pyward's figure against plain Python's, same code and seed.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// The files are byte for byte the same.
    pub identical_bytes: bool,
    /// The decoded pixels are the same (PNG only; `None` when not compared).
    pub identical_pixels: Option<bool>,
    /// What differs, when something does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Runs `pyward bench`; returns the exit code.
pub fn bench(args: BenchArgs) -> u8 {
    let mut modes = args.modes.clone();
    modes.sort();
    modes.dedup();
    let scripts = match read_scripts(&args.files) {
        Ok(s) => s,
        Err(e) => {
            tell!("pyward bench: {e}");
            return EXIT_USAGE;
        }
    };
    let mut runners = match start(&args, &scripts, &modes) {
        Ok(r) => r,
        Err(e) => {
            tell!("pyward bench: {e}");
            return EXIT_INFRA;
        }
    };
    let mut results: Vec<FileResult> = scripts
        .iter()
        .map(|s| check(&mut runners, s, &modes))
        .collect();
    let budget = args.budget.map(Duration::from_secs_f64);
    let rounds = measure(
        &mut runners,
        &scripts,
        &mut results,
        &modes,
        args.runs,
        budget,
    );
    for r in &mut results {
        r.ratios = ratios(&r.modes);
    }
    let report = output::BenchReport::new(&args, modes, runners.versions.clone(), rounds, results);
    if let Some(path) = &args.chart {
        if let Err(e) = output::chart(&runners.warm, &report, path) {
            tell!("pyward bench: the chart: {e}");
            return EXIT_INFRA;
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("the report serializes")
        );
    } else {
        output::print_table(&report);
    }
    if report.files.iter().any(|f| f.status != "ok") {
        EXIT_JOB_FAILED
    } else {
        0
    }
}

fn read_scripts(files: &[PathBuf]) -> Result<Vec<Script>, String> {
    files
        .iter()
        .map(|path| {
            let code =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Script {
                pandas: pyward::gate::mentions_name(&code, "pd"),
                loadmat: pyward::gate::mentions_name(&code, "loadmat"),
                path: path.clone(),
                code,
            })
        })
        .collect()
}

fn start(args: &BenchArgs, scripts: &[Script], modes: &[Mode]) -> Result<Runners, String> {
    let timeout = Duration::from_secs_f64(args.timeout.max(0.1));
    let pandas = scripts.iter().any(|s| s.pandas);
    let pool = |isolation: Isolation| {
        Executor::builder()
            .workers(usize::from(args.workers))
            // The user's own scripts: one trust domain.
            .reuse_across_tenants(true)
            .isolation(isolation)
            .preload_pandas(pandas)
            .timeout(timeout)
            .build()
            .map_err(|e| e.to_string())
    };
    let warm = pool(Isolation::Reuse)?;
    let fresh = modes
        .contains(&Mode::Fresh)
        .then(|| pool(Isolation::Fresh))
        .transpose()?;
    let python = PythonEnv::from_env_or_build().map_err(|e| e.to_string())?;
    let harness = Harness::new(PathBuf::from(&python.executable)).map_err(|e| e.to_string())?;
    let floor = modes
        .contains(&Mode::Floor)
        .then(|| harness.floor())
        .transpose()
        .map_err(|e| format!("the floor's interpreter: {e}"))?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let src = match &args.src {
        Some(dir) => dir.clone(),
        None => scratch.path().join("no-inputs"),
    };
    std::fs::create_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    Ok(Runners {
        warm,
        fresh,
        harness,
        floor,
        src,
        scratch,
        versions: None,
    })
}

/// Runs the file once through pyward and once as plain Python, untimed: a failing job
/// is reported (and not timed), and the two figures are compared. Also warms every mode
/// up (first-use costs are not what is compared).
fn check(runners: &mut Runners, script: &Script, modes: &[Mode]) -> FileResult {
    let mut result = FileResult {
        file: script.path.display().to_string(),
        status: "ok".into(),
        feedback: None,
        same_output: None,
        modes: BTreeMap::new(),
        ratios: BTreeMap::new(),
    };
    let outcome = match runners.warm.run(runners.job(script)) {
        Ok(o) => o,
        Err(e) => {
            result.status = "infrastructure_error".into();
            result.feedback = Some(e.to_string());
            return result;
        }
    };
    if runners.versions.is_none() {
        runners.versions = outcome.worker.as_ref().map(|w| w.versions.clone());
    }
    if let Some(failure) = outcome.failure() {
        result.status = failure.status().into();
        result.feedback = Some(failure.feedback());
        return result;
    }
    let plain = runners.scratch.path().join("plain.png");
    let _ = std::fs::remove_file(&plain);
    match runners.harness.cold(&script.request(&runners.src, &plain)) {
        Ok(_) => {
            let ours = outcome.artifact("figure.png").map(|a| a.bytes.as_slice());
            let theirs = std::fs::read(&plain).ok();
            result.same_output = Some(compare(ours, theirs.as_deref()));
        }
        Err(e) => {
            result.status = "plain_python_failed".into();
            result.feedback = Some(format!("plain Python could not run it: {e}"));
            return result;
        }
    }
    // The check run above warmed the pool; cold has nothing to warm.
    for &mode in modes {
        if !matches!(mode, Mode::Warm | Mode::Cold) {
            if let Err(e) = runners.time(script, mode) {
                result.status = format!("{}_failed", mode.name());
                result.feedback = Some(e);
                return result;
            }
        }
    }
    result
}

fn compare(ours: Option<&[u8]>, theirs: Option<&[u8]>) -> Comparison {
    let (Some(ours), Some(theirs)) = (ours, theirs) else {
        return Comparison {
            identical_bytes: false,
            identical_pixels: None,
            detail: Some("one of the two wrote no figure.png".into()),
        };
    };
    if ours == theirs {
        return Comparison {
            identical_bytes: true,
            identical_pixels: Some(true),
            detail: None,
        };
    }
    use pyward::validate::png_pixels;
    match (png_pixels(ours), png_pixels(theirs)) {
        (Ok(a), Ok(b)) => {
            let same = a == b;
            Comparison {
                identical_bytes: false,
                identical_pixels: Some(same),
                detail: (!same).then(|| {
                    format!(
                        "{}x{} vs {}x{} pixels, contents differ",
                        a.width, a.height, b.width, b.height
                    )
                }),
            }
        }
        (Err(e), _) | (_, Err(e)) => Comparison {
            identical_bytes: false,
            identical_pixels: None,
            detail: Some(format!("not compared as pixels: {e}")),
        },
    }
}

/// The timed rounds: every round runs each (passing) file once in every mode, in a
/// shuffled order; stops after `runs` rounds or when `budget` is spent. Returns the
/// number of rounds completed.
fn measure(
    runners: &mut Runners,
    scripts: &[Script],
    results: &mut [FileResult],
    modes: &[Mode],
    runs: u32,
    budget: Option<Duration>,
) -> u32 {
    let passing: Vec<usize> = (0..scripts.len())
        .filter(|&i| results[i].status == "ok")
        .collect();
    let total = u64::from(runs) * (passing.len() * modes.len()) as u64;
    let bar = indicatif::ProgressBar::new(total).with_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, {msg}",
        )
        .expect("a valid template"),
    );
    let started = Instant::now();
    let mut samples: Vec<BTreeMap<Mode, Vec<Duration>>> = vec![BTreeMap::new(); scripts.len()];
    let mut errors: Vec<BTreeMap<Mode, String>> = vec![BTreeMap::new(); scripts.len()];
    let mut rounds = 0;
    'rounds: for _ in 0..runs {
        for &i in &passing {
            let mut order = modes.to_vec();
            fastrand::shuffle(&mut order);
            for mode in order {
                if budget.is_some_and(|b| started.elapsed() >= b) {
                    break 'rounds;
                }
                let name = output::file_name(&scripts[i].path.to_string_lossy());
                bar.set_message(format!("{name} {}", mode.name()));
                match runners.time(&scripts[i], mode) {
                    Ok(d) => samples[i].entry(mode).or_default().push(d),
                    Err(e) => {
                        errors[i].entry(mode).or_insert(e);
                    }
                }
                bar.inc(1);
            }
        }
        rounds += 1;
    }
    bar.finish_and_clear();
    for &i in &passing {
        for &mode in modes {
            let taken = samples[i].remove(&mode).unwrap_or_default();
            results[i].modes.insert(
                mode,
                ModeResult {
                    summary: Summary::of(&taken),
                    samples_ms: taken.iter().map(|d| stats::ms(*d)).collect(),
                    error: errors[i].remove(&mode),
                },
            );
        }
    }
    rounds
}

/// warm/floor, cold/warm and fresh/warm of the medians, where both were measured.
fn ratios(modes: &BTreeMap<Mode, ModeResult>) -> BTreeMap<String, f64> {
    let median = |m: Mode| {
        modes
            .get(&m)
            .map(|r| r.summary.median_ms)
            .filter(|&v| v > 0.0)
    };
    [
        ("warm/floor", Mode::Warm, Mode::Floor),
        ("cold/warm", Mode::Cold, Mode::Warm),
        ("fresh/warm", Mode::Fresh, Mode::Warm),
    ]
    .into_iter()
    .filter_map(|(name, a, b)| Some((name.to_string(), median(a)? / median(b)?)))
    .collect()
}
