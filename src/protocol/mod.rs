//! The supervisor <-> worker wire protocol: versioned, length-prefixed frames of plain data.
//!
//! Every frame is a little-endian `u32` length followed by that many bytes. A message is
//! one JSON frame; artifact bytes follow a [`WorkerMsg::Done`] as raw frames, one per
//! artifact, in the order the message lists them, so figures never pass through JSON.
//! A reader checks a frame's length against [`MAX_FRAME`] *before* allocating for it, and
//! messages only ever decode into the plain data types below: nothing here can be made to
//! execute or construct code (no pickle, no trait objects).

pub mod answer;

use std::io::{self, Read, Write};

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::figure::FigureNotes;
use crate::gate::RuntimeRules;
use crate::sandbox::{Enforcement, SandboxSpec};

/// Bumped whenever a message changes shape; a worker of another version is refused.
pub const PROTOCOL_VERSION: u32 = 9;

/// Largest frame either side accepts (a message or one artifact), in bytes.
pub const MAX_FRAME: usize = 256 * 1024 * 1024;

pub use crate::python_env::PythonEnv;

/// The worker's fixed directories; Landlock rules can only narrow, so they never change.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct WorkerDirs {
    /// Read-only inputs of the current job (`SRC`).
    pub src: String,
    /// Where the job writes its artifacts (`OUT` lives here).
    pub out: String,
    /// The job's working directory and scratch space.
    pub tmp: String,
    /// The worker's private `HOME` (empty: leave it as the process environment says).
    #[serde(default)]
    pub home: String,
}

/// Messages from the supervisor to a worker.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostMsg {
    /// First message: everything the worker needs to initialise and warm up.
    Init(Box<InitMsg>),
    /// Execute one job; its inputs are already staged in `src/`.
    Run(RunMsg),
    /// Finish the current loop iteration and exit.
    Shutdown,
}

/// Contents of [`HostMsg::Init`].
#[derive(Serialize, Deserialize, Debug)]
pub struct InitMsg {
    /// Must equal [`PROTOCOL_VERSION`].
    pub version: u32,
    /// Interpreter configuration.
    pub python: PythonEnv,
    /// Import allowlist and builtins the worker enforces at run time.
    pub rules: RuntimeRules,
    /// The worker's directories.
    pub dirs: WorkerDirs,
    /// Kernel confinement to apply after warm-up.
    pub sandbox: SandboxSpec,
    /// Preload pandas during warm-up (costs warm-up time, saves it in the first job).
    pub preload_pandas: bool,
    /// Install the render-once savefig (see `python/render_once.py`).
    pub render_once: bool,
    /// Measure common text sizes and font tables at warm-up and freeze them (see
    /// `python/text_metrics.py`).
    #[serde(default)]
    pub text_metrics: bool,
    /// A worker for one job only (`ExecutorBuilder::for_one_job`): its warm-up renders
    /// no figure and freezes nothing (no fork follows); the job fills what it needs.
    #[serde(default)]
    pub one_shot: bool,
    /// Import scipy's `loadmat` during warm-up (off only for a one-shot job whose code
    /// does not name it: it is then not in the job's globals).
    #[serde(default = "yes")]
    pub preload_loadmat: bool,
    /// Become a zygote: warm up, report [`WorkerMsg::Ready`] without arming the audit
    /// hook or applying the sandbox, then serve [`ZygoteRequest`]s on the protocol
    /// socket (see `supervisor::zygote`).
    #[serde(default)]
    pub zygote: bool,
    /// A forked worker renders one small figure before `Ready`, so that its first job
    /// does not pay for what the fork undid (matplotlib drops its font cache in a forked
    /// child) or for the copy-on-write faults of a first render. On for
    /// `Isolation::Fresh`, where every job is some worker's first.
    #[serde(default)]
    pub prewarm: bool,
    /// Tests only: Python run during warm-up just before render-once is installed (see
    /// `ExecutorBuilder::warm_up_code_for_testing`).
    #[serde(default)]
    pub warm_up_code: Option<String>,
    /// Tests only: no between-job state guard (see
    /// `ExecutorBuilder::without_state_guard_for_testing`).
    #[serde(default)]
    pub no_state_guard: bool,
    /// The worker serves one job and is killed (`Isolation::Fresh`): it skips the
    /// between-job work (state guard, emptying its scratch) that only a next job needs.
    #[serde(default)]
    pub single_job: bool,
}

fn yes() -> bool {
    true
}

