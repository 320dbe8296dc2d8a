//! A worker's answer, read as hostile input.
//!
//! The worker runs the job's code, so once that code reaches the worker's descriptors
//! every byte it sends was chosen by the job. The host therefore reads an answer the way
//! a server reads a request: each frame's length is checked against what this run may
//! send before a byte is allocated for it ([`FrameSource`]); a [`DoneMsg`] is checked
//! whole ([`check_done`]: the run's nonce, every number finite and in range, every name
//! one plain file name, the artifacts' count and sizes within the run's limits) before
//! any artifact frame is read; and each artifact frame must be exactly as long as the
//! checked message announced. Whatever fails is an [`AnswerError::Violation`]: the
//! supervisor kills that worker and the job answers a protocol violation. Nothing here
//! panics on any input (`fuzz/fuzz_targets/answer.rs` drives [`read_answer`]).

use std::time::Instant;

use super::{DoneMsg, Nonce, ResetMsg, WorkerMsg};
use crate::encode;
use crate::outcome::{head_chars, Artifact, JOB_STDERR_CAP};
use crate::output_dir::{check_file_name, MAX_PATH_BYTES};

/// Largest message frame (not artifact) a worker may send besides its stdout: the
/// stderr tail, the traceback, the figure notes and the rest fit in a fraction of it.
pub const MESSAGE_OVERHEAD: usize = 8 << 20;

/// Longest time the worker may claim for a step (a job's execution, describing its
/// figures), in milliseconds: one day, far past any deadline a pool accepts.
pub const MAX_CLAIMED_MS: f64 = 86_400_000.0;

/// Most lines a worker may report in one list (refused files, housekeeping failures,
/// state changes, figure saves, figure notes' errors).
pub const MAX_LIST: usize = 4096;

/// Largest count a worker may report (dropped stdout bytes): 2^53, so that every value
/// is exact in JSON and in the `f64`s of reports.
pub const MAX_COUNT: u64 = 1 << 53;

/// Most text chunks, and the longest key or value, of a raw PNG's metadata.
const MAX_PNG_TEXT: usize = 64;
const MAX_PNG_TEXT_BYTES: usize = 64 << 10;

/// What the answer to one run may contain: set by the host from the run it sent.
#[derive(Debug, Clone)]
pub struct AnswerLimits {
    /// The run's nonce, which the answer must echo.
    pub nonce: Nonce,
    /// Bytes of stdout the run allowed.
    pub stdout_cap: usize,
    /// Most artifacts.
    pub max_artifacts: usize,
    /// Largest encoded artifact, in bytes.
    pub max_artifact_bytes: u64,
    /// Largest raw (RGBA) figure, in bytes; 0 when the run asked for none.
    pub raw_png_limit: u64,
}

impl AnswerLimits {
    /// Largest message frame this run's answer may use.
    pub fn max_message(&self) -> usize {
        MESSAGE_OVERHEAD.saturating_add(self.stdout_cap.saturating_mul(2))
    }

    /// Most artifact bytes this run's answer may carry in all: each of the most
    /// artifacts at the larger of the two per-artifact limits. The host's memory for one
    /// answer is bounded by this plus [`Self::max_message`].
    pub fn max_total_bytes(&self) -> u64 {
        (self.max_artifacts as u64).saturating_mul(self.max_artifact_bytes.max(self.raw_png_limit))
    }
}

/// Why a frame did not arrive.
#[derive(Debug)]
pub enum FrameError {
    /// The deadline passed (a frame read in part stays and is continued next time).
    Timeout,
    /// The worker closed its end or the read failed: it exited or crashed.
    Closed(String),
    /// The frame announced more bytes than allowed.
    TooLarge {
        /// What it announced.
        len: usize,
        /// What was allowed.
        max: usize,
    },
}

/// Frames from a worker, each bounded by the caller before it is allocated.
pub trait FrameSource {
    /// The next frame, refusing one longer than `max` bytes before allocating for it;
    /// waits until `deadline` at most.
    fn next_frame(&mut self, max: usize, deadline: Instant) -> Result<Vec<u8>, FrameError>;
}

