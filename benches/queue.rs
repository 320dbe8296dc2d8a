//! Queue mode against the in-process pool, in one run: a private `redis-server`
//! (append-only file, fsync every second), `pyward serve --queue --no-http` consumer
//! processes, and producers writing the documented wire format.
//!
//! Run: `cargo build --release --workspace --bins && cargo bench --bench queue` (`make
//! bench` does both; it needs `redis-server` on the PATH). `PYWARD_BENCH_SCALE=0.1` for a
//! trial.
//!
//! - **throughput**: the typical figure, N jobs put on the stream at once, answered by 1,
//!   2 or 3 consumer processes sharing 6 workers (1x6, 2x3, 3x2), against N jobs on one
//!   in-process pool of 6 workers from 8 threads. On 2 cores more processes cannot add
//!   throughput; what matters is that 3 consumers are not worse than 1.
//! - **queue-path latency**: a job that draws nothing, one at a time: `XADD`, the
//!   announcement, `GET`, against `Executor::run` on the same job; medians and their
//!   difference.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyward::{Executor, Job};
use serde_json::json;

#[path = "common/processes.rs"]
mod processes;
#[path = "../tests/common/redis_server.rs"]
mod redis_server;
#[path = "common/report.rs"]
mod report;

use processes::{release_binary, Killed};

const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");
const NO_FIGURE: &str = "np.savetxt(OUT, [1.0])\n";
const TOTAL_WORKERS: usize = 6;

fn request(code: &str, out: &str) -> String {
    json!({"code": code, "options": {"out_name": out}}).to_string()
}

/// Puts `n` jobs on `stream` and waits until every one is answered; jobs/s.
fn drain(con: &mut redis::Connection, stream: &str, n: usize, code: &str, tag: &str) -> f64 {
    let body = request(code, "figure.png");
    let started = Instant::now();
    let mut pipe = redis::pipe();
    for i in 0..n {
        pipe.cmd("XADD")
            .arg(stream)
            .arg("*")
            .arg("job")
            .arg(&body)
            .arg("id")
            .arg(format!("{tag}-{i}"))
            .ignore();
    }
    pipe.query::<()>(con).expect("XADD");
    loop {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{stream}:result:{tag}-*"))
            .query(con)
            .unwrap();
        if keys.len() == n {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "jobs not answered"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    n as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let quick = std::env::args().any(|a| a == "--test");
    let mut rep = report::Report::new("queue", "cargo bench --bench queue");
    let redis = redis_server::Redis::start(redis_server::Fsync::EverySec);
    let url = redis.url();
    let mut con = redis.connect().unwrap();
    let jobs = if quick {
        12
    } else {
        report::iterations(120, 12)
    };

    // The in-process pool.
    let exec = Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
        .workers(TOTAL_WORKERS)
        .build()
        .expect("pool starts");
    let run = |code: &str| {
        let o = exec.run(Job::new(code.to_string())).expect("job");
        assert!(o.is_success(), "{:?}", o.failure());
    };
    (0..2 * TOTAL_WORKERS).for_each(|_| run(TYPICAL));
    let left = AtomicUsize::new(jobs);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                while left
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                    .is_ok()
                {
                    run(TYPICAL);
                }
            });
        }
    });
    let pool_jps = jobs as f64 / started.elapsed().as_secs_f64();
    println!(
        "in-process pool, {TOTAL_WORKERS} workers: {pool_jps:.1} jobs/s ({jobs} typical figures)"
    );
    rep.value(
        "throughput",
        "typical",
        "in-process pool",
        "jobs/s",
        pool_jps,
    )
    .n(jobs);

    // 1, 2, 3 consumer processes sharing the same number of workers.
    let pyward = release_binary("pyward");
    for consumers in 1..=3 {
        let stream = format!("bench{consumers}");
        let workers = TOTAL_WORKERS / consumers;
        let _procs: Vec<Killed> = (0..consumers)
            .map(|i| {
                let child = Command::new(&pyward)
                    .args([
                        "serve",
                        "--no-http",
                        // One trust domain, like the library pool it is compared with.
                        "--reuse-across-tenants",
                        "--queue",
                        &url,
                        "--queue-stream",
                        &stream,
                    ])
                    .args([
                        "--workers",
                        &workers.to_string(),
                        "--consumer",
                        &format!("c{i}"),
                    ])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("pyward serve --queue");
                Killed(child)
            })
            .collect();
        drain(&mut con, &stream, 2 * TOTAL_WORKERS, TYPICAL, "warm");
        let jps = drain(&mut con, &stream, jobs, TYPICAL, "run");
        let variant = format!("{consumers} consumer(s) x {workers} workers");
        println!("queue, {variant}: {jps:.1} jobs/s");
        rep.value("throughput", "typical", &variant, "jobs/s", jps)
            .n(jobs);
        rep.ratio("throughput", "typical", &variant, "in-process pool");

        if consumers == 1 {
            latency(&mut rep, &mut con, &url, &stream, &exec, quick);
        }
    }
    rep.write();
}

/// One job at a time through the queue (XADD, announcement, GET) and through the pool.
fn latency(
    rep: &mut report::Report,
    con: &mut redis::Connection,
    url: &str,
    stream: &str,
    exec: &Executor,
    quick: bool,
) {
    let n = if quick {
        10
    } else {
        report::iterations(200, 10)
    };
    let mut sub = redis::Client::open(url).unwrap().get_connection().unwrap();
    let mut pubsub = sub.as_pubsub();
    pubsub.psubscribe(format!("{stream}:done:*")).unwrap();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = request(NO_FIGURE, "result.txt");
    let (mut queued, mut direct) = (Vec::new(), Vec::new());
    for i in 0..n {
        let id = format!("lat-{i}");
        let started = Instant::now();
        let _: String = redis::cmd("XADD")
            .arg(stream)
            .arg("*")
            .arg("job")
            .arg(&body)
            .arg("id")
            .arg(&id)
            .query(con)
            .unwrap();
        loop {
            let msg = pubsub.get_message().expect("announcement");
            if msg.get_channel_name().ends_with(&id) {
                break;
            }
        }
        let report: String = redis::cmd("GET")
            .arg(format!("{stream}:result:{id}"))
            .query(con)
            .unwrap();
        queued.push(started.elapsed());
        assert!(report.contains("\"status\":\"ok\""), "{report}");

        let started = Instant::now();
        let o = exec
            .run(Job::new(NO_FIGURE).out_name("result.txt"))
            .expect("job");
        direct.push(started.elapsed());
        assert!(o.is_success());
    }
    let (q, d) = (report::summary_ms(&queued).0, report::summary_ms(&direct).0);
    println!("no-figure job one at a time: queue {q:.3} ms, in-process {d:.3} ms median; queue path adds {:.3} ms", q - d);
    rep.latency("latency", "no figure", "queue", &queued);
    rep.latency("latency", "no figure", "in-process", &direct);
    rep.ratio("latency", "no figure", "queue", "in-process");
    rep.value(
        "queue path overhead",
        "no figure",
        "median difference",
        "ms",
        q - d,
    );
}
