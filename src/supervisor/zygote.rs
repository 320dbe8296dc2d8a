//! The zygote, the supervisor's end: one warm template process per executor that forks
//! replacement workers. The zygote's own end, which serves the fork requests, is
//! `crate::worker::zygote`.
//!
//! A cold worker start re-imports numpy, matplotlib and pandas and renders a figure
//! (about a second of CPU). The zygote does that warm-up once, stops *before* arming
//! the audit hook or applying the sandbox, and then forks a new worker whenever a slot
//! needs one. The child confines itself for its slot (audit hook, rlimits, Landlock
//! with the slot's directories, no_new_privs, seccomp pinned to its own pid) exactly as
//! a cold worker does, so a forked worker reports the same [`Enforcement`] and runs
//! under the same rules; it differs only in not paying for the warm-up.
//!
//! Wiring: the zygote is spawned like a worker, but its stdin and stdout are both one
//! end of a Unix stream socket pair. The supervisor sends it an init message with
//! `zygote: true`, waits for `Ready`, and from then on sends [`ZygoteRequest`]s. A fork
//! request carries the new worker's three descriptors (its protocol socket, its protocol
//! output pipe and its stderr pipe)
//! as SCM_RIGHTS; the zygote answers with the child's pid. The supervisor then talks to
//! the child over those exactly as to a cold worker (init message, `Ready`, jobs).
//!
//! Process tree and exit status: forked workers are children of the zygote, so the
//! zygote reaps them and reports their raw wait status on request
//! ([`ZygoteRequest::Wait`]): `WorkerCrashed` still names the signal. Each forked
//! worker leads its own process group, so the supervisor's group kill works as for a
//! cold worker. Lifetimes: the zygote exits when the supervisor's end of the socket
//! closes (executor drop, or the host dying: the kernel closes it); forked workers have
//! `PR_SET_PDEATHSIG` and die with the zygote. The zygote itself gets no parent-death
//! signal because that signal is tied to the *thread* that spawned it, which may be a
//! short-lived start-up thread; the socket is the reliable tie.
//!
//! Every worker of the pool is forked from the zygote, the first ones included: the
//! pool pays for one warm-up, and its workers share the zygote's warm pages
//! (`gc.freeze` keeps CPython from writing to them). `build()` waits for the zygote
//! to warm up; cold starts happen only as the fallback when it is not running, and
//! are counted ([`PoolStats::cold_fallbacks`](crate::PoolStats::cold_fallbacks)) and
//! logged.
//!
//! Trade-offs: every forked worker shares the zygote's address-space layout (ASLR is
//! randomised once per zygote, not once per worker), so an address leaked by one job
//! is valid in sibling workers; the sandbox, not ASLR, is what contains a job. The
//! zygote is unconfined, but it runs no job code and reads nothing but fixed-size
//! requests from the supervisor. If it dies or misbehaves, slots fall back to cold
//! starts and a new zygote is started in the background.
//!
//! [`Enforcement`]: crate::sandbox::Enforcement

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::config::Config;
use crate::error::{Error, Result};
use crate::protocol::{self, WorkerMsg, ZygoteReply, ZygoteRequest, PROTOCOL_VERSION};
use crate::supervisor::launch::{
    describe_exit, init_msg, spawn_stderr_drain, startup_error, worker_command, Starting,
};
use crate::supervisor::stats::{MemoryUsage, ZygoteStats};
use crate::workspace::SlotDirs;

/// How long a zygote may take to answer one request (a fork is a few milliseconds).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A freshly forked worker: its pid and the supervisor's ends of its descriptors.
pub(crate) struct Forked {
    pub pid: u32,
    pub stdin: File,
    pub stdout: File,
    pub stderr: File,
}

/// The executor's zygote slot: starting, running, dead (fall back to cold), or off.
pub(crate) struct ZygoteCell {
    state: Mutex<State>,
    changed: Condvar,
    /// Starts after the first, and why the last failed start failed.
    restarts: AtomicU64,
    last_error: Mutex<Option<String>>,
    program: PathBuf,
    config: Arc<Config>,
    dirs: SlotDirs,
    mpl_config: PathBuf,
}

enum State {
    Starting,
    Running(Zygote),
    Dead,
    Off,
}

impl ZygoteCell {
    /// Creates the cell and starts the zygote in the background.
    pub(crate) fn start(
        program: PathBuf,
        config: Arc<Config>,
        dirs: SlotDirs,
        mpl_config: PathBuf,
    ) -> Arc<ZygoteCell> {
        let cell = Arc::new(ZygoteCell {
            state: Mutex::new(State::Dead),
            changed: Condvar::new(),
            restarts: AtomicU64::new(0),
            last_error: Mutex::new(None),
            program,
            config,
            dirs,
            mpl_config,
        });
        cell.start_in_background(&mut cell.state.lock());
        cell
    }

