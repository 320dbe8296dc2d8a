//! Resource limits (setrlimit(2)) and the `SIGXFSZ` disposition.

use crate::sandbox::{Rlimits, SandboxError};

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

/// Sets `RLIMIT_CORE` to 0 and every limit in `limits`, soft and hard, then sets
/// `SIGXFSZ` to `SIG_IGN`.
///
/// setrlimit(2): an unprivileged process may lower its hard limit but never raise it,
/// so each value is clamped to the inherited hard limit (already stricter). Once the
/// seccomp filter is on, `setrlimit` and writing `prlimit64` are refused even for root.
///
/// setrlimit(2), `RLIMIT_FSIZE`: "a process that attempts to extend a file beyond this
/// size is sent a SIGXFSZ signal. By default, this signal terminates a process, but a
/// process can catch this signal instead, in which case the relevant system call
/// fails with the error EFBIG." Ignoring it gives Python an `OSError(EFBIG)` and keeps
/// the worker alive (CPython also ignores it at start-up; doing it here does not rely
/// on that).
pub fn apply(limits: &Rlimits) -> Result<(), SandboxError> {
    set(libc::RLIMIT_CORE, "core", 0)?;
    let table: [(Resource, &'static str, Option<u64>); 4] = [
        (libc::RLIMIT_AS, "as", limits.address_space),
        (libc::RLIMIT_FSIZE, "fsize", limits.file_size),
        (libc::RLIMIT_NOFILE, "nofile", limits.open_files),
        (libc::RLIMIT_NPROC, "nproc", limits.processes),
    ];
    for (resource, name, value) in table {
        if let Some(v) = value {
            set(resource, name, v)?;
        }
    }
    ignore_sigxfsz()
}

/// Sets soft = hard = `min(value, current hard)` for `resource`.
fn set(resource: Resource, name: &'static str, value: u64) -> Result<(), SandboxError> {
    let err = |source| SandboxError::Rlimit {
        resource: name,
        source,
    };
    let (_, hard) = crate::sys::rlimit(resource).map_err(err)?;
    let v = value.min(hard);
    crate::sys::set_rlimit(resource, v, v).map_err(err)?;
    Ok(())
}

/// `signal(SIGXFSZ, SIG_IGN)`; see [`apply`].
fn ignore_sigxfsz() -> Result<(), SandboxError> {
    crate::sys::ignore_signal(libc::SIGXFSZ).map_err(SandboxError::Signal)?;
    Ok(())
}
