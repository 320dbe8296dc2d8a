//! The run records a server keeps (`--records DIR`), for the page's Runs view and for
//! anyone auditing: `GET /v1/runs` (newest first, by status), `GET /v1/runs/{name}` (the
//! whole record), an attempt's artifact by name, and `POST /v1/runs/{name}/replay`,
//! which runs every attempt again on the server's own pool and compares the bytes.
//!
//! Names come from the client: a run is found only among the record directories, and an
//! artifact only among the names its record lists, so no path is ever built from a
//! request alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pyward::record::{self, RunRecord};
use serde::{Deserialize, Serialize};

use super::problem::Problem;
use super::state::App;
use crate::service::{self, Door};

/// Runs answered by one `GET /v1/runs` at most.
const MAX_LIST: usize = 500;

/// The query of `GET /v1/runs`.
#[derive(Deserialize, Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only runs whose last attempt has this status (`ok`, `rejected`, `timeout`, ...).
    status: Option<String>,
    /// At most this many runs (default 100, at most 500).
    #[param(minimum = 0, maximum = 500)]
    limit: Option<usize>,
}

/// One recorded run, in a list.
#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct RunSummary {
    /// The run's directory name: its key in the other `/v1/runs/...` routes.
    name: String,
    /// When it ran, in Unix milliseconds.
    created_unix_ms: u64,
    /// The task text the client gave, if any.
    task: Option<String>,
    /// The last attempt's status.
    status: String,
    /// Every attempt's status, in order.
    statuses: Vec<String>,
    /// Artifacts of the last attempt.
    artifacts: usize,
}

/// `GET /v1/runs`.
#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct RunList {
    /// Newest first.
    runs: Vec<RunSummary>,
    /// Records that could not be read (each one logged).
    unreadable: usize,
}

/// Recorded runs, newest first.
#[utoipa::path(
    get,
    path = "/v1/runs",
    params(ListQuery),
    responses(
        (status = 200, description = "Recorded runs, newest first", body = RunList),
        (status = 400, description = "A malformed query (`limit` not a number from 0 to 500)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "The server keeps no run records (no --records)", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn list(
    State(app): State<Arc<App>>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let query = match query {
        Ok(Query(q)) => q,
        Err(e) => return Problem::malformed(e.body_text()).into_response(),
    };
    let Some(dir) = records_dir(&app) else {
        return no_records().into_response();
    };
    let limit = query.limit.unwrap_or(100);
    if limit > MAX_LIST {
        return Problem::malformed(format!("limit {limit}: at most {MAX_LIST}")).into_response();
    }
    let listed = tokio::task::spawn_blocking(move || summaries(&dir, query.status, limit)).await;
    match listed {
        Ok(Ok(list)) => Json(list).into_response(),
        Ok(Err(e)) => io_problem(e).into_response(),
        Err(e) => io_problem(std::io::Error::other(e)).into_response(),
    }
}

/// Reads records newest first until `limit` of them have `status` (any when `None`).
fn summaries(dir: &Path, status: Option<String>, limit: usize) -> std::io::Result<RunList> {
    let mut list = RunList {
        runs: Vec::new(),
        unreadable: 0,
    };
    let dirs = match record::run_dirs(dir) {
        Ok(dirs) => dirs,
        // No run recorded yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(list),
        Err(e) => return Err(e),
    };
    for run in dirs.iter().rev() {
        if list.runs.len() >= limit {
            break;
        }
        let record = match record::load(run) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(run = %run.display(), "unreadable run record: {e}");
                list.unreadable += 1;
                continue;
            }
        };
        let statuses: Vec<String> = record.attempts.iter().map(|a| a.status.clone()).collect();
        let last = statuses.last().cloned().unwrap_or_default();
        if status.as_ref().is_some_and(|s| *s != last) {
            continue;
        }
        list.runs.push(RunSummary {
            name: file_name(run),
            created_unix_ms: record.created_unix_ms,
            task: record.task.clone(),
            status: last,
            statuses,
            artifacts: record.attempts.last().map_or(0, |a| a.artifacts.len()),
        });
    }
    // Runs made in the same millisecond, in the order they were made.
    list.runs
        .sort_by(|a, b| (b.created_unix_ms, &b.name).cmp(&(a.created_unix_ms, &a.name)));
    Ok(list)
}

