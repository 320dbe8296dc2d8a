//! Load on `pyward serve` from outside (issue 36): closed-loop clients that each send
//! their next job when they hear back, and open-loop arrivals at a fixed rate, with the
//! HTTP client they use. Included by path from `cli/tests/serve.rs` (the long test) and
//! `benches/serve.rs` (which sends its own jobs with the same client).

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What one load run got back.
#[derive(Debug, Clone, Copy, Default)]
pub struct Load {
    /// 200s.
    pub answered: usize,
    /// 429s.
    pub refused: usize,
    /// Anything else (another status, a transport error).
    pub other: usize,
    /// Closed loop: 429s whose whole request fell while another client was surely
    /// waiting out a 429 of its own (from the refusal it read to the next request it
    /// sent). With one client more than places, such a refusal means a place was held
    /// that no client's job needed: the client refused, the waiting one and the places'
    /// holders are one more than the clients there are.
    pub refused_beside_another: usize,
    /// How long the load ran.
    pub seconds: f64,
}

impl Load {
    /// 200s a second.
    pub fn throughput(&self) -> f64 {
        self.answered as f64 / self.seconds
    }

    /// Refusals as a share of every request.
    pub fn refused_share(&self) -> f64 {
        self.refused as f64 / (self.answered + self.refused + self.other).max(1) as f64
    }
}

/// Counts one answer of the run in progress.
fn count(status: u16) {
    let counter = match status {
        200 => &COUNTS[0],
        429 => &COUNTS[1],
        _ => &COUNTS[2],
    };
    counter.fetch_add(1, Ordering::Relaxed);
}

// One run at a time per process: the counters of the run in progress.
static COUNTS: [AtomicUsize; 3] = [
    AtomicUsize::new(0),
    AtomicUsize::new(0),
    AtomicUsize::new(0),
];
static RUNNING: AtomicBool = AtomicBool::new(false);

/// A client for the load: answers of any status are values, and a request that gets
/// no answer within `limit` is one (status 0).
pub fn agent(limit: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(limit))
        .build()
        .into()
}

/// One answer of `POST /v1/jobs`.
pub struct Answer {
    /// The HTTP status; 0 when no answer came (a transport error, or the agent's limit).
    pub status: u16,
    /// The body as it came (read whole, up to 64 MiB).
    pub text: String,
    /// From sending the request to the body read.
    pub took: Duration,
}

impl Answer {
    /// The report of a 200.
    pub fn report(&self) -> Option<serde_json::Value> {
        (self.status == 200)
            .then(|| serde_json::from_str(&self.text).ok())
            .flatten()
    }

    /// On a 429, the wait the server advised: the problem's `retry_after_ms` (one
    /// second when it has none).
    pub fn retry_after(&self) -> Option<Duration> {
        (self.status == 429).then(|| {
            let problem: serde_json::Value = serde_json::from_str(&self.text).unwrap_or_default();
            Duration::from_millis(problem["retry_after_ms"].as_u64().unwrap_or(1000))
        })
    }
}

/// POSTs the JSON job request `body` to `url`'s `/v1/jobs`.
pub fn post(agent: &ureq::Agent, url: &str, body: &str) -> Answer {
    let started = Instant::now();
    let sent = agent
        .post(&format!("{url}/v1/jobs"))
        .header("content-type", "application/json")
        .send(body);
    let (status, text) = match sent {
        Ok(mut r) => (
            r.status().as_u16(),
            (r.body_mut().with_config().limit(64 << 20))
                .read_to_string()
                .unwrap_or_default(),
        ),
        Err(_) => (0, String::new()),
    };
    Answer {
        status,
        text,
        took: started.elapsed(),
    }
}

/// How long a load client waits for one answer.
const CLIENT_LIMIT: Duration = Duration::from_secs(60);

/// Runs `run` with fresh counters; the counts and the time it took.
fn counted(run: impl FnOnce()) -> Load {
    assert!(!RUNNING.swap(true, Ordering::SeqCst), "one load at a time");
    for c in &COUNTS {
        c.store(0, Ordering::SeqCst);
    }
    let started = Instant::now();
    run();
    let load = Load {
        answered: COUNTS[0].load(Ordering::SeqCst),
        refused: COUNTS[1].load(Ordering::SeqCst),
        other: COUNTS[2].load(Ordering::SeqCst),
        refused_beside_another: 0,
        seconds: started.elapsed().as_secs_f64(),
    };
    RUNNING.store(false, Ordering::SeqCst);
    load
}

/// One 429 of a closed-loop client: when its request went, when the refusal came back,
/// and when the client sent its next request (or stopped).
#[derive(Debug, Clone, Copy)]
struct Refusal {
    client: usize,
    sent: Instant,
    refused: Instant,
    next: Option<Instant>,
}

/// `clients` threads, each on its own keep-alive connection, sending `body` again as
/// soon as it hears back (after a 429, after the advised wait) until `length` is over.
pub fn closed_loop(url: &str, clients: usize, body: &str, length: Duration) -> Load {
    let refusals = std::sync::Mutex::new(Vec::new());
    let mut load = counted(|| {
        let until = Instant::now() + length;
        std::thread::scope(|s| {
            for client in 0..clients {
                let refusals = &refusals;
                s.spawn(move || {
                    let agent = agent(CLIENT_LIMIT);
                    let mut mine: Vec<Refusal> = Vec::new();
                    while Instant::now() < until {
                        let sent = Instant::now();
                        if let Some(last) = mine.last_mut() {
                            last.next.get_or_insert(sent);
                        }
                        let answer = post(&agent, url, body);
                        let refused = Instant::now();
                        count(answer.status);
                        if let Some(wait) = answer.retry_after() {
                            let next = None;
                            mine.push(Refusal {
                                client,
                                sent,
                                refused,
                                next,
                            });
                            std::thread::sleep(wait);
                        }
                    }
                    if let Some(last) = mine.last_mut() {
                        last.next.get_or_insert_with(Instant::now);
                    }
                    refusals.lock().unwrap().extend(mine);
                });
            }
        });
    });
    let refusals = refusals.into_inner().unwrap();
    load.refused_beside_another = refusals
        .iter()
        .filter(|b| {
            refusals.iter().any(|a| {
                let waiting = a.refused..=a.next.unwrap_or(a.refused);
                a.client != b.client && waiting.contains(&b.sent) && waiting.contains(&b.refused)
            })
        })
        .count();
    load
}

/// Open-loop arrivals: `rate` requests a second for `length`, whatever comes back,
/// from `connections` client threads (each takes the next arrival when it is free, so
/// arrivals stay on time while fewer than `connections` are outstanding).
pub fn open_loop(url: &str, rate: f64, body: &str, length: Duration, connections: usize) -> Load {
    counted(|| {
        let total = (rate * length.as_secs_f64()) as usize;
        let interval = Duration::from_secs_f64(1.0 / rate);
        let next = AtomicUsize::new(0);
        let started = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..connections {
                s.spawn(|| {
                    let agent = agent(CLIENT_LIMIT);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= total {
                            break;
                        }
                        let due = started + interval.mul_f64(i as f64);
                        if let Some(wait) = due.checked_duration_since(Instant::now()) {
                            std::thread::sleep(wait);
                        }
                        count(post(&agent, url, body).status);
                    }
                });
            }
        });
    })
}
