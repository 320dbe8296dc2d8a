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
//! - in those events, any "path" that is not exactly `str` or `bytes`: above all an
//!   integer, which names a descriptor the worker already holds (its channel to the
//!   host among them) and which neither the roots nor Landlock would ever look at
//!   (`scipy.io.netcdf_file(4, 'w')` opens descriptor 4), but also a subclass or an
//!   object with `__index__`, whose answers are the job's; and any `dir_fd` but the
//!   default. The types are checked exactly and the text copied out of the exact
//!   object: no method of the argument ever runs (see [`path_text`]);
//! - starting programs (`subprocess.Popen`, `os.system`, `os.exec*`, `os.posix_spawn`,
//!   `os.spawn*`, `os.fork*`), signalling (`os.kill*`), sockets (`socket.*`), foreign
//!   calls (`ctypes.*`), unpickling and unmarshalling, heap walking (`gc.get_*`),
//!   memory maps, and new audit hooks;
//! - importing any module of [`UNIMPORTABLE`] (the `import` event, raised for every
//!   module the import statement or `__import__` loads): from the job's frame or a
//!   library's, it is refused as a missing module is (`ModuleNotFoundError`), so that
//!   libraries importing optionally carry on. An import of a loaded module raises no
//!   event: the worker takes these modules out of `sys.modules` after warm-up (but the
//!   few allowed libraries import again, [`AtWarmUp::Kept`]) and puts a finder refusing
//!   them at the head of `sys.meta_path` (`importlib.import_module` raises no event
//!   either): see `python/library_guards/unimportable.py`;
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
use pyo3::types::{PyBytes, PyInt, PyString, PyTuple};

use super::cpython::Refusal;

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
    /// An import refused: the caller gets `ModuleNotFoundError`.
    DenyImport(String),
}

/// What becomes of a module of [`UNIMPORTABLE`] at warm-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtWarmUp {
    /// Taken out of `sys.modules` if loaded: no allowed library imports it again, so any
    /// later import is a fresh load, refused.
    Sealed,
    /// Loaded by warm-up and left in `sys.modules`: allowed libraries import it at
    /// module level when a job first imports them (scipy.stats, scipy.ndimage and
    /// scipy.io.arff: ctypes; numpy.ctypeslib, which scipy.stats loads: _ctypes;
    /// scipy.io and pandas: platform; Pillow's plugins: subprocess;
    /// importlib.metadata: socket), and an import of a loaded module raises no event.
    /// The worker's `__import__` and `importlib.import_module` refuse it to everyone
    /// but code running for the import of a library module (python/library_guards/unimportable.py);
    /// no module view reaches it (the views refuse modules outside the allowlist); and
    /// its powers are refused call by call (`ctypes.*`, `socket.*`, `subprocess.Popen`
    /// above; `socket`, `execve`, `fork` by seccomp).
    Kept,
}

