//! What a worker holds when it starts serving, and whether a job left it holding more.
//!
//! The between-job reset empties the worker's writable directories and puts library
//! state back, but a job can keep a resource past it: a file object stored where no
//! guarded table holds it, a descriptor inside a reference cycle, a file it wrote and
//! keeps open (the reset deletes the file, but its blocks stay allocated on the scratch
//! file system while it is open). The next job on the worker would then hit "too many
//! open files" or "no space left on device" for no fault of its own. So after every
//! reset the worker compares what it holds with what it held when it became ready (its
//! birth), and reports any growth as a state change: the supervisor retires it (reason
//! `state_changed`, the detail naming the resource).
//!
//! - Descriptors are counted with one `fcntl(F_GETFD)` per number below the open-files
//!   limit, and each open one is identified with fstat(2) (`crate::sys`; a confined
//!   worker cannot read `/proc/self/fd`): the kernel hands out the lowest free number,
//!   so whatever a job opens lands there. The protocol pair lives above the limit (see
//!   `fds`), or is counted at birth.
//! - One growth is legitimate: matplotlib's font caches keep the font files they used
//!   open (a job drawing bold, mathtext or another family adds some; a forked worker
//!   starts with none). Descriptors of read-only font files matplotlib lists
//!   (`state_guard.font_files`) are counted apart and may reach [`FONT_FILES`]; past
//!   that, or when any other descriptor is above birth, the cached fonts are dropped
//!   (`state_guard.release_font_files`, which also collects garbage) and the count is
//!   taken again: only what remains is a job's.
//! - The scratch file system's used blocks and inodes (statvfs(3) of `out/`) are
//!   compared when the worker has its own scratch mount (otherwise its directories sit
//!   on a file system other processes use, whose numbers say nothing of the worker).

use std::collections::HashSet;
use std::os::fd::RawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::PyModule;

/// At most this many descriptor numbers are looked at (when the open-files limit is
/// higher, a job would have to hold all of them before one landed above).
const MAX_COUNTED: u64 = 4096;

/// Font files matplotlib's caches may keep open between jobs: `_get_font` keeps 64
/// faces (each with its fallback fonts), mathtext's font sets a dozen more. Above this
/// the caches are dropped before counting again. A quarter of the default open-files
/// limit (256), so a job cannot use font files to take more than that from the next.
pub(super) const FONT_FILES: usize = 64;

/// What the worker held when it became ready.
pub(super) struct Birth {
    /// Numbers below this are counted.
    below: RawFd,
    /// Descriptors open at birth that are not font files.
    others: usize,
    /// (device, inode) of every font file matplotlib lists.
    fonts: HashSet<(u64, u64)>,
    /// The scratch directory and its (used blocks, used inodes), when the worker has a
    /// scratch mount of its own.
    scratch: Option<(PathBuf, u64, u64)>,
}

impl Birth {
    /// Takes the numbers now; `scratch`: a directory on the worker's own scratch mount.
    /// The state guard's template becomes what the worker's set-up left since warm-up
    /// (`state_guard.rebase`): its environment, the imports closed after warm-up.
    pub(super) fn now(guard: Option<&Py<PyModule>>, scratch: Option<&Path>) -> PyResult<Birth> {
        let font_paths = Python::attach(|py| {
            let Some(guard) = guard.map(|g| g.bind(py)) else {
                return Ok(Vec::new());
            };
            guard.call_method0("rebase")?;
            guard.call_method0("font_files")?.extract::<Vec<String>>()
        })?;
        let fonts = font_paths
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| (m.dev(), m.ino()))
            .collect();
        let soft = crate::sys::rlimit(libc::RLIMIT_NOFILE).map_or(1024, |(soft, _)| soft);
        let below = RawFd::try_from(soft.min(MAX_COUNTED)).unwrap_or(1024);
        let mut birth = Birth {
            below,
            others: 0,
            fonts,
            scratch: scratch.and_then(|dir| {
                let (blocks, files) = scratch_used(dir)?;
                Some((dir.to_path_buf(), blocks, files))
            }),
        };
        birth.others = birth.count().1;
        Ok(birth)
    }

    /// (font files, every other descriptor) open below the counted limit.
    fn count(&self) -> (usize, usize) {
        let (mut fonts, mut others) = (0, 0);
        let open =
            crate::sys::open_descriptors(self.below).unwrap_or_else(|_| (0..self.below).collect());
        for fd in open {
            match crate::sys::descriptor_file(fd) {
                Ok((dev, ino, true)) if self.fonts.contains(&(dev, ino)) => fonts += 1,
                Ok(_) => others += 1,
                Err(e) if e.raw_os_error() == Some(libc::EBADF) => {}
                Err(_) => others += 1,
            }
        }
        (fonts, others)
    }

    /// What the worker holds beyond its birth after a reset, as state changes (empty:
    /// nothing). Drops matplotlib's cached fonts first when the count is above bounds.
    pub(super) fn grown(&self, guard: Option<&Py<PyModule>>) -> Vec<String> {
        let mut grown = Vec::new();
        let mut open = self.count();
        if open.0 > FONT_FILES || open.1 > self.others {
            release_font_files(guard);
            open = self.count();
        }
        let (fonts, others) = open;
        if others > self.others {
            grown.push(format!(
                "{others} descriptors open after the reset, {} when the worker started: a \
                 job kept files, pipes or sockets open",
                self.others
            ));
        }
        if fonts > FONT_FILES {
            grown.push(format!(
                "{fonts} font files open after the reset (matplotlib's caches keep at most \
                 {FONT_FILES}): a job kept them open"
            ));
        }
        if let Some((dir, blocks, files)) = &self.scratch {
            match scratch_used(dir) {
                Some((b, f)) if b > *blocks || f > *files => grown.push(format!(
                    "the scratch file system holds {} more blocks and {} more files after the \
                     reset emptied it than when the worker started: a job kept deleted files \
                     open",
                    b.saturating_sub(*blocks),
                    f.saturating_sub(*files)
                )),
                Some(_) => {}
                None => grown.push("the scratch file system cannot be measured".into()),
            }
        }
        grown
    }
}

/// (used blocks, used inodes) of the file system holding `dir`.
fn scratch_used(dir: &Path) -> Option<(u64, u64)> {
    let (blocks, free_blocks, files, free_files) = crate::sys::fs_usage(dir)?;
    Some((
        blocks.saturating_sub(free_blocks),
        files.saturating_sub(free_files),
    ))
}

/// Drops the font objects matplotlib's caches keep (each holds its file open) and
/// collects garbage, through the state guard; nothing when the worker has none.
fn release_font_files(guard: Option<&Py<PyModule>>) {
    let Some(guard) = guard else { return };
    Python::attach(|py| {
        guard.bind(py).call_method0("release_font_files")?;
        Ok::<(), PyErr>(())
    })
    .unwrap_or_else(|e| eprintln!("pyward-worker: releasing font files: {e}"));
}
