//! `examples/axum_service.rs` for real: an HTTP server over one executor, a real client,
//! and a client that disconnects mid-job, whose worker is then killed and replaced.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_valid_report, descendants, process_alive};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_axum_example_serves_figures_and_cancels_on_disconnect() {
    let example = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(|deps| deps.parent())
        .map(|p| p.join("examples/axum_service"))
        .unwrap();
    assert!(
        example.is_file(),
        "{example:?}: a plain `cargo test` builds examples (alone: cargo build --examples)"
    );
    let mut child = Command::new(&example)
        .arg("127.0.0.1:0")
        .env("PYWARD_WORKER", env!("CARGO_BIN_EXE_pyward-worker"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let server = Server(child);
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .expect(&line)
        .to_string();
    let url = format!("http://{addr}/render");

    let mut png = ureq::post(&url)
        .send("plt.plot([1, 3, 2])\nplt.savefig(OUT)\n")
        .unwrap();
    assert_eq!(png.headers()["content-type"], "image/png");
    assert!(png
        .body_mut()
        .read_to_vec()
        .unwrap()
        .starts_with(b"\x89PNG"));

    let mut refused = ureq::post(&url).send("import subprocess\n").unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&refused.body_mut().read_to_string().unwrap()).unwrap();
    assert_valid_report(&report);
    assert_eq!(report["status"], "rejected");

    // Two clients start endless jobs (one per worker) and hang up once their job spins
    // on a worker (a fixed wait could end before dispatch on a loaded machine).
    let spin = "while True:\n    pass\n";
    let mut spinning = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&addr).unwrap();
        let baseline = cpu_below(server.0.id());
        write!(
            stream,
            "POST /render HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n\r\n{spin}",
            spin.len()
        )
        .unwrap();
        spinning.push(wait_for_spinner(server.0.id(), &baseline, &spinning));
        drop(stream);
    }
    // Their workers are killed long before the jobs' 10 s deadline would have done it
    // (the bound below is generous; it only keeps a broken build from hanging the test).
    assert!(
        common::wait_until(Duration::from_secs(8), || spinning
            .iter()
            .all(|p| !process_alive(*p))),
        "abandoned jobs kept their workers ({spinning:?})"
    );
    // And the pool serves again.
    let mut png = ureq::post(&url)
        .send("plt.plot([2, 1])\nplt.savefig(OUT)\n")
        .unwrap();
    assert_eq!(png.headers()["content-type"], "image/png");
    assert!(png
        .body_mut()
        .read_to_vec()
        .unwrap()
        .starts_with(b"\x89PNG"));
}

/// CPU time (user + system, clock ticks) of every process below `root`.
fn cpu_below(root: u32) -> HashMap<u32, u64> {
    descendants(root)
        .into_iter()
        .map(|p| (p, cpu_ticks(p)))
        .collect()
}

/// CPU time (user + system, clock ticks) `pid` has used; 0 once it is gone.
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // After the command's closing parenthesis: field 3 (state) on; utime and stime are
    // fields 14 and 15 (proc(5)).
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let field = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(14) + field(15)
}

/// The process below `root`, not in `known`, that has used 0.2 s of CPU since
/// `baseline` (or since it was first seen): a worker spinning on a job.
fn wait_for_spinner(root: u32, baseline: &HashMap<u32, u64>, known: &[u32]) -> u32 {
    let mut first_seen = baseline.clone();
    let started = Instant::now();
    loop {
        for (pid, ticks) in cpu_below(root) {
            let since = *first_seen.entry(pid).or_insert(ticks);
            if !known.contains(&pid) && ticks >= since + 20 {
                return pid;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no worker started the job"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
