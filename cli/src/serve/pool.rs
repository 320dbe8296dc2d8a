//! `GET /v1/pool`: the pool as the page's Pool view shows it, as JSON: workers busy and
//! idle, the queue, recent worker replacements with their causes, and latency
//! quantiles. Every number comes from what `/metrics` exposes (the executor's stats read
//! now, the same histograms), so the two never disagree.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pyward::PoolStats;
use serde::Serialize;

use super::metrics::{Quantiles, Replacement};
use super::problem::Problem;
use super::state::App;

/// The pool now.
#[derive(Serialize, Debug)]
struct PoolView {
    /// Whether the pool is warm and the server takes jobs.
    ready: bool,
    /// Whether a drain has begun.
    draining: bool,
    /// The executor's stats (`None` while warming up): each worker, busy count, queue
    /// depth, zygote, retirements by reason.
    stats: Option<PoolStats>,
    /// Workers replaced because of their job, newest first (the latest 20).
    recent_replacements: Vec<Replacement>,
    /// Latency quantiles per job step, in milliseconds.
    latency_ms: BTreeMap<String, Quantiles>,
}

/// The pool's state.
#[utoipa::path(
    get,
    path = "/v1/pool",
    responses(
        (status = 200, description = "Workers (busy, idle, memory, jobs served), queue depth, retirements by reason, recent worker replacements and their causes, latency quantiles per step (from the histograms of /metrics)", content_type = "application/json"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn pool(State(app): State<Arc<App>>) -> Response {
    // Reading each worker's memory from /proc takes about a millisecond a worker.
    let view = tokio::task::spawn_blocking(move || PoolView {
        ready: app.unready().is_none(),
        draining: app.draining(),
        stats: app.executor.get().map(|e| e.stats()),
        recent_replacements: app.metrics.recent_replacements(),
        latency_ms: app.metrics.latency(),
    })
    .await;
    match view {
        Ok(view) => Json(view).into_response(),
        Err(e) => Problem::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "pool",
            e.to_string(),
        )
        .into_response(),
    }
}
