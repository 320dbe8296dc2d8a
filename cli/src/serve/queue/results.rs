//! Results under job ids: written once (`SET NX EX`, first writer wins), announced with
//! `PUBLISH`, and waited for by `GET /v1/jobs/{id}`. Waiters are woken by one pattern
//! subscription per process and also look again every second, so an announcement lost
//! while Redis was away costs at most a second.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{Backoff, Queue};

/// How often a waiter looks for its result without an announcement.
const POLL: Duration = Duration::from_secs(1);

/// The result keys and the waiters of this process.
pub struct Results {
    prefix: String,
    waiters: Mutex<HashMap<String, (usize, Arc<Notify>)>>,
}

impl Results {
    /// Results of the jobs of `stream`.
    pub fn new(stream: &str) -> Results {
        Results {
            prefix: stream.to_string(),
            waiters: Mutex::new(HashMap::new()),
        }
    }

    /// The key of a job's result.
    pub fn key(&self, id: &str) -> String {
        format!("{}:result:{id}", self.prefix)
    }

    fn channel(&self, id: &str) -> String {
        format!("{}:done:{id}", self.prefix)
    }

    /// The key that says job `id` was enqueued (kept as long as a result).
    fn marker(&self, id: &str) -> String {
        format!("{}:job:{id}", self.prefix)
    }

    /// Notes that job `id` was enqueued, for `result_ttl` seconds: `GET /v1/jobs/{id}`
    /// then answers 202 while it waits, and 404 for an id never enqueued. Set by
    /// `POST /v1/jobs?queue=1` and by the consumer that reads the job (a direct `XADD`).
    pub async fn mark(&self, queue: &Queue, id: &str) -> redis::RedisResult<()> {
        let mut conn = queue.conn.clone();
        redis::cmd("SET")
            .arg(self.marker(id))
            .arg(1)
            .arg("EX")
            .arg(queue.result_ttl)
            .query_async(&mut conn)
            .await
    }

    /// Whether job `id` is known: answered, marked, or (a direct `XADD` no consumer has
    /// read yet) an entry of the stream.
    pub async fn known(&self, queue: &Queue, id: &str) -> redis::RedisResult<bool> {
        let mut conn = queue.conn.clone();
        let marked: i64 = redis::cmd("EXISTS")
            .arg(self.key(id))
            .arg(self.marker(id))
            .query_async(&mut conn)
            .await?;
        if marked > 0 {
            return Ok(true);
        }
        if !is_entry_id(id) {
            return Ok(false);
        }
        let entries: Vec<redis::Value> = redis::cmd("XRANGE")
            .arg(&queue.stream)
            .arg(id)
            .arg(id)
            .arg("COUNT")
            .arg(1)
            .query_async(&mut conn)
            .await?;
        Ok(!entries.is_empty())
    }

    /// Writes `report` as the answer of job `id` unless one is there; `true` when this
    /// call wrote it. Retries until Redis answers: an answer is never dropped.
    ///
    /// A retry can find the answer its own earlier attempt wrote (Redis applied the
    /// `SET` and the reply was lost: Redis restarted, or the reply came after the
    /// timeout). `SET NX GET` returns what is there, and a report equal to this one, byte
    /// for byte (timings, record path), is this writer's, not another consumer's.
    pub async fn write_once(&self, queue: &Queue, id: &str, report: &[u8]) -> bool {
        let mut backoff = Backoff::new();
        let written = loop {
            let mut conn = queue.conn.clone();
            let set: redis::RedisResult<Option<Vec<u8>>> = redis::cmd("SET")
                .arg(self.key(id))
                .arg(report)
                .arg("NX")
                .arg("GET")
                .arg("EX")
                .arg(queue.result_ttl)
                .query_async(&mut conn)
                .await;
            match set {
                Ok(None) => break true,
                Ok(Some(there)) => break there == report,
                Err(e) => {
                    queue.set_reachable(false);
                    tracing::debug!("writing the result of {id}: {e}");
                    backoff.wait().await;
                }
            }
        };
        queue.set_reachable(true);
        let mut conn = queue.conn.clone();
        // Best effort: a waiter that misses it finds the result on its next look.
        let _: redis::RedisResult<i64> = redis::cmd("PUBLISH")
            .arg(self.channel(id))
            .arg(1)
            .query_async(&mut conn)
            .await;
        written
    }

