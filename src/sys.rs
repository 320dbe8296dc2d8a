//! The operating system, behind safe functions: every libc call of the crate lives
//! here, each with the argument for why it is sound. The rest of the crate is
//! `#![deny(unsafe_code)]`; the interpreter's C API has a room of its own
//! (`worker::cpython`).
//!
//! The functions are thin: they take and return owned descriptors and plain values,
//! check the result, and turn `errno` into `io::Error`. What a call is for is said
//! where it is used.

use std::collections::VecDeque;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}

// ------------------------------------------------------------------ processes

/// SIGKILL to the process group `leader` leads. The caller still owns the group (its
/// leader is not reaped yet), so the id cannot have been reused.
pub(crate) fn kill_group(leader: u32) {
    let Ok(pid) = libc::pid_t::try_from(leader) else {
        return;
    };
    // SAFETY: kill(2) takes plain integers; a negative pid names the process group.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Sends `signal` to one process the caller owns (not reaped yet).
pub(crate) fn signal(pid: u32, signal: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(io::Error::other)?;
    // SAFETY: kill(2) takes plain integers.
    check(unsafe { libc::kill(pid, signal) })
}

/// Puts `pid` (this process or a child of it) in a process group of its own.
pub(crate) fn own_process_group(pid: libc::pid_t) {
    // SAFETY: setpgid(2) takes plain integers.
    unsafe { libc::setpgid(pid, pid) };
}

/// The parent's pid.
pub(crate) fn parent_pid() -> libc::pid_t {
    // SAFETY: getppid(2) cannot fail and touches no memory.
    unsafe { libc::getppid() }
}

/// Asks the kernel to SIGKILL this process when the thread that created it ends.
pub(crate) fn die_with_parent() -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes integer arguments only.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) })
}

/// Ends this process at once: no destructors, no atexit handlers, no buffered output.
pub(crate) fn exit_now(code: libc::c_int) -> ! {
    // SAFETY: _exit(2) is always sound; it does not return.
    unsafe { libc::_exit(code) }
}

/// fork(2), raw: 0 in the child, the child's pid in the parent, -1 on failure.
///
/// # Safety
/// The process must have exactly one thread (no lock can then be held by a thread
/// that does not exist in the child), and whatever state the child inherits half-done
/// must be made consistent around the call (the interpreter's fork hooks do that for
/// CPython: see `worker::cpython::fork`).
pub(crate) unsafe fn fork() -> libc::pid_t {
    // SAFETY: the caller's contract.
    unsafe { libc::fork() }
}

/// What [`wait_nohang`] found.
pub(crate) enum Waited {
    /// The process ended with this raw wait status.
    Exited(i32),
    /// Still running.
    Running,
    /// Not a child of this process (or already reaped).
    NotOurs,
}

/// waitpid(2) on one child without blocking.
pub(crate) fn wait_nohang(pid: libc::pid_t) -> Waited {
    let mut status = 0;
    // SAFETY: waitpid(2) on one pid, writing into a live local.
    let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    match got {
        _ if got == pid => Waited::Exited(status),
        0 => Waited::Running,
        _ => Waited::NotOurs,
    }
}

/// In the child of `cmd`, before exec: every descriptor above stdio is marked
/// close-on-exec, so that one the host left inheritable (a socket a service manager
/// passed, a file some library opened) never reaches a worker.
pub(crate) fn close_inherited_on_exec(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls
    // close_range(2), sysconf(3) or fcntl(2), all async-signal-safe, on the child's own
    // descriptors. Stdio is in place (0-2) by then.
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
}

/// In the child of `cmd`, before exec: the kernel kills it when the thread that spawned
/// it dies, so that no worker outlives a crashed host.
pub(crate) fn die_with_parent_on_exec(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls
    // prctl(2) (through `die_with_parent`), which is async-signal-safe.
    unsafe {
        cmd.pre_exec(die_with_parent);
    }
}

/// The memory page size.
pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf(3) has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

/// Fills `buf` from the kernel's random source (getrandom(2), blocking until the pool
/// is initialised, which it is long before any job).
pub(crate) fn fill_random(buf: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: getrandom writes at most `rest.len()` bytes into `rest`, a live,
        // exclusively borrowed buffer.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += n as usize;
    }
    Ok(())
}

/// Hands the heap pages freed since the last call back to the kernel (glibc keeps
/// freed memory for reuse otherwise).
pub(crate) fn trim_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim(3) only releases free memory of the allocator's own arenas;
    // the callers hold no allocator lock (they are between two allocations).
    unsafe {
        libc::malloc_trim(0);
    }
}

