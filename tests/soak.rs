//! A bounded soak: a mixed stream with chaos kills on an elastic pool, a job that leaves
//! memory behind among the hostile ones; nothing lost, nothing leaked.
//! (`make soak` runs the full-size driver in `examples/soak.rs`.)

#[path = "../examples/soak.rs"]
mod driver;

use std::time::Duration;

#[test]
fn bounded_soak_with_chaos_loses_nothing_and_leaks_nothing() {
    let cfg = driver::SoakConfig {
        jobs: 160,
        threads: 8,
        workers: 2,
        chaos_every: Some(Duration::from_millis(4000)),
        worker_program: Some(env!("CARGO_BIN_EXE_pyward-worker").into()),
    };
    let s = driver::soak(&cfg);
    driver::print(&s);
    assert_eq!(s.sent, 160);
    assert_eq!(s.received, 160, "every job gets an answer");
    assert_eq!(s.infra_errors, 0);
    assert_eq!(s.wrong_or_missing, 0);
    assert_eq!(s.hostile_not_contained, 0);
    assert!(s.chaos_kills > 0, "the chaos thread must have fired");
    assert_eq!(s.workers_left, 0);
    assert_eq!(s.temp_dirs_left, 0);
    assert_eq!(s.fds_end, s.fds_start, "descriptors leaked");
    let pool = s.pool.expect("stats read before drop");
    assert!(
        pool.forked >= 2,
        "the pool grew or replaced workers by forks: {pool:?}"
    );
}
