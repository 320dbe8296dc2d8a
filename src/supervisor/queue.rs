//! The bounded job queue between callers and pool slots.
//!
//! A deque under one lock rather than a channel because a cancelled job must leave the
//! queue at once (it must not hold a place that a live job is refused for under
//! [`Backpressure::Reject`](crate::Backpressure::Reject)), and because async callers
//! wait for space by waker, not by blocking a runtime thread.
//!
//! Admission counts [`Places`], not queue entries: a job holds a place from the moment it
//! is queued until its answer is sent, and the pool has `max_workers + queue_depth` of
//! them. A worker's reset, retirement or replacement after it answered holds none, so
//! clients that wait for each answer before sending the next, as many as there are
//! places, are never refused (issue 36: counting entries refused them about half the
//! time, while a slot was replacing its worker and its next job still sat in the queue).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Context;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::places::{Full, Places};
use super::ticket::Reply;
use crate::outcome::{JobFailure, Outcome, Timings};
use crate::validate::Validator;

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
    pub describe_figures: bool,
    pub arrays: Vec<(String, crate::SharedArray)>,
    /// The job's tenant (`Job::tenant`); `None`: its own.
    pub tenant: Option<Arc<str>>,
}

/// The outcome of a job cancelled before a worker took it.
pub(crate) fn cancelled_before_start(job: &Queued) -> Outcome {
    let waited = job.submitted.elapsed();
    let timings = Timings {
        gate: job.gate_time,
        queue: waited.saturating_sub(job.gate_time),
        total: waited,
        ..Timings::default()
    };
    Outcome::not_run(JobFailure::Cancelled, timings, job.seed, job.gate_enabled)
}

/// A queued job with the reply its outcome goes to.
pub(crate) struct Entry {
    /// Boxed: entries move through the queue and back to waiting callers.
    pub job: Box<Queued>,
    pub reply: Reply,
}

/// What a slot's wait for a job ended with.
pub(crate) enum Pop {
    Job(Entry),
    /// The wait ran out without a job for this slot.
    Idle,
    Closed,
}

/// Why a job was not queued; a job refused for a full queue is handed back to wait.
pub(crate) enum PushError {
    Full(Entry),
    Closed,
}

pub(crate) struct JobQueue {
    places: Arc<Places>,
    state: Mutex<State>,
    /// Slots with a warm worker wait here for a job.
    item: Condvar,
    /// Slots without a worker wait here for a job that no warm worker is free for.
    grow: Condvar,
    /// Set by [`JobQueue::close`] before it takes the lock (so every check under the
    /// lock after that sees it); read by watchdogs every tick, so outside the lock.
    closed: AtomicBool,
}

struct State {
    entries: VecDeque<Entry>,
    /// Slots with a warm worker waiting in [`JobQueue::pop_warm`] now.
    idle_warm: usize,
}

impl JobQueue {
    pub(crate) fn new(workers: usize, depth: usize) -> JobQueue {
        JobQueue {
            places: Arc::new(Places::new(workers, depth)),
            state: Mutex::new(State {
                entries: VecDeque::with_capacity(workers + depth),
                idle_warm: 0,
            }),
            item: Condvar::new(),
            grow: Condvar::new(),
            closed: AtomicBool::new(false),
        }
    }

    /// Queues `entry` if a place is free.
    pub(crate) fn try_push(&self, entry: Entry) -> Result<(), PushError> {
        self.push(entry, None)
    }

    /// Queues `entry` if a place is free; otherwise registers the task to be woken when
    /// one frees up and hands the entry back.
    pub(crate) fn poll_push(&self, entry: Entry, cx: &mut Context<'_>) -> Result<(), PushError> {
        self.push(entry, Some(cx))
    }

