//! Run records and replay: every run can be written down so that it can be audited and
//! re-executed later.
//!
//! A record is a directory `runs/<time>-<id>/` (time to the millisecond, UTC) holding `record.json` (the job: code of
//! every attempt, task, input manifest with sha256, policy and its hash, limits; each
//! attempt's verdict and outcome; artifact names, sizes and sha256; seeds, worker,
//! versions, timings), copies of in-memory inputs under `inputs/` and the artifacts
//! under `attempt-N/`. It is written into a hidden temporary directory and renamed into
//! place, so a crash never leaves a half-written record. It never contains the host's
//! environment.

use crate::supervisor::PngEncoder;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::array::SharedArray;
pub use crate::digest::sha256_hex;
use crate::gate::Policy;
use crate::job::{Job, Source};
use crate::outcome::Outcome;
use crate::output_dir::{check_file_name, check_relative_path, Existing, OutputDir};
use crate::report::Report;
use crate::supervisor::Attempt;
use crate::supervisor::Executor;
use crate::workspace;

/// Bumped when the record format changes shape. Version 2 stores each attempt's outcome
/// as its [`Report`]; version-1 records (the outcome's older serde form) still load and
/// replay.
pub const RECORD_VERSION: u32 = 2;

/// The contents of `record.json`.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[non_exhaustive]
pub struct RunRecord {
    /// [`RECORD_VERSION`] at writing time.
    pub version: u32,
    /// Unique id of the run.
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// The task text, if the job had one.
    pub task: Option<String>,
    /// The gate policy every attempt was checked against.
    pub policy: Policy,
    /// [`Policy::hash`].
    pub policy_hash: String,
    /// Deadline of each attempt, in milliseconds.
    pub timeout_ms: u64,
    /// Memory ceiling of each attempt, in bytes.
    pub memory_bytes: u64,
    /// File name of `OUT`.
    pub out_name: String,
    /// Other artifacts the job had to write.
    pub expected: Vec<String>,
    /// Whether a blank PNG was refused.
    pub blank_check: bool,
    /// Whether figures were rendered to memory ([`Job::figures_in_memory`]).
    #[serde(default)]
    pub figures_in_memory: bool,
    /// Who encoded its PNGs: a replay encodes them the same way to compare bytes.
    /// Records written before host encoding existed hold matplotlib's bytes.
    #[serde(default = "matplotlib_encoder")]
    pub png_encoder: PngEncoder,
    /// Ids of the job's own validators (their configuration is the caller's).
    pub validators: Vec<String>,
    /// What the job declared it must write and the checks on its tables
    /// ([`Job::expect`](crate::Job::expect)): a replay checks the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectations: Option<crate::validate::Expectations>,
    /// Every input file.
    pub inputs: Vec<InputRecord>,
    /// Every shared array ([`Job::with_array`]), stored as `arrays/<name>.npy`.
    #[serde(default)]
    pub arrays: Vec<ArrayRecord>,
    /// The job's tenant ([`Job::tenant`]); a replay runs as the same tenant.
    #[serde(default)]
    pub tenant: Option<String>,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptRecord>,
}

fn matplotlib_encoder() -> PngEncoder {
    PngEncoder::Matplotlib
}

/// One input file of the run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputRecord {
    /// Path relative to `SRC`.
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Hex sha256 of the contents.
    pub sha256: String,
    /// Where replay finds it.
    pub origin: InputOrigin,
}

/// One shared array of the run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArrayRecord {
    /// Its name in the job's globals.
    pub name: String,
    /// numpy dtype string.
    pub dtype: String,
    /// Shape, C order.
    pub shape: Vec<usize>,
    /// Hex sha256 of the data (C order, without the `.npy` header).
    pub sha256: String,
}

/// Where an input's bytes come from on replay.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum InputOrigin {
    /// A file of a caller's input directory (absolute path of the directory).
    Dir {
        /// The directory given to `Job::src_dir`.
        dir: String,
    },
    /// An in-memory input, copied into the record under `inputs/`.
    Stored,
}

