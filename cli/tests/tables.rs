//! The table job from every door (issue 34): the allocation example
//! (examples/allocation) declared with its checks runs through `pyward run --checks`,
//! `POST /v1/jobs` with `options.expect` and the queue, and each door gives the same
//! report: the same status, the same workbook byte for byte, the same table preview,
//! the same feedback when the code is wrong or a check fails.

#[path = "../../tests/common/processes.rs"]
mod processes;
#[path = "../../tests/common/pyward_serve.rs"]
mod pyward_serve;
#[path = "../../tests/common/redis_server.rs"]
mod redis_server;
#[path = "../../tests/common/schema.rs"]
mod schema;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use processes::wait_until;
use pyward::validate::Expectations;
use pyward_serve::{agent, Serve};
use redis_server::{Fsync, Redis};
use schema::assert_valid_report;
use serde_json::{json, Value};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/allocation")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(example(name)).unwrap()
}

/// The declaration of checks.toml, with `total` as the declared sum.
fn checks(total: &str) -> String {
    read("checks.toml").replace("total = 1000000", &format!("total = {total}"))
}

/// A job of each kind: right, wrong column, a check that fails.
fn cases() -> [(&'static str, String, String); 3] {
    [
        ("right", read("allocation.py"), checks("1000000")),
        ("wrong column", read("first_attempt.py"), checks("1000000")),
        ("check fails", read("allocation.py"), checks("2000000")),
    ]
}

/// `pyward run --json --checks` of `code`: its report.
fn through_run(dir: &Path, case: &str, code: &str, checks: &str) -> Value {
    let script = dir.join(format!("{}.py", case.replace(' ', "_")));
    std::fs::write(&script, code).unwrap();
    let checks_file = dir.join(format!("{}.toml", case.replace(' ', "_")));
    std::fs::write(&checks_file, checks).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pyward"))
        .args(["run", "--json", "--no-record", "--src"])
        .arg(example(""))
        .arg("--checks")
        .arg(&checks_file)
        .arg("--out")
        .arg(format!("{}/", dir.join("out").display()))
        .arg(&script)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{case}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let ok = report["status"] == "ok";
    assert_eq!(out.status.code(), Some(if ok { 0 } else { 1 }), "{case}");
    report
}

/// The JSON job of `code` with the declaration as `options.expect`.
fn request(code: &str, checks: &str) -> Value {
    let expect = Expectations::from_toml(checks).unwrap();
    let source = std::fs::read(example("source.xlsx")).unwrap();
    json!({
        "code": code,
        "inputs": {"source.xlsx": base64::engine::general_purpose::STANDARD.encode(source)},
        "options": {"expect": serde_json::from_str::<Value>(&expect.to_json()).unwrap()},
    })
}

/// What must be the same whatever the door: status, feedback, each artifact's name,
/// bytes and table preview.
fn essence(report: &Value) -> Value {
    let artifacts: Vec<Value> = report["artifacts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|a| json!([a["name"], a["sha256"], a["table"]]))
                .collect()
        })
        .unwrap_or_default();
    json!({"status": report["status"], "feedback": report["feedback"], "artifacts": artifacts})
}