// ------------------------------------------------------------------ descriptors

/// Sets `O_NONBLOCK` on the open file description behind `fd` (the host's read end of
/// a worker's answer pipe, which no other process shares).
pub(crate) fn set_nonblocking(fd: &impl AsRawFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl(2) F_GETFL/F_SETFL on a descriptor the caller holds open; it
    // touches no memory.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Waits up to `timeout` for `fd` to become readable (data, end of file or an error
/// condition). `Ok(false)` when the time ran out; an interrupted wait counts as that.
pub(crate) fn wait_readable(fd: &impl AsRawFd, timeout: std::time::Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // Rounded up, so that a wait never spins on a sub-millisecond remainder.
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
    // SAFETY: poll(2) reads and writes exactly one `pollfd`, a live local.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(n > 0)
}

/// A pipe whose both ends are close-on-exec (read end, write end).
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) writes two descriptors into the array on success.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Moves descriptors 0 and 1 to new close-on-exec numbers above 2 (returned), points 0
/// at /dev/null and 1 at 2: a stray write to stdout then goes to stderr instead of
/// into a protocol stream.
pub(crate) fn move_off_stdio() -> io::Result<(OwnedFd, OwnedFd)> {
    // SAFETY: fcntl/open/dup2/close on descriptors this process owns; the duplicated
    // descriptors are handed to `OwnedFd`, which becomes their only owner.
    unsafe {
        let proto_in = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
        let proto_out = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if proto_in < 0 || proto_out < 0 {
            return Err(io::Error::last_os_error());
        }
        let (proto_in, proto_out) = (
            OwnedFd::from_raw_fd(proto_in),
            OwnedFd::from_raw_fd(proto_out),
        );
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if null < 0 {
            return Err(io::Error::last_os_error());
        }
        let null = OwnedFd::from_raw_fd(null);
        if libc::dup2(null.as_raw_fd(), 0) < 0 || libc::dup2(2, 1) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((proto_in, proto_out))
    }
}

/// A close-on-exec duplicate of `fd` at the lowest free number `>= at`
/// (fcntl(2) `F_DUPFD_CLOEXEC`). `at` must lie below the soft `RLIMIT_NOFILE`
/// (`EINVAL` otherwise); `EMFILE` when no number from `at` up to it is free.
pub(crate) fn dup_at_least(fd: BorrowedFd<'_>, at: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl(2) with integer arguments on a descriptor the borrow keeps open.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, at) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created by the kernel, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// What an open descriptor of this process is: its file type (`st_mode & S_IFMT`) and
/// its status flags (fcntl(2) `F_GETFL`: access mode, `O_PATH`, ...). `EBADF` when
/// `fd` is not open. Reads only; the descriptor is not touched.
pub(crate) fn descriptor_kind(fd: RawFd) -> io::Result<(libc::mode_t, libc::c_int)> {
    // SAFETY: fstat(2) writes into a zeroed struct we own; fcntl(2) F_GETFL takes and
    // returns integers. Neither changes the descriptor, whoever owns it.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(io::Error::last_os_error());
        }
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((st.st_mode & libc::S_IFMT, flags))
    }
}

/// Closes one descriptor that no object of this process owns any more (a stray the
/// caller found in `/proc/self/fd` and decided nothing may use).
pub(crate) fn close_stray(fd: RawFd) {
    // SAFETY: close(2) on a number; the caller vouches that no owner will use or close
    // it again. EBADF (already closed) is harmless.
    unsafe { libc::close(fd) };
}

/// The descriptors open in this process below `below`, found by one poll(2) with no
/// events and no wait, which marks each number that is not open `POLLNVAL`: one system
/// call instead of one per number (the reset counts up to the descriptor limit after
/// every job). `below` must not exceed `RLIMIT_NOFILE`, as poll(2) refuses more.
pub(crate) fn open_descriptors(below: RawFd) -> io::Result<Vec<RawFd>> {
    let mut fds: Vec<libc::pollfd> = (0..below.max(0))
        .map(|fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        })
        .collect();
    // SAFETY: poll(2) reads and writes `fds.len()` entries of a buffer we own; with no
    // events asked and a zero timeout it waits for nothing and changes no descriptor.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
    if polled < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fds
        .iter()
        .filter(|p| p.revents & libc::POLLNVAL == 0)
        .map(|p| p.fd)
        .collect())
}

