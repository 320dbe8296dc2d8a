//! The per-job options, each against its baseline, side by side in one run:
//!
//! - **isolation**: the typical figure (the corpus's `02_typical_line_scatter_legend.py`)
//!   with `Isolation::Fresh` (every job in a process forked for it, discarded after) vs
//!   `Isolation::Reuse`, jobs submitted one after another (so each fresh job finds its
//!   pre-forked process ready), interleaved pool by pool. Also the CPU per job of each
//!   mode: host + zygote + workers (utime + stime, reaped children included) over the
//!   run, divided by the number of jobs; the difference is what keeping spares forked
//!   costs; where it went (host, zygote, workers) and the workers' page faults.
//! - **tenants**: the default tenancy (no worker serves two tenants), the typical figure
//!   one job at a time: jobs of one tenant (its warm worker reused) vs every job of a
//!   new tenant (a fresh fork each), interleaved, with latency and CPU per job and where
//!   it went.
//! - **arrays**: a 100 MB float64 array (12.5 M values) that the job reduces and plots:
//!   passed with `Job::with_shared_array` (one `SharedArray` made before the loop: no
//!   copy per job), with `Job::with_array` (copied into a new memfd per job), and as an
//!   `.npy` input file (`Job::src_bytes`, staged per job, `np.load` in the job).
//! - **figures**: the typical figure saved to `out/` and read back vs rendered to memory
//!   (`Job::figures_in_memory`), and saved under the code's own name
//!   (`plt.savefig("novice.png")`, issue 38) vs `OUT`, interleaved on one worker.
//! - **figure summary**: what describing the saved figure costs (`Job::describe_figures`),
//!   measured in the worker and as exec time on vs off, interleaved.
//! - **png encoding**: PNGs encoded by the host (`PngEncoder::Host`) vs by matplotlib in
//!   the worker, interleaved.
//! - **text metrics**: frozen text metrics (`ExecutorBuilder::text_metrics`) vs stock
//!   measuring, tiny and typical figure, interleaved.
//!
//! Medians, min/max and ratios are printed and written to `target/pyward-bench/modes.json`
//! (see `common/report.rs`). Run: `cargo bench --bench modes`; `PYWARD_BENCH_SCALE=0.1`
//! scales the counts down; `PYWARD_BENCH_ONLY=isolation,text_metrics` runs only those
//! sections.

use std::time::{Duration, Instant};

use pyward::ndarray::Array1;
use pyward::{Executor, ExecutorBuilder, Isolation, Job, Outcome, PngEncoder, SharedArray};

#[path = "common/report.rs"]
mod report;

const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");
const TINY: &str = "plt.plot([1, 2, 3])\nplt.savefig(OUT)\n";

const REDUCE: &str = "m = float(A.mean())\nplt.plot([0.0, m]); plt.savefig(OUT)\n";
const REDUCE_NPY: &str =
    "A = np.load(srcpath('a.npy'))\nm = float(A.mean())\nplt.plot([0.0, m]); plt.savefig(OUT)\n";

fn executor(isolation: Isolation) -> Executor {
    pool_with(|b| b.isolation(isolation).timeout(Duration::from_secs(30)))
}

/// A one-worker pool of the worker cargo built, configured by `configure`.
fn pool_with(configure: impl FnOnce(ExecutorBuilder) -> ExecutorBuilder) -> Executor {
    configure(
        Executor::builder()
            .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
            // One trust domain: every worker serves every job, as Reuse measures.
            .reuse_across_tenants(true)
            .workers(1),
    )
    .build()
    .expect("executor")
}

fn run_ok(exec: &Executor, job: Job) -> Outcome {
    let o = exec.run(job).expect("run");
    assert!(o.is_success(), "{:?}", o.result);
    o
}

