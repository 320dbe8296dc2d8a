//! # pyward
//!
//! Run Python that a language model wrote — plotting and data code over numpy,
//! matplotlib, scipy and pandas — from a Rust program, fast and confined. A backend
//! hands pyward `{code, input files}` and gets figure bytes back in tens of
//! milliseconds, or a typed failure whose [`feedback`](JobFailure::feedback) text a model
//! can fix its code from.
//!
//! ## A tour of the types
//!
//! - [`Executor`] — a pool of pre-warmed worker processes, built by
//!   [`Executor::builder`] ([`ExecutorBuilder`]); a cheap `Clone` handle, every clone
//!   sharing one pool. [`Executor::run`] blocks; [`Executor::run_async`] returns a
//!   [`JobFuture`] for any async runtime, which cancels its job when dropped.
//! - [`Job`] — code, input files (a directory or in-memory bytes), numeric arrays in
//!   shared memory ([`Job::with_array`], [`SharedArray`]), per-job limits.
//! - [`Isolation`] — whether a worker serves many jobs (`Reuse`) or each job gets a
//!   process that never ran one (`Fresh`, forked from a warm template).
//! - [`Outcome`] — `result: Result<Vec<Artifact>, JobFailure>` plus stdout, timings,
//!   the worker that ran it and the RNG seed it was given. Every figure artifact carries
//!   what it shows ([`figure::FigureSummary`]); [`Outcome::description`] says it in a
//!   paragraph for a model.
//! - [`JobFailure`] — the job's own failure: `Rejected`, `BadInput`, `Timeout`,
//!   `MemoryExceeded`, `WorkerCrashed`, `ProtocolViolation`, `PythonError`,
//!   `ScratchFull`, `InvalidOutput`, `Cancelled`.
//! - [`output_dir::OutputDir`] — writes artifacts under the names the job chose without
//!   ever leaving a directory: an [`Artifact::name`] is the job's word.
//! - [`Error`] — the executor's own failure: queue full, spawn, protocol, sandbox.
//! - [`gate`] — the static policy engine every job passes first.
//!
//! ```no_run
//! let exec = pyward::Executor::builder().workers(2).build()?;
//! let job = pyward::Job::new("plt.plot([1, 3, 2]); plt.savefig(OUT)");
//! let outcome = exec.run(job)?;
//! match &outcome.result {
//!     Ok(artifacts) => println!("{} bytes of PNG", artifacts[0].bytes.len()),
//!     Err(failure) => println!("{}", failure.feedback()),
//! }
//! # Ok::<(), pyward::Error>(())
//! ```
//!
//! From your own crate (the worker program, the Python, deployment, async): see the
//! [`guide`].
//!
//! ## The path of one job
//!
//! `run` checks the code with the [`gate`] on the caller's thread, puts it on a bounded
//! queue, and a pool slot hands it to its warm worker: a separate process that embeds
//! CPython (isolated configuration, numpy, matplotlib and scipy already imported, a
//! figure already rendered) and runs the code in fresh globals with curated builtins and
//! a guarded `__import__`. A watchdog kills the worker on timeout or when its resident
//! set passes the ceiling; a dead worker is replaced by a fork of a warm template
//! process (the zygote) in milliseconds. Artifacts come back over the worker's pipe
//! (from `out/`, or straight from memory with [`Job::figures_in_memory`]) and are
//! validated before the caller sees them.
//!
//! ## Threat model
//!
//! The code is hostile: its text came from a model that read untrusted data. Layers,
//! each assuming the one before failed: the static gate; the curated runtime (builtins,
//! guarded imports, read-only module proxies); the kernel (rlimits, Landlock, seccomp —
//! see [`sandbox`]); the supervisor (a process boundary, watchdog, recycling); and
//! validation of what comes out. The host never shares fate with the job: a crash,
//! a hang or a memory bomb costs one worker process.
//!
//! The trust boundary is between processes: a worker runs the job's code, so it is as
//! trusted as the job. Everything it sends is read as hostile input
//! ([`protocol::answer`]: lengths bounded before allocation, numbers and names checked,
//! answers only with the run's random nonce), and the host writes job-chosen names only
//! through [`output_dir::OutputDir`].
//!
//! ## Non-goals
//!
//! Arbitrary Python (only the allowlisted scientific stack), network access for jobs,
//! long-running jobs (the deadline is seconds), and isolation from a kernel exploit
//! (use a VM boundary for that).

#![deny(missing_docs)]
// Unsafe code lives in two rooms only, each allowed where it is declared: `sys` (libc)
// and `worker::cpython` (the interpreter's C API).
#![deny(unsafe_code)]
// A `JobFailure` is the job's whole diagnosis (exception, hint, traceback), built at
// most once per job and handed to the caller: its size is not worth a box.
#![allow(clippy::result_large_err)]

mod array;
mod digest;
pub mod doctor;
mod encode;
mod error;
mod fdpass;
pub mod figure;
pub mod gate;
pub mod guide;
mod job;
mod outcome;
pub mod output_dir;
#[doc(hidden)]
pub mod protocol;
mod python_env;
pub mod record;
pub mod report;
pub mod sandbox;
mod supervisor;
// The crate's one room for libc calls (the other unsafe room is `worker::cpython`).
#[allow(unsafe_code)]
mod sys;
pub mod validate;
pub mod worker;
mod workspace;

pub use array::{ArrayElement, SharedArray};
pub use error::{Error, Result};
pub use job::{Job, Source};
/// The `ndarray` version [`Job::with_array`] accepts (re-exported from the `numpy` crate).
pub use numpy::ndarray;
pub use outcome::{
    Artifact, JobFailure, Obtained, Outcome, PythonError, RetireReason, Retirement, StoppedAt,
    Timings, WorkerExit, WorkerInfo, FIGURE_SUFFIXES, JOB_STDERR_CAP, STDERR_TAIL_CHARS,
};
pub use python_env::{PythonEnv, PYTHON_ENV_VAR};
pub use supervisor::{
    Attempt, Backpressure, Birth, CancelHandle, Executor, ExecutorBuilder, Feedback, Isolation,
    JobFuture, MemoryGrowthLimit, MemoryPressure, MemoryUsage, PngEncoder, PoolStats, PoolWarmup,
    Repaired, RetiredCounts, WorkerStats, ZygoteStats,
};
