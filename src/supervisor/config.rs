//! Executor configuration: every setting, its default, its unit and what it does not cover.

use std::path::PathBuf;
use std::time::Duration;

use super::pressure::MemoryPressure;
use crate::gate::Policy;
use crate::protocol::PythonEnv;
use crate::sandbox::SandboxMode;

/// Workers the kernel cannot fully confine do not start, in every build profile: no
/// behaviour depends on how the caller compiled. Development machines with older
/// kernels opt into [`SandboxMode::BestEffort`] explicitly.
const DEFAULT_SANDBOX: SandboxMode = SandboxMode::Require;

/// What `run` does when the queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backpressure {
    /// Block the caller until a slot frees up (default).
    Wait,
    /// Return [`crate::Error::QueueFull`] at once.
    Reject,
}

/// Whether a worker process serves many jobs or exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Isolation {
    /// A worker serves jobs one after another (up to
    /// [`ExecutorBuilder::max_jobs_per_worker`]). Between jobs the prelude resets what a
    /// job can change through the gate (fresh globals, figures closed, rcParams, RNG
    /// seeds, working directory) and the slot's directories are wiped. The fastest mode,
    /// for jobs of one trust domain.
    #[default]
    Reuse,
    /// Every job runs in a process that has never run a job. After each job the worker is
    /// killed before its caller hears back, and a replacement is forked from the zygote
    /// before the next job arrives, so nothing one job does to its process (module
    /// attributes, caches, environment variables, threads it left behind) can reach the
    /// next. For pools shared by tenants. Costs one fork and sandbox set-up per job.
    Fresh,
}

/// Who encodes the PNG figures a job saves into its output directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PngEncoder {
    /// The supervisor, in Rust (the `png` crate, zlib level 1): the worker renders
    /// as always and hands over the RGBA pixels, dpi and text metadata instead of running
    /// zlib at Pillow's default level, the largest single cost of a typical job. The
    /// same pixels and metadata as matplotlib's own file, a different compressed stream.
    /// Such a PNG is not written into the job's output directory, so job code cannot
    /// read its own PNG back from `OUT` (as with `Job::figures_in_memory`).
    #[default]
    Host,
    /// Matplotlib (Pillow), byte for byte what plain matplotlib writes: for callers who
    /// compare files with earlier runs (`pyward replay` of records made this way).
    Matplotlib,
}

/// When a worker whose private memory grew during its jobs is retired
/// ([`ExecutorBuilder::memory_growth_limit`]). Measured after each job from
/// `/proc/PID/smaps_rollup`: private pages now minus private pages when the worker
/// became ready. What a job leaves behind (freed heap the allocator keeps, caches
/// libraries fill) stays with the process; this bounds how much a worker may gather.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryGrowthLimit {
    /// Retire when the growth exceeds the worker's resident size at birth (about
    /// 80 MiB for a warm interpreter): the worker then costs twice what a new one does.
    BirthSize,
    /// Retire when the growth exceeds this many bytes.
    Bytes(u64),
    /// Never retire for growth (the job quota and the hard limit still apply).
    Off,
}

/// Validated executor settings, built by [`ExecutorBuilder`].
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) min_workers: usize,
    pub(crate) max_workers: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) memory_growth: MemoryGrowthLimit,
    pub(crate) memory_pressure: MemoryPressure,
    pub(crate) preload_loadmat: bool,
    /// Set by [`ExecutorBuilder::for_one_job`]: the pool serves one job and starts nothing
    /// after it.
    pub(crate) one_shot: bool,
    pub(crate) timeout: Duration,
    pub(crate) memory_bytes: u64,
    pub(crate) queue_depth: usize,
    pub(crate) backpressure: Backpressure,
    pub(crate) max_jobs_per_worker: u64,
    pub(crate) python: PythonEnv,
    pub(crate) worker_program: Option<PathBuf>,
    pub(crate) policy: Policy,
    pub(crate) sandbox: SandboxMode,
    pub(crate) stdout_cap: usize,
    pub(crate) max_artifacts: usize,
    pub(crate) max_artifact_bytes: u64,
    pub(crate) work_dir: Option<PathBuf>,
    pub(crate) preload_pandas: bool,
    pub(crate) render_once: bool,
    pub(crate) text_metrics: bool,
    pub(crate) png_encoder: PngEncoder,
    pub(crate) startup_timeout: Duration,
    pub(crate) zygote: bool,
    pub(crate) isolation: Isolation,
    pub(crate) reuse_across_tenants: bool,
    pub(crate) warm_up_code: Option<String>,
    pub(crate) state_guard: bool,
    pub(crate) scratch_bytes: u64,
    pub(crate) scratch_files: u64,
}

