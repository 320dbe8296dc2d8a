//! The `pyward` command line: one JSON report shape (validated against the published
//! schema), exit codes, stdin, and the two example figures.

#[path = "../../tests/common/schema.rs"]
mod schema;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use schema::assert_valid_report;
use serde_json::Value;

fn pyward() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pyward"))
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn write(dir: &Path, name: &str, code: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, code).unwrap();
    p
}

/// Every line of a `--json` output, each validated against the report schema.
fn json_lines(stdout: &[u8]) -> Vec<Value> {
    let lines: Vec<Value> = String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!lines.is_empty(), "no JSON printed");
    for v in &lines {
        assert_valid_report(v);
    }
    lines
}

/// Runs `pyward` with `stdin` as its standard input.
fn with_stdin(mut cmd: Command, stdin: &str) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
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
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["status"], "ok");
    assert_eq!(v["kind"], "check");
    assert_eq!(v["schema_version"], 1);

    let bad = write(
        dir.path(),
        "bad.py",
        "import tempfile\ntempfile.mkstemp()\n",
    );
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
    // The refused import's alternative, and the rules that apply to it.
    let feedback = v["feedback"].as_str().unwrap();
    assert!(feedback.contains("listdir()"), "{feedback}");
    assert!(feedback.contains("Allowed imports"), "{feedback}");
    assert!(
        v.get("artifacts").is_none(),
        "a check report has no run fields"
    );

    // Not UTF-8: bad_input, its message said once.
    let latin = dir.path().join("latin.py");
    std::fs::write(&latin, b"x = '\xe9'\n").unwrap();
    let out = pyward()
        .args(["check", "--json"])
        .arg(&latin)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["status"], "bad_input");
    let message = v["error"]["message"].as_str().unwrap();
    assert_eq!(message.matches("bad input").count(), 1, "{message}");

    // From stdin.
    let mut cmd = pyward();
    cmd.args(["check", "--json", "-"]);
    let out = with_stdin(cmd, "import socket\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_lines(&out.stdout)[0]["status"], "rejected");

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
        .arg("--runs")
        .arg(dir.path().join("runs"))
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

#[test]
fn run_reads_stdin_and_prints_the_record_it_wrote_and_the_job_s_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = pyward();
    cmd.args(["run", "--json", "-"]).current_dir(dir.path());
    let out = with_stdin(cmd, "plt.plot([3, 1, 2])\nplt.savefig(OUT)\n");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["status"], "ok");
    assert_eq!(v["file"], "-");
    let art = &v["artifacts"][0];
    assert_eq!(art["path"], "figure.png");
    let bytes = std::fs::read(dir.path().join("figure.png")).unwrap();
    assert_eq!(art["sha256"], pyward::record::sha256_hex(&bytes));
    assert!(
        art.get("data_base64").is_none(),
        "written to a file, not embedded"
    );
    let record = v["record"].as_str().expect("a record was written");
    assert!(dir.path().join(record).join("record.json").is_file());

    // The text form names the record too.
    let mut cmd = pyward();
    cmd.args(["run", "-"]).current_dir(dir.path());
    let out = with_stdin(
        cmd,
        "import warnings\nwarnings.warn('mind the gap')\nplt.plot([1, 2])\nplt.savefig(OUT)\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("record: runs/"), "{text}");
    // A job that ended well shows its warnings too.
    assert!(
        text.contains("  stderr: ") && text.contains("UserWarning: mind the gap"),
        "{text}"
    );
}

/// A refused file is answered from the gate alone: no pool is warmed for it. The proof:
/// the worker program given is not a worker at all, and the run still says `rejected`.
#[test]
fn the_gate_runs_before_any_pool_is_warmed() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.py", "import subprocess\n");
    let out = pyward()
        .args(["run", "--json", "--no-record"])
        .arg(&bad)
        .env("PYWARD_WORKER", "/bin/false")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["status"], "rejected");
    assert_eq!(v["kind"], "run");
    assert!(v["worker"].is_null() && v["timings_ms"].is_null());
}

