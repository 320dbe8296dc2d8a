//! One pool slot: a thread that owns one worker process at a time, takes jobs from the
//! shared queue, runs each under the watchdog, and replaces the worker when it dies, is
//! killed, or has run its quota of jobs.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::queue::JobQueue;
use super::ticket::Ticket;
use super::zygote::ZygoteCell;
use crate::config::{Config, Isolation};
use crate::error::{Error, Result};
use crate::outcome::{
    head_chars, tail_chars, Artifact, JobFailure, Outcome, PythonError, RetireReason, Retirement,
    Timings, WorkerInfo, STDERR_TAIL_CHARS,
};
use crate::protocol::{self, HostMsg, RunMsg, WorkerMsg};
use crate::sandbox::ScratchLimit;
use crate::supervisor::process::{describe_exit, RecvError, WorkerProcess};
use crate::validate::{self, NotBlank, ValidationContext, Validator};
use crate::workspace::{self, SlotDirs};

/// How often the watchdog samples a busy worker's resident set.
const WATCH_INTERVAL: Duration = Duration::from_millis(10);

/// Extra time for a finished job's artifacts to arrive after its answer.
const ARTIFACT_GRACE: Duration = Duration::from_secs(5);

/// A job that passed the gate, waiting in the queue.
pub(crate) struct Queued {
    pub job_id: u64,
    pub code: String,
    pub sources: Vec<crate::job::Source>,
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub seed: u64,
    pub out_name: String,
    pub required: Vec<String>,
    pub submitted: Instant,
    pub gate_time: Duration,
    pub gate_enabled: bool,
    pub validators: Vec<Arc<dyn Validator>>,
    pub blank_check: bool,
    pub figures_in_memory: bool,
    pub arrays: Vec<(String, crate::SharedArray)>,
}

/// Everything a slot thread needs.
pub(crate) struct Slot {
    pub index: usize,
    pub config: Arc<Config>,
    pub program: PathBuf,
    pub dirs: SlotDirs,
    pub mpl_config: PathBuf,
    pub queue: Arc<JobQueue>,
    /// The pid of each slot's live worker (0 while it has none), for monitoring.
    pub pids: Arc<[AtomicU32]>,
    /// The zygote replacements are forked from (`None`: always start cold).
    pub zygote: Option<Arc<ZygoteCell>>,
    /// Per slot: the last recycle (kill or retirement to the replacement's `Ready`), in
    /// nanoseconds, with the top bit set when the replacement was forked.
    pub recycles: Arc<[AtomicU64]>,
    /// When this slot's worker was last killed or retired (start of a recycle).
    pub lost_at: Cell<Option<Instant>>,
}

impl Slot {
    /// The blank-figure check and the job's own validators, while its inputs are
    /// still staged.
    fn run_validators(&self, job: &Queued, artifacts: &[Artifact]) -> Result<(), JobFailure> {
        let ctx = ValidationContext {
            artifacts,
            inputs: &self.dirs.src,
        };
        let blank =
            (job.blank_check && job.out_name.to_ascii_lowercase().ends_with(".png")).then(|| {
                NotBlank {
                    artifact: job.out_name.clone(),
                }
            });
        let all = blank
            .iter()
            .map(|b| b as &dyn Validator)
            .chain(job.validators.iter().map(|v| v.as_ref()));
        for v in all {
            v.check(&ctx)
                .map_err(|detail| validate::invalid(&v.id(), detail))?;
        }
        Ok(())
    }