/// Requests from the supervisor to a zygote, one frame each on its control socket.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ZygoteRequest {
    /// Fork a new worker. The frame carries three descriptors (SCM_RIGHTS): the new
    /// worker's protocol input, protocol output and stderr. The child then expects a
    /// [`HostMsg::Init`] for its slot on the protocol input, like a cold worker.
    Fork,
    /// Report how a forked worker ended, waiting up to `timeout_ms` for it to end.
    Wait {
        /// The worker's process id.
        pid: i32,
        /// How long to wait for it, in milliseconds (0: just look).
        timeout_ms: u64,
    },
}

/// Answers of a zygote, one frame per request.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ZygoteReply {
    /// The child's pid; it leads its own process group.
    Forked {
        /// Process id (and process group id) of the new worker.
        pid: i32,
    },
    /// Nothing was forked.
    ForkFailed {
        /// Why, for a person.
        message: String,
    },
    /// The raw wait status (`waitpid(2)`) of a finished worker, `None` while it runs or
    /// when it is not a child of this zygote.
    Status {
        /// Raw wait status.
        raw: Option<i32>,
    },
}

/// A per-job secret the host draws from the kernel's random source for each run frame.
/// The worker's Rust loop takes it before the job starts and echoes it in the job's
/// [`WorkerMsg::Done`] and [`WorkerMsg::Reset`]; it is never placed in a Python object
/// or the environment, so job code that reaches the worker's descriptors cannot answer
/// for itself (an early `Done` to be handed the next job) or for another job.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(transparent)]
pub struct Nonce(pub [u64; 2]);

impl Nonce {
    /// 128 bits from the kernel's random source (`getrandom(2)`).
    pub fn random() -> std::io::Result<Nonce> {
        let mut bytes = [0u8; 16];
        crate::sys::fill_random(&mut bytes)?;
        let (a, b) = bytes.split_at(8);
        let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8 bytes"));
        Ok(Nonce([word(a), word(b)]))
    }
}

impl std::fmt::Debug for Nonce {
    // A secret: debug output (logs, panics) never shows it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Nonce(..)")
    }
}

/// Contents of [`HostMsg::Run`].
#[derive(Serialize, Deserialize, Debug)]
pub struct RunMsg {
    /// Echoed in the answer and the reset; the supervisor refuses any other value.
    pub nonce: Nonce,
    /// Gate-approved source.
    pub code: String,
    /// Seed for numpy's and `random`'s global generators.
    pub seed: u64,
    /// File name of `OUT` inside `out/`.
    pub out_name: String,
    /// Bytes of stdout kept; the rest is counted and dropped.
    pub stdout_cap: usize,
    /// Largest number of files collected from `out/`.
    pub max_artifacts: usize,
    /// Largest size of one artifact, in bytes.
    pub max_artifact_bytes: u64,
    /// Render figures saved into `out/` to memory (see `Job::figures_in_memory`).
    #[serde(default)]
    pub figures_in_memory: bool,
    /// Shared arrays for the job's globals; their descriptors come with this frame,
    /// in this order (see `SharedArray`).
    #[serde(default)]
    pub arrays: Vec<ArrayMeta>,
    /// Summarize every figure the job saves (see `crate::figure`).
    #[serde(default = "yes")]
    pub describe_figures: bool,
    /// Above 0: PNGs saved into `out/` come back as RGBA pixels ([`RawPng`]) for the
    /// host to encode, when their buffer is at most this many bytes.
    #[serde(default)]
    pub raw_png_limit: u64,
}

/// One shared array of a job: the name it gets in the job's globals and its layout.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ArrayMeta {
    /// Global name in the job.
    pub name: String,
    /// numpy dtype string, e.g. `<f8`.
    pub dtype: String,
    /// Shape, C order.
    pub shape: Vec<usize>,
    /// Size of the data in bytes.
    pub nbytes: u64,
}

/// Messages from a worker to the supervisor.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkerMsg {
    /// Warm-up finished; the worker waits for jobs.
    Ready(ReadyMsg),
    /// Warm-up failed (a package is missing, the sandbox could not be installed, ...).
    InitFailed {
        /// Which step failed.
        stage: InitStage,
        /// What went wrong, for a person.
        message: String,
    },
    /// A job finished; `artifacts.len()` raw frames follow.
    Done(Box<DoneMsg>),
    /// The between-job reset after a [`WorkerMsg::Done`] finished (a worker that serves
    /// one job sends none). It runs after the answer, so the host encodes and checks
    /// the job's figures meanwhile; the host gives the worker no job before it.
    Reset(ResetMsg),
}

/// Contents of [`WorkerMsg::Reset`]. Any entry retires the worker; the job's own result
/// stands.
#[derive(Serialize, Deserialize, Debug, Default)]
pub struct ResetMsg {
    /// The nonce of the run this reset followed.
    pub nonce: Nonce,
    /// Between-job steps that failed (restoring rcParams, emptying the scratch, ...).
    pub housekeeping_failures: Vec<String>,
    /// Process-wide state the job changed that could not be restored exactly (the
    /// state guard).
    pub state_changes: Vec<String>,
}

