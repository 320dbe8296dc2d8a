//! `pyward serve` against the library, in one run: the same jobs, the same pool size,
//! once through `Executor::run` and once through HTTP on loopback (keep-alive clients,
//! JSON answers with the figure base64 in the report).
//!
//! Run: `cargo build --release --workspace --bins && cargo bench --bench serve` (`make
//! bench` does both). `PYWARD_BENCH_SCALE=0.1` shortens it for a trial.
//!
//! - **throughput**: the typical figure from 8 client threads on 2 workers, library vs
//!   server, rounds interleaved; jobs/s medians and their ratio (target ≥ 0.95).
//! - **per-request overhead**: a job that draws nothing (writes a text file), one client,
//!   library and HTTP calls alternating; medians and their difference (target < 1 ms).
//! - **overload**: open-loop arrivals at 3× the measured capacity (the server's default
//!   queue: one waiting job per worker), two passes of 60 s: answers by status, hangs,
//!   answers carrying another request's result, p99 of the 200s against the unloaded p99,
//!   and the server's RSS and open descriptors before, after one pass and after two.
//! - **capacity** (issue 36): on a server with the default queue (workers + queue depth =
//!   4 places), 4 closed-loop clients for 30 s (scaled), open-loop arrivals at 3× their
//!   rate, then 5 closed-loop clients: refusals (target 0 at 4 clients, at most one per
//!   answer at 5) and jobs/s, closed loop at capacity vs open-loop saturation (target
//!   ≥ 0.95).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyward::{Executor, Job};
use serde_json::json;

#[path = "../tests/common/load.rs"]
mod load;
#[path = "common/processes.rs"]
mod processes;
#[path = "common/report.rs"]
mod report;

use load::post;
use processes::{release_binary, Killed};

const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");
/// A job that draws nothing: what the server adds per request, without a figure's bytes.
const NO_FIGURE: &str = "np.savetxt(OUT, [1.0])\n";
const THREADS: usize = 8;
const WORKERS: usize = 2;

struct Server {
    process: Killed,
    url: String,
}

