//! The one JSON contract from the library side: a real outcome of every status becomes a
//! report that validates against the published schema, and an `Outcome`'s own serde form
//! is that report with the artifact bytes embedded (nothing silently dropped).

use crate::common;

use std::time::Duration;

use common::{assert_valid_report, builder};
use pyward::gate::Policy;
use pyward::report::{Report, SCHEMA_VERSION};
use pyward::{Error, Job, Outcome};

fn report_json(outcome: &Outcome) -> serde_json::Value {
    let value = serde_json::to_value(Report::from_outcome(outcome, false)).unwrap();
    assert_valid_report(&value);
    value
}

#[test]
fn every_status_is_a_schema_valid_report() {
    // Gate off for the one job that needs real `os` to crash its worker; every other
    // job passes the gate as it would anyway.
    let exec = builder()
        .timeout(Duration::from_secs(3))
        .memory_limit_mib(700)
        .scratch_limit(8 << 20, 200)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let gated = builder().build().unwrap();
    let cases: Vec<(&str, &pyward::Executor, &str)> = vec![
        ("ok", &gated, "plt.plot([1, 2]); plt.savefig(OUT)"),
        ("python_error", &gated, "x = {}\nx['missing']"),
        ("invalid_output", &gated, "print('no figure')"),
        ("rejected", &gated, "import subprocess"),
        ("bad_input", &gated, "x = 1\0"),
        ("timeout", &exec, "while True:\n    pass"),
        ("memory_exceeded", &exec, "x = np.ones((1 << 30,))"),
        ("crashed", &exec, "srcpath.__globals__['os'].abort()"),
        (
            "scratch_full",
            &exec,
            "for i in range(20):\n    np.zeros(1 << 20).tofile(f'big{i}.bin')",
        ),
    ];
    for (status, executor, code) in cases {
        let outcome = executor.run(Job::new(code)).unwrap();
        let v = report_json(&outcome);
        assert_eq!(v["status"], status, "{code}: {v:#}");
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(v["kind"], "run");
        if status != "ok" {
            assert_eq!(v["error"]["kind"], status);
            assert!(!v["feedback"].as_str().unwrap().is_empty());
        }
    }

    // Cancelled, from the async API.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = rt.block_on(async {
        let future = gated.run_async(Job::new("while True:\n    pass"));
        let handle = future.cancel_handle();
        let task = tokio::spawn(future);
        common::reaches(&gated, "a worker takes the job", |s| s.busy >= 1).await;
        handle.cancel();
        task.await.unwrap().unwrap()
    });
    assert_eq!(report_json(&outcome)["status"], "cancelled");

    // Infrastructure and input errors.
    let v = serde_json::to_value(Report::from_error(
        &Error::QueueFull {
            depth: 4,
            workers: 2,
            retry_after: Duration::from_millis(20),
        },
        true,
    ))
    .unwrap();
    assert_valid_report(&v);
    assert_eq!(v["status"], "infrastructure_error");
    assert_eq!(v["error"]["kind"], "queue_full");
    let err = gated
        .run(Job::new("plt.savefig(OUT)").src_dir("/nonexistent-input-dir"))
        .unwrap_err();
    let v = serde_json::to_value(Report::from_error(&err, true)).unwrap();
    assert_valid_report(&v);
    assert_eq!(v["status"], "input_error", "{v:#}");
}

#[test]
fn an_outcome_serializes_as_its_report_with_the_bytes() {
    let exec = builder().build().unwrap();
    let outcome = exec
        .run(Job::new("plt.plot([2, 1, 3]); plt.savefig(OUT)"))
        .unwrap();
    let v = serde_json::to_value(&outcome).unwrap();
    assert_valid_report(&v);
    let report: Report = serde_json::from_value(v).unwrap();
    let artifact = &report.run.as_ref().unwrap().artifacts[0];
    assert_eq!(artifact.data().unwrap(), outcome.artifacts()[0].bytes);
    assert_eq!(
        artifact.sha256,
        pyward::record::sha256_hex(&outcome.artifacts()[0].bytes)
    );
}
