//! `pyward`: a thin command line over the library — run files, check them with the gate,
//! describe the environment workers get, and serve the warm pool over HTTP.

mod batch;
mod bench;
mod exit;
mod mcp;
mod runs;
mod serve;
mod service;
mod terminal;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use pyward::gate;
use pyward::record::Recorder;
use pyward::report::Report;

use batch::{print_json, read_source, RunOptions};
use exit::{exit_code, EXIT_INFRA, EXIT_JOB_FAILED, EXIT_USAGE};
use terminal::{say, tell};

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
        /// Where the figure goes, whatever the code named it (default: ./<file stem>.png);
        /// a folder (existing, or written with a trailing /, as with several files) gets
        /// every file the code wrote under its own name.
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
        /// An artifact the job must write (repeatable), e.g. `--expect result.xlsx`: a job
        /// that expects files and no figure is a table job, valid without a figure.
        #[arg(long = "expect", value_name = "NAME")]
        expect: Vec<String>,
        /// What the job must write and the checks on its tables (TOML, or JSON for a
        /// `.json` file; the form of examples/allocation/checks.toml).
        #[arg(long, value_name = "FILE")]
        checks: Option<PathBuf>,
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
    /// (/v1/runs), /v1/pool, /healthz, /readyz, /metrics, /v1/openapi.json, a page at /
    /// to try it (the playground, runs and pool), and MCP at /mcp with --mcp-out.
    Serve(Box<serve::ServeArgs>),
    /// Measure your own scripts warm (the pool), fresh (a process forked per job), cold (a
    /// new `python -I` per run) and at the floor (bare exec in a warm interpreter),
    /// interleaved; checks each first and compares pyward's figure with plain Python's.
    Bench(bench::BenchArgs),
    /// Serve the warm pool as tools over the Model Context Protocol on stdin and stdout
    /// (for an agent host): make_figure, check_code, list_inputs, run_table_job.
    Mcp(mcp::McpArgs),
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
            expect,
            checks,
            json,
            no_record,
            runs,
            dangerously_skip_gate,
        } => {
            let policy = if dangerously_skip_gate {
                tell!("pyward: WARNING: the static gate is OFF (--dangerously-skip-gate)");
                gate::Policy::gate_disabled_for_testing()
            } else {
                gate::Policy::figures()
            };
            let expectations = match batch::expectations(checks.as_deref(), &expect) {
                Ok(e) => e,
                Err(why) => {
                    tell!("pyward: {why}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            let limits = RunOptions {
                timeout,
                memory,
                workers: workers.map(usize::from),
                fresh,
                expectations,
            };
            let recorder = (!no_record).then(|| Recorder::new(runs));
            batch::run(&files, src, out, limits, policy, recorder, json)
        }
        Command::Replay { run_dir } => runs::replay(&run_dir),
        Command::Runs { dir } => runs::list_runs(&dir),
        Command::Check { file, json } => check(&file, json),
        Command::Doctor => doctor(),
        Command::Serve(args) => serve::serve(*args),
        Command::Bench(args) => bench::bench(args),
        Command::Mcp(args) => mcp::mcp(args),
    };
    ExitCode::from(code)
}

fn check(file: &Path, as_json: bool) -> u8 {
    let source = match read_source(file) {
        Ok(s) => s,
        Err(e) => {
            tell!("pyward: cannot read {}: {e}", file.display());
            return EXIT_USAGE;
        }
    };
    let policy = gate::Policy::figures();
    let report = Report::from_check(gate::check_bytes(&source, &policy), &policy)
        .with_file(file.display().to_string());
    if as_json {
        print_json(&report);
    } else if report.is_ok() {
        say!("{}: ok", file.display());
    } else {
        say!("{}: {}\n{}", file.display(), report.status, report.feedback);
    }
    exit_code(&report)
}

fn doctor() -> u8 {
    let found = pyward::doctor::diagnose();
    let support = &found.support;
    say!(
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
            say!("python: {} is unusable: {e}", pyward::PYTHON_ENV_VAR);
            return EXIT_INFRA;
        }
    };
    say!(
        "python: {} {} (from {}; workers built for {})",
        env.executable,
        env.version,
        found.python_origin,
        pyward::PythonEnv::from_build().minor_version()
    );
    say!("python home: {}", env.home);
    for p in &env.paths {
        say!("  sys.path: {p}");
    }
    say!("worker build: {}", pyward::worker::BUILD_ID);
    let pool = match &found.pool {
        Some(Ok(pool)) => pool,
        Some(Err(e)) => {
            say!("workers: cannot start: {e}");
            return EXIT_INFRA;
        }
        None => return EXIT_INFRA,
    };
    let warmup = &pool.warmup;
    say!("worker warm-up: {:.0} ms", warmup.total.as_secs_f64() * 1e3);
    match &warmup.render_once_off {
        None => say!("render-once savefig: on"),
        Some(why) => say!("render-once savefig: off, stock savefig kept ({why})"),
    }
    match &warmup.text_metrics_off {
        None => say!(
            "frozen text metrics: {} sizes and every font's tables",
            warmup.text_metrics
        ),
        Some(why) => say!("frozen text metrics: off, stock measuring kept ({why})"),
    }
    for (module, verdict) in &pool.imports {
        match verdict {
            Ok(()) => say!("  module {module}: imports"),
            Err(why) => say!("  module {module}: {why}"),
        }
    }
    match &pool.test_figure {
        Ok((bytes, sandbox)) => {
            say!("test savefig: {bytes} bytes of PNG");
            say!(
                "sandbox in workers: {}",
                serde_json::to_string(sandbox).unwrap_or_default()
            );
        }
        Err(why) => say!("test savefig: {why}"),
    }
    match &pool.cjk_text {
        Ok(()) => say!("chinese, japanese and korean text: drawn"),
        Err(why) => say!("chinese, japanese and korean text: {why}"),
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
    say!(
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
            say!("zygote: {state}, PSS {pss:.1} MiB, restarts {}", z.restarts);
            if let Some(e) = &z.last_error {
                say!("  last start failed: {e}");
            }
        }
        None => say!("zygote: off"),
    }
    say!(
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
        say!(
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
        say!("  warning: workers started cold because the zygote was not running");
    }
}
