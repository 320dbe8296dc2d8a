//! `Isolation::Fresh`: every job runs in a process that never ran a job, and nothing one
//! job does to its process reaches the next. The same probe under `Reuse` shows what
//! the mode prevents (so the probe itself can fail).

use crate::common;

use std::time::{Duration, Instant};

use common::{builder, expect_ok, process_alive};
use pyward::gate::Policy;
use pyward::{Isolation, Job, Outcome, WorkerInfo};

/// With the gate off, leaves a mark in the process: a global of a module the state
/// guard does not sweep, `encodings`, outside the allowed packages (module attributes
/// are read-only to jobs, which is how `Reuse` stops this with the gate on; here the
/// job reaches past that through the prelude's real `sys`).
const LEAVE_MARKS: &str =
    "srcpath.__globals__['sys'].modules['encodings'].carry_marker = 'leaked'\n\
                           plt.plot([1, 2]); plt.savefig(OUT)\n";

const READ_MARKS: &str =
    "print(getattr(srcpath.__globals__['sys'].modules['encodings'], 'carry_marker', None))\n\
     plt.plot([2, 1]); plt.savefig(OUT)\n";

fn run_ok(exec: &pyward::Executor, code: &str) -> (Outcome, WorkerInfo) {
    let o = exec.run(Job::new(code)).unwrap();
    expect_ok(&o);
    let w = o.worker.clone().unwrap();
    (o, w)
}

fn wait_gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while process_alive(pid) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Leaves the mark in one job and reads it in the next, on a one-worker pool.
fn mark_then_read(isolation: Isolation) -> (pyward::Executor, WorkerInfo, Outcome, WorkerInfo) {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .isolation(isolation)
        .build()
        .unwrap();
    let (_, first) = run_ok(&exec, LEAVE_MARKS);
    let (read, second) = run_ok(&exec, READ_MARKS);
    (exec, first, read, second)
}

#[test]
fn fresh_isolation_runs_each_job_in_an_unused_process_and_nothing_carries_over() {
    let (exec, first, read, second) = mark_then_read(Isolation::Fresh);
    assert_eq!(read.stdout.trim(), "None", "state crossed jobs");
    assert_ne!(first.pid, second.pid);
    assert_eq!((first.jobs_before, second.jobs_before), (0, 0));
    assert!(wait_gone(first.pid), "the used worker outlived its job");
    assert_eq!(
        first.sandbox, second.sandbox,
        "a fresh worker is confined alike"
    );

    // Replacements come from the zygote: warm, and children of the template (asked of
    // the job itself: the worker is gone by the time the answer is read).
    let (o, third) = run_ok(
        &exec,
        "print(srcpath.__globals__['os'].getppid())\nplt.plot([1]); plt.savefig(OUT)\n",
    );
    let zygote = exec.zygote_pid().expect("the zygote runs");
    assert_eq!(o.stdout.trim(), zygote.to_string());
    assert_eq!(exec.last_recycle(0).map(|r| r.1), Some(true));
    assert_eq!(third.jobs_before, 0);
}

#[test]
fn reuse_isolation_lets_process_state_through_which_is_what_fresh_prevents() {
    let (_exec, first, read, second) = mark_then_read(Isolation::Reuse);
    assert_eq!(first.pid, second.pid);
    assert_eq!(second.jobs_before, 1);
    assert_eq!(read.stdout.trim(), "leaked");
}

#[test]
fn after_a_timeout_in_fresh_isolation_the_next_job_still_gets_an_unused_process() {
    let exec = builder().isolation(Isolation::Fresh).build().unwrap();
    let spin = Job::new("while True:\n    pass\n").timeout(Duration::from_millis(300));
    let o = exec.run(spin).unwrap();
    assert!(matches!(
        o.failure(),
        Some(pyward::JobFailure::Timeout { .. })
    ));
    let killed = o.worker.unwrap().pid;
    let (_, next) = run_ok(&exec, "plt.plot([1, 2]); plt.savefig(OUT)\n");
    assert_ne!(next.pid, killed);
    assert_eq!(next.jobs_before, 0);
    assert!(!process_alive(killed));
}
