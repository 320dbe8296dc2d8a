//! [`JobFuture`]: one job as a runtime-agnostic future, cancelled when dropped.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::config::Backpressure;
use super::queue::{cancelled_before_start, Entry, JobQueue, PushError, Queued};
use super::ticket::{Reply, Ticket};
use crate::error::{Error, Result};
use crate::outcome::Outcome;

/// The outcome of one job, as a future ([`Executor::run_async`](crate::Executor::run_async)).
///
/// Works under any executor (tokio, async-std, smol, `futures::executor::block_on`): the
/// pool's own threads wake it. It is `Send + 'static`, so it can be spawned.
///
/// Dropping it before it resolves cancels the job (see
/// [`Executor::run_async`](crate::Executor::run_async)).
#[must_use = "a JobFuture does nothing unless awaited, and cancels its job when dropped"]
pub struct JobFuture {
    state: State,
}

enum State {
    /// Answered before the queue (gate refusal, invalid job).
    Ready(Option<Box<Result<Outcome>>>),
    /// Not in the queue yet: waiting for a free place (or the first poll).
    Queuing {
        entry: Option<Entry>,
        shared: Shared,
        backpressure: Backpressure,
    },
    /// In the queue or running: waiting for the slot's answer.
    Waiting(Shared),
    /// Resolved; polled again only by mistake.
    Done,
}

/// What the future and its cancel handles share.
#[derive(Clone)]
struct Shared {
    ticket: Arc<Ticket>,
    queue: Arc<JobQueue>,
    job_id: u64,
}

impl Shared {
    /// Marks the job cancelled and, if it is still queued, takes it out and answers it.
    /// A running job is stopped by its slot's watchdog, which sees the mark.
    fn cancel(&self) {
        if !self.ticket.cancel() {
            return;
        }
        match self.queue.remove(self.job_id) {
            Some(entry) => {
                let outcome = cancelled_before_start(&entry.job);
                entry.reply.send(Ok(outcome));
            }
            // Not queued yet: the future may be parked waiting for a place; wake it
            // so it sees the mark.
            None => self.queue.wake_space_waiters(),
        }
    }
}

/// Cancels the job of a [`JobFuture`] from anywhere (another task, a timer, a client
/// disconnect), while the future itself is still awaited. Cheap to clone.
#[derive(Clone)]
pub struct CancelHandle {
    shared: Option<Shared>,
}

impl CancelHandle {
    /// Cancels the job; the future then resolves to an outcome whose failure is
    /// [`JobFailure::Cancelled`] (unless the job had already finished: then nothing
    /// changes). Idempotent.
    pub fn cancel(&self) {
        if let Some(shared) = &self.shared {
            shared.cancel();
        }
    }
}

impl JobFuture {
    pub(super) fn ready(result: Result<Outcome>) -> JobFuture {
        JobFuture {
            state: State::Ready(Some(Box::new(result))),
        }
    }

    pub(super) fn queue(job: Queued, queue: Arc<JobQueue>, backpressure: Backpressure) -> Self {
        let ticket = Ticket::new();
        let shared = Shared {
            ticket: Arc::clone(&ticket),
            queue,
            job_id: job.job_id,
        };
        let entry = Entry {
            job: Box::new(job),
            reply: Reply::new(&ticket),
        };
        JobFuture {
            state: State::Queuing {
                entry: Some(entry),
                shared,
                backpressure,
            },
        }
    }

    /// A handle that cancels this job from elsewhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        let shared = match &self.state {
            State::Queuing { shared, .. } | State::Waiting(shared) => Some(shared.clone()),
            State::Ready(_) | State::Done => None,
        };
        CancelHandle { shared }
    }

    /// Cancels the job (as [`CancelHandle::cancel`]); awaiting the future afterwards
    /// gives the `Cancelled` outcome.
    pub fn cancel(&self) {
        self.cancel_handle().cancel();
    }
}

impl Future for JobFuture {
    type Output = Result<Outcome>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Ready(result) => {
                    let result = result.take().expect("JobFuture polled after it resolved");
                    this.state = State::Done;
                    return Poll::Ready(*result);
                }
                State::Queuing {
                    entry,
                    shared,
                    backpressure,
                } => {
                    let e = entry.take().expect("a queuing future holds its entry");
                    if shared.ticket.is_cancelled() {
                        let outcome = cancelled_before_start(&e.job);
                        e.reply.send(Ok(outcome));
                        this.state = State::Waiting(shared.clone());
                        continue;
                    }
                    let pushed = match backpressure {
                        Backpressure::Wait => shared.queue.poll_push(e, cx),
                        Backpressure::Reject => shared.queue.try_push(e),
                    };
                    match pushed {
                        Ok(()) => this.state = State::Waiting(shared.clone()),
                        Err(PushError::Full(e)) if *backpressure == Backpressure::Wait => {
                            *entry = Some(e);
                            return Poll::Pending;
                        }
                        Err(PushError::Full(_)) => {
                            let full = shared.queue.full();
                            let refused = Error::QueueFull {
                                depth: full.depth,
                                workers: full.workers,
                                retry_after: full.retry_after,
                            };
                            this.state = State::Ready(Some(Box::new(Err(refused))));
                        }
                        Err(PushError::Closed) => {
                            this.state = State::Ready(Some(Box::new(Err(Error::Shutdown))));
                        }
                    }
                }
                State::Waiting(shared) => {
                    let result = std::task::ready!(shared.ticket.poll_outcome(cx));
                    this.state = State::Done;
                    return Poll::Ready(result);
                }
                State::Done => panic!("JobFuture polled after it resolved"),
            }
        }
    }
}

impl Drop for JobFuture {
    fn drop(&mut self) {
        // A no-op once the outcome is in (the ticket refuses a late cancel).
        if let State::Waiting(shared) = &self.state {
            shared.cancel();
        }
    }
}

/// Polls `future` to the end on the calling thread, parking it between wake-ups: the
/// blocking [`Executor::run`](crate::Executor::run) is the async path, waited for.
pub(super) fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        // Spurious unparks just poll again.
        std::thread::park();
    }
}

impl std::fmt::Debug for JobFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Ready(_) => "ready",
            State::Queuing { .. } => "waiting for a place in the queue",
            State::Waiting(_) => "queued or running",
            State::Done => "done",
        };
        f.debug_struct("JobFuture").field("state", &state).finish()
    }
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle").finish_non_exhaustive()
    }
}
