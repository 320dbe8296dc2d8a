//! Queue mode for real: a real `redis-server` (private port, temp dir, append-only file
//! synced on every write), several `pyward serve --queue` consumer processes, producers
//! that `XADD` the documented wire format, and the failures the design promises to
//! survive: a consumer killed mid-run, a job whose consumers keep dying, Redis restarted.

#[path = "../../tests/common/processes.rs"]
mod processes;
#[path = "../../tests/common/redis_server.rs"]
mod redis_server;
#[path = "../../tests/common/schema.rs"]
mod schema;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use processes::wait_until;
use redis_server::{Fsync, Redis};
use schema::assert_valid_report;
use serde_json::{json, Value};

/// A `pyward serve --queue` process.
struct Consumer {
    child: Child,
    name: String,
    log: PathBuf,
    url: Option<String>,
}

impl Consumer {
    /// A consumer only (no HTTP listener), one worker.
    fn start(redis: &Redis, stream: &str, name: &str, dir: &std::path::Path) -> Consumer {
        Consumer::spawn(redis, stream, name, dir, &["--no-http"])
    }

    fn spawn(
        redis: &Redis,
        stream: &str,
        name: &str,
        dir: &std::path::Path,
        extra: &[&str],
    ) -> Consumer {
        let log = dir.join(format!("{name}.log"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_pyward"))
            .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
            .args(["--queue", &redis.url(), "--queue-stream", stream])
            .args(["--consumer", name, "--claim-idle", "1", "--timeout", "60"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let url = if extra.contains(&"--no-http") {
            None
        } else {
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let url = line.trim().strip_prefix("pyward serve: listening on ");
            Some(url.expect("listening line").to_string())
        };
        Consumer {
            child,
            name: name.to_string(),
            log,
            url,
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A job that prints its marker and writes a small text artifact.
fn marked_job(marker: &str) -> String {
    json!({
        "code": format!("print({marker:?})\nnp.savetxt(OUT, [1.0])\n"),
        "options": {"out_name": "result.txt"},
    })
    .to_string()
}

/// `XADD stream * job <request> id <id>`, the documented wire format.
fn enqueue(con: &mut redis::Connection, stream: &str, id: &str, request: &str) {
    let _: String = redis::cmd("XADD")
        .arg(stream)
        .arg("*")
        .arg("job")
        .arg(request)
        .arg("id")
        .arg(id)
        .query(con)
        .unwrap();
}

fn result(redis: &Redis, stream: &str, id: &str) -> Option<Value> {
    let text: Option<String> = redis.cmd(redis::cmd("GET").arg(format!("{stream}:result:{id}")));
    text.map(|t| serde_json::from_str(&t).unwrap())
}

fn answered_count(redis: &Redis, stream: &str) -> usize {
    let keys: Vec<String> = redis.cmd(redis::cmd("KEYS").arg(format!("{stream}:result:*")));
    keys.len()
}

/// What the consumers' logs say of each job: how many times it was answered (lines
/// whose message is `answered`, `... INFO answered id=...`), and which jobs a consumer
/// found already answered when they were delivered again.
#[derive(Default)]
struct Logged {
    answers: HashMap<String, usize>,
    found_answered: HashSet<String>,
}

fn logged(consumers: &[&Consumer]) -> Logged {
    let mut logged = Logged::default();
    let id_after = |line: &str, marker: &str| {
        let rest = line.split(marker).nth(1)?;
        let id = rest.split(" id=").nth(1)?.split_whitespace().next()?;
        Some(id.to_string())
    };
    for c in consumers {
        for line in c.log().lines() {
            if let Some(rest) = line.split(" INFO answered id=").nth(1) {
                let id = rest.split_whitespace().next().unwrap_or("").to_string();
                *logged.answers.entry(id).or_insert(0) += 1;
            } else if let Some(id) = id_after(line, "duplicate delivery dropped") {
                logged.found_answered.insert(id);
            }
        }
    }
    logged
}

/// Nothing pending in the group, nothing left in the stream, nothing dead-lettered.
fn assert_drained(redis: &Redis, stream: &str) {
    assert_eq!(settled_pending(redis, stream), 0, "entries left pending");
    let len: u64 = redis.cmd(redis::cmd("XLEN").arg(stream));
    assert_eq!(len, 0, "entries left in the stream");
    let dead: u64 = redis.cmd(redis::cmd("XLEN").arg(format!("{stream}:dead")));
    assert_eq!(dead, 0, "entries dead-lettered");
}

/// Entries pending in the group once in-flight acknowledgements have landed. A
/// consumer writes the answer first and acknowledges after (so a crash between the
/// two redelivers rather than loses), so a test that has just seen an answer gives
/// the XACK a moment before it counts.
fn settled_pending(redis: &Redis, stream: &str) -> u64 {
    if wait_until(Duration::from_secs(30), || pending(redis, stream) == 0) {
        0
    } else {
        pending(redis, stream)
    }
}

/// Entries pending in the group now.
fn pending(redis: &Redis, stream: &str) -> u64 {
    let reply: (u64, redis::Value, redis::Value, redis::Value) =
        redis.cmd(redis::cmd("XPENDING").arg(stream).arg("pyward"));
    reply.0
}

/// The pending entries (id, consumer, idle ms, deliveries), for a failure's message.
fn pending_entries(redis: &Redis, stream: &str) -> Vec<(String, String, u64, u64)> {
    redis.cmd(
        redis::cmd("XPENDING")
            .arg(stream)
            .arg("pyward")
            .arg("-")
            .arg("+")
            .arg(10),
    )
}

/// Every job's answer is its own (its marker on stdout) and written exactly once.
///
/// The result key is written once by construction (`SET NX`); the logs show that no
/// consumer ran a job whose answer was there. A consumer killed between writing an
/// answer and logging it leaves that answer unlogged: such a job must then be one a
/// surviving consumer found answered on redelivery, and each killed consumer (one
/// worker, one job in flight) accounts for at most one.
fn assert_each_answered_once(
    redis: &Redis,
    stream: &str,
    ids: &[String],
    consumers: &[&Consumer],
    killed: usize,
) {
    for id in ids {
        let report = result(redis, stream, id).unwrap_or_else(|| panic!("{id}: no answer"));
        assert_eq!(report["status"], "ok", "{id}: {report}");
        assert_eq!(
            report["stdout"],
            format!("{id}\n"),
            "{id}: another job's answer"
        );
    }
    let logged = logged(consumers);
    let mut unlogged = Vec::new();
    for id in ids {
        match logged.answers.get(id) {
            Some(1) => {}
            None if logged.found_answered.contains(id) => unlogged.push(id),
            times => panic!("{id} answered {times:?} times"),
        }
    }
    assert!(
        unlogged.len() <= killed,
        "answers no consumer logged: {unlogged:?}"
    );
    assert_eq!(
        logged.answers.len() + unlogged.len(),
        ids.len(),
        "answers for jobs nobody sent"
    );
}

/// Waits until the consumers' logs account for every job (answered, or found answered
/// on redelivery; a consumer logs after writing the answer) and every entry is
/// acknowledged (none is left to deliver and answer again): the moment to count
/// answers. Bounded; the counts say what went wrong.
fn settle(redis: &Redis, stream: &str, ids: &[String], consumers: &[&Consumer]) {
    wait_until(Duration::from_secs(30), || {
        let logged = logged(consumers);
        ids.iter()
            .all(|id| logged.answers.contains_key(id) || logged.found_answered.contains(id))
            && pending(redis, stream) == 0
    });
}

#[test]
fn many_producers_three_consumers_one_killed_every_job_answered_once() {
    let redis = Redis::start(Fsync::Always);
    let dir = tempfile::tempdir().unwrap();
    let stream = "load";
    let mut consumers: Vec<Consumer> = (1..=3)
        .map(|i| Consumer::start(&redis, stream, &format!("c{i}"), dir.path()))
        .collect();
    // Four producers, 125 jobs each, straight into the stream.
    let producers: Vec<_> = (0..4)
        .map(|p| {
            let url = redis.url();
            std::thread::spawn(move || {
                let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
                let ids: Vec<String> = (0..125).map(|i| format!("job-{p}-{i}")).collect();
                for id in &ids {
                    enqueue(&mut con, stream, id, &marked_job(id));
                }
                ids
            })
        })
        .collect();
    let ids: Vec<String> = producers
        .into_iter()
        .flat_map(|p| p.join().unwrap())
        .collect();
    assert_eq!(ids.len(), 500);

    // One consumer dies in the middle of the run.
    assert!(
        wait_until(Duration::from_secs(180), || answered_count(&redis, stream)
            >= 150),
        "the consumers did not get going"
    );
    consumers[1].kill();
    assert!(
        wait_until(Duration::from_secs(240), || answered_count(&redis, stream)
            == 500),
        "only {} of 500 answered",
        answered_count(&redis, stream)
    );
    let all: Vec<&Consumer> = consumers.iter().collect();
    settle(&redis, stream, &ids, &all);
    assert_each_answered_once(&redis, stream, &ids, &all, 1);
    assert_drained(&redis, stream);
    for c in [&consumers[0], &consumers[2]] {
        assert!(c.log().contains("answered"), "{} answered nothing", c.name);
    }
    // Every answer validates against the published report schema.
    assert_valid_report(&result(&redis, stream, &ids[0]).unwrap());
}

#[test]
fn a_job_whose_consumers_keep_dying_is_dead_lettered_and_answered() {
    let redis = Redis::start(Fsync::Always);
    let dir = tempfile::tempdir().unwrap();
    let stream = "poison";
    let mut con = redis.connect().unwrap();
    // Spins until its (long) deadline: whoever takes it is still running it when killed.
    let poison = json!({"code": "while True:\n    pass\n"}).to_string();
    enqueue(&mut con, stream, "poison-1", &poison);
    // Who holds the job and how often it was delivered (nobody before the group exists).
    let owner = |redis: &Redis| -> Option<(String, u64)> {
        let pending: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
            .arg(stream)
            .arg("pyward")
            .arg("-")
            .arg("+")
            .arg(10)
            .query(&mut redis.connect().ok()?)
            .ok()?;
        pending.first().map(|p| (p.1.clone(), p.3))
    };
    // Three consumers take it in turn and die with it (SIGKILL, as a machine would).
    for (i, deliveries) in (1..=3).zip(1u64..) {
        let name = format!("d{i}");
        let mut consumer = Consumer::start(&redis, stream, &name, dir.path());
        assert!(
            wait_until(Duration::from_secs(120), || owner(&redis)
                == Some((name.clone(), deliveries))),
            "{name} never took the job: {:?}",
            owner(&redis)
        );
        consumer.kill();
    }
    // The fourth finds it delivered three times already: dead letter, typed answer.
    let last = Consumer::start(&redis, stream, "d4", dir.path());
    assert!(
        wait_until(Duration::from_secs(120), || result(
            &redis, stream, "poison-1"
        )
        .is_some()),
        "the poison job was never answered"
    );
    let report = result(&redis, stream, "poison-1").unwrap();
    assert_valid_report(&report);
    assert_eq!(report["status"], "infrastructure_error", "{report}");
    assert_eq!(report["error"]["kind"], "dead_lettered");
    let dead: Vec<(String, HashMap<String, String>)> = redis.cmd(
        redis::cmd("XRANGE")
            .arg(format!("{stream}:dead"))
            .arg("-")
            .arg("+"),
    );
    assert_eq!(dead.len(), 1);
    let fields = &dead[0].1;
    assert_eq!(fields["id"], "poison-1");
    assert_eq!(fields["deliveries"], "4");
    assert!(fields["reason"].contains("delivered 4 times"), "{fields:?}");
    assert_eq!(fields["job"], poison);
    // And the consumer goes on with ordinary jobs.
    enqueue(&mut con, stream, "after", &marked_job("after"));
    assert!(wait_until(Duration::from_secs(60), || result(
        &redis, stream, "after"
    )
    .is_some()));
    assert_eq!(
        result(&redis, stream, "after").unwrap()["stdout"],
        "after\n"
    );
    assert_eq!(
        settled_pending(&redis, stream),
        0,
        "pending: {:?}\nd4's log:\n{}",
        pending_entries(&redis, stream),
        last.log()
    );
    // SIGTERM: a clean stop (exit 0) that takes its name out of the group.
    let mut last = last;
    let term = Command::new("kill")
        .args(["-TERM", &last.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    assert_eq!(last.child.wait().unwrap().code(), Some(0), "{}", last.log());
    let consumers: Vec<HashMap<String, redis::Value>> = redis.cmd(
        redis::cmd("XINFO")
            .arg("CONSUMERS")
            .arg(stream)
            .arg("pyward"),
    );
    let names: Vec<String> = consumers
        .iter()
        .map(|c| redis::from_redis_value_ref(&c["name"]).unwrap())
        .collect();
    assert!(
        !names.contains(&"d4".to_string()),
        "d4 still in the group: {names:?}"
    );
    assert!(names.contains(&"d1".to_string()), "{names:?}");
}

#[test]
fn redis_restarted_mid_run_loses_nothing_and_answers_once() {
    let mut redis = Redis::start(Fsync::Always);
    let dir = tempfile::tempdir().unwrap();
    let stream = "restart";
    let mut con = redis.connect().unwrap();
    let ids: Vec<String> = (0..200).map(|i| format!("r-{i}")).collect();
    for id in &ids {
        enqueue(&mut con, stream, id, &marked_job(id));
    }
    // One consumer with its HTTP side, to watch readiness; one without.
    let web = Consumer::spawn(&redis, stream, "web", dir.path(), &[]);
    let quiet = Consumer::start(&redis, stream, "quiet", dir.path());
    let web_url = web.url.clone().unwrap();
    let ready = |url: &str| {
        ureq::get(&format!("{url}/readyz"))
            .call()
            .map(|r| r.status().as_u16())
            .unwrap_or_else(|e| match e {
                ureq::Error::StatusCode(code) => code,
                _ => 0,
            })
    };
    assert!(wait_until(Duration::from_secs(120), || answered_count(
        &redis, stream
    ) >= 40));

    redis.kill();
    let down = Instant::now();
    assert!(
        wait_until(Duration::from_secs(20), || ready(&web_url) == 503),
        "readiness stayed up without Redis"
    );
    // Both consumers saw the outage: each says so once, then retries with backoff.
    assert!(
        wait_until(Duration::from_secs(20), || [&web, &quiet]
            .iter()
            .all(|c| c.log().contains("queue unreachable"))),
        "a consumer did not notice Redis was gone"
    );
    // The outage's length is the scenario, not a condition to wait for: 2 s, past
    // --claim-idle (1 s), so what a consumer held when Redis went down can be claimed
    // by the other when it returns.
    std::thread::sleep(Duration::from_secs(2).saturating_sub(down.elapsed()));
    redis.launch().unwrap();
    assert!(wait_until(Duration::from_secs(30), || ready(&web_url) == 200));
    assert!(
        wait_until(Duration::from_secs(240), || answered_count(&redis, stream)
            == 200),
        "only {} of 200 answered after the restart",
        answered_count(&redis, stream)
    );
    settle(&redis, stream, &ids, &[&web, &quiet]);
    assert_each_answered_once(&redis, stream, &ids, &[&web, &quiet], 0);
    assert_drained(&redis, stream);

    // The HTTP way in: enqueue, then wait for the answer by id.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut queued = agent
        .post(&format!("{web_url}/v1/jobs?queue=1"))
        .header("content-type", "application/json")
        .send(marked_job("via-http"))
        .unwrap();
    assert_eq!(queued.status().as_u16(), 202);
    let id = serde_json::from_str::<Value>(&queued.body_mut().read_to_string().unwrap()).unwrap()
        ["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut answer = agent
        .get(&format!("{web_url}/v1/jobs/{id}?wait=60"))
        .call()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    let report: Value = serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(report["stdout"], "via-http\n");
    let unknown = agent
        .get(&format!("{web_url}/v1/jobs/never-sent?wait=0"))
        .call()
        .unwrap();
    assert_eq!(unknown.status().as_u16(), 404);
    let bad_wait = agent
        .get(&format!("{web_url}/v1/jobs/x?wait=null"))
        .call()
        .unwrap();
    assert_eq!(bad_wait.status().as_u16(), 400);
    assert_eq!(
        bad_wait.headers()["content-type"],
        "application/problem+json"
    );
}

/// Issue 36: over HTTP, an id that was never enqueued is 404 `unknown_job` (a problem),
/// never a 202 that looks like a job still waiting; a job really waiting is 202 pending,
/// and its answer comes under the same id.
#[test]
fn a_job_id_never_enqueued_is_unknown_and_a_pending_one_is_accepted() {
    let redis = Redis::start(Fsync::Always);
    let dir = tempfile::tempdir().unwrap();
    let web = Consumer::spawn(&redis, "ids", "web", dir.path(), &[]);
    let url = web.url.clone().unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let ready = || {
        agent
            .get(&format!("{url}/readyz"))
            .call()
            .is_ok_and(|r| r.status().as_u16() == 200)
    };
    assert!(wait_until(Duration::from_secs(60), ready), "never ready");
    let get = |id: &str, wait: u32| {
        let mut answer = agent
            .get(&format!("{url}/v1/jobs/{id}?wait={wait}"))
            .call()
            .unwrap();
        let content_type = answer.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        let body: Value =
            serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
        (answer.status().as_u16(), content_type, body)
    };

    // A job that holds the consumer's one worker until its 3 s deadline.
    let mut queued = agent
        .post(&format!("{url}/v1/jobs?queue=1"))
        .header("content-type", "application/json")
        .send(
            json!({"code": "while True:\n    pass\n", "options": {"timeout_ms": 3000}}).to_string(),
        )
        .unwrap();
    let body = queued.body_mut().read_to_string().unwrap();
    assert_eq!(queued.status().as_u16(), 202, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    let id = body["id"].as_str().unwrap().to_string();

    let (status, _, pending) = get(&id, 0);
    assert_eq!(status, 202, "{pending}");
    assert_eq!(pending["status"], "pending");
    assert_eq!(pending["id"], id.as_str());

    for never in ["never-enqueued", "1-0", &format!("{id}x")] {
        let (status, content_type, problem) = get(never, 0);
        assert_eq!(status, 404, "{never}: {problem}");
        assert_eq!(content_type, "application/problem+json");
        assert_eq!(problem["code"], "unknown_job", "{never}: {problem}");
        assert_eq!(problem["status"], 404);
    }
    // An unknown id is answered at once, whatever the wait asked for.
    let asked = std::time::Instant::now();
    assert_eq!(get("never-enqueued", 30).0, 404);
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );

    let (status, _, report) = get(&id, 60);
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["status"], "timeout", "{report}");
    assert_valid_report(&report);
    assert_eq!(get(&id, 0).0, 200, "the answer stays under its id");
}
