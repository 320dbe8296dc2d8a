//! How a worker process (or the zygote) is started: the program, a command with an
//! environment built from nothing, the init message and the sandbox it applies to
//! itself, the drained stderr, and the error that says why a start failed. Both ends
//! that start processes use it: `process` (cold workers) and `zygote` (the template).

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use super::config::Config;
use crate::error::{Error, Result};
use crate::gate::RuntimeRules;
use crate::outcome::WorkerExit;
use crate::protocol::{HostMsg, InitMsg, PROTOCOL_VERSION};
use crate::python_env::PythonEnv;
use crate::sandbox::{Rlimits, SandboxSpec};
use crate::worker;
use crate::workspace::SlotDirs;

/// Bytes of a worker process's own stderr the host keeps, newest first: what C code, a
/// crash or the timeout's stack dump wrote below Python (a job's `sys.stderr` is
/// captured in the worker instead). Large enough for a deep stack dump; failures quote
/// at most [`STDERR_TAIL_CHARS`](crate::STDERR_TAIL_CHARS) of it.
const STDERR_KEEP: usize = 8 * 1024;

/// Environment variables passed through from the host when set: they are not secrets,
/// and some machines need them for OpenBLAS to pick a working kernel.
const PASS_THROUGH: &[&str] = &["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"];

/// Finds the `pyward-worker` program.
pub(crate) fn locate_worker(config: &Config) -> Result<PathBuf> {
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    // An explicit choice is the only candidate: a wrong one fails loudly instead of
    // falling through to whatever lies next to the executable.
    if let Some(p) = &config.worker_program {
        candidates.push(p.clone());
    } else if let Some(p) = std::env::var_os("PYWARD_WORKER") {
        candidates.push(PathBuf::from(p));
    } else if crate::worker::self_hosted() {
        // The host opted in with `worker::run_if_worker()`.
        candidates.extend(std::env::current_exe().ok());
    } else {
        if let Ok(exe) = std::env::current_exe() {
            if let Some(dir) = exe.parent() {
                candidates.push(dir.join("pyward-worker"));
                // Test and bench binaries live in target/<profile>/deps.
                if let Some(up) = dir.parent() {
                    candidates.push(up.join("pyward-worker"));
                }
            }
        }
    }
    for c in candidates {
        if c.is_file() {
            return Ok(c);
        }
        tried.push(c);
    }
    Err(Error::WorkerNotFound { looked_in: tried })
}

/// The command that starts a worker (or a zygote) for `dirs`: an environment built from
/// nothing, the working directory, its own process group. Stdio is the caller's.
pub(crate) fn worker_command(
    program: &Path,
    dirs: &SlotDirs,
    mpl_config: &Path,
    python: &PythonEnv,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        // Marks the process as a worker of exactly this library build.
        .env(worker::BUILD_ID_ENV, worker::BUILD_ID)
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &dirs.home)
        .env("TMPDIR", &dirs.tmp)
        .env("LANG", "C.UTF-8")
        .env("MPLBACKEND", "Agg")
        .env("MPLCONFIGDIR", mpl_config)
        // One BLAS thread, set before numpy loads: keeps workers from competing for
        // cores and keeps the process single-threaded for the sandbox and for fork.
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("OMP_NUM_THREADS", "1")
        .env("MKL_NUM_THREADS", "1")
        .env("NUMEXPR_NUM_THREADS", "1")
        // Fixed dates in PDF and SVG metadata: the same job gives the same bytes,
        // which replay checks.
        .env("SOURCE_DATE_EPOCH", "0")
        .current_dir(&dirs.tmp)
        .process_group(0);
    // A host descriptor that was not close-on-exec (a socket a service manager
    // passed, a file some library opened) never reaches a worker.
    crate::sys::close_inherited_on_exec(&mut cmd);
    for name in PASS_THROUGH {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    // A run-time Python override (another machine's installation): its libpython,
    // not the one at the build machine's path the binary's rpath names.
    if python.libdir != env!("PYWARD_BUILD_PYTHON_LIBDIR") && !python.libdir.is_empty() {
        cmd.env("LD_LIBRARY_PATH", &python.libdir);
    }
    cmd
}