/// Wall time of building the job with `job` (pyward's own input preparation, e.g. the
/// memfd copy of `with_array`) and running it.
fn timed(exec: &Executor, job: impl FnOnce() -> Job) -> Duration {
    let t = Instant::now();
    run_ok(exec, job());
    t.elapsed()
}

/// Clock ticks per second, for /proc/<pid>/stat times.
fn ticks() -> f64 {
    // SAFETY: sysconf(3) reads a constant.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }) as f64
}

/// Fields of a live process's `/proc/<pid>/stat` after the command name, from field 3
/// (state) on; empty when the process is gone.
fn proc_stat(pid: u32) -> Vec<f64> {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Vec::new();
    };
    let fields = stat.rsplit(')').next().unwrap_or("").split_whitespace();
    fields.map(|f| f.parse().unwrap_or(0.0)).collect()
}

/// Where a pool's CPU time and page faults went so far: this process (the host, all
/// its threads), the zygote itself (forking), the workers it forked and reaped (used
/// fresh workers: their job, exit and teardown), and the live workers.
#[derive(Clone, Copy, Default)]
struct Usage {
    host: f64,
    zygote: f64,
    reaped: f64,
    live: f64,
    /// Minor page faults of the workers, reaped and live: mostly copy-on-write copies
    /// of the template's pages.
    faults: f64,
}

impl Usage {
    fn now(exec: &Executor) -> Usage {
        // /proc/<pid>/stat fields, counted from 3: minflt 10, cminflt 11, utime 14,
        // stime 15, cutime 16, cstime 17.
        let at = |f: &[f64], field: usize| f.get(field - 3).copied().unwrap_or(0.0);
        let secs = |f: &[f64], a: usize, b: usize| (at(f, a) + at(f, b)) / ticks();
        // SAFETY: getrusage(2) fills a live local.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let zygote = exec.zygote_pid().map(proc_stat).unwrap_or_default();
        let live: Vec<Vec<f64>> = exec.worker_pids().into_iter().map(proc_stat).collect();
        Usage {
            host: tv(ru.ru_utime) + tv(ru.ru_stime),
            zygote: secs(&zygote, 14, 15),
            reaped: secs(&zygote, 16, 17),
            live: live.iter().map(|f| secs(f, 14, 15)).sum(),
            faults: at(&zygote, 11) + live.iter().map(|f| at(f, 10)).sum::<f64>(),
        }
    }

    fn cpu(&self) -> f64 {
        self.host + self.zygote + self.reaped + self.live
    }

    /// `self - before`, divided by `jobs`, CPU in milliseconds.
    fn per_job_since(&self, before: &Usage, jobs: usize) -> Usage {
        let d = |a: f64, b: f64| (a - b) / jobs as f64;
        Usage {
            host: d(self.host, before.host) * 1e3,
            zygote: d(self.zygote, before.zygote) * 1e3,
            reaped: d(self.reaped, before.reaped) * 1e3,
            live: d(self.live, before.live) * 1e3,
            faults: d(self.faults, before.faults),
        }
    }

    fn add(&mut self, other: &Usage) {
        self.host += other.host;
        self.zygote += other.zygote;
        self.reaped += other.reaped;
        self.live += other.live;
        self.faults += other.faults;
    }

    fn print(&self, label: &str) {
        println!(
            "  {label:<34} CPU {:6.1} ms/job = host {:5.1} + zygote {:4.1} + workers {:5.1}; \
             {:6.0} page faults/job",
            self.cpu(),
            self.host,
            self.zygote,
            self.reaped + self.live,
            self.faults
        );
    }
}

