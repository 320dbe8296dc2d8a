//! The worker's writable directories on one private, size- and inode-limited tmpfs.
//!
//! `RLIMIT_FSIZE` bounds each file, not their sum nor their number: without this a job
//! could write (files × 64 MiB) within its deadline and fill the host's disk or inodes.
//! The worker enters a mount namespace of its own (a user namespace too when it is not
//! privileged), mounts one tmpfs with `size=` and `nr_inodes=` (tmpfs(5)) on its empty
//! `scratch/` directory, and bind-mounts three directories of it over `out/`, `tmp/` and
//! `home/`. One file system holds all three, so the bound is on their total. Nothing of
//! it is visible to the host, and it disappears with the worker's last process.
//!
//! Runs before Landlock prepares its rules (the rules must open the new mounts), while
//! the worker is single-threaded (unshare(2) with `CLONE_NEWUSER` requires it), and
//! before seccomp (which denies mount(2) and unshare(2)).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One private tmpfs for a worker's writable directories.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ScratchSpec {
    /// An empty directory the tmpfs is mounted on first (then detached from it).
    pub root: PathBuf,
    /// The directories that get a directory of the tmpfs bind-mounted over them, by
    /// their final name (`out`, `tmp`, `home`).
    pub dirs: Vec<PathBuf>,
    /// Total bytes all of them can hold.
    pub bytes: u64,
    /// Total files and directories they can hold.
    pub files: u64,
}

/// Inodes the tmpfs spends on itself: its root and one directory per bind mount.
fn own_inodes(spec: &ScratchSpec) -> u64 {
    1 + spec.dirs.len() as u64
}

/// Which limit of the scratch file system is used up, if any (statfs(2) of `dir`).
pub fn exhausted(dir: &Path) -> Option<ScratchLimit> {
    let path = cstring(dir).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; `path` is NUL-terminated.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut st) != 0 {
            return None;
        }
        st
    };
    if st.f_files > 0 && st.f_ffree == 0 {
        Some(ScratchLimit::Files)
    } else if st.f_blocks > 0 && st.f_bfree == 0 {
        Some(ScratchLimit::Bytes)
    } else {
        None
    }
}

/// The limit of the scratch file system a job used up.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ScratchLimit {
    /// The bytes of all files together.
    Bytes,
    /// The number of files and directories.
    Files,
}

/// Mounts the scratch file system (see the module docs). On error nothing is mounted
/// and the directories stay as they were.
pub fn mount(spec: &ScratchSpec) -> io::Result<()> {
    private_mount_namespace()?;
    let options = format!(
        "size={},nr_inodes={},mode=0700",
        spec.bytes.max(4096),
        spec.files + own_inodes(spec)
    );
    let root = cstring(&spec.root)?;
    let tmpfs = c"tmpfs";
    let options = CString::new(options).map_err(io::Error::other)?;
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // SAFETY: all pointers are NUL-terminated strings that outlive the call.
    check(unsafe {
        libc::mount(
            tmpfs.as_ptr(),
            root.as_ptr(),
            tmpfs.as_ptr(),
            flags,
            options.as_ptr().cast(),
        )
    })?;
    for dir in &spec.dirs {
        let name = dir
            .file_name()
            .ok_or_else(|| io::Error::other("scratch directory without a name"))?;
        let inside = spec.root.join(name);
        std::fs::create_dir(&inside)?;
        let (from, to) = (cstring(&inside)?, cstring(dir)?);
        // SAFETY: as above; MS_BIND ignores the file system type and data arguments.
        check(unsafe {
            libc::mount(
                from.as_ptr(),
                to.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        })?;
    }
    // The binds keep the file system alive; `scratch/` itself is an empty directory again.
    // SAFETY: `root` is a NUL-terminated path.
    check(unsafe { libc::umount2(root.as_ptr(), libc::MNT_DETACH) })?;
    Ok(())
}

/// A mount namespace of our own whose mounts do not propagate to the host's. As root
/// (CAP_SYS_ADMIN) unshare(CLONE_NEWNS) alone suffices; otherwise a user namespace that
/// maps our own uid and gid gives us the capability inside it (user_namespaces(7)).
fn private_mount_namespace() -> io::Result<()> {
    // SAFETY: unshare(2) changes only this (single-threaded) process's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        // SAFETY: getuid/getgid cannot fail.
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

fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
