//! The places jobs hold from admission to answer (`max_workers + queue_depth` of them),
//! and the measured time between answers that a refused job is told to wait.
//!
//! Its own module because both the queue (which admits a job by taking a place) and a
//! job's reply (which holds the place until the answer is sent) use it.

use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// The places jobs hold from admission to answer, and how fast they free up.
pub(crate) struct Places {
    workers: usize,
    capacity: usize,
    state: Mutex<PlaceState>,
}

struct PlaceState {
    /// Jobs admitted and not answered yet: queued, or running on a worker.
    unanswered: usize,
    /// Callers waiting for a free place.
    wakers: Vec<Waker>,
    /// The last answer given while every worker had a job (`None`: the pool was not
    /// saturated at the last answer, so the next interval says nothing of its rate).
    last_busy_answer: Option<Instant>,
    /// Moving average of the time between answers of a saturated pool, in seconds.
    interval: Option<f64>,
}

/// Weight of the newest interval in [`PlaceState::interval`].
const INTERVAL_WEIGHT: f64 = 0.2;

/// What a refused job is told: how many places there are and when one should free.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Full {
    pub workers: usize,
    pub depth: usize,
    /// The measured time between answers (one second before anything was measured).
    pub retry_after: Duration,
}

impl Places {
    pub(super) fn new(workers: usize, depth: usize) -> Places {
        Places {
            workers,
            capacity: workers + depth,
            state: Mutex::new(PlaceState {
                unanswered: 0,
                wakers: Vec::new(),
                last_busy_answer: None,
                interval: None,
            }),
        }
    }

    /// A place if one is free; else `None`, with `cx`'s task registered to be woken
    /// when one frees.
    pub(super) fn take(self: &Arc<Places>, cx: Option<&mut Context<'_>>) -> Option<Place> {
        let mut state = self.state.lock();
        if state.unanswered < self.capacity {
            state.unanswered += 1;
            return Some(Place::new(Arc::clone(self)));
        }
        if let Some(cx) = cx {
            if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                state.wakers.push(cx.waker().clone());
            }
        }
        None
    }

    /// A job was answered (or cancelled, or dropped unanswered): its place is free.
    pub(crate) fn release(&self) {
        let now = Instant::now();
        let wakers = {
            let mut state = self.state.lock();
            let saturated = state.unanswered >= self.workers;
            state.unanswered = state.unanswered.saturating_sub(1);
            if let (true, Some(last)) = (saturated, state.last_busy_answer) {
                let took = now.duration_since(last).as_secs_f64();
                state.interval = Some(match state.interval {
                    Some(avg) => avg + INTERVAL_WEIGHT * (took - avg),
                    None => took,
                });
            }
            state.last_busy_answer = saturated.then_some(now);
            std::mem::take(&mut state.wakers)
        };
        wake_all(wakers);
    }

    pub(super) fn full(&self) -> Full {
        let interval = self.state.lock().interval;
        Full {
            workers: self.workers,
            depth: self.capacity - self.workers,
            retry_after: interval
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .map_or(Duration::from_secs(1), |d| {
                    d.clamp(Duration::from_millis(1), Duration::from_secs(60))
                }),
        }
    }

    pub(super) fn unanswered(&self) -> usize {
        self.state.lock().unanswered
    }

    pub(super) fn wake_all(&self) {
        wake_all(std::mem::take(&mut self.state.lock().wakers));
    }
}

/// One admitted job's place ([`JobQueue`](super::queue::JobQueue) admits a job while
/// fewer than `max_workers + queue_depth` are unanswered); dropping it frees it.
pub(crate) struct Place(Arc<Places>);

impl Place {
    pub(crate) fn new(places: Arc<Places>) -> Place {
        Place(places)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Wakes callers waiting for a place (outside the queue's lock).
fn wake_all(wakers: Vec<Waker>) {
    for w in wakers {
        w.wake();
    }
}