/// One attempt of the run.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[non_exhaustive]
pub struct AttemptRecord {
    /// The code, as sent (lossy UTF-8 if it was not valid UTF-8).
    pub code: String,
    /// `ok` or the failure's status word.
    pub status: String,
    /// The outcome as its [`Report`] (verdict, error, stdout, timings, seed, worker and
    /// versions; artifacts by hash): kept as JSON so records of every version load.
    pub outcome: serde_json::Value,
    /// The artifacts it produced.
    pub artifacts: Vec<ArtifactRecord>,
}

impl AttemptRecord {
    /// The seed the attempt ran with (`seed` is top-level in every record version).
    pub fn seed(&self) -> u64 {
        self.outcome["seed"].as_u64().unwrap_or(0)
    }

    /// The outcome's report (`None` for a version-1 record).
    pub fn report(&self) -> Option<Report> {
        serde_json::from_value(self.outcome.clone()).ok()
    }
}

/// One artifact of an attempt.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArtifactRecord {
    /// File name.
    pub name: String,
    /// Media type.
    pub media_type: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Hex sha256 of the contents.
    pub sha256: String,
    /// How the code made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obtained: Option<crate::Obtained>,
    /// The path the code asked for, when it was not a plain name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
}

/// Writes run records under one directory.
#[derive(Debug, Clone)]
pub struct Recorder {
    dir: PathBuf,
}

impl Recorder {
    /// Records go into `dir` (created when needed), e.g. `runs/`.
    pub fn new(dir: impl Into<PathBuf>) -> Recorder {
        Recorder { dir: dir.into() }
    }

    /// The directory records go into.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the record of `job`'s `attempts` atomically; returns its directory.
    ///
    /// Every file named by the job (stored inputs, arrays, each attempt's artifacts,
    /// whose names the job's code chose) is written through an [`OutputDir`] on the
    /// record's staging directory: a name that is not plain fails the record with an
    /// `InvalidInput` error naming the problem, and nothing lands outside it.
    pub fn record(
        &self,
        executor: &Executor,
        job: &Job,
        attempts: &[Attempt],
    ) -> io::Result<PathBuf> {
        let (timeout, memory_bytes) = executor.effective_limits(job);
        let run = RunSettings {
            policy: executor.policy().clone(),
            png_encoder: executor.png_encoder(),
            timeout,
            memory_bytes,
        };
        self.write(run, job, attempts)
    }

    /// [`Recorder::record`] once the executor's settings are read.
    fn write(&self, run: RunSettings, job: &Job, attempts: &[Attempt]) -> io::Result<PathBuf> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let seq = COUNTER.fetch_add(1, Ordering::Relaxed);
        let id = sha256_hex(format!("{}-{}-{seq}", now.as_nanos(), std::process::id()).as_bytes())
            [..12]
            .to_string();
        let RunSettings {
            policy,
            png_encoder,
            timeout,
            memory_bytes,
        } = run;
        // `<time>.<ms>Z-<id>`: names sort as the runs were made, to the millisecond.
        let stamp = utc_stamp(now.as_secs());
        let name = format!(
            "{}.{:03}Z-{id}",
            stamp.trim_end_matches('Z'),
            now.subsec_millis()
        );
        fs::create_dir_all(&self.dir)?;
        let staging = tempfile::Builder::new()
            .prefix(".writing-")
            .tempdir_in(&self.dir)?;
        // Job-named files go through this handle only: it cannot be left.
        let out = OutputDir::open(staging.path())?;

