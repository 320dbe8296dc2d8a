//! Containment: each runtime layer holds by itself.
//!
//! Every attack runs twice, each time on a pool of its own:
//!
//! - **gate off** ([`Policy::gate_disabled_for_testing`]): the code reaches the real `os`
//!   module, the real builtins and the real `__import__` through
//!   `srcpath.__globals__`, so each attack is genuinely attempted at the OS level and
//!   what stops it is the curated runtime (above all the PEP 578 audit hook), the kernel
//!   (Landlock, seccomp, rlimits) or the supervisor, never a `NameError` of the curated
//!   namespace. Where the audit hook stops an attack, a second attack reaches the same
//!   target around it (a symlink in `tmp/`, which the hook judges lexically; a call that
//!   raises no audit event), so the kernel layer is proven to hold by itself too;
//! - **gate on** ([`Policy::figures`]): the attack written the way a model would write it
//!   (`import os; os.system(...)`), to record which layer stops it in production.
//!
//! After every attack the harmless canaries are checked (files the attack would have
//! written, a secret it would have printed, a TCP listener it would have reached, the
//! host process it would have signalled), and the pool must still serve a normal figure
//! job. The layer that stopped each attack is derived from the outcome and asserted
//! against the expected table; the table is printed (`cargo test --test it containment:: --
//! --nocapture`) for the README.
//!
//! Runs only where the kernel can enforce every layer ([`SandboxMode::Require`]); on
//! an older kernel it says so and returns, like `tests/sandbox.rs`.

use crate::common;

use std::fmt;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{builder, png_size, process_alive};
use pyward::gate::Policy;
use pyward::sandbox::SandboxMode;
use pyward::{Executor, Job, JobFailure, Outcome, PythonError};

/// The layer that stopped an attack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layer {
    /// The static gate rejected the code; nothing ran.
    Gate,
    /// The curated runtime in the worker: the PEP 578 audit hook, guarded import,
    /// module proxies, curated builtins, captured stdout, the recursion limit.
    Runtime,
    /// Kernel confinement: Landlock, seccomp or an rlimit answered with an error.
    Kernel,
    /// The supervisor: wall timeout, RSS ceiling, crash detection, bounded stderr.
    Supervisor,
    /// Output caps: artifact count and size, output checks.
    Validation,
    /// Nothing stopped it.
    NotStopped,
    /// Something else happened (an unexpected exception, an infrastructure error).
    Unexpected,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Gate => "gate",
            Layer::Runtime => "runtime",
            Layer::Kernel => "kernel",
            Layer::Supervisor => "supervisor",
            Layer::Validation => "validation",
            Layer::NotStopped => "NOT STOPPED",
            Layer::Unexpected => "unexpected",
        })
    }
}

/// Which layer stopped an attack, and the evidence for it.
#[derive(Clone, Debug)]
struct Verdict {
    layer: Layer,
    detail: String,
}

fn verdict(layer: Layer, detail: impl Into<String>) -> Verdict {
    Verdict {
        layer,
        detail: detail.into(),
    }
}

/// Values the attacks are written against.
struct Ctx {
    /// The supervisor: this test process.
    host_pid: u32,
    /// A TCP listener on 127.0.0.1 that no job may reach.
    listener: TcpListener,
    port: u16,
    /// A directory of the host holding a secret file (the "host's working directory").
    _host_dir: tempfile::TempDir,
    secret_path: PathBuf,
    secret: String,
    /// An empty directory outside the pool that jobs try to write into.
    outside: tempfile::TempDir,
    /// `KEY=VALUE` pairs of this process's environment (what `/proc/<pid>/environ` holds).
    host_env: Vec<String>,
}

impl Ctx {
    fn new() -> Ctx {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().unwrap().port();
        let host_dir = tempfile::tempdir().expect("tempdir");
        let secret = format!("pyward-secret-{}-{port}", std::process::id());
        let secret_path = host_dir.path().join("secret.txt");
        std::fs::write(&secret_path, &secret).unwrap();
        let host_env = std::env::vars()
            .filter(|(_, v)| v.len() >= 8)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        Ctx {
            host_pid: std::process::id(),
            listener,
            port,
            _host_dir: host_dir,
            secret_path,
            secret,
            outside: tempfile::tempdir().expect("tempdir"),
            host_env,
        }
    }

    /// Fills the `@NAME@` placeholders of an attack's code.
    fn fill(&self, code: &str) -> String {
        code.replace("@PID@", &self.host_pid.to_string())
            .replace("@PORT@", &self.port.to_string())
            .replace("@SECRET@", self.secret_path.to_str().unwrap())
            .replace("@OUTSIDE@", self.outside.path().to_str().unwrap())
    }
}

/// One side (gate on or gate off) of an attack.
struct Side {
    code: &'static str,
    expect: Layer,
}

/// A per-attack reading of an outcome that the generic classification cannot make
/// (a job that "succeeded" under a cap, a C function that returns -1 instead of
/// raising); `None` falls back to [`classify`].
type Evidence = fn(&Outcome) -> Option<Verdict>;

