//! The watchdog: while a job runs, the slot's thread waits for the worker's answer here
//! and enforces the wall-clock deadline, the resident-set ceiling and the caller's
//! cancellation. It never stops a job by merely ceasing to wait: on a timeout, a
//! cancellation or too much memory it tells the slot, which kills the worker.
//!
//! The answer itself is read as hostile input (`protocol::answer`): checked whole
//! before any of it is used, its artifacts bounded while they are read.

use std::time::{Duration, Instant};

use super::process::WorkerProcess;
use crate::outcome::Artifact;
use crate::protocol::answer::{self, AnswerError, AnswerLimits, FrameError, FrameSource};
use crate::protocol::DoneMsg;

/// How often the watchdog samples a busy worker's resident set.
const WATCH_INTERVAL: Duration = Duration::from_millis(10);

/// Time for a finished job's artifacts to arrive after its answer, in all.
const ARTIFACT_GRACE: Duration = Duration::from_secs(5);

/// How a job's wait ended.
pub(crate) enum Answer {
    Done(Box<DoneMsg>, Vec<Artifact>),
    Timeout,
    Cancelled,
    OverMemory,
    Died(String),
    /// The worker broke the protocol (see `protocol::answer`); what it sent is unused.
    Violation(String),
}

/// The watchdog: waits for the job's answer while enforcing the wall-clock deadline and
/// the resident-set ceiling, and watching for the caller's cancellation. On any of them
/// the caller kills the worker: a job is never left running on a thread we merely
/// stopped waiting for.
pub(crate) fn watch(
    worker: &mut WorkerProcess,
    limits: &AnswerLimits,
    deadline: Instant,
    memory: u64,
    cancelled: &dyn Fn() -> bool,
) -> Answer {
    loop {
        let tick = (Instant::now() + WATCH_INTERVAL).min(deadline);
        match worker.frames().next_frame(limits.max_message(), tick) {
            Ok(frame) => {
                let grace = Instant::now() + ARTIFACT_GRACE;
                return match answer::accept_done(&frame, worker.frames(), limits, grace) {
                    Ok((done, artifacts)) => Answer::Done(done, artifacts),
                    Err(AnswerError::Violation(why)) => Answer::Violation(why),
                    Err(AnswerError::Closed(why)) => Answer::Died(why),
                    Err(AnswerError::Timeout) => Answer::Died("artifacts did not arrive".into()),
                };
            }
            // A worker the kernel killed for memory looks like a crash; say what it was.
            Err(FrameError::Closed(why)) => return Answer::Died(why),
            Err(too_large @ FrameError::TooLarge { .. }) => {
                return Answer::Violation(too_large.to_string())
            }
            Err(FrameError::Timeout) => {
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
