//! The watchdog: while a job runs, the slot's thread waits for the worker's answer here
//! and enforces the wall-clock deadline, the resident-set ceiling and the caller's
//! cancellation. It never stops a job by merely ceasing to wait: on a timeout, a
//! cancellation or too much memory it tells the slot, which kills the worker.

use std::time::{Duration, Instant};

use super::process::{RecvError, WorkerProcess};
use crate::encode;
use crate::outcome::Artifact;
use crate::protocol::{self, WorkerMsg};

/// How often the watchdog samples a busy worker's resident set.
const WATCH_INTERVAL: Duration = Duration::from_millis(10);

/// Extra time for a finished job's artifacts to arrive after its answer.
const ARTIFACT_GRACE: Duration = Duration::from_secs(5);

/// How a job's wait ended.
pub(crate) enum Answer {
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
pub(crate) fn watch(
    worker: &mut WorkerProcess,
    nonce: protocol::Nonce,
    deadline: Instant,
    memory: u64,
    cancelled: &dyn Fn() -> bool,
) -> Answer {
    loop {
        let tick = (Instant::now() + WATCH_INTERVAL).min(deadline);
        match worker.recv_msg(tick) {
            Ok(WorkerMsg::Done(done)) => {
                if done.nonce != nonce {
                    return Answer::Protocol("an answer without this run's nonce".into());
                }
                let mut artifacts = Vec::with_capacity(done.artifacts.len());
                for meta in &done.artifacts {
                    match worker.recv_frame(Instant::now() + ARTIFACT_GRACE) {
                        Ok(bytes) if bytes.len() as u64 == meta.len => {
                            let bytes = match &meta.raw {
                                Some(raw) => match encode::png(raw, &bytes) {
                                    Ok(png) => png,
                                    Err(e) => {
                                        return Answer::Protocol(format!(
                                            "raw figure {}: {e}",
                                            meta.name
                                        ))
                                    }
                                },
                                None => bytes,
                            };
                            artifacts.push(Artifact {
                                name: meta.name.clone(),
                                media_type: String::new(),
                                bytes,
                                figure: None,
                            })
                        }
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
