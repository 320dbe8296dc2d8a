//! Which checks a finished job's outputs go through, in one place: the size cap, a
//! refused required file, presence and format, what the figure notes say (nothing
//! drawn, a blank figure), then the blank-pixel check and the job's own validators.

use std::path::Path;
use std::sync::Arc;

use super::{invalid, validate, NotBlank, ValidationContext, Validator};
use crate::figure::FigureNotes;
use crate::outcome::{is_figure, main_figure, Artifact, JobFailure};
use crate::protocol::ArtifactBound;

/// What a job asks of its outputs, from the job and the pool's caps.
pub(crate) struct OutputRules<'a> {
    /// The file name `OUT` points at.
    pub out: &'a str,
    /// Files the job must write besides `OUT`.
    pub required: &'a [String],
    /// Largest artifact kept, in bytes.
    pub max_bytes: u64,
    /// Most artifacts kept.
    pub max_artifacts: usize,
    /// Whether an empty or single-colour figure fails the job.
    pub blank_check: bool,
    /// The job's own checks.
    pub validators: &'a [Arc<dyn Validator>],
    /// Where the job's inputs are staged (for checks against an input table).
    pub inputs: &'a Path,
}

/// Runs every check on a job that ran to the end. Artifacts over the size cap are
/// dropped (the worker only saw the pixels of PNGs the host encoded), as are those the
/// worker already `refused`; `notes` are what the worker saw of the job's figures;
/// `bound` the artifact bound the worker saw the job hit.
///
/// `OUT` stands for the job's figure: the artifact of that name, else the one figure
/// the job made whatever its name ([`main_figure`]). A job that made other files and
/// no figure, or several figures none of them `OUT`, passes without one; a job that
/// made no file at all is told why (`missing`).
pub(crate) fn check_outputs(
    rules: &OutputRules,
    artifacts: &mut Vec<Artifact>,
    refused: &[String],
    notes: &FigureNotes,
    bound: Option<ArtifactBound>,
) -> Result<(), JobFailure> {
    if let Some(bound) = bound {
        return Err(bound_failure(bound, rules.max_artifacts, rules.max_bytes));
    }
    let mut refused = refused.to_vec();
    artifacts.retain(|a| {
        let fits = a.bytes.len() as u64 <= rules.max_bytes;
        if !fits {
            refused.push(a.name.clone());
        }
        fits
    });
    if !refused.is_empty() {
        let bound = if artifacts.len() + refused.len() > rules.max_artifacts {
            ArtifactBound::MaxArtifacts
        } else {
            ArtifactBound::MaxArtifactBytes
        };
        return Err(bound_failure(bound, rules.max_artifacts, rules.max_bytes));
    }
    let out = main_figure(rules.out, artifacts).map(|a| a.name.clone());
    let required: Vec<String> = rules
        .required
        .iter()
        .filter(|r| *r != rules.out || out.is_some() || artifacts.is_empty())
        .map(|r| match &out {
            Some(out) if r == rules.out => out.clone(),
            _ => r.clone(),
        })
        .collect();
    let out = out.as_deref().unwrap_or(rules.out);
    validate(artifacts, &required)
        .map_err(|f| explain_missing(f, notes, rules.out))
        .and_then(|()| check_figures(rules, notes, artifacts))
        .and_then(|()| run_validators(rules, out, artifacts))
}

/// The failure of a job that wrote past a bound on its artifacts (whatever the code
/// made of the error it met there).
pub(crate) fn bound_failure(
    bound: ArtifactBound,
    max_artifacts: usize,
    max_bytes: u64,
) -> JobFailure {
    let detail = match bound {
        ArtifactBound::MaxArtifacts => format!(
            "the code wrote more than {} files, the most a job returns (max_artifacts); \
             write fewer files: several plots fit in one figure with plt.subplots",
            max_artifacts
        ),
        ArtifactBound::MaxArtifactBytes => format!(
            "a file the code wrote is larger than {} bytes, the most one artifact may \
             have (max_artifact_bytes); lower the dpi or the figure size, or write less data",
            max_bytes
        ),
    };
    invalid(bound.as_str(), detail)
}

/// The blank-pixel check and the job's own validators, while its inputs are still
/// staged. `out` is the artifact standing for `OUT`.
fn run_validators(
    rules: &OutputRules,
    out: &str,
    artifacts: &[Artifact],
) -> Result<(), JobFailure> {
    let ctx = ValidationContext {
        artifacts,
        inputs: rules.inputs,
    };
    let present = artifacts.iter().any(|a| a.name == out);
    let blank =
        (rules.blank_check && present && out.to_ascii_lowercase().ends_with(".png")).then(|| {
            NotBlank {
                artifact: out.to_string(),
            }
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

/// A figure the job returns shows nothing: nothing drawn, drawn on another figure, or
/// every value of a series NaN (unless the job accepts a blank figure).
fn check_figures(
    rules: &OutputRules,
    notes: &FigureNotes,
    artifacts: &[Artifact],
) -> Result<(), JobFailure> {
    if !rules.blank_check {
        return Ok(());
    }
    for a in artifacts.iter().filter(|a| is_figure(&a.name)) {
        if let Some((check, detail)) = notes.problem(&a.name) {
            return Err(invalid(check, detail));
        }
    }
    Ok(())
}
