//! A job as every door reads it: the JSON job (`POST /v1/jobs`, a queue entry's `job`
//! field) and its per-job options, one type from each door's parsing to the
//! [`pyward::Job`] (and, through `utoipa`, to the OpenAPI schema). `pyward run`'s flags
//! fill the same [`JobOptions`]. A new per-job option is a field here and its line in
//! [`JobOptions::apply`].

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use pyward::validate::Expectations;
use pyward::{Job, SharedArray};
use serde::Deserialize;
use utoipa::ToSchema;

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
    #[serde(default, deserialize_with = "integer")]
    pub timeout_ms: Option<u64>,
    /// Memory ceiling in MiB (default and maximum: the server's).
    #[schema(minimum = 1)]
    #[serde(default, deserialize_with = "integer")]
    pub memory_mib: Option<u64>,
    /// Seed of numpy's and `random`'s generators (default: random, reported back).
    #[schema(minimum = 0)]
    #[serde(default, deserialize_with = "integer")]
    pub seed: Option<i64>,
    /// File name of `OUT` (default `figure.png`): one plain file name (no directory)
    /// ending in `.png`, `.svg`, `.pdf`, `.csv`, `.json` or `.txt`; its extension decides
    /// the format.
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = r"^[^/\\\u0000-\u001f\u007f-\u009f]+\.([Pp][Nn][Gg]|[Ss][Vv][Gg]|[Pp][Dd][Ff]|[Cc][Ss][Vv]|[Jj][Ss][Oo][Nn]|[Tt][Xx][Tt])$"
    )]
    pub out_name: Option<String>,
    /// Other artifacts the job must write (e.g. `table.csv`).
    #[serde(default)]
    pub expect_artifacts: Vec<String>,
    /// What the job must write and the checks on its tables, in the versioned form
    /// every door takes (`pyward::validate::Expectations`: `{"version": 1, "artifacts":
    /// ["result.xlsx"], "tables": [{"artifact": "result.xlsx", "sums": [...], ...}]}`;
    /// the fields of examples/allocation/checks.toml). A job that lists files and no
    /// figure is a table job, valid without a figure.
    #[schema(value_type = Option<Object>)]
    pub expect: Option<serde_json::Value>,
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

/// An integer option as JSON Schema counts integers: `3`, or `3.0` (a number whose
/// fraction is zero, which some JSON writers send), never `3.5`; `null` is no value.
fn integer<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64> + TryFrom<i64>,
{
    use serde::de::Error as _;
    let Some(n) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let whole = match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => T::try_from(u).ok(),
        (_, Some(i), _) => T::try_from(i).ok(),
        // Within ±2^63 a float with no fraction converts exactly.
        (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.223_372_036_854_776e18 => {
            T::try_from(f as i64).ok()
        }
        _ => None,
    };
    whole.map(Some).ok_or_else(|| {
        D::Error::custom(format!("invalid value: {n}, expected an integer in range"))
    })
}

/// The highest limits a job's options may ask for (a server's maxima).
#[derive(Debug, Clone, Copy)]
pub struct Ceiling {
    /// Longest per-job deadline.
    pub max_timeout: Duration,
    /// Highest per-job memory ceiling in MiB.
    pub max_memory_mib: u64,
}

/// Why a request is no job: what kind of mistake, and the message a client reads.
#[derive(Debug)]
pub struct Refusal {
    /// Which mistake.
    pub kind: RefusalKind,
    /// What is wrong, for the client.
    pub detail: String,
}

/// The kinds of [`Refusal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// The request is malformed (bad base64, a negative seed, a bad tenant, ...).
    Malformed,
    /// A limit above the ceiling.
    LimitExceeded,
    /// `out_name` is not one plain file name with a known suffix.
    InvalidJob,
}

impl Refusal {
    fn new(kind: RefusalKind, detail: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            detail: detail.into(),
        }
    }

    /// A malformed request.
    pub fn malformed(detail: impl Into<String>) -> Refusal {
        Refusal::new(RefusalKind::Malformed, detail)
    }
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

impl JobRequest {
    /// The job this request describes (from HTTP, or from a queue entry).
    pub fn into_job(self, ceiling: &Ceiling) -> Result<Job, Refusal> {
        let mut job = Job::new(self.code.into_bytes());
        for (name, data) in self.inputs {
            job = job.src_bytes(name.clone(), decode_base64(&data, "input", &name)?);
        }
        for (name, data) in self.arrays {
            let npy = decode_base64(&data, "array", &name)?;
            job = with_array(job, name, &npy)?;
        }
        self.options.apply(job, ceiling)
    }
}

/// `options.out_name` checked as one plain file name with a known suffix
/// ([`pyward::output_dir::check_out_name`]).
pub fn check_out_name(name: &str) -> Result<(), Refusal> {
    pyward::output_dir::check_out_name(name).map_err(|why| {
        let shown: String = name.chars().take(80).collect();
        Refusal::new(
            RefusalKind::InvalidJob,
            format!("options.out_name {shown:?}: {why}"),
        )
    })
}