struct Attack {
    name: &'static str,
    on: Side,
    off: Side,
    evidence: Option<Evidence>,
    /// Per-job wall timeout, when the executor's 5 s is not the right one.
    timeout: Option<Duration>,
    /// Per-job memory ceiling (RSS), when the executor's 1 GiB is not the right one.
    memory_mib: Option<u64>,
    /// Check that the host's resident set stays roughly flat across the job.
    watch_host_rss: bool,
}

/// Code of the gate-off side starts with this: the real `os`, `sys`, builtins and
/// import, reached through a helper's globals (the gate would refuse every line of it).
/// The worker's import refuses the job the modules of its unimportable list (see
/// `tests/it/string_engines.rs`), so an attack that is to test the layers behind the
/// import takes them where a holder of the real `sys` finds them: in `sys.modules` for
/// those the worker keeps loaded (ctypes, socket, subprocess), in the worker's table of
/// modules it took out (`SEALED`: `_posixsubprocess`, `signal`) for the others.
///
/// While a job runs, `builtins.open` is the worker's own (issue 38): it places a write
/// to any path in out/ under the file's base name and answers reads of bare names from
/// the inputs. The attacks that test the layers behind it call the stock `open` it wraps
/// (`OPEN`), and make their symlinks in tmp/ (`T`) by full path, since the job's working
/// directory is the inputs' folder, which the audit hook refuses to write.
const GATE_OFF_PRELUDE: &str = "\
G = srcpath.__globals__
os = G['os']
sys = G['sys']
B = G['builtins']
imp = B.__import__
OPEN = G['_REAL_OPEN']
T = G['_TMP']
SEALED = G['_GUARDS'].SEALED
HOME = os.environ['HOME']
";

/// Gate-off code: the prelude, the attack, then (whatever the attack raised) a line on
/// stdout naming the canaries present in `HOME`. HOME is on the worker's private
/// scratch file system, which the host cannot see and the worker empties before it
/// answers, so the job itself, holding the real `os`, looks.
fn with_canary_report(attack: &str) -> String {
    let body: String = attack.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "{GATE_OFF_PRELUDE}try:\n{body}    pass\nfinally:\n    print('CANARIES', sorted(n for n in os.listdir(HOME) if n.startswith('canary-')))\n"
    )
}

/// The canary file names an attack would create in the worker's `HOME`: a directory
/// the sandbox lets the worker write (so a process that escaped seccomp could really
/// create them) and that the supervisor does not empty between jobs.
const HOME_CANARIES: &[&str] = &[
    "canary-system",
    "canary-popen",
    "canary-forkexec",
    "canary-execv",
    "canary-fork",
    "canary-ctypes",
];

/// Attacks that start a process; the fork bomb only runs when all of them were contained.
const PROCESS_ATTACKS: &[&str] = &[
    "os.system",
    "subprocess.Popen",
    "_posixsubprocess.fork_exec (no audit event)",
    "os.execv",
    "os.fork",
];

const GIB: u64 = 1 << 30;
const MAX_ARTIFACT_BYTES: u64 = 64 << 20;
const MAX_ARTIFACTS: usize = 16;
const STDOUT_CAP: usize = 64 * 1024;