    /// Starts a replacement for a zygote that died or could not fork (counted).
    fn restart(self: &Arc<Self>, state: &mut State) {
        self.restarts.fetch_add(1, Ordering::Relaxed);
        self.start_in_background(state);
    }

    /// Starts a new zygote in a background thread (the state must be `Dead`).
    fn start_in_background(self: &Arc<Self>, state: &mut State) {
        *state = State::Starting;
        tracing::info!("pyward: starting the zygote");
        let cell = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("pyward-zygote-start".into())
            .spawn(move || {
                let started =
                    Zygote::spawn(&cell.program, &cell.config, &cell.dirs, &cell.mpl_config);
                let mut state = cell.state.lock();
                match (started, &*state) {
                    (Ok(z), State::Starting) => *state = State::Running(z),
                    (Ok(z), _) => z.shutdown(),
                    (Err(e), State::Starting) => {
                        tracing::warn!(error = %e, "pyward: the zygote did not start");
                        *cell.last_error.lock() = Some(e.to_string());
                        *state = State::Dead;
                    }
                    (Err(_), _) => {}
                }
                cell.changed.notify_all();
            });
        if spawned.is_err() {
            *state = State::Dead;
        }
    }

    /// Waits while the zygote is starting (up to the startup timeout).
    fn settled(&self) -> parking_lot::MutexGuard<'_, State> {
        let until = Instant::now() + self.config.startup_timeout;
        let mut state = self.state.lock();
        while matches!(*state, State::Starting) {
            if self.changed.wait_until(&mut state, until).timed_out() {
                break;
            }
        }
        state
    }

    /// Forks a new worker, or `None` when there is no working zygote (the caller then
    /// starts one cold; a dead zygote is restarted in the background). With `wait`, a
    /// zygote that is still warming up is waited for; without, that is `None` too.
    pub(crate) fn fork_worker(self: &Arc<Self>, wait: bool) -> Option<Forked> {
        let mut state = if wait {
            self.settled()
        } else {
            self.state.lock()
        };
        match &mut *state {
            State::Running(z) => match z.fork() {
                Ok(forked) => Some(forked),
                Err(_) => {
                    if let State::Running(z) = std::mem::replace(&mut *state, State::Dead) {
                        z.kill();
                    }
                    self.restart(&mut state);
                    None
                }
            },
            State::Dead => {
                self.restart(&mut state);
                None
            }
            State::Starting | State::Off => None,
        }
    }

    /// Waits up to `timeout` for forked worker `pid` to end; its exit status, or `None`
    /// while it runs or when the zygote cannot tell (it died: so did the worker).
    pub(crate) fn wait(&self, pid: u32, timeout: Duration) -> Option<ExitStatus> {
        let mut state = self.state.lock();
        let State::Running(z) = &mut *state else {
            return None;
        };
        match z.wait(pid, timeout) {
            Ok(raw) => raw.map(ExitStatus::from_raw),
            Err(_) => None,
        }
    }

    /// The zygote's pid once it has started (waits while it is starting); `None` when
    /// it is dead or off.
    pub(crate) fn pid(&self) -> Option<u32> {
        running_pid(&self.settled())
    }

    /// Its pid and memory, restarts and last start error, without waiting.
    pub(crate) fn stats(&self) -> ZygoteStats {
        let pid = running_pid(&self.state.lock());
        ZygoteStats {
            pid,
            memory: pid.and_then(MemoryUsage::of_process),
            restarts: self.restarts.load(Ordering::Relaxed),
            last_error: self.last_error.lock().clone(),
        }
    }

    /// Its state in words, for a log line.
    pub(crate) fn describe(&self) -> String {
        let state = match &*self.state.lock() {
            State::Starting => "starting",
            State::Running(_) => "running",
            State::Dead => "dead",
            State::Off => "off",
        };
        match &*self.last_error.lock() {
            Some(e) => format!("{state}; last start failed: {e}"),
            None => state.to_string(),
        }
    }

    /// Stops the zygote for good (executor drop, after every slot has stopped).
    pub(crate) fn shutdown(&self) {
        let mut state = self.settled();
        if let State::Running(z) = std::mem::replace(&mut *state, State::Off) {
            z.shutdown();
        }
    }
}

fn running_pid(state: &State) -> Option<u32> {
    match state {
        State::Running(z) => Some(z.child.id()),
        _ => None,
    }
}

