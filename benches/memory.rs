//! Pool scale: what a pool of 8 costs next to a pool of 1, in start time and memory,
//! what a burst costs an elastic pool, and what a one-off `pyward run` costs next to
//! `python -I` on the same script.
//!
//! Run: `cargo bench --bench memory` (release build of the workspace's binaries first:
//! `make bench` does both). `PYWARD_BENCH_SCALE` scales the repetitions. Results also
//! go to `target/pyward-bench/memory.json` (see `common/report.rs`).
//!
//! - **start**: wall time of `build()` for 1 and for 8 workers, repetitions interleaved
//!   so machine drift hits both alike. Every worker is forked from one zygote, so 8
//!   should cost little more than 1.
//! - **memory**: `Executor::stats()` after 3 typical figures per worker (which dirty
//!   copy-on-write pages a fork shared with the zygote): the pool's PSS (workers plus
//!   zygote) for 1 and 8 workers, and the cost of each extra worker,
//!   `(PSS(8) - PSS(1)) / 7`. For comparison the same for pools started cold
//!   (`zygote(false)`), with 1 and 2 workers.
//! - **burst**: an elastic pool (`min_workers(1).max_workers(4)`) gets 4 jobs at once;
//!   the queue time of the 3 jobs that ran on newly forked workers is the time from
//!   "a job waits" to "a new worker runs it".
//! - **one-shot**: `pyward run tiny.py` (the CLI, release build) against
//!   `python -I tiny.py` doing the same with stock matplotlib, interleaved.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use pyward::{Executor, ExecutorBuilder, Job, PoolStats};

#[path = "common/report.rs"]
mod report;

const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");
const TINY_JOB: &str = "plt.plot([1, 2, 3], [2, 1, 3])\nplt.savefig(OUT)\n";

fn builder() -> ExecutorBuilder {
    Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

/// Three typical figures on every worker at once, then the pool's stats.
fn after_three_jobs_each(exec: &Executor, workers: usize) -> PoolStats {
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                for _ in 0..3 {
                    let o = exec.run(Job::new(TYPICAL)).expect("run");
                    assert!(o.is_success(), "{:?}", o.result);
                }
            });
        }
    });
    let stats = exec.stats();
    assert_eq!(stats.workers.len(), workers);
    stats
}

fn start_times(rep: &mut report::Report, rounds: usize) {
    let (mut one, mut eight) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for (n, samples) in [(1, &mut one), (8, &mut eight)] {
            let started = Instant::now();
            let exec = builder().workers(n).build().expect("pool starts");
            samples.push(started.elapsed());
            assert_eq!(exec.stats().cold_fallbacks, 0);
        }
    }
    rep.latency("start", "build()", "1 worker", &one);
    rep.latency("start", "build()", "8 workers", &eight);
    let ratio = rep.ratio("start", "build()", "8 workers", "1 worker");
    let (m1, m8) = (report::summary_ms(&one).0, report::summary_ms(&eight).0);
    println!("start: 1 worker {m1:.0} ms, 8 workers {m8:.0} ms (median of {rounds}): {ratio:.2}x");
}

fn memory(rep: &mut report::Report) {
    let pool = |n: usize, zygote: bool| {
        let exec = builder()
            .workers(n)
            .zygote(zygote)
            .build()
            .expect("pool starts");
        let stats = after_three_jobs_each(&exec, n);
        for w in &stats.workers {
            let m = w.memory.unwrap_or_default();
            println!(
                "  {:<10} {n} worker(s): pid {:<8} RSS {:6.1}  PSS {:6.1}  private {:6.1} MiB",
                if zygote { "forked" } else { "cold" },
                w.pid,
                mib(m.rss_bytes),
                mib(m.pss_bytes),
                mib(m.private_bytes)
            );
        }
        mib(stats.total_pss_bytes())
    };
    let (f1, f8) = (pool(1, true), pool(8, true));
    let (c1, c2) = (pool(1, false), pool(2, false));
    let note = "PSS of every worker plus the zygote's, after 3 typical figures per worker";
    rep.value("memory", "pool PSS", "1 worker", "MiB", f1)
        .note(note);
    rep.value("memory", "pool PSS", "8 workers", "MiB", f8)
        .note(note);
    let forked_extra = (f8 - f1) / 7.0;
    let cold_extra = c2 - c1;
    rep.value("memory", "per extra worker", "forked", "MiB", forked_extra)
        .note("(pool PSS with 8 workers - with 1) / 7");
    rep.value("memory", "per extra worker", "cold", "MiB", cold_extra)
        .note("zygote(false): pool PSS with 2 workers - with 1");
    rep.ratio("memory", "per extra worker", "forked", "cold");
    println!(
        "memory: pool PSS 1 worker {f1:.0} MiB, 8 workers {f8:.0} MiB: {forked_extra:.1} MiB \
         per extra forked worker ({cold_extra:.1} MiB per extra cold worker)"
    );
}

