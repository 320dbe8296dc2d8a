//! The zygote's own end: a warm, unconfined template that forks new workers on
//! request. The supervisor's end, which starts it and asks for forks, is
//! `crate::supervisor::zygote`.
//!
//! After warm-up a zygote serves [`ZygoteRequest`]s on its control socket (its protocol
//! descriptors are both one end of a Unix stream socket pair). It stays single-threaded
//! (BLAS threads are limited to one before numpy is imported; pyward starts no thread in
//! the worker), which is what makes `fork` safe: no lock can be held by a thread that
//! does not exist in the child. CPython's own fork protocol runs around the fork
//! (`PyOS_BeforeFork`, `PyOS_AfterFork_Parent`/`_Child`), so the import lock and other
//! interpreter state are consistent in the child and `os.register_at_fork` hooks run
//! (`random` reseeds itself there; every job reseeds `random` and numpy anyway).
//!
//! A forked child, before it returns to the worker's normal start-up path:
//! - leads its own process group (the zygote sets it too, before answering, so the
//!   supervisor's group kill never races the child's `setpgid`);
//! - gets `PR_SET_PDEATHSIG` = `SIGKILL`: it dies with the zygote, which itself exits
//!   when the supervisor's end of the control socket closes;
//! - puts the received stderr on 1 and 2, moves the received protocol descriptors to
//!   random high numbers of its own (`super::fds`), and closes every other inherited
//!   descriptor (the control socket included), so nothing of the zygote is reachable
//!   from the job.
//!
//! The zygote is the forked workers' parent, so it is the one that reaps them, and only
//! when the supervisor asks ([`ZygoteRequest::Wait`]): until then a dead worker stays
//! a zombie, so its pid and process group cannot be reused before the supervisor's
//! group kill (the same guarantee std's `Child` gives for cold workers). The answer is
//! the raw wait status, which the supervisor turns into `WorkerCrashed`'s "signal 6
//! (SIGABRT)". (The alternative, making the host a child subreaper and double-forking,
//! would change process semantics for the whole host program.)

use std::fs::File;
use std::io::{self, BufReader, BufWriter};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::cpython;
use crate::fdpass::FdReader;
use crate::protocol::{self, ZygoteReply, ZygoteRequest};
use crate::sys;

/// Descriptors a fork request carries: protocol in, protocol out, stderr.
const FORK_FDS: usize = 3;

/// Serves fork and wait requests until the supervisor closes the socket.
///
/// Returns `Ok(None)` in the zygote when it should exit, and `Ok(Some(forked_at))` in a
/// freshly forked child, whose `input`/`output` now are its own protocol descriptors.
pub(super) fn serve_zygote(
    input: &mut BufReader<FdReader>,
    output: &mut BufWriter<File>,
) -> io::Result<Option<Instant>> {
    loop {
        if !input.buffer().is_empty() {
            // The supervisor sends one request and waits for its answer; anything more
            // would end up in a forked child's buffer.
            return Err(io::Error::other("zygote: data after a request"));
        }
        let Some(request) = protocol::recv::<ZygoteRequest>(input)? else {
            return Ok(None);
        };
        match request {
            ZygoteRequest::Fork => {
                let Some(fds) = input.get_mut().take_fds(FORK_FDS) else {
                    let message = format!("a fork request needs {FORK_FDS} descriptors");
                    protocol::send(output, &ZygoteReply::ForkFailed { message })?;
                    continue;
                };
                if !input.buffer().is_empty() {
                    return Err(io::Error::other("zygote: data after a fork request"));
                }
                let forked_at = Instant::now();
                let pid = cpython::fork();
                if pid == 0 {
                    let (proto_in, proto_out) = become_worker(fds);
                    // The zygote's control socket: closed once, by dropping its owners.
                    // Bytes the zygote had not flushed are the zygote's, not ours.
                    *input = BufReader::new(FdReader::new(File::from(proto_in)));
                    let zygote_out =
                        std::mem::replace(output, BufWriter::new(File::from(proto_out)));
                    drop(zygote_out.into_parts());
                    let keep = [input.get_ref().as_raw_fd(), output.get_ref().as_raw_fd()];
                    sys::close_all_but(&keep);
                    return Ok(Some(forked_at));
                }
                drop(fds);
                let reply = if pid < 0 {
                    ZygoteReply::ForkFailed {
                        message: io::Error::last_os_error().to_string(),
                    }
                } else {
                    // The child does the same; whichever runs first wins, both agree.
                    sys::own_process_group(pid);
                    ZygoteReply::Forked { pid }
                };
                protocol::send(output, &reply)?;
            }
            ZygoteRequest::Wait { pid, timeout_ms } => {
                // A wait request carries no descriptors; stray ones are closed by `take_fds`.
                let _ = input.get_mut().take_fds(0);
                let raw = wait_for(pid, Duration::from_millis(timeout_ms));
                protocol::send(output, &ZygoteReply::Status { raw })?;
            }
        }
    }
}

