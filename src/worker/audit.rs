//! The PEP 578 audit hook: the runtime layer's last word on what the interpreter may do.
//!
//! Registered through the C API (`PySys_AddAuditHook`) *before* the interpreter is
//! initialised, as Python's documentation asks of any hook meant as a security control:
//! a hook added later from Python could be raced or removed, this one cannot be
//! removed at all. It is inert during warm-up (the scientific stack reads its own
//! files, compiles, imports) and is armed once, right before the sandbox goes on.
//!
//! Once armed it refuses, for everyone in the process:
//! - `open` and path-taking `os.*` events outside the allowed roots (read roots: the
//!   Python install, `src/`, fonts; write roots: `out/`, `tmp/`, the private home);
//! - starting programs (`subprocess.Popen`, `os.system`, `os.exec*`, `os.posix_spawn`,
//!   `os.spawn*`, `os.fork*`), signalling (`os.kill*`), sockets (`socket.*`), foreign
//!   calls (`ctypes.*`), unpickling and unmarshalling, heap walking (`gc.get_*`),
//!   memory maps, and new audit hooks;
//!
//! and, when the innermost Python frame is the job's own code (`<job>`): `compile`,
//! `exec`, unmarshalling, creating code or function objects, frame access (`sys._getframe`), tracing
//! and profiling. Library code may still compile (dataclasses, namedtuple do) and read
//! frames (`warnings` does): that is attributed to the library, not the job.
//!
//! Numpy and other C code can open files without a Python-level `open`: the kernel
//! layer (Landlock) is what stops those.

use std::ffi::c_int;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Paths the armed hook lets the process open.
#[derive(Debug, Default)]
pub struct Roots {
    /// Readable hierarchies.
    pub read: Vec<PathBuf>,
    /// Readable and writable hierarchies.
    pub write: Vec<PathBuf>,
}

static ROOTS: OnceLock<Roots> = OnceLock::new();
static ARMED: AtomicBool = AtomicBool::new(false);

/// Registers the hook. Must run before the interpreter is initialised.
pub fn register() -> Result<(), String> {
    super::cpython::add_audit_hook(&ARMED, decide)
}

/// Arms the hook with the allowed roots. Irreversible.
///
/// A root reached through a symlink (a symlinked virtualenv or work directory) is also
/// allowed under its resolved path: libraries open files by either spelling (matplotlib
/// reopens fonts by their resolved path in a forked worker). The hook compares paths
/// as text; Landlock, which resolves them itself, grants both spellings alike.
pub fn arm(mut roots: Roots) {
    for list in [&mut roots.read, &mut roots.write] {
        let resolved: Vec<PathBuf> = list
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .filter(|r| !list.contains(r))
            .collect();
        list.extend(resolved);
    }
    let _ = ROOTS.set(roots);
    ARMED.store(true, Ordering::SeqCst);
}

/// What the hook decides for one event.
enum Decision {
    Allow,
    Deny(String),
}

/// Events refused for everyone once armed, by exact name or by prefix (ending in `.`).
const DENY_ALWAYS: &[&str] = &[
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "pty.spawn",
    "socket.",
    "ctypes.",
    "pickle.find_class",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "mmap.__new__",
    "sys.addaudithook",
    "urllib.Request",
    "webbrowser.open",
    "shutil.",
    "os.chmod",
    "os.chown",
    "os.chflags",
    "os.lchown",
    "os.putenv",
    "os.unsetenv",
    "os.startfile",
    "resource.setrlimit",
    "resource.prlimit",
    "fcntl.",
    "syslog.",
];

/// Events refused when the job's own code raises them directly.
const DENY_FROM_JOB: &[&str] = &[
    // The import system itself unmarshals cached bytecode; only the job may not.
    "marshal.loads",
    "marshal.load",
    "compile",
    "exec",
    "code.__new__",
    "function.__new__",
    "sys._getframe",
    "sys._current_frames",
    "sys.settrace",
    "sys.setprofile",
    "sys.monitoring.",
    "builtins.input",
    "builtins.breakpoint",
    "object.__getattr__",
    "object.__setattr__",
    "object.__delattr__",
    "import",
];

/// Path events: (event, index of the path argument, whether it writes).
const PATH_EVENTS: &[(&str, usize, bool)] = &[
    ("os.listdir", 0, false),
    ("os.scandir", 0, false),
    ("os.remove", 0, true),
    ("os.rmdir", 0, true),
    ("os.mkdir", 0, true),
    ("os.truncate", 0, true),
    ("os.utime", 0, true),
    ("os.link", 1, true),
    ("os.symlink", 1, true),
    ("os.rename", 1, true),
];

