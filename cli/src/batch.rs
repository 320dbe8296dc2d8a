//! `pyward run`, the batch runner: reads and gates every file, warms one pool for them,
//! runs each file's job through the job service ([`crate::service`]) on its own thread,
//! writes the artifacts where `--out` says, and prints each report.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pyward::output_dir::OutputDir;
use pyward::record::Recorder;
use pyward::report::{Report, STATUS_INFRASTRUCTURE_ERROR, STATUS_INPUT_ERROR};
use pyward::validate::Expectations;
use pyward::{gate, Artifact, Executor, Isolation, Job};

use crate::exit::{exit_code, EXIT_INFRA, EXIT_USAGE};
use crate::service::{self, Door, Observer, Service};
use crate::terminal::{say, tell};

/// Reads a job's code from a file, or from stdin for `-`.
pub fn read_source(path: &Path) -> std::io::Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut code = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut code)?;
        Ok(code)
    } else {
        std::fs::read(path)
    }
}

pub fn print_json(report: &Report) {
    match serde_json::to_string(report) {
        Ok(line) => say!("{line}"),
        Err(e) => tell!("pyward: cannot serialise the report: {e}"),
    }
}

/// What the command line says of every job of a run.
pub struct RunOptions {
    pub timeout: f64,
    pub memory: u64,
    pub workers: Option<usize>,
    pub fresh: bool,
    /// `--checks FILE` and `--expect NAME`: what each job must write, checked.
    pub expectations: Option<Expectations>,
}

/// The declaration of `--checks FILE` (TOML, or JSON for `.json`) with the artifacts of
/// `--expect NAME` added; `None` when neither was given.
pub fn expectations(
    checks: Option<&Path>,
    expect: &[String],
) -> Result<Option<Expectations>, String> {
    let mut declared = match checks {
        None if expect.is_empty() => return Ok(None),
        None => Expectations::from_json(r#"{"version": 1}"#).map_err(|e| e.to_string())?,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("--checks {}: {e}", path.display()))?;
            let json = path
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("json"));
            let parsed = if json {
                Expectations::from_json(&text)
            } else {
                Expectations::from_toml(&text)
            };
            parsed.map_err(|e| format!("--checks {}: {e}", path.display()))?
        }
    };
    for name in expect {
        if !declared.artifacts.contains(name) {
            declared.artifacts.push(name.clone());
        }
    }
    // Read again as a whole, so that an --expect name is checked as the file's are.
    Expectations::from_json(&declared.to_json())
        .map(Some)
        .map_err(|e| format!("--expect: {e}"))
}

pub fn run(
    files: &[PathBuf],
    src: Option<PathBuf>,
    out: Option<PathBuf>,
    options: RunOptions,
    policy: gate::Policy,
    recorder: Option<Recorder>,
    as_json: bool,
) -> u8 {
    let RunOptions {
        timeout,
        memory,
        workers,
        fresh,
        expectations,
    } = options;
    if !(timeout > 0.0 && timeout.is_finite()) {
        tell!("pyward: --timeout must be a positive number of seconds");
        return EXIT_USAGE;
    }
    if let Some(dir) = &src {
        if !dir.is_dir() {
            tell!("pyward: --src {} is not a directory", dir.display());
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
                (Some(o), 1) if !names_dir(o) => o.clone(),
                (Some(dir), _) => dir.join(format!("{stem}.png")),
                (None, 1) => PathBuf::from(format!("{stem}.png")),
                (None, _) => PathBuf::from("pyward-out").join(format!("{stem}.png")),
            }
        })
        .collect();

    let service = Service::new(recorder, Arc::new(Stderr));
    // Read and gate every file before a pool is warmed: a refused file costs
    // microseconds, not a warm-up.
    let mut reports: Vec<Option<Answer>> = Vec::new();
    let mut jobs: Vec<(usize, Job)> = Vec::new();
    for (i, (file, out_path)) in files.iter().zip(&out_paths).enumerate() {
        let code = match read_source(file) {
            Ok(code) => code,
            Err(e) => {
                if !as_json {
                    tell!("pyward: cannot read {}: {e}", file.display());
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
        if let Some(declared) = &expectations {
            job = job.expect(declared);
        }
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
                    say!(
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
                            let (executor, service, file) = (&executor, &service, &files[i]);
                            scope.spawn(move || (i, run_one(service, executor, job, file)))
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
                    tell!("pyward: cannot start the pool: {e}");
                    return EXIT_INFRA;
                }
                for (i, _) in jobs.drain(..) {
                    reports[i] = Some((Report::from_error(&e, gate_enabled), Vec::new()));
                }
            }
        }
    }

    // `--out FILE` for one script names where its figure goes, whatever the code
    // named it; `--out DIR` (and no --out) keeps every artifact's own name.
    let figure_to_out = matches!((&out, files.len()), (Some(o), 1) if !names_dir(o));
    let mut written = WrittenThisRun::default();
    let mut worst = 0;
    for ((file, out_path), answer) in files.iter().zip(&out_paths).zip(reports) {
        let (report, artifacts) = answer.expect("every file has a report");
        let to = Destination {
            out_path,
            figure_to_out,
            written: &mut written,
        };
        worst = worst.max(finish(file, to, report, artifacts, as_json, warmup));
    }
    worst
}

