//! `pyward`: a thin command line over the library — run files, check them with the gate,
//! describe the environment workers get, and serve the warm pool over HTTP.

mod bench;
mod serve;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use pyward::output_dir::OutputDir;
use pyward::record::{self, Recorder};
use pyward::report::{Report, STATUS_INFRASTRUCTURE_ERROR, STATUS_INPUT_ERROR};
use pyward::{gate, Artifact, Attempt, Executor, Isolation, Job};

/// Exit code of a job failure (rejected, timed out, raised, ...).
pub(crate) const EXIT_JOB_FAILED: u8 = 1;
/// Exit code of a usage error (clap uses it too).
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit code of an infrastructure error (the executor could not do its work).
pub(crate) const EXIT_INFRA: u8 = 3;

#[derive(Parser)]
#[command(
    name = "pyward",
    version,
    about = "Run model-written Python plotting code in a warm, confined pool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one or more files through the full pipeline (gate, warm worker, validation).
    Run {
        /// Python files (`-` reads the code from stdin); with several, --out is a directory.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Directory of input files, readable by the code through srcpath('name').
        #[arg(long)]
        src: Option<PathBuf>,
        /// Where OUT is written (default: ./<file stem>.png); a directory with several files.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Per-job wall-clock limit, in seconds.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Memory ceiling per worker, in MiB.
        #[arg(long, default_value_t = 2048)]
        memory: u64,
        /// Worker processes (default: one per file, at most the number of cores).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        workers: Option<u16>,
        /// Run every file in a process that never ran another job (Isolation::Fresh).
        #[arg(long)]
        fresh: bool,
        /// Print one JSON object per file on stdout.
        #[arg(long)]
        json: bool,
        /// Do not write a run record.
        #[arg(long)]
        no_record: bool,
        /// Directory of run records.
        #[arg(long, default_value = "runs")]
        runs: PathBuf,
        /// Switch the static gate OFF, to test the runtime and kernel layers alone.
        /// Never use this for real jobs.
        #[arg(long)]
        dangerously_skip_gate: bool,
    },
    /// Re-execute every attempt of a recorded run and compare the artifacts byte for byte.
    Replay {
        /// A run directory (runs/<time>-<id>).
        run_dir: PathBuf,
    },
    /// List recorded runs.
    Runs {
        /// Directory of run records.
        #[arg(default_value = "runs")]
        dir: PathBuf,
    },
    /// Check a file with the static gate only.
    Check {
        /// Python file (`-` reads the code from stdin).
        file: PathBuf,
        /// Print the verdict as JSON (the report's `check` form).
        #[arg(long)]
        json: bool,
    },
    /// Describe the Python the workers use, the allowed modules, a test render, and the
    /// sandbox layers this kernel supports.
    Doctor,
    /// Serve the warm pool over HTTP: POST /v1/jobs, POST /v1/check, the run records
    /// (/v1/runs), /v1/pool, /healthz, /readyz, /metrics, /v1/openapi.json, and a page
    /// at / to try it (the playground, runs and pool).
    Serve(serve::ServeArgs),
    /// Measure your own scripts warm (the pool), fresh (a process forked per job), cold (a
    /// new `python -I` per run) and at the floor (bare exec in a warm interpreter),
    /// interleaved; checks each first and compares pyward's figure with plain Python's.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The server logs at info (one line per job) and sets up its own subscriber.
    if !matches!(cli.command, Command::Serve(_)) {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
            .without_time()
            .with_target(false)
            .init();
    }
    let code = match cli.command {
        Command::Run {
            files,
            src,
            out,
            timeout,
            memory,
            workers,
            fresh,
            json,
            no_record,
            runs,
            dangerously_skip_gate,
        } => {
            let policy = if dangerously_skip_gate {
                eprintln!("pyward: WARNING: the static gate is OFF (--dangerously-skip-gate)");
                gate::Policy::gate_disabled_for_testing()
            } else {
                gate::Policy::figures()
            };
            let limits = RunLimits {
                timeout,
                memory,
                workers: workers.map(usize::from),
                fresh,
            };
            let recorder = (!no_record).then(|| Recorder::new(runs));
            run(&files, src, out, limits, policy, recorder, json)
        }
        Command::Replay { run_dir } => replay(&run_dir),
        Command::Runs { dir } => list_runs(&dir),
        Command::Check { file, json } => check(&file, json),
        Command::Doctor => doctor(),
        Command::Serve(args) => serve::serve(args),
        Command::Bench(args) => bench::bench(args),
    };
    ExitCode::from(code)
}

