//! `pyward`: a thin command line over the library — run files, check them with the gate,
//! and describe the environment workers get.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde_json::{json, Value};

use pyward::record::{self, Recorder};
use pyward::{gate, Attempt, Executor, Isolation, Job, JobFailure, Outcome};

/// Exit code of a job failure (rejected, timed out, raised, ...).
const EXIT_JOB_FAILED: u8 = 1;
/// Exit code of a usage error (clap uses it too).
const EXIT_USAGE: u8 = 2;
/// Exit code of an infrastructure error (the executor could not do its work).
const EXIT_INFRA: u8 = 3;

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
        /// Python files; with several, --out is a directory.
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
        #[arg(long)]
        workers: Option<usize>,
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
        /// Python file.
        file: PathBuf,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Describe the Python the workers use, the allowed modules, a test render, and the
    /// sandbox layers this kernel supports.
    Doctor,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
                workers,
                fresh,
            };
            let recorder = (!no_record).then(|| Recorder::new(runs));
            run(&files, src, out, limits, policy, recorder, json)
        }
        Command::Replay { run_dir } => replay(&run_dir),
        Command::Runs { dir } => list_runs(&dir),
        Command::Check { file, json } => check(&file, json),
        Command::Doctor => doctor(),
    };
    ExitCode::from(code)
}

fn read_source(path: &Path) -> Result<Vec<u8>, u8> {
    std::fs::read(path).map_err(|e| {
        eprintln!("pyward: cannot read {}: {e}", path.display());
        EXIT_USAGE
    })
}

fn check(file: &Path, as_json: bool) -> u8 {
    let source = match read_source(file) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let policy = gate::Policy::figures();
    let (ok, value) = match gate::check_bytes(&source, &policy) {
        Ok(verdict) => (
            verdict.is_allowed(),
            json!({
                "status": if verdict.is_allowed() { "ok" } else { "rejected" },
                "violations": violations_json(&verdict.violations),
                "feedback": if verdict.is_allowed() { String::new() } else { verdict.teaching_text(&policy) },
            }),
        ),
        Err(bad) => (
            false,
            json!({"status": "bad_input", "violations": [], "feedback": bad.to_string()}),
        ),
    };
    if as_json {
        println!("{value}");
    } else if ok {
        println!("{}: ok", file.display());
    } else {
        println!(
            "{}: {}\n{}",
            file.display(),
            value["status"].as_str().unwrap_or(""),
            value["feedback"].as_str().unwrap_or("")
        );
    }
    if ok {
        0
    } else {
        EXIT_JOB_FAILED
    }
}

