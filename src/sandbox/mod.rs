//! Kernel confinement of a worker (interim: rlimits only; Landlock and seccomp land next).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How strictly the sandbox must be installed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Every layer must be fully enforced, else the worker refuses to start.
    Require,
    /// Apply what the kernel supports and report it.
    BestEffort,
    /// Apply nothing (development and tests only).
    Off,
}

/// What to confine a worker to.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct SandboxSpec {
    /// Strictness.
    pub mode: SandboxMode,
    /// Readable paths.
    pub read_only: Vec<PathBuf>,
    /// Readable and writable paths.
    pub read_write: Vec<PathBuf>,
    /// Resource limits.
    pub limits: Rlimits,
}

/// Resource limits, in bytes or counts.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct Rlimits {
    /// `RLIMIT_AS`.
    pub address_space: Option<u64>,
    /// `RLIMIT_FSIZE`.
    pub file_size: Option<u64>,
    /// `RLIMIT_NOFILE`.
    pub open_files: Option<u64>,
    /// `RLIMIT_NPROC`.
    pub processes: Option<u64>,
}

/// What was really enforced.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Enforcement {
    /// Resource limits applied.
    pub rlimits: bool,
    /// Landlock status.
    pub landlock: LandlockStatus,
    /// `PR_SET_NO_NEW_PRIVS` set.
    pub no_new_privs: bool,
    /// seccomp filter installed.
    pub seccomp: bool,
}

/// Landlock outcome.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LandlockStatus {
    /// All rules enforced.
    FullyEnforced,
    /// Some rights unsupported by this kernel.
    PartiallyEnforced,
    /// Not enforced.
    NotEnforced,
}

/// Sandbox installation failure.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum SandboxError {
    /// A layer is not available.
    #[error("{layer} not supported: {reason}")]
    NotSupported {
        /// Layer name.
        layer: &'static str,
        /// Why.
        reason: String,
    },
}

/// Applies the sandbox.
pub fn apply(spec: &SandboxSpec) -> Result<Enforcement, SandboxError> {
    if spec.mode == SandboxMode::Require {
        return Err(SandboxError::NotSupported {
            layer: "landlock",
            reason: "not built yet".into(),
        });
    }
    Ok(Enforcement {
        rlimits: false,
        landlock: LandlockStatus::NotEnforced,
        no_new_privs: false,
        seccomp: false,
    })
}
