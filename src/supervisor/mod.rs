//! The supervisor: owns the pool of warm workers, the bounded job queue, and the path
//! of a job from `run` to its outcome.

mod config;
mod font_cache;
mod frames;
mod future;
mod launch;
mod places;
mod pressure;
mod process;
mod queue;
mod repair;
mod slot;
mod stats;
mod stopped;
mod ticket;
mod watchdog;
mod zygote;

use std::cell::{Cell, RefCell};
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::gate;
use crate::job::Job;
use crate::outcome::{JobFailure, Outcome, Timings};
use crate::workspace::SlotDirs;
use config::Config;
pub use config::{Backpressure, ExecutorBuilder, Isolation, MemoryGrowthLimit, PngEncoder};
pub use future::{CancelHandle, JobFuture};
pub use pressure::MemoryPressure;
use pressure::PressureGauge;
use queue::{JobQueue, Queued};
pub use repair::{Attempt, Feedback, Repaired};
use slot::Slot;
pub use stats::{Birth, MemoryUsage, PoolStats, RetiredCounts, WorkerStats, ZygoteStats};
use stats::{Counters, SlotGauge};
use zygote::ZygoteCell;

/// A pool of warm, sandboxed Python workers.
///
/// A cheap handle: `Clone` it into every thread, task or axum `State` that runs jobs
/// (like `reqwest::Client`); all clones share one pool. The pool stops its workers and
/// removes its temporary tree when the last clone is dropped.
#[derive(Clone)]
pub struct Executor {
    pool: Arc<Pool>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("min_workers", &self.pool.config.min_workers)
            .field("max_workers", &self.pool.config.max_workers)
            .field("isolation", &self.pool.config.isolation)
            .field("worker_pids", &self.worker_pids())
            .field("work_root", &self.pool.root.path())
            .finish_non_exhaustive()
    }
}

/// What every clone of an [`Executor`] shares.
struct Pool {
    config: Arc<Config>,
    shared: Arc<Shared>,
    queue: Arc<JobQueue>,
    slots: Vec<JoinHandle<()>>,
    next_job: AtomicU64,
    zygote: Option<Arc<ZygoteCell>>,
    seeds: RandomState,
    warmup: PoolWarmup,
    // Declared last: removed after the slots have stopped their workers.
    root: tempfile::TempDir,
}

/// What the pool's slot threads share with each other and with [`Executor::stats`].
pub(crate) struct Shared {
    pub config: Arc<Config>,
    pub program: PathBuf,
    pub mpl_config: PathBuf,
    pub queue: Arc<JobQueue>,
    /// The template every worker is forked from (`None`: always start cold).
    pub zygote: Option<Arc<ZygoteCell>>,
    /// One per slot (`max_workers` of them).
    pub gauges: Box<[SlotGauge]>,
    pub counters: Counters,
    /// Slots that have a worker (or are starting one).
    pub live: AtomicUsize,
    pub pressure: PressureGauge,
}

/// How long the pool took to become ready.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PoolWarmup {
    /// Wall time of `build()`: the zygote's warm-up, then the first `min_workers`
    /// workers forked from it in parallel.
    pub total: Duration,
    /// Each first worker's own start (fork or process start to ready), by slot.
    pub per_worker_ms: Vec<f64>,
    /// Why render-once is off although it was requested (its check of the installed
    /// matplotlib failed, so workers save with stock `savefig`); `None` when it is on
    /// or was not requested.
    pub render_once_off: Option<String>,
    /// How many text sizes the workers' warm-up froze (0: off; see
    /// [`ExecutorBuilder::text_metrics`](crate::ExecutorBuilder::text_metrics)).
    pub text_metrics: u32,
    /// Why frozen text metrics are off although they were requested; `None` when they
    /// are on or were not requested.
    pub text_metrics_off: Option<String>,
}

impl Executor {
    /// A builder with every default (see [`ExecutorBuilder`]).
    pub fn builder() -> ExecutorBuilder {
        ExecutorBuilder::default()
    }