fn start_server(queue_depth: Option<usize>) -> Server {
    let mut command = Command::new(release_binary("pyward"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--workers"])
        .arg(WORKERS.to_string())
        // One trust domain, like the library pool it is compared with.
        .arg("--reuse-across-tenants");
    if let Some(depth) = queue_depth {
        command.arg("--queue-depth").arg(depth.to_string());
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("pyward serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let url = line
        .trim()
        .strip_prefix("pyward serve: listening on ")
        .expect("listening line")
        .to_string();
    let server = Server {
        process: Killed(child),
        url,
    };
    let started = Instant::now();
    while agent()
        .get(&format!("{}/readyz", server.url))
        .call()
        .map_or(true, |r| r.status() != 200)
    {
        assert!(started.elapsed() < Duration::from_secs(120), "never ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// The bench's HTTP client; a request unanswered this long counts as hung.
fn agent() -> ureq::Agent {
    load::agent(Duration::from_secs(30))
}

fn job_body(code: &str, out_name: &str) -> String {
    json!({"code": code, "options": {"out_name": out_name}}).to_string()
}

/// `jobs` typical figures from `THREADS` threads through `call`; jobs/s.
fn saturate(jobs: usize, call: impl Fn() + Sync) -> f64 {
    let left = AtomicUsize::new(jobs);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                while left
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                    .is_ok()
                {
                    call();
                }
            });
        }
    });
    jobs as f64 / started.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The server's resident set (KiB) and open descriptors.
fn footprint(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (rss, fds)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let quick = std::env::args().any(|a| a == "--test");
    let mut rep = report::Report::new("serve", "cargo bench --bench serve");
    let exec = Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
        .workers(WORKERS)
        .build()
        .expect("pool starts");
    let server = start_server(Some(64));
    let http = agent();
    let typical = job_body(TYPICAL, "figure.png");
    let lib_call = || {
        let o = exec.run(Job::new(TYPICAL)).expect("library job");
        assert!(o.is_success(), "{:?}", o.failure());
    };
    let http_call = |agent: &ureq::Agent| {
        let answer = post(agent, &server.url, &typical);
        assert_eq!(answer.status, 200);
        assert_eq!(answer.report().expect("report")["status"], "ok");
    };
    // Warm both: first jobs pay first-use costs.
    for _ in 0..4 * WORKERS {
        lib_call();
        http_call(&http);
    }

    // Throughput, rounds interleaved.
    let jobs = if quick { 8 } else { report::iterations(120, 8) };
    let rounds = if quick { 1 } else { 3 };
    let (mut lib, mut srv) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        lib.push(saturate(jobs, lib_call));
        let agents: Vec<ureq::Agent> = (0..THREADS).map(|_| agent()).collect();
        let next = AtomicUsize::new(0);
        srv.push(saturate(jobs, || {
            // Each thread keeps to one agent (one keep-alive connection) per call.
            let a = &agents[next.fetch_add(1, Ordering::Relaxed) % THREADS];
            http_call(a);
        }));
    }
    let (lib_jps, srv_jps) = (median(lib.clone()), median(srv.clone()));
    println!("throughput, typical figure, {THREADS} clients, {WORKERS} workers, {jobs} jobs x {rounds} rounds:");
    println!("  library {lib_jps:.1} jobs/s {lib:.1?}; server {srv_jps:.1} jobs/s {srv:.1?}; ratio {:.3}", srv_jps / lib_jps);
    rep.value("throughput", "typical", "library", "jobs/s", lib_jps)
        .n(jobs * rounds);
    rep.value("throughput", "typical", "HTTP", "jobs/s", srv_jps)
        .n(jobs * rounds);
    rep.ratio("throughput", "typical", "HTTP", "library");

    // Per-request overhead: one client, calls alternating.
    let n = if quick {
        10
    } else {
        report::iterations(300, 10)
    };
    let no_figure = job_body(NO_FIGURE, "result.txt");
    let (mut lib_t, mut srv_t) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let started = Instant::now();
        let o = exec
            .run(Job::new(NO_FIGURE).out_name("result.txt"))
            .expect("library job");
        lib_t.push(started.elapsed());
        assert!(o.is_success(), "{:?}", o.failure());
        let answer = post(&http, &server.url, &no_figure);
        assert_eq!(
            (answer.status, answer.report().map(|r| r["status"].clone())),
            (200, Some("ok".into()))
        );
        srv_t.push(answer.took);
    }
    let (lib_ms, srv_ms) = (report::summary_ms(&lib_t).0, report::summary_ms(&srv_t).0);
    println!("no-figure job, one client, {n} calls each: library {lib_ms:.3} ms, HTTP {srv_ms:.3} ms median; overhead {:.3} ms", srv_ms - lib_ms);
    rep.latency("latency", "no figure", "library", &lib_t);
    rep.latency("latency", "no figure", "HTTP", &srv_t);
    rep.ratio("latency", "no figure", "HTTP", "library");
    rep.value(
        "HTTP overhead",
        "no figure",
        "median difference",
        "ms",
        srv_ms - lib_ms,
    );

    // Unloaded p99 of the typical figure through HTTP.
    let unloaded: Vec<Duration> = (0..if quick { 10 } else { 100 })
        .map(|_| post(&http, &server.url, &typical).took)
        .collect();
    drop(server);
    drop(exec);
    overload(&mut rep, srv_jps, &unloaded, quick);
    capacity(&mut rep, quick);
    rep.write();
}

/// Closed-loop clients as many as the server's places, open-loop overload, and one
/// client more (issue 36).
fn capacity(rep: &mut report::Report, quick: bool) {
    let server = start_server(None);
    let places = 2 * WORKERS;
    let body = job_body(TYPICAL, "figure.png");
    let length = Duration::from_secs_f64(if quick {
        3.0
    } else {
        (30.0 * report::scale()).max(5.0)
    });
    load::closed_loop(&server.url, places, &body, Duration::from_secs(2));
    let at_places = load::closed_loop(&server.url, places, &body, length);
    let rate = 3.0 * at_places.throughput();
    let open = load::open_loop(&server.url, rate, &body, length, 64);
    let beyond = load::closed_loop(&server.url, places + 1, &body, length);
    println!(
        "capacity: {places} places ({WORKERS} workers, queue depth {WORKERS}), {:.0} s each:",
        length.as_secs_f64()
    );
    for (what, l) in [
        (format!("{places} closed-loop clients"), at_places),
        (format!("open loop at {rate:.0}/s"), open),
        (format!("{} closed-loop clients", places + 1), beyond),
    ] {
        println!(
            "  {what}: {:.1} jobs/s, 200 {}, 429 {} ({:.1}%), other {}",
            l.throughput(),
            l.answered,
            l.refused,
            100.0 * l.refused_share(),
            l.other
        );
        rep.value("capacity", "typical", &what, "jobs/s", l.throughput())
            .n(l.answered);
        rep.value(
            "capacity refusals",
            "typical",
            &what,
            "requests",
            l.refused as f64,
        )
        .note(format!("of {} requests", l.answered + l.refused + l.other));
    }
    let ratio = rep.ratio(
        "capacity",
        "typical",
        &format!("{places} closed-loop clients"),
        &format!("open loop at {rate:.0}/s"),
    );
    println!("  closed loop at capacity / open-loop saturation: {ratio:.3} (target >= 0.95)");
}

/// Open-loop arrivals at 3x `capacity` jobs/s for 60 s (scaled) on a server with a
/// queue of one waiting job per worker (the server's default).
fn overload(rep: &mut report::Report, capacity: f64, unloaded: &[Duration], quick: bool) {
    let server = start_server(None);
    let pid = server.process.0.id();
    let warm = agent();
    for _ in 0..4 {
        post(&warm, &server.url, &job_body(TYPICAL, "figure.png"));
    }
    std::thread::sleep(Duration::from_millis(500));
    let before = footprint(pid);
    let seconds = if quick {
        3.0
    } else {
        (60.0 * report::scale()).max(10.0)
    };
    let rate = 3.0 * capacity;
    println!(
        "overload: {rate:.0} jobs/s offered (3x {capacity:.1}) for {seconds:.0} s, twice, queue depth {WORKERS}"
    );
    // Two passes: the footprint after the second shows whether the first one's growth
    // was warm-up (buffers, allocator arenas) or a leak.
    let (results, mismatched) = offer(&server.url, rate, seconds);
    std::thread::sleep(Duration::from_secs(2));
    let after_one = footprint(pid);
    let (second, mismatched_second) = offer(&server.url, rate, seconds);
    std::thread::sleep(Duration::from_secs(2));
    let after_two = footprint(pid);
    let results: Vec<(u16, Duration)> = results.into_iter().chain(second).collect();
    let mismatched = mismatched + mismatched_second;
    let count = |code: u16| results.iter().filter(|(s, _)| *s == code).count();
    let ok: Vec<Duration> = results
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, d)| *d)
        .collect();
    let other = results.len() - count(200) - count(429) - count(503);
    let (p99_loaded, p99_unloaded) = (
        report::stats::percentile_ms(&ok, 0.99),
        report::stats::percentile_ms(unloaded, 0.99),
    );
    println!(
        "  {} requests: 200 {}, 429 {}, 503 {}, other or hung {other}; answers with another request's output {mismatched}",
        results.len(),
        count(200),
        count(429),
        count(503),
    );
    println!(
        "  p99 of the 200s {p99_loaded:.1} ms vs unloaded p99 {p99_unloaded:.1} ms ({:.2}x)",
        p99_loaded / p99_unloaded
    );
    println!(
        "  server RSS {} -> {} -> {} KiB, open descriptors {} -> {} -> {} (before, after pass 1, after pass 2)",
        before.0, after_one.0, after_two.0, before.1, after_one.1, after_two.1
    );
    let metric = "overload";
    rep.value(
        metric,
        "3x capacity",
        "answered 200",
        "requests",
        count(200) as f64,
    );
    rep.value(
        metric,
        "3x capacity",
        "answered 429",
        "requests",
        count(429) as f64,
    );
    rep.value(
        metric,
        "3x capacity",
        "other or hung",
        "requests",
        other as f64,
    );
    rep.value(
        metric,
        "3x capacity",
        "wrong result",
        "requests",
        mismatched as f64,
    );
    rep.value("overload p99", "typical", "unloaded", "ms", p99_unloaded);
    rep.value("overload p99", "typical", "3x capacity", "ms", p99_loaded);
    rep.ratio("overload p99", "typical", "3x capacity", "unloaded");
    for (what, unit, values) in [
        ("RSS", "KiB", [before.0, after_one.0, after_two.0]),
        (
            "descriptors",
            "fds",
            [before.1 as u64, after_one.1 as u64, after_two.1 as u64],
        ),
    ] {
        for (variant, v) in ["before", "after pass 1", "after pass 2"]
            .iter()
            .zip(values)
        {
            rep.value("server footprint", what, variant, unit, v as f64);
        }
    }
}

