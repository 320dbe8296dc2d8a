//! `pyward mcp` driven by a real MCP client: the official Python SDK (`mcp` from PyPI),
//! which `make test` installs into its own virtualenv (.venv-mcp, test tooling, not the
//! worker's packages) and names in `PYWARD_MCP_PYTHON`. tests/mcp/client.py calls every
//! tool over stdio and sends what no SDK sends (malformed frames, stdin closed while a
//! job spins), cancels a spinning job with progress asked for; examples/mcp_agent.py
//! plays a model that fixes its code from the tool's error. Here: the figure it links is
//! the file `pyward run` writes for the same code, the error text of a failed call is the
//! feedback `pyward run` reports, and each figure call's run record replays. Over HTTP
//! (`pyward serve --mcp-out`, `client.py http`): the same first calls and cancellation
//! on the server's pool, a client that goes away mid-call, the Host, Origin and token
//! checks.

#[path = "../../tests/common/processes.rs"]
mod processes;
#[path = "../../tests/common/pyward_serve.rs"]
mod pyward_serve;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The MCP client's Python: `PYWARD_MCP_PYTHON`, or the virtualenv `make test` makes.
/// Without either the tests fail, as the queue tests do without redis-server: a
/// missing client is no pass.
fn client_python() -> PathBuf {
    if let Some(p) = std::env::var_os("PYWARD_MCP_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv-mcp/bin/python");
    assert!(
        venv.exists(),
        "no MCP client: `make test` (or `make mcp-client`) installs the MCP Python SDK into \
         .venv-mcp and sets PYWARD_MCP_PYTHON; or set it to a Python with `mcp` installed"
    );
    venv
}

/// Runs `script args...` with the client's Python; its stdout, or a failure with both
/// streams.
fn client(script: &str, args: &[&Path]) -> String {
    let out = Command::new(client_python())
        .arg(root().join(script))
        .args(args)
        .output()
        .expect("the MCP client's Python starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{script} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn pyward() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_pyward"))
}

/// The client's code for the figure and for the failure, from client.py itself.
fn client_code(name: &str) -> String {
    let source = std::fs::read_to_string(root().join("tests/mcp/client.py")).unwrap();
    let start = source.find(&format!("{name} = \"\"\"")).unwrap() + name.len() + 6;
    let end = start + source[start..].find("\"\"\"").unwrap();
    source[start..end].to_string()
}

fn run_json(dir: &Path, code: &str, out: &Path) -> Value {
    let script = dir.join("job.py");
    std::fs::write(&script, code).unwrap();
    let run = Command::new(pyward())
        .args(["run", "--json", "--no-record", "--src"])
        .arg(root().join("examples/data"))
        .arg("--out")
        .arg(out)
        .arg(&script)
        .output()
        .unwrap();
    serde_json::from_slice(&run.stdout).unwrap()
}

#[test]
fn every_tool_through_the_python_sdk() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = root().join("examples/data");
    let stdout = client(
        "tests/mcp/client.py",
        &[Path::new("tools"), pyward(), &data, &out],
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();

    // The linked figure is the file `pyward run` writes for the same code.
    let figure = client_code("FIGURE");
    let run_out = dir.path().join("run.png");
    let report = run_json(dir.path(), &figure, &run_out);
    assert_eq!(report["status"], "ok", "{report}");
    let linked = std::fs::read(summary["figure_file"].as_str().unwrap()).unwrap();
    assert!(
        linked == std::fs::read(&run_out).unwrap(),
        "the MCP figure differs from pyward run's"
    );

    // A failure's text is exactly the feedback `pyward run` reports.
    let wrong = figure.replace("['revenue']", "['Revenue']");
    let report = run_json(dir.path(), &wrong, &dir.path().join("wrong.png"));
    assert_eq!(report["status"], "python_error", "{report}");
    assert_eq!(summary["failure_text"], report["feedback"]);
    // A cancelled call's worker was replaced: the next figure did not wait for the
    // spinning job's 60 s deadline.
    assert!(
        summary["after_cancel_seconds"].as_f64().unwrap() < 20.0,
        "{summary}"
    );
    // Each figure call is a run record that `pyward replay` runs again to the same bytes
    // (the cancelled call is not recorded).
    let runs: Vec<PathBuf> = std::fs::read_dir(summary["runs"].as_str().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for run in &runs {
        let replay = Command::new(pyward())
            .arg("replay")
            .arg(run)
            .output()
            .unwrap();
        assert!(
            replay.status.success(),
            "{}",
            String::from_utf8_lossy(&replay.stdout)
        );
    }
    assert!(
        summary["huge_code_text"]
            .as_str()
            .unwrap()
            .contains("too large"),
        "{summary}"
    );
}

#[test]
fn malformed_frames_and_a_closed_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let data = root().join("examples/data");
    let stdout = client(
        "tests/mcp/client.py",
        &[Path::new("raw"), pyward(), &data, &dir.path().join("out")],
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    // The spinning job was cancelled when stdin closed, well before its 30 s deadline.
    assert!(
        summary["exit_seconds"].as_f64().unwrap() < 15.0,
        "{summary}"
    );
}

#[test]
fn the_agent_loop_example_ends_with_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let stdout = client("examples/mcp_agent.py", &[pyward(), &out]);
    assert!(stdout.contains("attempt 1: the tool says:"), "{stdout}");
    assert!(stdout.contains("Did you mean: 'revenue'?"), "{stdout}");
    assert!(stdout.contains("attempt 2: ok"), "{stdout}");
    let figure = std::fs::read(out.join("monthly_revenue.png")).unwrap();
    assert!(figure.starts_with(b"\x89PNG"));
}

