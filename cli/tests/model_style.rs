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

/// Every script of the corpus that plain Python turns into files: (name, code, the
/// names plain Python writes).
fn corpus() -> Vec<(String, String, BTreeSet<String>)> {
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

/// What `pyward run --json --out DIR/` makes of one script: its problems, if any.
fn run_one(
    dir: &std::path::Path,
    i: usize,
    name: &str,
    code: &str,
    expected: &BTreeSet<String>,
) -> Vec<String> {
    let script = dir.join(name);
    std::fs::write(&script, code).unwrap();
    let out = dir.join(format!("out{i}"));
    let run = Command::new(env!("CARGO_BIN_EXE_pyward"))
        .args(["run", "--json", "--src"])
        .arg(corpus_dir().join("inputs"))
        .arg("--out")
        .arg(format!("{}/", out.display()))
        .arg(&script)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let Some(report) = stdout
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
    else {
        return vec![format!(
            "{name}: no report: {}",
            String::from_utf8_lossy(&run.stderr)
        )];
    };
    assert_valid_report(&report);
    let mut problems: Vec<String> = problem(name, &report, expected).into_iter().collect();
    for file in expected {
        if !out.join(file).is_file() {
            problems.push(format!("{name}: {file} not written to --out DIR/"));
        }
    }
    problems
}

#[test]
fn the_corpus_through_pyward_run_writes_every_file_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus();
    // One `pyward run` (its own pool) per script, two at a time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let problems = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, code, expected)) = corpus.get(i) else {
                    break;
                };
                let found = run_one(dir.path(), i, name, code, expected);
                problems.lock().unwrap().extend(found);
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("pyward run: {} scripts ok", corpus.len());
}

#[test]
fn the_corpus_over_http_answers_every_file_under_its_name() {
    let server = Serve::start(&[]);
    let inputs = inputs_json();
    let agent = agent();
    let mut problems = Vec::new();
    let corpus = corpus();
    for (name, code, expected) in &corpus {
        let mut answer = agent
            .post(&format!("{}/v1/jobs", server.url))
            .header("content-type", "application/json")
            .send(json!({"code": code, "inputs": inputs}).to_string())
            .unwrap();
        let body = answer.body_mut().read_to_string().unwrap();
        let report: Value = serde_json::from_str(&body).unwrap();
        assert_valid_report(&report);
        problems.extend(problem(name, &report, expected));
    }
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
