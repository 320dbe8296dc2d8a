//! What a caller gets back for one job: artifacts, or a failure it can match on and a
//! `feedback()` text a model can fix its code from.

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::figure::FigureSummary;
use crate::gate::{BadInput, Violation};
use crate::sandbox::{Enforcement, ScratchLimit};

/// Longest stderr tail a failure carries, in characters: what the job wrote to
/// `sys.stderr`, then what its process wrote below Python, newest kept. It is read by
/// a model, so it is the shortest of the three stderr caps (the others: what a job may
/// write, `_JOB_STDERR_CAP` in `python/prelude/state.py`, and what the host keeps of a worker
/// process's own stderr, `STDERR_KEEP` in `supervisor/launch.rs`).
pub const STDERR_TAIL_CHARS: usize = 1500;

/// Bytes of what a job writes to `sys.stderr` that reach the host, the first kept
/// (`_JOB_STDERR_CAP` in `python/prelude/state.py`); a worker that sends more breaks the
/// protocol.
pub const JOB_STDERR_CAP: usize = 16384;

/// The result of one job: its artifacts or its failure, plus what it printed, how long
/// each step took, which worker ran it and the seed it was given.
///
/// Its JSON form (`serde`) is its [`Report`](crate::report::Report), artifacts embedded.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outcome {
    /// Artifacts on success, the job's own failure otherwise.
    pub result: Result<Vec<Artifact>, JobFailure>,
    /// What the job printed to stdout, capped (see `ExecutorBuilder::stdout_cap`).
    pub stdout: String,
    /// Bytes of stdout dropped past the cap.
    pub stdout_dropped: u64,
    /// What the job wrote to stderr (warnings, logging's default handler), its first
    /// [`JOB_STDERR_CAP`] bytes, when the code ran to its end: a model reads its
    /// `FutureWarning`s and its own log lines here. A job that raised carries it in its
    /// error's `stderr_tail` instead.
    pub stderr: String,
    /// Time spent in each step.
    pub timings: Timings,
    /// The worker that ran the job (`None` when it never reached one).
    pub worker: Option<WorkerInfo>,
    /// Seed given to numpy's and `random`'s global generators.
    pub seed: u64,
    /// `false` when the job ran with the static gate switched off
    /// ([`Policy::gate_disabled_for_testing`](crate::gate::Policy::gate_disabled_for_testing)).
    pub gate_enabled: bool,
    /// Set when the worker that ran this job was taken out of service after it, and why.
    /// The job's own result stands: a worker is retired when *its* state after the job
    /// cannot be trusted, whoever caused that.
    pub retired: Option<Retirement>,
}

impl Outcome {
    /// The outcome of a job that never reached a worker (refused by the gate, or
    /// cancelled while queued).
    pub(crate) fn not_run(
        failure: JobFailure,
        timings: Timings,
        seed: u64,
        gate_enabled: bool,
    ) -> Outcome {
        Outcome {
            result: Err(failure),
            stdout: String::new(),
            stdout_dropped: 0,
            stderr: String::new(),
            timings,
            worker: None,
            seed,
            gate_enabled,
            retired: None,
        }
    }

    /// `true` when the job produced valid artifacts.
    pub fn is_success(&self) -> bool {
        self.result.is_ok()
    }

    /// The artifacts, or an empty slice on failure.
    pub fn artifacts(&self) -> &[Artifact] {
        self.result.as_deref().unwrap_or(&[])
    }

    /// The artifact with this file name.
    pub fn artifact(&self, name: &str) -> Option<&Artifact> {
        self.artifacts().iter().find(|a| a.name == name)
    }

    /// The job's figure for a caller that expects one: the artifact named `out` (the
    /// job's `OUT`), else the only figure the job made, whatever the code named it
    /// (`plt.savefig("novice.png")`); `None` when it made none, or several and none
    /// named `out`.
    pub fn figure(&self, out: &str) -> Option<&Artifact> {
        main_figure(out, self.artifacts())
    }

