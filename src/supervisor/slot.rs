//! One pool slot: a thread that owns one worker process at a time, takes jobs from the
//! shared queue, runs each under the watchdog, and replaces the worker when it dies, is
//! killed, or has run its quota of jobs.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

mod fate;

use fate::{Bounds, Fate, Leave, Reply, ResetWait, Said, Tally, Unfit};

use super::config::{Isolation, PngEncoder};
use super::queue::{cancelled_before_start, Entry, Pop, Queued};
use super::stats::{Counters, MemoryUsage};
use super::stopped;
use super::ticket::Ticket;
use super::watchdog::{watch, Answer};
use super::Shared;
use crate::error::{Error, Result};
use crate::outcome::{Artifact, JobFailure, Outcome, Retirement, Timings, WorkerExit, WorkerInfo};
use crate::protocol::answer::{self, AnswerLimits};
use crate::protocol::{self, DoneMsg, HostMsg, RunMsg, WorkerMsg};
use crate::supervisor::launch::describe_exit;
use crate::supervisor::process::{MemoryRead, RecvError, WorkerProcess};
use crate::validate::{self, OutputRules};
use crate::workspace::{self, SlotDirs};

/// How often an idle slot looks at its idle time and the host's memory pressure, and
/// a slot without a worker at whether the pool may grow.
const IDLE_TICK: Duration = Duration::from_millis(200);

/// Largest RGBA buffer a worker hands over for the host to encode (a 4096 x 4096
/// figure); larger PNGs are encoded by matplotlib in the worker.
const RAW_PNG_LIMIT: u64 = 64 << 20;

/// Anonymous memory growth since the last full memory reading that calls for the next
/// one (see `Slot::memory_growth`).
const FULL_READ_GROWTH: u64 = 4 << 20;

/// Jobs after which memory is read in full however little it seemed to grow.
const FULL_READ_EVERY: u64 = 8;

/// How long a worker's between-job reset may take at least (past the job's own
/// deadline) before the worker is replaced.
const RESET_GRACE: Duration = Duration::from_secs(2);

/// How long a timed-out worker gets to write where its code was before it is killed.
const STACK_DUMP_WAIT: Duration = Duration::from_millis(250);

/// Everything a slot thread needs.
pub(crate) struct Slot {
    pub index: usize,
    pub shared: Arc<Shared>,
    pub dirs: SlotDirs,
    /// When this slot's worker was last killed or retired (start of a recycle).
    pub lost_at: Cell<Option<Instant>>,
    /// Whether this slot counts in [`Shared::live`].
    pub live: Cell<bool>,
    /// A process forked from the template that has run nothing, kept while the slot's
    /// worker is warm for a tenant: a job of another tenant (or any replacement) takes
    /// it instead of waiting for a fork. Not counted in [`Shared::live`] or the gauges
    /// until it serves.
    pub spare: RefCell<Option<WorkerProcess>>,
}

/// Why an idle worker leaves the pool.
enum IdleRetirement {
    Idle,
    HostPressure,
}

impl Slot {
    /// [`Self::run`], started again after a panic. No input from a worker may cause
    /// one (its every frame is checked), so a panic is a bug of ours; it must still not
    /// cost the pool a slot. Unwinding drops the worker in hand (its `Drop` kills it)
    /// and the job's reply (its caller gets an error); the panic is counted
    /// ([`PoolStats::slot_panics`](crate::PoolStats::slot_panics)) and the slot serves
    /// on with a new worker.
    pub(crate) fn run_guarded(self, started: Option<Sender<Result<(usize, protocol::ReadyMsg)>>>) {
        let mut started = started;
        loop {
            let run = std::panic::AssertUnwindSafe(|| self.run(started.take()));
            if std::panic::catch_unwind(run).is_ok() {
                return;
            }
            Counters::bump(&self.shared.counters.slot_panics);
            tracing::error!(
                slot = self.index,
                "pyward: a pool slot panicked; it serves on with a new worker"
            );
            self.gauge().set_busy(false);
            self.gauge().stopped();
            self.set_live(false);
            let _ = self.dirs.clear();
        }
    }

