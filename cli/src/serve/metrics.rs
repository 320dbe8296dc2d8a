//! `/metrics`: Prometheus (OpenMetrics) text. Job counters and latency histograms are
//! kept here as requests finish; the pool's gauges (queue, busy and idle workers,
//! retirements) are read from `Executor::stats` at scrape time, never cached.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::Serialize;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use pyward::report::ms;
use pyward::{Executor, JobFailure, Outcome};

use crate::service::{Door, Observer};

/// One label: `[(name, value)]`.
type Label = [(&'static str, &'static str); 1];

/// Worker replacements kept for the pool view.
const RECENT_REPLACEMENTS: usize = 20;

/// A worker that left the pool because of the job it ran (killed, or retired after it).
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct Replacement {
    /// When, in Unix milliseconds.
    pub at_unix_ms: u64,
    /// `killed` (timeout, memory, crash, cancel) or `recycled` (retired after its job).
    pub kind: &'static str,
    /// The cause: the failure's status word, or the retirement's reason.
    pub cause: String,
    /// What happened, for a person (a retirement's detail; empty for a kill).
    pub detail: String,
    /// The worker's pool slot.
    pub slot: usize,
    /// The worker's process id.
    pub pid: u32,
}

/// Latency quantiles of one job step, in milliseconds, estimated from the histogram's
/// buckets the way Prometheus's `histogram_quantile` does (linear within a bucket).
#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct Quantiles {
    /// Observations.
    pub count: u64,
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
}