fn violations_json(v: &[gate::Violation]) -> Value {
    Value::Array(
        v.iter()
            .map(|v| json!({"rule": v.rule.id(), "line": v.line, "col": v.col, "message": v.message, "hint": v.hint}))
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
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
    let mut sources = Vec::new();
    for f in files {
        match read_source(f) {
            Ok(s) => sources.push(s),
            Err(code) => return code,
        }
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = workers.unwrap_or_else(|| files.len().clamp(1, cores));
    let executor = match Executor::builder()
        .workers(workers)
        .timeout(Duration::from_secs_f64(timeout))
        .memory_limit_mib(memory)
        .policy(policy)
        .isolation(if fresh {
            Isolation::Fresh
        } else {
            Isolation::Reuse
        })
        .build()
    {
        Ok(e) => e,
        Err(e) => {
            eprintln!("pyward: cannot start the pool: {e}");
            return EXIT_INFRA;
        }
    };
    let warm = executor.warmup().clone();
    if !as_json {
        let per: Vec<String> = warm
            .per_worker_ms
            .iter()
            .map(|m| format!("{m:.0} ms"))
            .collect();
        println!(
            "pool: {} worker(s) warm in {:.0} ms (each: {})",
            executor.workers(),
            ms(warm.total),
            per.join(", ")
        );
    }

    // Several files run concurrently, one thread each, on the shared pool.
    let out_paths: Vec<PathBuf> = files
        .iter()
        .map(|f| {
            let stem = f
                .file_stem()
                .map_or("figure".into(), |s| s.to_string_lossy().into_owned());
            match (&out, files.len()) {
                (Some(o), 1) if !o.is_dir() => o.clone(),
                (Some(dir), _) => dir.join(format!("{stem}.png")),
                (None, 1) => PathBuf::from(format!("{stem}.png")),
                (None, _) => PathBuf::from("pyward-out").join(format!("{stem}.png")),
            }
        })
        .collect();
    let results: Vec<(pyward::Result<Outcome>, Option<PathBuf>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = sources
            .into_iter()
            .zip(&out_paths)
            .map(|(code, out_path)| {
                let out_name = out_path
                    .file_name()
                    .map_or("figure.png".into(), |n| n.to_string_lossy().into_owned());
                let mut job = Job::new(code).out_name(out_name);
                if let Some(dir) = &src {
                    job = job.src_dir(dir);
                }
                let (executor, recorder) = (&executor, &recorder);
                scope.spawn(move || run_and_record(executor, recorder.as_ref(), job))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("job thread"))
            .collect()
    });

    let mut worst = 0;
    for ((file, out_path), (result, record)) in files.iter().zip(&out_paths).zip(results) {
        let code = report(
            file,
            out_path,
            result,
            record.as_deref(),
            as_json,
            warm.total,
        );
        worst = worst.max(code);
    }
    worst
}

/// Runs one job and writes its record (a record that cannot be written is reported on
/// stderr; it does not change the job's result).
fn run_and_record(
    executor: &Executor,
    recorder: Option<&Recorder>,
    job: Job,
) -> (pyward::Result<Outcome>, Option<PathBuf>) {
    let result = executor.run(job.clone());
    let record = match (&result, recorder) {
        (Ok(outcome), Some(r)) => {
            let attempts = [Attempt {
                code: job.code().to_vec(),
                outcome: outcome.clone(),
            }];
            r.record(executor, &job, &attempts)
                .map_err(|e| eprintln!("pyward: cannot write the run record: {e}"))
                .ok()
        }
        _ => None,
    };
    (result, record)
}

fn report(
    file: &Path,
    out_path: &Path,
    result: pyward::Result<Outcome>,
    record: Option<&Path>,
    as_json: bool,
    warmup: Duration,
) -> u8 {
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            let status = if matches!(e, pyward::Error::InvalidJob(_)) {
                "bad_input"
            } else {
                "error"
            };
            if as_json {
                println!(
                    "{}",
                    json!({"file": file, "status": status, "feedback": e.to_string()})
                );
            } else {
                eprintln!("{}: {status}: {e}", file.display());
            }
            return if status == "bad_input" {
                EXIT_JOB_FAILED
            } else {
                EXIT_INFRA
            };
        }
    };
    let mut artifacts = Vec::new();
    let out_dir = out_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for a in outcome.artifacts() {
        let path = if Some(a.name.as_str()) == out_path.file_name().and_then(|n| n.to_str()) {
            out_path.to_path_buf()
        } else {
            out_dir.join(&a.name)
        };
        if let Err(e) =
            std::fs::create_dir_all(out_dir).and_then(|()| std::fs::write(&path, &a.bytes))
        {
            eprintln!("pyward: cannot write {}: {e}", path.display());
            return EXIT_INFRA;
        }
        artifacts.push((a, path));
    }
    let t = &outcome.timings;
    if as_json {
        let violations = match outcome.failure() {
            Some(JobFailure::Rejected { violations, .. }) => violations_json(violations),
            _ => json!([]),
        };
        let error = match outcome.failure() {
            Some(JobFailure::PythonError(e)) => {
                json!({"type": e.type_name, "message": e.message, "line": e.line, "traceback": e.traceback, "stderr_tail": e.stderr_tail})
            }
            Some(f) => json!({"type": f.status(), "message": f.to_string(), "line": null}),
            None => Value::Null,
        };
        let value = json!({
            "file": file,
            "status": outcome.status(),
            "violations": violations,
            "error": error,
            "artifacts": artifacts.iter().map(|(a, p)| json!({"name": a.name, "path": p, "bytes": a.bytes.len(), "media_type": a.media_type})).collect::<Vec<_>>(),
            "stdout": outcome.stdout,
            "feedback": outcome.feedback().unwrap_or_default(),
            "seed": outcome.seed,
            "record": record,
            "gate": if outcome.gate_enabled { "on" } else { "off" },
            "worker": outcome.worker.as_ref().map(|w| json!({"slot": w.slot, "pid": w.pid, "sandbox": w.sandbox})),
            "retired": outcome.retired,
            "timings_ms": {"queue": ms(t.queue), "gate": ms(t.gate), "stage": ms(t.stage), "exec": ms(t.exec), "validate": ms(t.validate), "total": ms(t.total), "pool_warmup": ms(warmup)},
        });
        println!("{value}");
    } else {
        match &outcome.result {
            Ok(_) => {
                for (a, p) in &artifacts {
                    let dims = pyward::validate::png_dimensions(&a.bytes)
                        .map(|(w, h)| format!(", {w}x{h} px"))
                        .unwrap_or_default();
                    println!(
                        "{}: wrote {} ({} bytes, {}{dims})",
                        file.display(),
                        p.display(),
                        a.bytes.len(),
                        a.media_type
                    );
                }
            }
            Err(f) => println!("{}: {}\n{}", file.display(), f.status(), f.feedback()),
        }
        if !outcome.stdout.is_empty() {
            println!(
                "  stdout: {}",
                outcome.stdout.trim_end().replace('\n', "\n          ")
            );
        }
        println!(
            "  timings: queue {:.2} ms, gate {:.3} ms, exec {:.1} ms, total {:.1} ms (pool warm-up {:.0} ms)",
            ms(t.queue), ms(t.gate), ms(t.exec), ms(t.total), ms(warmup)
        );
    }
    if outcome.is_success() {
        0
    } else {
        EXIT_JOB_FAILED
    }
}

