//! Kernel confinement a worker applies to itself after warm-up, before its first job.
//!
//! Four layers, applied by one ordered [`apply`], after one preparation step:
//!
//! 0. **scratch** ([`scratch`]): the writable directories move onto one private tmpfs
//!    whose size and inode count bound everything a job can write in total.
//! 1. **rlimits** ([`rlimits`]): address space, file size, open files, processes; core
//!    dumps always off. `SIGXFSZ` is set to `SIG_IGN` so a write past the file-size cap
//!    fails with `EFBIG` instead of killing the worker (setrlimit(2)).
//! 2. **Landlock** ([`landlock`]): read-only access to [`SandboxSpec::read_only`],
//!    read-write access to [`SandboxSpec::read_write`], nothing else; TCP bind/connect
//!    denied; signals and abstract unix sockets scoped to the sandbox (landlock(7)).
//! 3. **no_new_privs** (prctl(2) `PR_SET_NO_NEW_PRIVS`): no set-uid or file-capability
//!    gain through `execve`, and the precondition for 2 and 4 without `CAP_SYS_ADMIN`.
//! 4. **seccomp-bpf** ([`seccomp`]): a syscall allowlist; network, exec, fork, ptrace,
//!    other-process signals and kernel-administration syscalls fail with an errno, so
//!    Python raises and the worker survives to report it (seccomp(2)).
//!
//! Everything is irreversible for the life of the process. [`probe`] answers what this
//! kernel supports without restricting the caller (for `pyward doctor`).
//!
//! What it does *not* cover: CPU time and wall time (the supervisor's watchdog), RSS
//! (the supervisor; `RLIMIT_AS` bounds virtual memory only), and anything reachable
//! through file descriptors that were already open before [`apply`] (Landlock checks
//! at `open`, not at `read`): the worker must close every descriptor it does not need
//! for the job loop before calling [`apply`].

pub mod landlock;
pub mod rlimits;
pub mod scratch;
pub mod seccomp;

pub use scratch::{ScratchLimit, ScratchSpec};

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// How strictly [`apply`] treats a layer the kernel cannot enforce.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxMode {
    /// Every layer must be fully enforced, or [`apply`] returns an error. The
    /// production default. Needs Landlock ABI >= 6 (Linux 6.12) and seccomp filters.
    Require,
    /// Apply what the kernel supports and report it in [`Enforcement`]. For development
    /// machines with older kernels.
    BestEffort,
    /// Apply nothing. Tests and development only: the worker runs unconfined.
    Off,
}

/// What a worker's sandbox allows. Paths must exist when [`apply`] runs.
#[derive(Serialize, Deserialize, Clone, Debug)]
#[non_exhaustive]
pub struct SandboxSpec {
    /// Enforcement mode; see [`SandboxMode`].
    pub mode: SandboxMode,
    /// Hierarchies readable (read file, list directory) and nothing more: the Python
    /// prefix, the virtualenv, matplotlib data, fonts, the worker's `src/`. Execute is
    /// never granted: Landlock's execute right guards `execve(2)` only, and shared
    /// objects are `mmap`ed with `PROT_EXEC` from files opened for reading, which
    /// needs the read right alone (tested).
    pub read_only: Vec<PathBuf>,
    /// Hierarchies with every file-system right except execute: the worker's `out/`,
    /// `tmp/`, and its private `HOME`/`MPLCONFIGDIR`.
    pub read_write: Vec<PathBuf>,
    /// Resource limits; see [`Rlimits`].
    pub limits: Rlimits,
    /// The one descriptor recvmsg(2) may read: the worker's protocol socket, which
    /// carries the shared memory of a job's arrays. Set by the worker itself (only it
    /// knows the number); `None` denies recvmsg everywhere.
    #[serde(skip)]
    pub receive_fd: Option<i32>,
    /// The private tmpfs for the writable directories (`None`: they stay on the host's
    /// file system, bounded per file only).
    #[serde(default)]
    pub scratch: Option<ScratchSpec>,
}

impl SandboxSpec {
    /// A spec with exactly the given paths and limits (no system paths).
    pub fn new(
        mode: SandboxMode,
        read_only: Vec<PathBuf>,
        read_write: Vec<PathBuf>,
        limits: Rlimits,
    ) -> Self {
        Self {
            mode,
            read_only,
            read_write,
            limits,
            receive_fd: None,
            scratch: None,
        }
    }

