//! The end of a job as values. From what a slot learned while serving a job (the
//! worker's answer, its between-job reset, whether the directories emptied), small
//! functions decide, each on its own:
//!
//! - what the caller receives: [`reply`] (the job's failure, or its artifacts still to
//!   be checked against the output rules), [`reset_failure`], and the retirement
//!   reported with the outcome ([`retirement`], [`reset_retirement`], [`quota`],
//!   [`memory_growth`]);
//! - what becomes of the worker: [`unfit`] before the job, then [`after_answer`],
//!   [`after_reset`] and [`after_clear`] (keep it, kill and replace it now, or reap
//!   it), and [`departure`] for a worker that retires once its answer has gone back.
//!
//! None of them touches a process: `Slot::serve` gathers the facts and carries the
//! decisions out.

use std::time::Duration;

use crate::outcome::{
    head_chars, tail_chars, Artifact, JobFailure, PythonError, RetireReason, Retirement, StoppedAt,
    WorkerExit, STDERR_TAIL_CHARS,
};
use crate::protocol::{self, DoneMsg, ResetMsg};
use crate::sandbox::ScratchLimit;
use crate::supervisor::config::MemoryGrowthLimit;
use crate::supervisor::stats::MemoryUsage;
use crate::supervisor::watchdog::Answer;
use crate::validate;

/// Why a live worker does not get the next job: it is killed and replaced first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unfit {
    /// It wrote to its answer pipe while idle: that came from code of an earlier job.
    WroteWhileIdle,
    /// It is kept warm for another tenant: the job gets a fresh fork of the template.
    OtherTenant,
}

/// Whether a worker may take the next job: one that wrote while idle never does; one
/// that may not serve the job's tenant does not.
pub(super) fn unfit(wrote_while_idle: bool, may_serve: bool) -> Option<Unfit> {
    if wrote_while_idle {
        Some(Unfit::WroteWhileIdle)
    } else if !may_serve {
        Some(Unfit::OtherTenant)
    } else {
        None
    }
}

/// What becomes of the worker that ran a job, decided at one step of serving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    /// It serves on (unless it retires once its answer has gone back:
    /// [`departure`]).
    Keep,
    /// Its state is not trusted: killed now, before the answer goes back (a caller
    /// that sees the failure can rely on it being gone), and replaced.
    Recycle(Loss),
    /// It ended during the job: reaped now, its exit and stderr go into the answer.
    Reap,
}

/// Why a worker is killed before its job's answer goes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loss {
    /// Past the job's deadline.
    Timeout,
    /// The caller cancelled, or the pool is closing.
    Cancelled,
    /// Past the memory ceiling.
    OverMemory,
    /// The job raised `MemoryError`: the heap may be fragmented or half-full.
    MemoryError,
    /// The answer broke the protocol.
    Violation,
    /// Something spoke after the answer without the run's nonce.
    ResetViolation,
    /// The between-job reset failed, ran out of time or memory, or the worker ended.
    ResetFailed,
    /// The slot's directories could not be emptied: leftovers could leak.
    Workspace,
}

/// How a job that answered ended, in the order its failures take precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Writes failed at the scratch limit, whatever the code made of the error.
    ScratchFull(ScratchLimit),
    /// Past a bound on its artifacts, whatever the code made of the error it met.
    Bound(protocol::ArtifactBound),
    /// The code raised `MemoryError`.
    MemoryError,
    /// The code raised another exception.
    Raised,
    /// The code ran to its end.
    Ran,
}

fn ended(done: &DoneMsg) -> Ended {
    match (&done.error, done.scratch_exhausted, done.bound) {
        (_, Some(which), _) => Ended::ScratchFull(which),
        (_, None, Some(bound)) => Ended::Bound(bound),
        (Some(e), None, None) if e.type_name == "MemoryError" => Ended::MemoryError,
        (Some(_), None, None) => Ended::Raised,
        (None, None, None) => Ended::Ran,
    }
}

