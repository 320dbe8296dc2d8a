//! Bounded property tests of the host's reading of a worker's answer (the same function
//! `fuzz/fuzz_targets/answer.rs` drives): arbitrary bytes and mutated real answers never
//! panic, and whatever is accepted carries the run's nonce and stays within its limits.

use std::time::Instant;

use proptest::prelude::*;
use pyward::output_dir::check_file_name;
use pyward::protocol::answer::{read_answer, AnswerError, AnswerLimits};
use pyward::protocol::{encode_frame, write_frame, ArtifactMeta, DoneMsg, Nonce, WorkerMsg};

fn limits() -> AnswerLimits {
    AnswerLimits {
        nonce: Nonce([11, 13]),
        stdout_cap: 256,
        max_artifacts: 3,
        max_artifact_bytes: 4096,
        raw_png_limit: 4096,
    }
}

/// A well-formed answer with two artifacts, as a worker writes it.
fn real_answer() -> Vec<u8> {
    let done: DoneMsg = serde_json::from_value(serde_json::json!({
        "nonce": [11, 13], "exec_ms": 12.5, "stdout": "hi", "stdout_dropped": 0,
        "stderr": "", "error": null, "artifacts_refused": [],
        "artifacts": [
            {"name": "fig.png", "len": 5},
            {"name": "t.csv", "len": 3},
        ],
    }))
    .unwrap();
    let mut bytes = encode_frame(&WorkerMsg::Done(Box::new(done))).unwrap();
    write_frame(&mut bytes, b"\x89PNG\n").unwrap();
    write_frame(&mut bytes, b"a,b").unwrap();
    bytes
}

/// Asserts what any accepted answer must satisfy.
fn accepted_within_limits(bytes: &[u8]) -> Result<(), TestCaseError> {
    let limits = limits();
    match read_answer(&mut &bytes[..], &limits, Instant::now()) {
        Ok((done, artifacts)) => {
            prop_assert_eq!(done.nonce, limits.nonce);
            prop_assert!(done.exec_ms.is_finite() && done.exec_ms >= 0.0);
            prop_assert!(done.stdout.len() <= limits.stdout_cap);
            prop_assert_eq!(artifacts.len(), done.artifacts.len());
            prop_assert!(artifacts.len() <= limits.max_artifacts);
            for (a, meta) in artifacts.iter().zip(&done.artifacts) {
                prop_assert!(check_file_name(&a.name).is_ok(), "{:?}", a.name);
                prop_assert_eq!(a.bytes.len() as u64, meta.len);
                prop_assert!(meta.len <= limits.max_artifact_bytes);
            }
        }
        Err(AnswerError::Violation(why)) => prop_assert!(!why.is_empty()),
        Err(AnswerError::Closed(_) | AnswerError::Timeout) => {}
    }
    Ok(())
}

#[test]
fn the_real_answer_is_accepted() {
    let bytes = real_answer();
    let (done, artifacts) = read_answer(&mut &bytes[..], &limits(), Instant::now()).unwrap();
    assert_eq!(done.stdout, "hi");
    assert_eq!(artifacts[1].bytes, b"a,b");
}

#[test]
fn an_artifact_named_after_a_path_is_never_accepted() {
    for name in [
        "/tmp/pyward-canary",
        "../../../canary.csv",
        "a/../../b",
        "..",
    ] {
        let done: DoneMsg = serde_json::from_value(serde_json::json!({
            "nonce": [11, 13], "exec_ms": 1.0, "stdout": "", "stdout_dropped": 0,
            "stderr": "", "error": null, "artifacts_refused": [],
            "artifacts": [ArtifactMeta { name: name.into(), len: 1, raw: None }],
        }))
        .unwrap();
        let mut bytes = encode_frame(&WorkerMsg::Done(Box::new(done))).unwrap();
        write_frame(&mut bytes, b"x").unwrap();
        let got = read_answer(&mut &bytes[..], &limits(), Instant::now());
        assert!(
            matches!(got, Err(AnswerError::Violation(_))),
            "{name}: {got:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        accepted_within_limits(&bytes)?;
    }

    #[test]
    fn mutated_answers_never_panic_nor_exceed_the_limits(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..8)
    ) {
        let mut bytes = real_answer();
        for (at, byte, op) in edits {
            let at = at % (bytes.len() + 1);
            match op {
                0 if at < bytes.len() => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ if at < bytes.len() => { bytes.remove(at); }
                _ => {}
            }
        }
        accepted_within_limits(&bytes)?;
    }
}