/// Frames already in memory (tests and fuzzing): never times out; the end of the bytes
/// is a closed worker.
impl FrameSource for &[u8] {
    fn next_frame(&mut self, max: usize, _deadline: Instant) -> Result<Vec<u8>, FrameError> {
        let Some(head) = self.get(..4) else {
            return Err(FrameError::Closed("end of stream".into()));
        };
        let len = u32::from_le_bytes(head.try_into().expect("4 bytes")) as usize;
        if len > max {
            return Err(FrameError::TooLarge { len, max });
        }
        let Some(body) = self.get(4..4 + len) else {
            return Err(FrameError::Closed("end of stream inside a frame".into()));
        };
        let frame = body.to_vec();
        *self = &self[4 + len..];
        Ok(frame)
    }
}

/// Why an answer was not accepted.
#[derive(Debug)]
pub enum AnswerError {
    /// The worker broke the protocol: kill it; the job answers a protocol violation.
    Violation(String),
    /// The worker ended (or its pipe broke) in the middle of the answer.
    Closed(String),
    /// The artifacts did not arrive by the deadline.
    Timeout,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Timeout => f.write_str("no frame in time"),
            FrameError::Closed(why) => f.write_str(why),
            FrameError::TooLarge { len, max } => {
                write!(f, "a frame of {len} bytes where at most {max} were allowed")
            }
        }
    }
}

impl From<FrameError> for AnswerError {
    fn from(e: FrameError) -> AnswerError {
        match e {
            FrameError::Timeout => AnswerError::Timeout,
            FrameError::Closed(why) => AnswerError::Closed(why),
            too_large @ FrameError::TooLarge { .. } => {
                AnswerError::Violation(too_large.to_string())
            }
        }
    }
}

/// Decodes one message frame; a frame that is no message is a violation.
pub fn decode_message(frame: &[u8]) -> Result<WorkerMsg, String> {
    super::decode(frame)
        .map_err(|e| format!("a malformed message ({})", head_chars(&e.to_string(), 120)))
}

/// Reads a whole answer: one message, which must be a [`WorkerMsg::Done`] that passes
/// [`check_done`], then its artifacts ([`read_artifacts`]).
pub fn read_answer(
    src: &mut impl FrameSource,
    limits: &AnswerLimits,
    deadline: Instant,
) -> Result<(Box<DoneMsg>, Vec<Artifact>), AnswerError> {
    let frame = src.next_frame(limits.max_message(), deadline)?;
    accept_done(&frame, src, limits, deadline)
}

/// The rest of an answer once its first frame is in: decodes it, checks it and reads
/// its artifacts by `deadline`.
pub fn accept_done(
    frame: &[u8],
    src: &mut impl FrameSource,
    limits: &AnswerLimits,
    deadline: Instant,
) -> Result<(Box<DoneMsg>, Vec<Artifact>), AnswerError> {
    let done = match decode_message(frame).map_err(AnswerError::Violation)? {
        WorkerMsg::Done(done) => done,
        other => {
            return Err(AnswerError::Violation(format!(
                "a {} message where the job's answer was due",
                kind(&other)
            )))
        }
    };
    check_done(&done, limits).map_err(AnswerError::Violation)?;
    let artifacts = read_artifacts(src, &done, deadline)?;
    Ok((done, artifacts))
}

/// The message's kind, for a violation's text (never its contents).
pub fn kind(msg: &WorkerMsg) -> &'static str {
    match msg {
        WorkerMsg::Ready(_) => "ready",
        WorkerMsg::InitFailed { .. } => "init_failed",
        WorkerMsg::Done(_) => "done",
        WorkerMsg::Reset(_) => "reset",
    }
}