    /// The failure, if any.
    pub fn failure(&self) -> Option<&JobFailure> {
        self.result.as_ref().err()
    }

    /// Stable status word: `ok` or [`JobFailure::status`].
    pub fn status(&self) -> &'static str {
        self.failure().map_or("ok", JobFailure::status)
    }

    /// For a successful job, what its figures show, one paragraph each (see
    /// [`FigureSummary::text`]): a model checks the figure against its task from this.
    /// `None` on failure, or when no artifact has a summary.
    pub fn description(&self) -> Option<String> {
        let artifacts = self.result.as_ref().ok()?;
        let parts: Vec<String> = artifacts
            .iter()
            .filter_map(|a| a.figure.as_ref().map(|f| (a, f)))
            .map(|(a, f)| {
                if artifacts.len() > 1 {
                    format!("{}: {}", a.name, f.text())
                } else {
                    f.text()
                }
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n"))
    }

    /// Text for a model: what went wrong and how to do it right (`None` on success).
    pub fn feedback(&self) -> Option<String> {
        self.failure().map(JobFailure::feedback)
    }
}

/// Why a worker was retired after a job (see [`Outcome::retired`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retirement {
    /// The kind of reason.
    pub reason: RetireReason,
    /// What exactly failed or changed, for a person (capped).
    pub detail: String,
}

/// The kind of reason a worker was retired after a job.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RetireReason {
    /// A step of the between-job reset failed (the job left state behind that could not
    /// be reset), so the process is in an unknown state.
    ResetFailed,
    /// Process-wide library state (a registry, an option table) changed during the job
    /// and could not be restored exactly.
    StateChanged,
    /// The worker ran its quota of jobs
    /// ([`ExecutorBuilder::max_jobs_per_worker`](crate::ExecutorBuilder::max_jobs_per_worker)).
    JobQuota,
    /// The slot's directories could not be emptied after the job.
    Workspace,
    /// The worker's private memory grew past the soft limit
    /// ([`ExecutorBuilder::memory_growth_limit`](crate::ExecutorBuilder::memory_growth_limit)).
    MemoryGrowth,
}

impl RetireReason {
    /// Stable word for JSON and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            RetireReason::ResetFailed => "reset_failed",
            RetireReason::StateChanged => "state_changed",
            RetireReason::JobQuota => "job_quota",
            RetireReason::Workspace => "workspace",
            RetireReason::MemoryGrowth => "memory_growth",
        }
    }
}

/// One file the job produced (in JSON: a
/// [`report::ArtifactReport`](crate::report::ArtifactReport)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Artifact {
    /// File name inside the job's output directory. **Untrusted**: the job's code chose
    /// it (and the worker that sent it runs that code), so it is input from the job,
    /// like its code. Never join it to a path of your own: write through
    /// [`OutputDir`](crate::output_dir::OutputDir) (`write_artifact`,
    /// `write_artifacts`), which checks it is one plain file name and cannot write
    /// outside its directory, or check it with
    /// [`check_file_name`](crate::output_dir::check_file_name) before any other use.
    pub name: String,
    /// Media type derived from the checked content (`image/png`, ...).
    pub media_type: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// What the figure shows, read when it was saved (`None` for other files, or when
    /// [`Job::describe_figures`](crate::Job::describe_figures) is off).
    pub figure: Option<FigureSummary>,
    /// How the job made it (`None`: the worker did not say, as for a file it found in
    /// the output directory without a write it saw).
    pub obtained: Option<Obtained>,
    /// The path the code asked for when it was not a plain name in the output
    /// directory (`/mnt/data/plot.png`, `../x.png`, `out/fig1.png`): the file went to
    /// the output directory under its base name instead. **Untrusted** text of the
    /// job's; show it escaped.
    pub requested: Option<String>,
}

