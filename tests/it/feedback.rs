//! The feedback corpus: realistic model mistakes in `tests/data/broken/`, one per file,
//! each scored by what its feedback must say.
//!
//! Every script starts with a header:
//!
//! ```text
//! # mistake: what the model got wrong
//! # expect: a substring the feedback must contain        (one or more)
//! # forbid: a substring the feedback must not contain     (optional)
//! # timeout: seconds                                      (optional, default 10)
//! # fix: old => new                                       (one or more; `\n` for a newline)
//! ```
//!
//! A script passes when it fails, its feedback contains every `expect` and no `forbid`,
//! and the script with its `fix` applied runs to a figure: so the fix the feedback points
//! at is the one that works. Inputs are `tests/data/broken_inputs/`.
//!
//! The test prints the feedback length per failure kind (median and maximum), the figures
//! quoted when the texts change; `PYWARD_SHOW_FEEDBACK=1` (with `--nocapture`) prints
//! every text.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use common::builder;
use pyward::{Executor, Job, Outcome};

/// Scripts in the corpus: one that vanishes must not pass silently.
const CORPUS_SIZE: usize = 57;

struct Script {
    name: String,
    code: String,
    expect: Vec<String>,
    forbid: Vec<String>,
    fixes: Vec<(String, String)>,
    timeout: Duration,
}

impl Script {
    fn parse(name: String, code: String) -> Script {
        let mut script = Script {
            name,
            code: code.clone(),
            expect: Vec::new(),
            forbid: Vec::new(),
            fixes: Vec::new(),
            timeout: Duration::from_secs(10),
        };
        let unescape = |s: &str| s.replace("\\n", "\n");
        for line in code.lines().take_while(|l| l.starts_with('#')) {
            let Some((key, value)) = line[1..].trim().split_once(':') else {
                continue;
            };
            let value = value.trim();
            match key {
                "expect" => script.expect.push(value.to_string()),
                "forbid" => script.forbid.push(value.to_string()),
                "timeout" => script.timeout = Duration::from_secs(value.parse().unwrap()),
                "fix" => {
                    let (old, new) = value
                        .split_once(" => ")
                        .unwrap_or_else(|| panic!("{}: fix without ' => '", script.name));
                    script.fixes.push((unescape(old), unescape(new)));
                }
                "mistake" => {}
                other => panic!("{}: unknown header key {other:?}", script.name),
            }
        }
        assert!(!script.expect.is_empty(), "{}: no expect", script.name);
        assert!(!script.fixes.is_empty(), "{}: no fix", script.name);
        script
    }

    /// The code with every fix applied to its body (below the header); each fix must
    /// apply.
    fn fixed(&self) -> String {
        let header_end = self
            .code
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| l.len() + 1)
            .sum::<usize>();
        let (header, body) = self.code.split_at(header_end);
        let mut body = body.to_string();
        for (old, new) in &self.fixes {
            assert!(body.contains(old), "{}: fix {old:?} not found", self.name);
            body = body.replacen(old, new, 1);
        }
        format!("{header}{body}")
    }

    fn job(&self, code: &str) -> Job {
        Job::new(code)
            .src_dir(data_dir().join("broken_inputs"))
            .timeout(self.timeout)
            .seed(7)
    }
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn scripts() -> Vec<Script> {
    let dir = data_dir().join("broken");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            Script::parse(name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Runs `jobs` on two client threads; outcomes in order.
fn run_all(exec: &Executor, jobs: Vec<Job>) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let outcome = exec.run(job.clone()).expect("executor infrastructure");
                results.lock().unwrap()[i] = Some(outcome);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|o| o.expect("every job ran"))
        .collect()
}

/// What is wrong with one script's feedback, if anything.
fn score(script: &Script, broken: &Outcome, fixed: &Outcome) -> Result<(), String> {
    let mut problems = Vec::new();
    match broken.feedback() {
        None => problems.push("the broken script succeeded".to_string()),
        Some(text) => {
            for want in &script.expect {
                if !text.contains(want.as_str()) {
                    problems.push(format!("missing {want:?}"));
                }
            }
            for unwanted in &script.forbid {
                if text.contains(unwanted.as_str()) {
                    problems.push(format!("contains {unwanted:?}"));
                }
            }
        }
    }
    if let Some(text) = fixed.feedback() {
        problems.push(format!("the fixed script failed:\n{text}"));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} ({}): {}\n--- feedback ---\n{}\n",
        script.name,
        broken.status(),
        problems.join("; "),
        broken.feedback().unwrap_or_default()
    ))
}

#[test]
fn every_broken_script_gets_feedback_that_names_its_fix() {
    let scripts = scripts();
    assert_eq!(
        scripts.len(),
        CORPUS_SIZE,
        "corpus size changed: {:?}",
        scripts.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let exec = builder().workers(2).preload_pandas(true).build().unwrap();
    let mut jobs: Vec<Job> = scripts.iter().map(|s| s.job(&s.code)).collect();
    jobs.extend(scripts.iter().map(|s| s.job(&s.fixed())));
    let outcomes = run_all(&exec, jobs);
    let (broken, fixed) = outcomes.split_at(scripts.len());

    let mut lengths: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut failures = Vec::new();
    for ((script, broken), fixed) in scripts.iter().zip(broken).zip(fixed) {
        let text = broken.feedback().unwrap_or_default();
        lengths
            .entry(broken.status())
            .or_default()
            .push(text.chars().count());
        if std::env::var_os("PYWARD_SHOW_FEEDBACK").is_some() {
            println!("=== {} ({})\n{text}", script.name, broken.status());
        }
        if let Err(report) = score(script, broken, fixed) {
            failures.push(report);
        }
    }
    println!("feedback length in characters, per failure kind:");
    for (kind, mut n) in lengths {
        n.sort_unstable();
        println!(
            "  {kind:16} {:3} scripts  median {:5}  max {:5}",
            n.len(),
            n[n.len() / 2],
            n[n.len() - 1]
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} scripts:\n\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n")
    );
}
