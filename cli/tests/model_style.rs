//! Code as models write it (issue 38) through every door: every script of the
//! model-style corpus (tests/data/model_style) that plain Python makes files of, run
//! unmodified through `pyward run`, HTTP (`pyward serve`) and the queue (`XADD`, a
//! `pyward serve --queue` consumer), comes back `ok` with the artifact names plain
//! Python writes, as through the library (`tests/it/model_style.rs`, which also
//! compares the bytes).

#[path = "../../tests/common/processes.rs"]
mod processes;
#[path = "../../tests/common/pyward_serve.rs"]
mod pyward_serve;
#[path = "../../tests/common/redis_server.rs"]
mod redis_server;
#[path = "../../tests/common/schema.rs"]
mod schema;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use processes::wait_until;
use pyward_serve::{agent, Serve};
use redis_server::{Fsync, Redis};
use schema::assert_valid_report;
use serde_json::{json, Map, Value};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/model_style")
}

/// A script of the corpus: (name, code, the names plain Python writes).
type Script = (String, String, BTreeSet<String>);

/// Every script of the corpus that plain Python turns into files.
fn corpus() -> Vec<Script> {
    let listing = std::fs::read_to_string(corpus_dir().join("expected.tsv")).unwrap();
    let all: Vec<_> = listing
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|line| {
            let (name, names) = line.split_once('\t').unwrap();
            (names != "?").then(|| {
                let code =
                    std::fs::read_to_string(corpus_dir().join("scripts").join(name)).unwrap();
                let names = names.split(' ').filter(|n| !n.is_empty());
                (name.to_string(), code, names.map(String::from).collect())
            })
        })
        .collect();
    assert!(all.len() >= 100, "{} scripts", all.len());
    all
}

/// The corpus' inputs as the JSON request's `inputs` (name -> base64).
fn inputs_json() -> Value {
    let mut inputs = Map::new();
    for entry in std::fs::read_dir(corpus_dir().join("inputs")).unwrap() {
        let entry = entry.unwrap();
        let bytes = std::fs::read(entry.path()).unwrap();
        inputs.insert(
            entry.file_name().to_str().unwrap().to_string(),
            base64::engine::general_purpose::STANDARD
                .encode(bytes)
                .into(),
        );
    }
    Value::Object(inputs)
}

/// What is wrong with a report of `name`: not ok, or missing one of `expected`.
fn problem(name: &str, report: &Value, expected: &BTreeSet<String>) -> Option<String> {
    let got: BTreeSet<String> = report["artifacts"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|a| a["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (report["status"] != "ok" || !got.is_superset(expected)).then(|| {
        format!(
            "{name}: {} {:?} (plain Python {expected:?}): {}",
            report["status"],
            got,
            report["feedback"].as_str().unwrap_or("")
        )
    })
}

/// What one `pyward run --json --out DIR/ SCRIPT...` makes of `batch`: the problems of
/// each script, if any. Scripts of one run that save under one name each keep their
/// file (the later one's renamed): each report says where its files went.
fn run_batch(dir: &std::path::Path, k: usize, batch: &[&Script]) -> Vec<String> {
    let scripts = dir.join(format!("batch{k}"));
    std::fs::create_dir(&scripts).unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_pyward"));
    run.args(["run", "--json", "--src"])
        .arg(corpus_dir().join("inputs"))
        .arg("--out")
        .arg(format!("{}/", dir.join(format!("out{k}")).display()));
    for (name, code, _) in batch {
        let script = scripts.join(name);
        std::fs::write(&script, code).unwrap();
        run.arg(script);
    }
    let run = run.output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    // One report a script, in the order of the command line.
    let reports: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    if reports.len() != batch.len() {
        return vec![format!(
            "batch {k}: {} reports for {} scripts: {}",
            reports.len(),
            batch.len(),
            String::from_utf8_lossy(&run.stderr)
        )];
    }
    let mut problems = Vec::new();
    for ((name, _, expected), report) in batch.iter().zip(&reports) {
        assert_valid_report(report);
        problems.extend(problem(name, report, expected));
        let artifacts = report["artifacts"].as_array().cloned().unwrap_or_default();
        for file in expected {
            let written = artifacts.iter().any(|a| {
                a["name"] == file.as_str()
                    && a["path"]
                        .as_str()
                        .is_some_and(|p| std::path::Path::new(p).is_file())
            });
            if !written {
                problems.push(format!("{name}: {file} not written to --out DIR/"));
            }
        }
    }
    problems
}

#[test]
fn the_corpus_through_pyward_run_writes_every_file_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus();
    // Two `pyward run`s of half the corpus each (each its own pool), side by side.
    let halves: Vec<Vec<&Script>> = (0..2)
        .map(|k| corpus.iter().skip(k).step_by(2).collect())
        .collect();
    let problems: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = halves
            .iter()
            .enumerate()
            .map(|(k, half)| {
                let dir = dir.path();
                scope.spawn(move || run_batch(dir, k, half))
            })
            .collect();
        runs.into_iter().flat_map(|r| r.join().unwrap()).collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("pyward run: {} scripts ok", corpus.len());
}

#[test]
fn the_corpus_over_http_answers_every_file_under_its_name() {
    let server = Serve::start(&[]);
    let inputs = inputs_json();
    let corpus = corpus();
    // Two clients at a time, as the pool has two workers.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let problems = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let agent = agent();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((name, code, expected)) = corpus.get(i) else {
                        break;
                    };
                    let mut answer = agent
                        .post(&format!("{}/v1/jobs", server.url))
                        .header("content-type", "application/json")
                        .send(json!({"code": code, "inputs": inputs}).to_string())
                        .unwrap();
                    let body = answer.body_mut().read_to_string().unwrap();
                    let report: Value = serde_json::from_str(&body).unwrap();
                    assert_valid_report(&report);
                    let found = problem(name, &report, expected);
                    problems.lock().unwrap().extend(found);
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("HTTP: {} scripts ok", corpus.len());
}

#[test]
fn the_corpus_through_the_queue_answers_every_file_under_its_name() {
    let redis = Redis::start(Fsync::Always);
    let _consumer = Serve::start(&["--queue", &redis.url(), "--queue-stream", "corpus"]);
    let inputs = inputs_json();
    let mut con = redis.connect().unwrap();
    let corpus = corpus();
    for (i, (_, code, _)) in corpus.iter().enumerate() {
        let request = json!({"code": code, "inputs": inputs}).to_string();
        let _: String = redis::cmd("XADD")
            .arg("corpus")
            .arg("*")
            .arg("job")
            .arg(request)
            .arg("id")
            .arg(format!("job-{i}"))
            .query(&mut con)
            .unwrap();
    }
    let result = |i: usize| -> Option<Value> {
        let text: Option<String> =
            redis.cmd(redis::cmd("GET").arg(format!("corpus:result:job-{i}")));
        text.map(|t| serde_json::from_str(&t).unwrap())
    };
    let all = || (0..corpus.len()).all(|i| result(i).is_some());
    assert!(
        wait_until(Duration::from_secs(600), all),
        "not every job answered"
    );
    let mut problems = Vec::new();
    for (i, (name, _, expected)) in corpus.iter().enumerate() {
        let report = result(i).unwrap();
        assert_valid_report(&report);
        problems.extend(problem(name, &report, expected));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("queue: {} scripts ok", corpus.len());
}