impl Config {
    /// Whether the worker that runs a job of `tenant` serves no other job: every job in
    /// a single-job pool, and a job without a tenant (its own tenant) unless workers may
    /// serve several tenants.
    pub(crate) fn serves_one_job(&self, tenant: Option<&str>) -> bool {
        self.single_job() || (tenant.is_none() && !self.reuse_across_tenants)
    }

    /// Whether a worker that has run `jobs_run` jobs, the last of `served`, may run a
    /// job of `tenant`: a worker that ran nothing serves anyone; otherwise only its own
    /// tenant, unless workers may serve several tenants.
    pub(crate) fn may_serve(
        &self,
        jobs_run: u64,
        served: Option<&str>,
        tenant: Option<&str>,
    ) -> bool {
        jobs_run == 0 || self.reuse_across_tenants || (served.is_some() && served == tenant)
    }

    /// Each worker serves one job and is killed after it (`Isolation::Fresh`, or a
    /// one-shot pool): no between-job reset, no state check, nothing kept for a next job.
    pub(crate) fn single_job(&self) -> bool {
        self.isolation == crate::Isolation::Fresh || self.one_shot
    }
}

/// Builds an [`Executor`](crate::Executor); `build()` starts and warms the pool.
///
/// ```no_run
/// use std::time::Duration;
/// let exec = pyward::Executor::builder()
///     .workers(2)
///     .timeout(Duration::from_secs(5))
///     .memory_limit_mib(1024)
///     .build()?;
/// # Ok::<(), pyward::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ExecutorBuilder {
    config: Config,
    python: PythonSource,
}

/// Where the workers' Python comes from, resolved at `build()`.
#[derive(Debug, Clone)]
enum PythonSource {
    /// `PYWARD_PYTHON` if set, else the build's interpreter.
    Default,
    /// An interpreter to probe ([`ExecutorBuilder::python`]).
    Executable(PathBuf),
    /// Given as is ([`ExecutorBuilder::python_env`]).
    Env(PythonEnv),
}

impl Default for ExecutorBuilder {
    fn default() -> Self {
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
        ExecutorBuilder {
            config: Config {
                min_workers: workers,
                max_workers: workers,
                idle_timeout: Duration::from_secs(60),
                memory_growth: MemoryGrowthLimit::BirthSize,
                memory_pressure: MemoryPressure::default(),
                preload_loadmat: true,
                one_shot: false,
                timeout: Duration::from_secs(10),
                memory_bytes: 2 << 30,
                queue_depth: 64,
                backpressure: Backpressure::Wait,
                max_jobs_per_worker: 500,
                python: PythonEnv::from_build(),
                worker_program: None,
                policy: Policy::figures(),
                sandbox: DEFAULT_SANDBOX,
                stdout_cap: 64 * 1024,
                max_artifacts: 16,
                max_artifact_bytes: 64 << 20,
                work_dir: None,
                preload_pandas: true,
                render_once: true,
                text_metrics: true,
                png_encoder: PngEncoder::Host,
                startup_timeout: Duration::from_secs(60),
                zygote: true,
                isolation: Isolation::Reuse,
                reuse_across_tenants: false,
                warm_up_code: None,
                state_guard: true,
                scratch_bytes: 256 << 20,
                scratch_files: 4096,
            },
            python: PythonSource::Default,
        }
    }
}