/// Checks a [`DoneMsg`] against the run it answers, before anything of it is used.
pub fn check_done(done: &DoneMsg, limits: &AnswerLimits) -> Result<(), String> {
    if done.nonce != limits.nonce {
        return Err("an answer without this run's nonce".into());
    }
    claimed_ms("exec_ms", done.exec_ms)?;
    claimed_ms("describe_ms", done.figures.describe_ms)?;
    if done.stdout.len() > limits.stdout_cap {
        return Err(format!(
            "{} bytes of stdout where the cap is {}",
            done.stdout.len(),
            limits.stdout_cap
        ));
    }
    if done.stderr.len() > JOB_STDERR_CAP {
        return Err(format!(
            "{} bytes of stderr where the cap is {JOB_STDERR_CAP}",
            done.stderr.len()
        ));
    }
    if done.stdout_dropped > MAX_COUNT {
        return Err("a dropped-stdout count out of range".into());
    }
    for (what, len) in [
        ("refused files", done.artifacts_refused.len()),
        ("housekeeping failures", done.housekeeping_failures.len()),
        ("figure saves", done.figures.saves.len()),
        ("unsaved figures", done.figures.unsaved_figures.len()),
        ("figure errors", done.figures.errors.len()),
        ("written files", done.files.len()),
    ] {
        if len > MAX_LIST {
            return Err(format!("{len} {what} (at most {MAX_LIST})"));
        }
    }
    if done.artifacts.len() > limits.max_artifacts {
        return Err(format!(
            "{} artifacts where at most {} are allowed",
            done.artifacts.len(),
            limits.max_artifacts
        ));
    }
    for name in &done.artifacts_refused {
        plain_name(name)?;
    }
    if done.files.len() > limits.max_artifacts {
        return Err(format!(
            "{} written files where at most {} are allowed",
            done.files.len(),
            limits.max_artifacts
        ));
    }
    for file in &done.files {
        plain_name(&file.name)?;
        if let Some(asked) = &file.requested {
            if asked.is_empty() || asked.len() > MAX_PATH_BYTES || asked.contains('\0') {
                return Err(format!(
                    "the path asked for {} of artifact {}",
                    quoted(asked),
                    quoted(&file.name)
                ));
            }
        }
    }
    let mut total: u64 = 0;
    for (i, meta) in done.artifacts.iter().enumerate() {
        plain_name(&meta.name)?;
        if done.artifacts[..i].iter().any(|m| m.name == meta.name) {
            return Err(format!("artifact {} listed twice", quoted(&meta.name)));
        }
        match &meta.raw {
            None if meta.len > limits.max_artifact_bytes => {
                return Err(format!(
                    "artifact {} of {} bytes where at most {} are allowed",
                    quoted(&meta.name),
                    meta.len,
                    limits.max_artifact_bytes
                ))
            }
            None => {}
            Some(raw) => {
                // At most 2^66 for two u32s: checked, never wrapped.
                let pixels = (u64::from(raw.width) * u64::from(raw.height)).checked_mul(4);
                if raw.width == 0 || raw.height == 0 || pixels != Some(meta.len) {
                    return Err(format!(
                        "raw figure {}: {} bytes for a {}x{} image",
                        quoted(&meta.name),
                        meta.len,
                        raw.width,
                        raw.height
                    ));
                }
                if meta.len > limits.raw_png_limit {
                    return Err(format!(
                        "raw figure {} of {} bytes where at most {} are allowed",
                        quoted(&meta.name),
                        meta.len,
                        limits.raw_png_limit
                    ));
                }
                if !raw.dpi.is_finite() || raw.dpi <= 0.0 || raw.dpi > 1e6 {
                    return Err(format!(
                        "raw figure {}: dpi out of range",
                        quoted(&meta.name)
                    ));
                }
                let long = |t: &String| t.len() > MAX_PNG_TEXT_BYTES;
                if raw.text.len() > MAX_PNG_TEXT || raw.text.iter().any(|(k, v)| long(k) || long(v))
                {
                    return Err(format!(
                        "raw figure {}: too much metadata",
                        quoted(&meta.name)
                    ));
                }
            }
        }
        total = total.saturating_add(meta.len);
    }
    if total > limits.max_total_bytes() {
        return Err(format!(
            "{total} artifact bytes where at most {} are allowed",
            limits.max_total_bytes()
        ));
    }
    Ok(())
}

/// Checks a [`ResetMsg`] against the run it follows.
pub fn check_reset(reset: &ResetMsg, nonce: Nonce) -> Result<(), String> {
    if reset.nonce != nonce {
        return Err("a reset without this run's nonce".into());
    }
    for (what, len) in [
        ("housekeeping failures", reset.housekeeping_failures.len()),
        ("state changes", reset.state_changes.len()),
    ] {
        if len > MAX_LIST {
            return Err(format!("{len} {what} (at most {MAX_LIST})"));
        }
    }
    Ok(())
}

