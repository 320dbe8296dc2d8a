//! `/metrics`: Prometheus (OpenMetrics) text. Job counters and latency histograms are
//! kept here as requests finish; the pool's gauges (queue, busy and idle workers,
//! retirements) are read from `Executor::stats` at scrape time, never cached.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use pyward::{Executor, JobFailure, Outcome};

/// One label: `[(name, value)]`.
type Label = [(&'static str, &'static str); 1];

/// Media type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    jobs: Family<Label, Counter>,
    stage_seconds: Family<Label, Histogram>,
    kills: Family<Label, Counter>,
    recycles: Family<Label, Counter>,
    responses: Family<[(&'static str, String); 1], Counter>,
    queue_events: Family<Label, Counter>,
    warmup_seconds: Gauge<f64, AtomicU64>,
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
        registry.register(
            "job_stage_seconds",
            "Time per job step: gate, queue (waiting for a worker), exec (inside the worker), total",
            stage_seconds.clone(),
        );
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
            jobs,
            stage_seconds,
            kills,
            recycles,
            responses,
            queue_events,
            warmup_seconds,
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
        if let Some(failure) = outcome.failure() {
            if matches!(
                failure,
                JobFailure::Timeout { .. }
                    | JobFailure::MemoryExceeded { .. }
                    | JobFailure::WorkerCrashed { .. }
                    | JobFailure::Cancelled
            ) && outcome.worker.is_some()
            {
                self.kills
                    .get_or_create(&[("cause", failure.status())])
                    .inc();
            }
        }
        if let Some(r) = &outcome.retired {
            self.recycles
                .get_or_create(&[("reason", r.reason.as_str())])
                .inc();
        }
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
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!("cannot encode the metrics: {e}");
        }
        text
    }
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
            ("other", r.other),
        ] {
            ConstCounter::new(v).encode(retired.encode_family(&[("reason", reason)])?)?;
        }
        Ok(())
    }
}
