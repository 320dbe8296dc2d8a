//! Run records, replay and the repair loop, with the real interpreter.

mod common;

use std::path::Path;
use std::process::Command;

use common::{builder, examples_data};
use pyward::record::{self, Recorder, ReplayError};
use pyward::Job;

/// The scripted "model" of the repair example: a wrong column, a banned import, a fix.
const ATTEMPTS: [&str; 3] = [
    "df = pd.read_csv(srcpath('sales.csv'))\ndf.groupby('regoin')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
    "import os\ndf = pd.read_csv(os.path.join(SRC, 'sales.csv'))\ndf.groupby('region')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
    "df = pd.read_csv(srcpath('sales.csv'))\ndf.groupby('region')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
];

#[test]
fn repair_loop_reruns_every_attempt_through_the_gate_and_records_all_of_them() {
    std::env::set_var("PYWARD_RECORD_CANARY", "canary-51d2");
    let exec = builder().preload_pandas(true).build().unwrap();
    let job = Job::new(ATTEMPTS[0])
        .src_dir(examples_data())
        .task("revenue per region as a bar chart");
    let mut next = ATTEMPTS[1..].iter();
    let mut seen = Vec::new();
    let repaired = exec
        .run_with_repair(job.clone(), 5, |fb| {
            assert_eq!(fb.task, Some("revenue per region as a bar chart"));
            seen.push((fb.attempt, fb.outcome.status().to_string(), fb.text.clone()));
            next.next().map(|s| s.to_string())
        })
        .unwrap();
    let statuses: Vec<&str> = repaired
        .attempts
        .iter()
        .map(|a| a.outcome.status())
        .collect();
    assert_eq!(statuses, ["python_error", "rejected", "ok"]);
    assert!(repaired.is_success());
    assert!(
        seen[0].2.contains("KeyError") && seen[0].2.contains("regoin"),
        "{}",
        seen[0].2
    );
    assert!(
        seen[1].2.contains("os") && seen[1].2.contains("srcpath"),
        "{}",
        seen[1].2
    );

    let runs = tempfile::tempdir().unwrap();
    let dir = Recorder::new(runs.path())
        .record(&exec, &job, &repaired.attempts)
        .unwrap();
    let rec = record::load(&dir).unwrap();
    assert_eq!(rec.attempts.len(), 3);
    assert_eq!(
        rec.task.as_deref(),
        Some("revenue per region as a bar chart")
    );
    assert_eq!(rec.policy_hash, exec.policy().hash());
    assert!(rec
        .inputs
        .iter()
        .any(|i| i.name == "sales.csv" && i.sha256.len() == 64));
    assert_eq!(rec.attempts[2].artifacts[0].name, "figure.png");
    let report = rec.attempts[2]
        .report()
        .expect("a version-2 record holds reports");
    let worker = report.run.as_ref().unwrap().worker.as_ref().unwrap();
    assert!(worker.versions.numpy.starts_with('2'));
    for attempt in &rec.attempts {
        common::assert_valid_report(&attempt.outcome);
        assert_eq!(attempt.report().unwrap().status, attempt.status);
    }
    let text = std::fs::read_to_string(dir.join("record.json")).unwrap();
    assert!(
        !text.contains("canary-51d2"),
        "the host's environment leaked into the record"
    );
    // Written atomically: no staging directory is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(runs.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty());

    // Every attempt replays to the same status and byte-identical artifacts.
    for i in 0..rec.attempts.len() {
        let outcome = exec
            .run(record::replay_job(&dir, &rec, i).unwrap())
            .unwrap();
        assert_eq!(outcome.status(), rec.attempts[i].status);
        for want in &rec.attempts[i].artifacts {
            let got = outcome.artifact(&want.name).unwrap();
            assert_eq!(
                record::sha256_hex(&got.bytes),
                want.sha256,
                "attempt {i} {} differs",
                want.name
            );
        }
    }
}

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