fn attacks() -> Vec<Attack> {
    let a = |name, on: (&'static str, Layer), off: (&'static str, Layer)| Attack {
        name,
        on: Side {
            code: on.0,
            expect: on.1,
        },
        off: Side {
            code: off.0,
            expect: off.1,
        },
        evidence: None,
        timeout: None,
        memory_mib: None,
        watch_host_rss: false,
    };
    use Layer::{Gate, Kernel, Runtime, Supervisor, Validation};
    // The gate-off code of a "via a symlink" attack passes the audit hook, which judges
    // paths lexically (the link lives in tmp/), so the kernel sees the real target.
    vec![
        a(
            "read /etc/passwd",
            ("print(open('/etc/passwd').read())", Runtime),
            ("print(OPEN('/etc/passwd').read())", Runtime),
        ),
        a(
            "read /etc/passwd via a symlink in tmp/",
            (
                "import os\nos.symlink('/etc/passwd', 'pw')\nprint(open('pw').read())",
                Gate,
            ),
            (
                "os.symlink('/etc/passwd', T + '/pw')\nprint(OPEN(T + '/pw').read())",
                Kernel,
            ),
        ),
        a(
            "read /etc/passwd with np.fromfile",
            ("print(np.fromfile('/etc/passwd', dtype=np.uint8).tobytes())", Runtime),
            ("print(np.fromfile('/etc/passwd', dtype=np.uint8).tobytes())", Runtime),
        ),
        a(
            "read /proc/<supervisor>/environ",
            ("print(open('/proc/@PID@/environ', 'rb').read())", Runtime),
            ("print(OPEN('/proc/@PID@/environ', 'rb').read())", Runtime),
        ),
        a(
            "read /proc/<supervisor>/environ via a symlink",
            (
                "import os\nos.symlink('/proc/@PID@/environ', 'env')\nprint(open('env', 'rb').read())",
                Gate,
            ),
            (
                "os.symlink('/proc/@PID@/environ', T + '/env')\nprint(OPEN(T + '/env', 'rb').read())",
                Kernel,
            ),
        ),
        a(
            "read /proc/<supervisor>/mem",
            (
                "f = open('/proc/@PID@/mem', 'rb')\nf.seek(0x400000)\nprint(f.read(64))",
                Runtime,
            ),
            (
                "f = OPEN('/proc/@PID@/mem', 'rb')\nf.seek(0x400000)\nprint(f.read(64))",
                Runtime,
            ),
        ),
        a(
            "read /proc/<supervisor>/mem via a symlink",
            (
                "import os\nos.symlink('/proc/@PID@/mem', 'mem')\nf = open('mem', 'rb')\nprint(f.read(64))",
                Gate,
            ),
            (
                "os.symlink('/proc/@PID@/mem', T + '/mem')\nf = OPEN(T + '/mem', 'rb')\nf.seek(0x400000)\nprint(f.read(64))",
                Kernel,
            ),
        ),
        a(
            "read a host file by absolute path",
            ("print(open('@SECRET@').read())", Runtime),
            ("print(OPEN('@SECRET@').read())", Runtime),
        ),
        a(
            "read a host file via a symlink",
            (
                "import os\nos.symlink('@SECRET@', 's')\nprint(open('s').read())",
                Gate,
            ),
            (
                "os.symlink('@SECRET@', T + '/s')\nprint(OPEN(T + '/s').read())",
                Kernel,
            ),
        ),
        a(
            "read a host file with np.loadtxt",
            ("print(np.loadtxt('@SECRET@', dtype=str))", Runtime),
            ("print(np.loadtxt('@SECRET@', dtype=str))", Runtime),
        ),
        Attack {
            evidence: Some(written_as_artifact),
            ..a(
            "write a file outside out/",
            ("open('@OUTSIDE@/written.txt', 'w').write('escaped')", Runtime),
            ("OPEN('@OUTSIDE@/written.txt', 'w').write('escaped')", Runtime),
        )},
        a(
            "write a file outside out/ via a symlink",
            (
                "import os\nos.symlink('@OUTSIDE@/linked.txt', 'l')\nopen('l', 'w').write('escaped')",
                Gate,
            ),
            (
                "os.symlink('@OUTSIDE@/linked.txt', T + '/l')\nOPEN(T + '/l', 'w').write('escaped')",
                Kernel,
            ),
        ),
        Attack {
            evidence: Some(written_as_artifact),
            ..a(
            "write a file outside out/ with np.savetxt",
            ("np.savetxt('@OUTSIDE@/savetxt.txt', np.arange(3))", Runtime),
            ("np.savetxt('@OUTSIDE@/savetxt.txt', np.arange(3))", Runtime),
        )},
        // `shutil` is a view of copies through the job's `open` and an `rmtree` that
        // deletes nothing (python/prelude/file_copies.py); gate off, `import shutil`
        // gives the same view.
        a(
            "read a host file with shutil.copy",
            (
                "import shutil\nshutil.copy('@SECRET@', 'secret.txt')\nprint(open('secret.txt').read())",
                Runtime,
            ),
            (
                "import shutil\nshutil.copy('@SECRET@', 'secret.txt')\nprint(open('secret.txt').read())",
                Runtime,
            ),
        ),
        Attack {
            evidence: Some(written_as_artifact),
            ..a(
            "write a file outside out/ with shutil.copy",
            (
                "import shutil\nopen('x.txt', 'w').write('escaped')\nshutil.copy('x.txt', '@OUTSIDE@/copied.txt')",
                Runtime,
            ),
            (
                "import shutil\nopen('x.txt', 'w').write('escaped')\nshutil.copy('x.txt', '@OUTSIDE@/copied.txt')",
                Runtime,
            ),
        )},
        a(
            "remove a host folder with shutil.rmtree",
            ("import shutil\nshutil.rmtree('@OUTSIDE@')", Runtime),
            ("import shutil\nshutil.rmtree('@OUTSIDE@')", Runtime),
        ),
        Attack {
            evidence: Some(system_returned_minus_one),
            ..a(
                "os.system",
                (
                    "import os\nos.system('touch ' + os.environ['HOME'] + '/canary-system')",
                    Gate,
                ),
                (
                    "rc = os.system('touch ' + HOME + '/canary-system')\nprint('rc', rc)",
                    Runtime,
                ),
            )
        },
        a(
            "subprocess.Popen",
            (
                "import subprocess\nsubprocess.Popen(['touch', 'canary-popen']).wait()",
                Gate,
            ),
            (
                "sp = sys.modules['subprocess']\nsp.Popen(['touch', HOME + '/canary-popen']).wait()",
                Runtime,
            ),
        ),
        // What subprocess.Popen calls after its audit event; it raises none itself.
        // The argument list is CPython 3.11's (23 arguments).
        a(
            "_posixsubprocess.fork_exec (no audit event)",
            (
                "import subprocess\nsubprocess.run(['touch', 'canary-forkexec'])",
                Gate,
            ),
            (
                "ps = SEALED['_posixsubprocess']\nr, w = os.pipe()\nps.fork_exec([b'touch', (HOME + '/canary-forkexec').encode()], [b'/usr/bin/touch'], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, -1, -1, None, True)",
                Kernel,
            ),
        ),
        a(
            "os.execv",
            (
                "import os\nos.execv('/bin/sh', ['sh', '-c', 'touch canary-execv'])",
                Gate,
            ),
            (
                "os.execv('/bin/sh', ['sh', '-c', 'touch ' + HOME + '/canary-execv'])",
                Runtime,
            ),
        ),
        a(
            "os.fork",
            (
                "import os\nif os.fork() == 0:\n    open('canary-fork', 'w').write('child')\n    os._exit(0)",
                Gate,
            ),
            (
                "pid = os.fork()\nif pid == 0:\n    OPEN(HOME + '/canary-fork', 'w').write('child')\n    os._exit(0)\nos.waitpid(pid, 0)",
                Runtime,
            ),
        ),
        a(
            "TCP connect to a listener on 127.0.0.1",
            (
                "import socket\ns = socket.create_connection(('127.0.0.1', @PORT@))\ns.sendall(b'escaped')",
                Gate,
            ),
            (
                "socket = sys.modules['socket']\ns = socket.create_connection(('127.0.0.1', @PORT@), timeout=2)\ns.sendall(b'escaped')",
                Runtime,
            ),
        ),
        Attack {
            evidence: Some(system_returned_minus_one),
            ..a(
                "ctypes: libc system()",
                (
                    "import ctypes\nctypes.CDLL(None).system(b'touch canary-ctypes')",
                    Gate,
                ),
                (
                    "ctypes = sys.modules['ctypes']\nlibc = ctypes.CDLL(None, use_errno=True)\nrc = libc.system(('touch ' + HOME + '/canary-ctypes').encode())\nprint('rc', rc, 'errno', ctypes.get_errno())",
                    Runtime,
                ),
            )
        },
        a(
            "os.kill(supervisor, SIGTERM)",
            ("import os, signal\nos.kill(@PID@, signal.SIGTERM)", Gate),
            ("os.kill(@PID@, 15)", Runtime),
        ),
        a(
            "SIGTERM to the supervisor via pidfd (no audit event)",
            (
                "import os, signal\nsignal.pidfd_send_signal(os.pidfd_open(@PID@), signal.SIGTERM)",
                Gate,
            ),
            (
                "fd = os.pidfd_open(@PID@)\nSEALED['signal'].pidfd_send_signal(fd, 15)",
                Kernel,
            ),
        ),
        a(
            "fork bomb",
            ("import os\nwhile True:\n    os.fork()", Gate),
            ("while True:\n    os.fork()", Runtime),
        ),
        a(
            "10 GiB np.ones",
            ("a = np.ones(10 * 2**30, dtype=np.uint8)", Kernel),
            ("a = np.ones(10 * 2**30, dtype=np.uint8)", Kernel),
        ),
        // A lower RSS ceiling for this job (the address-space limit stays at its 4 GiB)
        // keeps the creep short on a loaded machine.
        Attack {
            memory_mib: Some(512),
            timeout: Some(Duration::from_secs(30)),
            ..a(
            "memory creep in 32 MiB steps",
            (
                "keep = []\nwhile True:\n    keep.append(np.ones(2**25, dtype=np.uint8))",
                Supervisor,
            ),
            (
                "keep = []\nwhile True:\n    keep.append(np.ones(2**25, dtype=np.uint8))",
                Supervisor,
            ),
        )},
        Attack {
            evidence: Some(print_flood),
            watch_host_rss: true,
            ..a(
                "a gigabyte of print()",
                (
                    "for _ in range(1024):\n    print('x' * 2**20)\nplt.plot([1]); plt.savefig(OUT)",
                    Runtime,
                ),
                (
                    "for _ in range(1024):\n    print('x' * 2**20)\nplt.plot([1]); plt.savefig(OUT)",
                    Runtime,
                ),
            )
        },
        Attack {
            evidence: Some(print_flood),
            watch_host_rss: true,
            timeout: Some(Duration::from_secs(60)),
            ..a(
                "a gigabyte written to fd 1 (os.write)",
                (
                    "import os\nfor _ in range(1024):\n    os.write(1, b'x' * 2**20)",
                    Gate,
                ),
                (
                    "chunk = b'x' * 2**20\nn = 0\nfor _ in range(1024):\n    n += os.write(1, chunk)\nprint('wrote', n)\nplt.plot([1]); plt.savefig(OUT)",
                    Supervisor,
                ),
            )
        },
        a(
            "huge figure (figsize*dpi = 100000x100000)",
            (
                "plt.figure(figsize=(1000, 1000), dpi=100)\nplt.plot([1, 2])\nplt.savefig(OUT)",
                Kernel,
            ),
            (
                "plt.figure(figsize=(1000, 1000), dpi=100)\nplt.plot([1, 2])\nplt.savefig(OUT)",
                Kernel,
            ),
        ),
        Attack {
            evidence: Some(file_capped),
            ..a(
                "write a 5 GB file",
                (
                    "chunk = np.zeros(2**30, dtype=np.uint8)\nfor i in range(5):\n    np.save(OUT.replace('.png', f'_{i}.npy'), chunk)",
                    Kernel,
                ),
                (
                    "chunk = b'\\0' * 2**20\nf = OPEN(T + '/big.bin', 'wb', buffering=0)\ntry:\n    for _ in range(5 * 1024):\n        f.write(chunk)\nfinally:\n    f.close()\n    print('size', os.path.getsize(T + '/big.bin'))",
                    Kernel,
                ),
            )
        },
        Attack {
            evidence: Some(artifacts_capped),
            timeout: Some(Duration::from_secs(60)),
            ..a(
                "100,000 files in out/",
                (
                    "one = np.ones(1)\nfor i in range(100000):\n    np.save(OUT.replace('.png', f'_{i}.npy'), one)\nprint('files', i + 1)\nplt.plot([1]); plt.savefig(OUT)",
                    Validation,
                ),
                (
                    "d = os.path.dirname(OUT)\nfor i in range(100000):\n    fd = os.open(d + '/x%06d.bin' % i, os.O_CREAT | os.O_WRONLY, 0o600)\n    os.write(fd, b'x')\n    os.close(fd)\nprint('files', len(os.listdir(d)))\nplt.plot([1]); plt.savefig(OUT)",
                    Kernel,
                ),
            )
        },
        a(
            "infinite recursion",
            ("def f(n):\n    return f(n + 1)\n\nf(0)", Runtime),
            (
                "sys.setrecursionlimit(10**7)\ndef f():\n    return list(map(lambda _: f(), [0]))\n\nf()",
                Supervisor,
            ),
        ),
        Attack {
            timeout: Some(Duration::from_secs(1)),
            ..a(
                "infinite loop",
                ("while True:\n    pass", Supervisor),
                ("while True:\n    pass", Supervisor),
            )
        },
        a(
            "C-level crash: os.abort()",
            ("import os\nos.abort()", Gate),
            ("os.abort()", Supervisor),
        ),
        a(
            "C-level crash: ctypes read of address 0",
            ("import ctypes\nctypes.string_at(0, 8)", Gate),
            ("ctypes = sys.modules['ctypes']\nctypes.string_at(0, 8)", Runtime),
        ),
    ]
}

