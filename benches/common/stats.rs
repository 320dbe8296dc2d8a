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
        let rank = ((v.len() as f64 * 0.95).ceil() as usize).clamp(1, v.len());
        Summary {
            n: v.len(),
            median_ms: ms(v[v.len() / 2]),
            p95_ms: ms(v[rank - 1]),
            min_ms: ms(v[0]),
            max_ms: ms(v[v.len() - 1]),
        }
    }
}

/// A duration in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