/// Waits until a used fresh worker has been reaped, so that its CPU (its job, its exit)
/// has moved into the zygote's children's time.
fn await_reaped(outcome: &Outcome) {
    let used = outcome.worker.as_ref().expect("worker info").pid;
    while std::path::Path::new(&format!("/proc/{used}")).exists() {
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn print_row(label: &str, samples: &[Duration]) {
    let (median, min, max) = report::summary_ms(samples);
    println!(
        "  {label:<34} median {median:8.2} ms  (min {min:.2}, max {max:.2}, n={})",
        samples.len()
    );
}

fn isolation(rep: &mut report::Report) {
    let n = report::iterations(40, 4);
    let reuse = executor(Isolation::Reuse);
    let fresh = executor(Isolation::Fresh);
    // Warm both: the first fresh replacement waits for the zygote's warm-up.
    for _ in 0..3 {
        run_ok(&reuse, Job::new(TYPICAL));
        run_ok(&fresh, Job::new(TYPICAL));
    }
    let (mut r, mut f) = (Vec::new(), Vec::new());
    let (mut use_r, mut use_f) = (Usage::default(), Usage::default());
    for _ in 0..n {
        let before = Usage::now(&reuse);
        r.push(timed(&reuse, || Job::new(TYPICAL)));
        use_r.add(&Usage::now(&reuse).per_job_since(&before, n));
        let before = Usage::now(&fresh);
        let t = Instant::now();
        let o = run_ok(&fresh, Job::new(TYPICAL));
        f.push(t.elapsed());
        // The next process is forked after the answer, and the used one is reaped once
        // that one is ready: both are counted with this job.
        await_reaped(&o);
        use_f.add(&Usage::now(&fresh).per_job_since(&before, n));
    }
    println!("isolation: typical figure, one job at a time, 1 worker");
    print_row("Reuse", &r);
    print_row("Fresh (pre-forked per job)", &f);
    rep.latency("latency", "typical figure", "reuse", &r);
    rep.latency("latency", "typical figure", "fresh", &f)
        .note("Isolation::Fresh: a process forked from the zygote for every job");
    let ratio = rep.ratio("latency", "typical figure", "fresh", "reuse");
    println!("  fresh / reuse: {ratio:.2}x (target <= 1.3x)");
    use_r.print("Reuse");
    use_f.print("Fresh");
    cpu_rows(
        rep,
        "typical figure",
        &[("reuse", &use_r), ("fresh", &use_f)],
    );
    rep.ratio("cpu per job", "typical figure", "fresh", "reuse");
}

/// The CPU per job of each variant, and where it went, as report rows.
fn cpu_rows(rep: &mut report::Report, workload: &str, variants: &[(&str, &Usage)]) {
    for (variant, u) in variants {
        rep.value("cpu per job", workload, variant, "ms", u.cpu())
            .note("host + zygote + workers, utime + stime, per job");
        rep.value(
            "cpu per job: workers",
            workload,
            variant,
            "ms",
            u.reaped + u.live,
        )
        .note("the workers' own CPU: job, reset, exit and teardown");
        rep.value(
            "cpu per job: host and zygote",
            workload,
            variant,
            "ms",
            u.host + u.zygote,
        )
        .note("the supervisor's threads and the zygote's forks");
        rep.value("page faults per job", workload, variant, "faults", u.faults)
            .note("minor faults of the workers: mostly copy-on-write copies of the template");
    }
}

/// Tenancy, the default (no worker serves two tenants): the typical figure one job at a
/// time on a 1-worker pool, jobs of one tenant (its warm worker reused) vs every job of a
/// new tenant (a fresh fork of the template each), interleaved pool by pool, with the
/// CPU per job of each and where it went. Throughput at saturation of each: the
/// `throughput` bench.
fn tenants(rep: &mut report::Report) {
    let n = report::iterations(40, 4);
    let tenancy = |b: ExecutorBuilder| {
        b.reuse_across_tenants(false)
            .timeout(Duration::from_secs(30))
    };
    let same = pool_with(tenancy);
    let new = pool_with(tenancy);
    for i in 0..3 {
        run_ok(&same, Job::new(TYPICAL).tenant("a"));
        run_ok(&new, Job::new(TYPICAL).tenant(format!("warm-{i}")));
    }
    let (mut s, mut f) = (Vec::new(), Vec::new());
    let (mut use_s, mut use_f) = (Usage::default(), Usage::default());
    for i in 0..n {
        let before = Usage::now(&same);
        s.push(timed(&same, || Job::new(TYPICAL).tenant("a")));
        use_s.add(&Usage::now(&same).per_job_since(&before, n));
        let before = Usage::now(&new);
        let t = Instant::now();
        run_ok(&new, Job::new(TYPICAL).tenant(format!("tenant-{i}")));
        f.push(t.elapsed());
        // The worker stays warm for its tenant until the next job (another tenant's)
        // replaces it: its exit is counted with that job.
        use_f.add(&Usage::now(&new).per_job_since(&before, n));
    }
    println!("tenants: typical figure, one job at a time, 1 worker, no reuse across tenants");
    print_row("same tenant (its worker reused)", &s);
    print_row("new tenant (a fresh fork)", &f);
    let workload = "typical figure, by tenant";
    rep.latency("latency", workload, "same tenant", &s)
        .note("jobs of one tenant: its warm worker serves them all");
    rep.latency("latency", workload, "new tenant", &f)
        .note("every job of a new tenant: a process forked from the template for it");
    let latency = rep.ratio("latency", workload, "new tenant", "same tenant");
    use_s.print("same tenant");
    use_f.print("new tenant");
    cpu_rows(
        rep,
        workload,
        &[("same tenant", &use_s), ("new tenant", &use_f)],
    );
    let cpu = rep.ratio("cpu per job", workload, "new tenant", "same tenant");
    println!(
        "  new / same tenant: latency {latency:.2}x (target <= 1.05x), CPU {cpu:.2}x (target <= 1.5x)"
    );
}

fn arrays(rep: &mut report::Report) {
    let n = report::iterations(15, 3);
    let values = 12_500_000; // 100 MB of float64
    let data = Array1::from_shape_fn(values, |i| (i % 1000) as f64);
    let t = Instant::now();
    let shared = SharedArray::new(&data).expect("shared memory");
    let make_shared = t.elapsed();
    let npy = shared.to_npy().expect("npy");
    let exec = executor(Isolation::Reuse);
    run_ok(&exec, Job::new(REDUCE).with_shared_array("A", &shared));
    run_ok(&exec, Job::new(REDUCE_NPY).src_bytes("a.npy", npy.clone()));
    let (mut s, mut c, mut f) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        s.push(timed(&exec, || {
            Job::new(REDUCE).with_shared_array("A", &shared)
        }));
        c.push(timed(&exec, || Job::new(REDUCE).with_array("A", &data)));
        // The bench's own copy of the file bytes stays outside the timer.
        let npy_job = Job::new(REDUCE_NPY).src_bytes("a.npy", npy.clone());
        f.push(timed(&exec, move || npy_job));
    }
    println!("arrays: 100 MB float64, job reduces it and plots one line");
    println!(
        "  SharedArray::new (one copy into sealed memfd): {:.1} ms",
        report::ms(make_shared)
    );
    print_row("shared array (made once)", &s);
    print_row("with_array (memfd per job)", &c);
    print_row(".npy input file (np.load)", &f);
    let w = "100 MB float64";
    rep.latency("latency", w, "npy file", &f)
        .note("Job::src_bytes of an .npy (staged per job) and np.load in the job");
    rep.latency("latency", w, "with_array", &c)
        .note("Job::with_array: copied into a new sealed memfd per job");
    rep.latency("latency", w, "shared array", &s)
        .note("Job::with_shared_array: one SharedArray reused, no copy per job");
    rep.ratio("latency", w, "with_array", "npy file");
    let ratio = rep.ratio("latency", w, "shared array", "npy file");
    println!("  shared / npy: {ratio:.3}x");
    rep.value(
        "make SharedArray",
        w,
        "memfd copy",
        "ms",
        report::ms(make_shared),
    );
}

fn figures(rep: &mut report::Report) {
    let n = report::iterations(40, 4);
    let exec = executor(Isolation::Reuse);
    // The typical figure as models save it: under a name of the code's own.
    let own_name = TYPICAL.replace("plt.savefig(OUT)", "plt.savefig(\"novice.png\")");
    assert_ne!(own_name, TYPICAL, "the typical figure saves to OUT");
    let own = || Job::new(own_name.as_str());
    for _ in 0..3 {
        run_ok(&exec, Job::new(TYPICAL));
        run_ok(&exec, Job::new(TYPICAL).figures_in_memory());
        run_ok(&exec, own());
    }
    let (mut disk, mut mem, mut named) = (Vec::new(), Vec::new(), Vec::new());
    let (mut exec_disk, mut exec_mem) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        let o = run_ok(&exec, Job::new(TYPICAL));
        disk.push(t.elapsed());
        exec_disk.push(o.timings.total - o.timings.exec);
        let t = Instant::now();
        let o = run_ok(&exec, Job::new(TYPICAL).figures_in_memory());
        mem.push(t.elapsed());
        exec_mem.push(o.timings.total - o.timings.exec);
        let t = Instant::now();
        let o = run_ok(&exec, own());
        named.push(t.elapsed());
        assert!(o.artifact("novice.png").is_some(), "{:?}", o.result);
    }
    println!("figures: typical figure saved to out/ vs rendered to memory vs its own name");
    print_row("on disk (out/)", &disk);
    print_row("in memory", &mem);
    print_row("own name (novice.png)", &named);
    rep.latency("latency", "typical figure", "figure on disk", &disk);
    rep.latency("latency", "typical figure", "figure in memory", &mem)
        .note("Job::figures_in_memory");
    let ratio = rep.ratio(
        "latency",
        "typical figure",
        "figure in memory",
        "figure on disk",
    );
    println!("  memory / disk: {ratio:.3}x");
    rep.latency(
        "latency",
        "typical figure",
        "figure under its own name",
        &named,
    )
    .note("plt.savefig(\"novice.png\") instead of OUT (issue 38)");
    let own_ratio = rep.ratio(
        "latency",
        "typical figure",
        "figure under its own name",
        "figure on disk",
    );
    println!("  own name / OUT: {own_ratio:.3}x");
    print_row("total - exec, on disk", &exec_disk);
    print_row("total - exec, in memory", &exec_mem);
}