/// Checks that the zygote holds no descriptor but stdio and `keep` (its control
/// socket). A forked worker closes every other inherited descriptor, so anything the
/// warm interpreter still reads through one (a cached font file) would fail in the
/// worker, or read another file that later gets the same number.
pub(super) fn no_open_files(keep: &[RawFd]) -> Result<(), String> {
    let dir = std::fs::read_dir("/proc/self/fd").map_err(|e| format!("/proc/self/fd: {e}"))?;
    let mut open = Vec::new();
    for entry in dir.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<RawFd>().ok())
        else {
            continue;
        };
        let target = std::fs::read_link(entry.path());
        // The directory being listed has a descriptor of its own.
        let listing = target
            .as_ref()
            .is_ok_and(|t| t.starts_with("/proc") && t.ends_with("fd"));
        if fd > 2 && !keep.contains(&fd) && !listing {
            let what = target.map_or_else(|_| "?".into(), |t| t.display().to_string());
            open.push(format!("{fd} -> {what}"));
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the zygote still holds descriptors after warm-up ({}); forked workers would \
             inherit dangling ones",
            open.join(", ")
        ))
    }
}

/// In the child: own process group, die with the zygote, stderr (and stdout) onto the
/// received stderr, and the received protocol descriptors moved to random high
/// numbers of the child's own (`super::fds`): every worker draws its own, so one
/// worker's numbers say nothing about another's. Returns the protocol pair (in, out);
/// the caller swaps it in for the zygote's control socket and then closes every other
/// descriptor the child inherited, so nothing of the zygote is reachable from the job.
fn become_worker(fds: Vec<OwnedFd>) -> (OwnedFd, OwnedFd) {
    let zygote = sys::parent_pid();
    sys::own_process_group(0);
    let _ = sys::die_with_parent();
    if sys::parent_pid() != zygote {
        // The zygote died between fork and prctl: nobody would reap or kill us.
        sys::exit_now(70);
    }
    let mut fds = fds.into_iter();
    let (Some(proto_in), Some(proto_out), Some(stderr)) = (fds.next(), fds.next(), fds.next())
    else {
        sys::exit_now(71);
    };
    let moved = sys::dup2(stderr.as_raw_fd(), 2)
        .and_then(|()| sys::dup2(2, 1))
        .and_then(|()| super::fds::to_high_number(proto_in))
        .and_then(|proto_in| Ok((proto_in, super::fds::to_high_number(proto_out)?)));
    match moved {
        Ok(pair) => pair,
        Err(_) => sys::exit_now(71),
    }
}

fn wait_for(pid: i32, timeout: Duration) -> Option<i32> {
    if pid <= 0 {
        return None;
    }
    let until = Instant::now() + timeout;
    loop {
        match sys::wait_nohang(pid) {
            sys::Waited::Exited(status) => return Some(status),
            // Not ours (or already reported).
            sys::Waited::NotOurs => return None,
            sys::Waited::Running if Instant::now() >= until => return None,
            sys::Waited::Running => std::thread::sleep(Duration::from_micros(500)),
        }
    }
}