fn matches(name: &str, list: &[&str]) -> bool {
    list.iter().any(|p| {
        if p.ends_with('.') {
            name.starts_with(p)
        } else {
            name == *p
        }
    })
}

/// The hook's judgement of one event (once armed): `Some(message)` refuses it.
fn decide(py: Python<'_>, name: &str, args: &Bound<'_, PyTuple>) -> Option<String> {
    match judge(py, name, args) {
        Decision::Allow => None,
        Decision::Deny(message) => Some(message),
    }
}

fn judge(py: Python<'_>, name: &str, args: &Bound<'_, PyTuple>) -> Decision {
    let deny = |what: &str| Decision::Deny(format!("{what} is not allowed in this sandbox"));
    if matches(name, DENY_ALWAYS) {
        return deny(name);
    }
    if name == "open" {
        // open(path, mode, flags): `flags` carries O_WRONLY/O_RDWR/O_CREAT for os.open,
        // `mode` the text mode for io.open.
        let writes = args
            .get_item(1)
            .ok()
            .and_then(|m| m.extract::<String>().ok())
            .is_some_and(|m| m.contains(['w', 'a', 'x', '+']))
            || args
                .get_item(2)
                .ok()
                .and_then(|f| f.extract::<i64>().ok())
                .is_some_and(|f| {
                    let f = f as c_int;
                    f & (libc::O_WRONLY
                        | libc::O_RDWR
                        | libc::O_CREAT
                        | libc::O_TRUNC
                        | libc::O_APPEND)
                        != 0
                });
        return check_path(args, 0, writes);
    }
    if let Some(&(_, index, writes)) = PATH_EVENTS.iter().find(|(e, _, _)| *e == name) {
        return check_path(args, index, writes);
    }
    if matches(name, DENY_FROM_JOB) && innermost_frame_is_job(py) {
        return deny(name);
    }
    Decision::Allow
}

/// Whether the innermost Python frame runs the job's own code.
fn innermost_frame_is_job(py: Python<'_>) -> bool {
    super::cpython::innermost_code_filename(py).is_some_and(|f| f == "<job>")
}

fn check_path(args: &Bound<'_, PyTuple>, index: usize, writes: bool) -> Decision {
    let Ok(arg) = args.get_item(index) else {
        return Decision::Allow;
    };
    if arg.is_none() || arg.extract::<i64>().is_ok() {
        return Decision::Allow; // an already-open descriptor, or the default directory
    }
    let path = if let Ok(s) = arg.extract::<String>() {
        PathBuf::from(s)
    } else if let Ok(b) = arg.extract::<Vec<u8>>() {
        PathBuf::from(std::ffi::OsStr::from_bytes(&b))
    } else {
        return Decision::Deny(
            "open of a path that is neither str nor bytes is not allowed".into(),
        );
    };
    let Some(roots) = ROOTS.get() else {
        return Decision::Allow;
    };
    let full = normalize(&path);
    let inside = |list: &[PathBuf]| list.iter().any(|r| full.starts_with(r));
    if inside(&roots.write) || (!writes && inside(&roots.read)) {
        Decision::Allow
    } else {
        let what = if writes { "writing" } else { "reading" };
        Decision::Deny(format!(
            "{what} {} is not allowed in this sandbox; read inputs through srcpath('name') and save with plt.savefig(OUT)",
            truncate(&path.to_string_lossy(), 120)
        ))
    }
}

/// Absolute and free of `.`/`..`, decided lexically (symlinks are the kernel's job).
fn normalize(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

use crate::outcome::head_chars as truncate;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dot_dot_lexically() {
        assert_eq!(
            normalize(Path::new("/a/b/../../etc/passwd")),
            PathBuf::from("/etc/passwd")
        );
        assert_eq!(normalize(Path::new("/../../x")), PathBuf::from("/x"));
        assert_eq!(
            normalize(Path::new("/w/out/./f.png")),
            PathBuf::from("/w/out/f.png")
        );
    }

    #[test]
    fn prefix_lists() {
        assert!(matches("socket.connect", DENY_ALWAYS));
        assert!(matches("os.system", DENY_ALWAYS));
        assert!(!matches("os.systemx", DENY_ALWAYS));
        assert!(matches("ctypes.dlopen", DENY_ALWAYS));
        assert!(!matches("open", DENY_ALWAYS));
    }
}