/// The worker's fate from its answer: kept after an answer (even a raised exception),
/// except `MemoryError`; reaped when it died; killed and replaced otherwise.
pub(super) fn after_answer(answer: &Answer) -> Fate {
    match answer {
        Answer::Done(done, _) if ended(done) == Ended::MemoryError => {
            Fate::Recycle(Loss::MemoryError)
        }
        Answer::Done(..) => Fate::Keep,
        Answer::Died(_) => Fate::Reap,
        Answer::Timeout => Fate::Recycle(Loss::Timeout),
        Answer::Cancelled => Fate::Recycle(Loss::Cancelled),
        Answer::OverMemory => Fate::Recycle(Loss::OverMemory),
        Answer::Violation(_) => Fate::Recycle(Loss::Violation),
    }
}

/// The bounds a job ran under, as its failures name them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub scratch_bytes: u64,
    pub scratch_files: u64,
    pub max_artifacts: usize,
    pub max_artifact_bytes: u64,
}

/// What the slot read from the worker around its answer, before its fate was carried
/// out.
#[derive(Debug, Default)]
pub(super) struct Said {
    /// The worker's stderr (for a death, read after the reap).
    pub stderr: String,
    /// Where a timed-out job's code was, from the stack the worker dumped.
    pub stopped_at: Option<StoppedAt>,
    /// How a worker that died ended.
    pub exit: Option<WorkerExit>,
}

/// What the caller receives from the answer.
#[derive(Debug)]
pub(super) enum Reply {
    /// The job failed.
    Failed(JobFailure),
    /// The code ran to its end: its artifacts, once they pass the output checks.
    Check(Box<DoneMsg>, Vec<Artifact>),
}

/// What the caller receives from the worker's answer and what it said around it.
pub(super) fn reply(answer: Answer, said: Said, bounds: &Bounds) -> Reply {
    let failure = match answer {
        Answer::Done(mut done, artifacts) => {
            let end = ended(&done);
            let raised = done.error.take().map(|e| {
                let stderr = format!("{}{}", done.stderr, said.stderr);
                python_error(e, tail_chars(&stderr, STDERR_TAIL_CHARS))
            });
            match (end, raised) {
                (Ended::ScratchFull(which), _) => JobFailure::ScratchFull {
                    which,
                    limit: match which {
                        ScratchLimit::Bytes => bounds.scratch_bytes,
                        ScratchLimit::Files => bounds.scratch_files,
                    },
                },
                (Ended::Bound(bound), _) => {
                    validate::bound_failure(bound, bounds.max_artifacts, bounds.max_artifact_bytes)
                }
                (Ended::MemoryError, raised) => JobFailure::MemoryExceeded {
                    limit_bytes: bounds.memory_bytes,
                    raised: raised.map(Box::new),
                },
                (Ended::Raised, Some(e)) => JobFailure::PythonError(e),
                (Ended::Ran | Ended::Raised, _) => return Reply::Check(done, artifacts),
            }
        }
        Answer::Timeout => JobFailure::Timeout {
            limit: bounds.timeout,
            stopped_at: said.stopped_at.map(Box::new),
        },
        Answer::Cancelled => JobFailure::Cancelled,
        Answer::OverMemory => JobFailure::MemoryExceeded {
            limit_bytes: bounds.memory_bytes,
            raised: None,
        },
        Answer::Died(why) => JobFailure::WorkerCrashed {
            exit: said.exit.unwrap_or(WorkerExit::Unknown),
            detail: why,
            stderr_tail: tail_chars(&said.stderr, STDERR_TAIL_CHARS),
        },
        Answer::Violation(detail) => JobFailure::ProtocolViolation { detail },
    };
    Reply::Failed(failure)
}

/// The job's exception as a failure, with the worker's stderr tail. Each text is cut to
/// the host's own bound (the worker's are a little lower, `_truncate` in
/// `python/prelude/`): the worker runs the job's code, and what reaches a caller or a
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

