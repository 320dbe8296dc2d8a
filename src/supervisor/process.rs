//! One worker process as the supervisor sees it: spawn with an environment built from
//! nothing, the protocol socket and pipe, a drained stderr, and a kill that takes the whole
//! process group.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use parking_lot::Mutex;

use super::zygote::{Forked, ZygoteCell};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::outcome::RetireReason;
use crate::outcome::WorkerExit;
use crate::protocol::{self, HostMsg, InitMsg, ReadyMsg, WorkerMsg, PROTOCOL_VERSION};
use crate::python_env::PythonEnv;
use crate::sandbox::{Rlimits, SandboxSpec};
use crate::worker;
use crate::workspace::SlotDirs;

/// Bytes of a worker's stderr kept (the newest).
const STDERR_KEEP: usize = 8 * 1024;

/// Environment variables passed through from the host when set: they are not secrets,
/// and some machines need them for OpenBLAS to pick a working kernel.
const PASS_THROUGH: &[&str] = &["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"];

/// A frame from the worker's protocol pipe, or why there are no more.
pub(crate) type Frame = std::io::Result<Vec<u8>>;

/// A live worker process.
pub(crate) struct WorkerProcess {
    child: Proc,
    stdin: BufWriter<File>,
    frames: Receiver<Frame>,
    stderr: Arc<Mutex<Vec<u8>>>,
    threads: Vec<JoinHandle<()>>,
    /// The worker's ready report.
    pub ready: ReadyMsg,
    /// Jobs run so far.
    pub jobs_run: u64,
    /// Set after a job that left this worker untrustworthy: it serves no further job.
    pub retiring: Option<RetireReason>,
    /// Its memory when it became ready (filled in by the slot).
    pub birth: super::stats::MemoryUsage,
    /// When private memory was last read in full (smaps): the anonymous resident
    /// memory then, and `jobs_run` then. See `Slot::memory_growth`.
    pub memory_read: Option<MemoryRead>,
}