    pub(crate) fn start(config: Config) -> Result<Executor> {
        let started = Instant::now();
        let mut config = config;
        let program = launch::locate_worker(&config)?;
        // Resolved once: every start-up message names the program really used.
        config.worker_program = Some(program.clone());
        let mut tmp = tempfile::Builder::new();
        tmp.prefix("pyward-");
        let root = match &config.work_dir {
            Some(dir) => tmp.tempdir_in(dir),
            None => tmp.tempdir(),
        }
        .map_err(Error::io("creating the pool's temporary directory"))?;
        let mpl_config = slot::mpl_config_dir(root.path());
        std::fs::create_dir_all(&mpl_config).map_err(Error::io("creating MPLCONFIGDIR"))?;
        let fonts = font_cache::cache_dir(&config.python);
        font_cache::seed(fonts.as_deref(), &mpl_config);

        let config = Arc::new(config);
        let queue = Arc::new(JobQueue::new(config.max_workers, config.queue_depth));
        let (ready_tx, ready_rx) = crossbeam_channel::unbounded();
        // Every worker is forked from this one warm template; the slots wait for it.
        let zygote = if config.zygote {
            let dirs = SlotDirs::create(&root.path().join("zygote"), 0)
                .map_err(Error::io("creating the zygote's directories"))?;
            Some(ZygoteCell::start(
                program.clone(),
                Arc::clone(&config),
                dirs,
                mpl_config.clone(),
            ))
        } else {
            None
        };
        let shared = Arc::new(Shared {
            config: Arc::clone(&config),
            program,
            mpl_config,
            queue: Arc::clone(&queue),
            zygote: zygote.clone(),
            gauges: (0..config.max_workers)
                .map(|_| SlotGauge::default())
                .collect(),
            counters: Counters::default(),
            live: AtomicUsize::new(0),
            pressure: PressureGauge::new(config.memory_pressure.clone()),
        });
        let mut slots = Vec::with_capacity(config.max_workers);
        for index in 0..config.max_workers {
            let dirs = SlotDirs::create(root.path(), index)
                .map_err(Error::io("creating worker directories"))?;
            let slot = Slot {
                index,
                shared: Arc::clone(&shared),
                dirs,
                lost_at: Cell::new(None),
                live: Cell::new(false),
                spare: RefCell::new(None),
            };
            // The first `min_workers` slots start a worker now; the others when the
            // pool grows.
            let ready = (index < config.min_workers).then(|| ready_tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("pyward-slot-{index}"))
                .spawn(move || slot.run_guarded(ready))
                .map_err(Error::Spawn)?;
            slots.push(handle);
        }
        drop(ready_tx);

        let mut pool = Pool {
            config,
            shared,
            queue,
            slots,
            next_job: AtomicU64::new(1),
            zygote,
            seeds: RandomState::new(),
            warmup: PoolWarmup {
                total: Duration::ZERO,
                per_worker_ms: Vec::new(),
                render_once_off: None,
                text_metrics: 0,
                text_metrics_off: None,
            },
            root,
        };
        let mut per_worker = vec![0.0; pool.config.min_workers];
        let mut render_once_off = None;
        let (mut text_metrics, mut text_metrics_off) = (0, None);
        for _ in 0..pool.config.min_workers {
            match ready_rx.recv() {
                Ok(Ok((slot, ready))) => {
                    per_worker[slot] = ready.warmup_ms;
                    render_once_off = render_once_off.or(ready.render_once_off);
                    text_metrics = text_metrics.max(ready.text_metrics);
                    text_metrics_off = text_metrics_off.or(ready.text_metrics_off);
                }
                // Dropping `pool` stops the workers that did start.
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(Error::Protocol("a pool slot ended during start-up".into())),
            }
        }
        font_cache::save(fonts.as_deref(), &pool.shared.mpl_config);
        pool.warmup = PoolWarmup {
            total: started.elapsed(),
            per_worker_ms: per_worker,
            render_once_off,
            text_metrics,
            text_metrics_off,
        };
        Ok(Executor {
            pool: Arc::new(pool),
        })
    }

    /// How long the pool took to warm up.
    pub fn warmup(&self) -> &PoolWarmup {
        &self.pool.warmup
    }

