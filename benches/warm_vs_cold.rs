//! Warm pool vs cold subprocess vs the floor, side by side in one run.
//!
//! The same figure code three ways: through pyward's warm pool (gate, queue, sandboxed
//! worker, validation), as a fresh `python -I` process that imports numpy and
//! matplotlib and saves the figure (cold), and as bare `exec` in an interpreter that is
//! already warm inside this process (the floor no executor can beat). Prints medians and
//! ratios, and writes them to `target/pyward-bench/warm_vs_cold.json` (see
//! `common/report.rs`). Run with `make bench` or `cargo bench --bench warm_vs_cold`
//! (release build); `PYWARD_BENCH_SCALE=0.1` scales the iteration counts down for a trial.
//!
//! Workloads: `tiny` (one line plot), `typical` (two lines, a scatter and a legend: the
//! corpus's typical figure), `no-figure` (a numpy sum and one empty savefig: the
//! executor's own overhead shows) and `heavy` (16 histograms of 1e5 normal samples on a
//! 4x4 grid plus a 500x500 image, one figure). Each cell is the median wall time of one
//! run as the caller sees it: for `warm`, `Executor::run` from call to outcome; for
//! `cold`, process start to exit; for `floor`, the `exec` call.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;

#[path = "common/report.rs"]
mod report;

/// The typical figure: the same script the render-once corpus checks byte for byte.
const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");

const TINY: &str = "plt.plot([1, 2, 3])\nplt.savefig(OUT)\n";

const NO_FIGURE: &str =
    "import numpy as np\na = np.arange(1000).sum()\nplt.figure()\nplt.savefig(OUT)\n";

