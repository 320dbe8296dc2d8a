//! A hostile worker for the tests: it speaks the real supervisor <-> worker protocol
//! (`pyward::protocol`) and, for each job, sends whatever the job's code asks for, forged
//! and malformed frames included. The worker runs the job's code, so it is exactly as
//! trusted as the job: this program plays a job that took over its worker's descriptors.
//! `tests/it/hostile_worker.rs` and the CLI's `cli/tests/hostile_worker.rs` drive it
//! through the library, `pyward run`, `pyward serve` and the queue consumer.
//!
//! Built by `cargo test` as an example of the root package (never installed, never
//! shipped): `target/<profile>/examples/hostile_worker`. Started by an executor whose
//! worker program it is (`ExecutorBuilder::worker_program` or `PYWARD_WORKER`); it
//! ignores the build id and applies no sandbox (it reports none).
//!
//! The scenario is the first line of the job's code, `# scenario: NAME ARGS`:
//!
//! | scenario | what the worker sends |
//! | --- | --- |
//! | `ok [TEXT]` | a proper answer: `Done` echoing the nonce, stdout `TEXT`, one small valid PNG named `OUT`, then `Reset` |
//! | `name JSON` | a proper answer whose first artifact is named by the JSON string (`"/abs/path"`, `"../x"`, `"a\u0000b"`...) with contents that pass validation for that name, then `OUT` |
//! | `refused-name JSON` | a proper answer listing the JSON string among the refused files |
//! | `field KEY RAW` | a proper answer with the `Done` field `KEY` (`a.b` for nested) replaced by the raw JSON text `RAW` (`absent` removes it) |
//! | `stdout-over-cap` | a proper answer whose stdout is one byte over the run's cap |
//! | `too-many` | one more valid PNG than `max_artifacts` |
//! | `many-artifacts N LEN` | `Done` declaring N artifacts of LEN bytes each, then streaming them |
//! | `big-artifact LEN` | `Done` declaring one artifact of LEN bytes, then streaming a frame of LEN bytes |
//! | `lying-artifact DECLARED ACTUAL` | an artifact declared DECLARED bytes long sent in a frame of ACTUAL bytes |
//! | `message-huge LEN` | a message frame announcing LEN bytes (a `Done` with an endless stdout), streamed |
//! | `raw LEN JSON` | an artifact whose `raw` (RGBA pixels for the host to encode) is the raw JSON text, in a frame of LEN bytes |
//! | `big-error LEN` | a Python error whose message, traceback and hint are LEN bytes each |
//! | `ready-instead` | a `Ready` message where the answer is due |
//! | `frame-len-max` | a length prefix of `u32::MAX`, then silence (the pipe stays open) |
//! | `frame-garbage` | one frame of bytes that are no message |
//! | `frame-unknown-kind` | one frame of JSON with a message kind that does not exist |
//! | `truncated-close` | a frame cut short, then exit |
//! | `silent-close` | nothing: exit at once |
//! | `stale-nonce` | a proper answer carrying the previous run's nonce (zeros when none) |
//! | `done-twice` | a proper answer, a second one, then `Reset` |
//! | `reset-before-done` | `Reset` (with the nonce), then a proper answer |
//! | `reset-wrong-nonce` | a proper answer, then a `Reset` with a foreign nonce |
//! | `early-forged-spin` | `Done` and `Reset` forged without the nonce, then a busy loop, never reading again |
//! | `extra-after-reset` | a proper answer and `Reset`, then a forged `Done`; then a busy loop |
//!
//! Anything else answers a Python error `UnknownScenario` so that a typo shows.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::os::fd::AsFd;
use std::time::Duration;

use pyward::protocol::{
    self, ArtifactMeta, DoneMsg, HostMsg, InitStage, Nonce, PyErrorInfo, ReadyMsg, ResetMsg,
    RunMsg, Versions, WorkerMsg, PROTOCOL_VERSION,
};

type Out = BufWriter<File>;
type Res = std::io::Result<()>;

fn main() {
    if let Err(e) = serve() {
        eprintln!("hostile_worker: {e}");
        std::process::exit(70);
    }
}

fn serve() -> Res {
    // The protocol is on fds 0 (a socket) and 1 (a pipe); copies of them as files.
    let input = File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    let output = File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    let mut input = BufReader::new(input);
    let mut out = BufWriter::new(output);
    let init = match protocol::recv::<HostMsg>(&mut input)? {
        Some(HostMsg::Init(init)) => init,
        _ => return Ok(()),
    };
    if init.zygote {
        // This program forks nothing: the pool falls back to cold starts of it.
        let refusal = WorkerMsg::InitFailed {
            stage: InitStage::Warmup,
            message: "the hostile test worker is never a zygote".into(),
        };
        return protocol::send(&mut out, &refusal);
    }
    protocol::send(&mut out, &WorkerMsg::Ready(ready()))?;
    let single_job = init.single_job;
    let mut previous: Option<Nonce> = None;
    loop {
        match protocol::recv::<HostMsg>(&mut input)? {
            Some(HostMsg::Run(run)) => {
                let nonce = run.nonce;
                let job = Job {
                    run: &run,
                    single_job,
                    previous,
                };
                job.play(&mut out)?;
                previous = Some(nonce);
            }
            Some(HostMsg::Shutdown) | None => return Ok(()),
            Some(HostMsg::Init(_)) => return Ok(()),
        }
    }
}

