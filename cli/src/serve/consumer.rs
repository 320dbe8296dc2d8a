//! The queue consumer, the queue's door to the job service: takes as many entries as the pool has idle workers (`XREADGROUP`), and
//! from time to time the entries of consumers that stopped answering (`XAUTOCLAIM` after
//! `--claim-idle`); runs each on the warm pool; writes its answer once; and only then
//! acknowledges it. An entry delivered more than `--max-deliveries` times (its consumers
//! kept dying) is dead-lettered instead of run. Redis going away stops the reading, not
//! the jobs in flight: their answers and acknowledgements are retried until it is back.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyward::report::Report;
use redis::aio::MultiplexedConnection;
use redis::streams::{
    StreamAutoClaimOptions, StreamAutoClaimReply, StreamId, StreamPendingCountReply,
    StreamReadOptions, StreamReadReply,
};
use redis::AsyncConnectionConfig;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::queue::{valid_job_id, Backoff, Queue};
use super::state::App;
use crate::service::options::{from_json_object, JobRequest};
use crate::service::{self, Door};

/// How long one `XREADGROUP` waits for entries (and so how soon a drain is noticed).
const READ_BLOCK: Duration = Duration::from_secs(1);

/// Consumes jobs until the server drains, then waits for the jobs it took.
pub async fn consume(app: Arc<App>, queue: Arc<Queue>, workers: usize) {
    let slots = Arc::new(Semaphore::new(workers));
    let running: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut tasks = JoinSet::new();
    let mut reader: Option<MultiplexedConnection> = None;
    let mut backoff = Backoff::new();
    let mut next_claim = Instant::now();
    tracing::info!(stream = %queue.stream, group = %queue.group, consumer = %queue.consumer, "consuming");
    while !app.draining() {
        // Capacity first: never take more entries than there are idle workers.
        let Ok(first) = Arc::clone(&slots).acquire_owned().await else {
            break;
        };
        if app.draining() {
            break;
        }
        let mut permits = vec![first];
        while let Ok(p) = Arc::clone(&slots).try_acquire_owned() {
            permits.push(p);
        }
        let conn = match reader.as_mut() {
            Some(conn) => conn,
            None => match connect(&queue).await {
                Ok(conn) => reader.insert(conn),
                Err(e) => {
                    queue.set_reachable(false);
                    tracing::debug!("queue connection: {e}");
                    drop(permits);
                    backoff.wait().await;
                    continue;
                }
            },
        };
        let taken = if Instant::now() >= next_claim {
            next_claim = Instant::now() + (queue.claim_idle / 2).max(Duration::from_millis(200));
            match claim(conn, &queue, permits.len()).await {
                Ok(claimed) if !claimed.is_empty() => Ok(claimed),
                Ok(_) => read(conn, &queue, permits.len()).await,
                Err(e) => Err(e),
            }
        } else {
            read(conn, &queue, permits.len()).await
        };
        let entries = match taken {
            Ok(entries) => entries,
            Err(e) => {
                queue.set_reachable(false);
                tracing::debug!("reading the queue: {e}");
                reader = None;
                drop(permits);
                backoff.wait().await;
                continue;
            }
        };
        queue.set_reachable(true);
        backoff = Backoff::new();
        for ((entry, deliveries), permit) in entries.into_iter().zip(permits.drain(..)) {
            let work = Work {
                app: Arc::clone(&app),
                queue: Arc::clone(&queue),
                running: Arc::clone(&running),
                _permit: permit,
            };
            tasks.spawn(work.process(entry, deliveries));
        }
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    leave_group(&queue).await;
}

/// On a clean stop, removes this consumer's name from the group when it holds no
/// entries (names of processes that come and go would pile up otherwise); entries it
/// still holds stay for another consumer to claim.
async fn leave_group(queue: &Queue) {
    let mut conn = queue.conn.clone();
    let held: redis::RedisResult<StreamPendingCountReply> = redis::cmd("XPENDING")
        .arg(&queue.stream)
        .arg(&queue.group)
        .arg("-")
        .arg("+")
        .arg(1)
        .arg(&queue.consumer)
        .query_async(&mut conn)
        .await;
    if matches!(held, Ok(ref h) if h.ids.is_empty()) {
        let _: redis::RedisResult<i64> = redis::cmd("XGROUP")
            .arg("DELCONSUMER")
            .arg(&queue.stream)
            .arg(&queue.group)
            .arg(&queue.consumer)
            .query_async(&mut conn)
            .await;
    }
}

/// A connection for blocking reads, and the consumer group (created if missing; from the
/// stream's start, so entries added before the first consumer are not skipped).
async fn connect(queue: &Queue) -> redis::RedisResult<MultiplexedConnection> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(READ_BLOCK + Duration::from_secs(5)));
    let mut conn = queue
        .client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    let created: redis::RedisResult<()> = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(&queue.stream)
        .arg(&queue.group)
        .arg("0")
        .arg("MKSTREAM")
        .query_async(&mut conn)
        .await;
    match created {
        Err(e) if e.code() != Some("BUSYGROUP") => Err(e),
        _ => Ok(conn),
    }
}

