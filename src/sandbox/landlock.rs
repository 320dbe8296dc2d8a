//! Landlock: file-system, TCP and scope restrictions (landlock(7)).
//!
//! The ruleset *handles* every file-system right of [`TARGET_ABI`] (so every one of
//! them is denied unless a rule grants it), TCP bind and connect (no rule grants
//! them: no TCP at all), and the signal and abstract-unix-socket scopes (no signal to,
//! and no abstract socket of, a process outside the sandbox). Rules then grant:
//!
//! - [`SandboxSpec::read_only`] paths: [`read_only_rights`] (read file, read dir);
//! - [`SandboxSpec::read_write`] paths: [`read_write_rights`] (everything but execute).
//!
//! Execute is granted nowhere, so `execve` is refused by Landlock even where seccomp is
//! unavailable. Landlock does not control `chmod`/`chown`/`utime`/xattrs, `stat` or
//! path traversal (landlock(7), "Current limitations"): the seccomp layer refuses the
//! path-based metadata writers.

use crate::sandbox::{LandlockStatus, SandboxError, SandboxSpec};
use ::landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use std::path::Path;

/// The Landlock ABI whose rights this module requests, pinned (not taken from the
/// running kernel) so that a crate or kernel upgrade cannot silently change what is
/// denied; bump it together with a run of the test suite on a kernel that has it.
/// ABI 7 (Linux 6.15) adds only audit-log flags over ABI 6.
pub const TARGET_ABI: ABI = ABI::V7;

/// The lowest kernel ABI that enforces everything [`TARGET_ABI`] requests
/// (ABI 6, Linux 6.12: signal and abstract-unix-socket scoping). `Require` needs it.
pub const REQUIRED_ABI: i32 = 6;

/// `LANDLOCK_CREATE_RULESET_VERSION` from `<linux/landlock.h>` (landlock(7)).
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1 << 0;

/// The kernel's Landlock ABI, or why there is none. Read-only query: it creates no
/// ruleset and restricts nothing (landlock_create_ruleset(2) with
/// `LANDLOCK_CREATE_RULESET_VERSION`).
pub fn kernel_abi() -> Result<i32, &'static str> {
    match crate::sys::landlock_abi(LANDLOCK_CREATE_RULESET_VERSION) {
        Ok(v) => Ok(i32::try_from(v).unwrap_or(i32::MAX)),
        Err(e) => match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => Err("landlock not enabled at boot"),
            Some(libc::ENOSYS) => Err("landlock not built into the kernel"),
            _ => Err("landlock query failed"),
        },
    }
}

/// Rights on a read-only hierarchy: read files, list directories.
pub fn read_only_rights() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::ReadDir
}

/// Rights on a read-write hierarchy: every right of [`TARGET_ABI`] except execute.
pub fn read_write_rights() -> BitFlags<AccessFs> {
    AccessFs::from_all(TARGET_ABI) & !AccessFs::Execute
}

/// Builds the ruleset and opens every rule path. Restricts nothing yet.
///
/// `require`: every requested right must be supported by the kernel
/// (`CompatLevel::HardRequirement`), otherwise the landlock crate drops what the
/// kernel lacks (`BestEffort`). A path that cannot be opened is an error either way:
/// it is a configuration mistake, not a kernel limitation.
pub fn prepare(spec: &SandboxSpec, require: bool) -> Result<RulesetCreated, SandboxError> {
    let level = if require {
        CompatLevel::HardRequirement
    } else {
        CompatLevel::BestEffort
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(level)
        .handle_access(AccessFs::from_all(TARGET_ABI))?
        .handle_access(AccessNet::from_all(TARGET_ABI))?
        .scope(Scope::from_all(TARGET_ABI))?
        .create()?;
    let rules = spec
        .read_only
        .iter()
        .map(|p| (p, read_only_rights()))
        .chain(spec.read_write.iter().map(|p| (p, read_write_rights())));
    for (path, rights) in rules {
        ruleset = ruleset.add_rule(rule(path, rights)?)?;
    }
    Ok(ruleset)
}

/// A rule for `path`; rights that only make sense on directories are dropped when
/// `path` is not one (the kernel rejects them with `EINVAL`).
fn rule(path: &Path, rights: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, SandboxError> {
    let path_err = |source| SandboxError::Path {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(path_err)?;
    let rights = if meta.is_dir() {
        rights
    } else {
        rights & AccessFs::from_file(TARGET_ABI)
    };
    let fd = PathFd::new(path).map_err(|e| path_err(std::io::Error::other(e)))?;
    Ok(PathBeneath::new(fd, rights))
}

/// Enforces the ruleset on the calling thread (and sets `PR_SET_NO_NEW_PRIVS`, which
/// landlock_restrict_self(2) requires without `CAP_SYS_ADMIN`).
pub fn restrict(ruleset: RulesetCreated, require: bool) -> Result<LandlockStatus, SandboxError> {
    let status = ruleset.restrict_self()?;
    let out = match status.ruleset {
        RulesetStatus::FullyEnforced => LandlockStatus::FullyEnforced,
        RulesetStatus::PartiallyEnforced => LandlockStatus::PartiallyEnforced,
        RulesetStatus::NotEnforced => LandlockStatus::NotEnforced,
    };
    if require && out != LandlockStatus::FullyEnforced {
        return Err(SandboxError::NotSupported {
            layer: crate::sandbox::Layer::Landlock,
            reason: "ruleset not fully enforced".to_owned(),
        });
    }
    Ok(out)
}
