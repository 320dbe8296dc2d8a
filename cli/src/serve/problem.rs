//! Transport errors as RFC 9457 problem details: every answer that is not a job's report
//! (HTTP status other than 200) says in `code` what the client should do differently.

use axum::http::{header, HeaderValue, StatusCode};
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
    pub retry_after: Option<u32>,
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

    /// The executor's error for a job it did not run: the caller's inputs (400), a full
    /// queue (429), shutdown (503), or an executor that cannot work (503).
    pub fn from_executor(error: &pyward::Error) -> Problem {
        let status = match error {
            e if e.is_input_error() => StatusCode::BAD_REQUEST,
            pyward::Error::QueueFull { .. } => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        let problem = Problem::new(status, error.code(), error.to_string());
        if status == StatusCode::BAD_REQUEST {
            problem
        } else {
            problem.retry_after(1)
        }
    }
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
