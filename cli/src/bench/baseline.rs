//! The plain-Python baselines of `pyward bench`: **cold** (a new `python -I` process per
//! run that imports what the job needs and runs it) and **floor** (bare `exec` in a
//! helper interpreter that is already warm), both from `python/bench_harness.py` run by
//! the interpreter the workers use.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

const HARNESS: &str = include_str!("../../../python/bench_harness.py");

/// One run of a job as plain Python would run it.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub code: &'a str,
    pub src: &'a Path,
    pub out: &'a Path,
    pub seed: u64,
    pub pandas: bool,
    pub loadmat: bool,
}

impl Request<'_> {
    fn to_json(&self) -> String {
        json!({
            "code": self.code,
            "src": self.src,
            "out": self.out,
            "seed": self.seed,
            "pandas": self.pandas,
            "loadmat": self.loadmat,
        })
        .to_string()
    }
}

/// The harness script on disk and the interpreter that runs it.
pub struct Harness {
    python: PathBuf,
    script: PathBuf,
    _dir: tempfile::TempDir,
}

impl Harness {
    /// Writes the harness next to nothing else, for `python`.
    pub fn new(python: PathBuf) -> std::io::Result<Harness> {
        let dir = tempfile::tempdir()?;
        let script = dir.path().join("bench_harness.py");
        std::fs::write(&script, HARNESS)?;
        Ok(Harness {
            python,
            script,
            _dir: dir,
        })
    }

    fn command(&self, mode: &str) -> Command {
        let mut cmd = Command::new(&self.python);
        cmd.arg("-I")
            .arg(&self.script)
            .arg(mode)
            // As workers run: one BLAS thread, no compiled-bytecode writes.
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONHASHSEED", "0");
        cmd
    }

    /// Cold: process start to exit. `Err` carries the job's error (or why Python did not
    /// run).
    pub fn cold(&self, request: &Request<'_>) -> Result<Duration, String> {
        let start = Instant::now();
        let out = self
            .command("once")
            .arg(request.to_json())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("{}: {e}", self.python.display()))?;
        let elapsed = start.elapsed();
        if out.status.success() {
            Ok(elapsed)
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    /// Starts the floor's helper interpreter.
    pub fn floor(&self) -> std::io::Result<Floor> {
        let mut child = self
            .command("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Floor {
            child,
            stdin,
            stdout,
        })
    }
}

/// A warm helper interpreter: each request is one bare `exec`, timed inside it.
pub struct Floor {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

#[derive(Deserialize)]
struct Answer {
    ok: bool,
    exec_ms: f64,
    error: Option<String>,
}

impl Floor {
    /// The `exec` time of one run (its first run also imports what it needs: run it once
    /// untimed).
    pub fn run(&mut self, request: &Request<'_>) -> Result<Duration, String> {
        let fail = |e: std::io::Error| format!("the floor's interpreter stopped: {e}");
        writeln!(self.stdin, "{}", request.to_json()).map_err(fail)?;
        self.stdin.flush().map_err(fail)?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line).map_err(fail)? == 0 {
            return Err("the floor's interpreter exited".into());
        }
        let answer: Answer =
            serde_json::from_str(&line).map_err(|e| format!("the floor answered {line:?}: {e}"))?;
        if answer.ok {
            Ok(Duration::from_secs_f64(answer.exec_ms.max(0.0) / 1e3))
        } else {
            Err(answer.error.unwrap_or_default())
        }
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
