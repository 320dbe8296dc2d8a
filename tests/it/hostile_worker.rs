//! A worker is exactly as trusted as the job it runs: these tests drive an executor whose
//! worker program is the hostile test worker (`tests/hostile_worker.rs`, built by `cargo
//! test` as an example), which speaks the real protocol and sends forged and malformed
//! frames. Every attack must answer `JobFailure::ProtocolViolation` (a worker that just
//! goes away: `WorkerCrashed`), never a host panic, a hang, a host write outside its
//! directories or host memory in proportion to what the worker claims; the attacker's
//! process is gone afterwards and the pool serves the next job on another worker.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use pyward::record::Recorder;
use pyward::{Attempt, Executor, ExecutorBuilder, Isolation, Job, JobFailure, Outcome, PngEncoder};

use crate::common::{self, process_alive, wait_until};

#[path = "../common/hostile.rs"]
mod hostile;
use hostile::{canary_name, climbing_to, files_named, names_a_job_id};

/// The per-job deadline of these pools: an attack the host does not see through ends
/// as a timeout, not a hung test.
const JOB_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the test waits for any answer before it calls the pool hung.
const ANSWER_WITHIN: Duration = Duration::from_secs(25);

/// The hostile worker program cargo built next to this test.
fn hostile_program() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/it-<hash>
    hostile::hostile_program(exe.parent().and_then(Path::parent).unwrap())
}

/// A pool of one hostile worker, started cold (the hostile worker is never a zygote).
fn hostile_builder() -> ExecutorBuilder {
    common::builder()
        .worker_program(hostile_program())
        .zygote(false)
        .workers(1)
        .timeout(JOB_TIMEOUT)
}

/// An executor that is replaced when it stops answering (a slot thread that panicked or
/// hung on a forged frame), so that one broken scenario does not hide the others.
struct Pool {
    exec: Arc<Executor>,
    builder: ExecutorBuilder,
}

impl Pool {
    fn new(builder: ExecutorBuilder) -> Pool {
        Pool {
            exec: Arc::new(Self::start(&builder)),
            builder,
        }
    }

    fn start(builder: &ExecutorBuilder) -> Executor {
        (builder.clone())
            .build()
            .expect("a pool of hostile workers starts (they report ready like real ones)")
    }

    /// Runs `code`; `Err` when no answer came within [`ANSWER_WITHIN`].
    fn run(&mut self, code: &str) -> Result<pyward::Result<Outcome>, String> {
        let (tx, rx) = mpsc::channel();
        let exec = Arc::clone(&self.exec);
        let job = Job::new(code);
        std::thread::spawn(move || {
            let _ = tx.send(exec.run(job));
        });
        match rx.recv_timeout(ANSWER_WITHIN) {
            Ok(answer) => Ok(answer),
            Err(_) => {
                // The stuck pool stays with its thread; the next scenario gets a new one.
                self.exec = Arc::new(Self::start(&self.builder));
                Err(format!(
                    "no answer within {ANSWER_WITHIN:?}: the pool hung (a slot thread panicked \
                     or waits forever)"
                ))
            }
        }
    }
}

/// What an attack must answer.
#[derive(Clone, Copy)]
enum Expect {
    /// `ProtocolViolation` whose detail contains one of these words (any case).
    Violation(&'static [&'static str]),
    /// `WorkerCrashed`: the worker went away without a protocol error.
    Crashed,
    /// The job's own answer was proper; what follows it is the attack (checked by the
    /// next job).
    Any,
}

const NAME: Expect = Expect::Violation(&["name"]);
const NONCE: Expect = Expect::Violation(&["nonce"]);
const MALFORMED: Expect = Expect::Violation(&["malformed"]);
const RAW: Expect = Expect::Violation(&["raw"]);

/// The PNG twin of a `.csv` canary path (the hostile worker sends a PNG for it).
fn png_canary(canary: &Path) -> String {
    canary.with_extension("png").to_str().unwrap().to_string()
}

