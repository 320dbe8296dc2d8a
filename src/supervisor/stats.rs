//! What the pool is doing right now: per-slot gauges that the slot threads write with
//! relaxed atomics, and the snapshot [`Executor::stats`](crate::Executor::stats) reads
//! from them and from `/proc` (memory is read when asked, never cached).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

use serde::Serialize;

/// How a worker process came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Birth {
    /// Forked from the pool's warm template (milliseconds, pages shared with it).
    Zygote,
    /// Started from nothing: the zygote was off, not running, or could not fork.
    Cold,
}

/// Memory of one process, from `/proc/PID/smaps_rollup`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MemoryUsage {
    /// Resident set: shared pages counted in full.
    pub rss_bytes: u64,
    /// Proportional set: each shared page divided among the processes that map it.
    /// Summed over processes, the real total.
    pub pss_bytes: u64,
    /// Private pages (`Private_Clean + Private_Dirty`): what ending the process frees.
    pub private_bytes: u64,
}

impl MemoryUsage {
    /// Reads `/proc/PID/smaps_rollup`; `None` when the process is gone or the kernel
    /// has no rollup (before Linux 4.14).
    pub fn of_process(pid: u32) -> Option<MemoryUsage> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
        let kib = |name: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        Some(MemoryUsage {
            rss_bytes: kib("Rss") << 10,
            pss_bytes: kib("Pss") << 10,
            private_bytes: (kib("Private_Clean") + kib("Private_Dirty")) << 10,
        })
    }
}

/// One live worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WorkerStats {
    /// Pool slot, `0..max_workers`.
    pub slot: usize,
    /// Operating-system process id.
    pub pid: u32,
    /// Forked from the zygote, or started cold.
    pub birth: Birth,
    /// Jobs this process has run.
    pub jobs_served: u64,
    /// Running a job right now.
    pub busy: bool,
    /// Its memory now (`None` if it ended while being read).
    pub memory: Option<MemoryUsage>,
    /// Its private memory when it became ready, the base of the soft memory limit.
    pub birth_private_bytes: u64,
}

/// The zygote, the template every worker is forked from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ZygoteStats {
    /// Its process id while it is running.
    pub pid: Option<u32>,
    /// Its memory now (what the pool pays once, whatever its size).
    pub memory: Option<MemoryUsage>,
    /// Times it was started after the first (it died or could not fork).
    pub restarts: u64,
    /// Why the last start failed, if one did.
    pub last_error: Option<String>,
}

/// Why workers left the pool, counted since `build()`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RetiredCounts {
    /// Idle longer than the idle timeout while the pool was above `min_workers`.
    pub idle: u64,
    /// Private memory grew past the soft limit during its jobs.
    pub memory_growth: u64,
    /// Retired idle to relieve memory pressure on the host.
    pub host_pressure: u64,
    /// Ran its quota of jobs
    /// ([`ExecutorBuilder::max_jobs_per_worker`](crate::ExecutorBuilder::max_jobs_per_worker)).
    pub job_quota: u64,
    /// Killed: timeout, memory ceiling, cancellation, crash, untrusted state.
    pub other: u64,
}

/// A snapshot of the pool ([`Executor::stats`](crate::Executor::stats)).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PoolStats {
    /// Live workers, by slot.
    pub workers: Vec<WorkerStats>,
    /// Workers running a job.
    pub busy: usize,
    /// Jobs waiting for a worker. It may exceed `queue_depth` for a moment: a job is
    /// admitted by `unanswered`, and a worker that answered may still be resetting.
    pub queued: usize,
    /// Jobs admitted and not answered yet, queued or running: a new job is refused (or
    /// waits, under [`Backpressure::Wait`](crate::Backpressure::Wait)) while this is
    /// `max_workers + queue_depth`. A worker resetting after its answer is not counted.
    pub unanswered: usize,
    /// The configured queue depth.
    pub queue_depth: usize,
    /// The pool never shrinks below this many workers.
    pub min_workers: usize,
    /// The pool never grows above this many workers.
    pub max_workers: usize,
    /// The zygote (`None` when it is turned off).
    pub zygote: Option<ZygoteStats>,
    /// Workers forked from the zygote since `build()`.
    pub forked: u64,
    /// Workers started cold since `build()` although a zygote was wanted (it was not
    /// running): the visible fallback. Always 0 for a healthy pool.
    pub cold_fallbacks: u64,
    /// Why workers left the pool.
    pub retired: RetiredCounts,
    /// Whether a worker may serve jobs of several tenants
    /// ([`ExecutorBuilder::reuse_across_tenants`](crate::ExecutorBuilder::reuse_across_tenants));
    /// `false`, the default: never.
    pub reuse_across_tenants: bool,
    /// Workers kept warm for one tenant and replaced by a fresh fork for a job of
    /// another (see [`Job::tenant`](crate::Job::tenant)).
    pub tenant_switches: u64,
    /// Processes forked from the template that have run nothing, waiting beside
    /// workers kept warm for a tenant, for the next job of another tenant.
    pub spares: usize,
    /// Panics caught in pool slots since `build()` (each slot served on with a new
    /// worker). Always 0: anything else is a bug to report.
    pub slot_panics: u64,
    /// Whether the host is under memory pressure now (the pool does not grow).
    pub host_pressure: bool,
}

