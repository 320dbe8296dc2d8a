//! Soak and chaos driver: a long mixed stream of legitimate and hostile jobs from many
//! threads, while a chaos thread SIGKILLs random workers. Prints what was sent and
//! received, every outcome kind with its count, latency of the legitimate jobs, and the
//! host's RSS, open descriptors and leftovers. `make soak` runs the full size;
//! `tests/soak.rs` runs a bounded one.
//!
//! The pool is elastic (1 to WORKERS workers, idle ones retired after 300 ms) with a
//! low soft memory limit, and one hostile kind leaves memory behind in its worker on
//! purpose (compiled patterns that `re` caches pin the heap arenas its strings used),
//! so growth, shrinking and memory retirements all happen while the stream runs.
//!
//! Run: `cargo run --release --example soak -- [JOBS] [THREADS] [WORKERS]`.

#![allow(dead_code, missing_docs)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyward::{Executor, Job, JobFailure};

/// Size of a soak run.
pub struct SoakConfig {
    pub jobs: u64,
    pub threads: u64,
    pub workers: usize,
    /// Mean time between chaos kills (`None`: no chaos).
    pub chaos_every: Option<Duration>,
    pub worker_program: Option<std::path::PathBuf>,
}

/// What a soak run measured.
#[derive(Debug, Default)]
pub struct SoakSummary {
    pub sent: u64,
    pub received: u64,
    /// Legitimate jobs whose result was not their own (wrong marker or figure) or missing.
    pub wrong_or_missing: u64,
    /// Hostile jobs that did not fail as they should.
    pub hostile_not_contained: u64,
    pub kinds: BTreeMap<String, u64>,
    pub infra_errors: u64,
    pub legit_p50: Duration,
    pub legit_p99: Duration,
    pub rss_start_kib: u64,
    pub rss_end_kib: u64,
    pub fds_start: usize,
    pub fds_end: usize,
    pub chaos_kills: u64,
    pub workers_left: usize,
    pub temp_dirs_left: usize,
    /// The pool's own account at the end (forks, fallbacks, retirements).
    pub pool: Option<pyward::PoolStats>,
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Hostile kinds, in turn.
const HOSTILE: &[&str] = &[
    "timeout", "memory", "flood", "rejected", "raises", "registry", "files", "leak",
];

/// Job `n` of the stream: 1 in 20 is hostile, of the kinds above. Ordinary jobs check
/// that no registry change of a hostile job reached them.
fn job_for(n: u64) -> (Job, Option<&'static str>) {
    if n % 20 == 7 {
        let kind = HOSTILE[(n / 20 % HOSTILE.len() as u64) as usize];
        let code = match kind {
            "timeout" => "while True:\n    pass\n".to_string(),
            "memory" => "import numpy as np\na = np.ones(10**10)\n".to_string(),
            "flood" => {
                "for i in range(10**6):\n    print('flood' * 20)\nplt.plot([1]); plt.savefig(OUT)\n"
                    .to_string()
            }
            "rejected" => "import os\nos.system('true')\n".to_string(),
            // Passes the gate: changes library state a later figure would use.
            "registry" => "import matplotlib.colors as mc\nmc.get_named_colors_mapping()['red'] = '#00ff00'\nplt.style.library['soak'] = {'lines.linewidth': 9.0}\nplt.plot([1, 2]); plt.savefig(OUT)\n".to_string(),
            "files" => "i = 0\nwhile True:\n    np.zeros(1).tofile(f'f{i}.bin')\n    i += 1\n".to_string(),
            // Passes the gate: strings interleaved with patterns `re` caches beyond the
            // job, which keep the heap's arenas from being returned.
            "leak" => "import re\nx = []\nfor i in range(600000):\n    x.append(str(i) * 3)\n    if i % 2000 == 0:\n        re.compile('leak%d' % i)\nplt.plot([1]); plt.savefig(OUT)\n".to_string(),
            _ => "raise ValueError('hostile')\n".to_string(),
        };
        let job = Job::new(code).timeout(Duration::from_millis(1500));
        return (job, Some(kind));
    }
    let code = format!(
        "import matplotlib.colors as mc\nassert mc.to_hex('red') == '#ff0000' and 'soak' not in plt.style.library\nprint('marker-{n}')\nfig, ax = plt.subplots(figsize=(2, 2), dpi=40)\nax.plot(np.arange({k}) ** 2)\nax.set_title('job {n}')\nfig.savefig(OUT)\n",
        k = 3 + n % 50
    );
    (Job::new(code), None)
}

/// Runs a soak and returns what it measured.
pub fn soak(cfg: &SoakConfig) -> SoakSummary {
    let rss_start = rss_kib();
    let fds_start = open_fds();
    let mut builder = Executor::builder()
        .min_workers(1)
        .max_workers(cfg.workers)
        .idle_timeout(Duration::from_millis(300))
        .memory_growth_limit(pyward::MemoryGrowthLimit::Bytes(24 << 20))
        .timeout(Duration::from_secs(20))
        .memory_limit_mib(1024)
        .queue_depth(32)
        .preload_pandas(false);
    if let Some(p) = &cfg.worker_program {
        builder = builder.worker_program(p);
    }
    let exec = Arc::new(builder.build().expect("pool starts"));
    let root = exec.work_root().to_path_buf();
    let next = Arc::new(AtomicU64::new(0));
    let summary = Arc::new(Mutex::new(SoakSummary::default()));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let seen_pids = Arc::new(Mutex::new(std::collections::HashSet::new()));
    let done = Arc::new(AtomicBool::new(false));

    let chaos = cfg.chaos_every.map(|every| {
        let (exec, done, summary) = (Arc::clone(&exec), Arc::clone(&done), Arc::clone(&summary));
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(every);
                let pids = exec.worker_pids();
                if let Some(&pid) = pids.get((n as usize) % pids.len().max(1)) {
                    // SAFETY: kill(2) on a worker pid the executor reported; at worst the
                    // worker was replaced meanwhile and the pid is gone (ESRCH).
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                    summary.lock().unwrap().chaos_kills += 1;
                }
                n += 1;
            }
        })
    });

    let threads: Vec<_> = (0..cfg.threads)
        .map(|_| {
            let (exec, next, summary, latencies, seen) = (
                Arc::clone(&exec),
                Arc::clone(&next),
                Arc::clone(&summary),
                Arc::clone(&latencies),
                Arc::clone(&seen_pids),
            );
            let total = cfg.jobs;
            std::thread::spawn(move || loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= total {
                    return;
                }
                let (job, hostile) = job_for(n);
                summary.lock().unwrap().sent += 1;
                let started = Instant::now();
                let result = exec.run(job);
                let elapsed = started.elapsed();
                let mut s = summary.lock().unwrap();
                let outcome = match result {
                    Ok(o) => o,
                    Err(e) => {
                        s.infra_errors += 1;
                        *s.kinds.entry(format!("error: {e}")).or_default() += 1;
                        continue;
                    }
                };
                s.received += 1;
                if let Some(w) = &outcome.worker {
                    seen.lock().unwrap().insert(w.pid);
                }
                *s.kinds.entry(outcome.status().to_string()).or_default() += 1;
                let chaos_hit = matches!(outcome.failure(), Some(JobFailure::WorkerCrashed { .. }));
                match hostile {
                    None => {
                        if outcome.is_success() {
                            let own = outcome.stdout == format!("marker-{n}\n")
                                && outcome
                                    .artifact("figure.png")
                                    .is_some_and(|a| a.bytes.len() > 100);
                            if !own {
                                s.wrong_or_missing += 1;
                            }
                            latencies.lock().unwrap().push(elapsed);
                        } else if !chaos_hit {
                            s.wrong_or_missing += 1;
                        }
                    }
                    Some(kind) => {
                        let expected = match kind {
                            "timeout" => outcome.status() == "timeout",
                            "memory" => outcome.status() == "memory_exceeded",
                            "flood" => outcome.stdout.len() <= 64 * 1024,
                            "rejected" => outcome.status() == "rejected",
                            "registry" | "leak" => outcome.is_success(),
                            // Files under plain names are artifacts: the artifact
                            // bound (invalid_output) stops them before the scratch does.
                            "files" => {
                                matches!(outcome.status(), "scratch_full" | "invalid_output")
                            }
                            _ => outcome.status() == "python_error",
                        };
                        if !expected && !chaos_hit {
                            s.hostile_not_contained += 1;
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("driver thread");
    }
    done.store(true, Ordering::Relaxed);
    if let Some(c) = chaos {
        c.join().expect("chaos thread");
    }
    let Ok(exec) = Arc::try_unwrap(exec) else {
        panic!("all threads joined")
    };
    let pool = exec.stats();
    drop(exec);

    let Ok(summary) = Arc::try_unwrap(summary) else {
        panic!("all threads joined")
    };
    let mut s = summary.into_inner().unwrap();
    let mut lat = latencies.lock().unwrap().clone();
    lat.sort();
    if !lat.is_empty() {
        s.legit_p50 = lat[lat.len() / 2];
        s.legit_p99 = lat[(lat.len() * 99 / 100).min(lat.len() - 1)];
    }
    s.rss_start_kib = rss_start;
    s.rss_end_kib = rss_kib();
    s.fds_start = fds_start;
    s.fds_end = open_fds();
    s.workers_left = seen_pids
        .lock()
        .unwrap()
        .iter()
        .filter(|&&p| alive(p))
        .count();
    s.temp_dirs_left = usize::from(root.exists());
    s.pool = Some(pool);
    s
}

/// Prints a summary the way `make soak` shows it.
pub fn print(s: &SoakSummary) {
    println!("jobs sent {}, results received {}, legitimate results wrong or missing {}, hostile jobs not contained {}", s.sent, s.received, s.wrong_or_missing, s.hostile_not_contained);
    for (k, v) in &s.kinds {
        println!("  {k}: {v}");
    }
    println!(
        "infrastructure errors {}, chaos kills {}",
        s.infra_errors, s.chaos_kills
    );
    println!(
        "legitimate latency p50 {:.1} ms, p99 {:.1} ms",
        s.legit_p50.as_secs_f64() * 1e3,
        s.legit_p99.as_secs_f64() * 1e3
    );
    println!(
        "host RSS {} KiB -> {} KiB; open fds {} -> {}",
        s.rss_start_kib, s.rss_end_kib, s.fds_start, s.fds_end
    );
    println!(
        "after drop: worker processes left {}, temp dirs left {}",
        s.workers_left, s.temp_dirs_left
    );
    if let Some(p) = &s.pool {
        println!(
            "pool: workers forked {}, cold fallbacks {}, retired idle {} / memory growth {} / \
             host pressure {} / other {}",
            p.forked,
            p.cold_fallbacks,
            p.retired.idle,
            p.retired.memory_growth,
            p.retired.host_pressure,
            p.retired.other
        );
    }
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let cfg = SoakConfig {
        jobs: args.first().copied().unwrap_or(10_000),
        threads: args.get(1).copied().unwrap_or(8),
        workers: args.get(2).copied().unwrap_or(2) as usize,
        chaos_every: Some(Duration::from_millis(1500)),
        worker_program: None,
    };
    let started = Instant::now();
    let s = soak(&cfg);
    print(&s);
    println!("wall time {:.1} s", started.elapsed().as_secs_f64());
    let clean = s.wrong_or_missing == 0
        && s.hostile_not_contained == 0
        && s.infra_errors == 0
        && s.workers_left == 0
        && s.temp_dirs_left == 0
        && s.fds_end == s.fds_start;
    std::process::exit(if clean { 0 } else { 1 });
}
