//! Infrastructure errors: the executor itself could not do its work.
//!
//! A job's own failures (rejected, timed out, raised, killed, bad output) are never an
//! `Err` of this type: they are [`crate::JobFailure`] values inside an [`crate::Outcome`].

use std::io;
use std::path::PathBuf;

/// Why the executor could not start, accept or finish a job.
///
/// Each message carries its cause inline (there is no separate `source()` to print it a
/// second time), and `Debug` prints the same text, so `fn main() -> Result<(), Error>`
/// shows the fix, not a struct dump.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Every place is taken and the executor is configured to refuse rather than wait:
    /// `workers + depth` jobs are admitted and not answered yet, queued or running. (A
    /// worker resetting or being replaced after it answered holds no place.)
    #[error("queue full ({workers} workers busy, {depth} jobs waiting; a place frees about every {} ms)", retry_after.as_millis())]
    QueueFull {
        /// The configured queue depth.
        depth: usize,
        /// The most workers the pool runs.
        workers: usize,
        /// When to try again: the measured time between answers while the pool was
        /// saturated (one second before any was measured), at least 1 ms.
        retry_after: std::time::Duration,
    },
    /// The configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The worker program could not be found.
    #[error(
        "the worker program `pyward-worker` was not found (looked in: {}).\n{WORKER_FIX}",
        fmt_paths(looked_in)
    )]
    WorkerNotFound {
        /// Every path tried.
        looked_in: Vec<PathBuf>,
    },
    /// The worker program comes from another pyward build than this library (its
    /// protocol may differ); it refused to run.
    #[error("the worker program {program} was built from another pyward build than this library ({detail}). Rebuild it together with your program (`cargo build` builds both), or point PYWARD_WORKER / ExecutorBuilder::worker_program at the one from this build")]
    WorkerMismatch {
        /// The worker program.
        program: String,
        /// Both build ids, as the worker reported them.
        detail: String,
    },
    /// The Python environment the workers need is missing or broken.
    #[error("python environment unusable: {0}")]
    Python(String),
    /// A required Python package failed to import in the worker.
    #[error("python package missing or broken: {0}")]
    PackageMissing(String),
    /// The worker process could not be started.
    #[error("cannot spawn worker: {0}")]
    Spawn(io::Error),
    /// The worker broke the protocol (malformed frame, wrong job id, wrong version).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The kernel sandbox could not be installed as the configuration requires.
    #[error("sandbox not installable: {0}")]
    Sandbox(String),
    /// A worker exited during start-up.
    #[error(
        "worker failed during start-up: {message}{}",
        stderr_lines(stderr_tail)
    )]
    WorkerStartup {
        /// What happened.
        message: String,
        /// The tail of the worker's stderr.
        stderr_tail: String,
    },
    /// The job itself is malformed: an input file is missing, unreadable, or a symlink
    /// that leaves its directory; an input name is not a plain relative path.
    #[error("invalid job: {0}")]
    InvalidJob(String),
    /// The executor is shutting down and will not run this job.
    #[error("executor is shutting down")]
    Shutdown,
    /// A filesystem operation of the executor failed.
    #[error("{context}: {error}")]
    Io {
        /// What the executor was doing.
        context: String,
        /// The underlying error.
        error: io::Error,
    },
}

/// How a crate that depends on pyward gets the worker program (part of
/// [`Error::WorkerNotFound`]'s text).
const WORKER_FIX: &str = "A crate that depends on pyward builds the worker with two lines: \
create src/bin/pyward-worker.rs containing \
`fn main() -> std::process::ExitCode { pyward::worker::main() }`, then \
`cargo build` puts it next to your own binary, where pyward looks. Or call \
`pyward::worker::run_if_worker();` as the first line of your main() to let your own binary \
serve as the worker. Or point PYWARD_WORKER (or ExecutorBuilder::worker_program) at a \
pyward-worker built from the same pyward version.";

fn fmt_paths(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

/// The first lines of a worker's stderr, indented, for a start-up failure's message.
fn stderr_lines(tail: &str) -> String {
    const LINES: usize = 12;
    let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "; the worker wrote nothing to stderr".into();
    }
    let first = &lines[..lines.len().min(LINES)];
    let more = lines.len().saturating_sub(LINES);
    let mut text = format!("\nworker stderr:\n  {}", first.join("\n  "));
    if more > 0 {
        text.push_str(&format!("\n  ... ({more} more lines)"));
    }
    text
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// Wraps an I/O error with what the executor was doing.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
        let context = context.into();
        move |error| Error::Io { context, error }
    }

    /// A stable word for this kind of error, for JSON and logs (`queue_full`,
    /// `worker_not_found`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Error::QueueFull { .. } => "queue_full",
            Error::Config(_) => "config",
            Error::WorkerNotFound { .. } => "worker_not_found",
            Error::WorkerMismatch { .. } => "worker_mismatch",
            Error::Python(_) => "python",
            Error::PackageMissing(_) => "package_missing",
            Error::Spawn(_) => "spawn",
            Error::Protocol(_) => "protocol",
            Error::Sandbox(_) => "sandbox",
            Error::WorkerStartup { .. } => "worker_startup",
            Error::InvalidJob(_) => "invalid_job",
            Error::Shutdown => "shutdown",
            Error::Io { .. } => "io",
        }
    }

    /// `true` when the caller's inputs are at fault (not the code, not the executor).
    pub fn is_input_error(&self) -> bool {
        matches!(self, Error::InvalidJob(_))
    }
}

/// Shorthand for results of infrastructure operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