/// A running zygote process and the supervisor's end of its control socket.
struct Zygote {
    child: Child,
    sock: UnixStream,
    drain: Option<JoinHandle<()>>,
}

impl Zygote {
    fn spawn(
        program: &Path,
        config: &Config,
        dirs: &SlotDirs,
        mpl_config: &Path,
    ) -> Result<Zygote> {
        let (sock, theirs) = UnixStream::pair().map_err(Error::Spawn)?;
        let theirs = OwnedFd::from(theirs);
        let theirs_out = theirs.try_clone().map_err(Error::Spawn)?;
        let mut cmd = worker_command(program, dirs, mpl_config, &config.python);
        cmd.stdin(Stdio::from(theirs))
            .stdout(Stdio::from(theirs_out))
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(Error::Spawn)?;
        // The child's ends live in `cmd`: close them here so that the zygote sees EOF
        // when our end closes.
        drop(cmd);
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tail, drain) = spawn_stderr_drain(stderr, "pyward-zygote-stderr")?;
        let mut zygote = Zygote {
            child,
            sock,
            drain: Some(drain),
        };
        let init = init_msg(config, dirs, mpl_config, Starting::Zygote);
        let ready = protocol::send(&mut zygote.sock, &init)
            .and_then(|()| zygote.sock.set_read_timeout(Some(config.startup_timeout)))
            .and_then(|()| zygote.recv::<WorkerMsg>());
        match ready {
            Ok(WorkerMsg::Ready(r)) if r.version == PROTOCOL_VERSION => {
                let _ = zygote.sock.set_read_timeout(Some(REQUEST_TIMEOUT));
                Ok(zygote)
            }
            other => {
                let status = zygote.kill();
                let stderr = String::from_utf8_lossy(&tail.lock()).into_owned();
                let what = format!("zygote did not start: {other:?}");
                Err(startup_error(config, &what, describe_exit(status), stderr))
            }
        }
    }

    fn recv<T: serde::de::DeserializeOwned>(&mut self) -> io::Result<T> {
        protocol::recv(&mut self.sock)?.ok_or_else(|| io::ErrorKind::UnexpectedEof.into())
    }

    fn fork(&mut self) -> io::Result<Forked> {
        // The protocol input is a socket: jobs pass descriptors over it.
        let (stdin_w, stdin_r) = UnixStream::pair()?;
        let (stdin_w, stdin_r) = (OwnedFd::from(stdin_w), OwnedFd::from(stdin_r));
        let (stdout_r, stdout_w) = crate::sys::pipe()?;
        let (stderr_r, stderr_w) = crate::sys::pipe()?;
        send_with_fds(
            &self.sock,
            &ZygoteRequest::Fork,
            &[
                stdin_r.as_raw_fd(),
                stdout_w.as_raw_fd(),
                stderr_w.as_raw_fd(),
            ],
        )?;
        // The child has its own copies now; ours must close so that EOF means its death.
        drop((stdin_r, stdout_w, stderr_w));
        match self.recv::<ZygoteReply>()? {
            ZygoteReply::Forked { pid } if pid > 0 => Ok(Forked {
                pid: pid as u32,
                stdin: stdin_w.into(),
                stdout: stdout_r.into(),
                stderr: stderr_r.into(),
            }),
            other => Err(io::Error::other(format!("zygote: {other:?}"))),
        }
    }

    fn wait(&mut self, pid: u32, timeout: Duration) -> io::Result<Option<i32>> {
        let request = ZygoteRequest::Wait {
            pid: pid as i32,
            timeout_ms: timeout.as_millis() as u64,
        };
        send_with_fds(&self.sock, &request, &[])?;
        match self.recv::<ZygoteReply>()? {
            ZygoteReply::Status { raw } => Ok(raw),
            other => Err(io::Error::other(format!("zygote: {other:?}"))),
        }
    }

    /// Closes the socket (the zygote exits on EOF), then makes sure it did.
    fn shutdown(mut self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.finish();
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.kill();
    }

    /// Kills the zygote's process group and reaps it; returns how it ended.
    fn kill(mut self) -> Option<std::process::ExitStatus> {
        // The zygote's own process group (spawned with process_group(0)), ours until
        // reaped below.
        crate::sys::kill_group(self.child.id());
        let status = self.child.wait().ok();
        self.finish();
        status
    }

    fn finish(&mut self) {
        if let Some(d) = self.drain.take() {
            let _ = d.join();
        }
    }
}

/// Sends one request frame with `fds` attached (SCM_RIGHTS).
fn send_with_fds(sock: &UnixStream, request: &ZygoteRequest, fds: &[i32]) -> io::Result<()> {
    crate::fdpass::send(sock, &protocol::encode_frame(request)?, fds)
}
