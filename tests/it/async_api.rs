//! The async API: `run_async` under tokio, cancellation by drop and by handle, and a
//! pool left whole after a storm of abandoned futures.

use crate::common;

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use common::{builder, expect_ok, process_alive};
use pyward::{Backpressure, Error, Job, JobFailure};

const SPIN: &str = "while True:\n    pass\n";

/// A job that runs `code` and then saves a small figure (every job must write `OUT`).
fn job(code: &str) -> Job {
    Job::new(format!("{code}\nplt.plot([1, 2])\nplt.savefig(OUT)\n"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn run_async_renders_without_blocking_the_runtime() {
    let exec = builder().build().unwrap();
    let rt = runtime();
    let ticks = Arc::new(AtomicU64::new(0));
    let outcome = rt.block_on(async {
        let t = Arc::clone(&ticks);
        // A ticker on the same (single) runtime thread: it only advances while the job
        // is in flight if awaiting the job does not block that thread.
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
                t.fetch_add(1, Ordering::Relaxed);
            }
        });
        let job = job("import time\ntime.sleep(0.3)");
        let before = ticks.load(Ordering::Relaxed);
        let outcome = exec.run_async(job).await.unwrap();
        let during = ticks.load(Ordering::Relaxed) - before;
        ticker.abort();
        (outcome, during)
    });
    let (outcome, during) = outcome;
    expect_ok(&outcome);
    assert!(outcome.artifacts()[0].bytes.starts_with(b"\x89PNG"));
    assert!(
        during >= 2,
        "the runtime's other task advanced {during} times during a 300 ms job"
    );
}

#[test]
fn executor_clones_share_one_pool_and_the_last_drop_stops_it() {
    let exec = builder().build().unwrap();
    let root = exec.work_root().to_path_buf();
    let pid = exec.worker_pids()[0];
    let clone = exec.clone();
    let from_thread = std::thread::spawn(move || clone.run(job("print(1)")).unwrap());
    let outcome = from_thread.join().unwrap();
    assert_eq!(outcome.worker.as_ref().unwrap().pid, pid, "one pool");
    assert!(root.exists(), "a clone's drop leaves the pool running");
    expect_ok(&exec.run(job("print(2)")).unwrap());
    drop(exec);
    assert!(!root.exists(), "the last drop removes the pool's tree");
    assert!(!process_alive(pid), "the last drop stops the workers");
}

#[test]
fn cancelling_a_running_job_kills_its_worker_and_frees_the_slot() {
    let exec = builder().timeout(Duration::from_secs(60)).build().unwrap();
    let rt = runtime();
    rt.block_on(async {
        let future = exec.run_async(Job::new(SPIN));
        let handle = future.cancel_handle();
        let running = tokio::spawn(future);
        common::reaches(&exec, "a worker takes the job", |s| s.busy >= 1).await;
        handle.cancel();
        let outcome = running.await.unwrap().unwrap();
        assert!(
            matches!(outcome.failure(), Some(JobFailure::Cancelled)),
            "{:?}",
            outcome.failure()
        );
        assert_eq!(outcome.status(), "cancelled");
        let spun = outcome.worker.expect("the job was running on a worker");
        assert!(!process_alive(spun.pid), "the spinning worker was killed");
        // The slot serves the next job on a replacement, long before the 60 s deadline
        // that would have freed it otherwise.
        let next = exec.run_async(job("print('next')")).await.unwrap();
        expect_ok(&next);
        let w = next.worker.unwrap();
        assert_ne!(w.pid, spun.pid);
        assert_eq!(w.jobs_before, 0, "a replacement that never ran a job");
        assert!(next.timings.total < Duration::from_secs(60));
    });
}

#[test]
fn dropping_the_future_cancels_the_job() {
    let exec = builder().timeout(Duration::from_secs(60)).build().unwrap();
    let spinner = exec.worker_pids()[0];
    let rt = runtime();
    rt.block_on(async {
        let abandoned =
            tokio::time::timeout(Duration::from_millis(500), exec.run_async(Job::new(SPIN))).await;
        assert!(abandoned.is_err(), "the spinning job cannot finish");
        // The timeout dropped the future: the worker that spun is killed and the slot
        // free again.
        let next = exec.run_async(job("print('next')")).await.unwrap();
        expect_ok(&next);
        assert_ne!(next.worker.unwrap().pid, spinner);
        assert!(!process_alive(spinner));
    });
}