/// The figure summary (`Job::describe_figures`): its own time, measured in the worker
/// around the summary (`Timings::describe`), and the job's exec time with it on and off,
/// interleaved, for the typical figure and a 2x2 grid of mixed plots.
fn describe(rep: &mut report::Report) {
    let n = report::iterations(40, 4);
    let exec = executor(Isolation::Reuse);
    for (workload, code) in [("typical figure", TYPICAL), ("2x2 grid", GRID)] {
        for _ in 0..3 {
            run_ok(&exec, Job::new(code));
        }
        let (mut on, mut off, mut own) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..n {
            let o = run_ok(&exec, Job::new(code));
            on.push(o.timings.exec);
            own.push(o.timings.describe);
            let o = run_ok(&exec, Job::new(code).describe_figures(false));
            off.push(o.timings.exec);
        }
        println!("describe: {workload}, exec time with the figure summary on and off");
        print_row("summary itself", &own);
        print_row("exec, summary on", &on);
        print_row("exec, summary off", &off);
        rep.latency("figure summary", workload, "summary itself", &own)
            .note("Timings::describe, measured in the worker");
        rep.latency("figure summary", workload, "exec, summary on", &on);
        rep.latency("figure summary", workload, "exec, summary off", &off);
        let ratio = rep.ratio(
            "figure summary",
            workload,
            "exec, summary on",
            "exec, summary off",
        );
        println!("  on / off: {ratio:.3}x");
    }
}