// ------------------------------------------------------------------ classification

/// The layer an outcome shows, from its failure alone.
fn classify(o: &Outcome) -> Verdict {
    match o.failure() {
        None => verdict(Layer::NotStopped, "job succeeded"),
        Some(JobFailure::Rejected { violations, .. }) => verdict(
            Layer::Gate,
            format!(
                "rejected ({})",
                violations
                    .first()
                    .map_or_else(|| "?".into(), |v| format!("{:?}", v.rule))
            ),
        ),
        Some(JobFailure::BadInput(b)) => verdict(Layer::Gate, format!("bad input: {b}")),
        Some(JobFailure::PythonError(e)) => classify_exception(e),
        Some(JobFailure::Timeout { limit, .. }) => {
            verdict(Layer::Supervisor, format!("Timeout ({limit:?}), SIGKILL"))
        }
        Some(JobFailure::WorkerCrashed { exit, .. }) => {
            verdict(Layer::Supervisor, format!("WorkerCrashed ({exit})"))
        }
        // The worker reports a MemoryError as a finished job (it measured its own
        // exec time); the watchdog's RSS kill has no exec time. `RLIMIT_AS` is what
        // makes a huge allocation raise MemoryError instead of growing.
        Some(JobFailure::MemoryExceeded { .. }) if o.timings.exec > Duration::ZERO => {
            verdict(Layer::Kernel, "MemoryError (RLIMIT_AS) → MemoryExceeded")
        }
        Some(JobFailure::MemoryExceeded { .. }) => {
            verdict(Layer::Supervisor, "MemoryExceeded (RSS ceiling, SIGKILL)")
        }
        Some(JobFailure::InvalidOutput { check, .. }) => {
            verdict(Layer::Validation, format!("InvalidOutput ({check})"))
        }
        Some(JobFailure::ScratchFull { which, .. }) => verdict(
            Layer::Kernel,
            format!("scratch tmpfs full ({which:?}) → ScratchFull"),
        ),
        // No attack here is cancelled; a failure kind added later is not a stop.
        Some(other) => verdict(Layer::NotStopped, format!("unclassified: {other}")),
    }
}