/// One run and what this worker knows around it.
struct Job<'a> {
    run: &'a RunMsg,
    single_job: bool,
    previous: Option<Nonce>,
}

impl Job<'_> {
    fn play(&self, out: &mut Out) -> Res {
        let code = &self.run.code;
        let line = code.lines().next().unwrap_or_default();
        let spec = line
            .strip_prefix("# scenario:")
            .map(str::trim)
            .unwrap_or_default();
        let (name, args) = spec.split_once(' ').unwrap_or((spec, ""));
        let args = args.trim();
        let nonce = self.run.nonce;
        match name {
            "ok" => {
                let mut done = self.done();
                done.stdout = if args.is_empty() {
                    String::new()
                } else {
                    format!("{args}\n")
                };
                self.answer(out, done, vec![self.figure()])?;
                self.reset(out, nonce)
            }
            "name" => {
                let hostile: String = json_arg(args);
                let bytes = content_for(&hostile);
                let artifacts = vec![(hostile, bytes), self.figure()];
                self.answer(out, self.done(), artifacts)?;
                self.reset(out, nonce)
            }
            "refused-name" => {
                let mut done = self.done();
                done.artifacts_refused = vec![json_arg(args)];
                self.answer(out, done, vec![self.figure()])?;
                self.reset(out, nonce)
            }
            "field" => {
                let (key, raw) = args.split_once(' ').unwrap_or((args, "absent"));
                self.answer_with_field(out, key, raw.trim())?;
                self.reset(out, nonce)
            }
            "stdout-over-cap" => {
                let mut done = self.done();
                done.stdout = "x".repeat(self.run.stdout_cap + 1);
                self.answer(out, done, vec![self.figure()])?;
                self.reset(out, nonce)
            }
            "too-many" => {
                let mut artifacts = vec![self.figure()];
                for i in 0..self.run.max_artifacts {
                    artifacts.push((format!("extra{i}.png"), png()));
                }
                self.answer(out, self.done(), artifacts)?;
                self.reset(out, nonce)
            }
            "many-artifacts" => {
                let [n, len] = numbers(args);
                let mut done = self.done();
                done.artifacts = (0..n).map(|i| meta(&format!("a{i:05}.png"), len)).collect();
                protocol::send(out, &WorkerMsg::Done(Box::new(done)))?;
                for _ in 0..n {
                    stream_frame(out, len, len)?;
                }
                out.flush()?;
                self.reset(out, nonce)
            }
            "big-artifact" => {
                let [len] = numbers(args);
                let mut done = self.done();
                done.artifacts = vec![meta(&self.run.out_name, len)];
                protocol::send(out, &WorkerMsg::Done(Box::new(done)))?;
                stream_frame(out, len, len)?;
                out.flush()?;
                self.reset(out, nonce)
            }
            "lying-artifact" => {
                let [declared, actual] = numbers(args);
                let mut done = self.done();
                done.artifacts = vec![meta(&self.run.out_name, declared)];
                protocol::send(out, &WorkerMsg::Done(Box::new(done)))?;
                stream_frame(out, actual, actual)?;
                out.flush()?;
                self.reset(out, nonce)
            }
            "message-huge" => {
                let [len] = numbers(args);
                // The start of a Done whose stdout never ends.
                let head = format!(
                    r#"{{"kind":"done","nonce":{},"exec_ms":1.0,"stdout":""#,
                    serde_json::to_string(&nonce).expect("a nonce serializes")
                );
                out.write_all(&claimed_len(len).to_le_bytes())?;
                out.write_all(head.as_bytes())?;
                stream_bytes(out, len.saturating_sub(head.len() as u64), b'a')?;
                out.flush()?;
                idle()
            }
            "raw" => {
                // An artifact that claims to be raw RGBA pixels: `raw LEN JSON`, the
                // `RawPng` as raw JSON text, then a frame of LEN bytes.
                let (len, raw) = args.split_once(' ').unwrap_or((args, "null"));
                let [len] = numbers(len);
                let mut done = self.done();
                done.artifacts = vec![meta(&self.run.out_name, len)];
                let mut value = serde_json::to_value(WorkerMsg::Done(Box::new(done)))?;
                value["artifacts"][0]["raw"] = MARK.into();
                protocol::write_frame(out, with_raw(&value, raw)?.as_bytes())?;
                stream_frame(out, len, len)?;
                out.flush()?;
                self.reset(out, nonce)
            }
            "big-error" => {
                let [len] = numbers(args);
                let mut done = self.done();
                done.error = Some(PyErrorInfo {
                    type_name: "ValueError".into(),
                    message: "m".repeat(len as usize),
                    line: Some(1),
                    traceback: "t".repeat(len as usize),
                    hint: "h".repeat(len as usize),
                });
                self.answer(out, done, Vec::new())?;
                self.reset(out, nonce)
            }
            "ready-instead" => {
                protocol::send(out, &WorkerMsg::Ready(ready()))?;
                idle()
            }
            "frame-len-max" => {
                out.write_all(&u32::MAX.to_le_bytes())?;
                out.write_all(b"{\"kind\":\"done\"")?;
                out.flush()?;
                idle()
            }
            "frame-garbage" => {
                protocol::write_frame(out, b"\xff\xfe\x00garbage{{{not a message")?;
                out.flush()?;
                idle()
            }
            "frame-unknown-kind" => {
                protocol::write_frame(out, br#"{"kind":"exec_pickle","payload":"cos\nsystem"}"#)?;
                out.flush()?;
                idle()
            }
            "truncated-close" => {
                out.write_all(&1000u32.to_le_bytes())?;
                out.write_all(b"{\"kind\":\"do")?;
                out.flush()?;
                std::process::exit(0)
            }
            "silent-close" => std::process::exit(0),
            "stale-nonce" => {
                let mut done = self.done();
                done.nonce = self.previous.unwrap_or_default();
                self.answer(out, done, vec![self.figure()])?;
                self.reset(out, self.previous.unwrap_or_default())
            }
            "done-twice" => {
                self.answer(out, self.done(), vec![self.figure()])?;
                self.answer(out, self.done(), vec![self.figure()])?;
                self.reset(out, nonce)
            }
            "reset-before-done" => {
                send_reset(out, nonce)?;
                self.answer(out, self.done(), vec![self.figure()])?;
                self.reset(out, nonce)
            }
            "reset-wrong-nonce" => {
                self.answer(out, self.done(), vec![self.figure()])?;
                self.reset(out, Nonce([1, 2]))
            }
            "early-forged-spin" => {
                // What job code that reached the descriptors can write: it never saw the
                // nonce.
                let mut done = self.done();
                done.nonce = Nonce::default();
                self.answer(out, done, vec![self.figure()])?;
                send_reset(out, Nonce::default())?;
                spin()
            }
            "extra-after-reset" => {
                self.answer(out, self.done(), vec![self.figure()])?;
                self.reset(out, nonce)?;
                let mut forged = self.done();
                forged.nonce = Nonce::default();
                self.answer(out, forged, vec![self.figure()])?;
                spin()
            }
            _ => {
                let mut done = self.done();
                done.error = Some(PyErrorInfo {
                    type_name: "UnknownScenario".into(),
                    message: format!("the hostile worker has no scenario {name:?}"),
                    line: Some(1),
                    traceback: String::new(),
                    hint: String::new(),
                });
                self.answer(out, done, Vec::new())?;
                self.reset(out, nonce)
            }
        }
    }

    /// A `Done` for this run with no artifacts yet.
    fn done(&self) -> DoneMsg {
        DoneMsg {
            exec_ms: 1.0,
            ..DoneMsg::new(self.run.nonce)
        }
    }

    /// The job's figure: a valid PNG under the run's `OUT` name.
    fn figure(&self) -> (String, Vec<u8>) {
        (self.run.out_name.clone(), png())
    }

    /// `done` with `artifacts` listed, then their frames.
    fn answer(&self, out: &mut Out, mut done: DoneMsg, artifacts: Vec<(String, Vec<u8>)>) -> Res {
        done.artifacts = (artifacts.iter())
            .map(|(name, bytes)| meta(name, bytes.len() as u64))
            .collect();
        protocol::send(out, &WorkerMsg::Done(Box::new(done)))?;
        for (_, bytes) in &artifacts {
            protocol::write_frame(out, bytes)?;
        }
        out.flush()
    }

    /// A proper answer whose `Done` has `key` replaced by the raw JSON text `raw`.
    fn answer_with_field(&self, out: &mut Out, key: &str, raw: &str) -> Res {
        let (name, bytes) = self.figure();
        let mut done = self.done();
        done.artifacts = vec![meta(&name, bytes.len() as u64)];
        let mut value = serde_json::to_value(WorkerMsg::Done(Box::new(done)))?;
        let mut at = &mut value;
        let mut parts = key.split('.').peekable();
        while let Some(part) = parts.next() {
            let object = at.as_object_mut().expect("a JSON object");
            if parts.peek().is_none() {
                if raw == "absent" {
                    object.remove(part);
                } else {
                    object.insert(part.to_string(), MARK.into());
                }
                break;
            }
            at = object
                .entry(part.to_string())
                .or_insert_with(|| serde_json::json!({}));
        }
        protocol::write_frame(out, with_raw(&value, raw)?.as_bytes())?;
        protocol::write_frame(out, &bytes)?;
        out.flush()
    }

    /// The between-job reset, unless this worker serves one job only.
    fn reset(&self, out: &mut Out, nonce: Nonce) -> Res {
        if self.single_job {
            return Ok(());
        }
        send_reset(out, nonce)
    }
}

