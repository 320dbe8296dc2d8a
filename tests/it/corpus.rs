//! The legitimate corpus end to end: every script in `tests/data/legit/` (realistic
//! plotting and data code that the static gate accepts) must run through a real executor
//! — gate, guarded runtime, audit hook, kernel sandbox, watchdog, validation — and produce
//! its figure. A failure here is a false positive of one of those layers, so every script
//! runs before anything is asserted, and each failure is reported with the layer that
//! refused it and the job's feedback.
//!
//! Inputs read through `srcpath()` live in `tests/data/legit_inputs/`, written by
//! `tests/data/make_legit_inputs.py`.

use crate::common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{builder, legit_corpus, png_size};
use pyward::{Job, JobFailure, Outcome};

/// Number of scripts in the corpus: a script that vanishes must not pass silently.
const CORPUS_SIZE: usize = 28;

/// What a script must print (a substring of stdout), where its output is deterministic.
const STDOUT_EXPECTED: &[(&str, &str)] = &[
    ("04_class_plotter.py", "ScatterPlotter('Random points')"),
    // data, gaps, left, measurements, right and sales.
    ("10_listdir_many.py", "plotted 6 files"),
    ("19_collections_counts.py", "('brown', 'dog')"),
    ("22_generator_walrus.py", "largest gap 14"),
    ("24_staticmethod_property.py", "True"),
    ("27_merge_melt.py", "count"),
];

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The file name `OUT` must have: a script saving a PDF through `PdfPages(OUT)` gets a
/// `.pdf` OUT, every other one the default PNG.
fn out_name(code: &str) -> &'static str {
    if code.contains("PdfPages(OUT)") {
        "figure.pdf"
    } else {
        "figure.png"
    }
}

