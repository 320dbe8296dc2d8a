//! Descriptors: a job can neither open nor use its worker's own file descriptors.
//!
//! An integer handed to a reader that accepts "a path or a descriptor"
//! (`scipy.io.netcdf_file(4, 'w')`) opens a descriptor the worker already holds; its
//! two protocol descriptors are its channel to the host, and Landlock never looks at an
//! open descriptor again. Three defences, each tested here through a real worker:
//!
//! - where the descriptors are: a ready worker (cold, forked from the zygote, or
//!   pre-forked for `Isolation::Fresh`) holds stdio, its protocol pair at random high
//!   numbers (each worker its own), and otherwise only read-only files inside the read
//!   roots (matplotlib's cached fonts), read from the host in `/proc/<pid>/fd`;
//! - the audit hook: every reader that accepts an integer, tried on descriptors 0-20
//!   and on the worker's real protocol descriptors (numbers the host reads, which a job
//!   would have to guess), with the integer itself, an object whose `__index__` names
//!   it, `True`, and `str`/`bytes` subclasses (and, gate off, an `os.PathLike`) that lie:
//!   every attempt raises, the readers that would reach the descriptor raise the hook's
//!   refusal, and nothing prints the marker a successful open would print;
//! - and the worker still serves: the probe's outcome is an ordinary success and the
//!   same process (protocol intact) serves a figure next.
//!
//! Gate on: the probe as a model would write it. Gate off
//! ([`Policy::gate_disabled_for_testing`]): the real `open`, `io.FileIO`, `os.fdopen`
//! and the `os` functions that take a descriptor or a `dir_fd`, reached through
//! `srcpath.__globals__`; the audit hook is the layer under test.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{builder, expect_ok, png_size, wait_for};
use pyward::gate::Policy;
use pyward::{Executor, Isolation, Job, Outcome};

/// One open descriptor of a worker, as the host sees it in `/proc`.
#[derive(Debug)]
struct Descriptor {
    number: i32,
    /// The `/proc/<pid>/fd/<n>` link: a path, `socket:[…]`, `pipe:[…]`.
    target: String,
    /// `flags:` of `/proc/<pid>/fdinfo/<n>` (octal in the file).
    flags: i32,
}

fn descriptors(pid: u32) -> Vec<Descriptor> {
    let mut found: Vec<Descriptor> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap_or_else(|e| panic!("/proc/{pid}/fd: {e}"))
        .filter_map(|e| {
            let e = e.ok()?;
            let number: i32 = e.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(e.path()).ok()?.display().to_string();
            let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{number}")).ok()?;
            let flags = info
                .lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| i32::from_str_radix(f.trim(), 8).ok())?;
            Some(Descriptor {
                number,
                target,
                flags,
            })
        })
        .collect();
    found.sort_by_key(|d| d.number);
    found
}

/// The worker's protocol pair: the socket and the pipe above stdio, (lower, higher).
fn protocol_pair(pid: u32) -> (i32, i32) {
    let channels: Vec<i32> = descriptors(pid)
        .into_iter()
        .filter(|d| d.number > 2)
        .filter(|d| d.target.starts_with("socket:") || d.target.starts_with("pipe:"))
        .map(|d| d.number)
        .collect();
    assert_eq!(channels.len(), 2, "worker {pid}: {:?}", descriptors(pid));
    (channels[0], channels[1])
}

/// `[low, high)` the worker draws its protocol numbers from: the upper half of
/// `min(hard RLIMIT_NOFILE, 2^16)`, the hard limit it inherits from this process.
fn high_range() -> Option<(i32, i32)> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let hard: u64 = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4))
        .map(|h| h.parse().unwrap_or(u64::MAX))
        .expect("Max open files in /proc/self/limits");
    let high = hard.min(1 << 16);
    (high >= 64).then_some(((high / 2) as i32, high as i32))
}

/// Where Python and the fonts live: the only places a kept descriptor may point.
fn read_roots() -> Vec<String> {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv");
    let mut roots = vec!["/usr/share/fonts".to_string()];
    for p in [venv.clone(), venv.canonicalize().unwrap_or(venv)] {
        roots.push(p.display().to_string());
    }
    // The interpreter the virtualenv was made from (its stdlib).
    let python = std::path::Path::new(env!("PYWARD_BUILD_PYTHON"));
    if let Ok(real) = python.canonicalize() {
        if let Some(prefix) = real.parent().and_then(|bin| bin.parent()) {
            roots.push(prefix.display().to_string());
        }
    }
    roots
}