    /// With `started`, starts this slot's first worker and reports the result there
    /// (the pool's first `min_workers` slots); then serves the queue until it is
    /// closed, growing (taking a job with no worker yet) and shrinking (retiring an
    /// idle worker) as the pool's bounds allow.
    fn run(&self, started: Option<Sender<Result<(usize, protocol::ReadyMsg)>>>) {
        let mut worker = None;
        if let Some(started) = started {
            self.set_live(true);
            match self.spawn_with_clear() {
                Ok(w) => {
                    let _ = started.send(Ok((self.index, w.ready.clone())));
                    worker = Some(w);
                }
                Err(e) => {
                    let _ = started.send(Err(e));
                    self.set_live(false);
                    return;
                }
            }
        }
        let mut idle_since = Instant::now();
        loop {
            let entry = if let Some(w) = &worker {
                let prefer = w.served.clone();
                match self.shared.queue.pop_warm(IDLE_TICK, prefer.as_deref()) {
                    Pop::Job(entry) => entry,
                    Pop::Closed => break,
                    Pop::Idle => {
                        if let Some(why) = self.retire_idle(idle_since) {
                            self.retire(worker.take().expect("checked"), why);
                            self.drop_spare();
                        } else {
                            self.keep_spare(worker.as_ref());
                        }
                        continue;
                    }
                }
            } else {
                match (self.shared.queue).pop_to_grow(IDLE_TICK, &|| self.may_grow()) {
                    // `serve` starts the worker.
                    Pop::Job(entry) => entry,
                    Pop::Closed => break,
                    Pop::Idle => continue,
                }
            };
            self.set_live(true);
            self.run_entry(&mut worker, entry);
            if worker.is_none() && !self.shared.config.one_shot {
                // Replace a lost or retired worker now, not when the next job waits.
                worker = self.take_spare().or_else(|| self.spawn().ok());
            }
            self.keep_spare(worker.as_ref());
            self.set_live(worker.is_some());
            idle_since = Instant::now();
        }
        self.gauge().stopped();
        self.set_live(false);
        if let Some(w) = worker {
            w.shutdown();
        }
        self.drop_spare();
    }

    /// Forks a spare while this slot's worker is kept warm for a tenant and none is
    /// ready, so that the next job of another tenant finds a process waiting: the fork
    /// and its render-once happen between jobs, not in that job's latency. Only when
    /// workers never serve two tenants, a zygote is running and no job waits (a waiting
    /// job would wait for the fork too: the slot forks in its next idle moment).
    fn keep_spare(&self, worker: Option<&WorkerProcess>) {
        let shared = &self.shared;
        let warm_for_tenant = worker.is_some_and(|w| w.served.is_some());
        if shared.config.reuse_across_tenants
            || !warm_for_tenant
            || self.spare.borrow().is_some()
            || shared.queue.len() > 0
        {
            return;
        }
        let Some(zygote) = shared.zygote.as_ref() else {
            return;
        };
        let prewarm = self.prewarm();
        let forked = WorkerProcess::fork_now(
            &shared.config,
            &self.dirs,
            &shared.mpl_config,
            zygote,
            prewarm,
        );
        if let Some(Ok(spare)) = forked {
            shared.counters.spares.fetch_add(1, Ordering::Relaxed);
            *self.spare.borrow_mut() = Some(spare);
        }
    }

    /// Shuts the spare down, if there is one.
    fn drop_spare(&self) {
        if let Some(spare) = self.spare.take() {
            self.shared.counters.spares.fetch_sub(1, Ordering::Relaxed);
            spare.shutdown();
        }
    }