fn burst(rep: &mut report::Report, rounds: usize) {
    let mut waits = Vec::new();
    for _ in 0..rounds {
        let exec = (builder().min_workers(1).max_workers(4))
            .idle_timeout(Duration::from_millis(200))
            .build()
            .expect("pool starts");
        let first = exec.worker_pids();
        let outcomes: Vec<pyward::Outcome> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| exec.run(Job::new(TYPICAL)).expect("run")))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for o in outcomes {
            assert!(o.is_success(), "{:?}", o.result);
            if !first.contains(&o.worker.as_ref().unwrap().pid) {
                waits.push(o.timings.queue);
            }
        }
    }
    rep.latency(
        "burst",
        "queue time on a new worker",
        "elastic 1..4",
        &waits,
    )
    .note("4 jobs at once on a pool of 1: from submission to dispatch on a forked worker");
    let (median, _, max) = report::summary_ms(&waits);
    println!(
        "burst: a job that grows the pool waits {median:.1} ms (median, max {max:.1}, n={})",
        waits.len()
    );
}

/// The release CLI next to this bench's binary (`target/release/pyward`).
fn cli() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let cli = exe.parent()?.parent()?.join("pyward");
    cli.is_file().then_some(cli)
}

fn one_shot(rep: &mut report::Report, rounds: usize) {
    let Some(cli) = cli() else {
        println!("one-shot: skipped (no release `pyward` binary; `make bench` builds it)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let job = dir.path().join("tiny.py");
    std::fs::write(&job, TINY_JOB).unwrap();
    let plain = dir.path().join("tiny_plain.py");
    let out = dir.path().join("plain.png");
    std::fs::write(
        &plain,
        format!(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n\
             plt.plot([1, 2, 3], [2, 1, 3])\nplt.savefig({:?})\n",
            out.display().to_string()
        ),
    )
    .unwrap();
    let python = env!("PYWARD_BUILD_PYTHON");
    let time = |cmd: &mut Command| {
        let started = Instant::now();
        let status = cmd.output().expect("runs").status;
        assert!(status.success(), "{cmd:?}: {status}");
        started.elapsed()
    };
    let (mut pyward_runs, mut python_runs) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        pyward_runs.push(time(
            Command::new(&cli)
                .args(["run", "--no-record", "--out"])
                .arg(dir.path().join("pyward.png"))
                .arg(&job),
        ));
        python_runs.push(time(Command::new(python).arg("-I").arg(&plain)));
    }
    rep.latency("one-shot", "tiny plot", "pyward run", &pyward_runs);
    rep.latency("one-shot", "tiny plot", "python -I", &python_runs);
    let ratio = rep.ratio("one-shot", "tiny plot", "pyward run", "python -I");
    println!(
        "one-shot: pyward run {:.0} ms, python -I {:.0} ms (median of {rounds}): {ratio:.2}x",
        report::summary_ms(&pyward_runs).0,
        report::summary_ms(&python_runs).0
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness=false benches this way
    }
    let quick = std::env::args().any(|a| a == "--test");
    let rounds = if quick { 1 } else { report::iterations(5, 2) };
    let mut rep = report::Report::new("memory", "cargo bench --bench memory");
    start_times(&mut rep, rounds);
    memory(&mut rep);
    burst(&mut rep, rounds);
    one_shot(&mut rep, if quick { 1 } else { report::iterations(7, 3) });
    rep.write();
}