#[test]
fn streamable_http_in_serve() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let runs = dir.path().join("runs");
    let token_file = dir.path().join("token");
    let token = "an-mcp-test-token-of-32-chars-xx";
    std::fs::write(&token_file, token).unwrap();
    let data = root().join("examples/data");
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (token_arg, runs_arg, out_arg, data_arg) =
        (path(&token_file), path(&runs), path(&out), path(&data));
    let serve = pyward_serve::Serve::start(&[
        "--workers",
        "1",
        "--timeout",
        "60",
        "--token-file",
        &token_arg,
        "--records",
        &runs_arg,
        "--mcp-out",
        &out_arg,
        "--mcp-src",
        &data_arg,
    ]);
    let stdout = client(
        "tests/mcp/client.py",
        &[
            Path::new("http"),
            Path::new(&serve.url),
            &out,
            Path::new(token),
        ],
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();

    // The same figure and the same feedback as `pyward run` gives.
    let figure = client_code("FIGURE");
    let run_out = dir.path().join("run.png");
    assert_eq!(run_json(dir.path(), &figure, &run_out)["status"], "ok");
    let linked = std::fs::read(summary["figure_file"].as_str().unwrap()).unwrap();
    assert!(linked == std::fs::read(&run_out).unwrap());
    let wrong = figure.replace("['revenue']", "['Revenue']");
    let report = run_json(dir.path(), &wrong, &dir.path().join("wrong.png"));
    assert_eq!(summary["failure_text"], report["feedback"]);

    // The cancelled spin's worker was killed and a new one forked (one worker: the next
    // call had no other), well before the 60 s deadline; so was the spin of a client
    // that closed its connection mid-call.
    for after in ["after_cancel_seconds", "after_disconnect_seconds"] {
        assert!(
            summary[after].as_f64().unwrap() < 20.0,
            "{after}: {summary}"
        );
    }
    let get = |route: &str| {
        let mut answer = pyward_serve::agent()
            .get(&format!("{}{route}", serve.url))
            .header("Authorization", &format!("Bearer {token}"))
            .call()
            .unwrap();
        answer.body_mut().read_to_string().unwrap()
    };
    let pool: Value = serde_json::from_str(&get("/v1/pool")).unwrap();
    assert!(pool["stats"]["forked"].as_u64().unwrap() >= 3, "{pool}");
    // Both are counted like a /v1 job whose client left.
    let metrics = get("/metrics");
    assert!(
        metrics.contains("pyward_jobs_total{status=\"client_disconnected\"} 2\n"),
        "{metrics}"
    );

    // Loopback Host and Origin pass; a foreign one is refused, as is a missing token.
    let status = &summary["status"];
    assert_eq!(status["loopback"], 200, "{status}");
    assert_eq!(status["loopback_origin"], 200, "{status}");
    for refused in ["foreign_host", "rebound_host", "foreign_origin"] {
        assert_eq!(status[refused], 403, "{refused}: {status}");
    }
    assert_eq!(status["no_token"], 401, "{status}");
    assert_eq!(status["wrong_token"], 401, "{status}");

    // Each answered figure call is a run record of the server (the cancelled ones are
    // not).
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 4);
}

#[test]
fn a_drain_answers_the_call_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let serve = pyward_serve::Serve::start(&["--mcp-out", out.to_str().unwrap()]);
    let pid = serve.pid().to_string();
    let stdout = client(
        "tests/mcp/client.py",
        &[Path::new("drain"), Path::new(&serve.url), Path::new(&pid)],
    );
    assert!(stdout.contains("\"answered\": true"), "{stdout}");
    assert!(out.join("slow.png").exists());
}

#[test]
fn extra_hosts_need_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let run = Command::new(pyward())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--mcp-allow-host",
            "example.com",
        ])
        .arg("--mcp-out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("need --token-file"), "{stderr}");
}