    /// Whether job `id` has its answer.
    pub async fn exists(&self, queue: &Queue, id: &str) -> redis::RedisResult<bool> {
        let mut conn = queue.conn.clone();
        redis::cmd("EXISTS")
            .arg(self.key(id))
            .query_async(&mut conn)
            .await
    }

    /// The answer of job `id`, waiting for it until `deadline`; `Ok(None)` when it is
    /// not there by then.
    pub async fn wait(
        &self,
        queue: &Queue,
        id: &str,
        deadline: Instant,
    ) -> redis::RedisResult<Option<Vec<u8>>> {
        let registration = Registration::new(self, id);
        loop {
            // Armed before the look, so an announcement between the two is not missed.
            let announced = registration.notify.notified();
            let mut conn = queue.conn.clone();
            let found: Option<Vec<u8>> = redis::cmd("GET")
                .arg(self.key(id))
                .query_async(&mut conn)
                .await?;
            if found.is_some() || Instant::now() >= deadline {
                return Ok(found);
            }
            let next = (Instant::now() + POLL).min(deadline);
            tokio::select! {
                () = announced => {}
                () = tokio::time::sleep_until(next) => {}
            }
        }
    }

    /// Wakes the waiters of the job a `done` channel names.
    fn announce(&self, channel: &str) {
        let Some(id) = channel.rsplit_once(":done:").map(|(_, id)| id) else {
            return;
        };
        let waiters = self.waiters.lock().expect("waiters lock");
        if let Some((_, notify)) = waiters.get(id) {
            notify.notify_waiters();
        }
    }
}

/// Whether `id` has the shape of a stream entry id (`<ms>-<seq>`).
fn is_entry_id(id: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    id.split_once('-')
        .is_some_and(|(ms, seq)| digits(ms) && digits(seq))
}

/// A waiter's entry in the map, removed when its last waiter leaves.
struct Registration<'a> {
    results: &'a Results,
    id: String,
    notify: Arc<Notify>,
}

impl<'a> Registration<'a> {
    fn new(results: &'a Results, id: &str) -> Registration<'a> {
        let mut waiters = results.waiters.lock().expect("waiters lock");
        let entry = waiters
            .entry(id.to_string())
            .or_insert_with(|| (0, Arc::new(Notify::new())));
        entry.0 += 1;
        Registration {
            results,
            id: id.to_string(),
            notify: Arc::clone(&entry.1),
        }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut waiters = self.results.waiters.lock().expect("waiters lock");
        if let Some(entry) = waiters.get_mut(&self.id) {
            entry.0 -= 1;
            if entry.0 == 0 {
                waiters.remove(&self.id);
            }
        }
    }
}

/// Listens for result announcements for as long as the process runs, reconnecting with
/// backoff.
pub async fn announcements(queue: Arc<Queue>) {
    let pattern = format!("{}:done:*", queue.stream);
    let mut backoff = Backoff::new();
    loop {
        let subscribed = async {
            let mut pubsub = queue.client.get_async_pubsub().await?;
            pubsub.psubscribe(&pattern).await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        match subscribed.await {
            Ok(mut pubsub) => {
                backoff = Backoff::new();
                let mut messages = pubsub.on_message();
                while let Some(message) = messages.next().await {
                    queue.results.announce(message.get_channel_name());
                }
            }
            Err(e) => tracing::debug!("result announcements: {e}"),
        }
        backoff.wait().await;
    }
}
