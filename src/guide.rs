//! # Using pyward from your crate
//!
//! Everything a crate that depends on pyward needs beyond the [crate-level
//! example](crate): the worker program, the Python it embeds, deployment, async use, the
//! JSON report, and what the job's code can use.
//!
//! ## 1. The worker program
//!
//! Workers are separate processes of a small program that calls
//! [`worker::main`](crate::worker::main). Cargo does not build a dependency's binaries,
//! so your crate adds one, in two lines, as `src/bin/pyward-worker.rs`:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     pyward::worker::main()
//! }
//! ```
//!
//! `cargo build` (or `cargo build --release`) then builds it next to your binary, where
//! [`ExecutorBuilder::build`](crate::ExecutorBuilder::build) finds it. Build both
//! together: `cargo run --bin yours` builds only `yours`. Elsewhere, name it with
//! [`ExecutorBuilder::worker_program`](crate::ExecutorBuilder::worker_program) or the
//! `PYWARD_WORKER` environment variable. Without a worker,
//! [`Error::WorkerNotFound`](crate::Error::WorkerNotFound) says exactly this.
//!
//! Alternatively your own binary can be the worker: call
//! [`worker::run_if_worker`](crate::worker::run_if_worker) as the first line of `main`
//! (before any async runtime starts). One artifact to ship, at the price of more code
//! mapped into every worker; the [`worker`](crate::worker) module weighs the two.
//!
//! The worker and the library must come from the same build of pyward. The worker
//! checks the build id the library passes it and refuses to run on a mismatch
//! ([`Error::WorkerMismatch`](crate::Error::WorkerMismatch)): a stale worker left next
//! to a rebuilt binary is reported as such, not as a protocol error.
//!
//! ## 2. The Python
//!
//! pyward embeds CPython (3.11 or newer, built with a shared libpython) through pyo3.
//! The interpreter is chosen **at build time**, by pyo3's lookup: `PYO3_PYTHON` if set,
//! else an active virtualenv (`VIRTUAL_ENV`) or conda environment, else `python3` on
//! `PATH`. pyward's build script uses that same interpreter and records its home and
//! `sys.path`. It must have numpy, matplotlib, scipy, pandas and Pillow (pyward's
//! `python/requirements.txt` pins tested versions); if it lacks any, the build prints a
//! `warning: pyward: ...` line with the exact `pip install` command. The usual setup:
//!
//! ```sh
//! python3 -m venv .venv && .venv/bin/pip install -r <pyward>/python/requirements.txt
//! export PYO3_PYTHON=$PWD/.venv/bin/python
//! cargo build
//! ```
//!
//! A worker that cannot start names the program, the interpreter, its `sys.path` and the
//! first lines of its stderr ([`Error::WorkerStartup`](crate::Error::WorkerStartup)).
//!
//! ## 3. Deployment
//!
//! The binary links libpython and starts workers with the build machine's Python paths.
//! On another machine, give it that machine's installation of the same `major.minor`
//! version: [`ExecutorBuilder::python`](crate::ExecutorBuilder::python) or the
//! `PYWARD_PYTHON` environment variable ([`PYTHON_ENV_VAR`](crate::PYTHON_ENV_VAR)), a
//! path to its `python` executable (a virtualenv's `bin/python` with the packages). It is
//! checked when the pool is built ([`PythonEnv::probe`](crate::PythonEnv::probe): version,
//! shared libpython); `pyward doctor` shows which Python is used. Workers refuse to start
//! where the kernel cannot confine them (Landlock, seccomp, rlimits): the default
//! [`SandboxMode::Require`](crate::sandbox::SandboxMode::Require) is the same in debug and
//! release builds; a development machine with an older kernel opts into
//! [`SandboxMode::BestEffort`](crate::sandbox::SandboxMode::BestEffort) explicitly.
//!
//! ## 4. Async and cancellation
//!
//! [`Executor`](crate::Executor) is a cheap `Clone` handle: put it in an axum `State`, a
//! `once_cell`, every task. [`Executor::run_async`](crate::Executor::run_async) returns a
//! [`JobFuture`](crate::JobFuture) that works under any runtime; dropping it (a client
//! that disconnected, a `tokio::time::timeout`, a `select!` that lost) cancels the job: a
//! queued job leaves the queue, a running job's worker is killed and replaced from the
//! warm template in milliseconds. [`CancelHandle`](crate::CancelHandle) cancels from
//! elsewhere; the outcome then says [`JobFailure::Cancelled`](crate::JobFailure::Cancelled).
//! Building the pool blocks for a second or two: do it before the runtime starts, or in
//! `spawn_blocking`.
//!
//! ```no_run
//! # async fn handler(exec: pyward::Executor, code: String) -> pyward::Result<Vec<u8>> {
//! let outcome = exec.run_async(pyward::Job::new(code)).await?;
//! Ok(outcome.artifacts().first().map(|a| a.bytes.clone()).unwrap_or_default())
//! # }
//! ```
//!
//! ## 5. The JSON report
//!
//! [`report::Report`](crate::report::Report) is the one JSON shape of a job: what the
//! `pyward` CLI prints with `--json`, what an [`Outcome`](crate::Outcome) serializes to,
//! versioned by [`report::SCHEMA_VERSION`](crate::report::SCHEMA_VERSION) and described
//! by the JSON Schema [`report::JSON_SCHEMA`](crate::report::JSON_SCHEMA). Its `status`
//! separates the job's own failures (show `feedback` to the model) from
//! `input_error` (fix the request) and `infrastructure_error` (retry or alert). A
//! successful run carries `description`, what its figures show in one paragraph each
//! (from [`figure::FigureSummary`](crate::figure::FigureSummary), also on every
//! artifact as `figure`): give it to the model to check its figure against the task.
//!
//! ## 6. What the job's code can use
//!
//! Every job runs in fresh globals that hold:
//!
//! | name | what it is |
//! | --- | --- |
//! | `np`, `plt`, `pd` | numpy, matplotlib.pyplot (Agg backend), pandas |
//! | `loadmat` | `scipy.io.loadmat`, for MATLAB files |
//! | `srcpath(name)` | the absolute path of input file `name` (relative to the inputs; refuses to leave them) |
//! | `listdir(sub='')` | sorted names in the input directory (or its subdirectory `sub`) |
//! | `walkfiles()` | sorted relative paths of every input file |
//! | `SRC` | the input directory (read-only) |
//! | `OUT` | the path to save the figure to: `plt.savefig(OUT)` |
//! | arrays | each [`Job::with_array`](crate::Job::with_array) name, a read-only numpy array |
//!
//! Imports are limited to an allowlist of the scientific stack and the harmless parts of
//! the standard library ([`gate::Policy::allowed_imports`](crate::gate::Policy::allowed_imports));
//! files, processes, the network and interpreter internals are not available. A refused
//! job's [`feedback`](crate::JobFailure::feedback) lists the rules.