/// Media type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    /// The job-step histograms alone (the same family as in `registry`): what the pool
    /// view's quantiles read, without the pool's gauges (a /proc read per worker).
    latency_registry: Registry,
    jobs: Family<Label, Counter>,
    stage_seconds: Family<Label, Histogram>,
    kills: Family<Label, Counter>,
    recycles: Family<Label, Counter>,
    responses: Family<[(&'static str, String); 1], Counter>,
    queue_events: Family<Label, Counter>,
    warmup_seconds: Gauge<f64, AtomicU64>,
    recent: Mutex<VecDeque<Replacement>>,
}

impl Metrics {
    /// Registers every metric; the pool's are read from `executor` once it is set.
    pub fn new(executor: Arc<OnceLock<Executor>>) -> Metrics {
        let mut registry = Registry::with_prefix("pyward");
        let jobs = Family::<Label, Counter>::default();
        registry.register(
            "jobs",
            "Jobs answered, by report status (client_disconnected: the client left and the job was cancelled)",
            jobs.clone(),
        );
        let stage_seconds = Family::<Label, Histogram>::new_with_constructor(|| {
            // 0.25 ms .. ~67 s.
            Histogram::new(exponential_buckets(0.000_25, 2.0, 19))
        });
        let stage_help =
            "Time per job step: gate, queue (waiting for a worker), exec (inside the worker), total";
        registry.register("job_stage_seconds", stage_help, stage_seconds.clone());
        let mut latency_registry = Registry::with_prefix("pyward");
        latency_registry.register("job_stage_seconds", stage_help, stage_seconds.clone());
        let kills = Family::<Label, Counter>::default();
        registry.register(
            "worker_kills",
            "Workers killed because of their job, by cause (timeout, memory_exceeded, crashed, cancelled)",
            kills.clone(),
        );
        let recycles = Family::<Label, Counter>::default();
        registry.register(
            "worker_recycles",
            "Workers retired after a job that finished, by reason",
            recycles.clone(),
        );
        let responses = Family::<[(&'static str, String); 1], Counter>::default();
        registry.register(
            "http_responses",
            "HTTP answers by status code",
            responses.clone(),
        );
        let queue_events = Family::<Label, Counter>::default();
        registry.register(
            "queue_events",
            "Queue mode: entries answered, duplicate deliveries dropped, entries reclaimed from a consumer that stopped, entries dead-lettered",
            queue_events.clone(),
        );
        let warmup_seconds = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "pool_warmup_seconds",
            "How long the pool took to warm up (0 until it is warm)",
            warmup_seconds.clone(),
        );
        registry.register_collector(Box::new(PoolCollector { executor }));
        Metrics {
            registry,
            latency_registry,
            jobs,
            stage_seconds,
            kills,
            recycles,
            responses,
            queue_events,
            warmup_seconds,
            recent: Mutex::new(VecDeque::with_capacity(RECENT_REPLACEMENTS)),
        }
    }

    /// The pool became warm after `warmup`.
    pub fn pool_warm(&self, warmup: Duration) {
        self.warmup_seconds.set(warmup.as_secs_f64());
    }

    /// A job that ran (or was refused by the gate) and was answered.
    pub fn job_answered(&self, outcome: &Outcome) {
        self.jobs
            .get_or_create(&[("status", outcome.status())])
            .inc();
        let t = &outcome.timings;
        let mut stages = vec![("gate", t.gate), ("total", t.total)];
        if outcome.worker.is_some() {
            // A job the gate refused never queued nor ran: no zeros in those histograms.
            stages.extend([("queue", t.queue), ("exec", t.exec)]);
        }
        for (stage, d) in stages {
            let stage = self.stage_seconds.get_or_create(&[("stage", stage)]);
            stage.observe(d.as_secs_f64());
        }
        let Some(worker) = &outcome.worker else {
            return;
        };
        let replaced = |kind, cause: &str, detail: &str| Replacement {
            at_unix_ms: unix_ms(),
            kind,
            cause: cause.to_string(),
            detail: detail.to_string(),
            slot: worker.slot,
            pid: worker.pid,
        };
        if let Some(failure) = outcome.failure() {
            if matches!(
                failure,
                JobFailure::Timeout { .. }
                    | JobFailure::MemoryExceeded { .. }
                    | JobFailure::WorkerCrashed { .. }
                    | JobFailure::ProtocolViolation { .. }
                    | JobFailure::Cancelled
            ) {
                self.kills
                    .get_or_create(&[("cause", failure.status())])
                    .inc();
                self.remember(replaced("killed", failure.status(), ""));
            }
        }
        if let Some(r) = &outcome.retired {
            self.recycles
                .get_or_create(&[("reason", r.reason.as_str())])
                .inc();
            self.remember(replaced("recycled", r.reason.as_str(), &r.detail));
        }
    }

    fn remember(&self, replacement: Replacement) {
        let mut recent = self.recent.lock();
        if recent.len() == RECENT_REPLACEMENTS {
            recent.pop_front();
        }
        recent.push_back(replacement);
    }

    /// The latest worker replacements, newest first.
    pub fn recent_replacements(&self) -> Vec<Replacement> {
        self.recent.lock().iter().rev().cloned().collect()
    }

    /// Latency quantiles per job step (`gate`, `queue`, `exec`, `total`), read from the
    /// same histograms `/metrics` exposes.
    pub fn latency(&self) -> BTreeMap<String, Quantiles> {
        let text = encode(&self.latency_registry);
        quantiles_from_exposition(&text, "pyward_job_stage_seconds", "stage")
    }

    /// A job whose client went away before its answer: the job was cancelled.
    pub fn job_abandoned(&self) {
        self.jobs
            .get_or_create(&[("status", "client_disconnected")])
            .inc();
    }

    /// A queue event: `answered`, `duplicate`, `reclaimed`, `dead_lettered`.
    pub fn queue_event(&self, event: &'static str) {
        self.queue_events.get_or_create(&[("event", event)]).inc();
    }

    /// An HTTP answer with this status.
    pub fn response(&self, status: u16) {
        self.responses
            .get_or_create(&[("code", status.to_string())])
            .inc();
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        encode(&self.registry)
    }
}

fn encode(registry: &Registry) -> String {
    let mut text = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut text, registry) {
        tracing::error!("cannot encode the metrics: {e}");
    }
    text
}

fn unix_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH);
    since.map_or(0, |d| d.as_millis() as u64)
}