fn decode_base64(data: &str, what: &str, name: &str) -> Result<Vec<u8>, Refusal> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| Refusal::malformed(format!("{what} {name:?}: invalid base64: {e}")))
}

/// `job` with the array `name` read from an `.npy` file.
pub fn with_array(job: Job, name: String, npy: &[u8]) -> Result<Job, Refusal> {
    let array = SharedArray::from_npy(npy)
        .map_err(|e| Refusal::malformed(format!("array {name:?}: not a usable .npy file: {e}")))?;
    Ok(job.with_shared_array(name, &array))
}

impl JobOptions {
    /// Applies the options to `job`, refusing limits above `ceiling`.
    pub fn apply(self, mut job: Job, ceiling: &Ceiling) -> Result<Job, Refusal> {
        if let Some(ms) = self.timeout_ms {
            let max = ceiling.max_timeout.as_millis();
            if ms == 0 || u128::from(ms) > max {
                return Err(Refusal::new(
                    RefusalKind::LimitExceeded,
                    format!("timeout_ms {ms}: must be between 1 and the server's maximum {max}"),
                ));
            }
            job = job.timeout(Duration::from_millis(ms));
        }
        if let Some(mib) = self.memory_mib {
            let max = ceiling.max_memory_mib;
            if mib == 0 || mib > max {
                return Err(Refusal::new(
                    RefusalKind::LimitExceeded,
                    format!("memory_mib {mib}: must be between 1 and the server's maximum {max}"),
                ));
            }
            job = job.memory_limit(mib << 20);
        }
        if let Some(tenant) = self.tenant {
            let printable = !tenant.is_empty()
                && tenant.chars().count() <= MAX_TENANT_CHARS
                && !tenant.chars().any(char::is_control);
            if !printable {
                return Err(Refusal::malformed(format!(
                    "tenant: 1 to {MAX_TENANT_CHARS} printable characters"
                )));
            }
            job = job.tenant(tenant);
        }
        if let Some(seed) = self.seed {
            let seed = u64::try_from(seed)
                .map_err(|_| Refusal::malformed(format!("seed {seed}: must not be negative")))?;
            job = job.seed(seed);
        }
        if let Some(name) = self.out_name {
            check_out_name(&name)?;
            job = job.out_name(name);
        }
        for name in self.expect_artifacts {
            job = job.expect_artifact(name);
        }
        if let Some(sent) = self.expect {
            let refuse = |e: &dyn std::fmt::Display| {
                Refusal::new(RefusalKind::InvalidJob, format!("options.expect: {e}"))
            };
            let declared = Expectations::from_json(&sent.to_string()).map_err(|e| refuse(&e))?;
            let read = serde_json::to_value(&declared).map_err(|e| refuse(&e))?;
            if !objects_sent_as_objects(&sent, &read) {
                return Err(refuse(
                    &"each part of the form is a JSON object, not an array",
                ));
            }
            job = job.expect(&declared);
        }
        if let Some(describe) = self.describe_figures {
            job = job.describe_figures(describe);
        }
        if self.allow_blank {
            job = job.allow_blank();
        }
        Ok(job)
    }
}

/// Whether every object of the form as read was sent as an object: serde also reads a
/// struct from an array of its fields in order, which no client means and the
/// published schema does not allow.
fn objects_sent_as_objects(sent: &serde_json::Value, read: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (sent, read) {
        (Value::Object(sent), Value::Object(read)) => read.iter().all(|(key, read)| {
            sent.get(key)
                .is_none_or(|sent| objects_sent_as_objects(sent, read))
        }),
        (_, Value::Object(_)) => false,
        (Value::Array(sent), Value::Array(read)) => sent
            .iter()
            .zip(read)
            .all(|(sent, read)| objects_sent_as_objects(sent, read)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::JobOptions;

    fn options(json: &str) -> Result<JobOptions, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn integer_options_take_integers_as_json_schema_counts_them() {
        let o = options(r#"{"timeout_ms": 2000.0, "memory_mib": 512, "seed": 7.0}"#).unwrap();
        assert_eq!(
            (o.timeout_ms, o.memory_mib, o.seed),
            (Some(2000), Some(512), Some(7))
        );
        let o = options(r#"{"timeout_ms": null}"#).unwrap();
        assert_eq!(o.timeout_ms, None);
        for bad in [
            r#"{"timeout_ms": 2.5}"#,
            r#"{"memory_mib": -1}"#,
            r#"{"memory_mib": -1.0}"#,
            r#"{"seed": 1e300}"#,
            r#"{"seed": 18446744073709551615}"#,
            r#"{"timeout_ms": "5"}"#,
        ] {
            let e = options(bad).expect_err(bad).to_string();
            assert!(
                e.contains("integer") || e.contains("invalid type"),
                "{bad}: {e}"
            );
        }
    }
}