/// What a table artifact holds, as the report previews it: its shape, columns with
/// their kinds, and its first rows.
fn table_lines(artifact: &pyward::report::ArtifactReport) -> Vec<String> {
    let Some(table) = &artifact.table else {
        return Vec::new();
    };
    let sheet = table
        .sheet
        .as_ref()
        .map(|s| format!(", sheet {s:?} of {:?}", table.sheets))
        .unwrap_or_default();
    let columns: Vec<String> = table
        .columns
        .iter()
        .map(|c| format!("{} ({})", c.name, c.kind))
        .collect();
    let mut lines = vec![
        format!(
            "  table {}: {} rows x {} columns{sheet}",
            artifact.name, table.rows, table.column_count
        ),
        format!("    columns: {}", columns.join(", ")),
    ];
    lines.extend(
        table
            .head
            .iter()
            .map(|row| format!("    {}", row.join(" | "))),
    );
    lines
}

/// A file's report and the artifacts it still has to write.
type Answer = (Report, Vec<Artifact>);

/// Runs one file's job through the job service (which writes its record when records
/// are on).
fn run_one(service: &Service, executor: &Executor, job: Job, file: &Path) -> Answer {
    let request = service::Request::new(job, Door::Run, file.display().to_string());
    match service.run_blocking(executor, request) {
        Ok(done) => (done.report(false), done.outcome.result.unwrap_or_default()),
        Err(e) => (
            Report::from_error(&e, executor.policy().gate_enabled()),
            Vec::new(),
        ),
    }
}

/// `pyward run`'s observer: a record that cannot be written is said on stderr; it does
/// not change the job's result.
struct Stderr;

impl Observer for Stderr {
    fn record_failed(&self, message: &str) {
        tell!("pyward: {message}");
    }
}

/// Whether `--out` names a folder: an existing one, or a path written with a trailing
/// `/` (created at the first artifact).
fn names_dir(out: &Path) -> bool {
    out.is_dir() || out.as_os_str().as_encoded_bytes().ends_with(b"/")
}

/// Where a script's artifacts go.
struct Destination<'a> {
    /// `--out` (or its default): its folder holds the artifacts.
    out_path: &'a Path,
    /// The job's figure is written to `out_path` whatever its name (`--out FILE`).
    figure_to_out: bool,
    /// The names the earlier scripts of this run wrote.
    written: &'a mut WrittenThisRun,
}

/// The names written to the output folder by this run, and by which script: several
/// scripts that save under the same name (`plt.savefig('figure.png')`) each keep their
/// file.
#[derive(Default)]
struct WrittenThisRun(std::collections::HashMap<String, String>);