/// Open-loop arrivals at `rate` jobs/s for `seconds`, each job printing its request id:
/// every answer's status and time, and how many 200s carried another request's output.
fn offer(url: &str, rate: f64, seconds: f64) -> (Vec<(u16, Duration)>, usize) {
    let total = (rate * seconds) as usize;
    let interval = Duration::from_secs_f64(1.0 / rate);
    let (tx, rx) = crossbeam_channel::unbounded::<usize>();
    let results = Mutex::new(Vec::with_capacity(total));
    let mismatched = AtomicUsize::new(0);
    let url = Arc::new(url.to_string());
    std::thread::scope(|s| {
        for _ in 0..64 {
            let (rx, url, results, mismatched) =
                (rx.clone(), Arc::clone(&url), &results, &mismatched);
            s.spawn(move || {
                let agent = agent();
                for id in rx {
                    let code = format!("{TYPICAL}\nprint('request-{id}')\n");
                    let answer = post(&agent, &url, &job_body(&code, "figure.png"));
                    if let Some(r) = answer.report() {
                        if r["stdout"].as_str() != Some(&format!("request-{id}\n")) {
                            mismatched.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    results.lock().unwrap().push((answer.status, answer.took));
                }
            });
        }
        let started = Instant::now();
        for id in 0..total {
            let due = started + interval * id as u32;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            tx.send(id).expect("clients alive");
        }
        drop(tx);
    });
    (results.into_inner().unwrap(), mismatched.into_inner())
}