#[test]
fn a_cancelled_queued_job_leaves_the_queue_at_once() {
    let exec = builder()
        .timeout(Duration::from_secs(60))
        .queue_depth(1)
        .backpressure(Backpressure::Reject)
        .build()
        .unwrap();
    let rt = runtime();
    rt.block_on(async {
        let busy = exec.run_async(job("import time\ntime.sleep(1.5)\nprint('done')"));
        let busy_handle = busy.cancel_handle();
        let busy = tokio::spawn(busy);
        common::reaches(&exec, "a worker takes the job", |s| s.busy >= 1).await;
        // The one place in the queue.
        let queued = exec.run_async(job("print('queued')"));
        let queued_handle = queued.cancel_handle();
        let queued = tokio::spawn(queued);
        common::reaches(&exec, "the job is queued", |s| s.queued >= 1).await;
        let refused = exec.run_async(job("print('third')")).await;
        assert!(
            matches!(refused, Err(Error::QueueFull { depth: 1, .. })),
            "{refused:?}"
        );

        queued_handle.cancel();
        let outcome = queued.await.unwrap().unwrap();
        assert!(matches!(outcome.failure(), Some(JobFailure::Cancelled)));
        assert!(outcome.worker.is_none(), "it never reached a worker");
        // Its place is free: a new job is accepted (and runs after the busy one).
        let third = exec.run_async(job("print('third')")).await.unwrap();
        expect_ok(&third);
        assert_eq!(third.stdout, "third\n");
        let busy = busy.await.unwrap().unwrap();
        expect_ok(&busy);
        busy_handle.cancel(); // after the outcome: no effect
    });
}

#[test]
fn waiting_for_a_place_does_not_block_and_cancels_cleanly() {
    let exec = builder()
        .queue_depth(1)
        .backpressure(Backpressure::Wait)
        .build()
        .unwrap();
    let rt = runtime();
    rt.block_on(async {
        let busy = tokio::spawn(exec.run_async(job("import time\ntime.sleep(1)")));
        common::reaches(&exec, "a worker takes the job", |s| s.busy >= 1).await;
        let queued = tokio::spawn(exec.run_async(job("print('second')")));
        common::reaches(&exec, "the job is queued", |s| s.queued >= 1).await;
        // The queue is full: this future parks until a place frees up. Polled once, it
        // is pending (it waits without blocking the runtime's one thread).
        let waiting = exec.run_async(job("print('third')"));
        let waiting_handle = waiting.cancel_handle();
        let mut waiting = std::pin::pin!(waiting);
        let first_poll = std::future::poll_fn(|cx| Poll::Ready(waiting.as_mut().poll(cx))).await;
        assert!(first_poll.is_pending(), "{first_poll:?}");
        waiting_handle.cancel();
        let third = waiting.await.unwrap();
        assert!(matches!(third.failure(), Some(JobFailure::Cancelled)));
        expect_ok(&busy.await.unwrap().unwrap());
        let second = queued.await.unwrap().unwrap();
        expect_ok(&second);
        assert_eq!(second.stdout, "second\n");
    });
}

#[test]
fn a_future_outlives_its_executor_handle_and_resolves() {
    let exec = builder().build().unwrap();
    let future = exec.run_async(job("print('still here')"));
    drop(exec);
    let outcome = runtime().block_on(future);
    // The last handle went before the future was first polled: the pool shut down and
    // the future says so instead of hanging.
    assert!(matches!(outcome, Err(Error::Shutdown)), "{outcome:?}");
}

fn assert_send_static<T: Send + 'static>(_: &T) {}

#[test]
fn futures_and_handles_are_send_and_static() {
    let exec = builder().build().unwrap();
    let f = exec.run_async(job("print(1)"));
    assert_send_static(&f);
    assert_send_static(&f.cancel_handle());
    assert_send_static(&exec.clone());
    drop(f);
}

/// The last handle dropped while an abandoned future's job runs: the drop does not wait
/// for the job's deadline; the job is cancelled and its future says so.
#[test]
fn dropping_the_last_handle_cancels_running_jobs() {
    let exec = builder().timeout(Duration::from_secs(60)).build().unwrap();
    let root = exec.work_root().to_path_buf();
    let rt = runtime();
    rt.block_on(async move {
        let running = tokio::spawn(exec.run_async(Job::new(SPIN)));
        common::reaches(&exec, "a worker takes the job", |s| s.busy >= 1).await;
        // Returns once every worker is stopped; the spinning job would hold its worker
        // for 60 s if the drop waited for it.
        tokio::task::spawn_blocking(move || drop(exec))
            .await
            .unwrap();
        let outcome = running.await.unwrap().unwrap();
        assert_eq!(outcome.status(), "cancelled");
        assert!(outcome.timings.total < Duration::from_secs(60));
        assert!(!process_alive(outcome.worker.unwrap().pid));
    });
    assert!(!root.exists());
}