/// The cheap reading taken with the last full one (see `WorkerProcess::memory_read`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MemoryRead {
    pub anon_bytes: u64,
    pub jobs_run: u64,
}

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
    // SAFETY: the closure runs in the forked child before exec and only calls
    // close_range(2) or fcntl(2), both async-signal-safe, on the child's own
    // descriptors. Stdio is in place (0-2) by then; everything above it is a host
    // descriptor that was not close-on-exec (a socket a service manager passed, a file
    // some library opened): marked close-on-exec here, it never reaches a worker.
    unsafe {
        cmd.pre_exec(|| {
            const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
            let rc = libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
            if rc != 0 {
                // Before Linux 5.11: one by one up to the descriptor limit.
                for fd in 3..libc::sysconf(libc::_SC_OPEN_MAX).clamp(3, 65_536) as libc::c_int {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            Ok(())
        });
    }
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

/// How a worker process came to be, which decides who can wait for it.
enum Proc {
    /// Spawned cold by this process (std's `Child` reaps it).
    Cold(Child),
    /// Forked by the zygote, which is its parent and reaps it.
    Forked { pid: u32, zygote: Arc<ZygoteCell> },
}

impl Proc {
    fn pid(&self) -> u32 {
        match self {
            Proc::Cold(c) => c.id(),
            Proc::Forked { pid, .. } => *pid,
        }
    }

    fn try_wait(&mut self) -> Option<ExitStatus> {
        match self {
            Proc::Cold(c) => c.try_wait().ok().flatten(),
            Proc::Forked { pid, zygote } => zygote.wait(*pid, Duration::ZERO),
        }
    }

    /// Waits for a process that has been sent SIGKILL.
    fn wait_killed(&mut self) -> Option<ExitStatus> {
        match self {
            Proc::Cold(c) => c.wait().ok(),
            Proc::Forked { pid, zygote } => zygote.wait(*pid, Duration::from_secs(5)),
        }
    }
}

impl WorkerProcess {
    /// Starts a worker for `dirs` (forked from `zygote` when one is given and works,
    /// cold otherwise), sends it its init message and waits until it is warm.
    pub(crate) fn spawn(
        program: &Path,
        config: &Config,
        dirs: &SlotDirs,
        mpl_config: &Path,
        zygote: Option<&Arc<ZygoteCell>>,
    ) -> Result<WorkerProcess> {
        match zygote.and_then(|z| z.fork_worker(true).map(|f| (z, f))) {
            Some((zygote, f)) => Self::start_forked(config, dirs, mpl_config, zygote, f),
            None => {
                let (child, stdin, stdout, stderr) =
                    spawn_cold(program, dirs, mpl_config, &config.python)?;
                Self::start(
                    config,
                    dirs,
                    mpl_config,
                    Proc::Cold(child),
                    stdin,
                    stdout,
                    stderr,
                )
            }
        }
    }

    /// Forks a worker from `zygote` if it is running right now (no waiting for one that
    /// warms up, no cold start): `None` otherwise.
    pub(crate) fn fork_now(
        config: &Config,
        dirs: &SlotDirs,
        mpl_config: &Path,
        zygote: &Arc<ZygoteCell>,
    ) -> Option<Result<WorkerProcess>> {
        let f = zygote.fork_worker(false)?;
        Some(Self::start_forked(config, dirs, mpl_config, zygote, f))
    }

    fn start_forked(
        config: &Config,
        dirs: &SlotDirs,
        mpl_config: &Path,
        zygote: &Arc<ZygoteCell>,
        f: Forked,
    ) -> Result<WorkerProcess> {
        let child = Proc::Forked {
            pid: f.pid,
            zygote: Arc::clone(zygote),
        };
        Self::start(config, dirs, mpl_config, child, f.stdin, f.stdout, f.stderr)
    }

    /// Sets up the supervisor's side of a started process, sends the init message and
    /// waits for `Ready`.
    fn start(
        config: &Config,
        dirs: &SlotDirs,
        mpl_config: &Path,
        child: Proc,
        stdin: File,
        stdout: File,
        stderr_pipe: File,
    ) -> Result<WorkerProcess> {
        let stdin = BufWriter::new(stdin);

        let (tx, frames) = crossbeam_channel::bounded::<Frame>(4);
        let reader = std::thread::Builder::new()
            .name("pyward-frames".into())
            .spawn(move || {
                let mut stdout = std::io::BufReader::new(stdout);
                loop {
                    let frame = match protocol::read_frame(&mut stdout, protocol::MAX_FRAME) {
                        Ok(Some(f)) => Ok(f),
                        Ok(None) => Err(std::io::ErrorKind::UnexpectedEof.into()),
                        Err(e) => Err(e),
                    };
                    let end = frame.is_err();
                    if tx.send(frame).is_err() || end {
                        return;
                    }
                }
            })
            .map_err(Error::Spawn)?;
        let (stderr, drain) = spawn_stderr_drain(stderr_pipe, "pyward-stderr")?;

        let mut worker = WorkerProcess {
            child,
            stdin,
            frames,
            stderr,
            threads: vec![reader, drain],
            ready: ReadyMsg {
                version: 0,
                warmup_ms: 0.0,
                versions: Default::default(),
                sandbox: crate::sandbox::Enforcement::none(),
                render_once: false,
                render_once_off: None,
                text_metrics: 0,
                text_metrics_off: None,
            },
            jobs_run: 0,
            retiring: None,
            birth: Default::default(),
            memory_read: None,
        };
        let init = init_msg(config, dirs, mpl_config, false);
        if let Err(e) = protocol::send(&mut worker.stdin, &init) {
            return Err(worker.startup_failure(config, format!("sending init: {e}")));
        }
        match worker.recv_msg(Instant::now() + config.startup_timeout) {
            Ok(WorkerMsg::Ready(ready)) if ready.version == PROTOCOL_VERSION => {
                worker.ready = ready;
                Ok(worker)
            }
            Ok(WorkerMsg::Ready(ready)) => Err(Error::Protocol(format!(
                "worker speaks protocol {} (expected {PROTOCOL_VERSION})",
                ready.version
            ))),
            Ok(WorkerMsg::InitFailed { stage, message }) => {
                worker.kill();
                let python = &config.python;
                Err(match stage {
                    protocol::InitStage::Import => Error::PackageMissing(format!(
                        "{message}, in {}. Fix: `{} -m pip install numpy matplotlib scipy \
                         pandas pillow` (pyward's python/requirements.txt pins tested \
                         versions), or point {} (ExecutorBuilder::python) at a Python {} \
                         that has them",
                        python.describe(),
                        python.executable,
                        crate::PYTHON_ENV_VAR,
                        python.minor_version()
                    )),
                    protocol::InitStage::Interpreter => {
                        Error::Python(format!("{message}, in {}", python.describe()))
                    }
                    protocol::InitStage::Sandbox => Error::Sandbox(message),
                    protocol::InitStage::Protocol => Error::Protocol(message),
                    protocol::InitStage::Warmup => Error::WorkerStartup {
                        message,
                        stderr_tail: worker.stderr_tail(),
                    },
                })
            }
            Ok(other) => Err(Error::Protocol(format!(
                "unexpected message during start-up: {other:?}"
            ))),
            Err(RecvError::Timeout) => {
                Err(worker.startup_failure(config, "not ready in time".into()))
            }
            Err(RecvError::Closed(e)) => {
                Err(worker.startup_failure(config, format!("worker exited during start-up: {e}")))
            }
        }
    }

    fn startup_failure(&mut self, config: &Config, message: String) -> Error {
        let status = self.kill();
        startup_error(config, &message, describe_exit(status), self.stderr_tail())
    }

    /// The worker's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.pid()
    }

    /// Whether a zygote forked this worker.
    pub(crate) fn forked(&self) -> bool {
        matches!(self.child, Proc::Forked { .. })
    }

    /// Sends a message to the worker.
    pub(crate) fn send(&mut self, msg: &HostMsg) -> std::io::Result<()> {
        protocol::send(&mut self.stdin, msg)
    }

    /// Sends a message with descriptors attached to it (a job's shared arrays).
    pub(crate) fn send_with_fds(&mut self, msg: &HostMsg, fds: &[RawFd]) -> std::io::Result<()> {
        if fds.is_empty() {
            return self.send(msg);
        }
        self.stdin.flush()?;
        crate::fdpass::send(self.stdin.get_ref(), &protocol::encode_frame(msg)?, fds)
    }

    /// Waits for the next frame until `deadline`.
    pub(crate) fn recv_frame(&self, deadline: Instant) -> std::result::Result<Vec<u8>, RecvError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.frames.recv_timeout(wait) {
            Ok(Ok(frame)) => Ok(frame),
            Ok(Err(e)) => Err(RecvError::Closed(e.to_string())),
            Err(RecvTimeoutError::Timeout) => Err(RecvError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(RecvError::Closed("pipe closed".into())),
        }
    }

    /// Waits for the next message until `deadline`.
    pub(crate) fn recv_msg(&self, deadline: Instant) -> std::result::Result<WorkerMsg, RecvError> {
        let frame = self.recv_frame(deadline)?;
        protocol::decode(&frame).map_err(|e| RecvError::Closed(format!("malformed message: {e}")))
    }

    /// Resident set size, in bytes, read from `/proc/<pid>/statm`.
    pub(crate) fn rss_bytes(&self) -> Option<u64> {
        self.statm().map(|(resident, _)| resident)
    }

    /// Anonymous resident memory (resident minus file-backed and shared memory), in
    /// bytes, from `/proc/<pid>/statm`: kernel counters, read in microseconds.
    pub(crate) fn anon_resident_bytes(&self) -> Option<u64> {
        self.statm()
            .map(|(resident, shared)| resident.saturating_sub(shared))
    }

    /// (resident, shared) in bytes.
    fn statm(&self) -> Option<(u64, u64)> {
        let statm = std::fs::read_to_string(format!("/proc/{}/statm", self.child.pid())).ok()?;
        let mut fields = statm.split_whitespace().skip(1);
        let mut next = || -> Option<u64> { fields.next()?.parse::<u64>().ok() };
        let (resident, shared) = (next()?, next()?);
        Some((resident * page_size(), shared * page_size()))
    }

    /// Clears the stderr tail (at the start of a job).
    pub(crate) fn clear_stderr(&self) {
        self.stderr.lock().clear();
    }

    /// The newest bytes the worker wrote to stderr, as text.
    pub(crate) fn stderr_tail(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock()).into_owned()
    }

    /// Sends SIGKILL to the worker's process group without waiting; [`Self::kill`] reaps.
    /// Asks a running worker where its code is: `SIGUSR1` makes `faulthandler` (armed
    /// by the prelude at warm-up) write the main thread's Python stack to stderr from a
    /// C signal handler, which works even while the code is inside a long C call.
    /// Returns the dump once it stops growing, `None` if none came within `wait`.
    pub(crate) fn dump_stack(&self, wait: Duration) -> Option<String> {
        const HEADER: &[u8] = b"(most recent call first):\n";
        let start = self.stderr.lock().len();
        // SAFETY: kill(2) on the worker's own pid (not yet reaped: we hold it).
        if unsafe { libc::kill(self.child.pid() as libc::pid_t, libc::SIGUSR1) } != 0 {
            return None;
        }
        let deadline = Instant::now() + wait;
        let mut seen = 0usize;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            let tail = self.stderr.lock();
            let new = tail.get(start.min(tail.len())..).unwrap_or_default();
            let Some(at) = new.windows(HEADER.len()).position(|w| w == HEADER) else {
                continue;
            };
            // Complete once a poll sees no more bytes after a line end.
            if new.len() == seen && new.ends_with(b"\n") {
                return Some(String::from_utf8_lossy(&new[at + HEADER.len()..]).into_owned());
            }
            seen = new.len();
        }
        None
    }

    pub(crate) fn signal_kill(&self) {
        // SAFETY: kill(2) with a negative pid signals the process group the worker leads
        // (spawned with process_group(0), or made a group leader by the zygote before
        // it answered the fork request); the group id is ours until it is reaped.
        unsafe {
            libc::kill(-(self.child.pid() as libc::pid_t), libc::SIGKILL);
        }
    }

    /// Kills the worker's whole process group, reaps it and joins its reader threads.
    pub(crate) fn kill(&mut self) -> Option<ExitStatus> {
        self.signal_kill();
        let status = self.child.wait_killed();
        self.join_threads();
        status
    }

    /// Waits up to `grace` for the worker to exit by itself, then kills it.
    pub(crate) fn reap(&mut self, grace: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Some(status) = self.child.try_wait() {
                // Anything left in the worker's group goes too.
                self.signal_kill();
                self.join_threads();
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.kill()
    }

    /// Asks the worker to exit, then makes sure it did.
    pub(crate) fn shutdown(mut self) {
        let _ = self.send(&HostMsg::Shutdown);
        self.reap(Duration::from_millis(500));
    }

    fn join_threads(&mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.kill();
        }
    }
}