/// One recorded run, whole.
#[utoipa::path(
    get,
    path = "/v1/runs/{name}",
    params(("name" = String, Path, description = "The run's name, from `GET /v1/runs`")),
    responses(
        (status = 200, description = "The run record: every attempt's code, status, report and artifact hashes; the inputs' names and hashes; the policy and limits", content_type = "application/json"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run, or no run records kept", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn show(State(app): State<Arc<App>>, UrlPath(name): UrlPath<String>) -> Response {
    match find(&app, &name).await {
        Ok((_, record)) => Json(record).into_response(),
        Err(problem) => problem.into_response(),
    }
}

/// An artifact of a recorded attempt.
#[utoipa::path(
    get,
    path = "/v1/runs/{name}/attempts/{attempt}/{artifact}",
    params(
        ("name" = String, Path, description = "The run's name"),
        ("attempt" = u32, Path, minimum = 1, maximum = 1000, description = "1-based attempt number"),
        ("artifact" = String, Path, description = "The artifact's file name, as the record lists it"),
    ),
    responses(
        (status = 200, description = "The artifact's bytes, with its recorded media type", content_type = "application/octet-stream"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run, attempt or artifact", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn artifact(
    State(app): State<Arc<App>>,
    UrlPath((name, attempt, file)): UrlPath<(String, String, String)>,
) -> Response {
    let (dir, record) = match find(&app, &name).await {
        Ok(found) => found,
        Err(problem) => return problem.into_response(),
    };
    // 1-based; anything but a listed attempt and artifact is not found.
    let listed = attempt.parse::<usize>().ok().and_then(|n| {
        let artifacts = &record.attempts.get(n.checked_sub(1)?)?.artifacts;
        Some((n, artifacts.iter().find(|x| x.name == file)?))
    });
    // A listed name is the job's choice: one that is not a plain file name (an old or
    // edited record) is never joined to a path and read.
    let listed = listed.filter(|(_, x)| pyward::output_dir::check_file_name(&x.name).is_ok());
    let Some((attempt, listed)) = listed else {
        return not_found("no such attempt or artifact in this run").into_response();
    };
    let path = dir.join(format!("attempt-{attempt}")).join(&listed.name);
    let media_type = listed.media_type.clone();
    match tokio::fs::read(&path).await {
        Ok(bytes) => {
            let content_type = HeaderValue::from_str(&media_type)
                .unwrap_or(HeaderValue::from_static("application/octet-stream"));
            let headers = [
                (header::CONTENT_TYPE, content_type),
                (
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ),
                // An SVG opened on its own runs no script and loads nothing.
                (
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "default-src 'none'; style-src 'unsafe-inline'; sandbox",
                    ),
                ),
            ];
            (StatusCode::OK, headers, bytes).into_response()
        }
        Err(e) => io_problem(e).into_response(),
    }
}

/// `POST /v1/runs/{name}/replay`.
#[derive(Serialize, Debug)]
struct ReplayAnswer {
    /// Every attempt has its recorded status and every artifact its recorded bytes.
    identical: bool,
    #[serde(flatten)]
    replay: record::Replay,
}

/// Runs a recorded run again on this server's pool and compares, artifact by artifact.
#[utoipa::path(
    post,
    path = "/v1/runs/{name}/replay",
    params(("name" = String, Path, description = "The run's name")),
    responses(
        (status = 200, description = "`identical` and, per attempt, its status now and then and each artifact's verdict (`identical`, `different`, `missing`, `new`)", content_type = "application/json"),
        (status = 401, description = "Missing or wrong bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run, or no run records kept", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Recorded under another gate policy or PNG encoder, or an input changed since (replay it with `pyward replay`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "The queue is full; retry after `Retry-After` seconds", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Warming up or draining", body = Problem, content_type = "application/problem+json"),
    ),
    security((), ("bearer" = [])),
)]
pub async fn replay(State(app): State<Arc<App>>, UrlPath(name): UrlPath<String>) -> Response {
    let (dir, record) = match find(&app, &name).await {
        Ok(found) => found,
        Err(problem) => return problem.into_response(),
    };
    // Counted in flight like a job: a drain waits for it.
    let (_in_flight, executor) = match app.admit() {
        Ok(admitted) => admitted,
        Err(problem) => return problem.into_response(),
    };
    if !record::replayable_on(&executor, &record) {
        return Problem::new(
            StatusCode::CONFLICT,
            "not_replayable_here",
            "the run was recorded under another gate policy or PNG encoder; replay it with `pyward replay`",
        )
        .into_response();
    }
    // Each attempt runs through the job service, as a replay: not counted as a job of
    // the server, not recorded again.
    let service = app.service.clone();
    let replayed = tokio::task::spawn_blocking(move || {
        record::replay_on_with(&executor, &dir, &record, |executor, job| {
            let request = service::Request::new(job, Door::Replay, name.as_str());
            service
                .run_blocking(executor, request)
                .map(|done| done.outcome)
        })
    })
    .await;
    match replayed {
        Ok(Ok(replay)) => Json(ReplayAnswer {
            identical: replay.identical(),
            replay,
        })
        .into_response(),
        Ok(Err(record::ReplayRunError::Executor { error, .. })) => {
            Problem::from_executor(&error).into_response()
        }
        // The record is unreadable or an input changed since the run: nothing ran.
        Ok(Err(e)) => {
            Problem::new(StatusCode::CONFLICT, "not_replayable", e.to_string()).into_response()
        }
        Err(e) => io_problem(std::io::Error::other(e)).into_response(),
    }
}

/// The run named `name`: a directory directly under the records (no separator, no
/// leading dot, so never `..` nor a record being written), holding a record.
async fn find(app: &App, name: &str) -> Result<(PathBuf, RunRecord), Problem> {
    let dir = records_dir(app).ok_or_else(no_records)?;
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !plain {
        return Err(not_found("no such run"));
    }
    let run = dir.join(name);
    let loaded = tokio::task::spawn_blocking({
        let run = run.clone();
        move || record::load(&run)
    })
    .await
    .map_err(|e| io_problem(std::io::Error::other(e)))?;
    match loaded {
        Ok(record) => Ok((run, record)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_found("no such run")),
        Err(e) => Err(io_problem(e)),
    }
}

fn records_dir(app: &App) -> Option<PathBuf> {
    app.service.recorder().map(|r| r.dir().to_path_buf())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn no_records() -> Problem {
    not_found("this server keeps no run records; start it with --records DIR")
}

fn not_found(detail: &str) -> Problem {
    Problem::new(StatusCode::NOT_FOUND, "not_found", detail)
}

fn io_problem(e: std::io::Error) -> Problem {
    tracing::error!("run records: {e}");
    Problem::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "records",
        "the run records cannot be read; see the server's log",
    )
}