fn doctor() -> u8 {
    // Probe the kernel before anything else: it describes the host, not a worker.
    let support = pyward::sandbox::probe();
    println!(
        "kernel sandbox support: landlock abi {} (pyward targets {}, requires {}), seccomp {}, no_new_privs {}, SandboxMode::Require would {}",
        support.landlock_abi.map_or("none".to_string(), |v| v.to_string()),
        support.landlock_target_abi,
        support.landlock_required_abi,
        if support.seccomp { "yes" } else { "no" },
        if support.no_new_privs { "yes" } else { "no" },
        if support.require_ok { "succeed" } else { "fail" },
    );
    let env = pyward::PythonEnv::from_build();
    println!("python home: {}", env.home);
    for p in &env.paths {
        println!("  sys.path: {p}");
    }
    let executor = match Executor::builder().workers(1).build() {
        Ok(e) => e,
        Err(e) => {
            println!("workers: cannot start: {e}");
            return EXIT_INFRA;
        }
    };
    println!("worker warm-up: {:.0} ms", ms(executor.warmup().total));
    match &executor.warmup().render_once_off {
        None => println!("render-once savefig: on"),
        Some(why) => println!("render-once savefig: off, stock savefig kept ({why})"),
    }
    let mut failed = false;
    for module in executor.policy().allowed_imports() {
        let job = Job::new(format!("import {module}\nprint('ok')\n")).out_name("none.txt");
        let verdict = match executor.run(job) {
            Ok(o) if o.stdout.trim() == "ok" => "imports".to_string(),
            Ok(o) => {
                failed = true;
                o.failure().map_or("no output".into(), |f| f.to_string())
            }
            Err(e) => {
                failed = true;
                e.to_string()
            }
        };
        println!("  module {module}: {verdict}");
    }
    match executor.run(Job::new("plt.plot([1, 2, 3]); plt.savefig(OUT)")) {
        Ok(o) if o.is_success() => {
            let w = o.worker.as_ref().expect("ran on a worker");
            println!(
                "test savefig: {} bytes of PNG",
                o.artifacts()[0].bytes.len()
            );
            println!(
                "sandbox in workers: {}",
                serde_json::to_string(&w.sandbox).unwrap_or_default()
            );
        }
        Ok(o) => {
            failed = true;
            println!(
                "test savefig: {}",
                o.failure().map(|f| f.to_string()).unwrap_or_default()
            );
        }
        Err(e) => {
            failed = true;
            println!("test savefig: {e}");
        }
    }
    if failed {
        EXIT_JOB_FAILED
    } else {
        0
    }
}

fn replay(run_dir: &Path) -> u8 {
    let rec = match record::load(run_dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pyward: {}: {e}", run_dir.display());
            return EXIT_USAGE;
        }
    };
    let jobs: Result<Vec<Job>, _> = (0..rec.attempts.len())
        .map(|i| record::replay_job(run_dir, &rec, i))
        .collect();
    let jobs = match jobs {
        Ok(j) => j,
        Err(e) => {
            println!("refused: {e}");
            return EXIT_JOB_FAILED;
        }
    };
    let executor = match Executor::builder()
        .workers(1)
        .policy(rec.policy.clone())
        .memory_limit(rec.memory_bytes)
        .timeout(Duration::from_millis(rec.timeout_ms))
        .build()
    {
        Ok(e) => e,
        Err(e) => {
            eprintln!("pyward: cannot start the pool: {e}");
            return EXIT_INFRA;
        }
    };
    let mut identical = true;
    for (i, (job, recorded)) in jobs.into_iter().zip(&rec.attempts).enumerate() {
        let outcome = match executor.run(job) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("pyward: attempt {}: {e}", i + 1);
                return EXIT_INFRA;
            }
        };
        let same_status = outcome.status() == recorded.status;
        identical &= same_status;
        println!(
            "attempt {}: {} (recorded {}){}",
            i + 1,
            outcome.status(),
            recorded.status,
            if same_status { "" } else { "  DIFFERENT" }
        );
        for want in &recorded.artifacts {
            let got = outcome
                .artifact(&want.name)
                .map(|a| record::sha256_hex(&a.bytes));
            let verdict = match &got {
                Some(h) if *h == want.sha256 => "identical",
                Some(_) => "DIFFERENT",
                None => "MISSING",
            };
            identical &= verdict == "identical";
            println!("  {}: {verdict} (sha256 {})", want.name, &want.sha256[..16]);
        }
        for extra in outcome
            .artifacts()
            .iter()
            .filter(|a| !recorded.artifacts.iter().any(|r| r.name == a.name))
        {
            identical = false;
            println!("  {}: NEW (not in the record)", extra.name);
        }
    }
    println!(
        "{}",
        if identical {
            "replay: identical"
        } else {
            "replay: different"
        }
    );
    if identical {
        0
    } else {
        EXIT_JOB_FAILED
    }
}

fn list_runs(dir: &Path) -> u8 {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(e) => e
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("record.json").is_file())
            .collect(),
        Err(e) => {
            eprintln!("pyward: {}: {e}", dir.display());
            return EXIT_USAGE;
        }
    };
    entries.sort();
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
