//! Transport errors as RFC 9457 problem details: every answer that is not a job's report
//! (HTTP status other than 200) says in `code` what the client should do differently.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// Media type of a [`Problem`] body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// What went wrong with a request (not with a job: a job's own failure is a 200 report).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Problem {
    /// `urn:pyward:problem:<code>`.
    #[serde(rename = "type")]
    pub type_uri: String,
    /// The HTTP reason phrase.
    pub title: String,
    /// The HTTP status, repeated.
    pub status: u16,
    /// One line for a person: what was wrong and how to fix it.
    pub detail: String,
    /// A stable word: `malformed_request`, `invalid_job`, `limit_exceeded`,
    /// `unauthorized`, `body_too_large`, `unsupported_media_type`, `queue_full`,
    /// `warming_up`, `draining`, or an executor error code (`spawn`, `protocol`, ...).
    pub code: String,
    /// Seconds to wait before retrying (429, 503), also sent as `Retry-After`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub retry_after: Option<u32>,
    /// With `queue_full`: milliseconds until a place is expected to free, from the
    /// measured time between answers (`Retry-After` cannot say less than a second).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub retry_after_ms: Option<u32>,
}

impl Problem {
    /// A problem with this status, code and detail.
    pub fn new(status: StatusCode, code: &str, detail: impl Into<String>) -> Problem {
        Problem {
            type_uri: format!("urn:pyward:problem:{code}"),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            code: code.to_string(),
            retry_after: None,
            retry_after_ms: None,
        }
    }

    /// 400: the request cannot be understood (bad JSON, bad base64, unknown field).
    pub fn malformed(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, "malformed_request", detail)
    }

    /// 400: a limit the client asked for is above the server's.
    pub fn limit_exceeded(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, "limit_exceeded", detail)
    }

    /// The problem with a `Retry-After` of `seconds`.
    pub fn retry_after(mut self, seconds: u32) -> Problem {
        self.retry_after = Some(seconds);
        self
    }

    /// The problem with a retry hint of `wait`: `Retry-After` in whole seconds (at least
    /// 1, rounded up) and `retry_after_ms` as measured.
    pub fn retry_after_duration(mut self, wait: std::time::Duration) -> Problem {
        let ms = u32::try_from(wait.as_millis()).unwrap_or(u32::MAX).max(1);
        self.retry_after_ms = Some(ms);
        self.retry_after(ms.div_ceil(1000))
    }

    /// The executor's error for a job it did not run: the caller's inputs (400), a full
    /// queue (429, retry after the measured time between answers), shutdown (503), or an
    /// executor that cannot work (503).
    pub fn from_executor(error: &pyward::Error) -> Problem {
        let status = match error {
            e if e.is_input_error() => StatusCode::BAD_REQUEST,
            pyward::Error::QueueFull { .. } => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        let problem = Problem::new(status, error.code(), error.to_string());
        match error {
            _ if status == StatusCode::BAD_REQUEST => problem,
            pyward::Error::QueueFull { retry_after, .. } => {
                problem.retry_after_duration(*retry_after)
            }
            _ => problem.retry_after(1),
        }
    }
}

/// Makes every error answer a problem: one that is not yet (axum's own 405 for a method a
/// route does not serve, an extractor's plain-text rejection) gets a problem body with
/// its status, keeping its headers (`Allow`, `Retry-After`, `WWW-Authenticate`).
pub async fn bare_errors_as_problems(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path: String = request.uri().path().chars().take(100).collect();
    let response = next.run(request).await;
    let status = response.status();
    let is_problem = (response.headers().get(header::CONTENT_TYPE))
        .is_some_and(|v| v.as_bytes() == PROBLEM_JSON.as_bytes());
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let allowed = (parts.headers.get(header::ALLOW))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let (code, detail) = match status {
        StatusCode::METHOD_NOT_ALLOWED => (
            "method_not_allowed",
            format!("{method} is not served at {path}; allowed: {allowed}"),
        ),
        StatusCode::BAD_REQUEST => ("malformed_request", text),
        StatusCode::NOT_FOUND => ("not_found", format!("{path}: {text}")),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", text),
        StatusCode::PAYLOAD_TOO_LARGE => ("body_too_large", text),
        StatusCode::REQUEST_TIMEOUT => ("body_timeout", text),
        s if s.is_server_error() => ("internal", text),
        _ => ("client_error", text),
    };
    let detail = if detail.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        detail
    };
    let mut answer = Problem::new(status, code, detail).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            answer.headers_mut().append(name, value.clone());
        }
    }
    answer
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Some(s) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        response
    }
}
