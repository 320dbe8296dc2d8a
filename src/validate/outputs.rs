//! Which checks a finished job's outputs go through, in one place: the size cap, a
//! refused required file, presence and format, what the figure notes say (nothing
//! drawn, a blank figure), then the blank-pixel check and the job's own validators.

use std::path::Path;
use std::sync::Arc;

use super::{invalid, validate, NotBlank, ValidationContext, Validator};
use crate::figure::FigureNotes;
use crate::outcome::{Artifact, JobFailure};

/// What a job asks of its outputs, from the job and the pool's caps.
pub(crate) struct OutputRules<'a> {
    /// The file name `OUT` points at.
    pub out: &'a str,
    /// Files the job must write besides `OUT`.
    pub required: &'a [String],
    /// Largest artifact kept, in bytes.
    pub max_bytes: u64,
    /// Whether an empty or single-colour figure fails the job.
    pub blank_check: bool,
    /// The job's own checks.
    pub validators: &'a [Arc<dyn Validator>],
    /// Where the job's inputs are staged (for checks against an input table).
    pub inputs: &'a Path,
}

/// Runs every check on a job that ran to the end. Artifacts over the size cap are
/// dropped (the worker only saw the pixels of PNGs the host encoded), as are those the
/// worker already `refused`; `notes` are what the worker saw of the job's figures.
pub(crate) fn check_outputs(
    rules: &OutputRules,
    artifacts: &mut Vec<Artifact>,
    refused: &[String],
    notes: &FigureNotes,
) -> Result<(), JobFailure> {
    let mut refused = refused.to_vec();
    artifacts.retain(|a| {
        let fits = a.bytes.len() as u64 <= rules.max_bytes;
        if !fits {
            refused.push(a.name.clone());
        }
        fits
    });
    check_refused(&refused, rules.out, rules.required)
        .and_then(|()| validate(artifacts, rules.required))
        .map_err(|f| explain_missing(f, notes, rules.out))
        .and_then(|()| check_figures(rules, notes))
        .and_then(|()| run_validators(rules, artifacts))
}

/// The blank-pixel check and the job's own validators, while its inputs are still
/// staged.
fn run_validators(rules: &OutputRules, artifacts: &[Artifact]) -> Result<(), JobFailure> {
    let ctx = ValidationContext {
        artifacts,
        inputs: rules.inputs,
    };
    let blank =
        (rules.blank_check && rules.out.to_ascii_lowercase().ends_with(".png")).then(|| NotBlank {
            artifact: rules.out.to_string(),
        });
    let all = blank
        .iter()
        .map(|b| b as &dyn Validator)
        .chain(rules.validators.iter().map(|v| v.as_ref()));
    for v in all {
        v.check(&ctx).map_err(|detail| invalid(&v.id(), detail))?;
    }
    Ok(())
}

/// A missing `OUT` explained by what the job did instead (saved elsewhere, `show()`,
/// drew without saving).
fn explain_missing(failure: JobFailure, notes: &FigureNotes, out: &str) -> JobFailure {
    match failure {
        JobFailure::InvalidOutput { check, detail } if check == "missing" => {
            let detail = match notes.why_missing(out) {
                Some(why) => format!("{out} was not written: {why}"),
                None => detail,
            };
            JobFailure::InvalidOutput { check, detail }
        }
        other => other,
    }
}

/// The figure `OUT` shows nothing: nothing drawn, drawn on another figure, or every
/// value of a series NaN (unless the job accepts a blank figure).
fn check_figures(rules: &OutputRules, notes: &FigureNotes) -> Result<(), JobFailure> {
    if !rules.blank_check {
        return Ok(());
    }
    match notes.problem(rules.out) {
        Some((check, detail)) => Err(invalid(check, detail)),
        None => Ok(()),
    }
}

/// A refused artifact (over the count or size cap) that the job was required to write
/// is an invalid output, not a missing one.
fn check_refused(refused: &[String], out: &str, required: &[String]) -> Result<(), JobFailure> {
    match refused.iter().find(|r| *r == out || required.contains(r)) {
        Some(name) => Err(JobFailure::InvalidOutput {
            check: "too-large".into(),
            detail: format!("{name} exceeds the artifact size or count cap"),
        }),
        None => Ok(()),
    }
}