        let mut inputs = Vec::new();
        for source in &job.sources {
            match source {
                Source::Dir(dir) => {
                    let root = dir.canonicalize()?;
                    for f in workspace::input_files(&root).map_err(io::Error::other)? {
                        let bytes = fs::read(&f.real)?;
                        inputs.push(InputRecord {
                            name: f.rel.to_string_lossy().into_owned(),
                            bytes: bytes.len() as u64,
                            sha256: sha256_hex(&bytes),
                            origin: InputOrigin::Dir {
                                dir: root.to_string_lossy().into_owned(),
                            },
                        });
                    }
                }
                Source::Bytes { name, bytes } => {
                    // The executor refuses other names; the handle refuses them again.
                    out.subdir("inputs")
                        .and_then(|dir| dir.write_relative(name, bytes, Existing::Replace))
                        .map_err(|e| naming(e.into(), "input"))?;
                    inputs.push(InputRecord {
                        name: name.clone(),
                        bytes: bytes.len() as u64,
                        sha256: sha256_hex(bytes),
                        origin: InputOrigin::Stored,
                    });
                }
            }
        }

        let mut arrays = Vec::new();
        if !job.arrays.is_empty() {
            let dir = out.subdir("arrays")?;
            for (name, array) in &job.arrays {
                // One copy out of shared memory serves both the file and its hash.
                let bytes = array.to_bytes()?;
                let mut file = dir
                    .create_file(&format!("{name}.npy"), Existing::Replace)
                    .map_err(|e| naming(e.into(), "array"))?;
                io::Write::write_all(&mut file, &array.npy_header()?)?;
                io::Write::write_all(&mut file, &bytes)?;
                arrays.push(ArrayRecord {
                    name: name.clone(),
                    dtype: array.dtype().to_string(),
                    shape: array.shape().to_vec(),
                    sha256: sha256_hex(&bytes),
                });
            }
        }

        let mut records = Vec::new();
        for (i, attempt) in attempts.iter().enumerate() {
            let mut artifacts = Vec::new();
            let produced = attempt.outcome.artifacts();
            if !produced.is_empty() {
                let what = format!("attempt {} artifact", i + 1);
                let dir = out
                    .subdir(&format!("attempt-{}", i + 1))
                    .map_err(|e| naming(e.into(), &what))?;
                // The names are the job's: all are checked before the first is written.
                dir.write_artifacts(produced)
                    .map_err(|e| naming(e.into(), &what))?;
            }
            for a in produced {
                artifacts.push(ArtifactRecord {
                    name: a.name.clone(),
                    media_type: a.media_type.clone(),
                    bytes: a.bytes.len() as u64,
                    sha256: sha256_hex(&a.bytes),
                    obtained: a.obtained,
                    requested: a.requested.clone(),
                });
            }
            records.push(AttemptRecord {
                code: String::from_utf8_lossy(&attempt.code).into_owned(),
                status: attempt.outcome.status().to_string(),
                outcome: serde_json::to_value(Report::from_outcome(&attempt.outcome, false))
                    .map_err(io::Error::other)?,
                artifacts,
            });
        }
        let record = RunRecord {
            version: RECORD_VERSION,
            id,
            created_unix_ms: now.as_millis() as u64,
            task: job.task.clone(),
            policy_hash: policy.hash(),
            policy,
            timeout_ms: timeout.as_millis() as u64,
            memory_bytes,
            out_name: job.out_name.clone(),
            expected: job.expected.clone(),
            blank_check: job.blank_check,
            figures_in_memory: job.figures_in_memory,
            tenant: job.tenant.as_deref().map(str::to_string),
            png_encoder,
            validators: job.validators.iter().map(|v| v.id()).collect(),
            expectations: job.expectations.clone(),
            inputs,
            arrays,
            attempts: records,
        };
        let json = serde_json::to_vec_pretty(&record).map_err(io::Error::other)?;
        out.write_new("record.json", &json)?;
        drop(out);
        let target = self.dir.join(name);
        // rename(2) of a directory is atomic: readers see no record or a whole one.
        fs::rename(staging.keep(), &target)?;
        Ok(target)
    }
}

/// What a record keeps of the executor that ran the job.
struct RunSettings {
    policy: Policy,
    png_encoder: PngEncoder,
    timeout: std::time::Duration,
    memory_bytes: u64,
}