/// Which file an open descriptor of this process is (`st_dev`, `st_ino` of fstat(2)),
/// whether it is a regular file opened read-only (not `O_PATH`). `EBADF` when `fd` is
/// not open. Reads only; the descriptor is not touched.
pub(crate) fn descriptor_file(fd: RawFd) -> io::Result<(u64, u64, bool)> {
    let (kind, flags) = descriptor_kind(fd)?;
    // SAFETY: fstat(2) writes into a zeroed struct we own; it does not change the
    // descriptor, whoever owns it.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(io::Error::last_os_error());
        }
        st
    };
    let read_only = kind == libc::S_IFREG
        && flags & libc::O_ACCMODE == libc::O_RDONLY
        && flags & libc::O_PATH == 0;
    Ok((st.st_dev, st.st_ino, read_only))
}

/// dup2(2): `to` becomes a copy of `from` (an open descriptor of this process); a
/// descriptor open at `to` is closed first. `to` stays owned by whoever owns it.
pub(crate) fn dup2(from: RawFd, to: RawFd) -> io::Result<()> {
    // SAFETY: dup2 on descriptor numbers; it touches no memory. Replacing `to` is the
    // point: the caller names a number it owns (or stdio).
    if unsafe { libc::dup2(from, to) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Closes every descriptor in `first..=last` (nothing when the range is empty). For a
/// process that owns every descriptor in the range and uses none of them again (a
/// freshly forked worker).
pub(crate) fn close_range(first: RawFd, last: RawFd) {
    if first > last {
        return;
    }
    // SAFETY: close_range(2) only closes descriptors; the caller owns the range.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0u32) };
    if rc != 0 {
        // Kernels before 5.9: close them one by one up to the descriptor limit.
        for fd in first..=last.min(65_536) {
            // SAFETY: as above; EBADF for descriptors that are not open is harmless.
            unsafe { libc::close(fd) };
        }
    }
}

/// Closes every descriptor but stdio (0-2) and `keep`, with one [`close_range`] per gap.
/// For a freshly forked worker, which owns every other descriptor it inherited and
/// uses none of them again.
pub(crate) fn close_all_but(keep: &[RawFd]) {
    let mut keep: Vec<RawFd> = keep.iter().copied().filter(|&fd| fd > 2).collect();
    keep.sort_unstable();
    keep.dedup();
    let mut next = 3;
    for fd in keep {
        close_range(next, fd - 1);
        next = fd + 1;
    }
    close_range(next, RawFd::MAX);
}

/// Most descriptors one frame may carry (a job's arrays; a fork's three pipes).
pub(crate) const MAX_FDS: usize = 64;

/// Control buffer words for MAX_FDS descriptors (CMSG_SPACE, rounded up to u64s).
const fn control_words() -> usize {
    let header = std::mem::size_of::<libc::cmsghdr>();
    (header + MAX_FDS * std::mem::size_of::<RawFd>()).div_ceil(8) + 2
}

/// One sendmsg(2) of `data` with `fds` attached (SCM_RIGHTS); how many bytes of `data`
/// the socket took. `fds` holds at most [`MAX_FDS`] descriptors, `data` at least a byte.
pub(crate) fn send_with_fds(sock: RawFd, data: &[u8], fds: &[RawFd]) -> io::Result<usize> {
    if fds.len() > MAX_FDS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} descriptors in one frame (at most {MAX_FDS})", fds.len()),
        ));
    }
    if data.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty frame"));
    }
    let mut control = [0u64; control_words()];
    let mut iov = libc::iovec {
        iov_base: data.as_ptr().cast_mut().cast(),
        iov_len: data.len(),
    };
    loop {
        // SAFETY: an all-zero msghdr is valid; the fields set below point at live locals
        // whose sizes they state (sendmsg only reads through `iov_base`), and the
        // CMSG_* macros stay inside `control`, sized for MAX_FDS descriptors.
        let sent = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            if !fds.is_empty() {
                let data_len = std::mem::size_of_val(fds) as u32;
                msg.msg_control = control.as_mut_ptr().cast();
                msg.msg_controllen = libc::CMSG_SPACE(data_len) as usize;
                let cmsg = libc::CMSG_FIRSTHDR(&msg);
                (*cmsg).cmsg_level = libc::SOL_SOCKET;
                (*cmsg).cmsg_type = libc::SCM_RIGHTS;
                (*cmsg).cmsg_len = libc::CMSG_LEN(data_len) as usize;
                std::ptr::copy_nonoverlapping(
                    fds.as_ptr(),
                    libc::CMSG_DATA(cmsg).cast::<RawFd>(),
                    fds.len(),
                );
            }
            libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL)
        };
        if sent >= 0 {
            return Ok(sent as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// One recvmsg(2) into `buf`; descriptors that came with the data are appended to
/// `fds` (close-on-exec, owned). Returns the bytes read and whether the kernel had to
/// drop descriptors for want of room (more than [`MAX_FDS`]).
pub(crate) fn recv_with_fds(
    sock: RawFd,
    buf: &mut [u8],
    fds: &mut VecDeque<OwnedFd>,
) -> io::Result<(usize, bool)> {
    let mut control = [0u64; control_words()];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is valid (no name, no buffers).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    let got = loop {
        // SAFETY: `msg` points at `buf` and `control`, live for this call, with the
        // sizes it states.
        let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    // SAFETY: the CMSG_* macros walk the control buffer the kernel just filled, within
    // the length it reported in msg_controllen; each descriptor it lists was installed
    // in this process by the kernel and is owned by nothing else.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let bytes = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for i in 0..bytes / std::mem::size_of::<RawFd>() {
                    fds.push_back(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok((got, msg.msg_flags & libc::MSG_CTRUNC != 0))
}

// ------------------------------------------------------------------ shared memory

/// An anonymous memory file of `len` bytes that can be sealed (memfd_create(2)).
pub(crate) fn sealable_memfd(name: &std::ffi::CStr, len: usize) -> io::Result<OwnedFd> {
    // SAFETY: memfd_create(2) with a NUL-terminated name that outlives the call.
    let fd =
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created, owned by nothing else.
    let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.set_len(len as u64)?;
    Ok(file.into())
}

/// Seals a memory file against every change: no write, no resize, no further seal.
pub(crate) fn seal_for_good(fd: &OwnedFd) -> io::Result<()> {
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl(2) with integer arguments on a descriptor the caller owns.
    check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) })
}

/// Whether `fd` is a memory file sealed against writes and shrinking, and its size.
pub(crate) fn sealed_size(fd: &OwnedFd) -> Option<u64> {
    // SAFETY: fcntl(2) and fstat(2) on a descriptor the caller owns; fstat writes into
    // a zeroed struct we own.
    let (seals, size) = unsafe {
        let seals = libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS);
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd.as_raw_fd(), &mut st) != 0 {
            return None;
        }
        (seals, st.st_size as u64)
    };
    let needed = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK;
    (seals >= 0 && seals & needed == needed).then_some(size)
}