impl Artifact {
    /// A file as a [`Validator`](crate::validate::Validator) is given it, for testing a
    /// validator of your own (or fuzzing the table checks) without running a job; no
    /// figure summary, nothing said of how it was made.
    pub fn new(name: impl Into<String>, media_type: impl Into<String>, bytes: Vec<u8>) -> Artifact {
        Artifact {
            name: name.into(),
            media_type: media_type.into(),
            bytes,
            figure: None,
            obtained: None,
            requested: None,
        }
    }
}

pub use crate::protocol::Obtained;

/// Which worker ran a job.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct WorkerInfo {
    /// Pool slot, `0..workers`.
    pub slot: usize,
    /// Operating-system process id.
    pub pid: u32,
    /// How many jobs this process had run before this one.
    pub jobs_before: u64,
    /// What the kernel enforces in this worker.
    pub sandbox: Enforcement,
    /// Versions of Python, numpy and matplotlib in this worker.
    pub versions: crate::protocol::Versions,
    /// Whether this worker saves figures with render-once.
    pub render_once: bool,
}

/// Time spent in each step of one job.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct Timings {
    /// From `run` being called to a worker taking the job.
    pub queue: Duration,
    /// Static gate.
    pub gate: Duration,
    /// Staging inputs into the worker's `src/`.
    pub stage: Duration,
    /// Executing the code, as measured inside the worker.
    pub exec: Duration,
    /// Of `exec`, describing the saved figures ([`Job::describe_figures`](crate::Job::describe_figures)).
    pub describe: Duration,
    /// Validating the artifacts.
    pub validate: Duration,
    /// From the job handed to the worker to its answer read and checked: `exec`, the
    /// prelude's work around it (the job's globals, collecting what it wrote) and the
    /// frames both ways.
    #[serde(default)]
    pub answer: Duration,
    /// Waiting, after the answer, for the worker's report of its between-job reset
    /// (housekeeping, the state guard's check, emptying its directories): the outcome
    /// says whether the reset retired the worker, so it waits for the report. Figures
    /// are encoded and checked meanwhile; only what is left of the reset is counted.
    #[serde(default)]
    pub reset: Duration,
    /// From `run` being called to the outcome.
    pub total: Duration,
}

/// A job's own failure. Every variant has a [`feedback`](JobFailure::feedback) text.
#[derive(thiserror::Error, Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobFailure {
    /// The static gate refused the code; nothing ran.
    #[error("rejected by the gate ({} violation(s))", violations.len())]
    Rejected {
        /// Every violation found.
        violations: Vec<Violation>,
        /// The gate's teaching text for a model.
        teaching: String,
    },
    /// The source could not be analysed at all (not UTF-8, NUL byte, too large, too deep).
    #[error("{0}")]
    BadInput(BadInput),
    /// The job ran past its wall-clock deadline and its worker was killed.
    #[error("timed out after {limit:?}")]
    Timeout {
        /// The deadline that was exceeded.
        limit: Duration,
        /// Where the code was when it was stopped, when the worker could say.
        stopped_at: Option<Box<StoppedAt>>,
    },
    /// The job used more memory than allowed.
    #[error("memory limit of {limit_bytes} bytes exceeded")]
    MemoryExceeded {
        /// The ceiling that was exceeded.
        limit_bytes: u64,
        /// The `MemoryError` the code raised, when an allocation failed inside it
        /// (numpy's "Unable to allocate 298. GiB for an array with shape ..." and the
        /// line); `None` when the worker was stopped from outside.
        raised: Option<Box<PythonError>>,
    },
    /// The worker process died (segfault, abort) while running the job.
    #[error("worker crashed ({exit}; {detail})")]
    WorkerCrashed {
        /// How it ended: the signal or exit code.
        exit: WorkerExit,
        /// What the supervisor saw, e.g. the worker closing its pipe.
        detail: String,
        /// The tail of its stderr.
        stderr_tail: String,
    },
    /// The code raised an exception.
    #[error("{}: {}", .0.type_name, .0.message)]
    PythonError(PythonError),
    /// The job used up what it may write in total (its scratch file system) and its
    /// writes were stopped.
    #[error("scratch space full: {} limit of {limit}", match .which { ScratchLimit::Bytes => "bytes", ScratchLimit::Files => "file-count" })]
    ScratchFull {
        /// Which limit was reached.
        which: ScratchLimit,
        /// Its value (bytes, or files and directories).
        limit: u64,
    },
    /// The caller cancelled the job (dropped its [`JobFuture`](crate::JobFuture) or
    /// used a [`CancelHandle`](crate::CancelHandle)) before it finished. A job that was
    /// running had its worker killed.
    #[error("cancelled by the caller")]
    Cancelled,
    /// The worker broke its protocol with the host while running the job: a frame the
    /// host refused (a forged or malformed answer, a number out of range, an artifact
    /// name that is not one plain file name, more or larger artifacts than allowed).
    /// The worker runs the job's code, so the job is what spoke: its worker was killed
    /// and replaced, and nothing it sent was used.
    #[error("protocol violation: {detail}")]
    ProtocolViolation {
        /// What the host refused (never a value of the job's choosing beyond a short,
        /// escaped excerpt).
        detail: String,
    },
    /// The code ran but its output is missing or not what it claims to be.
    #[error("invalid output: {check}: {detail}")]
    InvalidOutput {
        /// Which check failed (stable id, e.g. `missing`, `not-png`).
        check: String,
        /// What exactly was wrong.
        detail: String,
    },
}