    /// The process id of each live worker. For monitoring and chaos testing; a pid
    /// may be stale by the time it is read.
    pub fn worker_pids(&self) -> Vec<u32> {
        let gauges = self.pool.shared.gauges.iter();
        gauges.map(SlotGauge::pid).filter(|&p| p != 0).collect()
    }

    /// What the pool is doing now: each live worker (pid, birth, jobs, memory read
    /// from `/proc` now), busy and queued counts, the zygote, fallbacks and
    /// retirements. Reading every worker's memory takes about a millisecond per worker.
    pub fn stats(&self) -> PoolStats {
        let shared = &self.pool.shared;
        let workers: Vec<WorkerStats> = (shared.gauges.iter().enumerate())
            .filter_map(|(slot, g)| g.snapshot(slot))
            .collect();
        let config = &self.pool.config;
        PoolStats {
            busy: workers.iter().filter(|w| w.busy).count(),
            workers,
            queued: self.pool.queue.len(),
            unanswered: self.pool.queue.unanswered(),
            queue_depth: config.queue_depth,
            min_workers: config.min_workers,
            max_workers: config.max_workers,
            zygote: self.pool.zygote.as_ref().map(|z| z.stats()),
            forked: shared.counters.forked.load(Ordering::Relaxed),
            cold_fallbacks: shared.counters.cold_fallbacks.load(Ordering::Relaxed),
            retired: shared.counters.retired(),
            slot_panics: shared.counters.slot_panics.load(Ordering::Relaxed),
            tenant_switches: shared.counters.tenant_switches.load(Ordering::Relaxed),
            spares: shared.counters.spares.load(Ordering::Relaxed),
            reuse_across_tenants: config.reuse_across_tenants,
            host_pressure: shared.pressure.under_pressure(),
        }
    }

    /// The zygote's process id, waiting while it warms up in the background (see
    /// [`ExecutorBuilder::zygote`]). `None` when it is off or could not start.
    #[doc(hidden)]
    pub fn zygote_pid(&self) -> Option<u32> {
        self.pool.zygote.as_ref().and_then(|z| z.pid())
    }

    /// The last recycle of `slot`: from the moment its worker was killed (or retired)
    /// to the replacement's `Ready`, and whether the replacement was forked from the
    /// zygote. `None` before the first recycle. For benchmarks and tests.
    #[doc(hidden)]
    pub fn last_recycle(&self, slot: usize) -> Option<(Duration, bool)> {
        self.pool.shared.gauges.get(slot)?.last_recycle()
    }

    /// The most workers the pool runs at once (`max_workers`).
    pub fn workers(&self) -> usize {
        self.pool.config.max_workers
    }

    /// The gate policy jobs are checked against.
    pub fn policy(&self) -> &gate::Policy {
        &self.pool.config.policy
    }

    /// Who encodes the PNG figures of this pool's jobs.
    pub fn png_encoder(&self) -> crate::PngEncoder {
        self.pool.config.png_encoder
    }

    /// Runs one job: gate, queue, a warm worker under the watchdog, validation,
    /// blocking the calling thread until the outcome is in (see [`Executor::run_async`]
    /// for async callers).
    ///
    /// The job's own failures are in `Ok(outcome)`; `Err` means the executor could not
    /// do its work (queue full under [`Backpressure::Reject`](crate::Backpressure::Reject), invalid inputs, a worker
    /// that could not be spawned, a protocol violation, shutdown).
    pub fn run(&self, job: Job) -> Result<Outcome> {
        // The same path as `run_async`, polled to the end on this thread.
        future::block_on(self.run_async(job))
    }