/// The run directories under `dir`, oldest first: their names start with the UTC time of
/// the run to the millisecond, so name order is time order (runs made in the same
/// millisecond: either order). Hidden directories (records being written) and
/// anything without a `record.json` are left out.
pub fn run_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut runs: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.join("record.json").is_file())
        .collect();
    runs.sort();
    Ok(runs)
}

/// `e`, saying what was being written.
fn naming(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Reads `record.json` from a run directory.
pub fn load(run_dir: &Path) -> io::Result<RunRecord> {
    let bytes = fs::read(run_dir.join("record.json"))?;
    serde_json::from_slice(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Why a recorded run cannot be replayed.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum ReplayError {
    /// The record is missing or malformed.
    #[error("cannot read the record: {0}")]
    Record(#[from] io::Error),
    /// An input is missing or its contents changed since the run.
    #[error("input {name} changed since the run ({why})")]
    InputChanged {
        /// The input's name.
        name: String,
        /// What differs.
        why: String,
    },
}

/// Rebuilds the job of a record's attempt `index` from its verified inputs.
pub fn replay_job(run_dir: &Path, record: &RunRecord, index: usize) -> Result<Job, ReplayError> {
    let attempt = &record.attempts[index];
    let mut job = Job::new(attempt.code.clone().into_bytes())
        .out_name(record.out_name.clone())
        .seed(attempt.seed());
    if let Some(expectations) = &record.expectations {
        // A record is a file that may have been edited: its declaration is read again
        // as any door reads one.
        let checked = crate::validate::Expectations::from_json(&expectations.to_json())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        job = job.expect(&checked);
    }
    job.expected = record.expected.clone();
    job.blank_check = record.blank_check;
    job.figures_in_memory = record.figures_in_memory;
    job.tenant = record.tenant.as_deref().map(std::sync::Arc::from);
    job.timeout = Some(std::time::Duration::from_millis(record.timeout_ms));
    job.memory_bytes = Some(record.memory_bytes);
    for input in &record.inputs {
        let changed = |why: String| ReplayError::InputChanged {
            name: input.name.clone(),
            why,
        };
        // The names in a record are the job's: one that is not a plain relative path
        // (an old or edited record) is refused, never joined to a path and read.
        check_relative_path(&input.name).map_err(|e| changed(e.to_string()))?;
        let path = match &input.origin {
            InputOrigin::Dir { dir } => Path::new(dir).join(&input.name),
            InputOrigin::Stored => run_dir.join("inputs").join(&input.name),
        };
        let bytes = fs::read(&path).map_err(|e| changed(e.to_string()))?;
        let hash = sha256_hex(&bytes);
        if hash != input.sha256 {
            return Err(changed(format!("sha256 {hash}, recorded {}", input.sha256)));
        }
        // Staged from the verified bytes, never re-read from the directory.
        job = job.src_bytes(input.name.clone(), bytes);
    }
    for array in &record.arrays {
        let changed = |why: String| ReplayError::InputChanged {
            name: format!("array {}", array.name),
            why,
        };
        let file = format!("{}.npy", array.name);
        check_file_name(&file).map_err(|e| changed(e.to_string()))?;
        let npy =
            fs::read(run_dir.join("arrays").join(file)).map_err(|e| changed(e.to_string()))?;
        let shared = SharedArray::from_npy(&npy).map_err(|e| changed(e.to_string()))?;
        let hash = sha256_hex(&shared.to_bytes().map_err(|e| changed(e.to_string()))?);
        if hash != array.sha256 || shared.dtype() != array.dtype || shared.shape() != array.shape {
            return Err(changed(format!("sha256 {hash}, recorded {}", array.sha256)));
        }
        job = job.with_shared_array(array.name.clone(), &shared);
    }
    Ok(job)
}

/// How a replayed artifact compares with the recorded one.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ArtifactMatch {
    /// The same bytes (sha256).
    Identical,
    /// Other bytes under the same name.
    Different,
    /// Recorded, not produced this time.
    Missing,
    /// Produced this time, not in the record.
    New,
}

/// One artifact of a replayed attempt.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplayedArtifact {
    /// File name.
    pub name: String,
    /// The recorded sha256 (`None` for a new artifact).
    pub recorded_sha256: Option<String>,
    /// How the code made it this time (`None`: missing, or not said).
    pub obtained: Option<crate::Obtained>,
    /// The comparison.
    pub verdict: ArtifactMatch,
}

/// One attempt run again.
#[derive(Serialize, Debug, Clone)]
#[non_exhaustive]
pub struct ReplayedAttempt {
    /// Its status now (`ok` or the failure's status word).
    pub status: String,
    /// Its recorded status.
    pub recorded_status: String,
    /// Every recorded artifact, then every new one.
    pub artifacts: Vec<ReplayedArtifact>,
}

/// A recorded run run again, attempt by attempt.
#[derive(Serialize, Debug, Clone)]
#[non_exhaustive]
pub struct Replay {
    /// The attempts, in recorded order.
    pub attempts: Vec<ReplayedAttempt>,
}

impl Replay {
    /// Every attempt has its recorded status and every artifact its recorded bytes.
    pub fn identical(&self) -> bool {
        self.attempts.iter().all(|a| {
            a.status == a.recorded_status
                && a.artifacts
                    .iter()
                    .all(|x| x.verdict == ArtifactMatch::Identical)
        })
    }
}

/// Why a replay could not finish.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum ReplayRunError {
    /// The record cannot be read, or an input changed: nothing ran.
    #[error(transparent)]
    Refused(#[from] ReplayError),
    /// The executor could not start or run an attempt.
    #[error("attempt {attempt}: {error}")]
    Executor {
        /// 1-based attempt number (0: the pool did not start).
        attempt: usize,
        /// What went wrong.
        error: crate::Error,
    },
}

/// Runs every attempt of the run in `run_dir` again, on a pool set up as the record
/// says (policy, PNG encoder, memory and time limits), with the recorded seeds and
/// verified inputs, and compares statuses and artifact bytes.
pub fn replay(run_dir: &Path) -> Result<Replay, ReplayRunError> {
    replay_with(run_dir, |executor, job| executor.run(job))
}

/// [`replay`] with each attempt run by `run` on the replay's pool (a caller's own way of
/// running jobs, such as a service every job of a program goes through) instead of
/// [`Executor::run`].
pub fn replay_with(
    run_dir: &Path,
    run: impl FnMut(&Executor, Job) -> crate::Result<Outcome>,
) -> Result<Replay, ReplayRunError> {
    let record = load(run_dir).map_err(ReplayError::from)?;
    let executor = Executor::builder()
        .workers(1)
        .policy(record.policy.clone())
        .png_encoder(record.png_encoder)
        .memory_limit(record.memory_bytes)
        .timeout(std::time::Duration::from_millis(record.timeout_ms))
        .build()
        .map_err(|error| ReplayRunError::Executor { attempt: 0, error })?;
    replay_on_with(&executor, run_dir, &record, run)
}

/// Whether `executor` can replay `record` faithfully: the same gate policy and PNG
/// encoder (each attempt carries its own limits and seed).
pub fn replayable_on(executor: &Executor, record: &RunRecord) -> bool {
    executor.policy().hash() == record.policy_hash && executor.png_encoder() == record.png_encoder
}

/// [`replay`] on a pool that is already running (see [`replayable_on`]), such as a
/// server's: no pool is started for it.
pub fn replay_on(
    executor: &Executor,
    run_dir: &Path,
    record: &RunRecord,
) -> Result<Replay, ReplayRunError> {
    replay_on_with(executor, run_dir, record, |executor, job| executor.run(job))
}

/// [`replay_on`] with each attempt run by `run` (see [`replay_with`]).
pub fn replay_on_with(
    executor: &Executor,
    run_dir: &Path,
    record: &RunRecord,
    mut run: impl FnMut(&Executor, Job) -> crate::Result<Outcome>,
) -> Result<Replay, ReplayRunError> {
    let jobs = (0..record.attempts.len())
        .map(|i| replay_job(run_dir, record, i))
        .collect::<Result<Vec<Job>, _>>()?;
    let mut attempts = Vec::with_capacity(jobs.len());
    for (i, (job, recorded)) in jobs.into_iter().zip(&record.attempts).enumerate() {
        let outcome = run(executor, job).map_err(|error| ReplayRunError::Executor {
            attempt: i + 1,
            error,
        })?;
        let mut artifacts: Vec<ReplayedArtifact> = recorded
            .artifacts
            .iter()
            .map(|want| ReplayedArtifact {
                name: want.name.clone(),
                recorded_sha256: Some(want.sha256.clone()),
                obtained: outcome.artifact(&want.name).and_then(|a| a.obtained),
                verdict: match outcome.artifact(&want.name) {
                    Some(a) if sha256_hex(&a.bytes) == want.sha256 => ArtifactMatch::Identical,
                    Some(_) => ArtifactMatch::Different,
                    None => ArtifactMatch::Missing,
                },
            })
            .collect();
        artifacts.extend(
            outcome
                .artifacts()
                .iter()
                .filter(|a| !recorded.artifacts.iter().any(|r| r.name == a.name))
                .map(|a| ReplayedArtifact {
                    name: a.name.clone(),
                    recorded_sha256: None,
                    obtained: a.obtained,
                    verdict: ArtifactMatch::New,
                }),
        );
        attempts.push(ReplayedAttempt {
            status: outcome.status().to_string(),
            recorded_status: recorded.status.clone(),
            artifacts,
        });
    }
    Ok(Replay { attempts })
}

/// `YYYYMMDDTHHMMSSZ` for Unix seconds (civil-from-days, proleptic Gregorian): the
/// time part of run record names.
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::outcome::{Artifact, JobFailure, Outcome, Timings};

    fn settings() -> RunSettings {
        RunSettings {
            policy: Policy::default(),
            png_encoder: PngEncoder::Host,
            timeout: std::time::Duration::from_secs(1),
            memory_bytes: 1 << 30,
        }
    }

    /// An attempt whose (job-chosen) artifacts have these names.
    fn attempt_with(names: &[&str]) -> Attempt {
        let mut outcome = Outcome::not_run(JobFailure::Cancelled, Timings::default(), 7, true);
        outcome.result = Ok(names
            .iter()
            .map(|name| Artifact {
                name: name.to_string(),
                media_type: "image/png".into(),
                bytes: b"canary-bytes".to_vec(),
                figure: None,
                obtained: None,
                requested: None,
            })
            .collect());
        Attempt {
            code: b"plt.savefig(OUT)".to_vec(),
            outcome,
        }
    }

    /// Every file and directory under `dir`, relative to it, sorted.
    fn tree(dir: &Path) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for e in fs::read_dir(dir).unwrap() {
                let path = e.unwrap().path();
                out.push(path.strip_prefix(root).unwrap().display().to_string());
                if path.is_dir() && !path.is_symlink() {
                    walk(root, &path, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(dir, dir, &mut out);
        out.sort();
        out
    }

    #[test]
    fn an_artifact_named_outside_fails_the_record_and_writes_nothing_outside() {
        // The records directory sits five levels down a temporary directory, so even a
        // wrong write of `../../../canary.png` lands inside it, where it is seen.
        let root = tempfile::tempdir().unwrap();
        let runs = root.path().join("1/2/3/4/runs");
        let recorder = Recorder::new(&runs);
        let absolute = root.path().join("abs-canary.png").display().to_string();
        for bad in [
            vec!["../../../canary.png"],
            vec!["figure.png", "../../../canary.png"],
            vec![absolute.as_str()],
            vec!["attempt-2/../../canary.png"],
            vec![".."],
        ] {
            let err = recorder
                .write(settings(), &Job::new("x = 1"), &[attempt_with(&bad)])
                .unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad:?}: {err}");
            let text = err.to_string();
            assert!(
                text.starts_with("attempt 1 artifact: refused name"),
                "{bad:?}: {text}"
            );
            assert_eq!(
                tree(root.path()),
                ["1", "1/2", "1/2/3", "1/2/3/4", "1/2/3/4/runs"]
            );
        }
        assert!(!root.path().join("1/2/3/canary.png").exists());
        assert!(!Path::new(&absolute).exists());
    }

    #[test]
    fn inputs_and_arrays_named_outside_fail_the_record_and_write_nothing_outside() {
        let root = tempfile::tempdir().unwrap();
        let runs = root.path().join("1/2/3/4/runs");
        let recorder = Recorder::new(&runs);
        let absolute = root.path().join("abs-canary.csv").display().to_string();
        for name in [
            "../../../canary.csv",
            absolute.as_str(),
            "sub/../../canary.csv",
        ] {
            let job = Job::new("x = 1").src_bytes(name, b"a\n".to_vec());
            let err = recorder.write(settings(), &job, &[]).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{name}: {err}");
        }
        let array = crate::ndarray::arr1(&[1.0f64, 2.0]);
        let job = Job::new("x = 1").with_array("../../../canary", &array);
        let err = recorder.write(settings(), &job, &[]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert_eq!(
            tree(root.path()),
            ["1", "1/2", "1/2/3", "1/2/3/4", "1/2/3/4/runs"]
        );
    }

    #[test]
    fn plain_names_are_recorded_as_before() {
        let root = tempfile::tempdir().unwrap();
        let recorder = Recorder::new(root.path().join("runs"));
        let array = crate::ndarray::arr1(&[1.0f64, 2.0]);
        let job = Job::new("x = 1")
            .src_bytes("sub/data.csv", b"a\n1\n".to_vec())
            .with_array("weights", &array);
        let run = recorder
            .write(
                settings(),
                &job,
                &[
                    attempt_with(&[]),
                    attempt_with(&["figure.png", "table.csv"]),
                ],
            )
            .unwrap();
        let inside: Vec<String> = tree(&run);
        assert_eq!(
            inside,
            [
                "arrays",
                "arrays/weights.npy",
                "attempt-2",
                "attempt-2/figure.png",
                "attempt-2/table.csv",
                "inputs",
                "inputs/sub",
                "inputs/sub/data.csv",
                "record.json",
            ]
        );
        assert_eq!(
            fs::read(run.join("inputs/sub/data.csv")).unwrap(),
            b"a\n1\n"
        );
        assert_eq!(
            fs::read(run.join("attempt-2/figure.png")).unwrap(),
            b"canary-bytes"
        );
        let record = load(&run).unwrap();
        assert_eq!(record.attempts[1].artifacts.len(), 2);
        assert_eq!(run_dirs(&root.path().join("runs")).unwrap(), [run]);
    }

    #[test]
    fn replay_refuses_a_recorded_name_that_climbs_out() {
        let root = tempfile::tempdir().unwrap();
        // What a climbing name would reach from runs/<run>/inputs/: it must not be read.
        fs::write(root.path().join("secret.csv"), b"secret").unwrap();
        let recorder = Recorder::new(root.path().join("runs"));
        let job = Job::new("x = 1").src_bytes("data.csv", b"a\n".to_vec());
        let run = recorder
            .write(settings(), &job, &[attempt_with(&[])])
            .unwrap();
        let mut record = load(&run).unwrap();
        assert!(replay_job(&run, &record, 0).is_ok());
        for name in ["../../secret.csv", "/etc/hostname", "a//b"] {
            record.inputs[0].name = name.into();
            record.inputs[0].sha256 = sha256_hex(b"secret");
            match replay_job(&run, &record, 0) {
                Err(ReplayError::InputChanged { why, .. }) => {
                    // Refused by name, not read and found to differ.
                    assert!(why.starts_with("the "), "{name}: {why}");
                    assert!(!why.contains("sha256"), "{name}: {why}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_796_083_200), "20261201T000000Z");
        assert_eq!(utc_stamp(951_782_400 + 3661), "20000229T010101Z");
    }
}