/// `N` of a message that starts with `[Errno N]`.
fn errno_of(message: &str) -> Option<i32> {
    message
        .strip_prefix("[Errno ")?
        .split(']')
        .next()?
        .parse()
        .ok()
}

fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "EPERM",
        libc::EACCES => "EACCES",
        libc::EFBIG => "EFBIG",
        libc::ENOSYS => "ENOSYS",
        _ => "?",
    }
}

fn classify_exception(e: &PythonError) -> Verdict {
    let t = e.type_name.as_str();
    match t {
        "ImportError" | "ModuleNotFoundError" | "NameError" | "AttributeError" => {
            return verdict(Layer::Runtime, t);
        }
        "RecursionError" => return verdict(Layer::Runtime, "RecursionError (recursion limit)"),
        _ => {}
    }
    match errno_of(&e.message) {
        Some(n @ (libc::EPERM | libc::EACCES | libc::EFBIG | libc::ENOSYS)) => {
            verdict(Layer::Kernel, format!("{t} {}", errno_name(n)))
        }
        // The PEP 578 audit hook: PermissionError without an errno.
        None if t == "PermissionError" && e.message.contains(" is not allowed in this sandbox") => {
            let what = e
                .message
                .split(" is not allowed")
                .next()
                .unwrap_or_default();
            verdict(Layer::Runtime, format!("audit hook refused {what}"))
        }
        // The job's `open` (numpy's C code, fromfile and tofile, looks it up in the
        // job's builtins too) reads only the inputs, the job's outputs and tmp/, and
        // names the inputs instead.
        None if t == "PermissionError"
            && e.message.contains("is not allowed; read inputs by name") =>
        {
            verdict(Layer::Runtime, "the job's open refused the path")
        }
        // The job's shutil: copies go through its `open`; rmtree deletes nothing.
        None if t == "PermissionError" && e.message.starts_with("shutil.") => {
            verdict(Layer::Runtime, "the job's shutil refused the path")
        }
        _ => verdict(
            Layer::Unexpected,
            format!("{t}: {}", e.message.chars().take(120).collect::<String>()),
        ),
    }
}

