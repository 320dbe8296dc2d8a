//! What every request handler shares: the executor (set once the pool is warm), the
//! server's limits, readiness and the count of jobs in flight that a drain waits for.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::http::StatusCode;
use pyward::record::Recorder;
use pyward::{gate, Executor};
use tokio::sync::Notify;

use super::metrics::Metrics;
use super::problem::Problem;
use super::queue::Queue;
use super::request::Limits;
use crate::service::{Observer, Service};

/// The state behind every route.
pub struct App {
    /// Set once, when the pool is warm.
    pub executor: Arc<OnceLock<Executor>>,
    /// The gate policy (the executor's; usable before the pool is warm).
    pub policy: gate::Policy,
    /// Request limits.
    pub limits: Limits,
    /// Runs every job (HTTP, queue, replay) and writes its record when records are on.
    pub service: Service,
    /// Counters and histograms (the service's observer).
    pub metrics: Arc<Metrics>,
    /// The job queue, in queue mode.
    pub queue: Option<Arc<Queue>>,
    draining: AtomicBool,
    in_flight: AtomicUsize,
    idle: Notify,
    next_request: AtomicU64,
}

impl App {
    /// The state of a server whose pool is not warm yet.
    pub fn new(
        policy: gate::Policy,
        limits: Limits,
        recorder: Option<Recorder>,
        queue: Option<Arc<Queue>>,
    ) -> App {
        let executor = Arc::new(OnceLock::new());
        let metrics = Arc::new(Metrics::new(Arc::clone(&executor)));
        App {
            queue,
            service: Service::new(recorder, Arc::clone(&metrics) as Arc<dyn Observer>),
            metrics,
            executor,
            policy,
            limits,
            draining: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
            next_request: AtomicU64::new(1),
        }
    }

    /// A fresh request id (for logs and the `X-Request-Id` header).
    pub fn request_id(&self) -> u64 {
        self.next_request.fetch_add(1, Ordering::Relaxed)
    }

    /// Why the server takes no jobs now (`None`: it does).
    pub fn unready(&self) -> Option<Problem> {
        if self.draining.load(Ordering::SeqCst) {
            let p = Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "draining",
                "the server is shutting down and takes no new jobs",
            );
            return Some(p.retry_after(1));
        }
        if self.executor.get().is_none() {
            return Some(warming_up());
        }
        None
    }

    /// Admits one job: counted in flight until the guard drops, so that a drain waits
    /// for it. Refused while warming up or draining.
    pub fn admit(self: &Arc<App>) -> Result<(InFlight, Executor), Problem> {
        // Counted before the check: a drain that starts now either sees this job in
        // flight or this job sees the drain (both sides use SeqCst).
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let guard = InFlight(Arc::clone(self));
        if let Some(problem) = self.unready() {
            return Err(problem);
        }
        let executor = self.executor.get().cloned();
        // `unready` found the executor set, and it is never unset.
        Ok((guard, executor.ok_or_else(warming_up)?))
    }

    /// Whether a drain has begun.
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Stops admitting jobs and waits until those in flight are answered, at most
    /// `grace`. Returns how many were still in flight when it gave up.
    pub async fn drain(&self, grace: Duration) -> usize {
        self.draining.store(true, Ordering::SeqCst);
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.in_flight.load(Ordering::SeqCst) == 0 {
                    return;
                }
                idle.await;
            }
        };
        let _ = tokio::time::timeout(grace, wait).await;
        self.in_flight.load(Ordering::SeqCst)
    }
}

fn warming_up() -> Problem {
    let p = Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "warming_up",
        "the worker pool is warming up; retry in a second",
    );
    p.retry_after(1)
}

/// One admitted job; dropping it (answered, or abandoned by its client) lets a drain go on.
pub struct InFlight(Arc<App>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// The MCP door's admission (`/mcp`): [`App::admit`], a refusal as its text.
pub struct McpDoor(pub Arc<App>);

impl crate::mcp::Admit for McpDoor {
    fn admit(&self) -> Result<(Box<dyn Send + Sync>, Executor), String> {
        let (guard, executor) = self.0.admit().map_err(|p| p.detail)?;
        Ok((Box::new(guard), executor))
    }
}