/// The step of worker start-up that failed.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InitStage {
    /// The init message was malformed or of another protocol version.
    Protocol,
    /// The interpreter did not initialise.
    Interpreter,
    /// A required package failed to import.
    Import,
    /// The warm-up figure failed.
    Warmup,
    /// The kernel sandbox could not be installed as required.
    Sandbox,
}

/// Contents of [`WorkerMsg::Ready`].
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct ReadyMsg {
    /// Must equal [`PROTOCOL_VERSION`].
    pub version: u32,
    /// Time from process start to ready, in milliseconds.
    pub warmup_ms: f64,
    /// Versions of the interpreter and the preloaded packages.
    pub versions: Versions,
    /// What the kernel really enforces in this worker.
    pub sandbox: Enforcement,
    /// Whether render-once is active (requested, and its upstream assumptions held).
    pub render_once: bool,
    /// Why render-once is off when it was requested (its self-check failed), if so.
    #[serde(default)]
    pub render_once_off: Option<String>,
    /// How many text sizes warm-up froze (0: frozen text metrics are off).
    #[serde(default)]
    pub text_metrics: u32,
    /// Why frozen text metrics are off when they were requested (a check of what they
    /// assume of matplotlib failed), if so.
    #[serde(default)]
    pub text_metrics_off: Option<String>,
}

/// Versions reported by a worker.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct Versions {
    /// `sys.version` (first word).
    pub python: String,
    /// `numpy.__version__`.
    pub numpy: String,
    /// `matplotlib.__version__`.
    pub matplotlib: String,
}

/// Contents of [`WorkerMsg::Done`].
#[derive(Serialize, Deserialize, Debug)]
pub struct DoneMsg {
    /// The nonce of the run this answers.
    pub nonce: Nonce,
    /// Time spent executing the job's code, in milliseconds.
    pub exec_ms: f64,
    /// Captured stdout, at most `stdout_cap` bytes.
    pub stdout: String,
    /// Bytes of stdout dropped past the cap.
    pub stdout_dropped: u64,
    /// Python-level stderr (warnings, logging's default handler), its first
    /// [`JOB_STDERR_CAP`](crate::outcome::JOB_STDERR_CAP) bytes.
    pub stderr: String,
    /// `None` when the code ran to the end.
    pub error: Option<PyErrorInfo>,
    /// Artifacts found in `out/`; their bytes follow as raw frames.
    pub artifacts: Vec<ArtifactMeta>,
    /// Files in `out/` that were not collected (over the count or size caps).
    pub artifacts_refused: Vec<String>,
    /// What went wrong in the worker around this job before it answered (its answer
    /// could not be read in full, the prelude itself failed). Any entry retires the
    /// worker; the job's own result stands.
    #[serde(default)]
    pub housekeeping_failures: Vec<String>,
    /// The scratch file system limit the job used up, if any.
    #[serde(default)]
    pub scratch_exhausted: Option<crate::sandbox::ScratchLimit>,
    /// What the job did with its figures: saves (with summaries), `show()`, unsaved.
    #[serde(default)]
    pub figures: FigureNotes,
    /// How each file the job wrote came to be, by artifact name.
    #[serde(default)]
    pub files: Vec<FileOrigin>,
    /// The artifact bound the job hit, if it hit one.
    #[serde(default)]
    pub bound: Option<ArtifactBound>,
}

/// How the job made one file of `out/` (see [`crate::Obtained`]).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct FileOrigin {
    /// The artifact's name.
    pub name: String,
    /// Saved, shown, left open, written.
    pub how: Obtained,
    /// The path the code asked for, when it was not a plain name.
    #[serde(default)]
    pub requested: Option<String>,
}

/// A bound on what a job returns.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactBound {
    /// Most artifacts per job (`ExecutorBuilder::max_artifacts`).
    MaxArtifacts,
    /// Largest artifact (`ExecutorBuilder::max_artifact_bytes`).
    MaxArtifactBytes,
}

impl ArtifactBound {
    /// The setting's name, as the failure names it.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactBound::MaxArtifacts => "max_artifacts",
            ArtifactBound::MaxArtifactBytes => "max_artifact_bytes",
        }
    }
}

impl DoneMsg {
    /// The answer to the run of `nonce` before anything is known of it: no time, no
    /// output, no error, no artifacts.
    pub fn new(nonce: Nonce) -> DoneMsg {
        DoneMsg {
            nonce,
            exec_ms: 0.0,
            stdout: String::new(),
            stdout_dropped: 0,
            stderr: String::new(),
            error: None,
            artifacts: Vec::new(),
            artifacts_refused: Vec::new(),
            housekeeping_failures: Vec::new(),
            scratch_exhausted: None,
            figures: Default::default(),
            files: Vec::new(),
            bound: None,
        }
    }
}