    /// Runs `job`; while it fails and fewer than `max_attempts` ran, asks `repair` for new
    /// code (it would call the caller's model with the [`Feedback`]) and runs that with
    /// the same inputs, limits and checks. `repair` returning `None` gives up. Every
    /// attempt is a new job that passes the gate from zero.
    ///
    /// `Err` only for infrastructure failures, as in [`Executor::run`].
    pub fn run_with_repair(
        &self,
        job: Job,
        max_attempts: usize,
        repair: impl FnMut(&Feedback<'_>) -> Option<String>,
    ) -> Result<Repaired> {
        repair::run_with_repair(self, job, max_attempts, repair)
    }

    /// Runs one job like [`Executor::run`], as a future that needs no particular async
    /// runtime (it is woken from the pool's own threads).
    ///
    /// The gate runs here, on the calling thread (microseconds to a few milliseconds);
    /// the rest happens when the future is polled. Under [`Backpressure::Wait`](crate::Backpressure::Wait) a full
    /// queue makes the future wait without blocking a thread.
    ///
    /// **Dropping the future cancels the job**: a job still queued leaves the queue; a
    /// running job's worker is killed and replaced by a fork of the warm template, so the
    /// slot takes its next job within milliseconds. [`JobFuture::cancel_handle`] cancels
    /// from elsewhere while the future is still awaited; it then resolves to an outcome
    /// whose failure is [`JobFailure::Cancelled`].
    ///
    /// ```no_run
    /// # async fn demo(exec: pyward::Executor) -> pyward::Result<()> {
    /// let outcome = exec.run_async(pyward::Job::new("plt.plot([1, 2]); plt.savefig(OUT)")).await?;
    /// println!("{}", outcome.status());
    /// # Ok(()) }
    /// ```
    pub fn run_async(&self, job: Job) -> JobFuture {
        let pool = &self.pool;
        match self.prepare(job) {
            Err(e) => JobFuture::ready(Err(e)),
            Ok(Prepared::Answered(outcome)) => JobFuture::ready(Ok(outcome)),
            Ok(Prepared::Queue(job)) => {
                JobFuture::queue(job, Arc::clone(&pool.queue), pool.config.backpressure)
            }
        }
    }

    /// Everything before the queue: limits, the seed, the arrays' names and the gate.
    fn prepare(&self, job: Job) -> Result<Prepared> {
        let submitted = Instant::now();
        let config = &self.pool.config;
        let job_id = self.pool.next_job.fetch_add(1, Ordering::Relaxed);
        let seed = job
            .seed
            .unwrap_or_else(|| self.pool.seeds.hash_one(job_id) & 0xffff_ffff);
        let policy = &config.policy;
        check_inputs(&job, policy)?;
        let refused = |failure: JobFailure| {
            let gate = submitted.elapsed();
            let timings = Timings {
                gate,
                total: gate,
                ..Timings::default()
            };
            Ok(Prepared::Answered(Outcome::not_run(
                failure,
                timings,
                seed,
                policy.gate_enabled(),
            )))
        };
        if let Some(failure) = JobFailure::from_gate(gate::check_bytes(&job.code, policy), policy) {
            return refused(failure);
        }
        // The exact text the gate checked (a leading BOM stripped, as CPython does for
        // bytes but not for a str passed to compile(); notebook lines as comments).
        let code = gate::decode_source(&job.code, policy)
            .expect("the gate accepted this source")
            .into_owned();
        let gate_time = submitted.elapsed();

        let (timeout, memory_bytes) = self.effective_limits(&job);
        let mut required = vec![job.out_name.clone()];
        required.extend(job.expected);
        Ok(Prepared::Queue(Queued {
            job_id,
            code,
            sources: job.sources,
            timeout,
            memory_bytes,
            seed,
            out_name: job.out_name,
            required,
            submitted,
            gate_time,
            gate_enabled: policy.gate_enabled(),
            validators: job.validators,
            tenant: job.tenant,
            blank_check: job.blank_check,
            figures_in_memory: job.figures_in_memory,
            describe_figures: job.describe_figures,
            arrays: job.arrays,
        }))
    }

    /// The deadline and memory ceiling `job` runs with (its overrides applied).
    pub fn effective_limits(&self, job: &Job) -> (Duration, u64) {
        let config = &self.pool.config;
        let memory = job
            .memory_bytes
            .map_or(config.memory_bytes, |m| m.min(config.memory_bytes));
        (job.timeout.unwrap_or(config.timeout), memory)
    }

    /// The pool's private temporary directory (removed on drop).
    pub fn work_root(&self) -> &std::path::Path {
        self.pool.root.path()
    }
}

/// A job after [`Executor::prepare`]: answered already (the gate refused it), or ready
/// for the queue.
// Built once per submission and consumed at once: no box needed.
#[allow(clippy::large_enum_variant)]
enum Prepared {
    Answered(Outcome),
    Queue(Queued),
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the queue ends each slot's loop; each slot then stops its worker. A
        // job still running (only an abandoned future can be waiting for it: every
        // blocking caller holds a handle) is cancelled, so dropping the last handle
        // takes milliseconds, not a job's deadline, even on an async thread.
        self.queue.close();
        for slot in self.slots.drain(..) {
            let _ = slot.join();
        }
        // After the slots: stopping their workers asks the zygote to reap them.
        if let Some(z) = self.zygote.take() {
            z.shutdown();
        }
    }
}

