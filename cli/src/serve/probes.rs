//! `GET /healthz` (the process answers), `GET /readyz` (the pool is warm and the server
//! is not draining) and `GET /metrics`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::metrics;
use super::problem::Problem;
use super::state::App;

/// Alive: the server answers.
#[utoipa::path(
    get,
    path = "/healthz",
    responses((status = 200, description = "The server is alive", content_type = "application/json")),
)]
pub async fn healthz() -> Response {
    Json(json!({ "status": "alive" })).into_response()
}

/// Ready: the pool is warm and the server takes jobs.
#[utoipa::path(
    get,
    path = "/readyz",
    responses(
        (status = 200, description = "Ready for jobs", content_type = "application/json"),
        (status = 503, description = "Warming up, draining, or (queue mode) the queue does not answer", body = super::problem::Problem, content_type = "application/problem+json"),
    ),
)]
pub async fn readyz(State(app): State<Arc<App>>) -> Response {
    if let Some(problem) = app.unready() {
        return problem.into_response();
    }
    if app.queue.as_ref().is_some_and(|q| !q.reachable()) {
        let problem = Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "queue_unreachable",
            "the job queue (Redis) does not answer; retrying with backoff",
        );
        return problem.retry_after(1).into_response();
    }
    Json(json!({ "status": "ready" })).into_response()
}

/// Prometheus metrics.
#[utoipa::path(
    get,
    path = "/metrics",
    responses(
        (status = 200, description = "Prometheus (OpenMetrics) text: jobs by status, latency histograms per step, queue depth, busy and idle workers, kills and recycles by cause, warm-up time", content_type = "application/openmetrics-text"),
        (status = 401, description = "Missing or wrong bearer token", body = super::problem::Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn metrics(State(app): State<Arc<App>>) -> Response {
    // Reading each worker's memory from /proc takes about a millisecond a worker.
    match tokio::task::spawn_blocking(move || app.metrics.render()).await {
        Ok(text) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
            text,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