/// 16 histograms of 1e5 normal samples each (4x4 grid) plus a 500x500 image, one figure.
const HEAVY: &str = "\
import numpy as np
rng = np.random.default_rng(0)
fig = plt.figure(figsize=(12, 7))
grid = fig.add_gridspec(4, 6, hspace=0.5, wspace=0.4)
for i in range(16):
    ax = fig.add_subplot(grid[i // 4, i % 4])
    ax.hist(rng.normal(loc=i * 0.1, scale=1.0, size=100_000), bins=50)
    ax.set_title(f'sample {i}', fontsize=8)
    ax.tick_params(labelsize=6)
ax = fig.add_subplot(grid[:, 4:])
yy, xx = np.mgrid[0:500, 0:500] / 40.0
image = np.sin(xx) * np.cos(yy) + 0.2 * rng.standard_normal((500, 500))
ax.imshow(image, cmap='viridis', interpolation='nearest')
ax.set_title('500x500 image')
plt.savefig(OUT)
";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `n` timed runs of `f` after one untimed run (first-use costs are not what we compare).
fn time_n(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    f();
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

fn venv_python() -> PathBuf {
    PathBuf::from(env!("PYWARD_BUILD_PYTHON"))
}

/// Initialises an in-process interpreter with the virtualenv's packages, warm.
fn warm_in_process() {
    Python::initialize();
    Python::attach(|py| {
        let sys = py.import("sys").unwrap();
        let path = sys.getattr("path").unwrap();
        for p in pyward::PythonEnv::from_build().paths {
            path.call_method1("append", (p,)).unwrap();
        }
        py.run(c"import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nimport numpy as np\nplt.plot([1]); plt.savefig('/dev/null', format='png'); plt.close('all')", None, None).unwrap();
    });
}

fn floor(code: &str, out: &str) {
    Python::attach(|py| {
        let g = PyDict::new(py);
        g.set_item("plt", py.import("matplotlib.pyplot").unwrap())
            .unwrap();
        g.set_item("np", py.import("numpy").unwrap()).unwrap();
        g.set_item("OUT", out).unwrap();
        let code = std::ffi::CString::new(code).unwrap();
        py.run(&code, Some(&g), None).unwrap();
        py.run(c"plt.close('all')", Some(&g), None).unwrap();
    });
}

fn cold(code: &str, out: &str) {
    let script = format!("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nOUT = {out:?}\n{code}");
    let status = Command::new(venv_python())
        .args(["-I", "-c", &script])
        .env("OPENBLAS_NUM_THREADS", "1")
        .status()
        .expect("python runs");
    assert!(status.success());
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness=false benches this way
    }
    let quick = std::env::args().any(|a| a == "--test");
    // (warm and floor runs, cold runs) per workload; the heavy one takes ~1 s a run.
    let counts = |warm: usize, cold: usize| {
        if quick {
            (3, 1)
        } else {
            (report::iterations(warm, 3), report::iterations(cold, 1))
        }
    };
    let (n_warm, _) = counts(60, 10);
    let mut rep = report::Report::new("warm_vs_cold", "cargo bench --bench warm_vs_cold");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("floor.png").to_string_lossy().into_owned();

    warm_in_process();
    let exec = pyward::Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
        .workers(1)
        .preload_pandas(false)
        .build()
        .expect("pool starts");
    println!(
        "pool warm-up: {:.0} ms",
        exec.warmup().total.as_secs_f64() * 1e3
    );
    println!(
        "{:<12} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "workload", "floor ms", "warm ms", "cold ms", "warm/floor", "cold/warm"
    );
    rep.value(
        "pool warm-up",
        "1 worker",
        "confined",
        "ms",
        exec.warmup().total.as_secs_f64() * 1e3,
    )
    .note("Executor::build() wall time, one worker, pandas not preloaded");
    for (name, code, (n_warm, n_cold)) in [
        ("tiny", TINY, counts(60, 10)),
        ("typical", TYPICAL, counts(60, 10)),
        ("no-figure", NO_FIGURE, counts(60, 10)),
        ("heavy", HEAVY, counts(15, 5)),
    ] {
        let f = time_n(n_warm, || floor(code, &out));
        let w = time_n(n_warm, || {
            let o = exec.run(pyward::Job::new(code).allow_blank()).unwrap();
            assert!(o.is_success(), "{:?}", o.result);
        });
        let c = time_n(n_cold, || cold(code, &out));
        rep.latency("latency", name, "floor", &f)
            .note("bare exec in a warm in-process interpreter, stock matplotlib");
        rep.latency("latency", name, "warm", &w)
            .note("Executor::run, call to outcome: gate, queue, sandboxed worker, validation");
        rep.latency("latency", name, "cold", &c)
            .note("a fresh `python -I` that imports numpy and matplotlib and runs the code");
        rep.ratio("latency", name, "warm", "floor");
        rep.ratio("latency", name, "cold", "warm");
        let (f, w, c) = (median(f), median(w), median(c));
        println!(
            "{name:<12} {:>12.2} {:>12.2} {:>12.1} {:>10.2} {:>10.1}",
            report::ms(f),
            report::ms(w),
            report::ms(c),
            report::ms(w) / report::ms(f),
            report::ms(c) / report::ms(w)
        );
    }
    // What kernel confinement (rlimits, Landlock, seccomp) costs, side by side.
    let unconfined = pyward::Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        // One trust domain: every worker serves every job, as Reuse measures.
        .reuse_across_tenants(true)
        .workers(1)
        .preload_pandas(false)
        .sandbox(pyward::sandbox::SandboxMode::Off)
        .build()
        .expect("pool starts");
    let confined_ready = exec.warmup().per_worker_ms[0];
    let unconfined_ready = unconfined.warmup().per_worker_ms[0];
    rep.value("confinement", "warm-up", "confined", "ms", confined_ready)
        .note("one worker's own warm-up, process start to ready");
    rep.value(
        "confinement",
        "warm-up",
        "unconfined",
        "ms",
        unconfined_ready,
    );
    rep.ratio("confinement", "warm-up", "confined", "unconfined");
    println!("\nconfinement      confined ms  unconfined ms  ratio");
    println!(
        "{:<14} {:>13.1} {:>14.1} {:>6.3}",
        "warm-up",
        confined_ready,
        unconfined_ready,
        confined_ready / unconfined_ready
    );
    for (name, code) in [("typical", TYPICAL), ("no-figure", NO_FIGURE)] {
        // Interleaved, so that drift in the machine's load hits both sides alike.
        let once = |e: &pyward::Executor| {
            let t = Instant::now();
            let o = e.run(pyward::Job::new(code).allow_blank()).unwrap();
            assert!(o.is_success());
            t.elapsed()
        };
        once(&exec);
        once(&unconfined);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..n_warm {
            a.push(once(&exec));
            b.push(once(&unconfined));
        }
        rep.latency("confinement", name, "confined", &a)
            .note("interleaved with the unconfined runs (SandboxMode::Off)");
        rep.latency("confinement", name, "unconfined", &b);
        rep.ratio("confinement", name, "confined", "unconfined");
        let (a, b) = (median(a), median(b));
        println!(
            "{name:<14} {:>13.2} {:>14.2} {:>6.3}",
            report::ms(a),
            report::ms(b),
            report::ms(a) / report::ms(b)
        );
    }
    rep.write();
}
