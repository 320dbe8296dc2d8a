//! Helpers of the hostile-worker tests (`tests/it/hostile_worker.rs`,
//! `cli/tests/hostile_worker.rs`), included by path: where the hostile worker program is,
//! canary names and paths that climb to them, and the checks of what a host wrote and said.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The hostile worker (`tests/hostile_worker.rs`, an example of the root package) in the
/// cargo profile directory `profile` (`target/debug`).
pub fn hostile_program(profile: &Path) -> PathBuf {
    let program = profile.join("examples/hostile_worker");
    assert!(
        program.is_file(),
        "{program:?}: a plain `cargo test --workspace` builds it (alone: cargo build -p pyward \
         --example hostile_worker)"
    );
    program
}

/// A file name for a canary, unique in this process (tests run in parallel): a `.csv`
/// (the hostile worker sends CSV text for it).
pub fn canary_name(tag: &str) -> String {
    canary_file(tag, "csv")
}

/// A canary's name with the extension `ext` (`png`: the hostile worker sends a PNG).
pub fn canary_file(tag: &str, ext: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "canary-{tag}-{}-{}.{ext}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A relative name that climbs to the root from any directory less than 40 deep, then
/// descends to `target`: written under any directory, it lands on `target`.
pub fn climbing_to(target: &Path) -> String {
    let rest = target.to_str().unwrap().trim_start_matches('/');
    format!("{}{rest}", "../".repeat(40))
}

/// Every file below `dir` whose name is `name`.
pub fn files_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path.clone());
            }
            if e.file_name().to_str() == Some(name) {
                found.push(path);
            }
        }
    }
    found
}

/// Whether `text` names an internal job id ("job 1", "job #2", "job_id: 3", "job-4").
pub fn names_a_job_id(text: &str) -> bool {
    let lower = text.to_lowercase();
    let separators = [' ', '#', '_', '-', ':', '='];
    lower.match_indices("job").any(|(at, _)| {
        let rest = lower[at + 3..].trim_start_matches(separators);
        let rest = rest.strip_prefix("id").unwrap_or(rest);
        let rest = rest.trim_start_matches(separators);
        rest.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[test]
fn job_ids_are_recognised() {
    for named in [
        "for job 1",
        "Job #2 broke",
        "job_id: 3",
        "(job-4)",
        "job id=5",
    ] {
        assert!(names_a_job_id(named), "{named}");
    }
    for clean in [
        "jobs_before: 1",
        "the job's answer",
        "\"job\": {}",
        "job  answered",
    ] {
        assert!(!names_a_job_id(clean), "{clean}");
    }
}