/// The error for a worker (or zygote) that did not become ready, told so that the
/// reader can act: a build mismatch names both builds, a libpython that does not load
/// names the Python the binary was built for, anything else names the program, the
/// interpreter, its `sys.path` and the first lines of the worker's stderr.
pub(crate) fn startup_error(
    config: &Config,
    what: &str,
    exit: WorkerExit,
    stderr_tail: String,
) -> Error {
    let program = config
        .worker_program
        .as_ref()
        .map_or_else(|| "the worker program".into(), |p| p.display().to_string());
    if exit
        == (WorkerExit::Code {
            code: i32::from(worker::EXIT_MISMATCH),
        })
    {
        return Error::WorkerMismatch {
            program,
            detail: stderr_tail
                .trim()
                .lines()
                .last()
                .unwrap_or_default()
                .to_string(),
        };
    }
    if let Some(line) = stderr_tail
        .lines()
        .find(|l| l.contains("error while loading shared libraries"))
    {
        let built = PythonEnv::from_build();
        return Error::Python(format!(
            "{program} cannot load its Python library ({}). It was built against Python {} \
             with libpython in {}. Fix: install that Python there, or point \
             {} (or ExecutorBuilder::python) at a Python {} installation on this machine",
            line.trim(),
            built.version,
            built.libdir,
            crate::PYTHON_ENV_VAR,
            built.minor_version()
        ));
    }
    Error::WorkerStartup {
        message: format!(
            "{what} ({exit}); program {program}; {}",
            config.python.describe()
        ),
        stderr_tail,
    }
}

/// "signal 11 (SIGSEGV)" or "exit code 3".
pub(crate) fn describe_exit(status: Option<ExitStatus>) -> WorkerExit {
    match status.map(|s| (s.code(), s.signal())) {
        Some((Some(code), _)) => WorkerExit::Code { code },
        Some((None, Some(number))) => WorkerExit::Signal { number },
        _ => WorkerExit::Unknown,
    }
}

/// Spawns a worker process cold; returns it with its stdin, stdout and stderr.
pub(crate) fn spawn_cold(
    program: &Path,
    dirs: &SlotDirs,
    mpl_config: &Path,
    python: &PythonEnv,
) -> Result<(Child, File, File, File)> {
    let mut cmd = worker_command(program, dirs, mpl_config, python);
    // The protocol input is a socket, not a pipe: jobs pass descriptors over it.
    let (ours, theirs) = UnixStream::pair().map_err(Error::Spawn)?;
    cmd.stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // No worker outlives a crashed host.
    crate::sys::die_with_parent_on_exec(&mut cmd);
    let mut child = cmd.spawn().map_err(Error::Spawn)?;
    // The child's end lives in `cmd`: close it here so that the worker sees EOF when
    // ours closes.
    drop(cmd);
    let stdin = OwnedFd::from(ours);
    let stdout = OwnedFd::from(child.stdout.take().expect("stdout is piped"));
    let stderr = OwnedFd::from(child.stderr.take().expect("stderr is piped"));
    Ok((child, stdin.into(), stdout.into(), stderr.into()))
}

/// The newest bytes a child wrote to stderr, shared with the thread that drains it.
pub(crate) type StderrTail = Arc<Mutex<Vec<u8>>>;

/// Drains a child's stderr on its own thread (a full pipe must never block the child),
/// keeping the newest bytes.
pub(crate) fn spawn_stderr_drain(
    pipe: impl Read + Send + 'static,
    name: &str,
) -> Result<(StderrTail, JoinHandle<()>)> {
    let tail = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&tail);
    let drain = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || drain_tail(pipe, &sink))
        .map_err(Error::Spawn)?;
    Ok((tail, drain))
}

fn drain_tail(mut pipe: impl Read, sink: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut tail = sink.lock();
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_KEEP {
                    let cut = tail.len() - STDERR_KEEP;
                    tail.drain(..cut);
                }
            }
        }
    }
}

/// Which process an init message starts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Starting {
    /// The warm template that forks workers.
    Zygote,
    /// A worker that warms up on its own.
    Cold,
    /// A worker forked from the zygote: it warmed up there, with the zygote's rules, so
    /// its message carries none (building and parsing them cost every fork a
    /// millisecond or more of CPU on each side). `prewarm`: it renders once before
    /// `Ready` (see `Slot::prewarm`).
    Forked { prewarm: bool },
}