/// The attacks that need no setup: (scenario line, expectation).
fn attacks(canary: &Path, short_canary: &str) -> Vec<(String, Expect)> {
    let json = |s: &str| serde_json::to_string(s).unwrap();
    let mut list = vec![
        // Artifact names that are paths, or no plain file name at all.
        (format!("name {}", json(canary.to_str().unwrap())), NAME),
        (format!("name {}", json(&climbing_to(canary))), NAME),
        (format!("name {}", json(&png_canary(canary))), NAME),
        (
            format!(
                "name {}",
                json(&climbing_to(Path::new(&png_canary(canary))))
            ),
            NAME,
        ),
        (
            format!("name {}", json(&format!("../../../{short_canary}"))),
            NAME,
        ),
        (
            format!(
                "name {}",
                json(&format!("../../../{}", png_canary(Path::new(short_canary))))
            ),
            NAME,
        ),
        (r#"name "a\u0000b.png""#.to_string(), NAME),
        (r#"name "a\nb.png""#.to_string(), NAME),
        (r#"name "a\\b.png""#.to_string(), NAME),
        (r#"name ".""#.to_string(), NAME),
        (r#"name "..""#.to_string(), NAME),
        (r#"name """#.to_string(), NAME),
        (format!("name {}", json(&"x".repeat(300))), NAME),
        (format!("refused-name {}", json("../../escape.png")), NAME),
        // Two artifacts of one name (the hostile one is named as `OUT`).
        (
            r#"name "figure.png""#.to_string(),
            Expect::Violation(&["twice"]),
        ),
        // Numbers out of range, or no numbers at all.
        (
            "field exec_ms 1e300".into(),
            Expect::Violation(&["exec_ms"]),
        ),
        (
            "field exec_ms 1e999".into(),
            Expect::Violation(&["exec_ms", "malformed"]),
        ),
        ("field exec_ms -1".into(), Expect::Violation(&["exec_ms"])),
        (
            "field exec_ms null".into(),
            Expect::Violation(&["exec_ms", "malformed"]),
        ),
        (
            "field figures.describe_ms 1e300".into(),
            Expect::Violation(&["describe_ms"]),
        ),
        (
            "field stdout_dropped 18446744073709551615".into(),
            Expect::Violation(&["stdout"]),
        ),
        ("field stdout_dropped 1e30".into(), MALFORMED),
        ("stdout-over-cap".into(), Expect::Violation(&["stdout"])),
        // The job's stderr, handed back when its code ended well: bounded, and text.
        (
            format!(
                "field stderr \"{}\"",
                "x".repeat(pyward::JOB_STDERR_CAP + 1)
            ),
            Expect::Violation(&["stderr"]),
        ),
        ("field stderr 7".into(), MALFORMED),
        (r#"field stderr "\ud800""#.into(), MALFORMED),
        // Counts and sizes.
        ("too-many".into(), Expect::Violation(&["artifacts"])),
        (
            "many-artifacts 40 16".into(),
            Expect::Violation(&["artifacts"]),
        ),
        (
            "lying-artifact 16 4096".into(),
            Expect::Violation(&["bytes"]),
        ),
        (
            "lying-artifact 4096 16".into(),
            Expect::Violation(&["bytes"]),
        ),
        (
            "message-huge 20000000".into(),
            Expect::Violation(&["bytes"]),
        ),
        // Raw pixels whose size, dpi or metadata do not add up.
        (
            r#"raw 16 {"width":100000,"height":100000,"dpi":100.0,"text":[]}"#.into(),
            RAW,
        ),
        (
            r#"raw 16 {"width":0,"height":4,"dpi":100.0,"text":[]}"#.into(),
            RAW,
        ),
        (
            r#"raw 16 {"width":2,"height":2,"dpi":1e300,"text":[]}"#.into(),
            RAW,
        ),
        (
            r#"raw 16 {"width":2,"height":2,"dpi":-5,"text":[]}"#.into(),
            RAW,
        ),
        (
            r#"raw 16 {"width":2,"height":2,"dpi":1e999,"text":[]}"#.into(),
            MALFORMED,
        ),
        (
            r#"raw 16 {"width":4294967295,"height":4294967295,"dpi":1,"text":[]}"#.into(),
            RAW,
        ),
        // width x height x 4 wraps around 2^64 to 3,734,740 (a size under the raw limit):
        // a product computed without overflow checks lets it through.
        (
            r#"raw 3734740 {"width":4294901789,"height":1073758201,"dpi":1,"text":[]}"#.into(),
            RAW,
        ),
        // Frames that are no message, or not the message due.
        ("ready-instead".into(), Expect::Violation(&["ready"])),
        (
            "frame-len-max".into(),
            Expect::Violation(&["bytes", "frame"]),
        ),
        ("frame-garbage".into(), MALFORMED),
        ("frame-unknown-kind".into(), MALFORMED),
        // The nonce and the order of messages.
        (
            "field nonce absent".into(),
            Expect::Violation(&["nonce", "malformed"]),
        ),
        ("field nonce [1,2]".into(), NONCE),
        ("stale-nonce".into(), NONCE),
        ("done-twice".into(), Expect::Violation(&["done", "reset"])),
        ("reset-before-done".into(), Expect::Violation(&["reset"])),
        (
            "reset-wrong-nonce".into(),
            Expect::Violation(&["nonce", "reset"]),
        ),
        ("early-forged-spin".into(), NONCE),
        ("extra-after-reset".into(), Expect::Any),
        // A worker that goes away.
        ("truncated-close".into(), Expect::Crashed),
        ("silent-close".into(), Expect::Crashed),
    ];
    let texts: Vec<String> = (0..100).map(|i| format!(r#"["k{i}","v"]"#)).collect();
    list.push((
        format!(
            r#"raw 16 {{"width":2,"height":2,"dpi":100.0,"text":[{}]}}"#,
            texts.join(",")
        ),
        RAW,
    ));
    list
}

/// Checks one attack's answer; `Err` says what was wrong.
fn check_attack(answer: pyward::Result<Outcome>, expect: Expect) -> Result<u32, String> {
    let outcome = answer.map_err(|e| format!("an executor error instead of a job failure: {e}"))?;
    let pid = outcome
        .worker
        .as_ref()
        .map(|w| w.pid)
        .ok_or("no worker info")?;
    match (&outcome.result, expect) {
        (Err(JobFailure::ProtocolViolation { detail }), Expect::Violation(words)) => {
            let lower = detail.to_lowercase();
            if !words.iter().any(|w| lower.contains(w)) {
                return Err(format!("detail {detail:?} names none of {words:?}"));
            }
            if detail.len() > 1024 || detail.chars().any(char::is_control) {
                return Err(format!("detail is not a short escaped text: {detail:?}"));
            }
            if names_a_job_id(detail) {
                return Err(format!("detail names an internal job id: {detail:?}"));
            }
        }
        (Err(JobFailure::WorkerCrashed { .. }), Expect::Crashed) => {}
        (_, Expect::Any) => {}
        (other, _) => return Err(format!("answered {other:?}")),
    }
    Ok(pid)
}

/// Runs an ok job and checks it succeeded on a worker other than `attacker`, which is
/// gone.
fn check_next_job(pool: &mut Pool, attacker: u32, tag: &str) -> Result<(), String> {
    let answer = pool.run(&format!("# scenario: ok after {tag}\n"))?;
    let outcome = answer.map_err(|e| format!("the next job: executor error {e}"))?;
    let artifacts = (outcome.result.as_ref()).map_err(|f| format!("the next job failed: {f:?}"))?;
    if outcome.stdout != format!("after {tag}\n") {
        return Err(format!(
            "the next job got another answer: {:?}",
            outcome.stdout
        ));
    }
    if artifacts.len() != 1 || !artifacts[0].bytes.starts_with(b"\x89PNG") {
        return Err(format!("the next job's artifacts: {artifacts:?}"));
    }
    let pid = outcome.worker.as_ref().map_or(0, |w| w.pid);
    if pid == attacker {
        return Err(format!("the next job ran on the attacker's worker {pid}"));
    }
    if !wait_until(Duration::from_secs(2), || !process_alive(attacker)) {
        return Err(format!("the attacker's worker {attacker} is still running"));
    }
    Ok(())
}

/// Runs each attack of `table` on `pool`, then a proper job; checks each as
/// [`check_attack`] and [`check_next_job`] say, and that no canary exists below `dir` (the
/// library writes nothing; `recorder` writes each outcome into a records directory deep
/// inside `dir`). Returns what failed, one line per attack.
fn run_table(
    pool: &mut Pool,
    table: &[(String, Expect)],
    dir: &Path,
    canaries: (&Path, &str),
    recorder: &Recorder,
) -> Vec<String> {
    let (canary, short_canary) = canaries;
    let mut failures = Vec::new();
    for (code, expect) in table {
        let code = format!("# scenario: {code}\n");
        let scenario = code.trim().trim_start_matches("# scenario: ");
        let tag: String = scenario.split(' ').next().unwrap().to_string();
        let checked = pool.run(&code).and_then(|answer| {
            // Shown with --nocapture: what each attack got.
            match &answer {
                Ok(o) => eprintln!("{scenario}: {:?}", o.result.as_ref().map(Vec::len)),
                Err(e) => eprintln!("{scenario}: executor error {e}"),
            }
            if let Ok(outcome) = &answer {
                let attempts = [Attempt::new(code.clone().into_bytes(), outcome.clone())];
                let _ = recorder.record(&pool.exec, &Job::new(code.clone()), &attempts);
            }
            let attacker = check_attack(answer, *expect)?;
            if !matches!(expect, Expect::Any)
                && !wait_until(Duration::from_millis(500), || !process_alive(attacker))
            {
                return Err(format!("its worker {attacker} still runs after the answer"));
            }
            check_next_job(pool, attacker, &tag)
        });
        if let Err(e) = checked {
            failures.push(format!("{scenario}: {e}"));
        }
        for canary in [canary.to_path_buf(), canary.with_extension("png")] {
            if canary.exists() {
                failures.push(format!("{scenario}: the canary {canary:?} was written"));
                let _ = std::fs::remove_file(canary);
            }
        }
        let png_short = Path::new(short_canary).with_extension("png");
        for name in [short_canary, png_short.to_str().unwrap()] {
            for found in files_named(dir, name) {
                failures.push(format!("{scenario}: a canary was written at {found:?}"));
                let _ = std::fs::remove_file(&found);
            }
        }
    }
    failures
}

/// Runs `table` on a new pool from `builder` (after one proper job, which also gives
/// `stale-nonce` a previous run on the same worker) and panics with every failure.
fn assert_refused(builder: ExecutorBuilder, table: impl Fn(&Path, &str) -> Vec<(String, Expect)>) {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join(canary_name("abs"));
    let short_canary = canary_name("short");
    let recorder = Recorder::new(dir.path().join("a/b/c/d/records"));
    let mut pool = Pool::new(builder);
    if let Err(e) = pool
        .run("# scenario: ok\n")
        .and_then(|a| a.map_err(|e| e.to_string()))
        .and_then(|o| o.result.map(drop).map_err(|f| format!("{f:?}")))
    {
        panic!("a proper answer of the hostile worker fails: {e}");
    }
    let table = table(&canary, &short_canary);
    let failures = run_table(
        &mut pool,
        &table,
        dir.path(),
        (&canary, &short_canary),
        &recorder,
    );
    assert!(
        failures.is_empty(),
        "{} of {} attacks were not refused as they must be:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );
}

/// Every attack of the table, one after another on one pool of one reused worker: each
/// answers as it must, its worker is killed (at once: the answer comes after the kill),
/// no canary exists, and the next job succeeds on a new worker.
#[test]
fn forged_and_malformed_answers_are_protocol_violations_and_the_pool_keeps_serving() {
    assert_refused(hostile_builder(), attacks);
}

/// The same attacks where every worker serves one job (`Isolation::Fresh`: no between-job
/// reset, so the attacks on the reset's order do not apply).
#[test]
fn fresh_workers_refuse_the_same_answers() {
    let fresh = |canary: &Path, short: &str| {
        let skip = [
            "done-twice",
            "reset-before-done",
            "reset-wrong-nonce",
            "extra-after-reset",
        ];
        (attacks(canary, short).into_iter())
            .filter(|(line, _)| !skip.contains(&line.as_str()))
            .collect()
    };
    assert_refused(hostile_builder().isolation(Isolation::Fresh), fresh);
}

/// Raw pixels where the run asked for encoded figures (`PngEncoder::Matplotlib`: the
/// run's raw limit is 0) are refused, however well-formed.
#[test]
fn raw_figures_nobody_asked_for_are_refused() {
    let raw = |_: &Path, _: &str| {
        vec![(
            r#"raw 16 {"width":2,"height":2,"dpi":100.0,"text":[]}"#.to_string(),
            Expect::Violation(&["raw"]),
        )]
    };
    assert_refused(hostile_builder().png_encoder(PngEncoder::Matplotlib), raw);
}

/// The environment variable that makes [`memory_probe`] run (in a process of its own).
const MEMORY_PROBE: &str = "PYWARD_HOSTILE_MEMORY_PROBE";

/// Claims of gigabytes (an artifact count, an artifact's size, a frame longer than its
/// artifact, an endless message, a huge raw figure) cost the host almost nothing: each is refused from its
/// announcement, before the bytes are read. Measured as the growth of the peak resident
/// set (`VmHWM`) of a test process that runs nothing else ([`memory_probe`]).
#[test]
fn gigabyte_claims_do_not_grow_the_host() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hostile_worker::memory_probe",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(MEMORY_PROBE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the memory probe failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "the memory probe did not run:\n{stdout}\n{stderr}"
    );
}

/// Our own `/proc/self/status` field, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().unwrap();
    kib << 10
}

/// See [`gigabyte_claims_do_not_grow_the_host`]; runs only there.
#[test]
#[ignore = "run by gigabyte_claims_do_not_grow_the_host in a process of its own"]
fn memory_probe() {
    if std::env::var_os(MEMORY_PROBE).is_none() {
        eprintln!(
            "memory_probe runs in a process of its own: see gigabyte_claims_do_not_grow_the_host"
        );
        return;
    }
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    let attacks = [
        // 10,000 artifacts of 100 KiB: about 1 GiB, over the count.
        (
            format!("many-artifacts 10000 {}", 100 << 10),
            10_000 * (100 << 10),
        ),
        // One artifact of 1 GiB: over the size cap and the frame limit.
        (format!("big-artifact {GIB}"), GIB),
        // One of 200 MiB: over the size cap, under the protocol's largest frame.
        (format!("big-artifact {}", 200 * MIB), 200 * MIB),
        // Announced as 1 KiB, sent as a 200 MiB frame.
        (format!("lying-artifact 1024 {}", 200 * MIB), 200 * MIB),
        // A message frame of 200 MiB (a Done with an endless stdout).
        (format!("message-huge {}", 200 * MIB), 200 * MIB),
        // Raw pixels of a 65536 x 65536 figure: 16 GiB, over the raw limit.
        (
            format!(
                r#"raw {} {{"width":65536,"height":65536,"dpi":1,"text":[]}}"#,
                16 * GIB
            ),
            16 * GIB,
        ),
    ];
    let mut pool = Pool::new(hostile_builder());
    let warm = pool.run("# scenario: ok\n").unwrap().unwrap();
    common::expect_ok(&warm);
    let (hwm_before, rss_before) = (status_bytes("VmHWM:"), status_bytes("VmRSS:"));
    let mut claimed = 0;
    let mut failures = Vec::new();
    for (scenario, size) in &attacks {
        claimed += size;
        let code = format!("# scenario: {scenario}\n");
        let checked = pool.run(&code).and_then(|answer| {
            let attacker = check_attack(answer, Expect::Violation(&["bytes", "artifacts", "raw"]))?;
            check_next_job(&mut pool, attacker, "memory")
        });
        if let Err(e) = checked {
            failures.push(format!("{scenario}: {e}"));
        }
    }
    let (hwm_after, rss_after) = (status_bytes("VmHWM:"), status_bytes("VmRSS:"));
    let growth = hwm_after.saturating_sub(hwm_before);
    println!(
        "claimed {} MiB; VmHWM {} -> {} MiB (+{} MiB), VmRSS {} -> {} MiB",
        claimed / MIB,
        hwm_before / MIB,
        hwm_after / MIB,
        growth / MIB,
        rss_before / MIB,
        rss_after / MIB
    );
    assert!(
        growth < 64 * MIB,
        "the host's peak memory grew by {} MiB for {} MiB claimed{}",
        growth / MIB,
        claimed / MIB,
        if failures.is_empty() {
            String::new()
        } else {
            format!("; and:\n{}", failures.join("\n"))
        }
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
