//! Infrastructure errors: the executor itself could not do its work.
//!
//! A job's own failures (rejected, timed out, raised, killed, bad output) are never an
//! `Err` of this type: they are [`crate::JobFailure`] values inside an [`crate::Outcome`].

use std::io;
use std::path::PathBuf;

/// Why the executor could not start, accept or finish a job.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum Error {
    /// The job queue is full and the executor is configured to refuse rather than wait.
    #[error("queue full ({depth} jobs waiting)")]
    QueueFull {
        /// The configured queue depth.
        depth: usize,
    },
    /// The configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The worker program could not be found.
    #[error("worker program not found (looked in {looked_in:?}); set PYWARD_WORKER or ExecutorBuilder::worker_program")]
    WorkerNotFound {
        /// Every path tried.
        looked_in: Vec<PathBuf>,
    },
    /// The Python environment the workers need is missing or broken.
    #[error("python environment unusable: {0}")]
    Python(String),
    /// A required Python package failed to import in the worker.
    #[error("python package missing or broken: {0}")]
    PackageMissing(String),
    /// The worker process could not be started.
    #[error("cannot spawn worker: {0}")]
    Spawn(#[source] io::Error),
    /// The worker broke the protocol (malformed frame, wrong job id, wrong version).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The kernel sandbox could not be installed as the configuration requires.
    #[error("sandbox not installable: {0}")]
    Sandbox(String),
    /// A worker exited during start-up.
    #[error("worker failed during start-up: {message}")]
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
    #[error("{context}: {source}")]
    Io {
        /// What the executor was doing.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with what the executor was doing.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
        let context = context.into();
        move |source| Error::Io { context, source }
    }
}

/// Shorthand for results of infrastructure operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