/// How a worker process ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum WorkerExit {
    /// Killed by a signal (`11` is SIGSEGV, `6` SIGABRT, `31` SIGSYS from seccomp).
    Signal {
        /// The signal number.
        number: i32,
    },
    /// Exited with this code.
    Code {
        /// The exit code.
        code: i32,
    },
    /// The exit status could not be read (the process was not reaped in time).
    Unknown,
}

impl WorkerExit {
    /// The signal's name (`SIGSEGV`, ...), for a signal this crate names.
    pub fn signal_name(self) -> Option<&'static str> {
        let WorkerExit::Signal { number } = self else {
            return None;
        };
        Some(match number {
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGABRT => "SIGABRT",
            libc::SIGKILL => "SIGKILL",
            libc::SIGBUS => "SIGBUS",
            libc::SIGFPE => "SIGFPE",
            libc::SIGILL => "SIGILL",
            libc::SIGSYS => "SIGSYS",
            libc::SIGXFSZ => "SIGXFSZ",
            libc::SIGXCPU => "SIGXCPU",
            libc::SIGTERM => "SIGTERM",
            _ => return None,
        })
    }
}

impl std::fmt::Display for WorkerExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            WorkerExit::Signal { number } => match self.signal_name() {
                Some(name) => write!(f, "signal {number} ({name})"),
                None => write!(f, "signal {number}"),
            },
            WorkerExit::Code { code } => write!(f, "exit code {code}"),
            WorkerExit::Unknown => f.write_str("exit status unknown"),
        }
    }
}

/// A Python exception raised by job code, reduced to what a model needs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct PythonError {
    /// Exception type, e.g. `KeyError`.
    pub type_name: String,
    /// `str(exception)`, truncated.
    pub message: String,
    /// Line in the job's code.
    pub line: Option<u32>,
    /// Traceback limited to the job's own frames.
    pub traceback: String,
    /// Tail of stderr, at most [`STDERR_TAIL_CHARS`] characters.
    pub stderr_tail: String,
    /// What exists and what to write instead (the closest name, the frame's columns,
    /// the replacement of a removed API, ...), empty when there is nothing to add.
    #[serde(default)]
    pub hint: String,
}