/// Checks a ready worker's descriptors; returns its protocol pair.
fn check_inventory(pid: u32, what: &str) -> (i32, i32) {
    let found = descriptors(pid);
    let numbers: Vec<i32> = found.iter().map(|d| d.number).collect();
    for stdio in 0..=2 {
        assert!(numbers.contains(&stdio), "{what}: no fd {stdio}: {found:?}");
    }
    let pair = protocol_pair(pid);
    if let Some((low, high)) = high_range() {
        for fd in [pair.0, pair.1] {
            assert!(
                (low..high).contains(&fd),
                "{what}: protocol descriptor {fd} outside [{low}, {high}): {found:?}"
            );
        }
    }
    // Above the open-files limit the sandbox sets (256): no descriptor the job's own
    // opens get can ever take one of these numbers.
    assert!(pair.0 > 256, "{what}: protocol at {pair:?}");
    let roots = read_roots();
    for d in &found {
        if d.number <= 2 || d.number == pair.0 || d.number == pair.1 {
            continue;
        }
        let read_only = d.flags & libc::O_ACCMODE == libc::O_RDONLY && d.flags & libc::O_PATH == 0;
        let inside = roots.iter().any(|r| d.target.starts_with(&format!("{r}/")));
        let file = std::fs::metadata(&d.target).is_ok_and(|m| m.is_file());
        assert!(
            read_only && inside && file,
            "{what}: descriptor {} -> {} (flags {:o}) is neither stdio, the protocol, nor a \
             read-only file of the Python install or the fonts",
            d.number,
            d.target,
            d.flags
        );
    }
    pair
}

/// The pids of the pool's workers once `n` are ready and idle.
fn ready_workers(exec: &Executor, n: usize) -> Vec<u32> {
    wait_for(exec, "workers ready", |s| {
        s.workers.len() >= n && s.workers.iter().all(|w| !w.busy)
    });
    exec.stats().workers.iter().map(|w| w.pid).collect()
}

#[test]
fn a_ready_worker_holds_stdio_its_protocol_high_and_only_read_only_library_files() {
    // Forked from the zygote: each worker draws its own numbers.
    let exec = builder().workers(2).build().unwrap();
    let pids = ready_workers(&exec, 2);
    let zygote = exec.zygote_pid().expect("the zygote runs");
    let zygote_pair = protocol_pair(zygote);
    let pairs: Vec<(i32, i32)> = pids
        .iter()
        .map(|&pid| check_inventory(pid, "forked worker"))
        .collect();
    assert_ne!(pairs[0], pairs[1], "two workers drew the same numbers");
    for pair in &pairs {
        assert_ne!(*pair, zygote_pair, "a worker kept the zygote's numbers");
    }
    eprintln!("zygote {zygote_pair:?}, forked workers {pairs:?}");
    // The descriptors stay usable under the sandbox's lowered limit: a job runs.
    let o = exec
        .run(Job::new("plt.plot([1, 2]); plt.savefig(OUT)"))
        .unwrap();
    expect_ok(&o);
    drop(exec);

    // Started cold: warm-up's cached fonts stay (read-only, inside the read roots).
    let exec = builder().zygote(false).build().unwrap();
    let pid = ready_workers(&exec, 1)[0];
    let pair = check_inventory(pid, "cold worker");
    eprintln!(
        "cold worker {pair:?}, {} descriptors",
        descriptors(pid).len()
    );
    drop(exec);

    // Pre-forked for one job, after its prewarm render.
    let exec = builder().isolation(Isolation::Fresh).build().unwrap();
    let pid = ready_workers(&exec, 1)[0];
    let pair = check_inventory(pid, "fresh worker");
    eprintln!("fresh worker {pair:?}");
}