/// Refuses, before the gate, a job whose in-memory input names are not plain relative
/// paths (a refused job is still recorded, and its record stores the inputs under
/// their names), or whose arrays could not be prepared or whose array names are not
/// plain, unused, policy-clean identifiers (the name must pass the gate on its own).
fn check_inputs(job: &Job, policy: &gate::Policy) -> Result<()> {
    if let Some(why) = &job.input_error {
        return Err(Error::InvalidJob(why.clone()));
    }
    // The worker joins it to its output directory: anything but one plain name would
    // point elsewhere (and the job's error would quote a host path).
    if let Err(why) = crate::output_dir::check_file_name(&job.out_name) {
        let shown = crate::outcome::head_chars(&job.out_name, 80);
        return Err(Error::InvalidJob(format!("out_name {shown:?}: {why}")));
    }
    let names: Vec<&str> = job
        .sources
        .iter()
        .filter_map(|source| match source {
            crate::job::Source::Bytes { name, .. } => Some(name.as_str()),
            crate::job::Source::Dir(_) => None,
        })
        .collect();
    let mut files = std::collections::HashSet::new();
    for name in &names {
        if !files.insert(*name) {
            let shown = crate::outcome::head_chars(name, 80);
            return Err(Error::InvalidJob(format!(
                "input name {shown:?}: given twice"
            )));
        }
    }
    for source in &job.sources {
        if let crate::job::Source::Bytes { name, .. } = source {
            // The names a run record can store its inputs under (no control character,
            // no backslash, bounded), so that every job the pool takes can be recorded;
            // and no input is also the folder of another (`a` and `a/b`), which neither
            // the job's folder nor a record can hold.
            let folder_of_another = || {
                name.match_indices('/')
                    .any(|(at, _)| files.contains(&name[..at]))
            };
            let why = match crate::output_dir::check_relative_path(name) {
                Err(why) => Some(why.to_string()),
                Ok(()) if crate::workspace::plain_relative(name).is_none() => {
                    Some("not a plain relative path".to_string())
                }
                Ok(()) if folder_of_another() => {
                    Some("another input is named as its folder".to_string())
                }
                Ok(()) => None,
            };
            if let Some(why) = why {
                let shown = crate::outcome::head_chars(name, 80);
                return Err(Error::InvalidJob(format!("input name {shown:?}: {why}")));
            }
        }
    }
    if job.arrays.len() > crate::fdpass::MAX_FDS {
        return Err(Error::InvalidJob(format!(
            "{} arrays (at most {})",
            job.arrays.len(),
            crate::fdpass::MAX_FDS
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for (name, _) in &job.arrays {
        let bad = |why: &str| Err(Error::InvalidJob(format!("array name {name:?}: {why}")));
        let mut chars = name.chars();
        let plain = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain {
            return bad("must be an ASCII identifier starting with a letter");
        }
        if policy.injected_names().any(|n| n == name) {
            return bad("would shadow a name every job gets");
        }
        if !seen.insert(name.as_str()) {
            return bad("given twice");
        }
        match gate::check(name, policy) {
            Ok(v) if v.is_allowed() => {}
            _ => return bad("is a Python keyword or a name the gate refuses"),
        }
    }
    Ok(())
}
