//! A job request as it arrives: JSON with base64 inputs, or `multipart/form-data` for
//! large files, read within the server's body limits and turned into a [`pyward::Job`].
//! The HTTP handlers (`jobs`, `queued`) and the queue consumer share it.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{header, HeaderMap, StatusCode};
use base64::Engine as _;
use pyward::{Job, SharedArray};
use serde::Deserialize;
use utoipa::ToSchema;

use super::problem::Problem;
use super::state::Limits;

/// A job: code, inputs, arrays and options.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobRequest {
    /// The Python code (UTF-8).
    pub code: String,
    /// Input files by relative path, each base64 (standard alphabet, padded); the code
    /// reads them through `srcpath('name')`.
    #[serde(default)]
    pub inputs: BTreeMap<String, String>,
    /// Numeric arrays by name, each a base64 `.npy` file; the code sees them as
    /// read-only numpy arrays of that name.
    #[serde(default)]
    pub arrays: BTreeMap<String, String>,
    /// Limits and checks.
    #[serde(default)]
    pub options: JobOptions,
}

/// Per-job options. Limits must stay within the server's maxima.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobOptions {
    /// Wall-clock deadline in milliseconds (default and maximum: the server's).
    #[schema(minimum = 1)]
    pub timeout_ms: Option<u64>,
    /// Memory ceiling in MiB (default and maximum: the server's).
    #[schema(minimum = 1)]
    pub memory_mib: Option<u64>,
    /// Seed of numpy's and `random`'s generators (default: random, reported back).
    #[schema(minimum = 0)]
    pub seed: Option<i64>,
    /// File name of `OUT` (default `figure.png`); its extension decides the format.
    pub out_name: Option<String>,
    /// Other artifacts the job must write (e.g. `table.csv`).
    #[serde(default)]
    pub expect_artifacts: Vec<String>,
    /// Accept a figure with nothing drawn (a PNG whose pixels are all one colour).
    #[serde(default)]
    pub allow_blank: bool,
    /// Describe every saved figure (axes, labels, series) in the report (default true;
    /// false also skips the empty and all-NaN figure checks).
    #[serde(default)]
    pub describe_figures: Option<bool>,
    /// The trust domain of the code (a user, a session, an API key; 1 to 128 printable
    /// characters): a worker that ran one tenant's code never runs another's, and jobs of
    /// one tenant reuse a warm worker. Without it the job is its own tenant: a process
    /// that never ran a job, killed after it (unless the server runs with
    /// `--reuse-across-tenants`).
    #[schema(min_length = 1, max_length = 128)]
    pub tenant: Option<String>,
}

/// Longest tenant name, in characters.
const MAX_TENANT_CHARS: usize = 128;

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

/// `T` from a JSON object. (serde's derived structs also accept an array of the
/// fields in order, which no client means.)
pub fn from_json_object<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if !value.is_object() {
        return Err("expected a JSON object".into());
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// The whole body, at most the server's limit.
pub async fn read_body(limits: &Limits, request: Request) -> Result<Bytes, Problem> {
    Bytes::from_request(request, &())
        .await
        .map_err(|rejection| body_problem(limits, rejection.status(), rejection.body_text()))
}

fn body_problem(limits: &Limits, status: StatusCode, text: String) -> Problem {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        body_too_large(limits)
    } else {
        Problem::malformed(text)
    }
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
        "application/json" => job_from_request(read_json(limits, request).await?, limits),
        "multipart/form-data" => read_form(limits, request).await,
        other => Err(unsupported(
            other,
            "application/json or multipart/form-data",
        )),
    }
}

/// The job a JSON request describes (from HTTP, or from a queue entry).
pub fn job_from_request(r: JobRequest, limits: &Limits) -> Result<Job, Problem> {
    let mut job = Job::new(r.code.into_bytes());
    for (name, data) in r.inputs {
        job = job.src_bytes(name.clone(), decode_base64(&data, "input", &name)?);
    }
    for (name, data) in r.arrays {
        let npy = decode_base64(&data, "array", &name)?;
        job = with_array(job, name, &npy)?;
    }
    apply_options(job, r.options, limits)
}

/// A multipart job: parts `code`, `options` (JSON), `input` and `array` (file parts).
async fn read_form(limits: &Limits, request: Request) -> Result<Job, Problem> {
    let part_problem = |e: axum::extract::multipart::MultipartError| {
        body_problem(limits, e.status(), e.body_text())
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
    apply_options(job, options, limits)
}

fn decode_base64(data: &str, what: &str, name: &str) -> Result<Vec<u8>, Problem> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| Problem::malformed(format!("{what} {name:?}: invalid base64: {e}")))
}

fn with_array(job: Job, name: String, npy: &[u8]) -> Result<Job, Problem> {
    let array = SharedArray::from_npy(npy)
        .map_err(|e| Problem::malformed(format!("array {name:?}: not a usable .npy file: {e}")))?;
    Ok(job.with_shared_array(name, &array))
}

/// Applies the request's options, refusing limits above the server's.
fn apply_options(mut job: Job, options: JobOptions, limits: &Limits) -> Result<Job, Problem> {
    if let Some(ms) = options.timeout_ms {
        let max = limits.max_timeout.as_millis();
        if ms == 0 || u128::from(ms) > max {
            return Err(Problem::limit_exceeded(format!(
                "timeout_ms {ms}: must be between 1 and the server's maximum {max}"
            )));
        }
        job = job.timeout(Duration::from_millis(ms));
    }
    if let Some(mib) = options.memory_mib {
        let max = limits.max_memory_mib;
        if mib == 0 || mib > max {
            return Err(Problem::limit_exceeded(format!(
                "memory_mib {mib}: must be between 1 and the server's maximum {max}"
            )));
        }
        job = job.memory_limit(mib << 20);
    }
    if let Some(tenant) = options.tenant {
        let printable = !tenant.is_empty()
            && tenant.chars().count() <= MAX_TENANT_CHARS
            && !tenant.chars().any(char::is_control);
        if !printable {
            return Err(Problem::malformed(format!(
                "tenant: 1 to {MAX_TENANT_CHARS} printable characters"
            )));
        }
        job = job.tenant(tenant);
    }
    if let Some(seed) = options.seed {
        let seed = u64::try_from(seed)
            .map_err(|_| Problem::malformed(format!("seed {seed}: must not be negative")))?;
        job = job.seed(seed);
    }
    if let Some(name) = options.out_name {
        job = job.out_name(name);
    }
    for name in options.expect_artifacts {
        job = job.expect_artifact(name);
    }
    if let Some(describe) = options.describe_figures {
        job = job.describe_figures(describe);
    }
    if options.allow_blank {
        job = job.allow_blank();
    }
    Ok(job)
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