/// Retires the worker when the between-job reset failed or process-wide state changed
/// in a way that could not be restored (reported by the worker with its answer or its
/// reset).
pub(super) fn retirement(failures: &[String], state_changes: &[String]) -> Option<Retirement> {
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
#[derive(Debug)]
pub(super) enum ResetWait {
    /// Not by the deadline, the memory ceiling was crossed, or the worker ended.
    Failed(String),
    /// The worker sent something other than its reset for this run.
    Violation(String),
}

/// The worker's fate after its between-job reset: kept when it reported one, killed
/// and replaced otherwise.
pub(super) fn after_reset(reset: &Result<ResetMsg, ResetWait>) -> Fate {
    match reset {
        Ok(_) => Fate::Keep,
        Err(ResetWait::Violation(_)) => Fate::Recycle(Loss::ResetViolation),
        Err(ResetWait::Failed(_)) => Fate::Recycle(Loss::ResetFailed),
    }
}

/// The retirement the reset calls for (the outcome keeps an earlier one).
pub(super) fn reset_retirement(reset: &Result<ResetMsg, ResetWait>) -> Option<Retirement> {
    match reset {
        Ok(reset) => retirement(&reset.housekeeping_failures, &reset.state_changes),
        Err(ResetWait::Failed(detail)) => Some(Retirement {
            reason: RetireReason::ResetFailed,
            detail: detail.clone(),
        }),
        Err(ResetWait::Violation(_)) => None,
    }
}

/// What the caller receives instead of the answer after the reset: something spoke
/// after the answer without the run's nonce, so the answer is not trusted either.
pub(super) fn reset_failure(reset: &Result<ResetMsg, ResetWait>) -> Option<JobFailure> {
    match reset {
        Err(ResetWait::Violation(detail)) => Some(JobFailure::ProtocolViolation {
            detail: detail.clone(),
        }),
        _ => None,
    }
}

/// The worker's fate once the slot's directories were emptied, or failed to be.
pub(super) fn after_clear(cleared: bool) -> Fate {
    if cleared {
        Fate::Keep
    } else {
        Fate::Recycle(Loss::Workspace)
    }
}

/// The retirement reported when the slot's directories could not be emptied.
pub(super) fn workspace_retirement(cleared: bool) -> Option<Retirement> {
    (!cleared).then(|| Retirement {
        reason: RetireReason::Workspace,
        detail: "the slot's directories could not be emptied".into(),
    })
}

/// A retirement once the worker has run its quota of jobs.
pub(super) fn quota(jobs_run: u64, max_jobs: u64) -> Option<Retirement> {
    (jobs_run >= max_jobs).then(|| Retirement {
        reason: RetireReason::JobQuota,
        detail: format!("ran {jobs_run} jobs"),
    })
}

/// A retirement when the worker's private memory (`now_private`) grew past the soft
/// limit since it became ready (`birth`).
pub(super) fn memory_growth(
    limit: MemoryGrowthLimit,
    birth: &MemoryUsage,
    now_private: u64,
    jobs_run: u64,
) -> Option<Retirement> {
    let limit = match limit {
        MemoryGrowthLimit::BirthSize => birth.rss_bytes,
        MemoryGrowthLimit::Bytes(bytes) => bytes,
        MemoryGrowthLimit::Off => return None,
    };
    let grown = now_private.saturating_sub(birth.private_bytes);
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    (grown > limit).then(|| Retirement {
        reason: RetireReason::MemoryGrowth,
        detail: format!(
            "private memory grew by {:.0} MiB over {} jobs (soft limit {:.0} MiB)",
            mib(grown),
            jobs_run,
            mib(limit)
        ),
    })
}

/// How a retiring worker leaves once its caller has the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leave {
    /// Killed, not asked to exit (an orderly exit would run finalizers the job may
    /// have left: its state after the job is not trusted), and replaced at once.
    Kill,
    /// Asked to exit; the slot starts the next worker when it needs one.
    Shutdown,
}