/// `os.system()` and libc `system()` report a refused process creation as a return
/// value of -1 rather than an exception; the job prints it.
fn system_returned_minus_one(o: &Outcome) -> Option<Verdict> {
    let rc = o.stdout.strip_prefix("rc ")?;
    if rc.trim() == "-1" {
        return Some(verdict(
            Layer::Kernel,
            "system() = -1: no process could be created",
        ));
    }
    if let Some(errno) = rc
        .strip_prefix("-1 errno ")
        .and_then(|e| e.trim().parse::<i32>().ok())
    {
        return Some(verdict(
            Layer::Kernel,
            format!("system() = -1, errno {}", errno_name(errno)),
        ));
    }
    Some(verdict(
        Layer::NotStopped,
        format!("system() = {}", rc.trim()),
    ))
}

/// A write to a path outside the job "succeeds": the job's `open` (and numpy's text
/// writer, which goes through the same mapping) wrote the file into out/ under its base
/// name as an artifact that names the path asked for; the canaries check that nothing
/// appeared outside.
fn written_as_artifact(o: &Outcome) -> Option<Verdict> {
    if o.failure().is_some() {
        return None;
    }
    let written = o.artifacts().iter().find(|a| {
        a.requested
            .as_deref()
            .is_some_and(|r| r.ends_with(&format!("/{}", a.name)))
    });
    Some(match written {
        Some(a) => verdict(
            Layer::Runtime,
            format!("the job's open wrote it to out/ as the artifact {}", a.name),
        ),
        None => verdict(Layer::NotStopped, "job succeeded, no artifact of the write"),
    })
}

/// A print flood "succeeds": what must hold is that the host got at most the cap.
fn print_flood(o: &Outcome) -> Option<Verdict> {
    if o.failure().is_some() {
        return None;
    }
    if o.stdout.len() > STDOUT_CAP {
        return Some(verdict(
            Layer::NotStopped,
            format!("{} bytes of stdout reached the host", o.stdout.len()),
        ));
    }
    if o.stdout.starts_with("wrote ") {
        // os.write to fd 1: the worker's fd 1 is its stderr pipe, whose tail the
        // supervisor keeps bounded.
        return (o.stdout.trim() == format!("wrote {GIB}")).then(|| {
            verdict(
                Layer::Supervisor,
                "1 GiB through the stderr pipe, bounded tail kept",
            )
        });
    }
    (o.stdout_dropped + o.stdout.len() as u64 == GIB + 1024).then(|| {
        verdict(
            Layer::Runtime,
            format!(
                "stdout capped at {} KiB, rest dropped",
                o.stdout.len() >> 10
            ),
        )
    })
}

/// Writing past `RLIMIT_FSIZE`: numpy (`np.save`) reports a short write without an
/// errno; the gate-off job writes through the real `open` and prints the size its file
/// reached.
fn file_capped(o: &Outcome) -> Option<Verdict> {
    let Some(JobFailure::PythonError(e)) = o.failure() else {
        return None;
    };
    if let Some(size) = o.stdout.strip_prefix("size ") {
        let size: u64 = size.trim().parse().ok()?;
        return Some(
            if size == MAX_ARTIFACT_BYTES && errno_of(&e.message) == Some(libc::EFBIG) {
                verdict(
                    Layer::Kernel,
                    "OSError EFBIG, file stopped at 64 MiB (RLIMIT_FSIZE)",
                )
            } else {
                verdict(Layer::NotStopped, format!("file reached {size} bytes"))
            },
        );
    }
    // numpy: "<n> requested and <m> written"; `np.save` wrote its header first.
    let mut numbers = e.message.split(' ').filter_map(|w| w.parse::<u64>().ok());
    let (requested, written) = (numbers.next()?, numbers.next()?);
    let header = 4096;
    Some(
        if e.message.ends_with(" written")
            && written < requested
            && written + header >= MAX_ARTIFACT_BYTES
            && written <= MAX_ARTIFACT_BYTES
        {
            verdict(
                Layer::Kernel,
                "short write, file stopped at 64 MiB (RLIMIT_FSIZE)",
            )
        } else {
            verdict(Layer::Unexpected, e.message.clone())
        },
    )
}

