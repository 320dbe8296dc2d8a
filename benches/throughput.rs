//! Throughput at saturation: the typical figure (the corpus's
//! `02_typical_line_scatter_legend.py`, as in `warm_vs_cold`) submitted from 8 threads
//! to a pool of 1 worker, then to a pool of 2, and what the supervisor costs per job
//! while the pool is saturated.
//!
//! Run: `cargo bench --bench throughput` (release build; `make bench` runs it too).
//! `PYWARD_BENCH_SCALE=0.1` scales the job count down for a trial. Results also go to
//! `target/pyward-bench/throughput.json` (see `common/report.rs`). Last, the default
//! tenancy at saturation on 2 workers: every job of one tenant vs every job its own
//! tenant (a fresh fork each), in alternating rounds.
//!
//! What is measured, per pool size W (jobs N, 8 submitting threads, each calling
//! `Executor::run` in a loop until N jobs have been taken; a few untimed jobs first):
//!
//! - **jobs/s** = N / wall, wall from releasing the threads to the last outcome back.
//!   The ratio 2 workers / 1 worker is the scaling (target ≥ 1.8× on 2 cores).
//!
//! Per-job overhead, from each outcome's `Timings` and the instant its `run` was called.
//! For each job, `dispatched = called + gate + queue` (the slot took it off the queue)
//! and `finished = called + total` (the slot had built its outcome). Then:
//!
//! - **slot time per job** = Σ over slots of (last `finished` − first `dispatched`) / N:
//!   how long a worker slot is occupied per job, without the ramp-up and ramp-down at
//!   the edges of the run. (`slot time, wall x W / N` is printed beside it: the same
//!   from the wall time, edges included.)
//! - **exec** = mean `Timings::exec`: job code running, as measured inside the worker.
//! - **not running job code** = slot time per job − exec: everything else a slot spends
//!   per job. It splits exactly into the two lines below.
//! - **in-job supervisor work** = mean(total − queue − gate − exec): from taking the job
//!   off the queue to its outcome, minus the job's code: staging inputs, the pipe round
//!   trip, the worker's per-job set-up and clean-up (fresh globals, closing figures,
//!   reseeding, reading `out/`), artifact transfer, validation (PNG checks, the blank
//!   check) and emptying the slot's directories. Validation is also shown on its own.
//! - **hand-off (queueing) overhead** = mean over consecutive jobs of one slot of
//!   (next `dispatched` − previous `finished`): sending the outcome back, the slot
//!   thread's bookkeeping and taking the next job off the queue. At saturation the
//!   queue is never empty, so this is pure queueing cost (target < 0.2 ms). Its median
//!   and maximum are printed too: one descheduled slot thread moves the mean.
//! - **gate** = mean `Timings::gate`. Not part of slot time: the gate runs on the
//!   caller's thread before the job is queued; on a saturated 2-core machine it only
//!   competes for CPU. Not subtracted from anything.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use pyward::{Executor, Job, Timings};

#[path = "common/report.rs"]
mod report;

/// The typical figure: the same script the render-once corpus checks byte for byte.
const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");

/// Submitting threads: more than workers, so the queue never runs dry.
const THREADS: usize = 8;

/// One job as its caller saw it.
struct Sample {
    called: Instant,
    returned: Instant,
    timings: Timings,
    slot: usize,
}

/// One printed line: its name, what it means, and how to get it from a run.
type Line = (&'static str, &'static str, fn(&Saturation) -> f64);

/// What one saturated run measured (times in ms, means over jobs).
struct Saturation {
    workers: usize,
    jobs: usize,
    wall: Duration,
    jobs_per_s: f64,
    slot_per_job: f64,
    wall_slot_per_job: f64,
    exec: f64,
    in_job: f64,
    validate: f64,
    handoff: f64,
    handoff_median: f64,
    handoff_max: f64,
    gate: f64,
    latency_median: f64,
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// `jobs` typical figures from [`THREADS`] threads; the wall time and every sample.
fn run_batch(exec: &Executor, jobs: usize) -> (Duration, Vec<Sample>) {
    run_jobs(exec, jobs, &|| Job::new(TYPICAL))
}

/// `jobs` jobs made by `job` from [`THREADS`] threads; the wall time and every sample.
fn run_jobs(
    exec: &Executor,
    jobs: usize,
    job: &(dyn Fn() -> Job + Sync),
) -> (Duration, Vec<Sample>) {
    let next = AtomicUsize::new(0);
    let barrier = Barrier::new(THREADS + 1);
    let samples = Mutex::new(Vec::with_capacity(jobs));
    let start = std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                barrier.wait();
                let mut mine = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < jobs {
                    let called = Instant::now();
                    let o = exec.run(job()).expect("run");
                    let returned = Instant::now();
                    assert!(o.is_success(), "{:?}", o.result);
                    mine.push(Sample {
                        called,
                        returned,
                        timings: o.timings,
                        slot: o.worker.expect("ran on a worker").slot,
                    });
                }
                samples.lock().expect("not poisoned").extend(mine);
            });
        }
        barrier.wait();
        Instant::now()
    });
    let samples = samples.into_inner().expect("not poisoned");
    let end = samples.iter().map(|s| s.returned).max().expect("jobs ran");
    (end - start, samples)
}

