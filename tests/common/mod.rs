//! Shared helpers for integration tests: executors built the way each test needs them.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyward::{Executor, ExecutorBuilder, Outcome};

mod processes;
#[allow(unused_imports)]
pub use processes::{descendants, process_alive, wait_until};

/// The shipped sample data.
pub fn examples_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/data")
}

/// The figure corpus of `tests/data/figures`: (file name, code), sorted by name.
pub fn figure_corpus() -> Vec<(String, String)> {
    scripts_in("figures")
}

/// The scripts a corpus-wide comparison of two pools renders in `make test`: every
/// second one in name order; all of them under `make test-long`
/// (`PYWARD_WHOLE_CORPUS=1`). Render-once, host PNG encoding, figures in memory and
/// frozen text metrics each render a corpus twice: on the whole corpora they were a
/// fifth of the suite's time.
pub fn comparison_sample(scripts: Vec<(String, String)>) -> Vec<(String, String)> {
    if std::env::var_os("PYWARD_WHOLE_CORPUS").is_some() {
        return scripts;
    }
    scripts.into_iter().step_by(2).collect()
}

/// The legitimate corpus of `tests/data/legit` (its inputs: `tests/data/legit_inputs`).
pub fn legit_corpus() -> Vec<(String, String)> {
    scripts_in("legit")
}

/// Every `.py` file of `tests/data/<dir>`: (file name, code), sorted by name.
fn scripts_in(dir: &str) -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir);
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    scripts.sort();
    scripts
}

/// A builder with test-friendly defaults: the worker binary cargo built for this test.
///
/// Its workers serve jobs without a tenant one after another (`reuse_across_tenants`):
/// most tests exercise what a reused worker must keep or forget between jobs, one trust
/// domain. `tests/it/tenants.rs` tests the default, where no worker serves two tenants.
pub fn builder() -> ExecutorBuilder {
    Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        .reuse_across_tenants(true)
        .workers(1)
        .timeout(Duration::from_secs(20))
        .preload_pandas(false)
}

/// The policy of a shared pool (see [`shared_pool`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Gate {
    /// `Policy::default()`.
    Default,
    /// `Policy::figures()`.
    Figures,
    /// `Policy::gate_disabled_for_testing()`: the runtime and kernel layers alone.
    Off,
}

impl Gate {
    fn policy(self) -> pyward::gate::Policy {
        match self {
            Gate::Default => pyward::gate::Policy::default(),
            Gate::Figures => pyward::gate::Policy::figures(),
            Gate::Off => pyward::gate::Policy::gate_disabled_for_testing(),
        }
    }
}

/// The shared pools, by (pandas in the template, a fresh process for every job,
/// policy); each slot locked while its pool warms.
type SharedPools = BTreeMap<(bool, bool, Gate), Arc<Mutex<Option<Arc<Executor>>>>>;
static SHARED_POOLS: Mutex<SharedPools> = Mutex::new(BTreeMap::new());

/// A pool of [`builder`]'s (with pandas in its template or not, under `gate`'s policy,
/// two workers: tests run two at a time), built by the first test of this binary that
/// asks and shared by every test that asks after. A test that only runs jobs and reads
/// their outcomes needs no pool of its own, and a pool's warm-up (its template's
/// imports) is most of such a test's time. Not for a test that reads the pool's stats,
/// a worker's identity or retirement, or what a job leaves to the next job on its
/// worker: other tests' jobs run on the same workers. The pools are dropped when the
/// test binary exits (their workers stopped, their folders removed), as any pool is.
pub fn shared_pool(pandas: bool, gate: Gate) -> Arc<Executor> {
    shared(pandas, false, gate)
}

/// [`shared_pool`] with pandas, whose every job runs in a process of its own (jobs
/// without a tenant, tenants not shared): what one attack does to its process never
/// decides what another job sees.
pub fn shared_fresh_pool(gate: Gate) -> Arc<Executor> {
    shared(true, true, gate)
}

fn shared(pandas: bool, fresh: bool, gate: Gate) -> Arc<Executor> {
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function with no argument.
        let registered = unsafe { libc::atexit(drop_shared_pools) };
        assert_eq!(registered, 0, "atexit");
    });
    let slot = SHARED_POOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((pandas, fresh, gate))
        .or_default()
        .clone();
    // Held while the pool warms: a second test of this pool waits for it, not for its own.
    let mut pool = slot.lock().unwrap_or_else(|e| e.into_inner());
    let build = || {
        builder()
            .workers(2)
            .preload_pandas(pandas)
            .reuse_across_tenants(!fresh)
            .policy(gate.policy())
            .build()
            .expect("pool starts")
    };
    pool.get_or_insert_with(|| Arc::new(build())).clone()
}

/// Drops the shared pools as the test binary exits.
extern "C" fn drop_shared_pools() {
    let pools = std::mem::take(&mut *SHARED_POOLS.lock().unwrap_or_else(|e| e.into_inner()));
    for slot in pools.into_values() {
        drop(slot.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

/// The job's Python error (panics on any other outcome).
pub fn python_error(outcome: &Outcome) -> &pyward::PythonError {
    match outcome.failure() {
        Some(pyward::JobFailure::PythonError(e)) => e,
        other => panic!("expected a Python error, got {other:?}"),
    }
}

/// Panics with the failure's feedback when the outcome is not a success.
pub fn expect_ok(outcome: &Outcome) {
    if let Err(f) = &outcome.result {
        panic!("job failed: {f:?}\nfeedback:\n{}", f.feedback());
    }
}

/// The PNG's width and height.
pub fn png_size(bytes: &[u8]) -> (u32, u32) {
    pyward::validate::png_dimensions(bytes).expect("a PNG")
}

/// Runs a Python sweep script of `tests/data` with the interpreter the crate was built
/// for, the figure profile's runtime rules (JSON) on its stdin; returns its JSON report.
pub fn sweep(script: &str) -> serde_json::Value {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("PYWARD_BUILD_PYTHON"))
        .arg("-I")
        .arg(dir.join("tests/data").join(script))
        .env("MPLBACKEND", "Agg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{script}: {e}"));
    let rules = serde_json::to_vec(&pyward::gate::Policy::figures().runtime_rules()).unwrap();
    child.stdin.take().unwrap().write_all(&rules).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{script} failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[path = "schema.rs"]
mod schema;
#[allow(unused_imports)]
pub use schema::assert_valid_report;

/// Waits (bounded) until the pool's stats meet `cond`: a state the pool reaches (a job
/// running, a job queued, workers retired), not a guessed time, on a loaded machine.
pub fn wait_for(exec: &Executor, what: &str, cond: impl Fn(&pyward::PoolStats) -> bool) {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let stats = exec.stats();
        if cond(&stats) {
            return;
        }
        assert!(std::time::Instant::now() < until, "{what}: {stats:#?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`wait_for`] for async tests: sleeps on the runtime instead of blocking it.
pub async fn reaches(exec: &Executor, what: &str, cond: impl Fn(&pyward::PoolStats) -> bool) {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let stats = exec.stats();
        if cond(&stats) {
            return;
        }
        assert!(std::time::Instant::now() < until, "{what}: {stats:#?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Every file (not directory) under `dir`, at any depth; none when `dir` cannot be read.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}