/// The readers that take "a path or a descriptor", as a job calls them. `f` is what the
/// probe passes. The names double as the keys of the probe's report.
const READERS: &str = r#"
tone = np.zeros(4, np.int16)
fig = plt.figure()
fig.gca().plot([1, 2])
READERS = {
    'scipy.io.netcdf_file': lambda f: scipy.io.netcdf_file(f, 'w'),
    'scipy.io.FortranFile': lambda f: scipy.io.FortranFile(f, 'w'),
    'scipy.io.loadmat': lambda f: scipy.io.loadmat(f),
    'scipy.io.savemat': lambda f: scipy.io.savemat(f, {'a': tone}),
    'scipy.io.wavfile.write': lambda f: scipy.io.wavfile.write(f, 8000, tone),
    'scipy.io.wavfile.read': lambda f: scipy.io.wavfile.read(f),
    'scipy.io.mmwrite': lambda f: scipy.io.mmwrite(f, np.eye(2)),
    'scipy.io.mmread': lambda f: scipy.io.mmread(f),
    'np.fromfile': lambda f: np.fromfile(f),
    'ndarray.tofile': lambda f: tone.tofile(f),
    'np.load': lambda f: np.load(f),
    'np.save': lambda f: np.save(f, tone),
    'np.loadtxt': lambda f: np.loadtxt(f),
    'np.savetxt': lambda f: np.savetxt(f, tone),
    'np.genfromtxt': lambda f: np.genfromtxt(f),
    'pd.read_csv': lambda f: pd.read_csv(f),
    'DataFrame.to_csv': lambda f: pd.DataFrame({'a': [1]}).to_csv(f),
    'pd.read_json': lambda f: pd.read_json(f),
    'Figure.savefig': lambda f: fig.savefig(f),
    'plt.imread': lambda f: plt.imread(f),
    'plt.imsave': lambda f: plt.imsave(f, np.zeros((2, 2))),
}
"#;

/// What every attempt on a reader must end in, by kind of argument: (reader, an
/// integer or `True`, an object with `__index__`, a lying `str`/`bytes`/`PathLike`).
/// `hook` is the audit hook's refusal; `""` leaves the reader's own refusal of that
/// argument (`TypeError`, `ValueError`, ...) unchecked beyond "not reached"; `hook*` is
/// the hook's refusal re-raised by scipy.io as an `OSError` of its own (`raise ... from
/// e`): gate off the probe follows the chain to the hook, gate on (where `__context__`
/// is refused) it sees the wrapper. Measured without the hook, the readers with `hook`
/// for integers open them as descriptors; the others refuse an integer themselves.
/// `hook|returned`: either, by the open the writer takes: the job's write point
/// (Python's `open` while a job runs) makes a path outside the job the artifact of its
/// base name in `out/`, so the write returns; the lying path's own directory stays
/// empty either way (checked on disk below).
const EXPECT: &[(&str, &str, &str, &str)] = &[
    ("scipy.io.netcdf_file", "hook", "hook", "hook|returned"),
    ("scipy.io.FortranFile", "hook", "hook", "hook|returned"),
    ("scipy.io.loadmat", "hook*", "hook*", ""),
    ("scipy.io.savemat", "hook*", "hook*", ""),
    ("scipy.io.wavfile.write", "hook", "hook", "hook|returned"),
    ("scipy.io.wavfile.read", "hook", "hook", "hook"),
    ("scipy.io.mmwrite", "", "", ""),
    ("scipy.io.mmread", "", "", ""),
    ("np.fromfile", "", "", ""),
    ("ndarray.tofile", "", "", ""),
    ("np.load", "", "", "hook"),
    ("np.save", "", "", "hook|returned"),
    ("np.loadtxt", "", "", ""),
    ("np.savetxt", "", "", ""),
    ("np.genfromtxt", "", "", ""),
    ("pd.read_csv", "", "", ""),
    ("DataFrame.to_csv", "", "", ""),
    ("pd.read_json", "", "", ""),
    ("Figure.savefig", "", "", ""),
    ("plt.imread", "", "", ""),
    ("plt.imsave", "", "", ""),
];

/// [`EXPECT`] for the gate-off probe's own readers.
const EXPECT_GATE_OFF: &[(&str, &str, &str, &str)] = &[
    ("np.memmap", "", "", "hook"),
    ("open", "hook", "hook", "hook"),
    // A lying path names a directory: the write point refuses it as no file name
    // (ValueError) before any open, or the hook does.
    ("open-write", "hook", "hook", "hook|ValueError"),
    ("io.FileIO", "hook", "hook", "hook"),
    // `os.fdopen` refuses anything but an int itself.
    ("os.fdopen", "hook", "", ""),
    ("os.listdir", "hook", "hook", "hook"),
    ("os.scandir", "hook", "hook", "hook"),
    ("os.listxattr", "hook", "hook", "hook"),
    ("os.chdir", "hook", "hook", "hook"),
    ("os.fwalk(dir_fd)", "hook", "hook", "hook"),
    // `os.mkdir` refuses a str `dir_fd` itself.
    ("os.mkdir(dir_fd)", "hook", "hook", ""),
];