/// The init message of a worker or of the warm template.
pub(crate) fn init_msg(
    config: &Config,
    dirs: &SlotDirs,
    mpl_config: &Path,
    starting: Starting,
) -> HostMsg {
    let zygote = starting == Starting::Zygote;
    HostMsg::Init(Box::new(InitMsg {
        version: PROTOCOL_VERSION,
        python: config.python.clone(),
        rules: if matches!(starting, Starting::Forked { .. }) {
            RuntimeRules::default()
        } else {
            config.policy.runtime_rules()
        },
        dirs: dirs.for_worker(),
        sandbox: sandbox_spec(config, dirs, mpl_config),
        preload_pandas: config.preload_pandas,
        render_once: config.render_once,
        text_metrics: config.text_metrics,
        one_shot: config.one_shot,
        preload_loadmat: config.preload_loadmat,
        zygote,
        prewarm: starting == Starting::Forked { prewarm: true },
        warm_up_code: config.warm_up_code.clone(),
        no_state_guard: !config.state_guard,
        single_job: config.single_job(),
    }))
}

/// The kernel confinement a worker applies to itself after warm-up.
pub(crate) fn sandbox_spec(config: &Config, dirs: &SlotDirs, mpl_config: &Path) -> SandboxSpec {
    let mut read_only: Vec<PathBuf> = vec![PathBuf::from(&config.python.home)];
    read_only.extend(config.python.paths.iter().map(PathBuf::from));
    read_only.push(dirs.src.clone());
    read_only.push(mpl_config.to_path_buf());
    SandboxSpec::new(
        config.sandbox,
        read_only,
        vec![dirs.out.clone(), dirs.tmp.clone(), dirs.home.clone()],
        Rlimits {
            // The address space holds far more than the resident set (code, thread
            // stacks, allocator arenas): the rlimit is a backstop above the RSS ceiling
            // that the watchdog enforces precisely.
            address_space: Some(config.memory_bytes.saturating_mul(2).max(4 << 30)),
            file_size: Some(config.max_artifact_bytes),
            open_files: Some(256),
            processes: None,
        },
    )
    .with_system_defaults()
    .with_scratch(crate::sandbox::ScratchSpec {
        root: dirs.scratch.clone(),
        dirs: vec![dirs.out.clone(), dirs.tmp.clone(), dirs.home.clone()],
        bytes: config.scratch_bytes,
        files: config.scratch_files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        let mut c = crate::Executor::builder().validated_for_tests();
        c.worker_program = Some(PathBuf::from("/opt/app/pyward-worker"));
        c
    }

    #[test]
    fn a_build_mismatch_names_both_builds_and_the_fix() {
        let stderr = "pyward-worker: this worker is pyward build 0.1.0-aaaa, the library that started it is build 0.1.0-bbbb\n";
        let e = startup_error(
            &config(),
            "worker exited",
            WorkerExit::Code { code: 78 },
            stderr.into(),
        );
        let text = e.to_string();
        assert!(matches!(e, Error::WorkerMismatch { .. }), "{text}");
        assert!(
            text.contains("0.1.0-aaaa") && text.contains("0.1.0-bbbb"),
            "{text}"
        );
        assert!(text.contains("/opt/app/pyward-worker") && text.contains("cargo build"));
        assert_eq!(format!("{e:?}"), text, "Debug says the same");
    }

    #[test]
    fn a_missing_libpython_names_the_python_it_was_built_for() {
        let stderr = "/opt/app/pyward-worker: error while loading shared libraries: libpython3.11.so.1.0: cannot open shared object file: No such file or directory\n";
        let e = startup_error(
            &config(),
            "worker exited",
            WorkerExit::Code { code: 127 },
            stderr.into(),
        );
        let text = e.to_string();
        assert!(matches!(e, Error::Python(_)), "{text}");
        assert!(text.contains("libpython3.11.so.1.0"), "{text}");
        assert!(text.contains(env!("PYWARD_BUILD_PYTHON_LIBDIR")), "{text}");
        assert!(text.contains("PYWARD_PYTHON"), "{text}");
    }

    #[test]
    fn other_start_up_failures_name_program_interpreter_paths_and_stderr() {
        let stderr =
            "Traceback (most recent call last):\nModuleNotFoundError: No module named 'numpy'\n";
        let e = startup_error(
            &config(),
            "worker exited during start-up",
            WorkerExit::Code { code: 70 },
            stderr.into(),
        );
        let text = e.to_string();
        assert!(text.contains("/opt/app/pyward-worker"), "{text}");
        assert!(text.contains(env!("PYWARD_BUILD_PYTHON")), "{text}");
        assert!(text.contains("sys.path"), "{text}");
        assert!(text.contains("No module named 'numpy'"), "{text}");
    }
}