/// Modules nothing in a worker loads once the hook is armed (top-level names: their
/// submodules go with them), whoever asks: the job, or a library frame reached through
/// a gadget (pandas' plotting backend loader, matplotlib's backend registry, a callback
/// that calls `__import__`). See [`AtWarmUp`] for the few that stay loaded. `mmap` is
/// not in the list: numpy's `memmap` and Pillow import it in their functions, and its one
/// power, a map (`mmap.__new__`), is refused for everyone above.
pub(crate) const UNIMPORTABLE: &[(&str, AtWarmUp, &str)] = &[
    ("ctypes", AtWarmUp::Kept, "foreign calls and raw memory"),
    ("_ctypes", AtWarmUp::Kept, "foreign calls and raw memory"),
    (
        "_ctypes_test",
        AtWarmUp::Sealed,
        "foreign calls and raw memory",
    ),
    ("subprocess", AtWarmUp::Kept, "starts programs"),
    (
        "_posixsubprocess",
        AtWarmUp::Sealed,
        "starts programs (fork_exec raises no audit event)",
    ),
    ("multiprocessing", AtWarmUp::Sealed, "starts processes"),
    ("_multiprocessing", AtWarmUp::Sealed, "starts processes"),
    (
        "_posixshmem",
        AtWarmUp::Sealed,
        "shared memory between processes",
    ),
    ("pty", AtWarmUp::Sealed, "spawns a shell"),
    ("tty", AtWarmUp::Sealed, "terminal control"),
    ("termios", AtWarmUp::Sealed, "terminal control"),
    ("socket", AtWarmUp::Kept, "network access"),
    ("_socket", AtWarmUp::Sealed, "network access"),
    ("ssl", AtWarmUp::Sealed, "network access"),
    ("_ssl", AtWarmUp::Sealed, "network access"),
    ("select", AtWarmUp::Sealed, "descriptor polling"),
    ("selectors", AtWarmUp::Sealed, "descriptor polling"),
    ("fcntl", AtWarmUp::Sealed, "descriptor control"),
    ("resource", AtWarmUp::Sealed, "the worker's limits"),
    (
        "signal",
        AtWarmUp::Sealed,
        "the worker's signal handlers, signals to other processes",
    ),
    (
        "_signal",
        AtWarmUp::Sealed,
        "the worker's signal handlers, signals to other processes",
    ),
    (
        "faulthandler",
        AtWarmUp::Sealed,
        "writes tracebacks to any descriptor",
    ),
    (
        "platform",
        AtWarmUp::Kept,
        "host details (uname, libc, processor)",
    ),
    (
        "_xxsubinterpreters",
        AtWarmUp::Sealed,
        "runs source in another interpreter",
    ),
    (
        "_xxinterpchannels",
        AtWarmUp::Sealed,
        "channels between interpreters",
    ),
    ("_testcapi", AtWarmUp::Sealed, "interpreter test hooks"),
    (
        "_testinternalcapi",
        AtWarmUp::Sealed,
        "interpreter test hooks",
    ),
    ("_testbuffer", AtWarmUp::Sealed, "interpreter test hooks"),
    (
        "_testmultiphase",
        AtWarmUp::Sealed,
        "interpreter test hooks",
    ),
    (
        "code",
        AtWarmUp::Sealed,
        "evaluates strings (interactive interpreter)",
    ),
    ("codeop", AtWarmUp::Sealed, "compiles strings"),
    ("pdb", AtWarmUp::Sealed, "debugger: evaluates strings"),
    ("bdb", AtWarmUp::Sealed, "debugger: evaluates strings"),
    ("runpy", AtWarmUp::Sealed, "runs modules as scripts"),
    ("trace", AtWarmUp::Sealed, "runs strings under a tracer"),
    (
        "cProfile",
        AtWarmUp::Sealed,
        "runs strings under a profiler",
    ),
    ("profile", AtWarmUp::Sealed, "runs strings under a profiler"),
    ("_lsprof", AtWarmUp::Sealed, "profiler internals"),
    ("doctest", AtWarmUp::Sealed, "runs strings"),
];

/// The names of [`UNIMPORTABLE`] with the given fate, for the worker's warm-up.
pub(crate) fn unimportable_names(fate: Option<AtWarmUp>) -> Vec<String> {
    UNIMPORTABLE
        .iter()
        .filter(|(_, f, _)| fate.is_none_or(|fate| *f == fate))
        .map(|(m, _, _)| (*m).to_string())
        .collect()
}

/// Whether the `import` event's module (a dotted name) is one of [`UNIMPORTABLE`].
fn unimportable(module: &str) -> bool {
    let top = module.split('.').next().unwrap_or(module);
    UNIMPORTABLE.iter().any(|(m, _, _)| *m == top)
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

/// What one argument of a path event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A path the call reads (or lists): exactly `str` or `bytes`, inside a read root.
    Read,
    /// A path the call creates, changes or removes: exactly `str` or `bytes`, inside a
    /// write root.
    Write,
    /// A path whose text is not opened by the call (a symlink's target, a new working
    /// directory): exactly `str` or `bytes`, where it points is not judged.
    Text,
    /// A `dir_fd`: a descriptor the path is resolved against. Only its "none" spellings
    /// (`None`, exactly `-1`) pass.
    DirFd,
}

/// One path event: (its name, its arguments worth judging as (index, role), whether a
/// `None` path means the current directory).
type PathEvent = (&'static str, &'static [(usize, Role)], bool);