/// A flood of output files: the scratch file system stops it at its file limit
/// (`ScratchFull`, classified as the kernel layer); were every file really created (the
/// job prints how many), the job must fail validation or have its artifacts capped.
fn artifacts_capped(o: &Outcome) -> Option<Verdict> {
    if o.stdout.trim() != "files 100000" {
        return None;
    }
    Some(match &o.result {
        Ok(artifacts) if artifacts.len() <= MAX_ARTIFACTS => verdict(
            Layer::Validation,
            format!("{} of 100,001 files returned", artifacts.len()),
        ),
        Ok(artifacts) => verdict(
            Layer::NotStopped,
            format!("{} artifacts returned", artifacts.len()),
        ),
        Err(JobFailure::InvalidOutput { check, .. }) => verdict(
            Layer::Validation,
            format!("InvalidOutput ({check}), 100,000 files created"),
        ),
        Err(_) => classify(o),
    })
}

// ------------------------------------------------------------------ running

/// One attack's result on one pool.
struct Run {
    verdict: Verdict,
    /// Canary effects found, a pool that stopped serving, ...
    problems: Vec<String>,
}

fn host_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in /proc/self/status");
    kib << 10
}

fn executor(gate_on: bool) -> Executor {
    let policy = if gate_on {
        Policy::figures()
    } else {
        Policy::gate_disabled_for_testing()
    };
    let mut builder = builder();
    // The pool's tree on tmpfs when there is one: the 100,000-file flood is dominated
    // by the file system (creating a file on a busy ext4 costs up to a millisecond,
    // on tmpfs microseconds). Nothing about confinement depends on where it lives.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() && tempfile::tempdir_in(shm).is_ok() {
        builder = builder.work_dir(shm);
    }
    builder
        .policy(policy)
        .sandbox(SandboxMode::Require)
        .timeout(Duration::from_secs(5))
        .memory_limit_mib(1024)
        .stdout_cap(STDOUT_CAP)
        .max_artifacts(MAX_ARTIFACTS)
        .max_artifact_bytes(MAX_ARTIFACT_BYTES)
        .build()
        .expect("a pool with every sandbox layer enforced")
}

/// Everything an attack could have left behind, on the host side.
fn canary_problems(ctx: &Ctx, home: &Path, o: &Outcome) -> Vec<String> {
    let mut problems = Vec::new();
    let outside: Vec<_> = std::fs::read_dir(ctx.outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    if !outside.is_empty() {
        problems.push(format!("files written outside the pool: {outside:?}"));
    }
    for name in HOME_CANARIES {
        let reported = o
            .stdout
            .lines()
            .any(|l| l.starts_with("CANARIES") && l.contains(&format!("'{name}'")));
        if home.join(name).exists() || reported {
            problems.push(format!("canary {name} was created: a process ran"));
        }
    }
    match ctx.listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Ok((_, peer)) => problems.push(format!("the listener accepted a connection from {peer}")),
        Err(e) => problems.push(format!("listener: {e}")),
    }
    let seen = format!("{}\n{:?}", o.stdout, o.failure());
    if seen.contains(&ctx.secret) {
        problems.push("the host's secret file was read".into());
    }
    if seen.contains("root:x:0:0") {
        problems.push("/etc/passwd was read".into());
    }
    if let Some(var) = ctx.host_env.iter().find(|v| seen.contains(v.as_str())) {
        problems.push(format!("the host's environment leaked: {var}"));
    }
    if !process_alive(ctx.host_pid) {
        problems.push("the supervisor process is gone".into());
    }
    problems
}