/// New entries for this consumer (delivered once).
async fn read(
    conn: &mut MultiplexedConnection,
    queue: &Queue,
    count: usize,
) -> redis::RedisResult<Vec<(StreamId, u64)>> {
    let options = StreamReadOptions::default()
        .group(&queue.group, &queue.consumer)
        .count(count)
        .block(READ_BLOCK.as_millis() as usize);
    let reply: Option<StreamReadReply> =
        redis::AsyncCommands::xread_options(conn, &[&queue.stream], &[">"], &options).await?;
    let entries = reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids);
    Ok(entries.map(|e| (e, 1)).collect())
}

/// Entries idle longer than `--claim-idle` in other consumers' hands, with how often
/// each has now been delivered.
async fn claim(
    conn: &mut MultiplexedConnection,
    queue: &Queue,
    count: usize,
) -> redis::RedisResult<Vec<(StreamId, u64)>> {
    let reply: StreamAutoClaimReply = redis::AsyncCommands::xautoclaim_options(
        conn,
        &queue.stream,
        &queue.group,
        &queue.consumer,
        queue.claim_idle.as_millis() as u64,
        "0-0",
        StreamAutoClaimOptions::default().count(count),
    )
    .await?;
    let mut claimed = Vec::with_capacity(reply.claimed.len());
    for entry in reply.claimed {
        let pending: StreamPendingCountReply = redis::AsyncCommands::xpending_count(
            conn,
            &queue.stream,
            &queue.group,
            &entry.id,
            &entry.id,
            1,
        )
        .await?;
        let deliveries = pending.ids.first().map_or(1, |p| p.times_delivered as u64);
        claimed.push((entry, deliveries));
    }
    Ok(claimed)
}

/// One entry taken from the stream.
struct Work {
    app: Arc<App>,
    queue: Arc<Queue>,
    running: Arc<Mutex<HashSet<String>>>,
    _permit: OwnedSemaphorePermit,
}

impl Work {
    async fn process(self, entry: StreamId, deliveries: u64) {
        let job_id = match entry.get::<String>("id") {
            Some(id) if valid_job_id(&id) => id,
            _ => entry.id.clone(),
        };
        // Claimed back while still running here (a job longer than --claim-idle): the
        // run in progress answers it.
        if !self.lock_running().insert(entry.id.clone()) {
            return;
        }
        let _running = Running(&self, entry.id.clone());
        // Best effort: a job added by a direct XADD is known from now on (`GET
        // /v1/jobs/{id}` answers 202, not 404, until its result is written).
        let _ = self.queue.results.mark(&self.queue, &job_id).await;
        let metrics = &self.app.metrics;
        if deliveries > 1 {
            metrics.queue_event("reclaimed");
        }
        if deliveries > self.queue.max_deliveries {
            self.dead_letter(&entry, &job_id, deliveries).await;
        } else if matches!(
            self.queue.results.exists(&self.queue, &job_id).await,
            Ok(true)
        ) {
            metrics.queue_event("duplicate");
            tracing::info!(id = %job_id, entry = %entry.id, deliveries, "duplicate delivery dropped: its answer is written");
        } else {
            let Some(report) = self.run(&entry, &job_id).await else {
                // Not run (the server is draining): left for another consumer.
                return;
            };
            let text = serde_json::to_vec(&report).unwrap_or_default();
            if self
                .queue
                .results
                .write_once(&self.queue, &job_id, &text)
                .await
            {
                metrics.queue_event("answered");
                tracing::info!(id = %job_id, entry = %entry.id, status = %report.status, "answered");
            } else {
                metrics.queue_event("duplicate");
                tracing::info!(id = %job_id, entry = %entry.id, "duplicate answer dropped: first writer won");
            }
        }
        self.acknowledge(&entry.id).await;
    }