/// Quantiles of the histogram `name`, per value of `label`, in milliseconds, from
/// exposition text: the `_bucket` lines' cumulative counts.
fn quantiles_from_exposition(text: &str, name: &str, label: &str) -> BTreeMap<String, Quantiles> {
    let prefix = format!("{name}_bucket{{");
    let mut buckets: BTreeMap<String, Vec<(f64, u64)>> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let Some((labels, count)) = rest.split_once("} ") else {
            continue;
        };
        let value_of = |key: &str| {
            labels.split(',').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                (k == key).then(|| v.trim_matches('"').to_string())
            })
        };
        let (Some(group), Some(le), Ok(count)) =
            (value_of(label), value_of("le"), count.trim().parse::<u64>())
        else {
            continue;
        };
        let le = if le == "+Inf" {
            f64::INFINITY
        } else {
            match le.parse() {
                Ok(v) => v,
                Err(_) => continue,
            }
        };
        buckets.entry(group).or_default().push((le, count));
    }
    buckets
        .into_iter()
        .map(|(group, mut b)| {
            b.sort_by(|x, y| x.0.total_cmp(&y.0));
            let count = b.last().map_or(0, |x| x.1);
            let q = |p| quantile(&b, p).map(|s| (s * 1e6).round() / 1e3);
            let quantiles = Quantiles {
                count,
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
            };
            (group, quantiles)
        })
        .collect()
}

/// The `p` quantile of cumulative `buckets` (upper bound, count), sorted by bound: linear
/// within the bucket it falls in; the highest finite bound when it falls in `+Inf`.
fn quantile(buckets: &[(f64, u64)], p: f64) -> Option<f64> {
    let total = buckets.last()?.1;
    if total == 0 {
        return None;
    }
    let rank = p * total as f64;
    let mut lower = (0.0, 0u64);
    for &(le, count) in buckets {
        if count as f64 >= rank {
            if le.is_infinite() {
                return Some(lower.0);
            }
            let in_bucket = (count - lower.1) as f64;
            let fraction = if in_bucket > 0.0 {
                (rank - lower.1 as f64) / in_bucket
            } else {
                1.0
            };
            return Some(lower.0 + (le - lower.0) * fraction);
        }
        lower = (le, count);
    }
    Some(lower.0)
}

/// The pool's numbers, read at each scrape.
struct PoolCollector {
    executor: Arc<OnceLock<Executor>>,
}

impl std::fmt::Debug for PoolCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PoolCollector")
    }
}

impl Collector for PoolCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(executor) = self.executor.get() else {
            return Ok(());
        };
        let stats = executor.stats();
        let gauge = |encoder: &mut DescriptorEncoder, name, help, v: i64| {
            let g = ConstGauge::new(v);
            g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)
        };
        gauge(
            &mut encoder,
            "queue_depth",
            "Jobs waiting for a worker",
            stats.queued as i64,
        )?;
        gauge(
            &mut encoder,
            "jobs_unanswered",
            "Jobs admitted and not answered yet, queued or running (a worker resetting after its answer is not counted); jobs are refused while this is admission_places",
            stats.unanswered as i64,
        )?;
        gauge(
            &mut encoder,
            "admission_places",
            "Jobs admitted at once: the most workers plus the queue depth",
            (stats.max_workers + stats.queue_depth) as i64,
        )?;
        gauge(
            &mut encoder,
            "workers_max",
            "The most workers the pool runs",
            stats.max_workers as i64,
        )?;
        let busy = stats.busy as i64;
        let idle = stats.workers.len() as i64 - busy;
        let g = ConstGauge::new(0i64);
        let mut workers = encoder.encode_descriptor(
            "workers",
            "Live workers, by state",
            None,
            g.metric_type(),
        )?;
        for (state, v) in [("busy", busy), ("idle", idle)] {
            ConstGauge::new(v).encode(workers.encode_family(&[("state", state)])?)?;
        }
        let pss = stats.total_pss_bytes() as i64;
        gauge(
            &mut encoder,
            "pool_pss_bytes",
            "Proportional set size of every worker and the zygote",
            pss,
        )?;
        let counter = |encoder: &mut DescriptorEncoder, name, help, v: u64| {
            let c = ConstCounter::new(v);
            c.encode(encoder.encode_descriptor(name, help, None, c.metric_type())?)
        };
        counter(
            &mut encoder,
            "workers_forked",
            "Workers forked from the zygote",
            stats.forked,
        )?;
        counter(
            &mut encoder,
            "worker_cold_starts",
            "Workers started cold because the zygote was not running",
            stats.cold_fallbacks,
        )?;
        counter(
            &mut encoder,
            "slot_panics",
            "Panics caught in pool slots (each slot served on with a new worker); 0 unless pyward has a bug",
            stats.slot_panics,
        )?;
        let r = &stats.retired;
        let c = ConstCounter::new(0u64);
        let mut retired = encoder.encode_descriptor(
            "workers_retired",
            "Workers that left the pool, by reason (other: killed by their job)",
            None,
            c.metric_type(),
        )?;
        for (reason, v) in [
            ("idle", r.idle),
            ("memory_growth", r.memory_growth),
            ("host_pressure", r.host_pressure),
            ("job_quota", r.job_quota),
            ("other", r.other),
        ] {
            ConstCounter::new(v).encode(retired.encode_family(&[("reason", reason)])?)?;
        }
        Ok(())
    }
}

