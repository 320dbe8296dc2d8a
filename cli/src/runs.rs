//! `pyward replay` and `pyward runs`: the recorded runs, run again through the job
//! service ([`crate::service`]) or listed.

use std::path::Path;
use std::sync::Arc;

use pyward::record;

use crate::exit::{EXIT_INFRA, EXIT_JOB_FAILED, EXIT_USAGE};
use crate::service::{self, Door, Service};
use crate::terminal::{say, tell};

pub fn replay(run_dir: &Path) -> u8 {
    // Each attempt runs through the job service, as a replay: not recorded again.
    let service = Service::new(None, Arc::new(Quiet));
    let id = run_dir.display().to_string();
    let replayed = record::replay_with(run_dir, |executor, job| {
        let request = service::Request::new(job, Door::Replay, id.as_str());
        service
            .run_blocking(executor, request)
            .map(|done| done.outcome)
    });
    let replay = match replayed {
        Ok(r) => r,
        Err(record::ReplayRunError::Refused(record::ReplayError::Record(e))) => {
            tell!("pyward: {}: {e}", run_dir.display());
            return EXIT_USAGE;
        }
        Err(record::ReplayRunError::Refused(e)) => {
            say!("refused: {e}");
            return EXIT_JOB_FAILED;
        }
        Err(e) => {
            tell!("pyward: {e}");
            return EXIT_INFRA;
        }
    };
    for (i, attempt) in replay.attempts.iter().enumerate() {
        let same = attempt.status == attempt.recorded_status;
        say!(
            "attempt {}: {} (recorded {}){}",
            i + 1,
            attempt.status,
            attempt.recorded_status,
            if same { "" } else { "  DIFFERENT" }
        );
        for a in &attempt.artifacts {
            match (&a.recorded_sha256, a.verdict) {
                (_, record::ArtifactMatch::New) => {
                    say!("  {}: NEW (not in the record)", a.name)
                }
                (Some(sha), verdict) => {
                    let word = match verdict {
                        record::ArtifactMatch::Identical => "identical",
                        record::ArtifactMatch::Different => "DIFFERENT",
                        _ => "MISSING",
                    };
                    say!(
                        "  {}: {word} (sha256 {})",
                        a.name,
                        &sha[..16.min(sha.len())]
                    );
                }
                (None, _) => {}
            }
        }
    }
    if replay.identical() {
        say!("replay: identical");
        0
    } else {
        say!("replay: different");
        EXIT_JOB_FAILED
    }
}

pub fn list_runs(dir: &Path) -> u8 {
    let entries = match record::run_dirs(dir) {
        Ok(runs) => runs,
        Err(e) => {
            tell!("pyward: {}: {e}", dir.display());
            return EXIT_USAGE;
        }
    };
    for path in entries {
        match record::load(&path) {
            Ok(r) => {
                let statuses: Vec<&str> = r.attempts.iter().map(|a| a.status.as_str()).collect();
                let artifacts: Vec<String> = r
                    .attempts
                    .last()
                    .map(|a| {
                        a.artifacts
                            .iter()
                            .map(|x| format!("{} ({} B)", x.name, x.bytes))
                            .collect()
                    })
                    .unwrap_or_default();
                say!(
                    "{}  attempts {}  [{}]  {}",
                    path.display(),
                    r.attempts.len(),
                    statuses.join(" -> "),
                    artifacts.join(", ")
                );
            }
            Err(e) => say!("{}  unreadable: {e}", path.display()),
        }
    }
    0
}

/// A replay writes no record: nothing to say.
struct Quiet;

impl service::Observer for Quiet {
    fn record_failed(&self, _message: &str) {}
}
