//! A job request as it arrives over HTTP: JSON with base64 inputs (the job service's
//! [`JobRequest`]), or `multipart/form-data` for large files, read within the server's
//! body limits and turned into a [`pyward::Job`]. The HTTP handlers (`jobs`, `queued`)
//! share it; what a job is and its options are the service's ([`crate::service::options`]).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{header, HeaderMap, StatusCode};
use pyward::Job;
use serde::Deserialize;
use utoipa::ToSchema;

use super::problem::Problem;
use crate::service::options::{
    from_json_object, with_array, Ceiling, JobOptions, JobRequest, Refusal, RefusalKind,
};

/// The server-side maxima a request's own limits must stay within.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest per-job deadline (also the default).
    pub max_timeout: Duration,
    /// Highest per-job memory ceiling in MiB (also the default).
    pub max_memory_mib: u64,
    /// Largest request body in bytes.
    pub max_body: usize,
    /// Longest pause while a request body arrives (408 past it).
    pub body_timeout: Duration,
}

impl Limits {
    /// What a job's options may ask for.
    pub fn ceiling(&self) -> Ceiling {
        Ceiling {
            max_timeout: self.max_timeout,
            max_memory_mib: self.max_memory_mib,
        }
    }
}

impl From<Refusal> for Problem {
    fn from(refusal: Refusal) -> Problem {
        match refusal.kind {
            RefusalKind::Malformed => Problem::malformed(refusal.detail),
            RefusalKind::LimitExceeded => Problem::limit_exceeded(refusal.detail),
            RefusalKind::InvalidJob => {
                Problem::new(StatusCode::BAD_REQUEST, "invalid_job", refusal.detail)
            }
        }
    }
}

/// Code for the gate alone.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The Python code (UTF-8).
    pub code: String,
}

/// The multipart form of a job (`multipart/form-data`).
#[derive(ToSchema)]
#[allow(dead_code)] // Describes the form for OpenAPI; the parts are read one by one.
pub struct JobForm {
    /// The Python code (text; a part with a file name is read the same way).
    code: String,
    /// The options, as JSON.
    options: Option<JobOptions>,
    /// An input file; its file name is its path for `srcpath` (repeatable).
    #[schema(format = Binary)]
    input: Option<String>,
    /// An `.npy` array; its file name without `.npy` is the array's name (repeatable).
    #[schema(format = Binary)]
    array: Option<String>,
}

