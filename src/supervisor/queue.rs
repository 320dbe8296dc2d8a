//! The bounded job queue between callers and pool slots.
//!
//! A deque under one lock rather than a channel because a cancelled job must leave the
//! queue at once (it must not hold a place that a live job is refused for under
//! [`Backpressure::Reject`](crate::Backpressure::Reject)), and because async callers
//! wait for space by waker, not by blocking a runtime thread.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Waker};

use parking_lot::{Condvar, Mutex};

use super::slot::Queued;
use super::ticket::Reply;

/// A queued job with the reply its outcome goes to.
pub(crate) struct Entry {
    /// Boxed: entries move through the queue and back to waiting callers.
    pub job: Box<Queued>,
    pub reply: Reply,
}

/// Why a job was not queued; a job refused for a full queue is handed back to wait.
pub(crate) enum PushError {
    Full(Entry),
    Closed,
}

pub(crate) struct JobQueue {
    depth: usize,
    state: Mutex<State>,
    /// Slots wait here for a job.
    item: Condvar,
    /// Set by [`JobQueue::close`] before it takes the lock (so every check under the
    /// lock after that sees it); read by watchdogs every tick, so outside the lock.
    closed: AtomicBool,
}

struct State {
    entries: VecDeque<Entry>,
    /// Callers waiting for a free place.
    space_wakers: Vec<Waker>,
}

impl JobQueue {
    pub(crate) fn new(depth: usize) -> JobQueue {
        JobQueue {
            depth,
            state: Mutex::new(State {
                entries: VecDeque::with_capacity(depth),
                space_wakers: Vec::new(),
            }),
            item: Condvar::new(),
            closed: AtomicBool::new(false),
        }
    }

    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    pub(crate) fn try_push(&self, entry: Entry) -> Result<(), PushError> {
        let mut state = self.state.lock();
        if self.is_closed() {
            return Err(PushError::Closed);
        }
        if state.entries.len() >= self.depth {
            return Err(PushError::Full(entry));
        }
        state.entries.push_back(entry);
        drop(state);
        self.item.notify_one();
        Ok(())
    }

    /// Queues `entry` if there is room; otherwise registers the task to be woken when a
    /// place frees up and hands the entry back.
    pub(crate) fn poll_push(&self, entry: Entry, cx: &mut Context<'_>) -> Result<(), PushError> {
        let mut state = self.state.lock();
        if self.is_closed() {
            return Err(PushError::Closed);
        }
        if state.entries.len() >= self.depth {
            if !state.space_wakers.iter().any(|w| w.will_wake(cx.waker())) {
                state.space_wakers.push(cx.waker().clone());
            }
            return Err(PushError::Full(entry));
        }
        state.entries.push_back(entry);
        drop(state);
        self.item.notify_one();
        Ok(())
    }

    /// The next job, waiting for one; `None` once the queue is closed.
    pub(crate) fn pop(&self) -> Option<Entry> {
        let mut state = self.state.lock();
        loop {
            if let Some(entry) = state.entries.pop_front() {
                let wakers = std::mem::take(&mut state.space_wakers);
                drop(state);
                wake_all(wakers);
                return Some(entry);
            }
            if self.is_closed() {
                return None;
            }
            self.item.wait(&mut state);
        }
    }

    /// Takes a job out before any slot started it (its caller cancelled).
    pub(crate) fn remove(&self, job_id: u64) -> Option<Entry> {
        let mut state = self.state.lock();
        let at = state.entries.iter().position(|e| e.job.job_id == job_id)?;
        let entry = state.entries.remove(at);
        let wakers = std::mem::take(&mut state.space_wakers);
        drop(state);
        wake_all(wakers);
        entry
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
        let (left, wakers) = {
            let mut state = self.state.lock();
            (
                std::mem::take(&mut state.entries),
                std::mem::take(&mut state.space_wakers),
            )
        };
        self.item.notify_all();
        wake_all(wakers);
        drop(left);
    }

    /// Wakes every caller waiting for a place (one of them was cancelled).
    pub(crate) fn wake_space_waiters(&self) {
        wake_all(std::mem::take(&mut self.state.lock().space_wakers));
    }
}

/// Wakes callers waiting for a place (outside the queue's lock).
fn wake_all(wakers: Vec<Waker>) {
    for w in wakers {
        w.wake();
    }
}
