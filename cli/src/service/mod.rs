//! The job service: every door's jobs run here. `pyward run` (the batch runner),
//! `POST /v1/jobs`, the queue consumer, `pyward mcp`'s tool calls and replays (`pyward
//! replay`, `POST /v1/runs/{name}/replay`) each turn what arrived into a [`Request`] and call
//! [`Service::run`] (or [`Service::run_blocking`] off an async runtime); the service
//! gates and runs the job on the executor, tells the door's [`Observer`], builds the
//! [`Attempt`] and writes the run record when records are on, and returns the outcome.
//!
//! [`options`] is the one type of a job's per-job options, read from every door.

pub mod options;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake};
use std::time::Duration;

use pyward::record::Recorder;
use pyward::report::Report;
use pyward::{Attempt, Executor, Job, Outcome};

/// Sources longer than this are gated on a blocking thread, not on the async runtime's.
const INLINE_GATE_BYTES: usize = 16 * 1024;

/// The door a job came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `pyward run`.
    Run,
    /// `POST /v1/jobs`.
    Http,
    /// The queue consumer (a stream entry).
    Queue,
    /// A recorded run run again: never recorded again.
    Replay,
    /// A tool call of `pyward mcp`.
    Mcp,
}

/// What a door wants to know of its jobs as they run (metrics, logs, messages).
pub trait Observer: Send + Sync {
    /// The job was answered, whatever its status.
    fn answered(&self, _door: Door, _id: &str, _outcome: &Outcome) {}
    /// The executor did not run it (full, shut down, an invalid job).
    fn not_run(&self, _door: Door, _id: &str, _error: &pyward::Error) {}
    /// It was cancelled `_after` it arrived, unanswered: its client went away or
    /// cancelled it (the door tells; the job's future was dropped).
    fn cancelled(&self, _door: Door, _id: &str, _after: Duration) {}
    /// Its run record could not be written; the job's answer stands.
    fn record_failed(&self, message: &str);
}

/// One job, as a door hands it over.
pub struct Request {
    /// The job: code, inputs, arrays and options (see [`options`]).
    pub job: Job,
    /// Where it came from.
    pub door: Door,
    /// Its id in logs (a request id, a queue job id, a file name).
    pub id: String,
}

impl Request {
    /// `job` from `door`, known as `id`.
    pub fn new(job: Job, door: Door, id: impl Into<String>) -> Request {
        Request {
            job,
            door,
            id: id.into(),
        }
    }
}

/// A job the executor answered.
pub struct Done {
    /// What happened.
    pub outcome: Outcome,
    /// The run record's directory, when one was written.
    pub record: Option<String>,
}

impl Done {
    /// The versioned report of the job (artifacts inline when `with_artifacts`), with
    /// its record.
    pub fn report(&self, with_artifacts: bool) -> Report {
        let mut report = Report::from_outcome(&self.outcome, with_artifacts);
        if let Some(dir) = &self.record {
            report.set_record(dir.clone());
        }
        report
    }
}

/// Runs jobs and keeps their records.
#[derive(Clone)]
pub struct Service {
    recorder: Option<Recorder>,
    observer: Arc<dyn Observer>,
}

impl Service {
    /// A service that writes run records with `recorder` (none: no records) and tells
    /// `observer` of every job.
    pub fn new(recorder: Option<Recorder>, observer: Arc<dyn Observer>) -> Service {
        Service { recorder, observer }
    }

    /// Tells the observer that the door cancelled a job of this service `after` it
    /// arrived.
    pub fn cancelled(&self, door: Door, id: &str, after: Duration) {
        self.observer.cancelled(door, id, after);
    }

    /// Where run records go, if anywhere.
    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_ref()
    }

    /// Runs the request's job on `executor` (gate, queue, worker), tells the observer,
    /// and writes its run record (not for a replay); `Err` when the executor did not
    /// run it. Dropping the future cancels the job (it leaves the queue, or its worker
    /// is killed and replaced).
    pub async fn run(&self, executor: &Executor, request: Request) -> Result<Done, pyward::Error> {
        let Request { job, door, id } = request;
        let recorder = self.recorder.as_ref().filter(|_| door != Door::Replay);
        let kept = recorder.map(|_| job.clone());
        let outcome = if job.code().len() > INLINE_GATE_BYTES {
            let exec = executor.clone();
            match off_the_runtime(move || exec.run_async(job)).await {
                Ok(future) => future.await,
                Err(e) => Err(pyward::Error::Protocol(format!("gate thread failed: {e}"))),
            }
        } else {
            executor.run_async(job).await
        };
        let outcome = outcome.inspect_err(|e| self.observer.not_run(door, &id, e))?;
        self.observer.answered(door, &id, &outcome);
        let record = match (kept, recorder) {
            (Some(job), Some(recorder)) => self.record(executor, recorder, job, &outcome).await,
            _ => None,
        };
        Ok(Done { outcome, record })
    }

    /// [`Service::run`] to its end on this thread (no async runtime needed).
    pub fn run_blocking(
        &self,
        executor: &Executor,
        request: Request,
    ) -> Result<Done, pyward::Error> {
        block_on(self.run(executor, request))
    }

    /// The one place a job's attempt becomes a run record: written off the async
    /// runtime; its directory, or `None` (told to the observer).
    async fn record(
        &self,
        executor: &Executor,
        recorder: &Recorder,
        job: Job,
        outcome: &Outcome,
    ) -> Option<String> {
        let attempt = Attempt::new(job.code().to_vec(), outcome.clone());
        let (executor, recorder) = (executor.clone(), recorder.clone());
        let written = off_the_runtime(move || recorder.record(&executor, &job, &[attempt])).await;
        match written {
            Ok(Ok(dir)) => Some(dir.display().to_string()),
            Ok(Err(e)) => {
                self.observer
                    .record_failed(&format!("cannot write the run record: {e}"));
                None
            }
            Err(e) => {
                self.observer
                    .record_failed(&format!("the record thread failed: {e}"));
                None
            }
        }
    }
}

/// Runs `work` on the async runtime's blocking threads when there is a runtime, else
/// here.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime
            .spawn_blocking(work)
            .await
            .map_err(|e| e.to_string()),
        Err(_) => Ok(work()),
    }
}

/// Polls `future` to its end on this thread, parked while it waits.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Arc::new(Unpark(std::thread::current())).into();
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}