    /// Whether a worker forked now renders once before `Ready`. Every job a fork serves
    /// first pays what the fork undid (matplotlib's font cache, the copy-on-write
    /// faults of a first draw) unless the fork rendered first: with Fresh every job is
    /// some worker's first, and without reuse across tenants every new tenant's is. The
    /// render costs more CPU than it saves the job (measured: 32 ms for 12), so it is
    /// done only while no job waits: at saturation CPU, not latency, is what is short.
    fn prewarm(&self) -> bool {
        let config = &self.shared.config;
        (config.isolation == Isolation::Fresh || !config.reuse_across_tenants)
            && self.shared.queue.len() == 0
    }

    /// The spare, published as this slot's worker; `None` without one, or when it wrote
    /// anything before being given a job (it is killed).
    fn take_spare(&self) -> Option<WorkerProcess> {
        let mut spare = self.spare.take()?;
        self.shared.counters.spares.fetch_sub(1, Ordering::Relaxed);
        if spare.has_unread() {
            spare.kill();
            return None;
        }
        self.started(&mut spare);
        Some(spare)
    }

    /// Runs one job from the queue and answers it; leaves `worker` empty when the
    /// worker that ran it was lost or retired.
    fn run_entry(&self, worker: &mut Option<WorkerProcess>, entry: Entry) {
        let reply = entry.reply;
        if reply.ticket().is_cancelled() {
            // Cancelled between leaving the queue and now: nothing ran.
            reply.send(Ok(cancelled_before_start(&entry.job)));
            return;
        }
        let config = &self.shared.config;
        let fresh = config.serves_one_job(entry.job.tenant.as_deref());
        self.gauge().set_busy(true);
        let result = self.serve(worker, *entry.job, reply.ticket());
        self.gauge().set_busy(false);
        // Fresh isolation, or a job that is its own tenant: the used worker dies before
        // its caller hears back (a worker that replaced a lost one during `serve` has
        // run nothing and stays).
        let used = if fresh {
            worker.take_if(|w| w.jobs_run > 0)
        } else {
            None
        };
        if let Some(u) = &used {
            self.lost_at.set(Some(Instant::now()));
            u.signal_kill();
        }
        if worker.is_none() {
            self.gauge().stopped();
        }
        reply.send(result);
        if let Some(mut used) = used {
            if config.one_shot {
                used.kill();
            } else {
                *worker = self.replace_used(used);
            }
            return;
        }
        let Some(reason) = worker.as_ref().and_then(|w| w.retiring) else {
            return;
        };
        let w = worker.take().expect("checked above");
        self.lost_at.set(Some(Instant::now()));
        self.gauge().stopped();
        let (leave, tally) = fate::departure(reason);
        let counters = &self.shared.counters;
        Counters::bump(match tally {
            Tally::Memory => &counters.retired_memory,
            Tally::Quota => &counters.retired_quota,
            Tally::Other => &counters.retired_other,
        });
        match leave {
            Leave::Kill => {
                w.signal_kill();
                *worker = self.replace_used(w);
            }
            Leave::Shutdown => w.shutdown(),
        }
    }

    fn gauge(&self) -> &super::stats::SlotGauge {
        &self.shared.gauges[self.index]
    }

    /// Keeps [`Shared::live`] in step with whether this slot has a worker.
    fn set_live(&self, live: bool) {
        if self.live.replace(live) != live {
            if live {
                self.shared.live.fetch_add(1, Ordering::Relaxed);
            } else {
                self.shared.live.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether a slot without a worker may start one for a waiting job: always below
    /// `min_workers`, otherwise only while the host has memory to spare.
    fn may_grow(&self) -> bool {
        let live = self.shared.live.load(Ordering::Relaxed);
        live < self.shared.config.min_workers || !self.shared.pressure.under_pressure()
    }

    /// Whether this idle worker should leave the pool now, claiming its place in the
    /// live count when it should (so two slots never both retire the pool below
    /// `min_workers`): idle past the idle timeout, or the largest idle worker while
    /// the host is under memory pressure.
    fn retire_idle(&self, idle_since: Instant) -> Option<IdleRetirement> {
        let shared = &self.shared;
        let why = if idle_since.elapsed() >= shared.config.idle_timeout {
            IdleRetirement::Idle
        } else if shared.live.load(Ordering::Relaxed) > shared.config.min_workers
            && shared.pressure.under_pressure()
            && self.largest_idle()
        {
            IdleRetirement::HostPressure
        } else {
            return None;
        };
        let min = shared.config.min_workers;
        let claimed = (shared.live).fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n > min).then(|| n - 1)
        });
        claimed.ok()?;
        self.live.set(false);
        Some(why)
    }

