//! One job must never break the next: whatever state a job leaves behind, the next job on
//! the same worker runs as on a fresh one, or the worker is retired first.

use std::time::Duration;

use crate::common;

use pyward::{Executor, Job, Outcome, RetireReason};

/// An ordinary figure whose result depends on the settings a job could have left behind:
/// it checks them itself and fails if they are not the stock ones.
const ORDINARY: &str = r#"
import warnings
assert plt.rcParams['lines.linewidth'] == 1.5, plt.rcParams['lines.linewidth']
assert len(plt.rcParams['axes.prop_cycle']) == 10
# The default family, then the CJK font `make` installs (python/prelude/fonts.py).
assert plt.rcParams['font.family'] == ['sans-serif', 'WenQuanYi Micro Hei'], plt.rcParams['font.family']
assert plt.get_fignums() == [], plt.get_fignums()
assert not plt.isinteractive()
warnings.warn('ordinary jobs may warn')
x = np.linspace(0, 1, 50)
plt.plot(x, x ** 2, label='x²')
plt.legend()
plt.savefig(OUT)
"#;

fn executor() -> Executor {
    common::builder().workers(1).build().expect("pool starts")
}

/// Runs `odd`, then the ordinary job; returns both outcomes. The ordinary one must run on
/// the same worker unless the odd one retired it.
fn odd_then_ordinary(exec: &Executor, odd: &str) -> (Outcome, Outcome) {
    let first = exec.run(Job::new(odd)).expect("infrastructure");
    assert!(
        first.worker.is_some(),
        "the odd job never ran: {:?}",
        first.feedback()
    );
    let second = exec.run(Job::new(ORDINARY)).expect("infrastructure");
    common::expect_ok(&second);
    let (a, b) = (
        first.worker.as_ref().unwrap(),
        second.worker.as_ref().unwrap(),
    );
    if first.retired.is_none() {
        assert_eq!(a.pid, b.pid, "same worker when nothing retired it");
        assert_eq!(b.jobs_before, a.jobs_before + 1);
    } else {
        assert_ne!(a.pid, b.pid, "a retired worker serves no further job");
    }
    (first, second)
}

#[test]
fn issue_11_prop_cycle_of_rgba_arrays_does_not_break_the_next_job() {
    let exec = executor();
    let odd = r#"
from cycler import cycler
colors = [np.array([1.0, 0.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0, 1.0])] * 5
plt.rcParams['axes.prop_cycle'] = cycler(color=colors)
plt.plot([0, 1], [1, 0])
plt.plot([0, 1], [0, 1])
plt.savefig(OUT)
"#;
    let (first, _) = odd_then_ordinary(&exec, odd);
    common::expect_ok(&first);
    assert!(first.retired.is_none(), "{:?}", first.retired);
}

#[test]
fn settings_changed_in_place_uncomparable_or_unhashable_are_restored() {
    let exec = executor();
    let odd = r#"
from cycler import cycler
plt.rcParams['font.family'].append('monospace')          # a list changed in place
plt.rcParams['axes.prop_cycle'] += cycler(lw=[1] * 10)    # a cycler changed in place
plt.rcParams['figure.figsize'] = np.array([5.0, 3.0])     # an array value
plt.rcParams['lines.linewidth'] = np.float64(7.0)
plt.rcParams['lines.dashed_pattern'] = np.array([3.7, 1.6])
plt.xkcd()
plt.ion()
plt.plot([1, 2, 3])
plt.savefig(OUT)
"#;
    // Twice on one worker: the values the second odd job changes in place are the
    // copies the first reset's restore installed, and the third job must still see fresh
    // ones (a restore's copies are never handed out twice).
    for _ in 0..2 {
        let (first, _) = odd_then_ordinary(&exec, odd);
        common::expect_ok(&first);
        assert!(first.retired.is_none(), "{:?}", first.retired);
    }
}

#[test]
fn a_style_context_left_open_in_a_suspended_generator_does_not_reach_the_next_job() {
    let exec = executor();
    // The generator sits inside `with plt.style.context(...)`, in a reference cycle, so
    // only the garbage collector ends it; its `finally` must not run during a later job.
    let odd = r#"
def styled():
    with plt.style.context('dark_background'):
        try:
            yield
        finally:
            plt.rcParams['lines.linewidth'] = 9.0
            plt.figure()
g = styled()
next(g)
loop = [g]
loop.append(loop)
plt.plot([1, 2])
plt.savefig(OUT)
"#;
    let (first, _) = odd_then_ordinary(&exec, odd);
    common::expect_ok(&first);
}