/// Four kinds of plot in a 2x2 grid: lines with a legend, bars, an image with a colorbar,
/// a scatter.
const GRID: &str = "fig, ax = plt.subplots(2, 2, figsize=(8, 6))\n\
x = np.linspace(0, 10, 500)\n\
ax[0, 0].plot(x, np.sin(x), label='sin'); ax[0, 0].plot(x, np.cos(x), label='cos'); ax[0, 0].legend()\n\
ax[0, 1].bar(list('abcdef'), np.arange(6))\n\
im = ax[1, 0].imshow(np.random.rand(100, 100)); fig.colorbar(im, ax=ax[1, 0])\n\
ax[1, 1].scatter(np.random.rand(300), np.random.rand(300))\n\
fig.suptitle('grid')\n\
fig.savefig(OUT)\n";

/// Two pools interleaved job by job on each workload: wall time per job as the caller
/// sees it, and the ratio `a / b`.
fn interleaved(
    rep: &mut report::Report,
    section: &str,
    (a_name, a): (&str, &Executor),
    (b_name, b): (&str, &Executor),
    workloads: &[(&str, &str)],
    note: &str,
) {
    let n = report::iterations(40, 4);
    for &(workload, code) in workloads {
        for _ in 0..3 {
            run_ok(a, Job::new(code));
            run_ok(b, Job::new(code));
        }
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for _ in 0..n {
            x.push(timed(a, || Job::new(code)));
            y.push(timed(b, || Job::new(code)));
        }
        println!("{section}: {workload}, {a_name} vs {b_name}");
        print_row(a_name, &x);
        print_row(b_name, &y);
        rep.latency(section, workload, a_name, &x).note(note);
        rep.latency(section, workload, b_name, &y);
        let ratio = rep.ratio(section, workload, a_name, b_name);
        println!("  {a_name} / {b_name}: {ratio:.3}x");
    }
}