    /// Whether this slot's worker has the most private memory of the idle ones (as
    /// measured after their last jobs; ties go to the lower slot).
    fn largest_idle(&self) -> bool {
        let mine = self.gauge().private_after_job();
        let idle = |g: &&super::stats::SlotGauge| g.pid() != 0 && !g.is_busy();
        (self.shared.gauges.iter().enumerate())
            .filter(|(i, g)| *i != self.index && idle(g))
            .all(|(i, g)| {
                let theirs = g.private_after_job();
                theirs < mine || (theirs == mine && i > self.index)
            })
    }

    /// Retires an idle worker (its place in the live count is already given up).
    fn retire(&self, worker: WorkerProcess, why: IdleRetirement) {
        let counters = &self.shared.counters;
        Counters::bump(match why {
            IdleRetirement::Idle => &counters.retired_idle,
            IdleRetirement::HostPressure => &counters.retired_pressure,
        });
        self.gauge().stopped();
        worker.shutdown();
        let _ = self.dirs.clear();
    }

    /// Starts a worker (without touching the slot's directories) and records it:
    /// forked from the zygote when there is one (waiting for it while it warms up),
    /// cold otherwise.
    fn spawn(&self) -> Result<WorkerProcess> {
        let shared = &self.shared;
        let mut worker = WorkerProcess::spawn(
            &shared.program,
            &shared.config,
            &self.dirs,
            &shared.mpl_config,
            shared.zygote.as_ref(),
            self.prewarm(),
        )?;
        self.started(&mut worker);
        Ok(worker)
    }

    /// Fresh isolation: replaces the used worker (already sent SIGKILL), then wipes the
    /// slot's directories, only after the reap, so nothing it wrote can outlive it into
    /// the next job.
    fn replace_used(&self, mut used: WorkerProcess) -> Option<WorkerProcess> {
        let next = match self.take_spare() {
            Some(spare) => {
                used.kill();
                Some(spare)
            }
            None => self.replace_dying(used, || self.spawn().ok()),
        };
        if self.dirs.clear().is_err() {
            // Leftovers could leak into the next job: drop this worker too.
            return None;
        }
        next
    }

    /// Starts the next worker with `start` while the kernel tears `dying` (already sent
    /// SIGKILL) down, then reaps it: the reap, a few milliseconds, overlaps the start
    /// instead of preceding it. The caller wipes the slot's directories after this.
    fn replace_dying(
        &self,
        mut dying: WorkerProcess,
        start: impl FnOnce() -> Option<WorkerProcess>,
    ) -> Option<WorkerProcess> {
        let next = start();
        dying.kill();
        next
    }

    /// The slot's first worker, in emptied directories.
    fn spawn_with_clear(&self) -> Result<WorkerProcess> {
        let _ = self.dirs.clear();
        self.spawn()
    }

    /// Forks a replacement from a zygote that is running right now, or `None` (then
    /// the slot starts one after the job's answer has gone back, as usual).
    fn fork_replacement(&self) -> Option<WorkerProcess> {
        let shared = &self.shared;
        let zygote = shared.zygote.as_ref()?;
        let mut worker = WorkerProcess::fork_now(
            &shared.config,
            &self.dirs,
            &shared.mpl_config,
            zygote,
            self.prewarm(),
        )?
        .ok()?;
        self.started(&mut worker);
        Some(worker)
    }

