//! Recycle time: from the kill of a worker to its replacement's `Ready`, forked from the
//! zygote vs started cold, side by side in one run.
//!
//! What is measured: each iteration runs a job that spins until the watchdog kills its
//! worker (a 100 ms timeout), then a tiny job, which the slot serves only after it has
//! replaced the worker. The supervisor itself records the recycle
//! (`Executor::last_recycle`): from the instant it decided to kill the worker (before
//! the SIGKILL of its process group) to the replacement's `Ready` message, i.e.
//! everything a queued job would wait for. With the zygote, the replacement is forked
//! while the killed process is torn down, and the reap follows its `Ready`. The
//! same executor settings are used for both modes; only `ExecutorBuilder::zygote`
//! differs (plus one zygote run without pandas preloaded: a smaller template forks
//! faster). Prints medians (and min/max) and the ratio, and writes them to
//! `target/pyward-bench/recycle.json` (see `common/report.rs`). Run:
//! `cargo bench --bench recycle`; `PYWARD_BENCH_SCALE=0.1` scales the counts down.

use std::time::Duration;

use pyward::{Executor, Job, JobFailure};

#[path = "common/report.rs"]
mod report;

const SPIN: &str = "while True:\n    pass\n";
const TINY: &str = "plt.plot([1, 2]); plt.savefig(OUT)\n";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Kill→ready times of `n` recycles, and whether each replacement was forked.
fn recycles(zygote: bool, pandas: bool, n: usize) -> (Vec<Duration>, bool) {
    let exec = Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
        .workers(1)
        .timeout(Duration::from_millis(100))
        .zygote(zygote)
        .preload_pandas(pandas)
        .build()
        .expect("executor");
    let mut times = Vec::with_capacity(n);
    let mut all_forked = true;
    // One untimed recycle: with the zygote, it also waits for the zygote's warm-up.
    for i in 0..=n {
        let o = exec.run(Job::new(SPIN)).expect("spin job");
        assert!(matches!(o.failure(), Some(JobFailure::Timeout { .. })));
        let next = exec
            .run(Job::new(TINY).timeout(Duration::from_secs(30)))
            .expect("tiny job");
        assert!(next.is_success(), "{:?}", next.result);
        let (took, forked) = exec.last_recycle(0).expect("a recycle was recorded");
        if i > 0 {
            times.push(took);
            all_forked &= forked;
        }
    }
    (times, all_forked && zygote)
}

fn main() {
    let n_zygote = report::iterations(41, 3);
    let n_cold = report::iterations(11, 1);
    let (z, forked) = recycles(true, true, n_zygote);
    assert!(forked, "every zygote-mode replacement was forked");
    let (c, _) = recycles(false, true, n_cold);
    let (zp, forked) = recycles(true, false, n_zygote);
    assert!(
        forked,
        "every replacement of the pandas-less zygote was forked"
    );
    let mut rep = report::Report::new("recycle", "cargo bench --bench recycle");
    let what = "from the supervisor's decision to kill the worker to the replacement's Ready";
    rep.latency("kill to ready", "recycle", "zygote fork", &z)
        .note(what);
    rep.latency("kill to ready", "recycle", "zygote fork, no pandas", &zp)
        .note("zygote without pandas preloaded: a smaller template");
    rep.latency("kill to ready", "recycle", "cold spawn", &c)
        .note("ExecutorBuilder::zygote(false): a new worker process warms up");
    rep.ratio("kill to ready", "recycle", "cold spawn", "zygote fork");
    let (zm, cm) = (median(z.clone()), median(c.clone()));
    let range = |v: &[Duration]| {
        let min = v.iter().min().copied().unwrap_or_default();
        let max = v.iter().max().copied().unwrap_or_default();
        format!(
            "min {:8.2} ms  max {:8.2} ms",
            report::ms(min),
            report::ms(max)
        )
    };
    println!("recycle: kill -> replacement ready (median of n)");
    println!(
        "  zygote (fork)  n={n_zygote:<3} median {:8.2} ms   {}",
        report::ms(zm),
        range(&z)
    );
    println!(
        "  zygote, pandas not preloaded  median {:8.2} ms   {}",
        report::ms(median(zp.clone())),
        range(&zp)
    );
    println!(
        "  cold (spawn)   n={n_cold:<3} median {:8.2} ms   {}",
        report::ms(cm),
        range(&c)
    );
    println!(
        "  ratio cold/zygote: {:.1}x   target < 20 ms: {}",
        cm.as_secs_f64() / zm.as_secs_f64(),
        if zm < Duration::from_millis(20) {
            "met"
        } else {
            "MISSED"
        }
    );
    rep.write();
}