/// Who encodes the PNG: the host (`PngEncoder::Host`, the default) against matplotlib
/// in the worker, for the typical figure and the 2x2 grid.
fn png_encoding(rep: &mut report::Report) {
    let host = pool_with(|b| b.png_encoder(PngEncoder::Host));
    let stock = pool_with(|b| b.png_encoder(PngEncoder::Matplotlib));
    interleaved(
        rep,
        "png encoding",
        ("host", &host),
        ("matplotlib", &stock),
        &[("typical figure", TYPICAL), ("2x2 grid", GRID)],
        "PngEncoder::Host: pixels to the supervisor, encoded there",
    );
}

/// Frozen text metrics (`ExecutorBuilder::text_metrics`, the default) against measuring
/// every string in every job, for the tiny and the typical figure.
fn text_metrics(rep: &mut report::Report) {
    let frozen = pool_with(|b| b.text_metrics(true));
    let stock = pool_with(|b| b.text_metrics(false));
    interleaved(
        rep,
        "text metrics",
        ("frozen", &frozen),
        ("stock", &stock),
        &[("tiny figure", TINY), ("typical figure", TYPICAL)],
        "tick label sizes and font tables measured once at warm-up",
    );
}

/// One section of this bench: it measures and adds its rows to the report.
type Section = fn(&mut report::Report);

fn main() {
    // `PYWARD_BENCH_ONLY=isolation,text_metrics` runs only the sections named.
    let only = std::env::var("PYWARD_BENCH_ONLY").ok();
    let wanted = |name: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|s| s == name))
    };
    let mut rep = report::Report::new("modes", "cargo bench --bench modes");
    let sections: [(&str, Section); 7] = [
        ("isolation", isolation),
        ("tenants", tenants),
        ("arrays", arrays),
        ("figures", figures),
        ("describe", describe),
        ("png_encoding", png_encoding),
        ("text_metrics", text_metrics),
    ];
    for (name, section) in sections {
        if wanted(name) {
            section(&mut rep);
        }
    }
    rep.write();
}