/// Reads the artifact frames a checked [`DoneMsg`] announced, each exactly as long as
/// announced (so never longer than the limits it was checked against), and encodes the
/// raw figures.
pub fn read_artifacts(
    src: &mut impl FrameSource,
    done: &DoneMsg,
    deadline: Instant,
) -> Result<Vec<Artifact>, AnswerError> {
    let mut artifacts = Vec::with_capacity(done.artifacts.len());
    for meta in &done.artifacts {
        // Checked against the limits, which fit in memory; a `usize` on every target
        // pyward runs on (64-bit Linux).
        let len = usize::try_from(meta.len)
            .map_err(|_| AnswerError::Violation("an artifact length out of range".into()))?;
        let bytes = src.next_frame(len, deadline)?;
        if bytes.len() != len {
            return Err(AnswerError::Violation(format!(
                "artifact {} has {} bytes where {len} were announced",
                quoted(&meta.name),
                bytes.len()
            )));
        }
        let bytes = match &meta.raw {
            Some(raw) => encode::png(raw, &bytes).map_err(|e| {
                AnswerError::Violation(format!("raw figure {}: {e}", quoted(&meta.name)))
            })?,
            None => bytes,
        };
        artifacts.push(Artifact {
            name: meta.name.clone(),
            media_type: String::new(),
            bytes,
            figure: None,
            obtained: None,
            requested: None,
        });
    }
    for a in &mut artifacts {
        if let Some(file) = done.files.iter().find(|f| f.name == a.name) {
            a.obtained = Some(file.how);
            a.requested = file.requested.clone();
        }
    }
    Ok(artifacts)
}

/// A claimed duration: finite, not negative, at most [`MAX_CLAIMED_MS`].
fn claimed_ms(what: &str, ms: f64) -> Result<(), String> {
    if ms.is_finite() && (0.0..=MAX_CLAIMED_MS).contains(&ms) {
        Ok(())
    } else {
        Err(format!("{what} out of range"))
    }
}

fn plain_name(name: &str) -> Result<(), String> {
    check_file_name(name).map_err(|e| format!("artifact name {}: {e}", quoted(name)))
}

