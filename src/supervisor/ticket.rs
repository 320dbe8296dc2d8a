//! The one-shot meeting point of a job's caller and the slot that serves it: the slot
//! puts the outcome in, the caller's future takes it out ([`Ticket::poll_outcome`]), and
//! the caller can cancel through it.
//!
//! Hand-written rather than a channel crate because it is three things at once (a
//! one-shot value, a waker slot, a cancellation flag) that must change under one lock:
//! a cancel that races the outcome must see either "finished" or "not finished", never
//! both.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;

use super::places::Place;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

#[derive(Default)]
pub(crate) struct Ticket {
    /// Read by the watchdog every tick, so kept outside the lock.
    cancelled: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    outcome: Option<Result<Outcome>>,
    /// Set once an outcome was put in (it may have been taken out since).
    finished: bool,
    waker: Option<Waker>,
}

impl Ticket {
    pub(crate) fn new() -> Arc<Ticket> {
        Arc::new(Ticket::default())
    }

    /// Puts the outcome in and wakes the caller. The first outcome wins; later ones
    /// (a shutdown racing a finished job) are dropped.
    pub(crate) fn complete(&self, outcome: Result<Outcome>) {
        let waker = {
            let mut state = self.state.lock();
            if state.finished {
                return;
            }
            state.finished = true;
            state.outcome = Some(outcome);
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Asks for the job to stop. Returns `false` when its outcome was already in.
    pub(crate) fn cancel(&self) -> bool {
        let state = self.state.lock();
        if state.finished {
            return false;
        }
        self.cancelled.store(true, Ordering::Release);
        true
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Takes the outcome if it is in; otherwise remembers the task to wake.
    pub(crate) fn poll_outcome(&self, cx: &mut Context<'_>) -> Poll<Result<Outcome>> {
        let mut state = self.state.lock();
        if let Some(outcome) = state.outcome.take() {
            return Poll::Ready(outcome);
        }
        if state.finished {
            return Poll::Ready(Err(Error::Shutdown));
        }
        match &mut state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// The slot's end of a ticket: completing it is the only way to answer, and dropping it
/// unanswered (a slot thread that panicked, a queue closed at shutdown) answers
/// [`Error::Shutdown`], so no caller waits forever.
pub(crate) struct Reply {
    ticket: Arc<Ticket>,
    /// The job's place in the pool's admission count, held from the queue to the answer.
    place: Option<Place>,
}

impl Reply {
    pub(crate) fn new(ticket: &Arc<Ticket>) -> Reply {
        Reply {
            ticket: Arc::clone(ticket),
            place: None,
        }
    }

    /// Holds `place` until the answer is sent.
    pub(crate) fn hold(&mut self, place: Place) {
        self.place = Some(place);
    }

    /// Answers. The place frees first: a caller that sends its next job the moment it
    /// hears back finds it free.
    pub(crate) fn send(mut self, outcome: Result<Outcome>) {
        drop(self.place.take());
        self.ticket.complete(outcome);
    }

    pub(crate) fn ticket(&self) -> &Ticket {
        &self.ticket
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        drop(self.place.take());
        self.ticket.complete(Err(Error::Shutdown));
    }
}
