//! One worker process as the supervisor sees it, once started (see `launch`): its
//! protocol socket and pipe, its drained stderr, its memory readings, and a kill that
//! takes the whole process group.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::RawFd;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::config::Config;
use super::frames::FrameReader;
use super::launch::{
    describe_exit, init_msg, spawn_cold, spawn_stderr_drain, startup_error, Starting, StderrTail,
};
use super::zygote::{Forked, ZygoteCell};
use crate::error::{Error, Result};
use crate::outcome::RetireReason;
use crate::protocol::answer::{self, FrameError, FrameSource};
use crate::protocol::{self, HostMsg, ReadyMsg, WorkerMsg, PROTOCOL_VERSION};
use crate::workspace::SlotDirs;

/// A live worker process.
pub(crate) struct WorkerProcess {
    child: Proc,
    stdin: BufWriter<File>,
    frames: FrameReader,
    stderr: StderrTail,
    threads: Vec<JoinHandle<()>>,
    /// The worker's ready report.
    pub ready: ReadyMsg,
    /// Jobs run so far.
    pub jobs_run: u64,
    /// The tenant of the jobs it ran (`None` before its first job, or when that job
    /// had no tenant: then it runs no other).
    pub served: Option<std::sync::Arc<str>>,
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

/// How a worker process came to be, which decides who can wait for it.
enum Proc {
    /// Spawned cold by this process (std's `Child` reaps it).
    Cold(Child),
    /// Forked by the zygote, which is its parent and reaps it.
    /// `prewarm`: it renders once before `Ready` (see `protocol::InitMsg::prewarm`).
    Forked {
        pid: u32,
        zygote: Arc<ZygoteCell>,
        prewarm: bool,
    },
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
            Proc::Forked { pid, zygote, .. } => zygote.wait(*pid, Duration::ZERO),
        }
    }

    /// Waits for a process that has been sent SIGKILL.
    fn wait_killed(&mut self) -> Option<ExitStatus> {
        match self {
            Proc::Cold(c) => c.wait().ok(),
            Proc::Forked { pid, zygote, .. } => zygote.wait(*pid, Duration::from_secs(5)),
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
        prewarm: bool,
    ) -> Result<WorkerProcess> {
        match zygote.and_then(|z| z.fork_worker(true).map(|f| (z, f))) {
            Some((zygote, f)) => Self::start_forked(config, dirs, mpl_config, zygote, f, prewarm),
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
        prewarm: bool,
    ) -> Option<Result<WorkerProcess>> {
        let f = zygote.fork_worker(false)?;
        Some(Self::start_forked(
            config, dirs, mpl_config, zygote, f, prewarm,
        ))
    }

    fn start_forked(
        config: &Config,
        dirs: &SlotDirs,
        mpl_config: &Path,
        zygote: &Arc<ZygoteCell>,
        f: Forked,
        prewarm: bool,
    ) -> Result<WorkerProcess> {
        let child = Proc::Forked {
            pid: f.pid,
            zygote: Arc::clone(zygote),
            prewarm,
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
        let frames = FrameReader::new(stdout).map_err(Error::io("reading from a worker"))?;
        let (stderr, drain) = spawn_stderr_drain(stderr_pipe, "pyward-stderr")?;

        let mut worker = WorkerProcess {
            child,
            stdin,
            frames,
            stderr,
            threads: vec![drain],
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
            served: None,
            retiring: None,
            birth: Default::default(),
            memory_read: None,
        };
        let starting = match worker.child {
            Proc::Forked { prewarm, .. } => Starting::Forked { prewarm },
            _ => Starting::Cold,
        };
        let init = init_msg(config, dirs, mpl_config, starting);
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
            Err(RecvError::Violation(e)) => Err(worker.startup_failure(
                config,
                format!("worker broke the protocol during start-up: {e}"),
            )),
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

    /// The worker's answer pipe, for reading a job's answer (`protocol::answer`).
    pub(crate) fn frames(&mut self) -> &mut FrameReader {
        &mut self.frames
    }

    /// Whether the worker wrote anything nobody asked for (see
    /// [`FrameReader::has_unread`]).
    pub(crate) fn has_unread(&mut self) -> bool {
        self.frames.has_unread()
    }

    /// Waits for the next message (not a job's answer: see `protocol::answer`) until
    /// `deadline`.
    pub(crate) fn recv_msg(
        &mut self,
        deadline: Instant,
    ) -> std::result::Result<WorkerMsg, RecvError> {
        let frame = self
            .frames
            .next_frame(answer::MESSAGE_OVERHEAD, deadline)
            .map_err(RecvError::from)?;
        answer::decode_message(&frame).map_err(RecvError::Violation)
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
        Some((
            resident * crate::sys::page_size(),
            shared * crate::sys::page_size(),
        ))
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
        // The worker's own pid, not yet reaped: we hold it.
        if crate::sys::signal(self.child.pid(), libc::SIGUSR1).is_err() {
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

    /// SIGKILL to the worker's process group (spawned with `process_group(0)`, or made
    /// a group leader by the zygote before it answered the fork request); the group id
    /// is ours until the worker is reaped.
    pub(crate) fn signal_kill(&self) {
        crate::sys::kill_group(self.child.pid());
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
    /// The worker closed its end (it exited or crashed).
    Closed(String),
    /// The worker sent something the protocol does not allow.
    Violation(String),
}

impl From<FrameError> for RecvError {
    fn from(e: FrameError) -> RecvError {
        match e {
            FrameError::Timeout => RecvError::Timeout,
            FrameError::Closed(why) => RecvError::Closed(why),
            too_large @ FrameError::TooLarge { .. } => RecvError::Violation(too_large.to_string()),
        }
    }
}