/// A shared mapping of a descriptor, unmapped on drop.
pub(crate) struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapping {
    /// Maps `len > 0` bytes of `fd` shared, read-only unless `writable`.
    pub(crate) fn new(fd: RawFd, len: usize, writable: bool) -> io::Result<Mapping> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: mmap(2) of a descriptor the caller owns, at an address the kernel
        // chooses; the result is checked before use.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr, len })
    }

    /// The mapped bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes are mapped at `ptr` while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }

    /// The mapped bytes, for writing (a writable mapping only).
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`; `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<u8>(), self.len) }
    }

    /// The start address (page-aligned), for a view that keeps `self` alive.
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr.cast()
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region `new` mapped; nothing borrows it past the
        // owner's lifetime (the worker ties numpy arrays to their owner).
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

// SAFETY: a mapping is plain memory; the raw pointer is only an address.
unsafe impl Send for Mapping {}
// SAFETY: shared access never writes through the pointer (`bytes_mut` needs `&mut`).
unsafe impl Sync for Mapping {}

// ------------------------------------------------------------------ confinement

/// The kernel's Landlock ABI version (landlock_create_ruleset(2) with the VERSION
/// flag: a query that creates no ruleset).
pub(crate) fn landlock_abi(version_flag: u32) -> io::Result<i64> {
    // SAFETY: with a NULL attr, size 0 and the VERSION flag the kernel reads no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            version_flag,
        )
    };
    if v >= 1 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether seccomp filters may return `SECCOMP_RET_ERRNO` here
/// (seccomp(2) `SECCOMP_GET_ACTION_AVAIL`, Linux 4.14).
pub(crate) fn seccomp_errno_available() -> io::Result<()> {
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 through the pointer, which points
    // at a live local for the duration of the call; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets `PR_SET_NO_NEW_PRIVS` (prctl(2)).
pub(crate) fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: integer arguments only (arg2 = 1, the rest 0).
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })
}

/// `PR_GET_NO_NEW_PRIVS` (prctl(2)).
pub(crate) fn no_new_privs() -> io::Result<bool> {
    // SAFETY: takes no pointer; returns the flag.
    let rc = unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc == 1)
}