    /// Publishes a new worker (pid, birth, memory) and, after a loss, how long the
    /// recycle took. A cold start where a zygote was wanted is the visible fallback.
    fn started(&self, worker: &mut WorkerProcess) {
        let forked = worker.forked();
        let counters = &self.shared.counters;
        if forked {
            Counters::bump(&counters.forked);
        } else if let Some(zygote) = &self.shared.zygote {
            Counters::bump(&counters.cold_fallbacks);
            tracing::warn!(
                slot = self.index,
                pid = worker.pid(),
                zygote = %zygote.describe(),
                "pyward: worker started cold: the zygote is not running"
            );
        }
        worker.birth = MemoryUsage::of_process(worker.pid()).unwrap_or_default();
        (self.gauge()).started(worker.pid(), forked, worker.birth.private_bytes);
        if let Some(lost) = self.lost_at.take() {
            self.gauge().set_last_recycle(lost.elapsed(), forked);
        }
    }

    /// Runs one job on this slot's worker (spawning one first if needed).
    fn serve(
        &self,
        slot_worker: &mut Option<WorkerProcess>,
        mut job: Queued,
        ticket: &Ticket,
    ) -> Result<Outcome> {
        self.fit_for(slot_worker, job.tenant.as_deref());
        // A slot that grows the pool forks its worker first: that wait is queue time.
        let worker = match slot_worker {
            Some(w) => w,
            None => slot_worker.insert(self.spawn()?),
        };
        let dispatched = Instant::now();
        let mut timings = Timings {
            queue: dispatched
                .duration_since(job.submitted)
                .saturating_sub(job.gate_time),
            gate: job.gate_time,
            ..Timings::default()
        };
        let info_pid = worker.pid();
        let info = WorkerInfo {
            slot: self.index,
            pid: worker.pid(),
            jobs_before: worker.jobs_run,
            sandbox: worker.ready.sandbox.clone(),
            versions: worker.ready.versions.clone(),
            render_once: worker.ready.render_once,
        };

        let stage_start = Instant::now();
        if let Err(e) = workspace::stage(&job.sources, &self.dirs.src) {
            let _ = self.dirs.clear();
            return Err(Error::InvalidJob(e.to_string()));
        }
        timings.stage = stage_start.elapsed();

        worker.clear_stderr();
        worker.jobs_run += 1;
        worker.served = job.tenant.clone();
        let nonce = match protocol::Nonce::random() {
            Ok(n) => n,
            Err(e) => return Err(Error::io("drawing the job's nonce")(e)),
        };
        let (run, limits) = self.run_msg(nonce, &mut job);
        let fds: Vec<_> = job.arrays.iter().map(|(_, a)| a.raw_fd()).collect();
        let exec_start = Instant::now();
        let run = HostMsg::Run(run);
        let mut answer = match worker.send_with_fds(&run, &fds) {
            Ok(()) => watch(
                worker,
                &limits,
                exec_start + job.timeout,
                job.memory_bytes,
                // The caller cancelled, or the last Executor handle is gone (nobody
                // could still be waiting but an abandoned future).
                &|| ticket.is_cancelled() || self.shared.queue.is_closed(),
            ),
            Err(e) => Answer::Died(format!("worker stopped reading: {e}")),
        };
        let answered_at = Instant::now();
        // The code back from the message it travelled in: a timeout's location quotes it.
        if let HostMsg::Run(run) = run {
            job.code = run.code;
        }
        let mut outcome = Outcome {
            result: Ok(Vec::new()),
            stdout: String::new(),
            stdout_dropped: 0,
            stderr: String::new(),
            timings,
            worker: Some(info),
            seed: job.seed,
            gate_enabled: job.gate_enabled,
            retired: None,
        };
        outcome.timings.answer = answered_at.duration_since(exec_start);
        let answered = matches!(answer, Answer::Done(..));
        // What becomes of the worker, decided from its answer; what it has to say for
        // the answer is read before that is carried out.
        let fate = fate::after_answer(&answer);
        let mut said = Said::default();
        match &mut answer {
            Answer::Done(done, _) => {
                said.stderr = worker.stderr_tail();
                outcome.retired = fate::retirement(&done.housekeeping_failures, &[]);
                // In range: `protocol::answer::check_done` checked both.
                let ms = |ms: f64| Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default();
                outcome.timings.exec = ms(done.exec_ms);
                outcome.timings.describe = ms(done.figures.describe_ms);
                outcome.stdout = std::mem::take(&mut done.stdout);
                outcome.stdout_dropped = done.stdout_dropped;
                // An error quotes it itself (its stderr tail), from `done`.
                if done.error.is_none() {
                    outcome.stderr = std::mem::take(&mut done.stderr);
                }
            }
            Answer::Timeout => {
                let dump = worker.dump_stack(STACK_DUMP_WAIT);
                said.stopped_at = dump.and_then(|d| stopped::from_dump(&d, &job.code));
            }
            _ => {}
        }
        if let Some((exit, stderr)) = self.carry_out(slot_worker, fate) {
            said.exit = Some(exit);
            said.stderr = stderr;
        }
        // What the caller receives.
        outcome.result = match fate::reply(answer, said, &self.bounds(&job)) {
            Reply::Failed(failure) => Err(failure),
            Reply::Check(done, artifacts) => {
                let validate_start = Instant::now();
                let checked = self.check_outputs(&job, &done, artifacts);
                outcome.timings.validate = validate_start.elapsed();
                checked
            }
        };
        // The worker resets itself after answering (while the figures were encoded and
        // checked above); it gets no job before its report. A worker for one job has
        // no next job and sends none.
        if answered && !self.shared.config.serves_one_job(job.tenant.as_deref()) {
            if let Some(w) = slot_worker.as_mut().filter(|w| w.pid() == info_pid) {
                let deadline = (exec_start + job.timeout).max(Instant::now() + RESET_GRACE);
                let closed = || self.shared.queue.is_closed();
                let reset_start = Instant::now();
                let reset = wait_reset(w, nonce, deadline, job.memory_bytes, &closed);
                outcome.timings.reset = reset_start.elapsed();
                outcome.retired = outcome.retired.or_else(|| fate::reset_retirement(&reset));
                if let Some(failure) = fate::reset_failure(&reset) {
                    outcome.result = Err(failure);
                }
                self.carry_out(slot_worker, fate::after_reset(&reset));
            }
        }
        // Leftovers could leak into the next job: then it gets a new worker.
        let cleared = self.dirs.clear().is_ok();
        self.carry_out(slot_worker, fate::after_clear(cleared));
        outcome.retired = outcome
            .retired
            .or_else(|| fate::workspace_retirement(cleared));
        // Mark the worker that ran the job (not a replacement already started).
        if let Some(w) = slot_worker.as_mut().filter(|w| w.pid() == info_pid) {
            self.mark_retiring(w, &mut outcome.retired);
        }
        outcome.timings.total = job.submitted.elapsed();
        Ok(outcome)
    }