/// A job-chosen name inside a message: its start, escaped.
fn quoted(name: &str) -> String {
    format!("{:?}", head_chars(name, 60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{encode_frame, write_frame, ArtifactMeta, RawPng};

    fn limits() -> AnswerLimits {
        AnswerLimits {
            nonce: Nonce([7, 9]),
            stdout_cap: 100,
            max_artifacts: 2,
            max_artifact_bytes: 1000,
            raw_png_limit: 64,
        }
    }

    fn done(artifacts: Vec<ArtifactMeta>) -> DoneMsg {
        DoneMsg {
            exec_ms: 3.0,
            artifacts,
            ..DoneMsg::new(Nonce([7, 9]))
        }
    }

    fn meta(name: &str, len: u64) -> ArtifactMeta {
        ArtifactMeta {
            name: name.into(),
            len,
            raw: None,
        }
    }

    fn answer(done: DoneMsg, blobs: &[&[u8]]) -> Vec<u8> {
        let mut bytes = encode_frame(&WorkerMsg::Done(Box::new(done))).unwrap();
        for b in blobs {
            write_frame(&mut bytes, b).unwrap();
        }
        bytes
    }

    fn read(bytes: &[u8]) -> Result<(Box<DoneMsg>, Vec<Artifact>), AnswerError> {
        read_answer(&mut &bytes[..], &limits(), Instant::now())
    }

    fn violation(bytes: &[u8]) -> String {
        match read(bytes) {
            Err(AnswerError::Violation(why)) => why,
            other => panic!("expected a violation, got {other:?}"),
        }
    }

    #[test]
    fn a_proper_answer_is_read() {
        let (d, a) = read(&answer(done(vec![meta("fig.png", 3)]), &[b"abc"])).unwrap();
        assert_eq!(d.exec_ms, 3.0);
        assert_eq!(a[0].name, "fig.png");
        assert_eq!(a[0].bytes, b"abc");
    }

    #[test]
    fn names_that_are_paths_are_refused() {
        for name in [
            "/tmp/marker",
            "../../../marker.csv",
            "a/b.png",
            "..",
            "",
            "a\nb",
        ] {
            let why = violation(&answer(done(vec![meta(name, 1)]), &[b"x"]));
            assert!(why.starts_with("artifact name"), "{name:?}: {why}");
        }
        let mut d = done(Vec::new());
        d.artifacts_refused = vec!["../x".into()];
        assert!(violation(&answer(d, &[])).starts_with("artifact name"));
    }

    #[test]
    fn numbers_out_of_range_are_refused() {
        for ms in [f64::NAN, f64::INFINITY, 1e300, -1.0] {
            let mut d = done(Vec::new());
            d.exec_ms = ms;
            assert_eq!(
                check_done(&d, &limits()),
                Err("exec_ms out of range".into())
            );
            let mut d = done(Vec::new());
            d.figures.describe_ms = ms;
            assert!(check_done(&d, &limits()).is_err());
        }
        // JSON's own spelling of a huge number.
        let frame = br#"{"kind":"done","nonce":[7,9],"exec_ms":1e300,"stdout":"","stdout_dropped":0,"stderr":"","error":null,"artifacts":[],"artifacts_refused":[]}"#;
        let mut bytes = Vec::new();
        write_frame(&mut bytes, frame).unwrap();
        assert_eq!(violation(&bytes), "exec_ms out of range");
        let mut d = done(Vec::new());
        d.stdout_dropped = u64::MAX;
        assert!(check_done(&d, &limits()).is_err());
        // A job's stderr past what the worker keeps is a worker that lies.
        let mut d = done(Vec::new());
        d.stderr = "é".repeat(JOB_STDERR_CAP / 2);
        assert!(check_done(&d, &limits()).is_ok());
        d.stderr.push('x');
        assert_eq!(
            check_done(&d, &limits()),
            Err(format!(
                "{} bytes of stderr where the cap is {JOB_STDERR_CAP}",
                JOB_STDERR_CAP + 1
            ))
        );
    }

    #[test]
    fn counts_and_sizes_are_enforced_before_reading() {
        // Over the count: refused from the message alone (no frame follows).
        let d = done(vec![meta("a", 1), meta("b", 1), meta("c", 1)]);
        assert!(violation(&answer(d, &[])).contains("3 artifacts"));
        // Over the size, announced: refused before the frame is read.
        let d = done(vec![meta("a", 1001)]);
        assert!(violation(&answer(d, &[])).contains("1001 bytes"));
        // A frame longer than announced: refused by its length prefix.
        let d = done(vec![meta("a", 2)]);
        assert!(violation(&answer(d, &[b"abcdef"])).contains("6 bytes"));
        // Duplicates.
        let d = done(vec![meta("a", 1), meta("a", 1)]);
        assert!(violation(&answer(d, &[b"x", b"y"])).contains("twice"));
        // Raw figures: their size follows from their dimensions.
        let mut m = meta("r.png", 4 * 2 * 2);
        m.raw = Some(RawPng {
            width: u32::MAX,
            height: u32::MAX,
            dpi: 100.0,
            text: Vec::new(),
        });
        assert!(violation(&answer(done(vec![m]), &[])).contains("raw figure"));
    }

    #[test]
    fn foreign_nonces_and_other_messages_are_refused() {
        let mut d = done(Vec::new());
        d.nonce = Nonce([7, 8]);
        assert_eq!(
            violation(&answer(d, &[])),
            "an answer without this run's nonce"
        );
        let reset = encode_frame(&WorkerMsg::Reset(ResetMsg::default())).unwrap();
        assert!(violation(&reset).contains("a reset message"));
        let mut garbage = Vec::new();
        write_frame(&mut garbage, b"\xff{not json").unwrap();
        assert!(violation(&garbage).starts_with("a malformed message"));
        let mut huge = Vec::new();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(violation(&huge).contains("at most"));
        assert!(check_reset(&ResetMsg::default(), Nonce([7, 9])).is_err());
    }

    #[test]
    fn a_truncated_answer_is_a_closed_worker() {
        let mut bytes = answer(done(vec![meta("a", 5)]), &[b"abcde"]);
        bytes.truncate(bytes.len() - 2);
        assert!(matches!(read(&bytes), Err(AnswerError::Closed(_))));
    }
}