    /// Puts the writable directories on a private tmpfs (see [`scratch`]).
    pub fn with_scratch(mut self, scratch: ScratchSpec) -> Self {
        self.scratch = Some(scratch);
        self
    }

    /// Adds the system paths a plotting job legitimately touches, each only if it
    /// exists on this machine:
    ///
    /// - read-only: [`SYSTEM_READ_ONLY`] (`/dev/urandom`, `/dev/zero`, system fonts,
    ///   the time-zone database and `/etc/localtime` for pandas/`time.localtime`);
    /// - read-write: [`SYSTEM_READ_WRITE`] (`/dev/null`).
    ///
    /// Deliberately absent: `/proc` (no `/proc/<pid>` of anyone, not even the worker's
    /// own), `/sys`, the rest of `/etc`, `/tmp`, home directories and the host's working
    /// directory. matplotlib renders with its bundled DejaVu fonts and the font cache
    /// built at warm-up, so `/etc/fonts` is not needed; system fonts are readable only
    /// so that an explicit `fontproperties` path still works.
    pub fn with_system_defaults(mut self) -> Self {
        let existing = |list: &[&str]| -> Vec<PathBuf> {
            list.iter()
                .map(PathBuf::from)
                .filter(|p| p.exists())
                .collect()
        };
        self.read_only.extend(existing(SYSTEM_READ_ONLY));
        self.read_write.extend(existing(SYSTEM_READ_WRITE));
        self
    }
}

/// System paths [`SandboxSpec::with_system_defaults`] makes readable (when present).
pub const SYSTEM_READ_ONLY: &[&str] = &[
    "/dev/urandom",
    "/dev/zero",
    "/usr/share/fonts",
    "/usr/share/zoneinfo",
    "/etc/localtime",
];

/// System paths [`SandboxSpec::with_system_defaults`] makes writable (when present).
pub const SYSTEM_READ_WRITE: &[&str] = &["/dev/null"];

/// Resource limits (setrlimit(2)); `None` leaves the inherited limit. Each value sets
/// both the soft and the hard limit, lowered to the inherited hard limit if that is
/// already smaller. Core dumps are always disabled (`RLIMIT_CORE` = 0).
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[non_exhaustive]
pub struct Rlimits {
    /// `RLIMIT_AS`, bytes of virtual address space. Counts reservations, not RSS: numpy,
    /// OpenBLAS and thread stacks reserve generously, so leave headroom over the RSS
    /// ceiling the supervisor enforces. A huge allocation fails with `ENOMEM`
    /// (`MemoryError` in Python).
    pub address_space: Option<u64>,
    /// `RLIMIT_FSIZE`, the largest file the worker may write, bytes. Writing past it
    /// fails with `EFBIG` (`SIGXFSZ` is ignored by [`apply`]).
    pub file_size: Option<u64>,
    /// `RLIMIT_NOFILE`, one more than the highest descriptor number that can be opened.
    /// Descriptors already open stay open.
    pub open_files: Option<u64>,
    /// `RLIMIT_NPROC`. Counts every task (threads too) of the worker's *real user id*,
    /// host processes included, and is not enforced for root or `CAP_SYS_RESOURCE`.
    /// Process creation is refused by seccomp anyway; this is the backstop.
    pub processes: Option<u64>,
}

impl Rlimits {
    /// With `RLIMIT_AS` at `bytes`.
    pub fn address_space(mut self, bytes: u64) -> Rlimits {
        self.address_space = Some(bytes);
        self
    }

    /// With `RLIMIT_FSIZE` at `bytes`.
    pub fn file_size(mut self, bytes: u64) -> Rlimits {
        self.file_size = Some(bytes);
        self
    }

    /// With `RLIMIT_NOFILE` at `count`.
    pub fn open_files(mut self, count: u64) -> Rlimits {
        self.open_files = Some(count);
        self
    }

    /// With `RLIMIT_NPROC` at `count`.
    pub fn processes(mut self, count: u64) -> Rlimits {
        self.processes = Some(count);
        self
    }
}