/// The count a retirement adds to
/// ([`PoolStats`](crate::PoolStats)'s `retired_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tally {
    Memory,
    Quota,
    Other,
}

/// How a worker retired for `reason` leaves, and where it is counted.
pub(super) fn departure(reason: RetireReason) -> (Leave, Tally) {
    match reason {
        RetireReason::ResetFailed | RetireReason::StateChanged => (Leave::Kill, Tally::Other),
        RetireReason::MemoryGrowth => (Leave::Shutdown, Tally::Memory),
        RetireReason::JobQuota => (Leave::Shutdown, Tally::Quota),
        RetireReason::Workspace => (Leave::Shutdown, Tally::Other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ArtifactBound, Nonce, PyErrorInfo};

    fn bounds() -> Bounds {
        Bounds {
            timeout: Duration::from_secs(3),
            memory_bytes: 1 << 30,
            scratch_bytes: 5 << 20,
            scratch_files: 100,
            max_artifacts: 16,
            max_artifact_bytes: 1 << 20,
        }
    }

    fn raised(type_name: &str) -> PyErrorInfo {
        PyErrorInfo {
            type_name: type_name.into(),
            message: "boom".into(),
            line: Some(3),
            traceback: "tb".into(),
            hint: String::new(),
        }
    }

    fn done(edit: impl FnOnce(&mut DoneMsg)) -> Answer {
        let mut done = DoneMsg::new(Nonce::default());
        done.stderr = "warned\n".into();
        edit(&mut done);
        Answer::Done(Box::new(done), Vec::new())
    }

    fn failure(answer: Answer, said: Said) -> JobFailure {
        match reply(answer, said, &bounds()) {
            Reply::Failed(f) => f,
            Reply::Check(..) => panic!("expected a failure"),
        }
    }

    #[test]
    fn a_worker_that_wrote_while_idle_is_unfit_whatever_it_may_serve() {
        assert_eq!(unfit(true, true), Some(Unfit::WroteWhileIdle));
        assert_eq!(unfit(true, false), Some(Unfit::WroteWhileIdle));
        assert_eq!(unfit(false, false), Some(Unfit::OtherTenant));
        assert_eq!(unfit(false, true), None);
    }

    #[test]
    fn the_worker_is_kept_after_an_answer_except_memory_error() {
        assert_eq!(after_answer(&done(|_| {})), Fate::Keep);
        assert_eq!(
            after_answer(&done(|d| d.error = Some(raised("KeyError")))),
            Fate::Keep
        );
        assert_eq!(
            after_answer(&done(|d| d.error = Some(raised("MemoryError")))),
            Fate::Recycle(Loss::MemoryError)
        );
        // Past the scratch limit or an artifact bound, a MemoryError is not the end:
        // the worker stays.
        assert_eq!(
            after_answer(&done(|d| {
                d.error = Some(raised("MemoryError"));
                d.scratch_exhausted = Some(ScratchLimit::Bytes);
            })),
            Fate::Keep
        );
        assert_eq!(
            after_answer(&done(|d| {
                d.error = Some(raised("MemoryError"));
                d.bound = Some(ArtifactBound::MaxArtifacts);
            })),
            Fate::Keep
        );
    }

    #[test]
    fn a_worker_that_did_not_answer_is_recycled_or_reaped() {
        assert_eq!(after_answer(&Answer::Died("eof".into())), Fate::Reap);
        for (answer, loss) in [
            (Answer::Timeout, Loss::Timeout),
            (Answer::Cancelled, Loss::Cancelled),
            (Answer::OverMemory, Loss::OverMemory),
            (Answer::Violation("x".into()), Loss::Violation),
        ] {
            assert_eq!(after_answer(&answer), Fate::Recycle(loss));
        }
    }

    #[test]
    fn a_clean_answer_goes_to_the_output_checks() {
        assert!(matches!(
            reply(done(|_| {}), Said::default(), &bounds()),
            Reply::Check(..)
        ));
    }

    #[test]
    fn the_scratch_limit_and_artifact_bounds_come_before_the_exception() {
        let scratch = done(|d| {
            d.error = Some(raised("OSError"));
            d.scratch_exhausted = Some(ScratchLimit::Files);
            d.bound = Some(ArtifactBound::MaxArtifacts);
        });
        assert_eq!(
            failure(scratch, Said::default()),
            JobFailure::ScratchFull {
                which: ScratchLimit::Files,
                limit: 100
            }
        );
        let bound = done(|d| {
            d.error = Some(raised("MemoryError"));
            d.bound = Some(ArtifactBound::MaxArtifactBytes);
        });
        assert_eq!(
            failure(bound, Said::default()),
            validate::bound_failure(ArtifactBound::MaxArtifactBytes, 16, 1 << 20)
        );
    }

    #[test]
    fn an_exception_carries_the_jobs_stderr_then_the_workers() {
        let said = Said {
            stderr: "worker said\n".into(),
            ..Said::default()
        };
        let JobFailure::PythonError(e) =
            failure(done(|d| d.error = Some(raised("KeyError"))), said)
        else {
            panic!("expected a python error");
        };
        assert_eq!(e.type_name, "KeyError");
        assert_eq!(e.line, Some(3));
        assert_eq!(e.stderr_tail, "warned\nworker said\n");

        let long = PyErrorInfo {
            message: "m".repeat(10_000),
            ..raised("MemoryError")
        };
        let memory = failure(done(|d| d.error = Some(long)), Said::default());
        let JobFailure::MemoryExceeded {
            limit_bytes,
            raised: Some(e),
        } = memory
        else {
            panic!("expected memory exceeded with the exception: {memory:?}");
        };
        assert_eq!(limit_bytes, 1 << 30);
        assert_eq!(e.type_name, "MemoryError");
        assert_eq!(e.message, format!("{}...", "m".repeat(4000)));
    }

    #[test]
    fn the_failures_of_a_job_that_did_not_answer() {
        let at = StoppedAt {
            line: 7,
            traceback: "line 7".into(),
            in_loop: Some((7, "while True:".into())),
        };
        let timeout = Said {
            stopped_at: Some(at.clone()),
            ..Said::default()
        };
        assert_eq!(
            failure(Answer::Timeout, timeout),
            JobFailure::Timeout {
                limit: Duration::from_secs(3),
                stopped_at: Some(Box::new(at)),
            }
        );
        assert_eq!(
            failure(Answer::Cancelled, Said::default()),
            JobFailure::Cancelled
        );
        assert_eq!(
            failure(Answer::OverMemory, Said::default()),
            JobFailure::MemoryExceeded {
                limit_bytes: 1 << 30,
                raised: None
            }
        );
        assert_eq!(
            failure(Answer::Violation("bad frame".into()), Said::default()),
            JobFailure::ProtocolViolation {
                detail: "bad frame".into()
            }
        );
        let died = Said {
            stderr: format!("{}Segmentation fault", "x".repeat(5000)),
            exit: Some(WorkerExit::Signal { number: 11 }),
            ..Said::default()
        };
        let JobFailure::WorkerCrashed {
            exit,
            detail,
            stderr_tail,
        } = failure(Answer::Died("pipe closed".into()), died)
        else {
            panic!("expected a crash");
        };
        assert_eq!(exit, WorkerExit::Signal { number: 11 });
        assert_eq!(detail, "pipe closed");
        assert!(stderr_tail.ends_with("Segmentation fault"));
        assert!(stderr_tail.chars().count() <= STDERR_TAIL_CHARS);
    }

    #[test]
    fn the_reset_keeps_retires_or_recycles() {
        let changed = ResetMsg {
            state_changes: vec!["rcParams".into(), "locale".into()],
            ..ResetMsg::default()
        };
        let violation = JobFailure::ProtocolViolation {
            detail: "no nonce".into(),
        };
        let cases = [
            (Ok(ResetMsg::default()), Fate::Keep, None, None),
            (
                Ok(changed),
                Fate::Keep,
                Some((RetireReason::StateChanged, "rcParams; locale")),
                None,
            ),
            (
                Err(ResetWait::Failed("too slow".into())),
                Fate::Recycle(Loss::ResetFailed),
                Some((RetireReason::ResetFailed, "too slow")),
                None,
            ),
            (
                Err(ResetWait::Violation("no nonce".into())),
                Fate::Recycle(Loss::ResetViolation),
                None,
                Some(violation),
            ),
        ];
        for (reset, fate, retired, failure) in cases {
            assert_eq!(after_reset(&reset), fate, "{reset:?}");
            let got = reset_retirement(&reset);
            let got = got.as_ref().map(|r| (r.reason, r.detail.as_str()));
            assert_eq!(got, retired, "{reset:?}");
            assert_eq!(reset_failure(&reset), failure, "{reset:?}");
        }
    }

    #[test]
    fn housekeeping_failures_come_before_state_changes() {
        let failures = vec!["scratch".to_string()];
        let changes = vec!["rcParams".to_string()];
        let r = retirement(&failures, &changes).expect("a retirement");
        assert_eq!(r.reason, RetireReason::ResetFailed);
        assert_eq!(r.detail, "scratch");
        assert_eq!(retirement(&[], &[]), None);
        let many = vec!["x".repeat(600), "y".repeat(600)];
        let r = retirement(&many, &[]).expect("a retirement");
        assert_eq!(
            r.detail,
            format!("{}; {}...", "x".repeat(600), "y".repeat(398))
        );
    }

    #[test]
    fn a_workspace_that_does_not_empty_recycles_the_worker() {
        assert_eq!(after_clear(true), Fate::Keep);
        assert_eq!(after_clear(false), Fate::Recycle(Loss::Workspace));
        assert_eq!(workspace_retirement(true), None);
        let r = workspace_retirement(false).expect("a retirement");
        assert_eq!(r.reason, RetireReason::Workspace);
    }

    #[test]
    fn the_quota_and_memory_growth_retire() {
        assert_eq!(quota(499, 500), None);
        let r = quota(500, 500).expect("at the quota");
        assert_eq!(
            (r.reason, r.detail.as_str()),
            (RetireReason::JobQuota, "ran 500 jobs")
        );

        let birth = MemoryUsage {
            rss_bytes: 80 << 20,
            pss_bytes: 30 << 20,
            private_bytes: 20 << 20,
        };
        let at = |limit, now| memory_growth(limit, &birth, now, 12);
        assert_eq!(at(MemoryGrowthLimit::BirthSize, 100 << 20), None);
        let r = at(MemoryGrowthLimit::BirthSize, 101 << 20).expect("grew past birth size");
        assert_eq!(r.reason, RetireReason::MemoryGrowth);
        assert_eq!(
            r.detail,
            "private memory grew by 81 MiB over 12 jobs (soft limit 80 MiB)"
        );
        assert!(at(MemoryGrowthLimit::Bytes(1 << 20), 22 << 20).is_some());
        assert_eq!(at(MemoryGrowthLimit::Bytes(1 << 20), 21 << 20), None);
        assert_eq!(at(MemoryGrowthLimit::Off, u64::MAX), None);
        // Memory below the birth reading is no growth.
        assert_eq!(at(MemoryGrowthLimit::Bytes(0), 0), None);
    }

    #[test]
    fn untrusted_state_is_killed_other_retirements_exit() {
        for (reason, how) in [
            (RetireReason::ResetFailed, (Leave::Kill, Tally::Other)),
            (RetireReason::StateChanged, (Leave::Kill, Tally::Other)),
            (RetireReason::MemoryGrowth, (Leave::Shutdown, Tally::Memory)),
            (RetireReason::JobQuota, (Leave::Shutdown, Tally::Quota)),
            (RetireReason::Workspace, (Leave::Shutdown, Tally::Other)),
        ] {
            assert_eq!(departure(reason), how, "{reason:?}");
        }
    }
}
