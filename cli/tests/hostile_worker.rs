//! Every door over a hostile worker: `pyward run` (`--out`, `--runs`), `pyward serve
//! --records` and the queue consumer, with the hostile test worker (`tests/hostile_worker.rs`,
//! an example of the root package) as their worker program (`PYWARD_WORKER`). It speaks
//! the real protocol and answers with artifacts named as absolute paths, as paths that
//! climb out of any directory, and with other forged frames. No door may write outside
//! its directories; each answers `protocol_violation` without naming internal job ids,
//! and keeps serving.

#[path = "../../tests/common/hostile.rs"]
mod hostile;
#[path = "../../tests/common/processes.rs"]
mod processes;
#[path = "../../tests/common/redis_server.rs"]
mod redis_server;
#[path = "../../tests/common/schema.rs"]
mod schema;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hostile::{canary_file, canary_name, climbing_to, files_named, names_a_job_id};
use processes::{process_alive, wait_until};
use redis_server::{Fsync, Redis};
use schema::assert_valid_report;
use serde_json::{json, Value};

fn hostile_program() -> PathBuf {
    hostile::hostile_program(Path::new(env!("CARGO_BIN_EXE_pyward")).parent().unwrap())
}

fn pyward() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pyward"));
    cmd.env("PYWARD_WORKER", hostile_program());
    cmd
}

/// A test's directories: the canaries sit at its top; everything the host is told to
/// write to lies four levels below, so that a name climbing three levels (`../../../x`)
/// still lands inside, where [`files_named`] finds it.
struct Dirs {
    top: tempfile::TempDir,
    /// An absolute canary path.
    canary: PathBuf,
    /// A canary name reached by climbing three levels.
    short: String,
    /// An absolute canary path of a PNG.
    png: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let top = tempfile::tempdir().unwrap();
        let canary = top.path().join(canary_name("abs"));
        let png = top.path().join(canary_file("png", "png"));
        Dirs {
            top,
            canary,
            short: canary_name("short"),
            png,
        }
    }

    /// A directory four levels below the top, created.
    fn deep(&self, name: &str) -> PathBuf {
        let dir = self.top.path().join("a/b/c").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The hostile artifact names: absolute, climbing to the canary, climbing three
    /// levels, and an absolute PNG.
    fn names(&self) -> Vec<String> {
        vec![
            self.canary.to_str().unwrap().to_string(),
            climbing_to(&self.canary),
            format!("../../../{}", self.short),
            self.png.to_str().unwrap().to_string(),
        ]
    }

    /// Panics if any canary exists.
    fn assert_no_canary(&self, what: &str) {
        for canary in [&self.canary, &self.png] {
            assert!(
                !canary.exists(),
                "{what}: the host wrote the canary {canary:?}"
            );
        }
        let found = files_named(self.top.path(), &self.short);
        assert!(found.is_empty(), "{what}: the host wrote {found:?}");
        let base = self.canary.file_name().unwrap().to_str().unwrap();
        let found = files_named(self.top.path(), base);
        assert!(found.is_empty(), "{what}: the host wrote {found:?}");
    }
}

/// The job code of a scenario of the hostile worker.
fn scenario(line: &str) -> String {
    format!("# scenario: {line}\n")
}

fn name_attack(name: &str) -> String {
    scenario(&format!("name {}", serde_json::to_string(name).unwrap()))
}

/// A report of a protocol violation, whatever door it came through: valid, the right
/// status, the violation named, no internal job id anywhere in it.
fn assert_violation(report: &Value, names: &str, what: &str) {
    assert_valid_report(report);
    assert_eq!(report["status"], "protocol_violation", "{what}: {report}");
    assert_eq!(
        report["error"]["kind"], "protocol_violation",
        "{what}: {report}"
    );
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.to_lowercase().contains(names),
        "{what}: the message does not name the violation ({names}): {message:?}"
    );
    let text = report.to_string();
    assert!(
        !names_a_job_id(&text),
        "{what}: names an internal job id: {text}"
    );
    assert!(
        report
            .get("artifacts")
            .is_none_or(|a| a.as_array().is_some_and(Vec::is_empty)),
        "{what}: artifacts of a refused answer: {report}"
    );
}