    /// The message that hands `job` (its code taken: it comes back with the message)
    /// to the worker, and the bounds its answer is read under.
    fn run_msg(&self, nonce: protocol::Nonce, job: &mut Queued) -> (RunMsg, AnswerLimits) {
        let config = &self.shared.config;
        let run = RunMsg {
            nonce,
            code: std::mem::take(&mut job.code),
            seed: job.seed,
            out_name: job.out_name.clone(),
            stdout_cap: config.stdout_cap,
            max_artifacts: config.max_artifacts,
            max_artifact_bytes: config.max_artifact_bytes,
            figures_in_memory: job.figures_in_memory,
            arrays: job.arrays.iter().map(|(n, a)| a.meta(n)).collect(),
            describe_figures: job.describe_figures,
            raw_png_limit: match config.png_encoder {
                PngEncoder::Host => RAW_PNG_LIMIT,
                _ => 0,
            },
        };
        let limits = AnswerLimits {
            nonce,
            stdout_cap: run.stdout_cap,
            max_artifacts: run.max_artifacts,
            max_artifact_bytes: run.max_artifact_bytes,
            raw_png_limit: run.raw_png_limit,
        };
        (run, limits)
    }

    /// Marks the worker that ran a job as retiring after its answer (see
    /// [`fate::departure`]) for the retirement already found, else for memory growth
    /// or its job quota; the retirement goes into the outcome.
    fn mark_retiring(&self, w: &mut WorkerProcess, retired: &mut Option<Retirement>) {
        let config = &self.shared.config;
        // A fresh-isolation worker dies after this job anyway.
        if retired.is_none() && config.isolation == Isolation::Reuse {
            *retired = self.memory_growth(w);
        }
        if retired.is_none() {
            *retired = fate::quota(w.jobs_run, config.max_jobs_per_worker);
        }
        w.retiring = retired.as_ref().map(|r| r.reason);
    }

