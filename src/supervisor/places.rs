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
    /// The last answer after which every worker still had a job (`None`: a worker was
    /// left without one, so the time to the next answer says nothing of the drain rate:
    /// it may hold idle time).
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
        self.release_at(Instant::now());
    }

    /// [`release`](Self::release) at `now`. The time since the previous answer is one
    /// measure of the drain rate when every worker had a job all along: the previous
    /// answer left at least `workers` jobs unanswered (none is answered in between, and
    /// admissions only add jobs).
    fn release_at(&self, now: Instant) {
        let wakers = {
            let mut state = self.state.lock();
            if let Some(last) = state.last_busy_answer {
                let took = now.saturating_duration_since(last).as_secs_f64();
                state.interval = Some(match state.interval {
                    Some(avg) => avg + INTERVAL_WEIGHT * (took - avg),
                    None => took,
                });
            }
            state.unanswered = state.unanswered.saturating_sub(1);
            let saturated = state.unanswered >= self.workers;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The advised wait in milliseconds, rounded to a microsecond (the average is a float).
    fn advised(places: &Places) -> f64 {
        let ms = places.full().retry_after.as_secs_f64() * 1000.0;
        (ms * 1000.0).round() / 1000.0
    }

    /// Takes `n` places (kept: the test releases them by `release_at`).
    fn admit(places: &Arc<Places>, n: usize) {
        for _ in 0..n {
            std::mem::forget(places.take(None).expect("a free place"));
        }
    }

    #[test]
    fn before_any_measure_a_refused_job_waits_a_second() {
        let places = Arc::new(Places::new(2, 2));
        admit(&places, 4);
        assert!(places.take(None).is_none());
        let full = places.full();
        assert_eq!((full.workers, full.depth), (2, 2));
        assert_eq!(full.retry_after, Duration::from_secs(1));
    }

    #[test]
    fn answers_of_a_saturated_pool_measure_the_wait_as_a_moving_average() {
        let places = Arc::new(Places::new(1, 1));
        let t0 = Instant::now();
        admit(&places, 2);
        // The first answer starts the measure: nothing to say yet.
        places.release_at(t0);
        assert_eq!(places.full().retry_after, Duration::from_secs(1));
        admit(&places, 1);
        places.release_at(t0 + ms(20));
        assert_eq!(places.full().retry_after, ms(20));
        admit(&places, 1);
        places.release_at(t0 + ms(50));
        // 20 ms, then 30: the newest weighs a fifth.
        assert_eq!(advised(&places), 22.0);
        assert_eq!(places.unanswered(), 1);
    }

    #[test]
    fn idle_time_is_not_a_drain_interval() {
        // One worker: each answer after which the worker had nothing to do ends the
        // measure, so an hour without jobs does not become an hour's wait.
        let places = Arc::new(Places::new(1, 1));
        let t0 = Instant::now();
        admit(&places, 2);
        places.release_at(t0);
        places.release_at(t0 + ms(10));
        assert_eq!(places.full().retry_after, ms(10));
        let later = t0 + Duration::from_secs(3600);
        admit(&places, 2);
        places.release_at(later);
        assert_eq!(places.full().retry_after, ms(10));
        places.release_at(later + ms(30));
        assert_eq!(advised(&places), 14.0);

        // Two workers, one of them idle between the answers: not measured either.
        let places = Arc::new(Places::new(2, 2));
        admit(&places, 2);
        places.release_at(t0);
        admit(&places, 1);
        places.release_at(t0 + ms(500));
        assert_eq!(places.full().retry_after, Duration::from_secs(1));
    }

    #[test]
    fn the_advised_wait_is_bounded() {
        let places = Arc::new(Places::new(1, 0));
        let t0 = Instant::now();
        admit(&places, 1);
        // Two answers at the same instant: still a millisecond to wait.
        places.state.lock().last_busy_answer = Some(t0);
        places.release_at(t0);
        assert_eq!(places.full().retry_after, ms(1));
        places.state.lock().interval = Some(1e9);
        assert_eq!(places.full().retry_after, Duration::from_secs(60));
    }
}
