//! The supervisor reads a job's answer from a worker that may be running hostile code:
//! any bytes must end in an accepted, checked answer or a typed refusal, never a panic,
//! and never an allocation beyond what the run's limits allow (small limits here, so
//! that a lying length is refused, not allocated).
#![no_main]

use std::time::Instant;

use libfuzzer_sys::fuzz_target;
use pyward::output_dir::check_file_name;
use pyward::protocol::answer::{read_answer, AnswerLimits};
use pyward::protocol::Nonce;
use pyward::JOB_STDERR_CAP;

fuzz_target!(|data: &[u8]| {
    let limits = AnswerLimits {
        nonce: Nonce([1, 2]),
        stdout_cap: 1 << 10,
        max_artifacts: 4,
        max_artifact_bytes: 1 << 16,
        raw_png_limit: 1 << 16,
    };
    let mut src = data;
    if let Ok((done, artifacts)) = read_answer(&mut src, &limits, Instant::now()) {
        // What was accepted is within the limits, whatever the bytes said.
        assert_eq!(done.nonce, limits.nonce);
        assert!(done.stdout.len() <= limits.stdout_cap);
        assert!(done.stderr.len() <= JOB_STDERR_CAP);
        assert!(artifacts.len() <= limits.max_artifacts);
        for a in &artifacts {
            assert!(check_file_name(&a.name).is_ok());
        }
    }
});
