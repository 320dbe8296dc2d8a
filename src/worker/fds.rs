//! The worker's own descriptors: where its channel to the host lives, and what else may
//! still be open when the first job starts.
//!
//! A job that reaches a descriptor number reaches what it points at, past every path
//! rule: Landlock judges a file when it is opened, never again, and seccomp lets a
//! worker read and write. The worker's most valuable descriptors are its two protocol
//! descriptors (frames to and from the host), so:
//!
//! - they do not live where a probe of small numbers finds them: [`to_high_number`]
//!   moves each to a number drawn at random in the upper half of what the process may
//!   number (see [`high_range`]); with any hard limit above 512 that is above the
//!   open-files limit the sandbox sets later (256 by default), so no number a job's own
//!   `open` gets can ever land next to them or on them;
//! - nothing else of value is open when the first job starts: [`close_strays`] closes
//!   every descriptor but stdio, the protocol pair and read-only files the job could
//!   open by name anyway (the fonts matplotlib's cache holds);
//! - and the audit hook refuses integer "paths" (`open(4)`, `scipy.io.netcdf_file(4)`)
//!   from everyone once armed (`super::audit`).
//!
//! A random number is no secret from code that can call `fstat` on every number (code
//! holding the real `os`, as the gate-off tests do, can), which is why the hook, not the
//! number, is the line. What the
//! number buys is that the obvious probe, and a library's "open what you were given",
//! find nothing.

