//! Run records, replay and the repair loop, with the real interpreter.

use crate::common;

use common::{builder, examples_data};
use pyward::record::{self, Recorder};
use pyward::Job;

/// The scripted "model" of the repair example: a wrong column, a banned import, a fix.
const ATTEMPTS: [&str; 3] = [
    "df = pd.read_csv(srcpath('sales.csv'))\ndf.groupby('regoin')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
    "import tempfile\ndf = pd.read_csv(tempfile.gettempdir() + '/sales.csv')\ndf.groupby('region')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
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
        seen[1].2.contains("tempfile") && seen[1].2.contains("srcpath"),
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
    // What the figure showed is kept with it.
    let figure = report.run.as_ref().unwrap().artifacts[0].figure.as_ref();
    assert!(figure.is_some_and(|f| !f.axes.is_empty()), "{figure:?}");
    assert!(report.description.is_some());
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

    // Every attempt replays, on a pool set up from the record, to the same status and
    // byte-identical artifacts.
    let replay = record::replay(&dir).unwrap();
    let statuses: Vec<&str> = replay.attempts.iter().map(|a| a.status.as_str()).collect();
    assert_eq!(statuses, ["python_error", "rejected", "ok"]);
    let last = &replay.attempts[2].artifacts;
    assert_eq!(last.len(), 1);
    assert_eq!(last[0].name, "figure.png");
    assert_eq!(last[0].verdict, record::ArtifactMatch::Identical);
    assert!(replay.identical(), "{replay:?}");

    // A figure whose bytes changed is named as different.
    let mut changed = rec.clone();
    changed.attempts[2].artifacts[0].sha256 = "0".repeat(64);
    std::fs::write(
        dir.join("record.json"),
        serde_json::to_vec(&changed).unwrap(),
    )
    .unwrap();
    let replay = record::replay(&dir).unwrap();
    assert_eq!(
        replay.attempts[2].artifacts[0].verdict,
        record::ArtifactMatch::Different
    );
    assert!(!replay.identical());
}
