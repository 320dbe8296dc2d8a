//! A `pyward serve` of a test's own on a free loopback port, ready (its `/readyz`
//! answered 200) before the test goes on, killed on drop. Included by path
//! (`#[path = "../../tests/common/pyward_serve.rs"] mod pyward_serve;`) from the CLI's
//! tests, which also include `processes.rs` as `processes`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::processes::wait_until;

/// A `pyward serve` process (with `extra` arguments: a queue consumer, limits; two
/// workers unless `extra` says `--workers`).
pub struct Serve {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
}

impl Serve {
    pub fn start(extra: &[&str]) -> Serve {
        let workers: &[&str] = if extra.contains(&"--workers") {
            &[]
        } else {
            &["--workers", "2"]
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_pyward"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(workers)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("pyward serve: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        let agent = agent();
        let ready = || {
            agent
                .get(&format!("{url}/readyz"))
                .call()
                .is_ok_and(|r| r.status().as_u16() == 200)
        };
        assert!(wait_until(Duration::from_secs(60), ready), "never ready");
        Serve { child, url }
    }
}

impl Serve {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client that returns every status as a response, not an error.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}