#[test]
fn infrastructure_and_input_errors_are_reports_with_their_own_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "good.py",
        "plt.plot([1, 2])\nplt.savefig(OUT)\n",
    );

    // The pool cannot start: still one JSON report per file, exit 3.
    let out = pyward()
        .args(["run", "--json", "--no-record"])
        .arg(&good)
        .arg(&good)
        .env("PYWARD_WORKER", "/bin/false")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 2);
    for v in &lines {
        assert_eq!(v["status"], "infrastructure_error");
        assert_eq!(v["error"]["kind"], "worker_startup");
    }

    // An input that leaves --src: input_error (not bad_input, which is the code's), exit 2.
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", src.join("leak.txt")).unwrap();
    let out = pyward()
        .args(["run", "--json", "--no-record", "--src"])
        .arg(&src)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["status"], "input_error");
    assert_eq!(v["error"]["kind"], "invalid_job");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("leak.txt"), "{message}");

    // A file that cannot be read: input_error, exit 2, and the JSON still comes.
    let out = pyward()
        .args(["run", "--json", "--no-record"])
        .arg(dir.path().join("missing.py"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_lines(&out.stdout)[0]["status"], "input_error");

    // Usage errors are 2.
    for args in [
        &["run", "--workers", "0", "x.py"][..],
        &["run", "--timeout", "0", "x.py"],
    ] {
        let out = pyward().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// `PYWARD_PYTHON` reaches the CLI (and `doctor` says which Python it uses).
#[test]
fn pyward_python_variable_is_used_and_reported() {
    let out = Command::new(env!("CARGO_BIN_EXE_pyward"))
        .arg("doctor")
        .env("PYWARD_PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(0));
    assert!(text.contains("/nonexistent/python3"), "{text}");
}

/// Several scripts of one run that save under the same name each keep their file: the
/// first under the name, the others under it prefixed with their script's name, each
/// report saying where its file went.
#[test]
fn scripts_of_one_run_that_save_under_one_name_each_keep_their_file() {
    let dir = tempfile::tempdir().unwrap();
    let scripts: Vec<PathBuf> = [("a", "[1, 2]"), ("b", "[2, 1]"), ("c", "[3, 1]")]
        .into_iter()
        .map(|(name, data)| {
            write(
                dir.path(),
                &format!("{name}.py"),
                &format!("plt.plot({data})\nplt.savefig('figure.png')\nopen('note.txt', 'w').write('{name}')\n"),
            )
        })
        .collect();
    let out_dir = dir.path().join("out");
    let out = pyward()
        .args(["run", "--json", "--no-record", "--out"])
        .arg(format!("{}/", out_dir.display()))
        .args(&scripts)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    let mut pngs = std::collections::HashSet::new();
    for (v, name) in lines.iter().zip(["a", "b", "c"]) {
        for art in v["artifacts"].as_array().unwrap() {
            let path = PathBuf::from(art["path"].as_str().unwrap());
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(
                bytes.len() as u64,
                art["bytes"].as_u64().unwrap(),
                "{path:?}"
            );
            if art["name"] == "note.txt" {
                assert_eq!(bytes, name.as_bytes(), "{path:?}");
            } else {
                pngs.insert(bytes);
            }
        }
    }
    assert_eq!(pngs.len(), 3, "three different figures kept");
    let mut files: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "b-figure.png",
            "b-note.txt",
            "c-figure.png",
            "c-note.txt",
            "figure.png",
            "note.txt"
        ]
    );
}

#[test]
fn escape_sequences_a_job_prints_are_shown_and_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // Harmless if obeyed: clear the screen, write "echo hi" to the clipboard (OSC 52),
    // retitle the window, overwrite the line. In stdout, stderr and a figure's title of
    // a job that succeeds; in the message of one that raises, from `pyward run` and
    // `pyward bench`. (The gate's quotes of a line show it escaped already; a text file
    // that holds control characters is invalid output, and a workbook cannot hold them;
    // a bidirectional override in a table's cell is shown below.)
    let esc = "\\x1b[2J\\x1b]52;c;ZWNobyBoaQ==\\x07\\x1b]0;pwned\\x07\\rFAKE";
    let ok = write(
        dir.path(),
        "ok.py",
        &format!(
            "import warnings\nprint('{esc}')\nwarnings.warn('{esc}')\n\
             plt.plot([1, 2]); plt.title('{esc}'); plt.savefig('f.png')\n\
             pd.DataFrame({{'file': ['\\u202egnp.exe']}}).to_csv('t.csv', index=False)\n"
        ),
    );
    let raises = write(
        dir.path(),
        "raises.py",
        &format!("raise ValueError('{esc}')\n"),
    );
    let out = dir.path().join("out");
    let run = |script: &Path| {
        pyward()
            .args(["run", "--out"])
            .arg(format!("{}/", out.display()))
            .arg(script)
            .output()
            .unwrap()
    };
    let bench = pyward()
        .args(["bench", "--runs", "1", "--modes", "warm"])
        .arg(&raises)
        .output()
        .unwrap();
    let runs = [run(&ok), run(&raises), bench];
    for run in &runs {
        let shown = [run.stdout.as_slice(), &run.stderr].concat();
        let text = String::from_utf8_lossy(&shown);
        assert!(
            !shown.iter().any(|b| matches!(b, 0x1b | 0x07 | b'\r')),
            "a control character reached the terminal: {text:?}"
        );
        assert!(text.contains("\\x1b]52;c;ZWNobyBoaQ==\\x07"), "{text}");
    }
    // The table's cell, reversed on screen by a right-to-left override if obeyed.
    let ok = String::from_utf8_lossy(&runs[0].stdout);
    assert!(
        ok.contains("\\u{202e}gnp.exe") && !ok.contains('\u{202e}'),
        "{ok}"
    );
}