    fn lock_running(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.running.lock().expect("running lock")
    }

    /// The report of the entry's job, or `None` when it was not run here.
    async fn run(&self, entry: &StreamId, job_id: &str) -> Option<Report> {
        let gate = self.app.policy.gate_enabled();
        let request = entry.get::<Vec<u8>>("job").unwrap_or_default();
        let parsed = from_json_object::<JobRequest>(&request)
            .map_err(|e| format!("field `job`: {e}"))
            .and_then(|r| {
                r.into_job(&self.app.limits.ceiling())
                    .map_err(|refusal| refusal.detail)
            });
        let job = match parsed {
            Ok(job) => job,
            Err(why) => return Some(Report::not_run(true, "malformed_request", why, gate)),
        };
        let mut backoff = Backoff::new();
        loop {
            let Ok((_in_flight, executor)) = self.app.admit() else {
                return None;
            };
            let request = service::Request::new(job.clone(), Door::Queue, job_id);
            match self.app.service.run(&executor, request).await {
                Ok(done) => return Some(done.report(true)),
                // Its workers are busy with HTTP jobs too: wait, never answer "full".
                Err(pyward::Error::QueueFull { .. }) => backoff.wait().await,
                Err(pyward::Error::Shutdown) => return None,
                Err(e) => return Some(Report::from_error(&e, gate)),
            }
        }
    }

    /// Moves the entry to the dead letter stream and answers its waiter.
    async fn dead_letter(&self, entry: &StreamId, job_id: &str, deliveries: u64) {
        let reason = format!(
            "delivered {deliveries} times (more than --max-deliveries {}): every consumer that took it stopped before answering",
            self.queue.max_deliveries
        );
        let job = entry.get::<Vec<u8>>("job").unwrap_or_default();
        let mut backoff = Backoff::new();
        loop {
            let mut conn = self.queue.conn.clone();
            let added: redis::RedisResult<String> = redis::cmd("XADD")
                .arg(self.queue.dead_stream())
                .arg("*")
                .arg("id")
                .arg(job_id)
                .arg("entry")
                .arg(&entry.id)
                .arg("reason")
                .arg(&reason)
                .arg("deliveries")
                .arg(deliveries)
                .arg("job")
                .arg(&job)
                .query_async(&mut conn)
                .await;
            if added.is_ok() {
                break;
            }
            backoff.wait().await;
        }
        let gate = self.app.policy.gate_enabled();
        let report = Report::not_run(false, "dead_lettered", &reason, gate);
        let text = serde_json::to_vec(&report).unwrap_or_default();
        self.queue
            .results
            .write_once(&self.queue, job_id, &text)
            .await;
        self.app.metrics.queue_event("dead_lettered");
        tracing::warn!(id = %job_id, entry = %entry.id, deliveries, "dead-lettered");
    }

    /// `XACK`, then `XDEL` (the stream keeps only jobs not yet answered, so its length
    /// is the backlog), retried until Redis answers.
    async fn acknowledge(&self, entry_id: &str) {
        let mut backoff = Backoff::new();
        loop {
            let mut conn = self.queue.conn.clone();
            let done: redis::RedisResult<()> = redis::pipe()
                .atomic()
                .cmd("XACK")
                .arg(&self.queue.stream)
                .arg(&self.queue.group)
                .arg(entry_id)
                .ignore()
                .cmd("XDEL")
                .arg(&self.queue.stream)
                .arg(entry_id)
                .ignore()
                .query_async(&mut conn)
                .await;
            match done {
                Ok(()) => return,
                Err(e) => {
                    self.queue.set_reachable(false);
                    tracing::debug!("acknowledging {entry_id}: {e}");
                    backoff.wait().await;
                }
            }
        }
    }
}

/// Removes an entry from the set of those running here.
struct Running<'a>(&'a Work, String);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.lock_running().remove(&self.1);
    }
}