/// Why no message arrived.
#[derive(Debug)]
pub(crate) enum RecvError {
    /// The deadline passed.
    Timeout,
    /// The worker closed its end (it exited or crashed), or sent garbage.
    Closed(String),
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
fn spawn_cold(
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
    // SAFETY: the closure runs in the forked child before exec and only calls
    // prctl(2), which is async-signal-safe. PR_SET_PDEATHSIG makes the kernel kill the
    // worker if the supervisor thread that spawned it dies, so no worker outlives a
    // crashed host.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
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

fn page_size() -> u64 {
    // SAFETY: sysconf(2) has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

/// The init message of a worker (or, with `zygote`, of the warm template).
pub(crate) fn init_msg(
    config: &Config,
    dirs: &SlotDirs,
    mpl_config: &Path,
    zygote: bool,
) -> HostMsg {
    HostMsg::Init(Box::new(InitMsg {
        version: PROTOCOL_VERSION,
        python: config.python.clone(),
        rules: config.policy.runtime_rules(),
        dirs: dirs.for_worker(),
        sandbox: sandbox_spec(config, dirs, mpl_config),
        preload_pandas: config.preload_pandas,
        render_once: config.render_once,
        text_metrics: config.text_metrics,
        one_shot: config.one_shot,
        preload_loadmat: config.preload_loadmat,
        zygote,
        prewarm: config.isolation == crate::Isolation::Fresh,
        warm_up_code: config.warm_up_code.clone(),
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