/// The lying `str` and `bytes` subclasses of the gate-off probe. Gate on, the gate
/// refuses a string class with methods of its own (`string-class`, see
/// tests/it/lying_names.rs), so the gate-on probe's subclasses are plain ones, which
/// the hook refuses by their type alone, as it does these.
const LYING_CLASSES: &str = r#"
class LyingStr(str):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return 0
    def startswith(self, *args):
        return True
    def endswith(self, *args):
        return True

class LyingBytes(bytes):
    def startswith(self, *args):
        return True
    def endswith(self, *args):
        return True
"#;

/// Objects that lie about what they are, and the loop that tries every reader with
/// every descriptor. A descriptor attempt that returns prints `REACHED` (the canary; a
/// lying path's canary is the directory it names, outside every root); a refusal by
/// the hook counts as `hook`, any other exception by its type. The report is one JSON line:
/// `{"reader|kind": {"hook": n, "TypeError": m, ...}}`.
const PROBE: &str = r#"
class Index:
    def __init__(self, n):
        self.n = n
    def __index__(self):
        return self.n

FDS = list(range(21)) + [@PROTO@]
ATTEMPTS = []
for n in FDS:
    ATTEMPTS.append(('int', n))
    ATTEMPTS.append(('index', Index(n)))
ATTEMPTS.append(('bool', True))
# Outside every root: an empty directory of the test's own, which it checks stays so.
ATTEMPTS.append(('str-subclass', LyingStr(LIE)))
ATTEMPTS.append(('bytes-subclass', LyingBytes(LIE.encode())))
ATTEMPTS.extend(EXTRA_ATTEMPTS)

def refusal(e):
    # The hook's PermissionError, or one a library wrapped it in (scipy.io re-raises
    # an OSError of its own from inside `except OSError`).
    for _ in range(5):
        if e is None:
            return None
        if isinstance(e, PermissionError) and 'not allowed in this sandbox' in str(e):
            return 'hook'
        e = CAUSE(e)
    return None

report = {}
for name, reader in READERS.items():
    for kind, arg in ATTEMPTS:
        key = name + '|' + kind
        counts = report.setdefault(key, {})
        try:
            reader(arg)
            # A descriptor attempt that returns opened it. A lying path's target is
            # outside every root: whether it was written the test sees on disk
            # (scipy.io.mmwrite returns even when it could not open its file).
            outcome = 'REACHED' if kind in ('int', 'index', 'bool') else 'returned'
        except Exception as e:
            outcome = refusal(e) or type(e).__name__
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == 'REACHED':
            print('REACHED', key, repr(arg))
print('REPORT', json.dumps(report))
plt.figure()
plt.plot([1, 2])
plt.savefig(OUT)
"#;

const GATE_ON_HEAD: &str = r#"
import json
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
import scipy.io
import scipy.io.wavfile
EXTRA_ATTEMPTS = []
LIE = '@OUTSIDE@/lie.bin'
# The gate refuses `__context__`: the wrapped refusal shows as the wrapper's type.
CAUSE = lambda e: None

class LyingStr(str):
    pass

class LyingBytes(bytes):
    pass
"#;

/// Gate off: the real `open`, `io` and `os`, and an `os.PathLike` whose `__fspath__`
/// answers with a lying `str` subclass. `closefd=False` everywhere: were an open to
/// succeed, its file object must not close the worker's descriptor behind it.
const GATE_OFF_HEAD: &str = r#"
G = srcpath.__globals__
os = G['os']
B = G['builtins']
imp = B.__import__
json = imp('json')
io = imp('io')
np = imp('numpy')
pd = imp('pandas')
plt = imp('matplotlib.pyplot', fromlist=['x'])
scipy = imp('scipy.io.wavfile')
real_open = B.open

class FsPath:
    def __fspath__(self):
        return LyingStr(LIE)

EXTRA_ATTEMPTS = [('pathlike', None)]
LIE = '@OUTSIDE@/lie.bin'
CAUSE = lambda e: e.__context__
"#;

