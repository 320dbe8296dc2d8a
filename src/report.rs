//! The one JSON contract: [`Report`], what `pyward run --json` and `pyward check --json`
//! print (and what an HTTP answer carries), versioned by [`SCHEMA_VERSION`] and described
//! by the JSON Schema [`JSON_SCHEMA`].
//!
//! A report keeps the job's own failure (`status` is a [`JobFailure::status`] word) apart
//! from problems of the caller's inputs (`input_error`) and of the executor itself
//! (`infrastructure_error`): a client decides from `status` alone whether to show the
//! `feedback` to a model, fix its request, or retry elsewhere.

use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::error::Error;
use crate::figure::FigureSummary;
use crate::gate::{BadInput, Verdict, Violation};
use crate::outcome::{
    Artifact, JobFailure, Obtained, Outcome, PythonError, Retirement, WorkerExit, WorkerInfo,
};
use crate::sandbox::ScratchLimit;
use crate::validate::TablePreview;

/// The JSON Schema (draft 2020-12) every serialized [`Report`] validates against.
pub const JSON_SCHEMA: &str = include_str!("../docs/report.schema.json");

/// Version of the report's shape. Grows by one when a field changes meaning or goes
/// away; new optional fields do not change it.
pub const SCHEMA_VERSION: u32 = 1;

/// `status` of a report whose job could not run because of the caller's inputs (a
/// missing input file, a symlink that leaves the input directory, a bad array name).
pub const STATUS_INPUT_ERROR: &str = "input_error";
/// `status` of a report whose job could not run because the executor could not work.
pub const STATUS_INFRASTRUCTURE_ERROR: &str = "infrastructure_error";

/// What a report describes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReportKind {
    /// A job run through the whole pipeline.
    Run,
    /// The static gate alone (`pyward check`, `POST /v1/check`).
    Check,
}

/// The versioned JSON report of one job (or one gate check).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `run` or `check`.
    pub kind: ReportKind,
    /// `ok`, a [`JobFailure::status`] word, [`STATUS_INPUT_ERROR`] or
    /// [`STATUS_INFRASTRUCTURE_ERROR`].
    pub status: String,
    /// The file the code came from (CLI only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What to tell the model (empty on `ok`).
    pub feedback: String,
    /// `ok` runs: what the figures show, one paragraph each, for a model to check the
    /// figure against its task ([`Outcome::description`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Every gate violation (empty unless `rejected`).
    pub violations: Vec<Violation>,
    /// The failure's details (`null` on `ok`).
    pub error: Option<ErrorReport>,
    /// Present in `run` reports only.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunReport>,
}

impl RunReport {
    /// Records the warm-up of the pool that was started for this job (the CLI).
    pub fn set_pool_warmup(&mut self, warmup: Duration) {
        if let Some(t) = self.timings_ms.as_mut() {
            t.pool_warmup = Some(ms(warmup));
        }
    }
}

/// The parts of a report that only a run has.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct RunReport {
    /// The artifacts (empty on failure).
    pub artifacts: Vec<ArtifactReport>,
    /// What the job printed, capped.
    pub stdout: String,
    /// Bytes of stdout dropped past the cap.
    pub stdout_dropped: u64,
    /// What the job wrote to stderr (warnings, its log lines) when its code ran to the
    /// end, the first 16 KiB; a job that raised quotes it in `error.stderr_tail`.
    #[serde(default)]
    pub stderr: String,
    /// The seed numpy's and `random`'s generators got (`null` if the job never got one).
    pub seed: Option<u64>,
    /// `on`, or `off` when the gate was switched off for testing.
    pub gate: String,
    /// The worker that ran the job (`null` when it reached none).
    pub worker: Option<WorkerInfo>,
    /// Why the worker was retired after the job (`null` when it was not).
    pub retired: Option<Retirement>,
    /// Milliseconds per step (`null` when the job never reached the executor).
    pub timings_ms: Option<TimingsMs>,
    /// The run record's directory, when one was written.
    pub record: Option<String>,
}

/// The failure part of a report: one shape for every kind of failure.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct ErrorReport {
    /// The status word again (`python_error`, ...), or for an infrastructure error its
    /// [`Error::code`] (`queue_full`, `worker_not_found`, ...).
    pub kind: String,
    /// One line for a person.
    pub message: String,
    /// `python_error`: the exception type.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// `python_error`, `memory_exceeded` (raised inside the code), `timeout` (where it
    /// was stopped): the line in the job's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Same cases as `line`: the traceback of the job's own frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceback: Option<String>,
    /// `python_error`, `memory_exceeded`: what exists and what to write instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// `timeout`: the first line of the innermost loop around `line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_line: Option<u32>,
    /// `python_error`, `crashed`: the tail of the worker's stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// `crashed`: how the worker ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<WorkerExit>,
    /// `timeout`: the deadline, in milliseconds; `memory_exceeded`, `scratch_full`: the
    /// limit (bytes, or files for a `files` scratch limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
    /// `scratch_full`: `bytes` or `files`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub which: Option<ScratchLimit>,
    /// `invalid_output`: the check that failed (`missing`, `not-png`, `blank`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

