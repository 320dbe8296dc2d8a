//! Host memory pressure, as the kernel reports it: PSI (`/proc/pressure/memory`, the
//! share of time tasks stalled waiting for memory) and `MemAvailable` in
//! `/proc/meminfo`. Under pressure the pool stops growing and retires its largest idle
//! workers first, before the kernel's OOM killer picks a victim for us.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How often the two files are read at most (slot threads ask more often).
const REFRESH: Duration = Duration::from_millis(100);

/// When the host counts as under memory pressure
/// ([`ExecutorBuilder::memory_pressure`](crate::ExecutorBuilder::memory_pressure)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MemoryPressure {
    /// PSI `some avg10` (percent of the last 10 s in which some task waited for
    /// memory) above which the host is under pressure. Default: 10.
    pub psi_some_avg10: f64,
    /// `MemAvailable / MemTotal` below which the host is under pressure. Default: 0.05.
    pub min_available_fraction: f64,
    psi_path: PathBuf,
    meminfo_path: PathBuf,
}

impl Default for MemoryPressure {
    fn default() -> Self {
        MemoryPressure {
            psi_some_avg10: 10.0,
            min_available_fraction: 0.05,
            psi_path: PathBuf::from("/proc/pressure/memory"),
            meminfo_path: PathBuf::from("/proc/meminfo"),
        }
    }
}

impl MemoryPressure {
    /// Thresholds as given, read from the kernel's files.
    pub fn new(psi_some_avg10: f64, min_available_fraction: f64) -> Self {
        MemoryPressure {
            psi_some_avg10,
            min_available_fraction,
            ..Default::default()
        }
    }

    /// **Testing only**: reads files in the kernel's formats from these paths instead
    /// of `/proc`, so that a test can put the host under pressure without exhausting
    /// the machine's memory.
    #[doc(hidden)]
    pub fn read_from_for_testing(mut self, psi: PathBuf, meminfo: PathBuf) -> Self {
        self.psi_path = psi;
        self.meminfo_path = meminfo;
        self
    }

    /// Whether the host is under pressure now. A file that cannot be read (no PSI in
    /// this kernel, say) counts as no pressure from that source.
    fn read(&self) -> bool {
        let psi = std::fs::read_to_string(&self.psi_path)
            .ok()
            .and_then(|t| psi_some_avg10(&t));
        let available = std::fs::read_to_string(&self.meminfo_path)
            .ok()
            .and_then(|t| available_fraction(&t));
        psi.is_some_and(|p| p > self.psi_some_avg10)
            || available.is_some_and(|a| a < self.min_available_fraction)
    }
}

/// The `some avg10=` figure of a PSI file.
fn psi_some_avg10(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("avg10="))?
        .parse()
        .ok()
}

/// `MemAvailable / MemTotal` from `/proc/meminfo`.
fn available_fraction(text: &str) -> Option<f64> {
    let kib = |name: &str| -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let total = kib("MemTotal")?;
    (total > 0.0).then_some(kib("MemAvailable")? / total)
}

/// The pool's view of host pressure, re-read at most every [`REFRESH`].
pub(crate) struct PressureGauge {
    thresholds: MemoryPressure,
    last: Mutex<Option<(Instant, bool)>>,
}

impl PressureGauge {
    pub(crate) fn new(thresholds: MemoryPressure) -> Self {
        PressureGauge {
            thresholds,
            last: Mutex::new(None),
        }
    }

    pub(crate) fn under_pressure(&self) -> bool {
        let mut last = self.last.lock();
        match *last {
            Some((at, value)) if at.elapsed() < REFRESH => value,
            _ => {
                let value = self.thresholds.read();
                *last = Some((Instant::now(), value));
                value
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernels_formats() {
        let psi = "some avg10=12.50 avg60=3.00 avg300=0.50 total=123\n\
                   full avg10=1.00 avg60=0.00 avg300=0.00 total=5\n";
        assert_eq!(psi_some_avg10(psi), Some(12.5));
        let meminfo = "MemTotal:       1000 kB\nMemFree:         10 kB\nMemAvailable:     40 kB\n";
        assert_eq!(available_fraction(meminfo), Some(0.04));
        assert_eq!(psi_some_avg10("garbage"), None);
        assert_eq!(
            available_fraction("MemTotal: 0 kB\nMemAvailable: 0 kB\n"),
            None
        );
    }

    #[test]
    fn either_source_puts_the_host_under_pressure() {
        let dir = tempfile::tempdir().unwrap();
        let (psi, meminfo) = (dir.path().join("psi"), dir.path().join("meminfo"));
        let calm_psi = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        let roomy = "MemTotal: 1000 kB\nMemAvailable: 900 kB\n";
        let p = MemoryPressure::default().read_from_for_testing(psi.clone(), meminfo.clone());
        std::fs::write(&psi, calm_psi).unwrap();
        std::fs::write(&meminfo, roomy).unwrap();
        assert!(!p.read());
        std::fs::write(&psi, "some avg10=55.00 avg60=0 avg300=0 total=9\n").unwrap();
        assert!(p.read());
        std::fs::write(&psi, calm_psi).unwrap();
        std::fs::write(&meminfo, "MemTotal: 1000 kB\nMemAvailable: 10 kB\n").unwrap();
        assert!(p.read());
        std::fs::remove_file(&psi).unwrap();
        std::fs::write(&meminfo, roomy).unwrap();
        assert!(!p.read(), "a missing PSI file is no pressure");
    }
}
