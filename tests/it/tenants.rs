//! Tenants: a worker that ran one tenant's code never runs another's. Jobs of one tenant
//! reuse a warm worker; a job of another tenant, or one without a tenant (its own), gets
//! a process that never ran a job. Pids in the outcomes say which process ran what.

use crate::common;

use std::time::Duration;

use common::{expect_ok, process_alive, wait_until};
use pyward::{Executor, Isolation, Job};

/// A one-worker pool with the default tenancy (no reuse across tenants).
fn pool() -> Executor {
    common::builder()
        .reuse_across_tenants(false)
        .workers(1)
        .build()
        .unwrap()
}

fn pid_of(exec: &Executor, job: Job) -> u32 {
    let outcome = exec.run(job).unwrap();
    expect_ok(&outcome);
    outcome.worker.as_ref().unwrap().pid
}

const FIGURE: &str = "plt.plot([1, 2]); plt.savefig(OUT)";

#[test]
fn two_tenants_alternating_never_share_a_process_and_one_tenant_reuses_its_own() {
    let exec = pool();
    let a1 = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    let a2 = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    assert_eq!(a1, a2, "a tenant's consecutive jobs reuse its idle worker");
    let b1 = pid_of(&exec, Job::new(FIGURE).tenant("b"));
    assert_ne!(b1, a1, "tenant b got a's worker");
    assert!(
        wait_until(Duration::from_secs(5), || !process_alive(a1)),
        "a's worker was replaced, not kept beside b's"
    );
    let a3 = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    let b2 = pid_of(&exec, Job::new(FIGURE).tenant("b"));
    let pids = [a1, b1, a3, b2];
    for (i, p) in pids.iter().enumerate() {
        for q in &pids[i + 1..] {
            assert_ne!(p, q, "two tenants shared a process: {pids:?}");
        }
    }
    assert!(exec.stats().tenant_switches >= 3);
    assert!(!exec.stats().reuse_across_tenants);
}

#[test]
fn a_job_without_a_tenant_runs_in_a_process_of_its_own() {
    let exec = pool();
    let first = pid_of(&exec, Job::new(FIGURE));
    // Sent SIGKILL before the answer went back; gone within moments.
    assert!(
        wait_until(Duration::from_secs(5), || !process_alive(first)),
        "the worker of an untenanted job outlived it"
    );
    let second = pid_of(&exec, Job::new(FIGURE));
    let tenant = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    assert_ne!(first, second);
    assert_ne!(second, tenant);
    // The next job of "a" reuses a's worker, and an untenanted job does not get it.
    assert_eq!(pid_of(&exec, Job::new(FIGURE).tenant("a")), tenant);
    assert_ne!(pid_of(&exec, Job::new(FIGURE)), tenant);
}

/// What one tenant leaves in its process never reaches another, whatever the
/// between-job reset forgets: an entry tenant a puts in a class-level container
/// (matplotlib's legend handler map, a dict the class holds) is never read by b,
/// because b never runs in a's process.
#[test]
fn what_a_tenant_leaves_in_its_process_never_reaches_the_next_tenant() {
    let exec = pool();
    let leave = "from matplotlib.legend import Legend\nLegend.get_default_handler_map()['pyward_left_by_a'] = 'SECRET-OF-A'\nplt.plot([1]); plt.savefig(OUT)";
    let read = "from matplotlib.legend import Legend\nprint(Legend.get_default_handler_map().get('pyward_left_by_a', 'clean'))\nplt.plot([1]); plt.savefig(OUT)";
    let a = exec.run(Job::new(leave).tenant("a")).unwrap();
    expect_ok(&a);
    let b = exec.run(Job::new(read).tenant("b")).unwrap();
    expect_ok(&b);
    assert_eq!(b.stdout.trim(), "clean");
    assert_ne!(a.worker.unwrap().pid, b.worker.unwrap().pid);
}

#[test]
fn reuse_across_tenants_is_an_explicit_setting() {
    let exec = common::builder()
        .reuse_across_tenants(true)
        .workers(1)
        .build()
        .unwrap();
    let a = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    let b = pid_of(&exec, Job::new(FIGURE).tenant("b"));
    let none = pid_of(&exec, Job::new(FIGURE));
    assert_eq!(
        (a, a),
        (b, none),
        "one warm worker serves everyone when asked to"
    );
    assert!(exec.stats().reuse_across_tenants);
}