/// One artifact: its name, type, size and hash; where it was written, or its bytes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct ArtifactReport {
    /// File name in the job's output directory.
    pub name: String,
    /// Media type derived from the checked content.
    pub media_type: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: String,
    /// Where the CLI wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The bytes, base64 (standard alphabet, padded), when embedded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_base64: Option<String>,
    /// What the figure shows (see [`FigureSummary`]), when it was described.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<FigureSummary>,
    /// How the code made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obtained: Option<Obtained>,
    /// The path the code asked for, when it was not a plain name: the file is this
    /// artifact under its base name instead. The job's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// What a table artifact (CSV, workbook) holds: shape, columns, first rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<TablePreview>,
}

/// Time spent in each step, in milliseconds (microsecond resolution).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct TimingsMs {
    /// Waiting for a worker.
    pub queue: f64,
    /// The static gate.
    pub gate: f64,
    /// Staging the inputs.
    pub stage: f64,
    /// Executing the code, measured inside the worker.
    pub exec: f64,
    /// Of `exec`, describing the saved figures.
    #[serde(default)]
    pub describe: f64,
    /// Validating the artifacts.
    pub validate: f64,
    /// From submission to outcome.
    pub total: f64,
    /// The pool's warm-up, when the pool was started for this job (the CLI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_warmup: Option<f64>,
}

/// Milliseconds at microsecond resolution, as the report's `timings_ms` carry them.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

impl ArtifactReport {
    /// Describes `artifact`; `embed` puts its bytes in as base64.
    pub fn new(artifact: &Artifact, embed: bool) -> ArtifactReport {
        ArtifactReport {
            name: artifact.name.clone(),
            media_type: artifact.media_type.clone(),
            bytes: artifact.bytes.len() as u64,
            sha256: sha256_hex(&artifact.bytes),
            path: None,
            data_base64: embed
                .then(|| base64::engine::general_purpose::STANDARD.encode(&artifact.bytes)),
            figure: artifact.figure.clone(),
            obtained: artifact.obtained,
            requested: artifact.requested.clone(),
            table: TablePreview::of(&artifact.name, &artifact.bytes),
        }
    }

    /// The embedded bytes, decoded (`None` when not embedded or not valid base64).
    pub fn data(&self) -> Option<Vec<u8>> {
        let text = self.data_base64.as_ref()?;
        base64::engine::general_purpose::STANDARD.decode(text).ok()
    }
}

impl ErrorReport {
    /// The details of a job's own failure.
    pub fn from_failure(failure: &JobFailure) -> ErrorReport {
        let mut e = ErrorReport {
            kind: failure.status().to_string(),
            message: failure.to_string(),
            ..ErrorReport::default()
        };
        match failure {
            JobFailure::PythonError(p) => e.set_python_error(p),
            JobFailure::MemoryExceeded {
                limit_bytes,
                raised,
            } => {
                if let Some(p) = raised {
                    e.set_python_error(p);
                }
                e.limit = Some(*limit_bytes as f64);
            }
            JobFailure::Timeout { limit, stopped_at } => {
                e.limit = Some(ms(*limit));
                if let Some(at) = stopped_at {
                    e.line = Some(at.line);
                    e.traceback = Some(at.traceback.clone());
                    e.loop_line = at.in_loop.as_ref().map(|(line, _)| *line);
                }
            }
            JobFailure::WorkerCrashed {
                exit, stderr_tail, ..
            } => {
                e.exit = Some(*exit);
                e.stderr_tail = Some(stderr_tail.clone());
            }
            JobFailure::ScratchFull { which, limit } => {
                e.which = Some(*which);
                e.limit = Some(*limit as f64);
            }
            JobFailure::InvalidOutput { check, .. } => e.check = Some(check.clone()),
            JobFailure::Rejected { .. }
            | JobFailure::BadInput(_)
            | JobFailure::Cancelled
            | JobFailure::ProtocolViolation { .. } => {}
        }
        e
    }

    fn set_python_error(&mut self, p: &PythonError) {
        self.message = p.message.clone();
        self.type_name = Some(p.type_name.clone());
        self.line = p.line;
        self.traceback = Some(p.traceback.clone());
        self.stderr_tail = Some(p.stderr_tail.clone());
        self.hint = (!p.hint.is_empty()).then(|| p.hint.clone());
    }

    /// The details of an executor error.
    pub fn from_error(error: &Error) -> ErrorReport {
        ErrorReport::kind_and_message(error.code(), error.to_string())
    }