/// What [`apply`] really enforced. Goes into every job outcome and `pyward doctor`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Enforcement {
    /// Every requested rlimit (and `RLIMIT_CORE` = 0) is set.
    pub rlimits: bool,
    /// Landlock status as reported by the kernel through the landlock crate.
    pub landlock: LandlockStatus,
    /// `PR_GET_NO_NEW_PRIVS` reads 1 after [`apply`].
    pub no_new_privs: bool,
    /// The seccomp filters are installed on every thread.
    pub seccomp: bool,
    /// The kernel's Landlock ABI version, `None` when Landlock is unavailable.
    pub landlock_abi: Option<i32>,
    /// The writable directories are on the private, size- and inode-limited tmpfs.
    #[serde(default)]
    pub scratch: bool,
    /// Short lowercase notes on each degradation (empty when everything is enforced).
    pub degraded: Vec<String>,
}

impl Enforcement {
    /// Nothing enforced (what [`SandboxMode::Off`] returns).
    pub fn none() -> Self {
        Self {
            rlimits: false,
            landlock: LandlockStatus::NotEnforced,
            no_new_privs: false,
            seccomp: false,
            landlock_abi: None,
            scratch: false,
            degraded: vec!["sandbox off".to_owned()],
        }
    }

    /// Every layer fully enforced.
    pub fn is_full(&self) -> bool {
        self.rlimits
            && self.landlock == LandlockStatus::FullyEnforced
            && self.no_new_privs
            && self.seccomp
    }
}

/// Landlock enforcement, as `landlock::RulesetStatus` reports it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LandlockStatus {
    /// Every requested access right, network right and scope is enforced.
    FullyEnforced,
    /// Some requested rights are enforced (an older Landlock ABI).
    PartiallyEnforced,
    /// Landlock is unavailable, disabled, or was not applied.
    NotEnforced,
}

/// What this kernel supports, found without restricting the caller ([`probe`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Support {
    /// Kernel Landlock ABI version; `None` when Landlock is not built in or not enabled.
    pub landlock_abi: Option<i32>,
    /// Why Landlock is unavailable, when it is.
    pub landlock_reason: Option<String>,
    /// The Landlock ABI this module requests and was tested with.
    pub landlock_target_abi: i32,
    /// Minimum kernel Landlock ABI for [`SandboxMode::Require`] to fully enforce.
    pub landlock_required_abi: i32,
    /// seccomp filter mode with `SECCOMP_RET_ERRNO` is available and this architecture
    /// has a filter.
    pub seccomp: bool,
    /// Why seccomp is unavailable, when it is.
    pub seccomp_reason: Option<String>,
    /// `prctl(PR_GET_NO_NEW_PRIVS)` works (Linux >= 3.5).
    pub no_new_privs: bool,
    /// The calling process already runs with `no_new_privs` set.
    pub no_new_privs_already_set: bool,
    /// [`SandboxMode::Require`] would succeed on this kernel.
    pub require_ok: bool,
    /// The caller already runs under a seccomp filter (`PR_GET_SECCOMP` = 2). Inside
    /// pyward's own filter the Landlock and seccomp queries are refused, so the other
    /// fields then describe what the sandbox lets the caller see, not the kernel.
    pub inside_seccomp: bool,
}

/// A sandbox layer, for error reports.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Layer {
    /// Resource limits.
    Rlimits,
    /// Landlock file-system, network and scope restrictions.
    Landlock,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs,
    /// The seccomp-bpf syscall filter.
    Seccomp,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Rlimits => "rlimits",
            Layer::Landlock => "landlock",
            Layer::NoNewPrivs => "no_new_privs",
            Layer::Seccomp => "seccomp",
        })
    }
}