/// Where a job's code was when its deadline stopped it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoppedAt {
    /// The line of the job's code that was running (innermost job frame).
    pub line: u32,
    /// The job's frames at that moment, outermost first, as in a traceback.
    pub traceback: String,
    /// The innermost `for`/`while` loop around that line: its first line and header.
    pub in_loop: Option<(u32, String)>,
}

const HOW_TO: &str = "How to write a job: inputs are read-only files; get a path with \
srcpath('name.csv') (listdir() and walkfiles() list them), e.g. pd.read_csv(srcpath('data.csv')) \
or loadmat(srcpath('scan.mat')). Save the figure with plt.savefig(OUT). np, plt, pd and loadmat \
are already available.";

impl JobFailure {
    /// The gate's answer as a job failure: `BadInput` for source it could not analyse,
    /// `Rejected` (with its teaching text) for code it refused, `None` when allowed.
    pub fn from_gate(
        checked: Result<crate::gate::Verdict, BadInput>,
        policy: &crate::gate::Policy,
    ) -> Option<JobFailure> {
        match checked {
            Err(bad) => Some(JobFailure::BadInput(bad)),
            Ok(verdict) if verdict.is_allowed() => None,
            Ok(verdict) => Some(JobFailure::Rejected {
                teaching: verdict.teaching_text(policy),
                violations: verdict.violations,
            }),
        }
    }