impl WrittenThisRun {
    /// `name` for `script`, or, when an earlier script of this run wrote that name,
    /// the name after the script's (`b-figure.png`), with the script that had it.
    fn claim(&mut self, name: &str, script: &Path) -> (String, Option<String>) {
        let Some(earlier) = self.0.get(name).cloned() else {
            self.0
                .insert(name.to_string(), script.display().to_string());
            return (name.to_string(), None);
        };
        let stem = match script.file_stem().and_then(|s| s.to_str()) {
            Some(s) if script != Path::new("-") && !s.starts_with('.') => s.to_string(),
            _ => "stdin".to_string(),
        };
        let name = (1..)
            .map(|n| match n {
                1 => format!("{stem}-{name}"),
                n => format!("{stem}-{n}-{name}"),
            })
            .find(|candidate| !self.0.contains_key(candidate))
            .expect("an unused name");
        self.0.insert(name.clone(), script.display().to_string());
        (name, Some(earlier))
    }
}

/// Writes the artifacts next to `out_path`, prints the report, and returns its exit
/// code.
fn finish(
    file: &Path,
    to: Destination<'_>,
    mut report: Report,
    artifacts: Vec<Artifact>,
    as_json: bool,
    warmup: Option<Duration>,
) -> u8 {
    let out_path = to.out_path;
    let out_name = out_path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let figure = to
        .figure_to_out
        .then(|| pyward::validate::main_figure(out_name, &artifacts))
        .flatten()
        .map(|a| a.name.clone());
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
            };
            // The one figure: under --out's name (a name checked as the caller's).
            let to_out = figure.as_ref() == Some(&artifact.name);
            let (name, earlier) = to
                .written
                .claim(if to_out { out_name } else { &artifact.name }, file);
            let written_to = written_to.and_then(|d| d.write(&name, &artifact.bytes));
            if let Err(e) = written_to {
                tell!("pyward: cannot write an artifact: {e}");
                return EXIT_INFRA;
            }
            // Shown as the user wrote `--out` when it is that file.
            let path = if earlier.is_none() && (artifact.name == out_name || to_out) {
                out_path.to_path_buf()
            } else {
                out_dir.join(&name)
            };
            let dims = pyward::validate::png_dimensions(&artifact.bytes)
                .map(|(w, h)| format!(", {w}x{h} px"))
                .unwrap_or_default();
            let kept = earlier
                .map(|by| format!("; {} was written by {by} in this run", artifact.name))
                .unwrap_or_default();
            written.push(format!(
                "wrote {} ({} bytes, {}{dims}{kept})",
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
                say!("{shown}: {line}");
            }
            if let Some(description) = &report.description {
                say!("  shows: {description}");
            }
            for line in report
                .run
                .iter()
                .flat_map(|r| &r.artifacts)
                .flat_map(table_lines)
            {
                say!("{line}");
            }
        }
        STATUS_INPUT_ERROR | STATUS_INFRASTRUCTURE_ERROR => {
            tell!("{shown}: {}: {}", report.status, report.feedback);
        }
        status => say!("{shown}: {status}\n{}", report.feedback),
    }
    if let Some(run) = &report.run {
        if !run.stdout.is_empty() {
            say!(
                "  stdout: {}",
                run.stdout.trim_end().replace('\n', "\n          ")
            );
        }
        if !run.stderr.is_empty() {
            say!(
                "  stderr: {}",
                run.stderr.trim_end().replace('\n', "\n          ")
            );
        }
        if let Some(t) = &run.timings_ms {
            let warm = t
                .pool_warmup
                .map(|w| format!(" (pool warm-up {w:.0} ms)"))
                .unwrap_or_default();
            say!(
                "  timings: queue {:.2} ms, gate {:.3} ms, exec {:.1} ms, total {:.1} ms{warm}",
                t.queue,
                t.gate,
                t.exec,
                t.total
            );
        }
        if let Some(record) = &run.record {
            say!("  record: {record}");
        }
    }
    exit_code(&report)
}
