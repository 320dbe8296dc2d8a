//! Queue mode (`pyward serve --queue redis://...`): jobs arrive on a Redis stream and are
//! consumed through a consumer group by any number of pyward processes on any number of
//! machines; each result is written once under the job's id and waiters are notified.
//!
//! The wire format (see the deployment guide, `docs/deploy.md`):
//!
//! - enqueue: `XADD <stream> * job <JSON of a POST /v1/jobs body> [id <job id>]`; the
//!   job id is the `id` field if given (`[0-9A-Za-z_.:-]`, at most 128 bytes), else the
//!   entry id `XADD` returned;
//! - result: `GET <stream>:result:<job id>`, the versioned report (artifacts base64),
//!   kept `--result-ttl` seconds; `PUBLISH <stream>:done:<job id> 1` once it is written;
//! - dead letters: `<stream>:dead`, entries with the job id, the reason and the job.
//!
//! Delivery is at least once; answers are exactly once per job id (`SET NX`). A consumer
//! acknowledges (`XACK`, then `XDEL`) only after the result is written.
//!
//! This folder is the wire: the stream's names and settings, the connection and the
//! results ([`results`]: writing once, waiting). The consumer that reads the stream and
//! runs its jobs through the job service is the queue's door, `serve::consumer`.

mod results;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub use results::{announcements, Results};

/// The queue options of `pyward serve`.
#[derive(Args, Debug, Clone)]
pub struct QueueArgs {
    /// Consume jobs from this Redis stream server (`redis://[:password@]host:port/db`;
    /// `rediss://` for TLS). Enables `POST /v1/jobs?queue=1` and `GET /v1/jobs/{id}`.
    #[arg(long = "queue", value_name = "URL")]
    pub url: Option<String>,
    /// The job stream.
    #[arg(long, default_value = "pyward:jobs")]
    pub queue_stream: String,
    /// The consumer group every pyward process of one deployment shares.
    #[arg(long, default_value = "pyward")]
    pub queue_group: String,
    /// This consumer's name in the group (default: host name and process id).
    #[arg(long)]
    pub consumer: Option<String>,
    /// A job delivered this many seconds ago and not acknowledged is claimed by another
    /// consumer (its own died).
    #[arg(long, default_value_t = 60.0)]
    pub claim_idle: f64,
    /// A job delivered more times than this (its consumers kept dying) goes to the dead
    /// letter stream instead of running again.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_deliveries: u64,
    /// Seconds a result is kept.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    pub result_ttl: u64,
    /// `POST /v1/jobs?queue=1` answers 429 while the stream holds this many jobs.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub queue_max_len: u64,
    /// Consume only: no HTTP listener.
    #[arg(long, requires = "url")]
    pub no_http: bool,
}

/// A connected queue: names, settings and the connection for commands that do not
/// block (the consumer's blocking reads use their own).
pub struct Queue {
    /// The Redis client (for the consumer's and the notifier's own connections).
    pub client: redis::Client,
    /// Commands that do not block: results, acknowledgements, enqueueing.
    pub conn: ConnectionManager,
    /// The job stream.
    pub stream: String,
    /// The consumer group.
    pub group: String,
    /// This process's consumer name.
    pub consumer: String,
    /// Idle time before another consumer claims a job.
    pub claim_idle: Duration,
    /// Deliveries before a job is dead-lettered.
    pub max_deliveries: u64,
    /// Seconds a result is kept.
    pub result_ttl: u64,
    /// Enqueue refuses past this stream length.
    pub max_len: u64,
    /// Whether the last command reached Redis (readiness).
    reachable: AtomicBool,
    /// Waiters for results.
    pub results: Results,
}

impl Queue {
    /// The queue `args` describe (connections are made lazily and remade after a loss).
    pub fn new(args: &QueueArgs) -> Result<Queue, String> {
        let url = args.url.as_deref().ok_or("no --queue URL")?;
        let client = redis::Client::open(url).map_err(|e| format!("--queue {url}: {e}"))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(5)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        let conn = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(|e| format!("--queue {url}: {e}"))?;
        if !(args.claim_idle > 0.0 && args.claim_idle.is_finite()) {
            return Err("--claim-idle must be a positive number of seconds".into());
        }
        let consumer = args.consumer.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map_or_else(|_| "host".into(), |h| h.trim().to_string());
            format!("{host}-{}", std::process::id())
        });
        Ok(Queue {
            results: Results::new(&args.queue_stream),
            client,
            conn,
            stream: args.queue_stream.clone(),
            group: args.queue_group.clone(),
            consumer,
            claim_idle: Duration::from_secs_f64(args.claim_idle),
            max_deliveries: args.max_deliveries,
            result_ttl: args.result_ttl,
            max_len: args.queue_max_len,
            reachable: AtomicBool::new(false),
        })
    }

    /// The dead letter stream.
    pub fn dead_stream(&self) -> String {
        format!("{}:dead", self.stream)
    }

    /// Records whether Redis answered.
    pub fn set_reachable(&self, ok: bool) {
        if self.reachable.swap(ok, Ordering::Relaxed) != ok {
            if ok {
                tracing::info!("queue reachable");
            } else {
                tracing::warn!("queue unreachable; retrying with backoff");
            }
        }
    }

    /// Whether Redis answered the last command.
    pub fn reachable(&self) -> bool {
        self.reachable.load(Ordering::Relaxed)
    }

    /// Adds a job (`request`: the JSON of a `POST /v1/jobs` body) and returns its id;
    /// `Ok(None)` when the stream already holds `max_len` jobs.
    pub async fn enqueue(&self, request: &[u8]) -> redis::RedisResult<Option<String>> {
        let mut conn = self.conn.clone();
        let len: u64 = redis::cmd("XLEN")
            .arg(&self.stream)
            .query_async(&mut conn)
            .await
            .inspect_err(|_| self.set_reachable(false))?;
        self.set_reachable(true);
        if len >= self.max_len {
            return Ok(None);
        }
        let id: String = redis::cmd("XADD")
            .arg(&self.stream)
            .arg("*")
            .arg("job")
            .arg(request)
            .query_async(&mut conn)
            .await?;
        Ok(Some(id))
    }
}

/// Whether `id` can name a job (it becomes part of Redis key names).
pub fn valid_job_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b))
}

/// Exponential backoff from 50 ms to 5 s.
pub struct Backoff(Duration);

impl Backoff {
    /// The first delay.
    pub fn new() -> Backoff {
        Backoff(Duration::from_millis(50))
    }

    /// Sleeps the current delay, then doubles it.
    pub async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(Duration::from_secs(5));
    }
}
