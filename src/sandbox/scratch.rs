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

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One private tmpfs for a worker's writable directories.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
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

impl ScratchSpec {
    /// A tmpfs mounted on `root` for `dirs`, holding `bytes` and `files` in all.
    pub fn new(root: PathBuf, dirs: Vec<PathBuf>, bytes: u64, files: u64) -> ScratchSpec {
        ScratchSpec {
            root,
            dirs,
            bytes,
            files,
        }
    }
}

/// Inodes the tmpfs spends on itself: its root and one directory per bind mount.
fn own_inodes(spec: &ScratchSpec) -> u64 {
    1 + spec.dirs.len() as u64
}

/// Which limit of the scratch file system is used up, if any (statfs(2) of `dir`).
pub fn exhausted(dir: &Path) -> Option<ScratchLimit> {
    let (blocks, free_blocks, files, free_files) = crate::sys::fs_usage(dir)?;
    if files > 0 && free_files == 0 {
        Some(ScratchLimit::Files)
    } else if blocks > 0 && free_blocks == 0 {
        Some(ScratchLimit::Bytes)
    } else {
        None
    }
}

/// The limit of the scratch file system a job used up.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScratchLimit {
    /// The bytes of all files together.
    Bytes,
    /// The number of files and directories.
    Files,
}

/// Mounts the scratch file system (see the module docs). On error nothing is mounted
/// and the directories stay as they were.
pub fn mount(spec: &ScratchSpec) -> io::Result<()> {
    crate::sys::private_mount_namespace()?;
    let options = format!(
        "size={},nr_inodes={},mode=0700",
        spec.bytes.max(4096),
        spec.files + own_inodes(spec)
    );
    crate::sys::mount_tmpfs(&spec.root, &options)?;
    for dir in &spec.dirs {
        let name = dir
            .file_name()
            .ok_or_else(|| io::Error::other("scratch directory without a name"))?;
        let inside = spec.root.join(name);
        std::fs::create_dir(&inside)?;
        crate::sys::bind_mount(&inside, dir)?;
    }
    // The binds keep the file system alive; `scratch/` itself is an empty directory again.
    crate::sys::unmount_detach(&spec.root)
}