/// `pyward run FILE --out DIR/fig.png --runs DIR` with each hostile name: exit code 1,
/// status `protocol_violation`, no canary anywhere, and a run record that stays inside
/// its directory.
#[test]
fn run_writes_nothing_outside_out_and_runs() {
    let dirs = Dirs::new();
    let cwd = dirs.deep("cwd");
    let out = dirs.deep("out");
    let runs = dirs.deep("runs");
    let jobs = dirs.deep("jobs");
    for (i, name) in dirs.names().iter().enumerate() {
        let file = jobs.join(format!("attack{i}.py"));
        std::fs::write(&file, name_attack(name)).unwrap();
        let output = pyward()
            .args(["run", "--json", "--out"])
            .arg(out.join("fig.png"))
            .arg("--runs")
            .arg(&runs)
            .arg(&file)
            .current_dir(&cwd)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let what = format!("pyward run with an artifact named {name:?}");
        dirs.assert_no_canary(&what);
        assert_eq!(output.status.code(), Some(1), "{what}:\n{stdout}\n{stderr}");
        let report: Value = serde_json::from_str(stdout.lines().next().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{what}: {e}:\n{stdout}\n{stderr}"));
        assert_violation(&report, "name", &what);
    }
}

/// Several files in one `pyward run` (a pool, `--out` a directory): the attacks answer
/// `protocol_violation`, the proper job beside them writes its figure into `--out`.
#[test]
fn run_of_several_files_refuses_the_attacks_and_writes_the_proper_figure() {
    let dirs = Dirs::new();
    let cwd = dirs.deep("cwd");
    let out = dirs.deep("out");
    let runs = dirs.deep("runs");
    let jobs = dirs.deep("jobs");
    let mut files = Vec::new();
    for (i, name) in dirs.names().iter().enumerate() {
        let file = jobs.join(format!("attack{i}.py"));
        std::fs::write(&file, name_attack(name)).unwrap();
        files.push(file);
    }
    let ok = jobs.join("proper.py");
    std::fs::write(&ok, scenario("ok proper")).unwrap();
    files.push(ok);
    let output = pyward()
        .args(["run", "--json", "--workers", "1", "--out"])
        .arg(&out)
        .arg("--runs")
        .arg(&runs)
        .args(&files)
        .current_dir(&cwd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    dirs.assert_no_canary("pyward run of several files");
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let reports: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(reports.len(), files.len(), "{stdout}\n{stderr}");
    for (report, name) in reports.iter().zip(dirs.names()) {
        assert_violation(report, "name", &format!("an artifact named {name:?}"));
    }
    let proper = reports.last().unwrap();
    assert_eq!(proper["status"], "ok", "{proper}\n{stderr}");
    assert_eq!(proper["stdout"], "proper\n");
    let figure = std::fs::read(out.join("proper.png")).expect("the proper job's figure");
    assert!(figure.starts_with(b"\x89PNG"));
    dirs.assert_no_canary("pyward run of several files");
}

/// A running `pyward serve` over hostile workers, killed on drop.
struct Server {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Server {
    fn start(args: &[&str], cwd: &Path, log: PathBuf) -> Server {
        let mut child = pyward()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .current_dir(cwd)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("pyward serve: listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        let server = Server { child, addr, log };
        let started = Instant::now();
        while server.get("/readyz").0 != 200 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the pool did not warm up:\n{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into()
    }

    fn get(&self, path: &str) -> (u16, String) {
        let mut r = Self::agent()
            .get(&format!("http://{}{path}", self.addr))
            .call()
            .unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    }

    /// POSTs a job; the status and the body.
    fn job(&self, code: &str) -> (u16, String) {
        let body = json!({ "code": code }).to_string();
        let answer = Self::agent()
            .post(&format!("http://{}/v1/jobs", self.addr))
            .header("content-type", "application/json")
            .send(body.as_bytes());
        match answer {
            Ok(mut r) => (
                r.status().as_u16(),
                r.body_mut()
                    .with_config()
                    .limit(64 << 20)
                    .read_to_string()
                    .unwrap(),
            ),
            Err(e) => panic!("no answer to the job ({e}):\n{}", self.log()),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `pyward serve --records`: each attack answers 200 with a `protocol_violation` report,
/// writes no canary, and the server goes on serving a proper job and `/readyz`. Among the
/// attacks, the ones that once broke the server: a huge `exec_ms` (a panicking slot
/// thread, a hung request), and a worker that answered for itself early and kept running.
#[test]
fn serve_with_records_refuses_forged_answers_and_keeps_serving() {
    let dirs = Dirs::new();
    let cwd = dirs.deep("cwd");
    let records = dirs.deep("records");
    let log = dirs.top.path().join("serve.log");
    let records_arg = records.to_str().unwrap();
    let server = Server::start(
        &[
            "--workers",
            "1",
            "--timeout",
            "10",
            "--records",
            records_arg,
        ],
        &cwd,
        log,
    );
    let mut attacks: Vec<(String, &str)> = dirs
        .names()
        .iter()
        .map(|n| (name_attack(n), "name"))
        .collect();
    attacks.push((scenario("field exec_ms 1e300"), "exec_ms"));
    attacks.push((scenario("early-forged-spin"), "nonce"));
    for (i, (code, names)) in attacks.iter().enumerate() {
        let what = format!("POST /v1/jobs {code:?}");
        let (status, body) = server.job(code);
        assert_eq!(status, 200, "{what}: {body}\n{}", server.log());
        let report: Value = serde_json::from_str(&body).unwrap();
        dirs.assert_no_canary(&what);
        assert_violation(&report, names, &what);
        assert!(!names_a_job_id(&body), "{what}: {body}");
        let attacker = report["worker"]["pid"]
            .as_u64()
            .unwrap_or_else(|| panic!("{what}: the report names no worker: {report}"));
        dirs.assert_no_canary(&what);

        let (status, body) = server.job(&scenario(&format!("ok after{i}")));
        assert_eq!(
            status,
            200,
            "the job after {what}: {body}\n{}",
            server.log()
        );
        let report: Value = serde_json::from_str(&body).unwrap();
        assert_valid_report(&report);
        assert_eq!(report["status"], "ok", "the job after {what}: {report}");
        assert_eq!(report["stdout"], format!("after{i}\n"));
        assert_ne!(
            report["worker"]["pid"].as_u64(),
            Some(attacker),
            "the job after {what} ran on the attacker's worker"
        );
        assert!(
            wait_until(Duration::from_secs(2), || !process_alive(attacker as u32)),
            "{what}: the attacker's worker {attacker} still runs"
        );
        assert_eq!(server.get("/readyz").0, 200, "{what}: not ready after it");
    }
    dirs.assert_no_canary("pyward serve --records");
}

/// The queue consumer (`pyward serve --queue --no-http --records`): a traversal job, then
/// a proper one; both answered (the first `protocol_violation`), no canary.
#[test]
fn queue_consumer_answers_an_attack_and_the_next_job() {
    let redis = Redis::start(Fsync::Always);
    let dirs = Dirs::new();
    let cwd = dirs.deep("cwd");
    let records = dirs.deep("records");
    let log = dirs.top.path().join("consumer.log");
    let stream = "hostile";
    let mut consumer = pyward()
        .args(["serve", "--workers", "1", "--no-http", "--timeout", "10"])
        .args(["--queue", &redis.url(), "--queue-stream", stream])
        .args(["--consumer", "c1", "--claim-idle", "30"])
        .arg("--records")
        .arg(&records)
        .current_dir(&cwd)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut con = redis.connect().unwrap();
    let attack = climbing_to(&dirs.canary);
    let jobs = [
        ("attack", name_attack(&attack)),
        ("short", name_attack(&format!("../../../{}", dirs.short))),
        ("after", scenario("ok after")),
    ];
    for (id, code) in &jobs {
        let _: String = redis::cmd("XADD")
            .arg(stream)
            .arg("*")
            .arg("job")
            .arg(json!({ "code": code }).to_string())
            .arg("id")
            .arg(id)
            .query(&mut con)
            .unwrap();
    }
    let result = |id: &str| -> Option<String> {
        redis.cmd(redis::cmd("GET").arg(format!("{stream}:result:{id}")))
    };
    let answered = wait_until(Duration::from_secs(90), || {
        jobs.iter().all(|(id, _)| result(id).is_some())
    });
    let _ = consumer.kill();
    let _ = consumer.wait();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    dirs.assert_no_canary("the queue consumer");
    assert!(answered, "not every job was answered:\n{log}");
    for (id, _) in &jobs[..2] {
        let text = result(id).unwrap();
        let report: Value = serde_json::from_str(&text).unwrap();
        assert_violation(&report, "name", &format!("queued job {id}"));
        assert!(!names_a_job_id(&text), "{id}: {text}");
    }
    let after: Value = serde_json::from_str(&result("after").unwrap()).unwrap();
    assert_valid_report(&after);
    assert_eq!(after["status"], "ok", "{after}\n{log}");
    assert_eq!(after["stdout"], "after\n");
    dirs.assert_no_canary("the queue consumer");
}