/// Reads a job's code from a file, or from stdin for `-`.
fn read_source(path: &Path) -> std::io::Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut code = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut code)?;
        Ok(code)
    } else {
        std::fs::read(path)
    }
}

/// The exit code a report stands for.
fn exit_code(report: &Report) -> u8 {
    match report.status.as_str() {
        "ok" => 0,
        STATUS_INPUT_ERROR => EXIT_USAGE,
        STATUS_INFRASTRUCTURE_ERROR => EXIT_INFRA,
        _ => EXIT_JOB_FAILED,
    }
}

fn print_json(report: &Report) {
    match serde_json::to_string(report) {
        Ok(line) => println!("{line}"),
        Err(e) => eprintln!("pyward: cannot serialise the report: {e}"),
    }
}

fn check(file: &Path, as_json: bool) -> u8 {
    let source = match read_source(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pyward: cannot read {}: {e}", file.display());
            return EXIT_USAGE;
        }
    };
    let policy = gate::Policy::figures();
    let report = Report::from_check(gate::check_bytes(&source, &policy), &policy)
        .with_file(file.display().to_string());
    if as_json {
        print_json(&report);
    } else if report.is_ok() {
        println!("{}: ok", file.display());
    } else {
        println!("{}: {}\n{}", file.display(), report.status, report.feedback);
    }
    exit_code(&report)
}

/// Limits given on the command line.
struct RunLimits {
    timeout: f64,
    memory: u64,
    workers: Option<usize>,
    fresh: bool,
}

