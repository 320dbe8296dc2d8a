//! Queue mode over HTTP: `POST /v1/jobs?queue=1` adds the job to the stream and answers
//! its id at once (202); `GET /v1/jobs/{id}` waits for its answer.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::problem::Problem;
use super::queue::{valid_job_id, Queue};
use super::request;
use super::state::App;
use crate::service::options::{from_json_object, JobRequest};

/// Longest `wait` a request may ask for, in seconds.
const MAX_WAIT_SECONDS: f64 = 120.0;

/// A job that is queued or not answered yet.
#[derive(Debug, Serialize, ToSchema)]
pub struct Pending {
    /// The job's id.
    pub id: String,
    /// `queued` (just added) or `pending` (no answer yet).
    pub status: &'static str,
}

/// `GET /v1/jobs/{id}` parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WaitParams {
    /// Seconds to wait for the answer (default 30, at most 120; 0 looks once).
    #[param(minimum = 0, maximum = 120)]
    pub wait: Option<f64>,
}

fn queue(app: &App) -> Result<&Arc<Queue>, Problem> {
    app.queue.as_ref().ok_or_else(|| {
        Problem::new(
            StatusCode::NOT_FOUND,
            "not_queue_mode",
            "this server runs jobs directly; queued jobs need `pyward serve --queue redis://...`",
        )
    })
}

fn unreachable(e: &redis::RedisError) -> Problem {
    tracing::warn!("queue: {e}");
    Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "queue_unreachable",
        "the job queue (Redis) does not answer",
    )
    .retry_after(1)
}

/// Adds the request's job to the stream: 202 with its id, 429 when the stream is full.
pub async fn enqueue(app: Arc<App>, request: Request) -> Response {
    match try_enqueue(&app, request).await {
        Ok(id) => {
            let location = format!("/v1/jobs/{id}");
            let mut response = (
                StatusCode::ACCEPTED,
                Json(Pending {
                    id,
                    status: "queued",
                }),
            )
                .into_response();
            if let Ok(v) = HeaderValue::from_str(&location) {
                response.headers_mut().insert(header::LOCATION, v);
            }
            response
        }
        Err(problem) => problem.into_response(),
    }
}

async fn try_enqueue(app: &App, request: Request) -> Result<String, Problem> {
    let queue = queue(app)?;
    if let Some(problem) = app.unready() {
        return Err(problem);
    }
    let media = request::media_type(request.headers());
    if media != "application/json" {
        return Err(request::unsupported(
            &media,
            "application/json (queued jobs)",
        ));
    }
    let body = request::read_body(&app.limits, request).await?;
    // Refused here, not after a trip through the queue: the same checks a consumer makes.
    let parsed: JobRequest =
        from_json_object(&body).map_err(|e| Problem::malformed(format!("invalid JSON: {e}")))?;
    drop(parsed.into_job(&app.limits.ceiling())?);
    match queue.enqueue(&body).await {
        Ok(Some(id)) => match queue.results.mark(queue, &id).await {
            Ok(()) => Ok(id),
            Err(e) => Err(unreachable(&e)),
        },
        Ok(None) => Err(Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            "queue_full",
            format!(
                "the job stream holds {} jobs (--queue-max-len)",
                queue.max_len
            ),
        )
        .retry_after(1)),
        Err(e) => Err(unreachable(&e)),
    }
}

/// The answer of a queued job.
#[utoipa::path(
    get,
    path = "/v1/jobs/{id}",
    params(("id" = String, Path, description = "The job id `POST /v1/jobs?queue=1` answered (or the stream entry id / `id` field of a direct XADD)"), WaitParams),
    responses(
        (status = 200, description = "The job's report", body = super::schemas::Report, content_type = "application/json"),
        (status = 202, description = "No answer yet", body = Pending),
        (status = 400, description = "Not a job id, or a bad wait", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Not in queue mode, or no job with this id was enqueued (or its answer is older than `--result-ttl`)", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The queue does not answer", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn result(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    params: Result<Query<WaitParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(params)) => params,
        Err(rejection) => return Problem::malformed(rejection.body_text()).into_response(),
    };
    let queue = match queue(&app) {
        Ok(q) => q,
        Err(p) => return p.into_response(),
    };
    if !valid_job_id(&id) {
        return Problem::malformed("a job id is 1 to 128 of [0-9A-Za-z_.:-]").into_response();
    }
    let wait = params.wait.unwrap_or(30.0);
    if !(0.0..=MAX_WAIT_SECONDS).contains(&wait) {
        return Problem::malformed(format!(
            "wait {wait}: between 0 and {MAX_WAIT_SECONDS} seconds"
        ))
        .into_response();
    }
    match queue.results.known(queue, &id).await {
        Ok(true) => {}
        Ok(false) => {
            return Problem::new(
                StatusCode::NOT_FOUND,
                "unknown_job",
                format!(
                    "no job {id:?} was enqueued, or its answer is older than {} s (--result-ttl)",
                    queue.result_ttl
                ),
            )
            .into_response()
        }
        Err(e) => return unreachable(&e).into_response(),
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(wait);
    match queue.results.wait(queue, &id, deadline).await {
        Ok(Some(report)) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            report,
        )
            .into_response(),
        Ok(None) => (
            StatusCode::ACCEPTED,
            Json(Pending {
                id,
                status: "pending",
            }),
        )
            .into_response(),
        Err(e) => unreachable(&e).into_response(),
    }
}
