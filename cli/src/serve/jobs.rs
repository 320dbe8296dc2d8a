//! `POST /v1/jobs` and `POST /v1/check`: the request (read by `request`) runs as a
//! [`pyward::Job`] through the job service ([`crate::service`]); its outcome becomes the
//! versioned report (or, when the client asks for `image/png`, the figure itself).
//! `?queue=1` hands the job to `queued` instead.
//!
//! A client that disconnects drops this handler's future, and with it the `JobFuture`:
//! the job leaves the queue, or its worker is killed and replaced.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pyward::gate;
use pyward::report::{ms, Report};

use super::problem::Problem;
use super::request::{prefers_png, read_job, read_json, CheckRequest, JobForm};
use super::state::App;
use crate::service::options::JobRequest;
use crate::service::{self, Done, Door};

/// Runs a job.
#[utoipa::path(
    post,
    path = "/v1/jobs",
    params(("queue" = Option<bool>, Query, description = "Queue mode: add the job to the stream and answer its id at once (202)")),
    request_body(
        description = "The job as JSON (inputs base64) or as a multipart form (inputs as file parts)",
        content(
            (JobRequest = "application/json"),
            (JobForm = "multipart/form-data"),
        )
    ),
    responses(
        (status = 200, description = "The job ran or was refused by the gate: its report says which. With `Accept: image/png` and a job that produced exactly one PNG, the PNG itself (report status and timings in `X-Pyward-Status` and `Server-Timing`).",
            content(
                (super::schemas::Report = "application/json"),
                (super::schemas::Png = "image/png"),
            )),
        (status = 202, description = "With `queue=1` (queue mode): the job is on the stream; its answer comes from `GET /v1/jobs/{id}`", body = super::queued::Pending),
        (status = 400, description = "Malformed request, invalid inputs or limits above the server's", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`queue=1` on a server that is not in queue mode", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body larger than the server's limit", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Neither JSON nor a multipart form (queued jobs: JSON only)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "The queue is full; retry after `Retry-After` seconds", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Warming up, draining, or the executor cannot work", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn submit(State(app): State<Arc<App>>, request: Request) -> Response {
    match wants_queue(request.uri().query()) {
        Ok(true) => return super::queued::enqueue(app, request).await,
        Ok(false) => {}
        Err(problem) => return problem.into_response(),
    }
    let id = app.request_id();
    let want_png = prefers_png(request.headers());
    // Refused before its body is read: warming up or draining.
    if let Some(problem) = app.unready() {
        return problem.into_response();
    }
    let job = match read_job(&app.limits, request).await {
        Ok(job) => job,
        Err(problem) => return problem.into_response(),
    };
    let (_in_flight, executor) = match app.admit() {
        Ok(admitted) => admitted,
        Err(problem) => return problem.into_response(),
    };
    let mut watch = Abandoned {
        app: &app,
        id,
        started: Instant::now(),
        answered: false,
    };
    let job = service::Request::new(job, Door::Http, id.to_string());
    let result = app.service.run(&executor, job).await;
    watch.answered = true;
    match result {
        Ok(done) => answer(id, done, want_png),
        Err(e) => Problem::from_executor(&e).into_response(),
    }
}

/// Whether the query asks for the queue: `queue=1`/`true` or `0`/`false` (absent:
/// no); another value is a malformed request, not a silent "no".
fn wants_queue(query: Option<&str>) -> Result<bool, Problem> {
    let mut wanted = false;
    for pair in query.unwrap_or("").split('&') {
        let Some(value) = pair.strip_prefix("queue=") else {
            continue;
        };
        wanted = match value {
            "1" | "true" => true,
            "0" | "false" => false,
            other => {
                return Err(Problem::malformed(format!(
                    "queue={other}: expected true or false"
                )))
            }
        };
    }
    Ok(wanted)
}

/// Logs a job that lost its client (and was cancelled by the drop of its future).
struct Abandoned<'a> {
    app: &'a App,
    id: u64,
    started: Instant,
    answered: bool,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.answered {
            let (id, after) = (self.id.to_string(), self.started.elapsed());
            self.app.service.cancelled(Door::Http, &id, after);
        }
    }
}

/// The answer: the report as JSON, or the PNG itself when asked for and there is
/// exactly one.
fn answer(id: u64, done: Done, want_png: bool) -> Response {
    let outcome = &done.outcome;
    let mut headers = HeaderMap::new();
    headers.insert("x-request-id", HeaderValue::from(id));
    headers.insert(
        "x-pyward-status",
        HeaderValue::from_static(outcome.status()),
    );
    headers.insert("x-pyward-seed", HeaderValue::from(outcome.seed));
    let t = &outcome.timings;
    let timing = format!(
        "gate;dur={}, queue;dur={}, exec;dur={}, total;dur={}",
        ms(t.gate),
        ms(t.queue),
        ms(t.exec),
        ms(t.total)
    );
    if let Ok(v) = HeaderValue::from_str(&timing) {
        headers.insert("server-timing", v);
    }
    if let Some(dir) = done
        .record
        .as_deref()
        .and_then(|d| HeaderValue::from_str(d).ok())
    {
        headers.insert("x-pyward-record", dir);
    }
    if want_png {
        if let Ok([png]) = outcome.result.as_deref() {
            if png.media_type == "image/png" {
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
                if let Ok(name) = HeaderValue::from_str(&png.name) {
                    headers.insert("x-pyward-artifact", name);
                }
                let bytes = done.outcome.result.unwrap_or_default().swap_remove(0).bytes;
                return (StatusCode::OK, headers, bytes).into_response();
            }
        }
    }
    (StatusCode::OK, headers, Json(done.report(true))).into_response()
}

/// Checks code with the gate alone.
#[utoipa::path(
    post,
    path = "/v1/check",
    request_body(content = CheckRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The gate's verdict: `ok`, `rejected` or `bad_input`", body = super::schemas::Report, content_type = "application/json"),
        (status = 400, description = "Malformed request", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body larger than the server's limit", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Not JSON", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn check(State(app): State<Arc<App>>, request: Request) -> Response {
    let checked: CheckRequest = match read_json(&app.limits, request).await {
        Ok(c) => c,
        Err(problem) => return problem.into_response(),
    };
    let policy = app.policy.clone();
    let verdict = tokio::task::spawn_blocking(move || {
        Report::from_check(gate::check_bytes(checked.code.as_bytes(), &policy), &policy)
    })
    .await;
    match verdict {
        Ok(report) => Json(report).into_response(),
        Err(e) => {
            Problem::new(StatusCode::SERVICE_UNAVAILABLE, "gate", e.to_string()).into_response()
        }
    }
}