    /// Replaces a worker unfit for the next job (see [`fate::unfit`]) before it gets it.
    fn fit_for(&self, slot_worker: &mut Option<WorkerProcess>, tenant: Option<&str>) {
        let config = &self.shared.config;
        let unfit = slot_worker.as_mut().and_then(|w| {
            let may_serve = config.may_serve(w.jobs_run, w.served.as_deref(), tenant);
            fate::unfit(w.has_unread(), may_serve)
        });
        let Some(why) = unfit else {
            return;
        };
        let old = slot_worker.take().expect("checked");
        let counters = &self.shared.counters;
        match why {
            Unfit::WroteWhileIdle => {
                tracing::warn!(
                    slot = self.index,
                    pid = old.pid(),
                    "pyward: an idle worker wrote to its answer pipe; replaced before its next job"
                );
                Counters::bump(&counters.retired_other);
            }
            Unfit::OtherTenant => Counters::bump(&counters.tenant_switches),
        }
        self.lost_at.set(Some(Instant::now()));
        old.signal_kill();
        *slot_worker = self.replace_used(old);
    }

    /// Carries out a fate decided while serving a job; for a worker that died, how it
    /// ended and its stderr, read after the reap.
    fn carry_out(
        &self,
        slot_worker: &mut Option<WorkerProcess>,
        fate: Fate,
    ) -> Option<(WorkerExit, String)> {
        match fate {
            Fate::Keep => None,
            Fate::Recycle(_) => {
                self.lost_at.set(Some(Instant::now()));
                if let Some(old) = slot_worker.take() {
                    // Reaped before the job's outcome goes back (a caller that sees
                    // `Timeout` can rely on the worker being gone); the slot's
                    // directories are wiped after that, at the end of `serve`.
                    old.signal_kill();
                    *slot_worker = self.replace_dying(old, || self.fork_replacement());
                }
                None
            }
            Fate::Reap => {
                self.lost_at.set(Some(Instant::now()));
                let mut w = slot_worker.take().expect("worker present");
                let status = w.reap(Duration::from_millis(200));
                Some((describe_exit(status), w.stderr_tail()))
            }
        }
    }

    /// The bounds `job` ran under.
    fn bounds(&self, job: &Queued) -> Bounds {
        let config = &self.shared.config;
        Bounds {
            timeout: job.timeout,
            memory_bytes: job.memory_bytes,
            scratch_bytes: config.scratch_bytes,
            scratch_files: config.scratch_files,
            max_artifacts: config.max_artifacts,
            max_artifact_bytes: config.max_artifact_bytes,
        }
    }