const GATE_OFF_READERS: &str = r#"
READERS.update({
    'np.memmap': lambda f: np.memmap(f),
    'open': lambda f: real_open(f, 'rb', closefd=False),
    'open-write': lambda f: real_open(f, 'wb', closefd=False),
    'io.FileIO': lambda f: io.FileIO(f, 'r', closefd=False),
    'os.fdopen': lambda f: os.fdopen(f, 'rb', closefd=False),
    'os.listdir': lambda f: os.listdir(f),
    'os.scandir': lambda f: os.scandir(f),
    'os.listxattr': lambda f: os.listxattr(f),
    'os.chdir': lambda f: os.chdir(f),
    'os.fwalk(dir_fd)': lambda f: list(os.fwalk('.', dir_fd=f)),
    'os.mkdir(dir_fd)': lambda f: os.mkdir('canary-dir', dir_fd=f),
})
"#;

/// `{"reader|kind": {"outcome": count}}` from the probe's stdout.
type Report = BTreeMap<String, BTreeMap<String, u32>>;

fn report(o: &Outcome) -> Report {
    let line = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("REPORT "))
        .unwrap_or_else(|| panic!("no report: {:?}\nstdout: {}", o.result, o.stdout));
    serde_json::from_str(line).unwrap()
}

/// Runs `probe` on a one-worker pool after a first job (which names the worker), then a
/// figure; checks the canaries, the refusals and that the same worker still serves.
fn probe_and_check(exec: &Executor, probe_code: &str, gate_on: bool) {
    let first = exec
        .run(Job::new("plt.plot([1]); plt.savefig(OUT)"))
        .unwrap();
    expect_ok(&first);
    let pid = first.worker.clone().unwrap().pid;
    let (a, b) = protocol_pair(pid);
    let outside = tempfile::tempdir().unwrap();
    let code = probe_code
        .replace("@PROTO@", &format!("{a}, {b}"))
        .replace("@OUTSIDE@", outside.path().to_str().unwrap());
    let o = exec
        .run(Job::new(code).timeout(Duration::from_secs(60)))
        .unwrap();
    // An ordinary outcome: the probe ran to its end and the protocol carried its answer.
    expect_ok(&o);
    let written: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert!(written.is_empty(), "a lying path was written: {written:?}");
    assert!(
        !o.stdout.contains("REACHED"),
        "a descriptor was opened:\n{}",
        o.stdout
    );
    let report = report(&o);
    eprintln!("{}", summarize(&report));

    // Attempts per reader: (int, index) for each of 0-20 and the two protocol
    // descriptors, `True`, two lying subclasses, and gate off one lying PathLike.
    let per_reader = 2 * 23 + 3 + u32::from(!gate_on);
    let mut readers: BTreeMap<&str, u32> = BTreeMap::new();
    for (key, outcomes) in &report {
        let reader = key.split_once('|').unwrap().0;
        *readers.entry(reader).or_default() += outcomes.values().sum::<u32>();
        assert!(!outcomes.contains_key("REACHED"), "{key}: {outcomes:?}");
    }
    let table: Vec<_> = if gate_on {
        EXPECT.to_vec()
    } else {
        EXPECT.iter().chain(EXPECT_GATE_OFF).copied().collect()
    };
    assert_eq!(
        readers.keys().copied().collect::<Vec<_>>().len(),
        table.len(),
        "probed {:?}",
        readers.keys()
    );
    for (reader, descriptor, index, lie) in table {
        assert_eq!(readers.get(reader), Some(&per_reader), "{reader}: attempts");
        let kinds = [
            ("int", descriptor),
            ("bool", descriptor),
            ("index", index),
            ("str-subclass", lie),
            ("bytes-subclass", lie),
            ("pathlike", lie),
        ];
        for (kind, expected) in kinds {
            // Gate on, the bytes subclass cannot lie that it ends with '.npy' (the gate
            // refuses a string class with methods): np.save's own `endswith('.npy')`
            // refuses it first (bytes.endswith(str)), before any open.
            let expected = if gate_on && kind == "bytes-subclass" && reader == "np.save" {
                "TypeError"
            } else {
                expected
            };
            let expected = match expected {
                "" => continue,
                "hook*" if gate_on => "OSError",
                "hook*" => "hook",
                other => other,
            };
            let key = format!("{reader}|{kind}");
            let Some(outcomes) = report.get(&key) else {
                assert!(gate_on && kind == "pathlike", "{key} not probed");
                continue;
            };
            let allowed: Vec<&str> = expected.split('|').collect();
            assert!(
                !outcomes.is_empty() && outcomes.keys().all(|k| allowed.contains(&k.as_str())),
                "{key}: every attempt must end in {expected}, got {outcomes:?}"
            );
        }
    }

    // The same process serves the next job: nothing of its channel was touched.
    let next = exec
        .run(Job::new("plt.plot([1, 3, 2]); plt.savefig(OUT)"))
        .unwrap();
    expect_ok(&next);
    assert_eq!(
        next.worker.clone().unwrap().pid,
        pid,
        "the worker was replaced"
    );
    assert_eq!(png_size(&next.artifacts()[0].bytes), (640, 480));
}