/// Why the sandbox could not be installed. Infrastructure errors: a worker that gets
/// one must not run jobs (it may already be partly confined) and should exit.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum SandboxError {
    /// [`SandboxMode::Require`] and the kernel lacks (part of) a layer.
    #[error("{layer} not supported: {reason}")]
    NotSupported {
        /// The layer.
        layer: Layer,
        /// Short lowercase reason.
        reason: String,
    },
    /// [`apply`] was called with more than one thread (Landlock restricts the calling
    /// thread only, so the others would stay unconfined).
    #[error("process has {threads} threads, sandbox needs exactly one")]
    NotSingleThreaded {
        /// Threads found in `/proc/self/task`.
        threads: usize,
    },
    /// A resource limit could not be set.
    #[error("setrlimit {resource} failed")]
    Rlimit {
        /// `RLIMIT_*` name.
        resource: &'static str,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// A configured path could not be opened for a Landlock rule (missing, or no
    /// permission). A configuration error in every mode but `Off`.
    #[error("landlock path unusable: {}", path.display())]
    Path {
        /// The configured path.
        path: PathBuf,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// Building or enforcing the Landlock ruleset failed.
    #[error("landlock ruleset failed")]
    Landlock(#[from] ::landlock::RulesetError),
    /// The private scratch file system could not be mounted.
    #[error("scratch file system: {0}")]
    Scratch(#[source] std::io::Error),
    /// `PR_SET_NO_NEW_PRIVS` failed.
    #[error("no_new_privs failed")]
    NoNewPrivs(#[source] std::io::Error),
    /// Building or installing the seccomp filter failed.
    #[error("seccomp filter failed")]
    Seccomp(#[source] seccompiler::Error),
    /// Setting `SIGXFSZ` to ignored failed.
    #[error("sigxfsz disposition failed")]
    Signal(#[source] std::io::Error),
}

/// Confines the calling process: rlimits -> Landlock -> no_new_privs -> seccomp.
///
/// Irreversible. Must be called while the process is single-threaded (checked through
/// `/proc/self/task`; [`SandboxError::NotSingleThreaded`] otherwise): Landlock applies
/// to the calling thread only (landlock(7)). seccomp is installed with
/// `SECCOMP_FILTER_FLAG_TSYNC` on all threads anyway (seccomp(2)). Threads created
/// afterwards inherit every layer.
///
/// Everything that can fail for configuration reasons (paths, kernel support in
/// `Require` mode, filter compilation) is checked *before* the first irreversible
/// step, so those errors leave the process unconfined. An error from a later step
/// can leave it partly confined: the caller must not run jobs after any `Err`.
///
/// In [`SandboxMode::Off`] nothing is touched and [`Enforcement::none`] is returned.
pub fn apply(spec: &SandboxSpec) -> Result<Enforcement, SandboxError> {
    let require = match spec.mode {
        SandboxMode::Off => return Ok(Enforcement::none()),
        SandboxMode::Require => true,
        SandboxMode::BestEffort => false,
    };
    let mut degraded = Vec::new();

    // ---- preparation: nothing irreversible happens here ----
    match count_threads() {
        Some(1) => {}
        Some(threads) => return Err(SandboxError::NotSingleThreaded { threads }),
        None => degraded.push("thread count unknown: /proc not readable".to_owned()),
    }
    let support = probe();
    if require && !support.require_ok {
        return Err(first_missing(&support));
    }
    // The scratch mounts come first: Landlock's rules below must open the new mounts,
    // not the directories they cover, and seccomp later denies mount(2).
    let scratch = match &spec.scratch {
        Some(s) => match scratch::mount(s) {
            Ok(()) => true,
            Err(e) if require => return Err(SandboxError::Scratch(e)),
            Err(e) => {
                degraded.push(format!("scratch limits off: {e}"));
                false
            }
        },
        None => false,
    };
    // Opens every rule path (O_PATH) and creates the ruleset fd; does not restrict yet.
    let ruleset = landlock::prepare(spec, require)?;
    // Compiles the BPF programs with this process's pid baked into the signal rules.
    let filters = if support.seccomp {
        Some(seccomp::build(std::process::id(), spec.receive_fd)?)
    } else {
        degraded.push(format!(
            "seccomp off: {}",
            support.seccomp_reason.as_deref().unwrap_or("unavailable")
        ));
        None
    };

    // ---- enforcement, in this order, for these reasons ----
    //
    // 1. rlimits first: setrlimit(2) is not on the seccomp allowlist (prlimit64 is
    //    allowed read-only), and lowering limits is unaffected by Landlock. The hard
    //    limit is lowered too, so the job cannot raise it back without
    //    CAP_SYS_RESOURCE, and seccomp takes the syscalls away even from root.
    rlimits::apply(&spec.limits)?;

    // 2. Landlock second: the ruleset's path fds were opened above while the file
    //    system was unrestricted, and landlock_restrict_self(2) is not on the seccomp
    //    allowlist. landlock(7) requires no_new_privs (or CAP_SYS_ADMIN) for
    //    restrict_self, so the landlock crate sets PR_SET_NO_NEW_PRIVS immediately
    //    before it; step 3 makes that explicit and covers kernels without Landlock.
    let landlock_status = landlock::restrict(ruleset, require)?;
    if landlock_status != LandlockStatus::FullyEnforced {
        degraded.push(format!(
            "landlock {}: kernel abi {}",
            match landlock_status {
                LandlockStatus::PartiallyEnforced => "partial",
                _ => "off",
            },
            support
                .landlock_abi
                .map_or_else(|| "none".to_owned(), |v| v.to_string())
        ));
    }

    // 3. no_new_privs before seccomp: seccomp(2) refuses SECCOMP_SET_MODE_FILTER
    //    without it unless the caller has CAP_SYS_ADMIN, and it is what makes the
    //    filter and the Landlock domain impossible to shed through a set-uid execve.
    let no_new_privs = match set_no_new_privs() {
        Ok(v) => v,
        Err(e) if require => return Err(SandboxError::NoNewPrivs(e)),
        Err(_) => {
            degraded.push("no_new_privs off".to_owned());
            false
        }
    };

    // 4. seccomp last: once installed it denies every syscall the steps above used
    //    (setrlimit, landlock_*, seccomp itself), so nothing may follow it.
    let seccomp_on = match filters {
        Some(f) => {
            seccomp::install(&f)?;
            true
        }
        None => false,
    };

    Ok(Enforcement {
        rlimits: true,
        landlock: landlock_status,
        no_new_privs,
        seccomp: seccomp_on,
        landlock_abi: support.landlock_abi,
        scratch,
        degraded,
    })
}

/// What this kernel supports, without applying anything. Safe to call in the host
/// process: it only issues the read-only queries `landlock_create_ruleset(NULL, 0,
/// LANDLOCK_CREATE_RULESET_VERSION)` (landlock(7)), `seccomp(SECCOMP_GET_ACTION_AVAIL)`
/// (seccomp(2)) and `prctl(PR_GET_NO_NEW_PRIVS)` (prctl(2)).
pub fn probe() -> Support {
    let (landlock_abi, landlock_reason) = match landlock::kernel_abi() {
        Ok(v) => (Some(v), None),
        Err(reason) => (None, Some(reason.to_owned())),
    };
    let (seccomp, seccomp_reason) = match seccomp::available() {
        Ok(()) => (true, None),
        Err(reason) => (false, Some(reason)),
    };
    let nnp = crate::sys::no_new_privs();
    let require_ok =
        seccomp && nnp.is_ok() && landlock_abi.is_some_and(|v| v >= landlock::REQUIRED_ABI);
    Support {
        landlock_abi,
        landlock_reason,
        landlock_target_abi: landlock::TARGET_ABI as i32,
        landlock_required_abi: landlock::REQUIRED_ABI,
        seccomp,
        seccomp_reason,
        no_new_privs: nnp.is_ok(),
        no_new_privs_already_set: nnp.unwrap_or(false),
        require_ok,
        inside_seccomp: crate::sys::seccomp_mode() == Some(2),
    }
}

/// The first layer `support` lacks for `Require`, as an error.
fn first_missing(support: &Support) -> SandboxError {
    let (layer, reason) = match support.landlock_abi {
        None => (
            Layer::Landlock,
            support
                .landlock_reason
                .clone()
                .unwrap_or_else(|| "unavailable".to_owned()),
        ),
        Some(v) if v < landlock::REQUIRED_ABI => (
            Layer::Landlock,
            format!("kernel abi {v} < {}", landlock::REQUIRED_ABI),
        ),
        Some(_) if !support.seccomp => (
            Layer::Seccomp,
            support
                .seccomp_reason
                .clone()
                .unwrap_or_else(|| "unavailable".to_owned()),
        ),
        Some(_) => (Layer::NoNewPrivs, "prctl unavailable".to_owned()),
    };
    SandboxError::NotSupported { layer, reason }
}

/// Number of threads of this process, from `/proc/self/task` (proc(5)).
fn count_threads() -> Option<usize> {
    std::fs::read_dir(Path::new("/proc/self/task"))
        .ok()
        .map(|d| d.count())
}

/// Sets `PR_SET_NO_NEW_PRIVS` and reads it back (prctl(2)).
fn set_no_new_privs() -> std::io::Result<bool> {
    crate::sys::set_no_new_privs()?;
    crate::sys::no_new_privs()
}
