//! Replay from the command line: identical for an unchanged run (also for a record of
//! the older format), different for changed code, refused for a tampered input.

use std::path::Path;
use std::process::Command;

use pyward::record::{self, ReplayError};

fn pyward(args: &[&str], dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pyward"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn cli_replay_is_identical_refuses_tampered_inputs_and_reports_changed_code() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("v.csv"), "x,y\n1,2\n2,4\n3,1\n").unwrap();
    let script = work.path().join("job.py");
    std::fs::write(&script, "d = pd.read_csv(srcpath('v.csv'))\nplt.plot(d.x, d.y + np.random.rand(3))\nplt.savefig(OUT)\n").unwrap();
    let (code, _) = pyward(&["run", "job.py", "--src", "data"], work.path());
    assert_eq!(code, 0);
    let run_dir = std::fs::read_dir(work.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let run = run_dir.to_str().unwrap();

    let (code, listing) = pyward(&["runs"], work.path());
    assert_eq!(code, 0);
    assert!(
        listing.contains("[ok]") && listing.contains("job.png"),
        "{listing}"
    );

    let (code, out) = pyward(&["replay", run], work.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("identical") && !out.contains("DIFFERENT"),
        "{out}"
    );

    // A version-1 record (the outcome in its older serde form, seed at its top) still
    // replays identically: the seed is found where both versions keep it.
    let rec_path = run_dir.join("record.json");
    let original = std::fs::read_to_string(&rec_path).unwrap();
    let mut v1: serde_json::Value = serde_json::from_str(&original).unwrap();
    v1["version"] = 1.into();
    let seed = v1["attempts"][0]["outcome"]["seed"].clone();
    assert!(seed.is_u64());
    v1["attempts"][0]["outcome"] = serde_json::json!({
        "result": {"Ok": [{"name": "job.png", "media_type": "image/png"}]},
        "stdout": "", "stdout_dropped": 0, "seed": seed, "gate_enabled": true,
    });
    std::fs::write(&rec_path, v1.to_string()).unwrap();
    let (code, out) = pyward(&["replay", run], work.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("identical") && !out.contains("DIFFERENT"),
        "{out}"
    );
    std::fs::write(&rec_path, &original).unwrap();

    // Change the code in the record: replay runs it and reports the figure as different.
    std::fs::write(
        &rec_path,
        original.replace("d.y + np.random.rand(3)", "d.y * 2"),
    )
    .unwrap();
    let (code, out) = pyward(&["replay", run], work.path());
    assert_eq!(code, 1);
    assert!(out.contains("DIFFERENT"), "{out}");
    std::fs::write(&rec_path, &original).unwrap();

    // Tamper with an input: replay refuses to run at all.
    std::fs::write(data.join("v.csv"), "x,y\n1,2\n2,4\n3,9\n").unwrap();
    let (code, out) = pyward(&["replay", run], work.path());
    assert_eq!(code, 1);
    assert!(out.contains("refused") && out.contains("v.csv"), "{out}");
    let rec = record::load(&run_dir).unwrap();
    assert!(matches!(
        record::replay_job(&run_dir, &rec, 0),
        Err(ReplayError::InputChanged { .. })
    ));
}
