//! Memory per worker: workers started cold vs workers forked from the zygote.
//!
//! Run: `cargo bench --bench memory` (release build; `make bench` runs it too).
//! `PYWARD_BENCH_SCALE` scales the number of jobs run before the second reading.
//! Results also go to `target/pyward-bench/memory.json` (see `common/report.rs`).
//!
//! Two pools of 2 workers with default settings (pandas preloaded):
//!
//! - **cold start**: `ExecutorBuilder::zygote(false)`; both workers are separate
//!   processes that each imported numpy, matplotlib and pandas themselves.
//! - **zygote fork**: the default. The pool's first workers start cold, so each slot
//!   first runs a job that spins (`while True: pass`) under a short timeout; the
//!   watchdog kills the worker and the slot replaces it by forking the zygote.
//!   `Executor::last_recycle(slot)` confirms that every replacement was forked.
//!
//! Each pool is read twice from `/proc/<pid>/smaps_rollup` of every
//! `Executor::worker_pids()` entry (and of `Executor::zygote_pid()`): idle, right after
//! the workers are ready, and again after each worker has run a few typical figures
//! (which dirties copy-on-write pages a forked worker shared with the zygote).
//!
//! - **RSS**: resident pages, shared ones counted in full in every process.
//! - **PSS**: resident pages, each shared page divided by the number of processes that
//!   map it; summing PSS over processes gives their real total. The honest per-worker
//!   cost.
//! - **USS**: `Private_Clean + Private_Dirty`, the memory that killing this worker
//!   would free.
//! - **pool PSS**: sum of PSS over the workers, plus the zygote's for the zygote pool
//!   (the template is part of what that pool costs).

use std::time::{Duration, Instant};

use pyward::{Executor, Job, JobFailure};

#[path = "common/report.rs"]
mod report;

const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");
const SPIN: &str = "while True:\n    pass\n";
const WORKERS: usize = 2;

/// The figures of one process's `smaps_rollup`, in KiB.
#[derive(Debug, Clone, Copy, Default)]
struct Mem {
    rss: u64,
    pss: u64,
    uss: u64,
}

fn smaps_rollup(pid: u32) -> Option<Mem> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    Some(Mem {
        rss: field("Rss"),
        pss: field("Pss"),
        uss: field("Private_Clean") + field("Private_Dirty"),
    })
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// One reading of a pool: each worker's figures, and the zygote's.
struct Reading {
    workers: Vec<(u32, Mem)>,
    zygote: Option<(u32, Mem)>,
}

fn read_pool(exec: &Executor, zygote: bool) -> Reading {
    let workers: Vec<(u32, Mem)> = exec
        .worker_pids()
        .into_iter()
        .map(|pid| {
            (
                pid,
                smaps_rollup(pid)
                    .expect("/proc/<pid>/smaps_rollup readable (same user, ptrace access)"),
            )
        })
        .collect();
    assert_eq!(workers.len(), WORKERS, "every slot has a worker");
    let zygote = if zygote {
        let pid = exec.zygote_pid().expect("the zygote runs");
        Some((
            pid,
            smaps_rollup(pid)
                .expect("/proc/<pid>/smaps_rollup readable (same user, ptrace access)"),
        ))
    } else {
        None
    };
    Reading { workers, zygote }
}

