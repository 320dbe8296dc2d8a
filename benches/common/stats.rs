//! Summary statistics of timing samples, shared by the benches (through `report.rs`)
//! and by `pyward bench` (`cli/src/bench/`): one definition of median and p95.
//!
//! Included by path: `#[path = ".../benches/common/stats.rs"] mod stats;`.

#![allow(dead_code)]

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Median, p95 and range of a set of timing samples, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// The middle sample (the upper one of the two middles for an even count).
    pub median_ms: f64,
    /// The 95th percentile, nearest rank.
    pub p95_ms: f64,
    /// Fastest sample.
    pub min_ms: f64,
    /// Slowest sample.
    pub max_ms: f64,
}

impl Summary {
    /// The summary of `samples` (all zero when there are none).
    pub fn of(samples: &[Duration]) -> Summary {
        if samples.is_empty() {
            return Summary::default();
        }
        let mut v = samples.to_vec();
        v.sort();
        Summary {
            n: v.len(),
            median_ms: ms(v[v.len() / 2]),
            p95_ms: ms(nearest_rank(&v, 0.95)),
            min_ms: ms(v[0]),
            max_ms: ms(v[v.len() - 1]),
        }
    }
}

/// The `p` quantile (0 < p <= 1) of `samples` in milliseconds, nearest rank; 0 when
/// there are none.
pub fn percentile_ms(samples: &[Duration], p: f64) -> f64 {
    let mut v = samples.to_vec();
    v.sort();
    if v.is_empty() {
        return 0.0;
    }
    ms(nearest_rank(&v, p))
}

/// The nearest-rank `p` quantile of sorted, non-empty `v`.
fn nearest_rank(v: &[Duration], p: f64) -> Duration {
    let rank = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// A duration in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