impl PoolStats {
    /// Memory of the whole pool: every worker's proportional set plus the zygote's.
    pub fn total_pss_bytes(&self) -> u64 {
        let workers: u64 = self
            .workers
            .iter()
            .filter_map(|w| w.memory.map(|m| m.pss_bytes))
            .sum();
        let zygote = self
            .zygote
            .as_ref()
            .and_then(|z| z.memory.map(|m| m.pss_bytes))
            .unwrap_or(0);
        workers + zygote
    }
}

const BIRTH_NONE: u8 = 0;
const BIRTH_ZYGOTE: u8 = 1;
const BIRTH_COLD: u8 = 2;

/// One slot's live numbers (written by its thread only).
#[derive(Default)]
pub(crate) struct SlotGauge {
    pid: AtomicU32,
    birth: AtomicU8,
    jobs: AtomicU64,
    busy: AtomicBool,
    birth_private: AtomicU64,
    /// Private bytes measured after the worker's last job (0: not measured yet), so
    /// that idle slots can tell which of them is largest without reading `/proc`.
    private_after_job: AtomicU64,
    /// The last recycle in nanoseconds, top bit set when the replacement was forked.
    last_recycle: AtomicU64,
}

impl SlotGauge {
    /// A new worker is ready in this slot.
    pub(crate) fn started(&self, pid: u32, forked: bool, private: u64) {
        self.pid.store(pid, Ordering::Relaxed);
        let birth = if forked { BIRTH_ZYGOTE } else { BIRTH_COLD };
        self.birth.store(birth, Ordering::Relaxed);
        self.jobs.store(0, Ordering::Relaxed);
        self.birth_private.store(private, Ordering::Relaxed);
        self.private_after_job.store(private, Ordering::Relaxed);
    }

    /// The slot has no worker.
    pub(crate) fn stopped(&self) {
        self.pid.store(0, Ordering::Relaxed);
        self.birth.store(BIRTH_NONE, Ordering::Relaxed);
        self.busy.store(false, Ordering::Relaxed);
    }

    pub(crate) fn set_busy(&self, busy: bool) {
        self.busy.store(busy, Ordering::Relaxed);
        if busy {
            self.jobs.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn set_private_after_job(&self, bytes: u64) {
        self.private_after_job.store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn private_after_job(&self) -> u64 {
        self.private_after_job.load(Ordering::Relaxed)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed)
    }

    pub(crate) fn set_last_recycle(&self, took: Duration, forked: bool) {
        let nanos = took.as_nanos().min(u128::from(u64::MAX >> 1)) as u64;
        let flag = if forked { 1 << 63 } else { 0 };
        self.last_recycle.store(nanos | flag, Ordering::Relaxed);
    }

    pub(crate) fn last_recycle(&self) -> Option<(Duration, bool)> {
        let v = self.last_recycle.load(Ordering::Relaxed);
        (v != 0).then(|| (Duration::from_nanos(v & (u64::MAX >> 1)), v >> 63 == 1))
    }

    /// This slot's worker, read now (`None` when the slot has none).
    pub(crate) fn snapshot(&self, slot: usize) -> Option<WorkerStats> {
        let pid = self.pid();
        let birth = match self.birth.load(Ordering::Relaxed) {
            BIRTH_ZYGOTE => Birth::Zygote,
            BIRTH_COLD => Birth::Cold,
            _ => return None,
        };
        (pid != 0).then(|| WorkerStats {
            slot,
            pid,
            birth,
            jobs_served: self.jobs.load(Ordering::Relaxed),
            busy: self.is_busy(),
            memory: MemoryUsage::of_process(pid),
            birth_private_bytes: self.birth_private.load(Ordering::Relaxed),
        })
    }
}

/// Pool-wide counters.
#[derive(Default)]
pub(crate) struct Counters {
    pub forked: AtomicU64,
    pub cold_fallbacks: AtomicU64,
    pub retired_idle: AtomicU64,
    pub retired_memory: AtomicU64,
    pub retired_pressure: AtomicU64,
    pub retired_quota: AtomicU64,
    pub retired_other: AtomicU64,
    pub slot_panics: AtomicU64,
    pub tenant_switches: AtomicU64,
    /// Spares forked and not yet taken (see `Slot::keep_spare`).
    pub spares: std::sync::atomic::AtomicUsize,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn retired(&self) -> RetiredCounts {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        RetiredCounts {
            idle: get(&self.retired_idle),
            memory_growth: get(&self.retired_memory),
            host_pressure: get(&self.retired_pressure),
            job_quota: get(&self.retired_quota),
            other: get(&self.retired_other),
        }
    }
}