fn saturate(workers: usize, jobs: usize) -> Saturation {
    let exec = Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
        .workers(workers)
        .build()
        .expect("pool starts");
    // Untimed: every worker's first jobs pay first-use costs.
    run_batch(&exec, 4 * workers);
    let (wall, samples) = run_batch(&exec, jobs);

    let secs = |d: Duration| d.as_secs_f64();
    let dispatched = |s: &Sample| secs(s.timings.gate + s.timings.queue);
    let finished = |s: &Sample| secs(s.timings.total);
    // Every instant in seconds since the batch's earliest call, on one clock.
    let origin = samples.iter().map(|s| s.called).min().expect("jobs ran");
    let mut span = 0.0;
    let mut gaps = Vec::new();
    for slot in 0..workers {
        let mut mine: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| s.slot == slot)
            .map(|s| {
                let called = secs(s.called - origin);
                (called + dispatched(s), called + finished(s))
            })
            .collect();
        mine.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let (Some(first), Some(last)) = (mine.first(), mine.last()) {
            span += last.1 - first.0;
        }
        gaps.extend(mine.windows(2).map(|w| w[1].0 - w[0].1));
    }
    let n = samples.len();
    let mut totals: Vec<Duration> = samples.iter().map(|s| s.timings.total).collect();
    totals.sort();
    Saturation {
        workers,
        jobs: n,
        wall,
        jobs_per_s: n as f64 / secs(wall),
        slot_per_job: span * 1e3 / n as f64,
        wall_slot_per_job: report::ms(wall) * workers as f64 / n as f64,
        exec: mean(samples.iter().map(|s| report::ms(s.timings.exec))),
        in_job: mean(samples.iter().map(|s| {
            let t = s.timings;
            report::ms(t.total) - report::ms(t.queue) - report::ms(t.gate) - report::ms(t.exec)
        })),
        validate: mean(samples.iter().map(|s| report::ms(s.timings.validate))),
        handoff: mean(gaps.iter().map(|g| g * 1e3)),
        handoff_median: {
            gaps.sort_by(f64::total_cmp);
            gaps.get(gaps.len() / 2).map_or(0.0, |g| g * 1e3)
        },
        handoff_max: gaps.iter().fold(0.0f64, |m, g| m.max(g * 1e3)),
        gate: mean(samples.iter().map(|s| report::ms(s.timings.gate))),
        latency_median: report::ms(totals[n / 2]),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness=false benches this way
    }
    let quick = std::env::args().any(|a| a == "--test");
    let jobs = if quick { 8 } else { report::iterations(300, 8) };
    let mut rep = report::Report::new("throughput", "cargo bench --bench throughput");
    println!("throughput at saturation: typical figure, {THREADS} submitting threads, {jobs} jobs");
    let runs: Vec<Saturation> = [1, 2].iter().map(|&w| saturate(w, jobs)).collect();

    println!(
        "{:<10} {:>8} {:>10} {:>10} {:>14}",
        "pool", "jobs", "wall s", "jobs/s", "latency p50 ms"
    );
    for r in &runs {
        println!(
            "{:<10} {:>8} {:>10.2} {:>10.2} {:>14.1}",
            variant(r.workers),
            r.jobs,
            r.wall.as_secs_f64(),
            r.jobs_per_s,
            r.latency_median
        );
        let variant = variant(r.workers);
        rep.value(
            "throughput",
            "typical, 8 threads",
            &variant,
            "jobs/s",
            r.jobs_per_s,
        )
        .n(r.jobs)
        .note("N jobs / wall time, 8 threads calling Executor::run at saturation");
    }
    let ratio = rep.ratio("throughput", "typical, 8 threads", "2 workers", "1 worker");
    println!(
        "scaling 2 workers / 1 worker: {ratio:.2}x   target >= 1.8x: {}",
        if ratio >= 1.8 { "met" } else { "MISSED" }
    );

    println!("\nper-job cost at saturation, ms (means over jobs; see the bench's doc comment)");
    let lines: [Line; 9] = [
        (
            "slot time per job",
            "sum over slots of (last finished - first dispatched) / N",
            |r| r.slot_per_job,
        ),
        (
            "  slot time, wall x W / N",
            "the same from the wall time, ramp-up and ramp-down included",
            |r| r.wall_slot_per_job,
        ),
        (
            "exec (job code)",
            "mean Timings::exec, measured inside the worker",
            |r| r.exec,
        ),
        (
            "not running job code",
            "slot time per job - exec = in-job supervisor work + hand-off",
            |r| r.slot_per_job - r.exec,
        ),
        (
            "in-job supervisor work",
            "mean(total - queue - gate - exec): staging, pipes, worker set-up and clean-up, \
             artifact transfer, validation, emptying directories",
            |r| r.in_job,
        ),
        ("  of which validation", "mean Timings::validate", |r| {
            r.validate
        }),
        (
            "hand-off (queueing)",
            "mean gap on one slot from a job's outcome built to the next job taken off the \
             queue",
            |r| r.handoff,
        ),
        (
            "  hand-off, median",
            "median of the same gaps (robust to a descheduled slot thread)",
            |r| r.handoff_median,
        ),
        (
            "gate (caller thread)",
            "mean Timings::gate; runs before queueing, in parallel with the slots",
            |r| r.gate,
        ),
    ];
    println!(
        "{:<26} {}",
        "",
        runs.iter()
            .map(|r| format!("{:>12}", variant(r.workers)))
            .collect::<String>()
    );
    for (name, note, get) in lines {
        print!("{name:<26} ");
        for r in &runs {
            print!("{:>12.3}", get(r));
            rep.value(
                "saturation overhead",
                name.trim(),
                &variant(r.workers),
                "ms",
                get(r),
            )
            .n(r.jobs)
            .note(note);
        }
        println!();
    }
    for r in &runs {
        println!(
            "hand-off, {}: max {:.3} ms   target mean < 0.2 ms: {}",
            variant(r.workers),
            r.handoff_max,
            if r.handoff < 0.2 { "met" } else { "MISSED" }
        );
    }
    tenancy(&mut rep, jobs);
    rep.write();
}

