//! `examples/axum_service.rs` for real: an HTTP server over one executor, a real client,
//! and a client that disconnects mid-job, whose worker is then killed and replaced.

use crate::common;

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

    let mut refused = ureq::post(&url).send("import os\n").unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&refused.body_mut().read_to_string().unwrap()).unwrap();
    assert_valid_report(&report);
    assert_eq!(report["status"], "rejected");

    // Two clients start endless jobs (one per worker) and hang up.
    let workers_before: Vec<u32> = descendants(server.0.id());
    let spin = "while True:\n    pass\n";
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "POST /render HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n\r\n{spin}",
            spin.len()
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        drop(stream);
    }
    // Their workers are killed long before the jobs' 10 s deadline would have done it
    // (the bound below is generous; it only keeps a broken build from hanging the test).
    let started = Instant::now();
    let gone = loop {
        let killed = workers_before
            .iter()
            .filter(|p| !process_alive(**p))
            .count();
        if killed >= 2 || started.elapsed() > Duration::from_secs(8) {
            break killed;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        gone >= 2,
        "abandoned jobs kept their workers ({workers_before:?})"
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
