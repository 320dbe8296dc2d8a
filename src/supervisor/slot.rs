//! One pool slot: a thread that owns one worker process at a time, takes jobs from the
//! shared queue, runs each under the watchdog, and replaces the worker when it dies, is
//! killed, or has run its quota of jobs.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::config::{Isolation, MemoryGrowthLimit, PngEncoder};
use super::queue::{cancelled_before_start, Entry, Pop, Queued};
use super::stats::{Counters, MemoryUsage};
use super::stopped;
use super::ticket::Ticket;
use super::watchdog::{watch, Answer};
use super::Shared;
use crate::error::{Error, Result};
use crate::outcome::{
    head_chars, tail_chars, JobFailure, Outcome, PythonError, RetireReason, Retirement, Timings,
    WorkerInfo, STDERR_TAIL_CHARS,
};
use crate::protocol::answer::{self, AnswerLimits};
use crate::protocol::{self, HostMsg, RunMsg, WorkerMsg};
use crate::sandbox::ScratchLimit;
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
                worker = self.spawn().ok();
            }
            self.set_live(worker.is_some());
            idle_since = Instant::now();
        }
        self.gauge().stopped();
        self.set_live(false);
        if let Some(w) = worker {
            w.shutdown();
        }
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
        match reason {
            // Its state after the job is not trusted: killed, not asked to exit (an
            // orderly exit would run finalizers the job may have left).
            RetireReason::ResetFailed | RetireReason::StateChanged => {
                Counters::bump(&self.shared.counters.retired_other);
                w.signal_kill();
                *worker = self.replace_used(w);
            }
            RetireReason::MemoryGrowth => {
                Counters::bump(&self.shared.counters.retired_memory);
                w.shutdown();
            }
            _ => {
                Counters::bump(&self.shared.counters.retired_other);
                w.shutdown();
            }
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
        )?;
        self.started(&mut worker);
        Ok(worker)
    }

    /// Fresh isolation: replaces the used worker (already sent SIGKILL), then wipes the
    /// slot's directories, only after the reap, so nothing it wrote can outlive it into
    /// the next job.
    fn replace_used(&self, used: WorkerProcess) -> Option<WorkerProcess> {
        let next = self.replace_dying(used, || self.spawn().ok());
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
        let mut worker =
            WorkerProcess::fork_now(&shared.config, &self.dirs, &shared.mpl_config, zygote)?
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
        if slot_worker.as_mut().is_some_and(|w| w.has_unread()) {
            // An idle worker has nothing to say: whatever it wrote since its last reset
            // came from code of an earlier job. It gets no job.
            let old = slot_worker.take().expect("checked");
            tracing::warn!(
                slot = self.index,
                pid = old.pid(),
                "pyward: an idle worker wrote to its answer pipe; replaced before its next job"
            );
            Counters::bump(&self.shared.counters.retired_other);
            self.lost_at.set(Some(Instant::now()));
            old.signal_kill();
            *slot_worker = self.replace_used(old);
        }
        let tenant = job.tenant.as_deref();
        let config = &self.shared.config;
        if (slot_worker.as_ref())
            .is_some_and(|w| !config.may_serve(w.jobs_run, w.served.as_deref(), tenant))
        {
            // Kept warm for another tenant: this job gets a fresh fork of the template.
            let old = slot_worker.take().expect("checked");
            Counters::bump(&self.shared.counters.tenant_switches);
            self.lost_at.set(Some(Instant::now()));
            old.signal_kill();
            *slot_worker = self.replace_used(old);
        }
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
        let run = RunMsg {
            nonce,
            code: std::mem::take(&mut job.code),
            seed: job.seed,
            out_name: job.out_name.clone(),
            stdout_cap: self.shared.config.stdout_cap,
            max_artifacts: self.shared.config.max_artifacts,
            max_artifact_bytes: self.shared.config.max_artifact_bytes,
            figures_in_memory: job.figures_in_memory,
            arrays: job.arrays.iter().map(|(n, a)| a.meta(n)).collect(),
            describe_figures: job.describe_figures,
            raw_png_limit: match self.shared.config.png_encoder {
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
        let fds: Vec<_> = job.arrays.iter().map(|(_, a)| a.raw_fd()).collect();
        let exec_start = Instant::now();
        let run = HostMsg::Run(run);
        let answer = match worker.send_with_fds(&run, &fds) {
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
        // The code back from the message it travelled in: a timeout's location quotes it.
        if let HostMsg::Run(run) = run {
            job.code = run.code;
        }
        let mut outcome = Outcome {
            result: Ok(Vec::new()),
            stdout: String::new(),
            stdout_dropped: 0,
            timings,
            worker: Some(info),
            seed: job.seed,
            gate_enabled: job.gate_enabled,
            retired: None,
        };
        let lost = |w: &mut Option<WorkerProcess>| {
            self.lost_at.set(Some(Instant::now()));
            if let Some(old) = w.take() {
                // Reaped before the job's outcome goes back (a caller that sees
                // `Timeout` can rely on the worker being gone); the slot's directories
                // are wiped after that, at the end of `serve`.
                old.signal_kill();
                *w = self.replace_dying(old, || self.fork_replacement());
            }
        };
        let answered = matches!(answer, Answer::Done(..));
        outcome.result = match answer {
            Answer::Done(done, artifacts) => {
                let done = *done;
                outcome.retired = retirement(&done.housekeeping_failures, &[]);
                // In range: `protocol::answer::check_done` checked both.
                let ms = |ms: f64| Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default();
                outcome.timings.exec = ms(done.exec_ms);
                outcome.timings.describe = ms(done.figures.describe_ms);
                outcome.stdout = done.stdout;
                outcome.stdout_dropped = done.stdout_dropped;
                let stderr_tail = tail_chars(
                    &format!("{}{}", done.stderr, worker.stderr_tail()),
                    STDERR_TAIL_CHARS,
                );
                match done.error {
                    // Writes failed at the scratch limit: that is the job's failure,
                    // whatever it made of the error.
                    _ if done.scratch_exhausted.is_some() => {
                        let which = done.scratch_exhausted.expect("checked");
                        Err(JobFailure::ScratchFull {
                            which,
                            limit: match which {
                                ScratchLimit::Bytes => self.shared.config.scratch_bytes,
                                ScratchLimit::Files => self.shared.config.scratch_files,
                            },
                        })
                    }
                    Some(e) if e.type_name == "MemoryError" => {
                        // The heap may be fragmented or half-full: start clean.
                        lost(slot_worker);
                        Err(JobFailure::MemoryExceeded {
                            limit_bytes: job.memory_bytes,
                            raised: Some(Box::new(python_error(e, stderr_tail))),
                        })
                    }
                    Some(e) => Err(JobFailure::PythonError(python_error(e, stderr_tail))),
                    None => {
                        let validate_start = Instant::now();
                        let rules = OutputRules {
                            out: &job.out_name,
                            required: &job.required,
                            max_bytes: self.shared.config.max_artifact_bytes,
                            blank_check: job.blank_check,
                            validators: &job.validators,
                            inputs: &self.dirs.src,
                        };
                        let mut artifacts = artifacts;
                        let checked = validate::check_outputs(
                            &rules,
                            &mut artifacts,
                            &done.artifacts_refused,
                            &done.figures,
                        );
                        for a in &mut artifacts {
                            a.figure = done.figures.summary_of(&a.name).cloned();
                        }
                        outcome.timings.validate = validate_start.elapsed();
                        checked.map(|()| artifacts)
                    }
                }
            }
            Answer::Timeout => {
                let dump = worker.dump_stack(STACK_DUMP_WAIT);
                lost(slot_worker);
                Err(JobFailure::Timeout {
                    limit: job.timeout,
                    stopped_at: dump
                        .and_then(|d| stopped::from_dump(&d, &job.code))
                        .map(Box::new),
                })
            }
            Answer::Cancelled => {
                lost(slot_worker);
                Err(JobFailure::Cancelled)
            }
            Answer::OverMemory => {
                lost(slot_worker);
                Err(JobFailure::MemoryExceeded {
                    limit_bytes: job.memory_bytes,
                    raised: None,
                })
            }
            Answer::Died(why) => {
                self.lost_at.set(Some(Instant::now()));
                let mut w = slot_worker.take().expect("worker present");
                let status = w.reap(Duration::from_millis(200));
                let stderr_tail = tail_chars(&w.stderr_tail(), STDERR_TAIL_CHARS);
                drop(w);
                Err(JobFailure::WorkerCrashed {
                    exit: describe_exit(status),
                    detail: why,
                    stderr_tail,
                })
            }
            Answer::Violation(detail) => {
                lost(slot_worker);
                Err(JobFailure::ProtocolViolation { detail })
            }
        };
        // The worker resets itself after answering (while the figures were encoded and
        // checked above); it gets no job before its report. A worker for one job has
        // no next job and sends none.
        if answered && !self.shared.config.serves_one_job(job.tenant.as_deref()) {
            if let Some(w) = slot_worker.as_mut().filter(|w| w.pid() == info_pid) {
                let deadline = (exec_start + job.timeout).max(Instant::now() + RESET_GRACE);
                let closed = || self.shared.queue.is_closed();
                match wait_reset(w, nonce, deadline, job.memory_bytes, &closed) {
                    Ok(reset) => {
                        outcome.retired = outcome.retired.take().or_else(|| {
                            retirement(&reset.housekeeping_failures, &reset.state_changes)
                        });
                    }
                    Err(ResetWait::Violation(detail)) => {
                        // Something spoke after the answer without the run's nonce: the
                        // answer is not trusted either.
                        lost(slot_worker);
                        outcome.result = Err(JobFailure::ProtocolViolation { detail });
                    }
                    Err(ResetWait::Failed(detail)) => {
                        lost(slot_worker);
                        outcome.retired.get_or_insert(Retirement {
                            reason: RetireReason::ResetFailed,
                            detail,
                        });
                    }
                }
            }
        }
        if self.dirs.clear().is_err() {
            // Leftovers could leak into the next job: start over with a new worker.
            lost(slot_worker);
            outcome.retired.get_or_insert(Retirement {
                reason: RetireReason::Workspace,
                detail: "the slot's directories could not be emptied".into(),
            });
        }
        // Mark the worker that ran the job (not a replacement `lost` already started).
        if let Some(w) = slot_worker.as_mut().filter(|w| w.pid() == info_pid) {
            // A fresh-isolation worker dies after this job anyway.
            if outcome.retired.is_none() && self.shared.config.isolation == Isolation::Reuse {
                outcome.retired = self.memory_growth(w);
            }
            if outcome.retired.is_none() && w.jobs_run >= self.shared.config.max_jobs_per_worker {
                outcome.retired = Some(Retirement {
                    reason: RetireReason::JobQuota,
                    detail: format!("ran {} jobs", w.jobs_run),
                });
            }
            w.retiring = outcome.retired.as_ref().map(|r| r.reason);
        }
        outcome.timings.total = job.submitted.elapsed();
        Ok(outcome)
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
        let limit = match self.shared.config.memory_growth {
            MemoryGrowthLimit::BirthSize => w.birth.rss_bytes,
            MemoryGrowthLimit::Bytes(bytes) => bytes,
            MemoryGrowthLimit::Off => return None,
        };
        let grown = now.private_bytes.saturating_sub(w.birth.private_bytes);
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        (grown > limit).then(|| Retirement {
            reason: RetireReason::MemoryGrowth,
            detail: format!(
                "private memory grew by {:.0} MiB over {} jobs (soft limit {:.0} MiB)",
                mib(grown),
                w.jobs_run,
                mib(limit)
            ),
        })
    }
}

/// Retires the worker when the between-job reset failed or process-wide state changed
/// in a way that could not be restored (reported by the worker with its answer or its
/// reset).
fn retirement(failures: &[String], state_changes: &[String]) -> Option<Retirement> {
    let (reason, items) = if !failures.is_empty() {
        (RetireReason::ResetFailed, failures)
    } else if !state_changes.is_empty() {
        (RetireReason::StateChanged, state_changes)
    } else {
        return None;
    };
    let detail = head_chars(&items.join("; "), 1000);
    Some(Retirement { reason, detail })
}

/// Why a between-job reset was not reported.
enum ResetWait {
    /// Not by the deadline, the memory ceiling was crossed, or the worker ended.
    Failed(String),
    /// The worker sent something other than its reset for this run.
    Violation(String),
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

/// The job's exception as a failure, with the worker's stderr tail. Each text is cut to
/// the host's own bound (the worker's are a little lower, `_truncate` in
/// `python/prelude.py`): the worker runs the job's code, and what reaches a caller or a
/// model is the host's to bound.
fn python_error(e: protocol::PyErrorInfo, stderr_tail: String) -> PythonError {
    PythonError {
        type_name: head_chars(&e.type_name, 200),
        message: head_chars(&e.message, 4000),
        line: e.line,
        traceback: head_chars(&e.traceback, 8000),
        stderr_tail,
        hint: head_chars(&e.hint, 4000),
    }
}

/// The directory that holds the shared matplotlib configuration and font cache.
pub(crate) fn mpl_config_dir(root: &Path) -> PathBuf {
    root.join("mplconfig")
}
