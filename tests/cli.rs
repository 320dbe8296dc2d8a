//! The `pyward` command line: JSON shapes, exit codes, and the two example figures.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn pyward() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pyward"))
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn write(dir: &Path, name: &str, code: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, code).unwrap();
    p
}

fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn check_json_reports_violations_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "good.py",
        "plt.plot([1, 2]); plt.savefig(OUT)\n",
    );
    let out = pyward()
        .args(["check", "--json"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_lines(&out.stdout)[0]["status"], "ok");

    let bad = write(dir.path(), "bad.py", "import os\nos.system('true')\n");
    let out = pyward()
        .args(["check", "--json"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["status"], "rejected");
    let first = &v["violations"][0];
    assert_eq!(first["line"], 1);
    assert!(first["rule"].is_string() && first["col"].is_number() && first["message"].is_string());
    assert!(v["feedback"].as_str().unwrap().contains("plt.savefig(OUT)"));

    let missing = pyward()
        .args(["check", "/nonexistent/x.py"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let usage = pyward().args(["run"]).output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn run_json_renders_both_examples_and_reports_failures() {
    let dir = tempfile::tempdir().unwrap();
    let broken = write(dir.path(), "broken.py", "x = {}\nprint(x['nope'])\n");
    let out = pyward()
        .args(["run", "--json", "--src"])
        .arg(examples().join("data"))
        .arg("--out")
        .arg(dir.path())
        .arg(examples().join("plot_sales.py"))
        .arg(examples().join("plot_scan.py"))
        .arg(&broken)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3);
    for v in &lines[..2] {
        assert_eq!(v["status"], "ok", "{v}");
        let art = &v["artifacts"][0];
        let path = PathBuf::from(art["path"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, art["bytes"].as_u64().unwrap());
        assert!(bytes.starts_with(b"\x89PNG"));
        for k in ["queue", "gate", "exec", "total"] {
            assert!(v["timings_ms"][k].is_number(), "{k}");
        }
    }
    let err = &lines[2];
    assert_eq!(err["status"], "python_error");
    assert_eq!(err["error"]["type"], "KeyError");
    assert_eq!(err["error"]["line"], 2);
    assert!(err["feedback"].as_str().unwrap().contains("KeyError"));
}