/// An exception raised by job code, reduced to what a model needs to fix it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PyErrorInfo {
    /// Exception type name, e.g. `KeyError`.
    pub type_name: String,
    /// `str(exception)`, truncated.
    pub message: String,
    /// Line in the job's code where it was raised (innermost user frame).
    pub line: Option<u32>,
    /// Traceback limited to frames of the job's own code.
    pub traceback: String,
    /// What exists and what to write instead, computed from the live exception
    /// (`python/diagnose/`); empty when there is nothing to add.
    #[serde(default)]
    pub hint: String,
}

/// Name and size of one artifact whose bytes follow as a raw frame.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct ArtifactMeta {
    /// File name inside `out/`.
    pub name: String,
    /// Exact size of the raw frame that carries it.
    pub len: u64,
    /// Set when the frame holds a PNG's RGBA pixels for the host to encode.
    #[serde(default)]
    pub raw: Option<RawPng>,
}

/// A PNG figure the worker rendered but did not encode: what the encoder needs besides
/// the RGBA pixels (rows top to bottom, 4 bytes a pixel).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct RawPng {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The figure's dpi (written as the pHYs chunk, as Pillow writes it).
    pub dpi: f64,
    /// Text chunks in order: matplotlib's `Software` and any metadata the job gave.
    pub text: Vec<(String, String)>,
}

/// Writes one frame.
pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&l| l as usize <= MAX_FRAME)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(payload)?;
    Ok(())
}

/// Reads one frame, refusing lengths over `max` before allocating.
/// `Ok(None)` is a clean end of stream at a frame boundary.
pub fn read_frame(r: &mut impl Read, max: usize) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes exceeds the limit of {max}"),
        ));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    Ok(Some(buf))
}

/// Serialises a message into one frame.
pub fn send<T: Serialize>(w: &mut impl Write, msg: &T) -> io::Result<()> {
    let bytes = serde_json::to_vec(msg).map_err(io::Error::other)?;
    write_frame(w, &bytes)?;
    w.flush()
}

/// A message as the bytes of one whole frame (length prefix included), for senders
/// that attach descriptors to it (see `fdpass`).
pub fn encode_frame<T: Serialize>(msg: &T) -> io::Result<Vec<u8>> {
    let mut frame = Vec::new();
    write_frame(
        &mut frame,
        &serde_json::to_vec(msg).map_err(io::Error::other)?,
    )?;
    Ok(frame)
}

/// Decodes a message frame.
pub fn decode<T: DeserializeOwned>(frame: &[u8]) -> io::Result<T> {
    serde_json::from_slice(frame).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Reads and decodes one message; `Ok(None)` at a clean end of stream.
pub fn recv<T: DeserializeOwned>(r: &mut impl Read) -> io::Result<Option<T>> {
    match read_frame(r, MAX_FRAME)? {
        Some(frame) => decode(&frame).map(Some),
        None => Ok(None),
    }
}

/// How a job made one of its artifacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Obtained {
    /// `savefig` to a path (`plt.savefig("novice.png")`, `fig.savefig(OUT)`).
    Saved,
    /// A figure open when the code called `plt.show()`.
    Shown,
    /// A drawn figure left open by a job that saved none itself (drawn after its last
    /// `plt.show()`, or without one).
    OpenAtEnd,
    /// Any other file the code wrote (`df.to_csv`, `open(..., "w")`, `np.save`).
    Written,
}

impl Obtained {
    /// Stable word for JSON and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Obtained::Saved => "saved",
            Obtained::Shown => "shown",
            Obtained::OpenAtEnd => "open_at_end",
            Obtained::Written => "written",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_round_trip() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"hello").unwrap();
        let got = read_frame(&mut buf.as_slice(), 16).unwrap().unwrap();
        assert_eq!(got, b"hello");
    }

    #[test]
    fn oversized_length_is_refused_before_allocation() {
        let mut buf = Vec::new();
        buf.extend_from_slice(&u32::MAX.to_le_bytes());
        let err = read_frame(&mut buf.as_slice(), MAX_FRAME).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn truncated_frame_is_an_error_not_a_clean_end() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"hello").unwrap();
        buf.truncate(6);
        assert!(read_frame(&mut buf.as_slice(), 16).is_err());
        assert!(read_frame(&mut [].as_slice(), 16).unwrap().is_none());
    }

    #[test]
    fn unknown_message_kind_is_invalid_data() {
        let err = decode::<HostMsg>(br#"{"kind":"exec_pickle","x":1}"#).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }
}