/// `n` jobs of `code` from [`WORKERS`] threads at once, so that every slot gets some.
fn run_parallel(exec: &Executor, n: usize, job: impl Fn() -> Job + Sync) -> Vec<pyward::Outcome> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|t| {
                let job = &job;
                s.spawn(move || {
                    (t..n)
                        .step_by(WORKERS)
                        .map(|_| {
                            let o = exec.run(job()).expect("run");
                            assert!(o.is_success(), "{:?}", o.result);
                            o
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect()
    })
}

/// Kills every slot's (cold) worker with a spinning job until each slot's replacement
/// was forked from the zygote.
fn recycle_all_through_zygote(exec: &Executor) {
    let started = exec.worker_pids();
    exec.zygote_pid().expect("the zygote warms up");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let outcomes = run_parallel(exec, WORKERS, || {
            Job::new(SPIN).timeout(Duration::from_millis(300))
        });
        for o in &outcomes {
            assert!(
                matches!(o.failure(), Some(JobFailure::Timeout { .. })),
                "{:?}",
                o.result
            );
        }
        // The slot replaces its worker right after sending the Timeout outcome.
        let wait = Instant::now() + Duration::from_secs(10);
        while Instant::now() < wait {
            let pids = exec.worker_pids();
            let done = pids.len() == WORKERS
                && pids.iter().all(|p| !started.contains(p))
                && (0..WORKERS).all(|s| exec.last_recycle(s).is_some_and(|(_, f)| f));
            if done {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            Instant::now() < deadline,
            "slots were not all replaced by forked workers: {:?}",
            (0..WORKERS)
                .map(|s| exec.last_recycle(s))
                .collect::<Vec<_>>()
        );
    }
}

fn print_reading(label: &str, r: &Reading) {
    for (pid, m) in &r.workers {
        println!(
            "  {label:<26} worker pid {pid:<8} RSS {:7.1}  PSS {:7.1}  USS {:7.1} MiB",
            mib(m.rss),
            mib(m.pss),
            mib(m.uss)
        );
    }
    if let Some((pid, m)) = r.zygote {
        println!(
            "  {label:<26} zygote pid {pid:<8} RSS {:7.1}  PSS {:7.1}  USS {:7.1} MiB",
            mib(m.rss),
            mib(m.pss),
            mib(m.uss)
        );
    }
}

/// Rows for one reading; `when` ends each note (e.g. which jobs ran before it).
fn record(rep: &mut report::Report, metric: &str, variant: &str, r: &Reading, when: &str) {
    let n = r.workers.len();
    let avg = |f: fn(&Mem) -> u64| mib(r.workers.iter().map(|(_, m)| f(m)).sum::<u64>()) / n as f64;
    rep.value(metric, "RSS per worker", variant, "MiB", avg(|m| m.rss))
        .n(n)
        .note(format!(
            "mean over the pool's workers; shared pages counted in full; {when}"
        ));
    rep.value(metric, "PSS per worker", variant, "MiB", avg(|m| m.pss))
        .n(n)
        .note(format!(
            "mean over the pool's workers; shared pages divided among their sharers; {when}"
        ));
    rep.value(metric, "USS per worker", variant, "MiB", avg(|m| m.uss))
        .n(n)
        .note(format!(
            "Private_Clean + Private_Dirty: what killing the worker frees; {when}"
        ));
    let zygote_pss = r.zygote.map_or(0, |(_, m)| m.pss);
    let pool = r.workers.iter().map(|(_, m)| m.pss).sum::<u64>() + zygote_pss;
    rep.value(metric, "pool PSS", variant, "MiB", mib(pool))
        .n(n)
        .note(format!(
            "sum of the workers' PSS, plus the zygote's PSS when there is one; {when}"
        ));
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness=false benches this way
    }
    let quick = std::env::args().any(|a| a == "--test");
    let jobs = if quick { 2 } else { report::iterations(8, 2) } * WORKERS;
    let mut rep = report::Report::new("memory", "cargo bench --bench memory");
    let builder = || {
        Executor::builder()
            .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
            .workers(WORKERS)
    };
    let typical = || Job::new(TYPICAL);
    println!("memory per worker, {WORKERS} workers, from /proc/<pid>/smaps_rollup");

    let cold = builder().zygote(false).build().expect("pool starts");
    let cold_idle = read_pool(&cold, false);
    run_parallel(&cold, jobs, typical);
    let cold_busy = read_pool(&cold, false);
    print_reading("cold start, idle", &cold_idle);
    print_reading(&format!("cold start, after {jobs} jobs"), &cold_busy);
    drop(cold);

    let forked = builder().build().expect("pool starts");
    recycle_all_through_zygote(&forked);
    let forked_idle = read_pool(&forked, true);
    run_parallel(&forked, jobs, typical);
    let forked_busy = read_pool(&forked, true);
    print_reading("zygote fork, idle", &forked_idle);
    print_reading(&format!("zygote fork, after {jobs} jobs"), &forked_busy);
    drop(forked);

    let idle = "idle";
    let busy = "after jobs";
    let ready = "read when the workers were ready";
    let after = format!("read after {jobs} typical figures over the pool");
    record(&mut rep, idle, "cold start", &cold_idle, ready);
    record(&mut rep, idle, "zygote fork", &forked_idle, ready);
    record(&mut rep, busy, "cold start", &cold_busy, &after);
    record(&mut rep, busy, "zygote fork", &forked_busy, &after);
    println!(
        "\n{:<20} {:<16} {:>12} {:>12} {:>8}",
        "MiB (mean/worker)", "when", "cold start", "zygote fork", "ratio"
    );
    for metric in [idle, busy] {
        for workload in [
            "RSS per worker",
            "PSS per worker",
            "USS per worker",
            "pool PSS",
        ] {
            let ratio = rep.ratio(metric, workload, "zygote fork", "cold start");
            let value = |variant: &str| {
                rep.rows()
                    .iter()
                    .find(|r| r.metric == metric && r.workload == workload && r.variant == variant)
                    .map_or(0.0, |r| r.value)
            };
            println!(
                "{workload:<20} {:<16} {:>12.1} {:>12.1} {:>8.2}",
                metric,
                value("cold start"),
                value("zygote fork"),
                ratio
            );
        }
    }
    println!("(ratio = zygote fork / cold start; pool PSS includes the zygote's PSS)");
    rep.write();
}