    fn push(&self, mut entry: Entry, cx: Option<&mut Context<'_>>) -> Result<(), PushError> {
        let mut state = self.state.lock();
        if self.is_closed() {
            return Err(PushError::Closed);
        }
        let Some(place) = self.places.take(cx) else {
            return Err(PushError::Full(entry));
        };
        // Held by the reply: the place frees as the answer is sent.
        entry.reply.hold(place);
        state.entries.push_back(entry);
        // The woken slot no longer counts as idle: a second job pushed before it runs
        // goes to another idle worker, or grows the pool.
        let warm_waiting = state.idle_warm > 0;
        state.idle_warm = state.idle_warm.saturating_sub(1);
        drop(state);
        if warm_waiting {
            self.item.notify_one();
        } else {
            self.grow.notify_one();
        }
        Ok(())
    }

    /// For a slot with a warm worker: the next job, or `Idle` after `wait` without one.
    /// A worker kept warm for a tenant (`prefer`) takes that tenant's first job before
    /// the queue's head: any other job costs it a fresh worker.
    pub(crate) fn pop_warm(&self, wait: Duration, prefer: Option<&str>) -> Pop {
        let until = Instant::now() + wait;
        let mut state = self.state.lock();
        loop {
            let mine = prefer.and_then(|t| {
                (state.entries.iter()).position(|e| e.job.tenant.as_deref() == Some(t))
            });
            if let Some(entry) = state.entries.remove(mine.unwrap_or(0)) {
                return Pop::Job(entry);
            }
            if self.is_closed() {
                return Pop::Closed;
            }
            state.idle_warm += 1;
            // Notified: the pusher took this slot off the idle count. Timed out: it
            // takes itself off (saturating: a push may have raced the timeout), and a
            // job pushed meanwhile is taken here, not lost.
            if self.item.wait_until(&mut state, until).timed_out() {
                state.idle_warm = state.idle_warm.saturating_sub(1);
                if state.entries.is_empty() {
                    return Pop::Idle;
                }
            }
        }
    }

    /// For a slot without a worker: a job that waits while no warm worker is idle (so
    /// it is worth starting one), if `may_grow` allows it now; `Idle` after `wait`.
    pub(crate) fn pop_to_grow(&self, wait: Duration, may_grow: &dyn Fn() -> bool) -> Pop {
        let until = Instant::now() + wait;
        let mut state = self.state.lock();
        loop {
            if self.is_closed() {
                return Pop::Closed;
            }
            if !state.entries.is_empty() && state.idle_warm == 0 && may_grow() {
                let entry = state.entries.pop_front().expect("checked");
                return Pop::Job(entry);
            }
            if self.grow.wait_until(&mut state, until).timed_out() {
                return Pop::Idle;
            }
        }
    }

    /// Jobs waiting for a worker now.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().entries.len()
    }

    /// Jobs admitted and not answered yet (queued or running): what admission counts.
    pub(crate) fn unanswered(&self) -> usize {
        self.places.unanswered()
    }

    /// What a job refused now is told.
    pub(crate) fn full(&self) -> Full {
        self.places.full()
    }

    /// Takes a job out before any slot started it (its caller cancelled; its place frees
    /// as it is answered).
    pub(crate) fn remove(&self, job_id: u64) -> Option<Entry> {
        let mut state = self.state.lock();
        let at = state.entries.iter().position(|e| e.job.job_id == job_id)?;
        state.entries.remove(at)
    }

    /// Whether [`JobQueue::close`] ran: the pool is shutting down.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Refuses new jobs and wakes every waiter; the jobs still queued are answered
    /// [`Error::Shutdown`](crate::Error::Shutdown) as their replies drop, and running
    /// jobs are stopped by their watchdogs (answered `Cancelled`).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let left = std::mem::take(&mut self.state.lock().entries);
        self.item.notify_all();
        self.grow.notify_all();
        self.places.wake_all();
        drop(left);
    }

    /// Wakes every caller waiting for a place (one of them was cancelled).
    pub(crate) fn wake_space_waiters(&self) {
        self.places.wake_all();
    }
}