#[test]
fn fresh_isolation_still_gives_every_job_a_new_process() {
    let exec = common::builder()
        .reuse_across_tenants(false)
        .isolation(Isolation::Fresh)
        .workers(1)
        .build()
        .unwrap();
    let a1 = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    let a2 = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    assert_ne!(a1, a2);
}

/// The tenant boundary on its own: with the between-job state guard switched off and the
/// gate off, job A sets every key of every registry a job reaches (tests/data/cross_job)
/// and job B of another tenant reads every key at its template value, because B never
/// runs in A's process. The control: the same pair on a pool that shares workers across
/// tenants does reach B, so the switch is really off and the pair really leaks.
#[test]
fn another_tenant_reads_a_pristine_process_even_without_the_state_guard() {
    use crate::cross_job_state::{differences, pid, run, tagged, DUMP, SET_ALL};
    let guardless = |reuse_across_tenants: bool| {
        common::builder()
            .workers(1)
            .preload_pandas(true)
            .stdout_cap(1 << 20)
            .policy(pyward::gate::Policy::gate_disabled_for_testing())
            .without_state_guard_for_testing()
            .reuse_across_tenants(reuse_across_tenants)
            .build()
            .expect("pool starts")
    };

    let exec = guardless(false);
    let template = run(&exec, DUMP, "tenant-t");
    let a = run(&exec, SET_ALL, "tenant-a");
    let b = run(&exec, DUMP, "tenant-b");
    assert_ne!(pid(&a), pid(&b), "B ran in A's process");
    let diff = differences(
        &tagged(&template, "PYWARD-STATE "),
        &tagged(&b, "PYWARD-STATE "),
    );
    assert!(diff.is_empty(), "keys B read changed: {diff:#?}");
    assert!(!b.stdout.contains("PYWARD-A"), "{}", b.stdout);

    let shared = guardless(true);
    let template = run(&shared, DUMP, "tenant-t");
    let a = run(&shared, SET_ALL, "tenant-a");
    let b = run(&shared, DUMP, "tenant-b");
    assert_eq!(
        pid(&a),
        pid(&b),
        "one shared worker ran both: {:?}",
        a.retired
    );
    assert!(
        a.retired.is_none(),
        "nothing retires A's worker without the guard"
    );
    let diff = differences(
        &tagged(&template, "PYWARD-STATE "),
        &tagged(&b, "PYWARD-STATE "),
    );
    assert!(
        diff.len() > 5,
        "without the guard, sharing a worker leaks A's state into B: {diff:#?}"
    );
}

/// A worker kept warm for its tenant has a pristine fork waiting beside it, forked after
/// the job's answer: the next job of another tenant takes it (no fork in its latency),
/// and a new spare is forked for the one after.
#[test]
fn a_spare_waits_for_the_next_tenant() {
    let exec = pool();
    let a = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    assert!(
        wait_until(Duration::from_secs(30), || exec.stats().spares == 1),
        "no spare forked beside a's worker: {:?}",
        exec.stats()
    );
    let forked = exec.stats().forked;
    let b = pid_of(&exec, Job::new(FIGURE).tenant("b"));
    assert_ne!(a, b);
    assert_eq!(exec.stats().tenant_switches, 1);
    assert!(
        wait_until(Duration::from_secs(30), || exec.stats().spares == 1),
        "no new spare beside b's worker"
    );
    // b ran in the spare, which had been forked (and counted) before b's job: the
    // only fork since is the new spare.
    assert_eq!(exec.stats().forked, forked + 1, "{:?}", exec.stats());
    assert!(exec.worker_pids().contains(&b));
}

/// A tenant's worker is bounded as any reused worker: after `max_jobs_per_worker` jobs
/// of its tenant it is replaced, and the replacement serves the same tenant.
#[test]
fn a_tenants_worker_keeps_the_job_quota() {
    let exec = common::builder()
        .reuse_across_tenants(false)
        .max_jobs_per_worker(2)
        .workers(1)
        .build()
        .unwrap();
    let first = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    assert_eq!(pid_of(&exec, Job::new(FIGURE).tenant("a")), first);
    let third = pid_of(&exec, Job::new(FIGURE).tenant("a"));
    assert_ne!(third, first, "the quota of 2 jobs was kept past its end");
    assert_eq!(pid_of(&exec, Job::new(FIGURE).tenant("a")), third);
}