/// The request's media type, without parameters, lowercased.
pub fn media_type(headers: &HeaderMap) -> String {
    let value = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether the client prefers the PNG itself over the JSON report (`Accept`, with
/// quality values; on a tie the first listed wins).
pub fn prefers_png(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let mut best: Option<(f32, bool)> = None;
    for entry in accept.split(',') {
        let mut parts = entry.split(';').map(str::trim);
        let range = parts.next().unwrap_or("").to_ascii_lowercase();
        let q = parts
            .find_map(|p| p.strip_prefix("q="))
            .and_then(|q| q.parse::<f32>().ok())
            .unwrap_or(1.0);
        let png = match range.as_str() {
            "image/png" | "image/*" => true,
            "application/json" | "application/*" | "*/*" => false,
            _ => continue,
        };
        if q > 0.0 && best.is_none_or(|(b, _)| q > b) {
            best = Some((q, png));
        }
    }
    best.is_some_and(|(_, png)| png)
}

/// Reads a JSON body into `T` (415 for another media type, 413 past the limit).
pub async fn read_json<T: serde::de::DeserializeOwned>(
    limits: &Limits,
    request: Request,
) -> Result<T, Problem> {
    let media = media_type(request.headers());
    if media != "application/json" {
        return Err(unsupported(&media, "application/json"));
    }
    let body = read_body(limits, request).await?;
    from_json_object(&body).map_err(|e| Problem::malformed(format!("invalid JSON: {e}")))
}

/// The whole body, at most the server's limit.
pub async fn read_body(limits: &Limits, request: Request) -> Result<Bytes, Problem> {
    Bytes::from_request(request, &())
        .await
        .map_err(|rejection| {
            body_problem(
                limits,
                rejection.status(),
                rejection.body_text(),
                &rejection,
            )
        })
}

fn body_problem(
    limits: &Limits,
    status: StatusCode,
    text: String,
    error: &(dyn std::error::Error + 'static),
) -> Problem {
    if stalled(error) {
        Problem::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!(
                "the request body stalled: nothing arrived for {} s",
                limits.body_timeout.as_secs_f64()
            ),
        )
    } else if status == StatusCode::PAYLOAD_TOO_LARGE {
        body_too_large(limits)
    } else {
        Problem::malformed(text)
    }
}

/// Whether a body error comes from the stalled-body deadline (the router's
/// `RequestBodyTimeoutLayer`), somewhere down its chain of causes.
fn stalled(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// 413 for a body over the server's limit.
pub fn body_too_large(limits: &Limits) -> Problem {
    Problem::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!(
            "the request body is larger than the server's limit of {} MiB (--max-body)",
            limits.max_body >> 20
        ),
    )
}

pub fn unsupported(media: &str, wanted: &str) -> Problem {
    let shown = if media.is_empty() { "none" } else { media };
    Problem::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        format!("Content-Type {shown}: send {wanted}"),
    )
}

/// The job a request describes.
pub async fn read_job(limits: &Limits, request: Request) -> Result<Job, Problem> {
    match media_type(request.headers()).as_str() {
        "application/json" => {
            let parsed: JobRequest = read_json(limits, request).await?;
            Ok(parsed.into_job(&limits.ceiling())?)
        }
        "multipart/form-data" => read_form(limits, request).await,
        other => Err(unsupported(
            other,
            "application/json or multipart/form-data",
        )),
    }
}

/// A multipart job: parts `code`, `options` (JSON), `input` and `array` (file parts).
async fn read_form(limits: &Limits, request: Request) -> Result<Job, Problem> {
    let part_problem = |e: axum::extract::multipart::MultipartError| {
        body_problem(limits, e.status(), e.body_text(), &e)
    };
    let mut form = Multipart::from_request(request, &())
        .await
        .map_err(|r| Problem::malformed(r.body_text()))?;
    let mut code = None;
    let mut options = JobOptions::default();
    let mut inputs = Vec::new();
    let mut arrays = Vec::new();
    while let Some(field) = form.next_field().await.map_err(part_problem)? {
        let name = field.name().unwrap_or("").to_string();
        let file_name = field.file_name().map(str::to_string);
        let bytes = field.bytes().await.map_err(part_problem)?;
        match name.as_str() {
            "code" => code = Some(bytes.to_vec()),
            "options" => {
                if bytes.trim_ascii() != b"null" {
                    options = from_json_object(&bytes)
                        .map_err(|e| Problem::malformed(format!("part `options`: {e}")))?;
                }
            }
            "input" => {
                let file = file_name.ok_or_else(|| {
                    Problem::malformed("an `input` part needs a file name (its path for srcpath)")
                })?;
                inputs.push((file, bytes.to_vec()));
            }
            "array" => {
                let file = file_name.ok_or_else(|| {
                    Problem::malformed("an `array` part needs a file name (`NAME.npy`)")
                })?;
                let array = file.strip_suffix(".npy").unwrap_or(&file).to_string();
                arrays.push((array, bytes));
            }
            other => {
                return Err(Problem::malformed(format!(
                    "unknown part `{other}` (expected code, options, input, array)"
                )))
            }
        }
    }
    let code = code.ok_or_else(|| Problem::malformed("the form has no `code` part"))?;
    let mut job = Job::new(code);
    for (name, bytes) in inputs {
        job = job.src_bytes(name, bytes);
    }
    for (name, npy) in arrays {
        job = with_array(job, name, &npy)?;
    }
    Ok(options.apply(job, &limits.ceiling())?)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn accept(value: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        prefers_png(&headers)
    }

    #[test]
    fn accept_negotiation_prefers_the_higher_quality_then_the_first_listed() {
        assert!(accept("image/png"));
        assert!(accept("image/*"));
        assert!(!accept("application/json"));
        assert!(!accept("*/*"));
        assert!(accept("image/png, application/json"));
        assert!(!accept("application/json, image/png"));
        assert!(accept("application/json;q=0.5, image/png"));
        assert!(!accept("image/png;q=0"));
        assert!(!accept("text/html"));
        assert!(!prefers_png(&HeaderMap::new()));
    }
}