impl ExecutorBuilder {
    /// Number of worker processes, fixed (sets both [`min_workers`](Self::min_workers)
    /// and [`max_workers`](Self::max_workers)). Default: the number of cores, at most 8.
    pub fn workers(mut self, n: usize) -> Self {
        self.config.min_workers = n;
        self.config.max_workers = n;
        self
    }

    /// Workers kept warm at all times (at least 1); `build()` returns when they are
    /// ready. An elastic pool (`min_workers < max_workers`) forks another worker from
    /// the zygote whenever a job waits and every worker is busy (the new worker runs
    /// that job ~10–30 ms later), and retires workers above this number after
    /// [`idle_timeout`](Self::idle_timeout) without a job.
    pub fn min_workers(mut self, n: usize) -> Self {
        self.config.min_workers = n;
        self
    }

    /// The most workers the pool grows to (see [`min_workers`](Self::min_workers)).
    pub fn max_workers(mut self, n: usize) -> Self {
        self.config.max_workers = n;
        self
    }

    /// How long a worker above [`min_workers`](Self::min_workers) may wait for a job
    /// before it is retired. Default: 60 s.
    pub fn idle_timeout(mut self, t: Duration) -> Self {
        self.config.idle_timeout = t;
        self
    }

    /// When a worker whose memory grew during its jobs is retired and replaced by a new
    /// fork after the job that crossed the limit (the job's outcome is unaffected and
    /// says so in [`Outcome::retired`](crate::Outcome::retired)). Default:
    /// [`MemoryGrowthLimit::BirthSize`]. This is the soft limit; the hard one is
    /// [`memory_limit`](Self::memory_limit), which kills the job.
    pub fn memory_growth_limit(mut self, limit: MemoryGrowthLimit) -> Self {
        self.config.memory_growth = limit;
        self
    }

    /// When the host counts as under memory pressure: the pool then forks no
    /// workers beyond `min_workers` and retires its largest idle ones down to
    /// `min_workers`. Default: [`MemoryPressure::default`].
    pub fn memory_pressure(mut self, pressure: MemoryPressure) -> Self {
        self.config.memory_pressure = pressure;
        self
    }