use std::io;
use std::os::fd::{AsFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use crate::sys;

/// The highest number the protocol descriptors are drawn below, whatever the hard
/// limit allows: the kernel sizes a process's descriptor table to its highest open
/// number (8 bytes a slot, rounded up to a power of two), so 2^16 costs a worker
/// 512 KiB of kernel memory at most, while 2^20 would cost 8 MiB.
const CEILING: u64 = 1 << 16;

/// Below this, a hard limit leaves no room worth drawing from: the descriptor stays
/// where it is (the lowest free number above stdio).
const SMALLEST_RANGE: u64 = 64;

/// The numbers protocol descriptors are drawn from, `[low, high)`: the upper half of
/// `min(hard RLIMIT_NOFILE, CEILING)`. `None` when the hard limit is too small to
/// bother.
fn high_range(hard: u64) -> Option<(RawFd, RawFd)> {
    let high = hard.min(CEILING);
    if high < SMALLEST_RANGE {
        return None;
    }
    Some(((high / 2) as RawFd, high as RawFd))
}

/// A uniformly drawn number in `[low, high)` (the modulo bias of 32 random bits over a
/// range of at most 2^15 is below 10^-5).
fn draw(low: RawFd, high: RawFd) -> io::Result<RawFd> {
    let mut bytes = [0u8; 4];
    sys::fill_random(&mut bytes)?;
    let span = (high - low) as u32;
    Ok(low + (u32::from_ne_bytes(bytes) % span) as RawFd)
}

/// Moves `fd` to a close-on-exec descriptor at a random number in [`high_range`] and
/// closes the old one.
///
/// `F_DUPFD_CLOEXEC` only places a descriptor below the *soft* `RLIMIT_NOFILE`, so the
/// soft limit is raised to the range's top for the move (an unprivileged process may,
/// up to the hard limit) and put back after it. A descriptor above the soft limit stays
/// fully usable: the limit is checked when a number is allocated, never when one is
/// used. The sandbox lowers the limit (soft and hard) later, in `sandbox::rlimits`,
/// which again only bounds the numbers the job's own opens get.
pub(super) fn to_high_number(fd: OwnedFd) -> io::Result<OwnedFd> {
    let (soft, hard) = sys::rlimit(libc::RLIMIT_NOFILE)?;
    let Some((mut low, mut high)) = high_range(hard) else {
        return Ok(fd);
    };
    let mut raised = false;
    if soft < high as u64 {
        raised = sys::set_rlimit(libc::RLIMIT_NOFILE, high as u64, hard).is_ok();
        if !raised {
            // Refused here (a container's own filter): the upper half of what the soft
            // limit allows instead.
            let Some(range) = high_range(soft) else {
                return Ok(fd);
            };
            (low, high) = range;
        }
    }
    let mut moved = Err(io::Error::from_raw_os_error(libc::EMFILE));
    // A draw near the top can find every number above it taken (the other protocol
    // descriptor): draw again, a few times, then take the lowest free in the range.
    for _ in 0..4 {
        moved = draw(low, high).and_then(|at| sys::dup_at_least(fd.as_fd(), at));
        if !matches!(&moved, Err(e) if e.raw_os_error() == Some(libc::EMFILE)) {
            break;
        }
    }
    if matches!(&moved, Err(e) if e.raw_os_error() == Some(libc::EMFILE)) {
        moved = sys::dup_at_least(fd.as_fd(), low);
    }
    if raised {
        sys::set_rlimit(libc::RLIMIT_NOFILE, soft, hard)?;
    }
    moved
}

/// Closes every descriptor of this process but stdio (0-2), `keep`, and read-only
/// regular files inside `read_roots`; returns what it closed (`"12 -> target"`), for
/// the worker's stderr.
///
/// Called once, right before the audit hook is armed and the sandbox goes on, after
/// warm-up (cold worker) or after the fork's own clean-up and the prewarm render
/// (forked worker). What is open then, measured: stdio, the protocol pair, and in a
/// cold worker about 120 font files matplotlib's font cache keeps open (a worker
/// forked from the zygote inherits none: the zygote releases them before it forks).
/// The fonts stay: their owner reads glyphs through them, they are read-only files the
/// job may open by name anyway, and releasing the cache costs every cold worker's
/// first render about 10 ms (measured: 20 ms warm, 27-34 ms after `cache_clear`). Anything
/// else (a pipe, a socket, a directory, a writable file, a file outside the read roots)
/// has no business in a job's process and is closed, owner or not: an owner that uses
/// it again gets `EBADF`, which is the point.
pub(super) fn close_strays(keep: &[RawFd], read_roots: &[PathBuf]) -> io::Result<Vec<String>> {
    let mut roots: Vec<PathBuf> = read_roots.to_vec();
    roots.extend(read_roots.iter().filter_map(|r| r.canonicalize().ok()));
    // Listed first, judged after: the listing's own descriptor is closed by then.
    let open: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    let mut closed = Vec::new();
    for fd in open {
        if fd <= 2 || keep.contains(&fd) {
            continue;
        }
        let Ok((kind, flags)) = sys::descriptor_kind(fd) else {
            continue; // the listing's own descriptor, gone
        };
        let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok();
        if harmless(kind, flags, target.as_deref(), &roots) {
            continue;
        }
        sys::close_stray(fd);
        let target = target.map_or_else(|| "?".into(), |t| t.display().to_string());
        closed.push(format!("{fd} -> {target}"));
    }
    Ok(closed)
}

/// Whether a descriptor gives a job nothing it could not get by name: a regular file,
/// opened read-only (not `O_PATH`), whose current path lies inside a read root.
fn harmless(
    kind: libc::mode_t,
    flags: libc::c_int,
    target: Option<&Path>,
    roots: &[PathBuf],
) -> bool {
    let regular = kind == libc::S_IFREG;
    let read_only = flags & libc::O_ACCMODE == libc::O_RDONLY && flags & libc::O_PATH == 0;
    // A deleted file's link reads "<path> (deleted)": not a path the roots vouch for.
    let inside = target.is_some_and(|t| {
        t.is_absolute()
            && !t.to_string_lossy().ends_with(" (deleted)")
            && roots.iter().any(|r| t.starts_with(r))
    });
    regular && read_only && inside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_the_upper_half_below_the_ceiling() {
        assert_eq!(high_range(20_000), Some((10_000, 20_000)));
        assert_eq!(high_range(1 << 20), Some((1 << 15, 1 << 16)));
        assert_eq!(high_range(u64::MAX), Some((1 << 15, 1 << 16)));
        assert_eq!(high_range(1024), Some((512, 1024)));
        assert_eq!(high_range(32), None);
    }

    #[test]
    fn draws_stay_in_the_range() {
        for _ in 0..1000 {
            let n = draw(512, 1024).unwrap();
            assert!((512..1024).contains(&n), "{n}");
        }
    }

    #[test]
    fn only_read_only_regular_files_inside_a_root_are_harmless() {
        let roots = [PathBuf::from("/usr/share/fonts")];
        let font = Some(Path::new("/usr/share/fonts/dejavu/DejaVuSans.ttf"));
        let rdonly = libc::O_RDONLY | libc::O_CLOEXEC;
        assert!(harmless(libc::S_IFREG, rdonly, font, &roots));
        assert!(!harmless(libc::S_IFREG, libc::O_RDWR, font, &roots));
        assert!(!harmless(libc::S_IFREG, libc::O_WRONLY, font, &roots));
        assert!(!harmless(libc::S_IFREG, libc::O_PATH, font, &roots));
        assert!(!harmless(libc::S_IFDIR, rdonly, font, &roots));
        assert!(!harmless(libc::S_IFSOCK, rdonly, font, &roots));
        assert!(!harmless(libc::S_IFIFO, rdonly, font, &roots));
        let outside = Some(Path::new("/etc/passwd"));
        assert!(!harmless(libc::S_IFREG, rdonly, outside, &roots));
        let deleted = Some(Path::new("/usr/share/fonts/x.ttf (deleted)"));
        assert!(!harmless(libc::S_IFREG, rdonly, deleted, &roots));
        assert!(!harmless(libc::S_IFREG, rdonly, None, &roots));
    }

    #[test]
    fn a_moved_descriptor_lands_high_and_still_works() {
        use std::io::{Read, Write};
        let (r, w) = sys::pipe().unwrap();
        let (r, w) = (to_high_number(r).unwrap(), to_high_number(w).unwrap());
        let (_, hard) = sys::rlimit(libc::RLIMIT_NOFILE).unwrap();
        if let Some((low, high)) = high_range(hard) {
            use std::os::fd::AsRawFd;
            for fd in [&r, &w] {
                assert!((low..high).contains(&fd.as_raw_fd()), "{}", fd.as_raw_fd());
            }
        }
        let (mut r, mut w) = (std::fs::File::from(r), std::fs::File::from(w));
        w.write_all(b"frame").unwrap();
        drop(w);
        let mut got = String::new();
        r.read_to_string(&mut got).unwrap();
        assert_eq!(got, "frame");
    }
}