/// `PR_GET_SECCOMP` (prctl(2)): 0 off, 2 filter mode; `None` if the query failed.
pub(crate) fn seccomp_mode() -> Option<i32> {
    // SAFETY: takes no pointer; returns the mode.
    let rc = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    (rc >= 0).then_some(rc)
}

/// An rlimit (soft, hard).
pub(crate) fn rlimit(resource: libc::__rlimit_resource_t) -> io::Result<(u64, u64)> {
    let mut cur = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `cur` is a valid, writable `struct rlimit` for the duration of the call.
    check(unsafe { libc::getrlimit(resource, &mut cur) })?;
    Ok((cur.rlim_cur, cur.rlim_max))
}

/// Sets an rlimit's soft and hard values.
pub(crate) fn set_rlimit(
    resource: libc::__rlimit_resource_t,
    soft: u64,
    hard: u64,
) -> io::Result<()> {
    let new = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: `new` is a valid `struct rlimit` read by the kernel during the call.
    check(unsafe { libc::setrlimit(resource, &new) })
}

/// Ignores `signal` (SIG_IGN installs no handler code).
pub(crate) fn ignore_signal(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: SIG_IGN runs no code in the handler, so there is no async-signal-safety
    // concern; the caller passes a catchable signal.
    if unsafe { libc::signal(signal, libc::SIG_IGN) } == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

// ------------------------------------------------------------------ mounts

/// statvfs(3) of `path`: (blocks, free blocks, inodes, free inodes).
pub(crate) fn fs_usage(path: &Path) -> Option<(u64, u64, u64, u64)> {
    let path = cstring(path).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; `path` is NUL-terminated.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut st) != 0 {
            return None;
        }
        st
    };
    Some((st.f_blocks, st.f_bfree, st.f_files, st.f_ffree))
}

/// Mounts a tmpfs at `target` with `options` (nosuid, nodev, noexec).
pub(crate) fn mount_tmpfs(target: &Path, options: &str) -> io::Result<()> {
    let tmpfs = c"tmpfs";
    let target = cstring(target)?;
    let options = CString::new(options).map_err(io::Error::other)?;
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // SAFETY: all pointers are NUL-terminated strings that outlive the call.
    check(unsafe {
        libc::mount(
            tmpfs.as_ptr(),
            target.as_ptr(),
            tmpfs.as_ptr(),
            flags,
            options.as_ptr().cast(),
        )
    })
}

/// Bind-mounts `from` onto `to`.
pub(crate) fn bind_mount(from: &Path, to: &Path) -> io::Result<()> {
    let (from, to) = (cstring(from)?, cstring(to)?);
    // SAFETY: NUL-terminated paths that outlive the call; MS_BIND ignores the file
    // system type and data arguments.
    check(unsafe {
        libc::mount(
            from.as_ptr(),
            to.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    })
}

/// Detaches the mount at `path` (lazily: what is bound elsewhere stays).
pub(crate) fn unmount_detach(path: &Path) -> io::Result<()> {
    let path = cstring(path)?;
    // SAFETY: a NUL-terminated path that outlives the call.
    check(unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) })
}

/// A mount namespace of this (single-threaded) process's own whose mounts do not
/// propagate to the host's. As root (CAP_SYS_ADMIN) unshare(CLONE_NEWNS) alone
/// suffices; otherwise a user namespace that maps our own uid and gid gives us the
/// capability inside it (user_namespaces(7)).
pub(crate) fn private_mount_namespace() -> io::Result<()> {
    // SAFETY: unshare(2) changes only this process's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        // SAFETY: getuid/getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        // SAFETY: as above.
        check(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) })?;
        std::fs::write("/proc/self/setgroups", "deny")?;
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    // systemd makes `/` a shared mount: without this our tmpfs would appear on the host.
    // SAFETY: NUL-terminated constant path; null type and data are allowed here.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_descriptors_lists_an_open_number_and_not_a_closed_one() {
        let file = std::fs::File::open("Cargo.toml").unwrap();
        // A copy at a high number, which the other tests' files (lowest free numbers
        // first) do not take or free while this runs.
        // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor, owned by `copy` below.
        let high = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 900) };
        assert!(high >= 900, "{}", io::Error::last_os_error());
        // SAFETY: `high` was just made and is owned by nothing else.
        let copy = unsafe { OwnedFd::from_raw_fd(high) };
        let open = open_descriptors(high + 1).unwrap();
        assert!(open.contains(&high) && open.contains(&file.as_raw_fd()));
        drop(copy);
        assert!(!open_descriptors(high + 1).unwrap().contains(&high));
    }
}