    /// Wall-clock deadline of one job, measured from dispatch to the worker. Default: 10 s.
    /// On expiry the worker is killed (SIGKILL) and replaced; the job gets `Timeout`.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.config.timeout = t;
        self
    }

    /// Memory ceiling of one worker, in bytes (resident set, polled by the watchdog, and
    /// the address-space rlimit derived from it). Default: 2 GiB. It includes the ~150 MiB
    /// the warm interpreter itself holds.
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.config.memory_bytes = bytes;
        self
    }

    /// [`memory_limit`](Self::memory_limit) in MiB.
    pub fn memory_limit_mib(self, mib: u64) -> Self {
        self.memory_limit(mib << 20)
    }

    /// Jobs that may wait for a worker. Default: 64. A job is admitted while fewer than
    /// `max_workers + n` jobs are unanswered, queued or running (a worker resetting
    /// after its answer holds no place). Memory held by waiting jobs is bounded by that
    /// times the size of their inputs.
    pub fn queue_depth(mut self, n: usize) -> Self {
        self.config.queue_depth = n;
        self
    }

    /// What `run` does when the queue is full. Default: [`Backpressure::Wait`].
    pub fn backpressure(mut self, b: Backpressure) -> Self {
        self.config.backpressure = b;
        self
    }

    /// Jobs a worker runs before it is replaced. Default: 500. Bounds what slow leaks in
    /// libraries can accumulate; it is not a security boundary.
    pub fn max_jobs_per_worker(mut self, n: u64) -> Self {
        self.config.max_jobs_per_worker = n;
        self
    }

    /// The Python installation workers embed, given by its `python` executable (a
    /// virtualenv's `bin/python` with numpy, matplotlib, scipy and pandas). For
    /// deployment: a binary built on one machine runs on another only where the build
    /// machine's Python paths exist; this (or the `PYWARD_PYTHON` environment variable,
    /// [`PYTHON_ENV_VAR`](crate::PYTHON_ENV_VAR)) points it at the local one. It must be
    /// the same `major.minor` the binary was built against; `build()` checks
    /// ([`PythonEnv::probe`]). Default: `PYWARD_PYTHON` if set, else the interpreter pyo3
    /// linked against at build time.
    pub fn python(mut self, executable: impl Into<PathBuf>) -> Self {
        self.python = PythonSource::Executable(executable.into());
        self
    }

    /// Where workers find Python, given as is (see [`ExecutorBuilder::python`] for the
    /// checked way).
    pub fn python_env(mut self, env: PythonEnv) -> Self {
        self.python = PythonSource::Env(env);
        self
    }

    /// Path of the `pyward-worker` program. Default: `PYWARD_WORKER`, else next to the
    /// current executable (or its parent directory, for test and bench binaries).
    pub fn worker_program(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.worker_program = Some(path.into());
        self
    }

    /// The gate's policy. Default: [`Policy::figures`].
    pub fn policy(mut self, policy: Policy) -> Self {
        self.config.policy = policy;
        self
    }

    /// How strictly workers must be confined by the kernel. Default: `Require` in release
    /// builds (`build()` fails with `Error::Sandbox` if a layer is unavailable) and
    /// `BestEffort` in debug builds (apply what the kernel supports). Either way
    /// `Outcome::worker.sandbox` says what is really active. `Off` is for tests only.
    pub fn sandbox(mut self, mode: SandboxMode) -> Self {
        self.config.sandbox = mode;
        self
    }

    /// Bytes of a job's stdout kept. Default: 64 KiB; the rest is counted and dropped.
    pub fn stdout_cap(mut self, bytes: usize) -> Self {
        self.config.stdout_cap = bytes;
        self
    }

    /// Largest number of files collected from a job's output. Default: 16.
    pub fn max_artifacts(mut self, n: usize) -> Self {
        self.config.max_artifacts = n;
        self
    }

    /// Largest size of one artifact in bytes. Default: 64 MiB.
    pub fn max_artifact_bytes(mut self, n: u64) -> Self {
        self.config.max_artifact_bytes = n;
        self
    }

    /// Directory under which the pool's private temporary tree is created.
    /// Default: the system temporary directory. The tree is removed on drop.
    pub fn work_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.work_dir = Some(dir.into());
        self
    }

    /// Import pandas during warm-up. Default: on (about 0.3 s more warm-up per worker,
    /// saved in the first pandas job each worker runs).
    pub fn preload_pandas(mut self, on: bool) -> Self {
        self.config.preload_pandas = on;
        self
    }

    /// Save figures with one render instead of two. Default: on.
    ///
    /// `plt.savefig` ends with `canvas.draw_idle()`, which on a headless Agg canvas
    /// renders the whole figure a second time for nobody. With this switch the worker
    /// skips that redraw where it provably cannot change anything (output bytes are
    /// identical, checked against stock savefig when each worker starts), which saves
    /// 20–45% of a typical job.
    /// If the installed matplotlib no longer behaves as the patch assumes, the worker
    /// keeps stock behaviour and `WorkerInfo::render_once` reports `false`.
    pub fn render_once(mut self, on: bool) -> Self {
        self.config.render_once = on;
        self
    }

    /// Measure the sizes of common tick labels and every font's metric tables once, at
    /// warm-up, and freeze them. Default: on.
    ///
    /// matplotlib measures text per renderer, and every figure has a new one, so each
    /// job shapes "0.0", "0.5", "1.0" again (a third of a millisecond each) and reads
    /// the font's metric tables from the file for every text layout. The frozen values
    /// are those stock matplotlib computes (the same pixels, checked on the rendering
    /// corpus); nothing a job does adds to them, so they carry nothing from one job to
    /// the next. If the installed matplotlib no longer looks as they assume, workers
    /// measure as stock and [`PoolWarmup::text_metrics_off`](crate::PoolWarmup) says why.
    pub fn text_metrics(mut self, on: bool) -> Self {
        self.config.text_metrics = on;
        self
    }

    /// Who encodes PNG figures ([`PngEncoder`]). Default: [`PngEncoder::Host`], the same
    /// pixels as matplotlib's file at a fraction of the cost;
    /// [`PngEncoder::Matplotlib`] for matplotlib's exact bytes.
    pub fn png_encoder(mut self, encoder: PngEncoder) -> Self {
        self.config.png_encoder = encoder;
        self
    }

    /// How long a worker may take to become ready. Default: 60 s.
    pub fn startup_timeout(mut self, t: Duration) -> Self {
        self.config.startup_timeout = t;
        self
    }

    /// Fork every worker, the first ones and every replacement, from one warm template
    /// process (the zygote) instead of starting each cold. Default: on.
    ///
    /// A cold start re-imports numpy and matplotlib (about a second and 80 MiB of
    /// private memory); a fork from the zygote is ready in milliseconds and shares the
    /// template's warm pages, so a pool of 8 starts in about the time of a pool of 1.
    /// Trade-off: every forked worker shares the zygote's address-space layout (ASLR
    /// is randomised once per zygote, not once per worker), so a job that learns an
    /// address in one worker knows it in its siblings. If the zygote is not running,
    /// workers start cold (counted in [`PoolStats::cold_fallbacks`](crate::PoolStats)
    /// and logged) and a new zygote is started in the background. See
    /// `supervisor::zygote`.
    pub fn zygote(mut self, on: bool) -> Self {
        self.config.zygote = on;
        self
    }

    /// Everything one job can write, in total: bytes and number of files (directories
    /// included) across `out/`, its working directory and its `HOME`. Default: 256 MiB
    /// and 4096. Enforced by a private tmpfs per worker (see `sandbox::scratch`): the
    /// job's writes fail with `ENOSPC` at the limit, and the outcome is
    /// [`JobFailure::ScratchFull`](crate::JobFailure::ScratchFull) naming the limit.
    /// The tmpfs lives in memory, so the bytes count against the machine's RAM (not
    /// against the worker's RSS ceiling): a pool can hold up to workers × this much.
    /// Not covered where the sandbox is `Off` or the mount is not permitted in
    /// `BestEffort` mode (`Enforcement::scratch` says which); each file is still
    /// bounded by [`ExecutorBuilder::max_artifact_bytes`].
    pub fn scratch_limit(mut self, bytes: u64, files: u64) -> Self {
        self.config.scratch_bytes = bytes;
        self.config.scratch_files = files;
        self
    }

    /// **Testing only**: Python that every worker (and the zygote) runs during warm-up,
    /// unconfined, just before render-once is installed. Tests use it to break
    /// matplotlib on purpose and prove the pool still starts. Never pass job code here.
    #[doc(hidden)]
    pub fn warm_up_code_for_testing(mut self, code: impl Into<String>) -> Self {
        self.config.warm_up_code = Some(code.into());
        self
    }

    /// **Testing only**: workers skip the between-job state guard and the check of
    /// descriptors and scratch held past the reset (the housekeeping still runs). Tests use it to show what the tenant boundary holds on its own: a
    /// worker never serves two tenants, so what one leaves behind never reaches another
    /// even when the guard that would have caught it is gone.
    #[doc(hidden)]
    pub fn without_state_guard_for_testing(mut self) -> Self {
        self.config.state_guard = false;
        self
    }

    /// Whether workers serve many jobs or one each ([`Isolation`]). Default: `Reuse`.
    ///
    /// `Fresh` relies on the zygote for its speed: with [`ExecutorBuilder::zygote`] off,
    /// or while the zygote restarts, every replacement starts cold (about a second).
    pub fn isolation(mut self, isolation: Isolation) -> Self {
        self.config.isolation = isolation;
        self
    }

    /// Lets a worker serve jobs of different tenants one after another (in
    /// [`Isolation::Reuse`]), jobs without a tenant included. Default: off, so that a
    /// worker that ran one tenant's code never runs another's ([`Job::tenant`](crate::Job::tenant)).
    ///
    /// The hazard: between two tenants there is then only the between-job reset and the
    /// state guard, Python-level code that restores what it knows of; a gadget in numpy,
    /// pandas, scipy or matplotlib that leaves a callback or a cache behind carries one
    /// tenant's data into another's job. Turn it on only for jobs of one trust domain
    /// (a batch of your own scripts, a benchmark).
    pub fn reuse_across_tenants(mut self, on: bool) -> Self {
        self.config.reuse_across_tenants = on;
        self
    }

    /// Sets the pool up to run just `job` and start nothing after it: for one-off
    /// jobs (the CLI's `pyward run FILE`), which should pay for one warm-up of only
    /// what the job needs. One worker starts cold with no zygote warming beside it,
    /// renders no figure before the job, imports pandas and scipy's `loadmat` only when
    /// the code names them (`pd`, `loadmat`),
    /// and skips render-once's self-test and the between-job state snapshot (no job
    /// follows). Gate, sandbox, limits and checks are those of a pooled run, and so is
    /// the outcome (the same bytes). Build, run the job, drop the executor.
    pub fn for_one_job(mut self, job: &crate::Job) -> Self {
        let c = &mut self.config;
        c.min_workers = 1;
        c.max_workers = 1;
        c.zygote = false;
        c.render_once = false;
        c.text_metrics = false;
        c.one_shot = true;
        let code = String::from_utf8_lossy(job.code());
        c.preload_pandas = crate::gate::mentions_name(&code, "pd");
        c.preload_loadmat = crate::gate::mentions_name(&code, "loadmat");
        self
    }

    /// Validates the settings, starts every worker and waits until all are warm.
    pub fn build(self) -> crate::Result<crate::Executor> {
        let config = self.validated()?;
        crate::Executor::start(config)
    }

    /// The validated configuration, for unit tests of the modules that read it.
    #[cfg(test)]
    pub(crate) fn validated_for_tests(self) -> Config {
        self.validated().expect("default settings are valid")
    }

    fn validated(self) -> crate::Result<Config> {
        let mut c = self.config;
        c.python = match self.python {
            PythonSource::Default => PythonEnv::from_env_or_build()?,
            PythonSource::Executable(exe) => PythonEnv::probe(exe)?,
            PythonSource::Env(env) => env,
        };
        let bad = |m: &str| Err(crate::Error::Config(m.to_string()));
        if c.min_workers == 0 || c.max_workers > 256 || c.min_workers > c.max_workers {
            return bad("workers must satisfy 1 <= min_workers <= max_workers <= 256");
        }
        if c.idle_timeout.is_zero() {
            return bad("idle timeout must be positive");
        }
        if c.timeout.is_zero() {
            return bad("timeout must be positive");
        }
        if c.memory_bytes < 256 << 20 {
            return bad(
                "memory limit must be at least 256 MiB (the warm interpreter alone needs ~150 MiB)",
            );
        }
        if c.queue_depth == 0 {
            return bad("queue depth must be at least 1");
        }
        if c.max_jobs_per_worker == 0 {
            return bad("max_jobs_per_worker must be at least 1");
        }
        if c.python.paths.is_empty() {
            return bad("python environment has no sys.path entries");
        }
        Ok(c)
    }
}