    /// Stable status word, as used by the CLI's `--json` output.
    pub fn status(&self) -> &'static str {
        match self {
            JobFailure::Rejected { .. } => "rejected",
            JobFailure::BadInput(_) => "bad_input",
            JobFailure::Timeout { .. } => "timeout",
            JobFailure::MemoryExceeded { .. } => "memory_exceeded",
            JobFailure::WorkerCrashed { .. } => "crashed",
            JobFailure::ProtocolViolation { .. } => "protocol_violation",
            JobFailure::PythonError(_) => "python_error",
            JobFailure::InvalidOutput { .. } => "invalid_output",
            JobFailure::ScratchFull { .. } => "scratch_full",
            JobFailure::Cancelled => "cancelled",
        }
    }

    /// A text written for a model: what went wrong in this code and how to do it right.
    /// As short as carries the fix: the rules of the environment appear only where they
    /// are the fix (reading inputs, saving the figure).
    pub fn feedback(&self) -> String {
        let mut s = String::new();
        match self {
            JobFailure::Rejected { teaching, .. } => s.push_str(teaching),
            JobFailure::BadInput(b) => s.push_str(&b.teaching_text()),
            JobFailure::Timeout { limit, stopped_at } => {
                let _ = write!(
                    s,
                    "The code did not finish within {:.1} s and was stopped",
                    limit.as_secs_f64()
                );
                match stopped_at {
                    Some(at) => {
                        let _ = write!(s, " at line {}", at.line);
                        if let Some((line, header)) = &at.in_loop {
                            let _ = write!(s, ", inside the loop `{header}` at line {line}");
                        }
                        let _ = write!(s, ".\n{}\n", at.traceback.trim_end());
                        s.push_str(if at.in_loop.is_some() {
                            "Check that this loop ends (its condition changes, its range is small) and that its body is cheap: vectorize with numpy instead of looping over elements."
                        } else {
                            "This call is too slow for the data: reduce the data size or the number of samples."
                        });
                    }
                    None => s.push_str(". Avoid unbounded loops, reduce data sizes or sample counts, and vectorize with numpy."),
                }
            }
            JobFailure::MemoryExceeded {
                limit_bytes,
                raised,
            } => {
                let mib = limit_bytes >> 20;
                match raised {
                    Some(e) => {
                        let _ = write!(
                            s,
                            "The code ran out of memory{}: {}",
                            at_line(e.line),
                            e.message
                        );
                        push_traceback(&mut s, &e.traceback);
                        let _ = write!(s, "\nJobs may use {mib} MiB. Use smaller arrays: downsample, use float32, process in chunks, and avoid n x n matrices of large n.");
                    }
                    None => {
                        let _ = write!(s, "The code needed more than {mib} MiB of memory and was stopped. Use smaller arrays (downsample, use float32, process in chunks).");
                    }
                }
            }
            JobFailure::WorkerCrashed { exit, .. } => {
                let _ = write!(s, "The interpreter crashed ({exit}) while running the code. Avoid native tricks and extreme sizes; use ordinary numpy and matplotlib calls.");
            }
            JobFailure::ProtocolViolation { .. } => {
                s.push_str("The code wrote to the interpreter's own channel to the host (a file descriptor it did not open), and the run was stopped. Read inputs through srcpath('name') and save with plt.savefig(OUT); never open, read or write a file by its descriptor number.");
            }
            JobFailure::PythonError(e) => {
                let _ = write!(
                    s,
                    "The code raised {}{}: {}",
                    e.type_name,
                    at_line(e.line),
                    e.message
                );
                push_traceback(&mut s, &e.traceback);
                if !e.hint.is_empty() {
                    s.push('\n');
                    s.push_str(&e.hint);
                } else if e.type_name == "KeyError" {
                    s.push_str("\nA KeyError names a column or key that does not exist: check the spelling against the data.");
                }
                match e.type_name.as_str() {
                    // A name the module does not have is no refused module: the hint
                    // says what replaces it.
                    "ImportError" if e.message.starts_with("cannot import name") => {}
                    // A package a library reached for: the hint says what to use.
                    "ImportError" | "ModuleNotFoundError" if e.hint.is_empty() => {
                        s.push_str("\nOnly the allowed modules can be imported.")
                    }
                    "FileNotFoundError" | "IsADirectoryError" | "NotADirectoryError" => s.push_str(
                        "\nInput files are read-only and listed by listdir(); open them through srcpath('name'), e.g. pd.read_csv(srcpath('data.csv')).",
                    ),
                    _ => {}
                }
            }
            JobFailure::ScratchFull { which, limit } => {
                let _ = match which {
                    ScratchLimit::Bytes => write!(s, "The code wrote more than {} MiB of files in total and its writes were stopped.", limit >> 20),
                    ScratchLimit::Files => write!(s, "The code created more than {limit} files and directories and its writes were stopped."),
                };
                s.push_str(" Write only the figure (plt.savefig(OUT)) and the few files you need; keep intermediate data in memory.");
            }
            JobFailure::Cancelled => {
                s.push_str("The job was cancelled by its caller before it finished; the code itself may be fine. Run it again if its result is still needed.");
            }
            JobFailure::InvalidOutput { check, detail } => {
                let _ = write!(
                    s,
                    "The code ran but its output is not valid ({check}): {detail}."
                );
                match check.as_str() {
                    c if c.starts_with("table:") => s.push_str(" Fix the code so that the table meets these requirements, and write it again."),
                    "blank" => s.push_str(" Draw the data on the axes before calling plt.savefig(OUT)."),
                    "empty-figure" | "all-nan" => {}
                    "not-text" => s.push_str(" A file named .csv, .tsv, .txt, .md, .log or .html must hold text: write a table with df.to_csv('name.csv', index=False) (encoding='utf-8-sig' for a CSV that Excel opens with its non-ASCII text intact), and binary data under the suffix of its kind."),
                    "not-xlsx" => s.push_str(" Write workbooks with df.to_excel('name.xlsx') or pd.ExcelWriter('name.xlsx')."),
                    // The detail already says what the code did instead.
                    _ if detail.contains("plt.savefig(OUT)") => {}
                    _ => {
                        s.push_str(" Save the figure with plt.savefig(OUT) after drawing it.");
                        if check == "missing" {
                            s.push('\n');
                            s.push_str(HOW_TO);
                        }
                    }
                }
            }
        }
        s
    }
}

/// " at line N", or nothing.
fn at_line(line: Option<u32>) -> String {
    line.map(|l| format!(" at line {l}")).unwrap_or_default()
}