fn run(
    files: &[PathBuf],
    src: Option<PathBuf>,
    out: Option<PathBuf>,
    limits: RunLimits,
    policy: gate::Policy,
    recorder: Option<Recorder>,
    as_json: bool,
) -> u8 {
    let RunLimits {
        timeout,
        memory,
        workers,
        fresh,
    } = limits;
    if !(timeout > 0.0 && timeout.is_finite()) {
        eprintln!("pyward: --timeout must be a positive number of seconds");
        return EXIT_USAGE;
    }
    if let Some(dir) = &src {
        if !dir.is_dir() {
            eprintln!("pyward: --src {} is not a directory", dir.display());
            return EXIT_USAGE;
        }
    }
    let out_paths: Vec<PathBuf> = files
        .iter()
        .map(|f| {
            let stem = match f.file_stem() {
                Some(s) if f != Path::new("-") => s.to_string_lossy().into_owned(),
                _ => "figure".into(),
            };
            match (&out, files.len()) {
                (Some(o), 1) if !o.is_dir() => o.clone(),
                (Some(dir), _) => dir.join(format!("{stem}.png")),
                (None, 1) => PathBuf::from(format!("{stem}.png")),
                (None, _) => PathBuf::from("pyward-out").join(format!("{stem}.png")),
            }
        })
        .collect();

    // Read and gate every file before a pool is warmed: a refused file costs
    // microseconds, not a warm-up.
    let mut reports: Vec<Option<Answer>> = Vec::new();
    let mut jobs: Vec<(usize, Job)> = Vec::new();
    for (i, (file, out_path)) in files.iter().zip(&out_paths).enumerate() {
        let code = match read_source(file) {
            Ok(code) => code,
            Err(e) => {
                if !as_json {
                    eprintln!("pyward: cannot read {}: {e}", file.display());
                    return EXIT_USAGE;
                }
                let error =
                    pyward::Error::InvalidJob(format!("cannot read {}: {e}", file.display()));
                let report = Report::from_error(&error, policy.gate_enabled());
                reports.push(Some((report, Vec::new())));
                continue;
            }
        };
        let checked = Report::from_check(gate::check_bytes(&code, &policy), &policy);
        if !checked.is_ok() {
            reports.push(Some((checked.as_run(policy.gate_enabled()), Vec::new())));
            continue;
        }
        let out_name = out_path
            .file_name()
            .map_or("figure.png".into(), |n| n.to_string_lossy().into_owned());
        let mut job = Job::new(code).out_name(out_name);
        if let Some(dir) = &src {
            job = job.src_dir(dir);
        }
        reports.push(None);
        jobs.push((i, job));
    }

    let mut warmup = None;
    if !jobs.is_empty() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let workers = workers.unwrap_or_else(|| jobs.len().clamp(1, cores));
        let gate_enabled = policy.gate_enabled();
        let mut builder = Executor::builder()
            .workers(workers)
            .timeout(Duration::from_secs_f64(timeout))
            .memory_limit_mib(memory)
            .policy(policy)
            .isolation(if fresh {
                Isolation::Fresh
            } else {
                Isolation::Reuse
            })
            // The files of one run are one trust domain (`--fresh` isolates them).
            .reuse_across_tenants(!fresh);
        if let [(_, job)] = jobs.as_slice() {
            // One file: one warm-up of what this job needs, no pool to keep warm.
            builder = builder.for_one_job(job);
        }
        match builder.build() {
            Ok(executor) => {
                let warm = executor.warmup().clone();
                warmup = Some(warm.total);
                if !as_json {
                    let per: Vec<String> = warm
                        .per_worker_ms
                        .iter()
                        .map(|m| format!("{m:.0} ms"))
                        .collect();
                    println!(
                        "pool: {} worker(s) warm in {:.0} ms (each: {})",
                        executor.workers(),
                        warm.total.as_secs_f64() * 1e3,
                        per.join(", ")
                    );
                }
                // Several files run concurrently, one thread each, on the shared pool.
                let done: Vec<(usize, Answer)> = std::thread::scope(|scope| {
                    let handles: Vec<_> = jobs
                        .drain(..)
                        .map(|(i, job)| {
                            let (executor, recorder) = (&executor, &recorder);
                            scope.spawn(move || {
                                (i, run_and_record(executor, recorder.as_ref(), job))
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("job thread"))
                        .collect()
                });
                for (i, report) in done {
                    reports[i] = Some(report);
                }
            }
            Err(e) => {
                if !as_json {
                    eprintln!("pyward: cannot start the pool: {e}");
                    return EXIT_INFRA;
                }
                for (i, _) in jobs.drain(..) {
                    reports[i] = Some((Report::from_error(&e, gate_enabled), Vec::new()));
                }
            }
        }
    }

    let mut worst = 0;
    for ((file, out_path), answer) in files.iter().zip(&out_paths).zip(reports) {
        let (report, artifacts) = answer.expect("every file has a report");
        worst = worst.max(finish(file, out_path, report, artifacts, as_json, warmup));
    }
    worst
}

/// A file's report and the artifacts it still has to write.
type Answer = (Report, Vec<Artifact>);

/// Runs one job and writes its record (a record that cannot be written is reported on
/// stderr; it does not change the job's result).
fn run_and_record(executor: &Executor, recorder: Option<&Recorder>, job: Job) -> Answer {
    let outcome = match executor.run(job.clone()) {
        Ok(outcome) => outcome,
        Err(e) => {
            let report = Report::from_error(&e, executor.policy().gate_enabled());
            return (report, Vec::new());
        }
    };
    let mut report = Report::from_outcome(&outcome, false);
    let attempts = [Attempt {
        code: job.code().to_vec(),
        outcome,
    }];
    if let Some(r) = recorder {
        match r.record(executor, &job, &attempts) {
            Ok(dir) => report.set_record(dir.display().to_string()),
            Err(e) => eprintln!("pyward: cannot write the run record: {e}"),
        }
    }
    let [attempt] = attempts;
    (report, attempt.outcome.result.unwrap_or_default())
}

/// Writes the artifacts next to `out_path`, prints the report, and returns its exit
/// code.
fn finish(
    file: &Path,
    out_path: &Path,
    mut report: Report,
    artifacts: Vec<Artifact>,
    as_json: bool,
    warmup: Option<Duration>,
) -> u8 {
    report = report.with_file(file.display().to_string());
    let out_dir = out_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut written = Vec::new();
    // Opened (and created) at the first artifact; every artifact name is the job's
    // choice, so each is written through this handle, which no name can leave.
    let mut dir: Option<OutputDir> = None;
    if let Some(run) = report.run.as_mut() {
        if let Some(warmup) = warmup {
            run.set_pool_warmup(warmup);
        }
        // `from_outcome` lists the outcome's artifacts in order.
        for (a, artifact) in run.artifacts.iter_mut().zip(&artifacts) {
            let written_to = match &dir {
                Some(d) => Ok(d),
                None => OutputDir::create(out_dir).map(|d| &*dir.insert(d)),
            }
            .and_then(|d| d.write(&artifact.name, &artifact.bytes));
            if let Err(e) = written_to {
                eprintln!("pyward: cannot write an artifact: {e}");
                return EXIT_INFRA;
            }
            // Shown as the user wrote `--out` when it is that file.
            let path =
                if Some(artifact.name.as_str()) == out_path.file_name().and_then(|n| n.to_str()) {
                    out_path.to_path_buf()
                } else {
                    out_dir.join(&artifact.name)
                };
            let dims = pyward::validate::png_dimensions(&artifact.bytes)
                .map(|(w, h)| format!(", {w}x{h} px"))
                .unwrap_or_default();
            written.push(format!(
                "wrote {} ({} bytes, {}{dims})",
                path.display(),
                a.bytes,
                a.media_type
            ));
            a.path = Some(path.display().to_string());
        }
    }
    if as_json {
        print_json(&report);
        return exit_code(&report);
    }
    let shown = file.display();
    match report.status.as_str() {
        "ok" => {
            for line in &written {
                println!("{shown}: {line}");
            }
            if let Some(description) = &report.description {
                println!("  shows: {description}");
            }
        }
        STATUS_INPUT_ERROR | STATUS_INFRASTRUCTURE_ERROR => {
            eprintln!("{shown}: {}: {}", report.status, report.feedback);
        }
        status => println!("{shown}: {status}\n{}", report.feedback),
    }
    if let Some(run) = &report.run {
        if !run.stdout.is_empty() {
            println!(
                "  stdout: {}",
                run.stdout.trim_end().replace('\n', "\n          ")
            );
        }
        if let Some(t) = &run.timings_ms {
            let warm = t
                .pool_warmup
                .map(|w| format!(" (pool warm-up {w:.0} ms)"))
                .unwrap_or_default();
            println!(
                "  timings: queue {:.2} ms, gate {:.3} ms, exec {:.1} ms, total {:.1} ms{warm}",
                t.queue, t.gate, t.exec, t.total
            );
        }
        if let Some(record) = &run.record {
            println!("  record: {record}");
        }
    }
    exit_code(&report)
}

fn doctor() -> u8 {
    let found = pyward::doctor::diagnose();
    let support = &found.support;
    println!(
        "kernel sandbox support: landlock abi {} (pyward targets {}, requires {}), seccomp {}, no_new_privs {}, SandboxMode::Require would {}",
        support.landlock_abi.map_or("none".to_string(), |v| v.to_string()),
        support.landlock_target_abi,
        support.landlock_required_abi,
        if support.seccomp { "yes" } else { "no" },
        if support.no_new_privs { "yes" } else { "no" },
        if support.require_ok { "succeed" } else { "fail" },
    );
    let env = match &found.python {
        Ok(env) => env,
        Err(e) => {
            println!("python: {} is unusable: {e}", pyward::PYTHON_ENV_VAR);
            return EXIT_INFRA;
        }
    };
    println!(
        "python: {} {} (from {}; workers built for {})",
        env.executable,
        env.version,
        found.python_origin,
        pyward::PythonEnv::from_build().minor_version()
    );
    println!("python home: {}", env.home);
    for p in &env.paths {
        println!("  sys.path: {p}");
    }
    println!("worker build: {}", pyward::worker::BUILD_ID);
    let pool = match &found.pool {
        Some(Ok(pool)) => pool,
        Some(Err(e)) => {
            println!("workers: cannot start: {e}");
            return EXIT_INFRA;
        }
        None => return EXIT_INFRA,
    };
    let warmup = &pool.warmup;
    println!("worker warm-up: {:.0} ms", warmup.total.as_secs_f64() * 1e3);
    match &warmup.render_once_off {
        None => println!("render-once savefig: on"),
        Some(why) => println!("render-once savefig: off, stock savefig kept ({why})"),
    }
    match &warmup.text_metrics_off {
        None => println!(
            "frozen text metrics: {} sizes and every font's tables",
            warmup.text_metrics
        ),
        Some(why) => println!("frozen text metrics: off, stock measuring kept ({why})"),
    }
    for (module, verdict) in &pool.imports {
        match verdict {
            Ok(()) => println!("  module {module}: imports"),
            Err(why) => println!("  module {module}: {why}"),
        }
    }
    match &pool.test_figure {
        Ok((bytes, sandbox)) => {
            println!("test savefig: {bytes} bytes of PNG");
            println!(
                "sandbox in workers: {}",
                serde_json::to_string(sandbox).unwrap_or_default()
            );
        }
        Err(why) => println!("test savefig: {why}"),
    }
    print_pool(&pool.stats);
    if found.healthy() {
        0
    } else {
        EXIT_JOB_FAILED
    }
}

/// The pool as `Executor::stats` sees it: where each worker came from and what it costs.
fn print_pool(stats: &pyward::PoolStats) {
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    println!(
        "tenants: {}",
        if stats.reuse_across_tenants {
            "a worker serves any tenant (reuse across tenants: one trust domain only)"
        } else {
            "a worker serves one tenant; a job without a tenant gets a process of its own"
        }
    );
    match &stats.zygote {
        Some(z) => {
            let state = z.pid.map_or("not running".into(), |p| format!("pid {p}"));
            let pss = z.memory.map_or(0.0, |m| mib(m.pss_bytes));
            println!("zygote: {state}, PSS {pss:.1} MiB, restarts {}", z.restarts);
            if let Some(e) = &z.last_error {
                println!("  last start failed: {e}");
            }
        }
        None => println!("zygote: off"),
    }
    println!(
        "pool: {} worker(s) ({}..{}), {} busy, {} queued; forked {}, cold fallbacks {}",
        stats.workers.len(),
        stats.min_workers,
        stats.max_workers,
        stats.busy,
        stats.queued,
        stats.forked,
        stats.cold_fallbacks
    );
    for w in &stats.workers {
        let m = w.memory.unwrap_or_default();
        println!(
            "  worker slot {} pid {}: {:?}, {} jobs, RSS {:.1} MiB, PSS {:.1} MiB, private {:.1} MiB",
            w.slot,
            w.pid,
            w.birth,
            w.jobs_served,
            mib(m.rss_bytes),
            mib(m.pss_bytes),
            mib(m.private_bytes)
        );
    }
    if stats.cold_fallbacks > 0 {
        println!("  warning: workers started cold because the zygote was not running");
    }
}

fn replay(run_dir: &Path) -> u8 {
    let replay = match record::replay(run_dir) {
        Ok(r) => r,
        Err(record::ReplayRunError::Refused(record::ReplayError::Record(e))) => {
            eprintln!("pyward: {}: {e}", run_dir.display());
            return EXIT_USAGE;
        }
        Err(record::ReplayRunError::Refused(e)) => {
            println!("refused: {e}");
            return EXIT_JOB_FAILED;
        }
        Err(e) => {
            eprintln!("pyward: {e}");
            return EXIT_INFRA;
        }
    };
    for (i, attempt) in replay.attempts.iter().enumerate() {
        let same = attempt.status == attempt.recorded_status;
        println!(
            "attempt {}: {} (recorded {}){}",
            i + 1,
            attempt.status,
            attempt.recorded_status,
            if same { "" } else { "  DIFFERENT" }
        );
        for a in &attempt.artifacts {
            match (&a.recorded_sha256, a.verdict) {
                (_, record::ArtifactMatch::New) => {
                    println!("  {}: NEW (not in the record)", a.name)
                }
                (Some(sha), verdict) => {
                    let word = match verdict {
                        record::ArtifactMatch::Identical => "identical",
                        record::ArtifactMatch::Different => "DIFFERENT",
                        _ => "MISSING",
                    };
                    println!(
                        "  {}: {word} (sha256 {})",
                        a.name,
                        &sha[..16.min(sha.len())]
                    );
                }
                (None, _) => {}
            }
        }
    }
    if replay.identical() {
        println!("replay: identical");
        0
    } else {
        println!("replay: different");
        EXIT_JOB_FAILED
    }
}

fn list_runs(dir: &Path) -> u8 {
    let entries = match record::run_dirs(dir) {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("pyward: {}: {e}", dir.display());
            return EXIT_USAGE;
        }
    };
    for path in entries {
        match record::load(&path) {
            Ok(r) => {
                let statuses: Vec<&str> = r.attempts.iter().map(|a| a.status.as_str()).collect();
                let artifacts: Vec<String> = r
                    .attempts
                    .last()
                    .map(|a| {
                        a.artifacts
                            .iter()
                            .map(|x| format!("{} ({} B)", x.name, x.bytes))
                            .collect()
                    })
                    .unwrap_or_default();
                println!(
                    "{}  attempts {}  [{}]  {}",
                    path.display(),
                    r.attempts.len(),
                    statuses.join(" -> "),
                    artifacts.join(", ")
                );
            }
            Err(e) => println!("{}  unreadable: {e}", path.display()),
        }
    }
    0
}