/// Which layer produced a failure, decided from its type and its message's wording.
fn layer(failure: &JobFailure) -> String {
    match failure {
        JobFailure::Rejected { violations, .. } => format!(
            "gate (src/gate/): {}",
            violations
                .iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        JobFailure::BadInput(b) => format!("gate input checks (src/gate/): {b:?}"),
        JobFailure::Timeout { limit, .. } => format!("watchdog: timed out after {limit:?}"),
        JobFailure::MemoryExceeded { limit_bytes, .. } => {
            format!("watchdog/rlimits: memory over {limit_bytes} bytes")
        }
        JobFailure::WorkerCrashed { exit, detail, .. } if exit.signal_name() == Some("SIGSYS") => {
            format!("seccomp kill (src/sandbox/seccomp.rs): {exit}; {detail}")
        }
        JobFailure::WorkerCrashed { exit, detail, .. } => {
            format!("worker crashed: {exit}; {detail}")
        }
        JobFailure::InvalidOutput { check, detail } => {
            format!("output validation (src/validate.rs): {check}: {detail}")
        }
        JobFailure::ScratchFull { which, limit } => {
            format!("scratch tmpfs (src/sandbox/scratch.rs): {which:?} limit {limit}")
        }
        JobFailure::PythonError(e) => {
            let m = &e.message;
            let t = e.type_name.as_str();
            let what = if m.contains("[Errno 13]") {
                "kernel sandbox: Landlock EACCES (src/sandbox/landlock.rs)"
            } else if m.contains("[Errno 1]") {
                "kernel sandbox: seccomp deny filter EPERM (src/sandbox/seccomp.rs)"
            } else if m.contains("[Errno 38]") {
                "kernel sandbox: seccomp allow filter ENOSYS (src/sandbox/seccomp.rs)"
            } else if m.contains("[Errno 24]") || t == "MemoryError" {
                "kernel sandbox: rlimits (src/sandbox/rlimits.rs)"
            } else if m.contains("[Errno") {
                "OS error (kernel sandbox?)"
            } else if t == "PermissionError" && m.contains("is not allowed in this sandbox") {
                "PEP 578 audit hook (src/worker/audit.rs)"
            } else if (t == "ImportError" || t == "ModuleNotFoundError")
                && m.contains("not allowed in this sandbox")
            {
                "runtime guarded import (python/prelude/module_views.py _guarded_import)"
            } else if t == "AttributeError"
                && (m.contains("not available in this sandbox") || m.contains("read-only"))
            {
                "runtime module proxy (python/prelude/module_views.py _ModuleProxy)"
            } else if t == "PermissionError" || t == "FileNotFoundError" {
                "runtime input helpers (python/prelude/job_paths.py srcpath/listdir)"
            } else if t == "NameError" {
                "runtime namespace / curated builtins (python/prelude/warm_up.py)"
            } else {
                "python error (the script itself, or the curated runtime)"
            };
            format!("{what}: {t}: {m}")
        }
        // Cancelled (no corpus job is cancelled) and failures added later.
        other => format!("{}: {other}", other.status()),
    }
}

/// Checks one outcome; `Err` carries the whole report for a failing script.
fn check(name: &str, code: &str, outcome: &Outcome) -> Result<(), String> {
    let artifacts = match &outcome.result {
        Ok(artifacts) => artifacts,
        Err(f) => {
            let stderr = match f {
                JobFailure::PythonError(e) => e.stderr_tail.as_str(),
                JobFailure::WorkerCrashed { stderr_tail, .. } => stderr_tail.as_str(),
                _ => "",
            };
            return Err(format!(
                "{name}: {}\n  layer: {}\n  feedback:\n{}\n  stderr tail:\n{}\n  stdout:\n{}",
                f.status(),
                layer(f),
                indent(&f.feedback()),
                indent(stderr),
                indent(&outcome.stdout)
            ));
        }
    };
    let out = out_name(code);
    let Some(art) = artifacts.iter().find(|a| a.name == out) else {
        let names: Vec<_> = artifacts.iter().map(|a| &a.name).collect();
        return Err(format!("{name}: ok but no {out} among {names:?}"));
    };
    if out.ends_with(".pdf") {
        if !art.bytes.starts_with(b"%PDF-") || art.media_type != "application/pdf" {
            return Err(format!("{name}: {out} is not a PDF ({})", art.media_type));
        }
    } else {
        let (w, h) = png_size(&art.bytes);
        if art.media_type != "image/png" || w < 100 || h < 100 {
            return Err(format!(
                "{name}: {out} is {} {w}x{h}, expected a real PNG figure",
                art.media_type
            ));
        }
    }
    if let Some((_, want)) = STDOUT_EXPECTED.iter().find(|(n, _)| *n == name) {
        if !outcome.stdout.contains(want) {
            return Err(format!(
                "{name}: stdout lacks {want:?}:\n{}",
                indent(&outcome.stdout)
            ));
        }
    }
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_legit_script_runs_end_to_end() {
    let inputs = data_dir().join("legit_inputs");
    assert!(
        inputs.join("recording.mat").is_file(),
        "run .venv/bin/python tests/data/make_legit_inputs.py"
    );
    let scripts = legit_corpus();
    assert_eq!(
        scripts.len(),
        CORPUS_SIZE,
        "corpus size changed: {:?}",
        scripts.iter().map(|s| &s.0).collect::<Vec<_>>()
    );

    // A shared warm pool, as in production. What works in a worker can depend on what
    // earlier jobs left cached in it (numpy caches its lazy imports once any caller
    // succeeded), so a false positive can hide behind an earlier script on the same
    // worker; `.max_jobs_per_worker(1)` gives every script a fresh worker (what the first
    // job after every restart sees) at ~3x the wall time (~30-50 s instead of ~10 s).
    let started = Instant::now();
    let exec = builder()
        .workers(2)
        .preload_pandas(true)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let warm = started.elapsed();

    // Two clients feed the two workers; results land in corpus order.
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> =
        Mutex::new((0..scripts.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, code)) = scripts.get(i) else {
                    break;
                };
                let job = Job::new(code.as_str())
                    .src_dir(&inputs)
                    .out_name(out_name(code))
                    .seed(1234);
                let outcome = exec.run(job).expect("executor infrastructure");
                results.lock().unwrap()[i] = Some(outcome);
            });
        }
    });
    let results = results.into_inner().unwrap();

    let mut failures = Vec::new();
    println!("corpus: {} scripts, warm-up {warm:.1?}", scripts.len());
    for ((name, code), outcome) in scripts.iter().zip(&results) {
        let outcome = outcome.as_ref().expect("every script ran");
        let verdict = check(name, code, outcome);
        println!(
            "  {name:32} {:15} exec {:7.1} ms  total {:7.1} ms{}",
            outcome.status(),
            outcome.timings.exec.as_secs_f64() * 1e3,
            outcome.timings.total.as_secs_f64() * 1e3,
            match (&verdict, outcome.failure()) {
                (_, Some(f)) => format!("  <- {}", layer(f)),
                (Err(_), None) => "  <- wrong output".to_string(),
                (Ok(()), None) => String::new(),
            }
        );
        if let Err(report) = verdict {
            failures.push(report);
        }
    }
    println!("corpus wall time {:.1?}", started.elapsed());
    assert!(
        failures.is_empty(),
        "{} of {} legitimate scripts failed:\n\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n\n")
    );
}