/// A string value that stands for raw JSON text (see [`with_raw`]).
const MARK: &str = "@@hostile-raw-value@@";

/// `value` as JSON text with its [`MARK`] replaced by the raw text `raw` (which may be
/// no valid JSON for the field, or no valid JSON at all: `1e999`).
fn with_raw(value: &serde_json::Value, raw: &str) -> std::io::Result<String> {
    Ok(serde_json::to_string(value)?.replace(&format!("\"{MARK}\""), raw))
}

fn send_reset(out: &mut Out, nonce: Nonce) -> Res {
    let reset = ResetMsg {
        nonce,
        housekeeping_failures: Vec::new(),
        state_changes: Vec::new(),
    };
    protocol::send(out, &WorkerMsg::Reset(reset))
}

fn meta(name: &str, len: u64) -> ArtifactMeta {
    ArtifactMeta {
        name: name.to_string(),
        len,
        raw: None,
    }
}

/// The scenario's argument as a JSON string literal (so it can hold any character).
fn json_arg(args: &str) -> String {
    serde_json::from_str(args).unwrap_or_else(|e| panic!("not a JSON string: {args:?}: {e}"))
}

/// The scenario's N whitespace-separated numbers.
fn numbers<const N: usize>(args: &str) -> [u64; N] {
    let parsed: Vec<u64> = args
        .split_whitespace()
        .map(|a| a.parse().unwrap_or_else(|e| panic!("{a:?}: {e}")))
        .collect();
    parsed
        .try_into()
        .unwrap_or_else(|v| panic!("expected {N} numbers, got {v:?}"))
}