/// The server's eyes on the job service: every HTTP and queue job is counted and
/// logged (one line, never its code or inputs); replays are not jobs of the server.
impl Observer for Metrics {
    fn answered(&self, door: Door, id: &str, outcome: &Outcome) {
        if door == Door::Replay {
            return;
        }
        self.job_answered(outcome);
        let t = &outcome.timings;
        tracing::info!(
            id,
            status = outcome.status(),
            gate_ms = ms(t.gate),
            queue_ms = ms(t.queue),
            exec_ms = ms(t.exec),
            total_ms = ms(t.total),
            worker_pid = outcome.worker.as_ref().map(|w| w.pid),
            worker_slot = outcome.worker.as_ref().map(|w| w.slot),
            seed = outcome.seed,
            "job"
        );
    }

    fn not_run(&self, door: Door, id: &str, error: &pyward::Error) {
        if door != Door::Replay {
            tracing::info!(id, status = error.code(), "job not run");
        }
    }

    fn cancelled(&self, door: Door, id: &str, after: std::time::Duration) {
        if door != Door::Replay {
            self.job_abandoned();
            let after_ms = ms(after);
            tracing::info!(
                id,
                status = "client_disconnected",
                after_ms,
                "job cancelled"
            );
        }
    }

    fn record_failed(&self, message: &str) {
        tracing::error!("{message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_within_the_bucket_like_histogram_quantile() {
        let text = "\
# TYPE pyward_job_stage_seconds histogram
pyward_job_stage_seconds_bucket{le=\"0.01\",stage=\"total\"} 10
pyward_job_stage_seconds_bucket{le=\"0.02\",stage=\"total\"} 90
pyward_job_stage_seconds_bucket{le=\"0.04\",stage=\"total\"} 100
pyward_job_stage_seconds_bucket{le=\"+Inf\",stage=\"total\"} 100
pyward_job_stage_seconds_bucket{le=\"0.01\",stage=\"gate\"} 0
pyward_job_stage_seconds_bucket{le=\"+Inf\",stage=\"gate\"} 0
pyward_job_stage_seconds_count{stage=\"total\"} 100
";
        let q = quantiles_from_exposition(text, "pyward_job_stage_seconds", "stage");
        let total = &q["total"];
        assert_eq!(total.count, 100);
        // Rank 50 of 100 lies halfway through the (10 ms, 20 ms] bucket's 80.
        assert_eq!(total.p50, Some(15.0));
        assert_eq!(total.p90, Some(20.0));
        assert_eq!(total.p99, Some(38.0));
        assert_eq!(q["gate"].p50, None);
    }

    #[test]
    fn a_quantile_past_the_last_finite_bound_is_that_bound() {
        let buckets = [(0.5, 1), (1.0, 1), (f64::INFINITY, 4)];
        assert_eq!(quantile(&buckets, 0.9), Some(1.0));
    }
}