/// The path events besides `open`. These are the events of CPython's audit table that
/// take a path or a descriptor before acting and are not refused outright
/// (`DENY_ALWAYS`: `shutil.*`, `os.chmod`, `os.chown`, `fcntl.*`, `mmap.__new__`,
/// `socket.*` with its `fileno=`); `tempfile.mkstemp`/`mkdtemp` are raised after the
/// file exists and name a path the hook already judged. An argument this CPython does
/// not pass is simply absent from the tuple. `open` itself carries no `dir_fd`
/// (`os.open(name, flags, dir_fd=n)`), so the hook judges such a name against the
/// working directory and Landlock, which resolves it, is the layer that holds; the
/// worker leaves no directory descriptor open for a job to name
/// (`super::fds::close_strays`), so only code holding the real `os` gets there.
const PATH_EVENTS: &[PathEvent] = &[
    ("os.listdir", &[(0, Role::Read)], true),
    ("os.scandir", &[(0, Role::Read)], true),
    ("os.walk", &[(0, Role::Read)], false),
    ("os.fwalk", &[(0, Role::Read), (4, Role::DirFd)], false),
    ("glob.glob/2", &[(3, Role::DirFd)], false),
    ("os.listxattr", &[(0, Role::Read)], true),
    ("os.getxattr", &[(0, Role::Read)], false),
    ("os.setxattr", &[(0, Role::Write)], false),
    ("os.removexattr", &[(0, Role::Write)], false),
    ("os.chdir", &[(0, Role::Text)], false),
    ("os.remove", &[(0, Role::Write), (1, Role::DirFd)], false),
    ("os.rmdir", &[(0, Role::Write), (1, Role::DirFd)], false),
    ("os.mkdir", &[(0, Role::Write), (2, Role::DirFd)], false),
    ("os.truncate", &[(0, Role::Write)], false),
    ("os.utime", &[(0, Role::Write), (3, Role::DirFd)], false),
    (
        "os.link",
        &[
            (0, Role::Read),
            (1, Role::Write),
            (2, Role::DirFd),
            (3, Role::DirFd),
        ],
        false,
    ),
    (
        "os.symlink",
        &[(0, Role::Text), (1, Role::Write), (2, Role::DirFd)],
        false,
    ),
    (
        "os.rename",
        &[
            (0, Role::Write),
            (1, Role::Write),
            (2, Role::DirFd),
            (3, Role::DirFd),
        ],
        false,
    ),
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
fn decide(py: Python<'_>, name: &str, args: &Bound<'_, PyTuple>) -> Option<Refusal> {
    match judge(py, name, args) {
        Decision::Allow => None,
        Decision::Deny(message) => Some(Refusal::Permission(message)),
        Decision::DenyImport(message) => Some(Refusal::Import(message)),
    }
}

fn judge(py: Python<'_>, name: &str, args: &Bound<'_, PyTuple>) -> Decision {
    let deny = |what: &str| Decision::Deny(format!("{what} is not allowed in this sandbox"));
    if matches(name, DENY_ALWAYS) {
        return deny(name);
    }
    if name == "open" {
        return check_arg(
            args,
            0,
            if open_writes(args) {
                Role::Write
            } else {
                Role::Read
            },
            false,
        );
    }
    if let Some(&(_, roles, none_ok)) = PATH_EVENTS.iter().find(|(e, _, _)| *e == name) {
        for &(index, role) in roles {
            if let refused @ Decision::Deny(_) = check_arg(args, index, role, none_ok) {
                return refused;
            }
        }
        return Decision::Allow;
    }
    if name == "import" {
        // CPython passes the module's name as an exact str; anything else is judged
        // as the stricter reading: refused.
        let module = args
            .get_item(0)
            .ok()
            .and_then(|m| m.cast_exact::<PyString>().ok().map(|m| m.to_string()));
        match module {
            Some(module) if !unimportable(&module) => {}
            Some(module) => {
                return Decision::DenyImport(format!(
                    "import of {:?} is not allowed in this sandbox",
                    truncate(&module, 120)
                ))
            }
            None => return Decision::DenyImport("an import of an unnamed module".into()),
        }
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

/// Whether an `open` event opens for writing: `(path, mode, flags)`, where `mode` is
/// the text mode of `io.open` (`None` for `os.open`) and `flags` the `O_*` flags.
/// CPython builds both itself, so they are exact `str`/`int`; anything else is judged
/// as a write (the stricter reading), never asked what it is.
fn open_writes(args: &Bound<'_, PyTuple>) -> bool {
    let mode = args.get_item(1).ok();
    let flags = args.get_item(2).ok();
    let mode_writes = match mode.as_ref().map(|m| m.cast_exact::<PyString>()) {
        Some(Ok(m)) => match m.to_str() {
            Ok(m) => Some(m.contains(['w', 'a', 'x', '+'])),
            Err(_) => None,
        },
        Some(Err(_)) if mode.as_ref().is_some_and(|m| m.is_none()) => Some(false),
        _ => None,
    };
    let flags_write = match flags.as_ref().map(|f| f.cast_exact::<PyInt>()) {
        Some(Ok(f)) => f.extract::<i64>().ok().map(|f| {
            let f = f as c_int;
            f & (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND)
                != 0
        }),
        _ => None,
    };
    match (mode_writes, flags_write) {
        (Some(m), Some(f)) => m || f,
        _ => true,
    }
}

/// The text of a path argument, copied out of an exact `str` or `bytes` without calling
/// any method of the object. `Err` says why the argument is not a path this hook
/// accepts.
///
/// Exact types only, because the object may be the job's: a `str` or `bytes` subclass
/// whose methods lie, an object whose `__index__` names a descriptor (CPython's `FileIO`
/// opens anything with `__index__` as a descriptor and passes the object itself to the
/// hook), a `__fspath__` that answers differently on each call. CPython runs `__fspath__`
/// before it raises the event, so a real path (`pathlib.Path`, a string) arrives as an
/// exact `str` or `bytes`; an integer is a descriptor the process already holds (in a
/// worker: its channel to the host, stdio, a cached font file), which Landlock never
/// looks at again, so it is refused like any other non-path.
fn path_text(arg: &Bound<'_, PyAny>) -> Result<PathBuf, String> {
    if let Ok(s) = arg.cast_exact::<PyString>() {
        // Not valid UTF-8 (a lone surrogate): no path a job needs.
        let s = s
            .to_str()
            .map_err(|_| "a path that is not valid UTF-8".to_string())?;
        return Ok(PathBuf::from(s.to_owned()));
    }
    if let Ok(b) = arg.cast_exact::<PyBytes>() {
        return Ok(PathBuf::from(std::ffi::OsStr::from_bytes(b.as_bytes())));
    }
    let kind = if arg.is_instance_of::<PyInt>() {
        "a file descriptor (an integer path)"
    } else if arg.is_instance_of::<PyString>() || arg.is_instance_of::<PyBytes>() {
        "a path of a str or bytes subclass"
    } else {
        "a path that is neither str nor bytes"
    };
    Err(kind.to_string())
}

fn check_arg(args: &Bound<'_, PyTuple>, index: usize, role: Role, none_ok: bool) -> Decision {
    let Ok(arg) = args.get_item(index) else {
        return Decision::Allow; // this CPython does not pass the argument
    };
    if role == Role::DirFd {
        let default = arg.is_none()
            || arg
                .cast_exact::<PyInt>()
                .is_ok_and(|n| n.extract::<i64>().is_ok_and(|n| n == -1));
        return if default {
            Decision::Allow
        } else {
            Decision::Deny(
                "a path relative to a file descriptor (dir_fd) is not allowed in this sandbox"
                    .into(),
            )
        };
    }
    if none_ok && arg.is_none() {
        return Decision::Allow; // the current directory
    }
    let path = match path_text(&arg) {
        Ok(path) => path,
        Err(kind) => {
            return Decision::Deny(format!(
                "{kind} is not allowed in this sandbox; pass a plain str path: read inputs \
                 through srcpath('name') and save with plt.savefig(OUT)"
            ))
        }
    };
    let writes = match role {
        Role::Text => return Decision::Allow,
        Role::Write => true,
        Role::Read | Role::DirFd => false,
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

    #[test]
    fn unimportable_by_top_level_name() {
        for m in [
            "ctypes",
            "ctypes.util",
            "_socket",
            "_posixsubprocess",
            "signal",
            "platform",
        ] {
            assert!(unimportable(m), "{m}");
        }
        // Allowed packages and lookalikes: scipy.signal is not the stdlib signal.
        for m in [
            "scipy.signal",
            "numpy",
            "socketserverx",
            "codecs",
            "matplotlib.pyplot",
        ] {
            assert!(!unimportable(m), "{m}");
        }
        let names = unimportable_names(None);
        assert_eq!(names.len(), UNIMPORTABLE.len());
        assert!(names.iter().all(|n| !n.contains('.')));
        let kept = unimportable_names(Some(AtWarmUp::Kept));
        assert!(kept.contains(&"ctypes".to_string()) && !kept.contains(&"_socket".to_string()));
    }
}