/// A length prefix for `len` (saturated at `u32::MAX`).
fn claimed_len(len: u64) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// A raw frame: a prefix announcing `announced` bytes, then `len` bytes written in
/// chunks (the worker's own memory stays small whatever the size).
fn stream_frame(out: &mut Out, announced: u64, len: u64) -> Res {
    out.write_all(&claimed_len(announced).to_le_bytes())?;
    stream_bytes(out, len, 0)
}

fn stream_bytes(out: &mut Out, mut len: u64, byte: u8) -> Res {
    let chunk = vec![byte; 1 << 20];
    while len > 0 {
        let n = len.min(chunk.len() as u64) as usize;
        out.write_all(&chunk[..n])?;
        len -= n as u64;
    }
    Ok(())
}

/// Bytes that pass the host's checks for a file of this name: CSV text for `.csv` (and
/// other text) names, a PNG otherwise; so that a name the host failed to refuse would
/// reach its writes, not stop at validation.
fn content_for(name: &str) -> Vec<u8> {
    let text = [".csv", ".txt", ".json", ".tsv"];
    if text.iter().any(|ext| name.ends_with(ext)) {
        b"x,y\n1,2\n2,4\n".to_vec()
    } else {
        png()
    }
}

/// A small valid PNG that is not blank (a gradient).
fn png() -> Vec<u8> {
    const SIDE: u32 = 16;
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, SIDE, SIDE);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let pixels: Vec<u8> = (0..SIDE * SIDE)
        .flat_map(|i| {
            let (x, y) = ((i % SIDE) as u8, (i / SIDE) as u8);
            [x * 16, y * 16, 128]
        })
        .collect();
    let mut writer = encoder.write_header().expect("PNG header");
    writer.write_image_data(&pixels).expect("PNG data");
    writer.finish().expect("PNG end");
    bytes
}

/// Keeps the process (and its pipes) alive without a word: the host must stop it.
fn idle() -> Res {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Burns CPU forever, reading nothing: the host must kill it.
fn spin() -> Res {
    let mut x: u64 = 0;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

/// The ready report of this worker: the current protocol, no confinement (the host
/// never trusts a worker's report of it).
fn ready() -> ReadyMsg {
    ReadyMsg {
        version: PROTOCOL_VERSION,
        warmup_ms: 1.0,
        versions: Versions::default(),
        sandbox: pyward::sandbox::Enforcement::none(),
        render_once: false,
        render_once_off: None,
        text_metrics: 0,
        text_metrics_off: None,
    }
}