    /// Starts this slot's first worker and reports the result on `started`, then serves
    /// the queue until it is closed.
    pub(crate) fn run(self, started: Sender<Result<(usize, protocol::ReadyMsg)>>) {
        let mut worker = match self.spawn_with(None) {
            Ok(w) => {
                let _ = started.send(Ok((self.index, w.ready.clone())));
                Some(w)
            }
            Err(e) => {
                let _ = started.send(Err(e));
                return;
            }
        };
        drop(started);
        let fresh = self.config.isolation == Isolation::Fresh;
        while let Some(entry) = self.queue.pop() {
            let reply = entry.reply;
            if reply.ticket().is_cancelled() {
                // Cancelled between leaving the queue and now: nothing ran.
                reply.send(Ok(super::future::cancelled_before_start(&entry.job)));
                continue;
            }
            let result = self.serve(&mut worker, *entry.job, reply.ticket());
            // Fresh isolation: the used worker dies before its caller hears back (a worker
            // that replaced a lost one during `serve` has run nothing and stays).
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
                self.pids[self.index].store(0, Ordering::Relaxed);
            }
            reply.send(result);
            if let Some(used) = used {
                worker = self.replace_used(used);
                continue;
            }
            // Replace a lost or retired worker now, not when the next job is waiting.
            match worker.as_ref().and_then(|w| w.retiring) {
                // Its state after the job is not trusted: killed, not asked to exit
                // (an orderly exit would run finalizers the job may have left).
                Some(RetireReason::ResetFailed | RetireReason::StateChanged) => {
                    let w = worker.take().expect("checked above");
                    self.lost_at.set(Some(Instant::now()));
                    w.signal_kill();
                    worker = self.replace_used(w);
                    continue;
                }
                Some(_) => {
                    if let Some(w) = worker.take() {
                        self.lost_at.set(Some(Instant::now()));
                        w.shutdown();
                    }
                }
                None => {}
            }
            if worker.is_none() {
                worker = self.spawn().ok();
            }
        }
        self.pids[self.index].store(0, Ordering::Relaxed);
        if let Some(w) = worker {
            w.shutdown();
        }
    }

    /// Starts a replacement worker: forked from the zygote when there is one.
    fn spawn(&self) -> Result<WorkerProcess> {
        self.spawn_with(self.zygote.as_ref())
    }

    /// Fresh isolation: replaces the used worker (already sent SIGKILL), then wipes the
    /// slot's directories, only after the reap, so nothing it wrote can outlive it into
    /// the next job.
    fn replace_used(&self, used: WorkerProcess) -> Option<WorkerProcess> {
        let next = self.replace_dying(used, || self.start_worker(self.zygote.as_ref()).ok());
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

    fn spawn_with(&self, zygote: Option<&Arc<ZygoteCell>>) -> Result<WorkerProcess> {
        let _ = self.dirs.clear();
        self.start_worker(zygote)
    }

    /// Starts a worker (without touching the slot's directories) and records it.
    fn start_worker(&self, zygote: Option<&Arc<ZygoteCell>>) -> Result<WorkerProcess> {
        let worker = WorkerProcess::spawn(
            &self.program,
            &self.config,
            &self.dirs,
            &self.mpl_config,
            zygote,
        )?;
        self.started(&worker);
        Ok(worker)
    }

    /// Forks a replacement from a zygote that is running right now, or `None` (then
    /// the slot starts one after the job's answer has gone back, as usual).
    fn fork_replacement(&self) -> Option<WorkerProcess> {
        let zygote = self.zygote.as_ref()?;
        let worker =
            WorkerProcess::fork_now(&self.config, &self.dirs, &self.mpl_config, zygote)?.ok()?;
        self.started(&worker);
        Some(worker)
    }

    /// Publishes a new worker's pid and, after a loss, how long the recycle took.
    fn started(&self, worker: &WorkerProcess) {
        self.pids[self.index].store(worker.pid(), Ordering::Relaxed);
        if let Some(lost) = self.lost_at.take() {
            let nanos = lost.elapsed().as_nanos().min(u128::from(u64::MAX >> 1)) as u64;
            let flag = if worker.forked() { 1 << 63 } else { 0 };
            self.recycles[self.index].store(nanos | flag, Ordering::Relaxed);
        }
    }

    /// Runs one job on this slot's worker (spawning one first if needed).
    fn serve(
        &self,
        slot_worker: &mut Option<WorkerProcess>,
        mut job: Queued,
        ticket: &Ticket,
    ) -> Result<Outcome> {
        let dispatched = Instant::now();
        let mut timings = Timings {
            queue: dispatched
                .duration_since(job.submitted)
                .saturating_sub(job.gate_time),
            gate: job.gate_time,
            ..Timings::default()
        };
        let worker = match slot_worker {
            Some(w) => w,
            None => slot_worker.insert(self.spawn()?),
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
        let run = RunMsg {
            job_id: job.job_id,
            code: std::mem::take(&mut job.code),
            seed: job.seed,
            out_name: job.out_name.clone(),
            stdout_cap: self.config.stdout_cap,
            max_artifacts: self.config.max_artifacts,
            max_artifact_bytes: self.config.max_artifact_bytes,
            figures_in_memory: job.figures_in_memory,
            arrays: job.arrays.iter().map(|(n, a)| a.meta(n)).collect(),
        };
        let fds: Vec<_> = job.arrays.iter().map(|(_, a)| a.raw_fd()).collect();
        let exec_start = Instant::now();
        let answer = match worker.send_with_fds(&HostMsg::Run(run), &fds) {
            Ok(()) => watch(
                worker,
                job.job_id,
                exec_start + job.timeout,
                job.memory_bytes,
                // The caller cancelled, or the last Executor handle is gone (nobody
                // could still be waiting but an abandoned future).
                &|| ticket.is_cancelled() || self.queue.is_closed(),
            ),
            Err(e) => Answer::Died(format!("worker stopped reading: {e}")),
        };
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
        outcome.result = match answer {
            Answer::Done(done, artifacts) => {
                let done = *done;
                outcome.retired = retirement(&done);
                outcome.timings.exec = Duration::from_secs_f64(done.exec_ms.max(0.0) / 1000.0);
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
                                ScratchLimit::Bytes => self.config.scratch_bytes,
                                ScratchLimit::Files => self.config.scratch_files,
                            },
                        })
                    }
                    Some(e) if e.type_name == "MemoryError" => {
                        // The heap may be fragmented or half-full: start clean.
                        lost(slot_worker);
                        Err(JobFailure::MemoryExceeded {
                            limit_bytes: job.memory_bytes,
                        })
                    }
                    Some(e) => Err(JobFailure::PythonError(PythonError {
                        type_name: e.type_name,
                        message: e.message,
                        line: e.line,
                        traceback: e.traceback,
                        stderr_tail,
                    })),
                    None => {
                        let validate_start = Instant::now();
                        let mut artifacts = artifacts;
                        let checked =
                            check_refused(&done.artifacts_refused, &job.out_name, &job.required)
                                .and_then(|()| validate::validate(&mut artifacts, &job.required))
                                .and_then(|()| self.run_validators(&job, &artifacts));
                        outcome.timings.validate = validate_start.elapsed();
                        checked.map(|()| artifacts)
                    }
                }
            }
            Answer::Timeout => {
                lost(slot_worker);
                Err(JobFailure::Timeout { limit: job.timeout })
            }
            Answer::Cancelled => {
                lost(slot_worker);
                Err(JobFailure::Cancelled)
            }
            Answer::OverMemory => {
                lost(slot_worker);
                Err(JobFailure::MemoryExceeded {
                    limit_bytes: job.memory_bytes,
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
            Answer::Protocol(message) => {
                lost(slot_worker);
                let _ = self.dirs.clear();
                return Err(Error::Protocol(message));
            }
        };
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
            if outcome.retired.is_none() && w.jobs_run >= self.config.max_jobs_per_worker {
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
}

/// Retires the worker when the between-job reset failed or process-wide state changed
/// in a way that could not be restored (reported by the worker with the job's answer).
fn retirement(done: &protocol::DoneMsg) -> Option<Retirement> {
    let (reason, items) = if !done.housekeeping_failures.is_empty() {
        (RetireReason::ResetFailed, &done.housekeeping_failures)
    } else if !done.state_changes.is_empty() {
        (RetireReason::StateChanged, &done.state_changes)
    } else {
        return None;
    };
    let detail = head_chars(&items.join("; "), 1000);
    Some(Retirement { reason, detail })
}

/// A refused artifact (over the count or size cap) that the job was required to write
/// is an invalid output, not a missing one.
fn check_refused(refused: &[String], out: &str, required: &[String]) -> Result<(), JobFailure> {
    match refused.iter().find(|r| *r == out || required.contains(r)) {
        Some(name) => Err(JobFailure::InvalidOutput {
            check: "too-large".into(),
            detail: format!("{name} exceeds the artifact size or count cap"),
        }),
        None => Ok(()),
    }
}

enum Answer {
    Done(Box<protocol::DoneMsg>, Vec<Artifact>),
    Timeout,
    Cancelled,
    OverMemory,
    Died(String),
    Protocol(String),
}

/// The watchdog: waits for the job's answer while enforcing the wall-clock deadline and
/// the resident-set ceiling, and watching for the caller's cancellation. On any of them
/// the caller kills the worker: a job is never left running on a thread we merely
/// stopped waiting for.
fn watch(
    worker: &mut WorkerProcess,
    job_id: u64,
    deadline: Instant,
    memory: u64,
    cancelled: &dyn Fn() -> bool,
) -> Answer {
    loop {
        let tick = (Instant::now() + WATCH_INTERVAL).min(deadline);
        match worker.recv_msg(tick) {
            Ok(WorkerMsg::Done(done)) => {
                if done.job_id != job_id {
                    return Answer::Protocol(format!(
                        "answer for job {} while running job {job_id}",
                        done.job_id
                    ));
                }
                let mut artifacts = Vec::with_capacity(done.artifacts.len());
                for meta in &done.artifacts {
                    match worker.recv_frame(Instant::now() + ARTIFACT_GRACE) {
                        Ok(bytes) if bytes.len() as u64 == meta.len => artifacts.push(Artifact {
                            name: meta.name.clone(),
                            media_type: String::new(),
                            bytes,
                        }),
                        Ok(_) => {
                            return Answer::Protocol(format!(
                                "artifact {} has the wrong length",
                                meta.name
                            ))
                        }
                        Err(_) => return Answer::Died("artifacts did not arrive".into()),
                    }
                }
                return Answer::Done(done, artifacts);
            }
            Ok(other) => return Answer::Protocol(format!("unexpected message: {other:?}")),
            Err(RecvError::Closed(why)) => {
                // A worker the kernel killed for memory looks like a crash; say what it was.
                return Answer::Died(why);
            }
            Err(RecvError::Timeout) => {
                if Instant::now() >= deadline {
                    return Answer::Timeout;
                }
                if cancelled() {
                    return Answer::Cancelled;
                }
                if worker.rss_bytes().is_some_and(|rss| rss > memory) {
                    return Answer::OverMemory;
                }
            }
        }
    }
}

/// The directory that holds the shared matplotlib configuration and font cache.
pub(crate) fn mpl_config_dir(root: &Path) -> PathBuf {
    root.join("mplconfig")
}