#[test]
fn the_table_job_answers_the_same_through_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    let by_run: Vec<Value> = cases
        .iter()
        .map(|(case, code, checks)| through_run(dir.path(), case, code, checks))
        .collect();

    // The right job: ok, the workbook written and previewed.
    let right = &by_run[0];
    assert_valid_report(right);
    assert_eq!(right["status"], "ok", "{right}");
    assert!(dir.path().join("out/result.xlsx").is_file());
    let table = &right["artifacts"][0]["table"];
    assert_eq!(table["rows"], 8);
    assert_eq!(table["sheets"], json!(["Allocation", "Summary"]));
    // The wrong column is named with the sheet's columns; the failed check with its
    // numbers and cells.
    let wrong = by_run[1]["feedback"].as_str().unwrap();
    assert!(
        wrong.contains("'Revenue'") && wrong.contains("'revenue'"),
        "{wrong}"
    );
    assert_eq!(by_run[2]["status"], "invalid_output", "{}", by_run[2]);
    let failed = by_run[2]["feedback"].as_str().unwrap();
    assert!(
        failed.contains("cost_allocated") && failed.contains("2,000,000.00"),
        "{failed}"
    );
    assert!(failed.contains("result.xlsx!Allocation!"), "{failed}");

    // HTTP: the same reports.
    let server = Serve::start(&[]);
    let http = agent();
    for ((case, code, checks), expected) in cases.iter().zip(&by_run) {
        let mut answer = http
            .post(&format!("{}/v1/jobs", server.url))
            .header("content-type", "application/json")
            .send(request(code, checks).to_string())
            .unwrap();
        let report: Value =
            serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
        assert_valid_report(&report);
        assert_eq!(essence(&report), essence(expected), "HTTP, {case}");
    }
    drop(server);

    // The queue: the same reports.
    let redis = Redis::start(Fsync::Always);
    let _consumer = Serve::start(&["--queue", &redis.url(), "--queue-stream", "tables"]);
    let mut con = redis.connect().unwrap();
    for (i, (_, code, checks)) in cases.iter().enumerate() {
        let _: String = redis::cmd("XADD")
            .arg("tables")
            .arg("*")
            .arg("job")
            .arg(request(code, checks).to_string())
            .arg("id")
            .arg(format!("t-{i}"))
            .query(&mut con)
            .unwrap();
    }
    let result = |i: usize| -> Option<Value> {
        let text: Option<String> = redis.cmd(redis::cmd("GET").arg(format!("tables:result:t-{i}")));
        text.map(|t| serde_json::from_str(&t).unwrap())
    };
    assert!(
        wait_until(Duration::from_secs(180), || (0..cases.len())
            .all(|i| result(i).is_some())),
        "not every table job answered"
    );
    for (i, ((case, ..), expected)) in cases.iter().zip(&by_run).enumerate() {
        let report = result(i).unwrap();
        assert_valid_report(&report);
        assert_eq!(essence(&report), essence(expected), "queue, {case}");
    }
}

#[test]
fn a_bad_declaration_is_refused_at_every_door_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("job.py");
    std::fs::write(&script, read("allocation.py")).unwrap();
    let bad_toml = dir.path().join("bad.toml");
    std::fs::write(&bad_toml, "version = 1\nartifacts = [\"../escape.xlsx\"]\n").unwrap();
    for args in [
        vec!["--expect", "../escape.xlsx"],
        vec!["--checks", bad_toml.to_str().unwrap()],
        vec!["--checks", "/nonexistent/checks.toml"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_pyward"))
            .args(["run", "--no-record"])
            .args(&args)
            .arg(&script)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("pyward: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("pool:"), "a pool was warmed for {args:?}");
    }

    let server = Serve::start(&[]);
    for expect in [
        json!({"version": 2}),
        json!({"version": 1, "artifacts": ["../escape.xlsx"]}),
        json!({"version": 1, "tables": [{"artifact": "r.csv", "sums": "nope"}]}),
        json!("not an object"),
    ] {
        let mut answer = agent()
            .post(&format!("{}/v1/jobs", server.url))
            .header("content-type", "application/json")
            .send(json!({"code": "x = 1", "options": {"expect": expect}}).to_string())
            .unwrap();
        let status = answer.status().as_u16();
        let body = answer.body_mut().read_to_string().unwrap();
        assert!((400..500).contains(&status), "{expect}: {status} {body}");
        assert!(body.contains("options.expect"), "{expect}: {body}");
    }
}

#[test]
fn a_reader_that_goes_away_ends_pyward_run_quietly_with_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pyward"))
        .args(["run", "--no-record", "--out"])
        .arg(dir.path().join("figure.png"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Nobody reads stdout: its pipe is closed before the report is printed.
    drop(child.stdout.take());
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"print('x')\nplt.plot([1, 2])\nplt.savefig(OUT)\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(dir.path().join("figure.png").is_file());
}