    /// Only a kind and a message: a failure with no further details.
    fn kind_and_message(kind: &str, message: String) -> ErrorReport {
        ErrorReport {
            kind: kind.to_string(),
            message,
            ..ErrorReport::default()
        }
    }
}

impl Report {
    fn new(kind: ReportKind, status: &str, feedback: String) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            kind,
            status: status.to_string(),
            file: None,
            feedback,
            description: None,
            violations: Vec::new(),
            error: None,
            run: None,
        }
    }

    /// The report of a finished job. `embed_artifacts` puts every artifact's bytes in
    /// as base64 (for transports without files); otherwise only names, sizes and hashes.
    pub fn from_outcome(outcome: &Outcome, embed_artifacts: bool) -> Report {
        let mut report = Report::new(ReportKind::Run, "ok", String::new());
        if let Some(failure) = outcome.failure() {
            report.set_failure(failure);
        }
        report.description = outcome.description();
        let t = &outcome.timings;
        report.run = Some(RunReport {
            artifacts: outcome
                .artifacts()
                .iter()
                .map(|a| ArtifactReport::new(a, embed_artifacts))
                .collect(),
            stdout: outcome.stdout.clone(),
            stdout_dropped: outcome.stdout_dropped,
            stderr: outcome.stderr.clone(),
            seed: Some(outcome.seed),
            gate: if outcome.gate_enabled { "on" } else { "off" }.into(),
            worker: outcome.worker.clone(),
            retired: outcome.retired.clone(),
            timings_ms: Some(TimingsMs {
                queue: ms(t.queue),
                gate: ms(t.gate),
                stage: ms(t.stage),
                exec: ms(t.exec),
                describe: ms(t.describe),
                validate: ms(t.validate),
                total: ms(t.total),
                pool_warmup: None,
            }),
            record: None,
        });
        report
    }

    /// The report of a job that did not run because `run`/`run_async` returned `Err`:
    /// `input_error` for the caller's inputs, `infrastructure_error` otherwise.
    pub fn from_error(error: &Error, gate_enabled: bool) -> Report {
        Report::not_run(
            error.is_input_error(),
            error.code(),
            error.to_string(),
            gate_enabled,
        )
    }

    /// The report of a job that never ran, for a reason a service around the executor
    /// found (a malformed queued request, a job whose consumer kept dying):
    /// `input_error` when the caller is at fault, else `infrastructure_error`; `kind` is
    /// a stable word for [`ErrorReport::kind`].
    pub fn not_run(
        caller_fault: bool,
        kind: &str,
        message: impl Into<String>,
        gate_enabled: bool,
    ) -> Report {
        let status = if caller_fault {
            STATUS_INPUT_ERROR
        } else {
            STATUS_INFRASTRUCTURE_ERROR
        };
        let message = message.into();
        let mut report = Report::new(ReportKind::Run, status, message.clone());
        report.error = Some(ErrorReport::kind_and_message(kind, message));
        report.as_run(gate_enabled)
    }

    /// The report of a gate check: `ok`, `rejected` or `bad_input`.
    pub fn from_check(checked: Result<Verdict, BadInput>, policy: &crate::gate::Policy) -> Self {
        match JobFailure::from_gate(checked, policy) {
            None => Report::new(ReportKind::Check, "ok", String::new()),
            Some(failure) => {
                let mut report = Report::new(ReportKind::Check, failure.status(), String::new());
                report.set_failure(&failure);
                report
            }
        }
    }

    /// Fills in what a report says of a job's own failure.
    fn set_failure(&mut self, failure: &JobFailure) {
        self.status = failure.status().to_string();
        self.feedback = failure.feedback();
        if let JobFailure::Rejected { violations, .. } = failure {
            self.violations = violations.clone();
        }
        self.error = Some(ErrorReport::from_failure(failure));
    }

    /// This report as the report of a run that never reached the executor (refused by
    /// the gate before a pool existed, or an error): no worker, no seed, no timings.
    pub fn as_run(mut self, gate_enabled: bool) -> Report {
        self.kind = ReportKind::Run;
        self.run = Some(RunReport {
            artifacts: Vec::new(),
            stdout: String::new(),
            stdout_dropped: 0,
            stderr: String::new(),
            seed: None,
            gate: if gate_enabled { "on" } else { "off" }.into(),
            worker: None,
            retired: None,
            timings_ms: None,
            record: None,
        });
        self
    }

    /// Sets the run record's directory (a `run` report).
    pub fn set_record(&mut self, dir: String) {
        if let Some(run) = self.run.as_mut() {
            run.record = Some(dir);
        }
    }

    /// Sets the file the code came from.
    pub fn with_file(mut self, file: impl Into<String>) -> Report {
        self.file = Some(file.into());
        self
    }

    /// `true` when the job (or check) succeeded.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

impl Serialize for Outcome {
    /// An outcome serializes as its [`Report`], artifacts embedded: the one JSON shape.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Report::from_outcome(self, true).serialize(serializer)
    }
}