#[test]
fn a_half_drawn_figure_and_many_open_figures_are_closed() {
    let exec = executor();
    let odd = r#"
figs = [plt.figure() for _ in range(30)]
fig, ax = plt.subplots()
ax.set_title(r'$\frac{broken$')
try:
    fig.canvas.draw()
except ValueError:
    pass
fig2, ax2 = plt.subplots()
ax2.plot([1, 2, 3])
fig2.savefig(OUT)
"#;
    let (first, _) = odd_then_ordinary(&exec, odd);
    common::expect_ok(&first);
}

#[test]
fn warning_filters_of_strange_types_are_restored() {
    let exec = executor();
    let odd = r#"
import warnings
warnings.simplefilter('error')
warnings.filters.insert(0, 42)
warnings.filters.append(('ignore', None, 'not a class', None, 0))
plt.plot([1, 2])
plt.savefig(OUT)
"#;
    let (first, _) = odd_then_ordinary(&exec, odd);
    common::expect_ok(&first);
}

#[test]
fn a_job_that_fails_leaves_nothing_behind_either() {
    let exec = executor();
    let odd = r#"
plt.rcParams['lines.linewidth'] = 4.0
plt.figure()
raise ValueError('failed on purpose')
"#;
    let (first, _) = odd_then_ordinary(&exec, odd);
    assert_eq!(first.status(), "python_error");
}

#[test]
fn a_reset_that_fails_keeps_the_jobs_result_and_retires_the_worker() {
    let exec = executor();
    // A figure manager whose `destroy` raises makes `plt.close('all')` raise during the
    // reset: the reset cannot complete, and figures may stay open.
    let odd = r#"
def refuse():
    raise RuntimeError('not closing')
fig, ax = plt.subplots()
fig.canvas.manager.destroy = refuse
ax.plot([1, 2, 3])
plt.savefig(OUT)
"#;
    let (first, _) = odd_then_ordinary(&exec, odd);
    common::expect_ok(&first);
    let retired = first.retired.as_ref().expect("the worker was retired");
    assert_eq!(retired.reason, RetireReason::ResetFailed);
    assert!(
        retired.detail.contains("close figures"),
        "{}",
        retired.detail
    );
    assert!(exec
        .worker_pids()
        .iter()
        .all(|&p| p != first.worker.as_ref().unwrap().pid));
}

#[test]
fn a_reset_that_never_ends_keeps_the_jobs_result_and_replaces_the_worker() {
    let exec = executor();
    // The generator's `finally` loops forever, and only the reset's collection (after
    // the answer) reaches it: the job's figure stands, the worker is killed after the
    // job's deadline and the next job runs on a new one.
    let odd = r#"
def spin():
    try:
        yield
    finally:
        while True:
            pass
g = spin()
next(g)
loop = [g]
loop.append(loop)
plt.plot([1, 2])
plt.savefig(OUT)
"#;
    let first = exec
        .run(Job::new(odd).timeout(std::time::Duration::from_secs(3)))
        .expect("infrastructure");
    common::expect_ok(&first);
    let retired = first.retired.as_ref().expect("the worker was retired");
    assert_eq!(retired.reason, RetireReason::ResetFailed);
    assert!(
        retired.detail.contains("did not finish"),
        "{}",
        retired.detail
    );
    let second = exec.run(Job::new(ORDINARY)).expect("infrastructure");
    common::expect_ok(&second);
    assert_ne!(
        first.worker.as_ref().unwrap().pid,
        second.worker.as_ref().unwrap().pid
    );
}

#[test]
fn the_job_quota_is_reported_as_a_retirement() {
    let exec = common::builder()
        .workers(1)
        .max_jobs_per_worker(2)
        .build()
        .unwrap();
    let a = exec.run(Job::new(ORDINARY)).unwrap();
    assert!(a.retired.is_none());
    assert_eq!(exec.stats().retired.job_quota, 0);
    let b = exec.run(Job::new(ORDINARY)).unwrap();
    assert_eq!(b.retired.as_ref().unwrap().reason, RetireReason::JobQuota);
    // Counted under its own reason (what /metrics and /v1/pool show), not `other`; the
    // count follows the answer.
    assert!(
        common::wait_until(Duration::from_secs(10), || exec.stats().retired.job_quota
            == 1),
        "{:?}",
        exec.stats().retired
    );
    assert_eq!(exec.stats().retired.other, 0, "{:?}", exec.stats().retired);
}