/// One line per reader: its outcomes over all attempts.
fn summarize(report: &Report) -> String {
    let mut per_reader: BTreeMap<&str, BTreeMap<&str, u32>> = BTreeMap::new();
    for (key, outcomes) in report {
        let reader = key.split_once('|').unwrap().0;
        for (outcome, n) in outcomes {
            *per_reader
                .entry(reader)
                .or_default()
                .entry(outcome.as_str())
                .or_default() += n;
        }
    }
    per_reader
        .iter()
        .map(|(reader, outcomes)| format!("{reader:<24} {outcomes:?}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn gate_on_no_reader_opens_a_descriptor_of_the_worker() {
    let exec = builder()
        .policy(Policy::figures())
        .preload_pandas(true)
        .build()
        .unwrap();
    let code = format!("{GATE_ON_HEAD}{READERS}{PROBE}");
    probe_and_check(&exec, &code, true);
}

#[test]
fn gate_off_the_audit_hook_alone_refuses_every_descriptor() {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .preload_pandas(true)
        .build()
        .unwrap();
    // The lying PathLike is the `pathlike` attempt (placed once the class exists).
    let probe = PROBE.replace(
        "ATTEMPTS.extend(EXTRA_ATTEMPTS)",
        "ATTEMPTS.extend((k, FsPath()) for k, _ in EXTRA_ATTEMPTS)",
    );
    let code = format!("{LYING_CLASSES}{GATE_OFF_HEAD}{READERS}{GATE_OFF_READERS}{probe}");
    probe_and_check(&exec, &code, false);
}

/// Gate off, the job holds the real `os` and finds its answer pipe by `fstat` (no audit
/// event covers `fstat` or `write`): it writes a `Done` and a `Reset` of its own, then
/// spins, hoping to be taken for idle and handed the next job. Without the run's nonce,
/// which never reaches Python, the host refuses the forged answer at once: the job
/// answers `protocol_violation` (not a timeout: the spin did not run to the deadline),
/// its process is gone when the answer arrives, and the next job runs on another worker.
#[test]
fn a_job_that_answers_for_itself_is_killed_and_never_handed_the_next_job() {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .workers(1)
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let code = r#"
os = srcpath.__globals__['os']
def frame(text):
    data = text.encode()
    return len(data).to_bytes(4, 'little') + data
forged = frame('{"kind":"done","nonce":[0,0],"exec_ms":1.0,"stdout":"","stdout_dropped":0,'
               '"stderr":"","error":null,"artifacts":[],"artifacts_refused":[]}')
forged += frame('{"kind":"reset","nonce":[0,0],"housekeeping_failures":[],"state_changes":[]}')
pipes = []
for n in range(3, 1 << 16):
    try:
        mode = os.fstat(n).st_mode
    except OSError:
        continue
    if mode & 0o170000 == 0o010000:
        pipes.append(n)
for n in pipes:
    os.write(n, forged)
print('FORGED', pipes)
while True:
    pass
"#;
    let outcome = exec.run(Job::new(code)).unwrap();
    let pid = outcome.worker.as_ref().expect("it ran on a worker").pid;
    match outcome.failure() {
        Some(pyward::JobFailure::ProtocolViolation { detail }) => {
            assert!(detail.contains("nonce"), "{detail}");
        }
        other => panic!("expected a protocol violation, got {other:?}"),
    }
    assert!(
        !common::process_alive(pid),
        "the worker that forged its answer still runs"
    );
    let next = exec
        .run(Job::new("plt.plot([1, 2]); plt.savefig(OUT)"))
        .unwrap();
    expect_ok(&next);
    assert_ne!(next.worker.as_ref().unwrap().pid, pid);
}