/// Saturation under the default tenancy (no worker serves two tenants), 2 workers:
/// every job of one tenant (its warm workers reused) vs every job its own tenant (a
/// fresh fork each), in alternating rounds so that both see the same machine.
fn tenancy(rep: &mut report::Report, jobs: usize) {
    let pool = || {
        Executor::builder()
            .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
            .reuse_across_tenants(false)
            .workers(2)
            .build()
            .expect("pool starts")
    };
    let (same, new) = (pool(), pool());
    let one_tenant = || Job::new(TYPICAL).tenant("a");
    let own_tenant = || Job::new(TYPICAL);
    run_jobs(&same, 8, &one_tenant);
    run_jobs(&new, 8, &own_tenant);
    let (mut wall_same, mut wall_new) = (Duration::ZERO, Duration::ZERO);
    let rounds = 2;
    let per_round = jobs.div_ceil(rounds);
    for _ in 0..rounds {
        wall_same += run_jobs(&same, per_round, &one_tenant).0;
        wall_new += run_jobs(&new, per_round, &own_tenant).0;
    }
    let n = per_round * rounds;
    let rate = |wall: Duration| n as f64 / wall.as_secs_f64();
    let workload = "typical, 8 threads, by tenant";
    rep.value(
        "throughput",
        workload,
        "one tenant",
        "jobs/s",
        rate(wall_same),
    )
    .n(n)
    .note("2 workers, no reuse across tenants, every job of one tenant");
    rep.value(
        "throughput",
        workload,
        "a new tenant per job",
        "jobs/s",
        rate(wall_new),
    )
    .n(n)
    .note("2 workers, every job its own tenant: a fresh fork of the template each");
    let ratio = rep.ratio("throughput", workload, "a new tenant per job", "one tenant");
    println!(
        "\ntenancy, 2 workers at saturation: one tenant {:.2} jobs/s, a new tenant per job \
         {:.2} jobs/s: {ratio:.2}x (target >= 0.75x): {}",
        rate(wall_same),
        rate(wall_new),
        if ratio >= 0.75 { "met" } else { "MISSED" }
    );
}

fn variant(workers: usize) -> String {
    if workers == 1 {
        "1 worker".to_string()
    } else {
        format!("{workers} workers")
    }
}