/// The job's frames: one frame as its source line, several as a traceback.
fn push_traceback(s: &mut String, traceback: &str) {
    let traceback = traceback.trim_end();
    if traceback.is_empty() {
        return;
    }
    if traceback.matches("\n  line ").count() == 0 {
        // "  line N\n    source": the line number is already said.
        if let Some((_, source)) = traceback.split_once('\n') {
            s.push('\n');
            s.push_str(source);
        }
    } else {
        s.push_str("\nTraceback (your code only):\n");
        s.push_str(traceback);
    }
}

/// Keeps the first `max` characters of `text`, marking a cut with `...`.
pub(crate) fn head_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        text.chars().take(max).chain("...".chars()).collect()
    }
}

/// Keeps the last `max` characters of `text`, on a character boundary.
pub(crate) fn tail_chars(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    text.chars().skip(count - max).collect()
}

/// The artifact that stands for `OUT` (`out`): the one of that name, else the only
/// figure (png, svg, pdf, jpg, webp) among them, whatever the code named it.
pub fn main_figure<'a>(out: &str, artifacts: &'a [Artifact]) -> Option<&'a Artifact> {
    if let Some(a) = artifacts.iter().find(|a| a.name == out) {
        return Some(a);
    }
    let mut figures = artifacts.iter().filter(|a| is_figure(&a.name));
    match (figures.next(), figures.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Whether a file name has the suffix of a figure format.
pub fn is_figure(name: &str) -> bool {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    FIGURE_SUFFIXES.iter().any(|s| ext.eq_ignore_ascii_case(s))
}

/// Suffixes of the figure formats a job may save, each checked as its own format.
pub const FIGURE_SUFFIXES: [&str; 6] = ["png", "svg", "pdf", "jpg", "jpeg", "webp"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_on_char_boundaries() {
        assert_eq!(tail_chars("héllo wörld", 5), "wörld");
        assert_eq!(tail_chars("abc", 5), "abc");
    }

    #[test]
    fn a_missing_output_teaches_how_to_save_and_a_name_error_does_not() {
        let missing = JobFailure::InvalidOutput {
            check: "missing".into(),
            detail: "figure.png was not written".into(),
        };
        assert!(missing.feedback().contains("plt.savefig(OUT)"));
        let name = JobFailure::PythonError(PythonError {
            type_name: "NameError".into(),
            message: "name 'total' is not defined".into(),
            line: Some(3),
            traceback: "  line 3\n    plt.bar(x, total)".into(),
            stderr_tail: String::new(),
            hint: "Did you mean: 'totals'?".into(),
        });
        assert_eq!(
            name.feedback(),
            "The code raised NameError at line 3: name 'total' is not defined\n    plt.bar(x, total)\nDid you mean: 'totals'?"
        );
    }

    #[test]
    fn a_table_file_of_the_wrong_kind_is_told_how_to_write_it_not_to_save_a_figure() {
        let gbk = JobFailure::InvalidOutput {
            check: "not-text".into(),
            detail: "out.csv is not text: byte 3 is the control byte 0x00".into(),
        };
        let text = gbk.feedback();
        assert!(text.contains("encoding='utf-8-sig'"), "{text}");
        assert!(!text.contains("savefig"), "{text}");
        let book = JobFailure::InvalidOutput {
            check: "not-xlsx".into(),
            detail: "out.xlsx is not an xlsx workbook".into(),
        };
        assert!(book.feedback().contains("df.to_excel('name.xlsx')"));
    }

    #[test]
    fn the_host_holds_a_job_s_stderr_to_the_cap_the_worker_keeps() {
        let state = include_str!("../python/prelude/state.py");
        assert!(
            state.contains(&format!("\n_JOB_STDERR_CAP = {JOB_STDERR_CAP}\n")),
            "python/prelude/state.py and JOB_STDERR_CAP disagree"
        );
    }
}