    /// The artifacts of a job whose code ran to its end, checked against its output
    /// rules, with the summaries of its figures.
    fn check_outputs(
        &self,
        job: &Queued,
        done: &DoneMsg,
        mut artifacts: Vec<Artifact>,
    ) -> std::result::Result<Vec<Artifact>, JobFailure> {
        let rules = OutputRules {
            out: &job.out_name,
            required: &job.required,
            max_bytes: self.shared.config.max_artifact_bytes,
            max_artifacts: self.shared.config.max_artifacts,
            blank_check: job.blank_check,
            validators: &job.validators,
            inputs: &self.dirs.src,
        };
        let checked = validate::check_outputs(
            &rules,
            &mut artifacts,
            &done.artifacts_refused,
            &done.figures,
            done.bound,
        );
        for a in &mut artifacts {
            a.figure = done.figures.summary_of(&a.name).cloned();
        }
        checked.map(|()| artifacts)
    }

    /// Reads the worker's memory after a job (for the stats and for choosing which
    /// idle worker to retire under pressure); a retirement when its private memory
    /// grew past the soft limit since it became ready.
    ///
    /// The full reading (`smaps_rollup`) walks every page of the worker: 1.3-2.2 ms on
    /// the job's path. Private memory grows two ways: memory a job allocates and keeps,
    /// which the anonymous resident count (`statm`, kernel counters, ~11 us) shows at
    /// once; and pages shared with the zygote that jobs write to (copy-on-write), which
    /// it does not show, bounded by what was shared at birth and creeping up job by
    /// job. So the full reading runs when anonymous memory grew by `FULL_READ_GROWTH`
    /// since the last one, and every `FULL_READ_EVERY` jobs.
    fn memory_growth(&self, w: &mut WorkerProcess) -> Option<Retirement> {
        let anon_bytes = w.anon_resident_bytes();
        if let (Some(anon), Some(last)) = (anon_bytes, w.memory_read) {
            if anon.saturating_sub(last.anon_bytes) < FULL_READ_GROWTH
                && w.jobs_run - last.jobs_run < FULL_READ_EVERY
            {
                return None;
            }
        }
        let now = MemoryUsage::of_process(w.pid())?;
        w.memory_read = anon_bytes.map(|anon_bytes| MemoryRead {
            anon_bytes,
            jobs_run: w.jobs_run,
        });
        self.gauge().set_private_after_job(now.private_bytes);
        let limit = self.shared.config.memory_growth;
        fate::memory_growth(limit, &w.birth, now.private_bytes, w.jobs_run)
    }
}

/// The worker's report of its between-job reset for the run of `nonce`, waited for
/// under the job's deadline (or the reset's grace) and memory ceiling, as the job
/// itself was: a worker is watched until its loop has really finished.
fn wait_reset(
    worker: &mut WorkerProcess,
    nonce: protocol::Nonce,
    deadline: Instant,
    memory: u64,
    closed: &dyn Fn() -> bool,
) -> std::result::Result<protocol::ResetMsg, ResetWait> {
    loop {
        let tick = (Instant::now() + IDLE_TICK).min(deadline);
        match worker.recv_msg(tick) {
            Ok(WorkerMsg::Reset(reset)) => {
                return answer::check_reset(&reset, nonce)
                    .map(|()| reset)
                    .map_err(ResetWait::Violation)
            }
            Ok(other) => {
                return Err(ResetWait::Violation(format!(
                    "a {} message where the between-job reset was due",
                    answer::kind(&other)
                )))
            }
            Err(RecvError::Violation(why)) => return Err(ResetWait::Violation(why)),
            Err(RecvError::Timeout) if worker.rss_bytes().is_some_and(|rss| rss > memory) => {
                return Err(ResetWait::Failed(
                    "the between-job reset went over the memory limit".into(),
                ))
            }
            Err(RecvError::Timeout) if Instant::now() < deadline && !closed() => continue,
            Err(RecvError::Timeout) => {
                return Err(ResetWait::Failed(
                    "the between-job reset did not finish in time".into(),
                ))
            }
            Err(RecvError::Closed(why)) => {
                return Err(ResetWait::Failed(format!(
                    "the worker ended during its between-job reset: {why}"
                )))
            }
        }
    }
}

/// The directory that holds the shared matplotlib configuration and font cache.
pub(crate) fn mpl_config_dir(root: &Path) -> PathBuf {
    root.join("mplconfig")
}