/// Runs one side of every attack on a pool of its own.
fn run_suite(ctx: &Ctx, attacks: &[Attack], gate_on: bool) -> Vec<Run> {
    let exec = executor(gate_on);
    let home = exec.work_root().join("w0").join("home");
    assert!(home.is_dir(), "worker HOME {}", home.display());
    let figure = || -> Result<(), String> {
        let o = exec
            .run(Job::new("plt.plot([1, 2, 3]); plt.savefig(OUT)"))
            .map_err(|e| format!("pool error on the next job: {e}"))?;
        match o.artifact("figure.png") {
            Some(png) if o.is_success() && png_size(&png.bytes) == (640, 480) => {}
            _ => return Err(format!("the next figure job failed: {:?}", o.result)),
        }
        let sandbox = &o.worker.as_ref().unwrap().sandbox;
        if !sandbox.is_full() {
            return Err(format!("worker not fully confined: {sandbox:?}"));
        }
        Ok(())
    };
    let mut runs: Vec<Run> = Vec::new();
    for attack in attacks {
        let side = if gate_on { &attack.on } else { &attack.off };
        // Never start a real fork bomb on a pool whose workers were seen to start a
        // process.
        if attack.name == "fork bomb" {
            let escaped = attacks
                .iter()
                .zip(&runs)
                .filter(|(a, _)| PROCESS_ATTACKS.contains(&a.name))
                .any(|(_, r)| r.verdict.layer == Layer::NotStopped || !r.problems.is_empty());
            if escaped {
                runs.push(Run {
                    verdict: verdict(Layer::Unexpected, "skipped"),
                    problems: vec!["skipped: a process attack was not contained".into()],
                });
                continue;
            }
        }
        let code = if gate_on {
            ctx.fill(side.code)
        } else if side.code.contains("canary-") {
            with_canary_report(&ctx.fill(side.code))
        } else {
            format!("{GATE_OFF_PRELUDE}{}", ctx.fill(side.code))
        };
        let mut job = Job::new(code);
        if let Some(t) = attack.timeout {
            job = job.timeout(t);
        }
        if let Some(mib) = attack.memory_mib {
            job = job.memory_limit(mib << 20);
        }
        let rss_before = host_rss_bytes();
        let started = Instant::now();
        let outcome = exec.run(job);
        let elapsed = started.elapsed();
        let mut problems = Vec::new();
        let verdict = match &outcome {
            Ok(o) => {
                problems.extend(canary_problems(ctx, &home, o));
                attack
                    .evidence
                    .and_then(|evidence| evidence(o))
                    .unwrap_or_else(|| classify(o))
            }
            Err(e) => verdict(Layer::Unexpected, format!("executor error: {e}")),
        };
        if attack.watch_host_rss {
            let grown = host_rss_bytes().saturating_sub(rss_before);
            if grown > 256 << 20 {
                problems.push(format!("host RSS grew by {} MiB", grown >> 20));
            }
        }
        if let Err(e) = figure() {
            problems.push(e);
        }
        eprintln!(
            "[gate {}] {:<45} {:>6.2}s  {}: {}",
            if gate_on { "on " } else { "off" },
            attack.name,
            elapsed.as_secs_f64(),
            verdict.layer,
            verdict.detail
        );
        runs.push(Run { verdict, problems });
    }
    runs
}

/// The containment proof: with the gate off each attack fails inside the worker, at the
/// layer the table says, its canary is absent and the pool serves the next job; with
/// the gate on, the table records which layer stops the attack as a model writes it.
#[test]
fn every_attack_is_contained_with_the_gate_off_and_the_table_holds() {
    let support = pyward::sandbox::probe();
    if !support.require_ok {
        // CI proves containment on a kernel that has every layer: there this fails.
        assert!(
            std::env::var_os("PYWARD_REQUIRE_SANDBOX").is_none(),
            "PYWARD_REQUIRE_SANDBOX is set and this kernel cannot enforce every layer: \
             {support:?}"
        );
        eprintln!(
            "SKIPPED: this kernel cannot enforce every sandbox layer ({support:?}); \
             the containment proof needs Landlock ABI >= 6 and seccomp"
        );
        return;
    }
    let ctx = Ctx::new();
    let attacks = attacks();
    for name in PROCESS_ATTACKS {
        assert!(attacks.iter().any(|a| a.name == *name), "no attack {name}");
    }
    let (on, off) = std::thread::scope(|s| {
        let on = s.spawn(|| run_suite(&ctx, &attacks, true));
        let off = s.spawn(|| run_suite(&ctx, &attacks, false));
        (on.join().unwrap(), off.join().unwrap())
    });

    // Host-specific paths and the pid out of the table, so it can go into the README.
    let cell = |r: &Run| {
        format!("{}: {}", r.verdict.layer, r.verdict.detail)
            .replace(ctx.secret_path.to_str().unwrap(), "<host file>")
            .replace(ctx.outside.path().to_str().unwrap(), "<outside>")
            .replace(&ctx.host_pid.to_string(), "<supervisor>")
            .replace('|', "\\|")
    };
    let mut table = String::from("| attack | gate on | gate off |\n| --- | --- | --- |\n");
    let mut failures = Vec::new();
    for ((attack, on), off) in attacks.iter().zip(&on).zip(&off) {
        table.push_str(&format!(
            "| {} | {} | {} |\n",
            attack.name,
            cell(on),
            cell(off)
        ));
        for (side, run, gate) in [(&attack.on, on, "on"), (&attack.off, off, "off")] {
            if run.verdict.layer != side.expect {
                failures.push(format!(
                    "{} [gate {gate}]: expected {}, got {}",
                    attack.name,
                    side.expect,
                    cell(run)
                ));
            }
            for p in &run.problems {
                failures.push(format!("{} [gate {gate}]: {p}", attack.name));
            }
        }
    }
    println!("\n{table}");
    assert!(
        failures.is_empty(),
        "containment failures:\n  {}\n\n{table}",
        failures.join("\n  ")
    );
    // The listener saw nothing over the whole run, and the supervisor is still here.
    assert_eq!(
        ctx.listener.accept().map(|_| ()).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    assert!(process_alive(std::process::id()));
}
