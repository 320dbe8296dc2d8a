//! seccomp-bpf: the syscall allowlist (seccomp(2)).
//!
//! Two filters, both installed with `SECCOMP_FILTER_FLAG_TSYNC`:
//!
//! - the **deny filter** (installed first) returns `EPERM` for [`denylist`] (network,
//!   exec, process creation, debugging, kernel administration, path-based metadata
//!   writers Landlock does not cover) and for argument-filtered misuse of allowed
//!   syscalls ([`deny_rules`]: `clone` without `CLONE_THREAD` or with a namespace
//!   flag, signals aimed at another process, unsafe `prctl` options, `ioctl` requests
//!   outside a short list, `prlimit64` that writes or targets another process);
//!   anything else passes it.
//! - the **allow filter** (installed last) allows [`allowlist`] and returns `ENOSYS`
//!   for everything else.
//!
//! seccomp(2): "the return value for the evaluation of a given system call is the
//! first-seen action value of highest precedence"; `ERRNO` outranks `ALLOW`. So a
//! syscall runs only when both filters allow it; explicitly denied ones fail with
//! `EPERM` (Python: `PermissionError`), and every syscall this module does not know
//! fails with `ENOSYS`, which is what libc and CPython treat as "fall back to the older
//! call" (`clone3` -> `clone` in glibc's `pthread_create`, `faccessat2` -> `faccessat`,
//! `statx` -> `newfstatat`, ...). Every [`denylist`] syscall is also on the allow filter,
//! so the two filters never both return an errno and the `EPERM` is the one seen.
//!
//! The deny filter goes first because the allow filter does not allow `seccomp(2)`
//! (installing a filter after it would be impossible); seccompiler's install also
//! sets `PR_SET_NO_NEW_PRIVS`, which the deny filter's `prctl` rule lets through.
//!
//! A syscall made with a foreign architecture's convention (`int 0x80` on x86_64)
//! kills the process (seccompiler's architecture check); x32 syscall numbers
//! (`__X32_SYSCALL_BIT`) are not on the allowlist and get `ENOSYS`.

use crate::sandbox::SandboxError;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// The two compiled programs, in installation order: deny filter, then allow filter.
#[derive(Debug, Clone)]
pub struct Filters {
    deny: BpfProgram,
    allow: BpfProgram,
}

/// A syscall name and number, for the tables and for diagnostics.
pub type Syscall = (&'static str, i64);

macro_rules! sys {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), libc::$name as i64)),*]
    };
}

/// Allowed on every supported architecture. Grouped by purpose; see the module docs
/// and the report for why each group is needed.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const ALLOW_COMMON: &[Syscall] = sys![
    // file I/O on descriptors (Landlock checks at open time)
    SYS_read,
    SYS_write,
    SYS_readv,
    SYS_writev,
    SYS_pread64,
    SYS_pwrite64,
    SYS_preadv,
    SYS_pwritev,
    SYS_preadv2,
    SYS_pwritev2,
    SYS_lseek,
    SYS_close,
    SYS_close_range,
    SYS_fsync,
    SYS_fdatasync,
    SYS_ftruncate,
    SYS_fallocate,
    SYS_fadvise64,
    SYS_flock,
    SYS_fcntl,
    SYS_ioctl, // request filtered by the deny filter
    SYS_sendfile,
    SYS_copy_file_range,
    SYS_splice,
    SYS_dup,
    SYS_dup3,
    SYS_pipe2,
    // paths (Landlock confines opens, creation, removal, rename, link)
    SYS_openat,
    SYS_openat2,
    SYS_newfstatat,
    SYS_fstat,
    SYS_statx,
    SYS_statfs,
    SYS_fstatfs,
    SYS_faccessat,
    SYS_faccessat2,
    SYS_readlinkat,
    SYS_getdents64,
    SYS_getcwd,
    SYS_chdir,
    SYS_fchdir,
    SYS_umask,
    SYS_mkdirat,
    SYS_unlinkat,
    SYS_renameat,
    SYS_renameat2,
    SYS_linkat,
    SYS_symlinkat,
    SYS_truncate,
    SYS_fchmod, // needs a descriptor Landlock let us open; path-based chmod is denied
    SYS_utimensat,
    SYS_getxattr,
    SYS_lgetxattr,
    SYS_fgetxattr,
    SYS_listxattr,
    SYS_llistxattr,
    SYS_flistxattr,
    // memory
    SYS_brk,
    SYS_mmap,
    SYS_munmap,
    SYS_mprotect,
    SYS_mremap,
    SYS_madvise,
    SYS_msync,
    SYS_mincore,
    SYS_membarrier,
    // NUMA policy of the caller's own memory (OpenBLAS binds its buffers)
    SYS_mbind,
    SYS_set_mempolicy,
    SYS_get_mempolicy,
    // threads and synchronisation
    SYS_clone, // flags filtered by the deny filter: threads only
    SYS_futex,
    SYS_futex_waitv,
    SYS_set_robust_list,
    SYS_set_tid_address,
    SYS_rseq,
    SYS_exit,
    SYS_exit_group,
    SYS_sched_yield,
    SYS_sched_getaffinity,
    SYS_sched_getparam,
    SYS_sched_getscheduler,
    SYS_sched_get_priority_max,
    SYS_sched_get_priority_min,
    SYS_getcpu,
    SYS_wait4,
    SYS_waitid,
    SYS_restart_syscall,
    // multiplexing (the supervisor pipes, selectors)
    SYS_ppoll,
    SYS_pselect6,
    SYS_epoll_create1,
    SYS_epoll_ctl,
    SYS_epoll_pwait,
    SYS_epoll_pwait2,
    SYS_eventfd2,
    // signals (targets filtered by the deny filter: this process only)
    SYS_rt_sigaction,
    SYS_rt_sigprocmask,
    SYS_rt_sigreturn,
    SYS_rt_sigpending,
    SYS_rt_sigtimedwait,
    SYS_rt_sigsuspend,
    SYS_sigaltstack,
    SYS_kill,
    SYS_tgkill,
    SYS_rt_sigqueueinfo,
    SYS_rt_tgsigqueueinfo,
    // time and timers
    SYS_clock_gettime,
    SYS_clock_getres,
    SYS_clock_nanosleep,
    SYS_nanosleep,
    SYS_gettimeofday,
    SYS_times,
    SYS_getitimer,
    SYS_setitimer,
    SYS_timer_create,
    SYS_timer_settime,
    SYS_timer_gettime,
    SYS_timer_getoverrun,
    SYS_timer_delete,
    SYS_timerfd_create,
    SYS_timerfd_settime,
    SYS_timerfd_gettime,
    // identity and system information (read only)
    SYS_getpid,
    SYS_gettid,
    SYS_getppid,
    SYS_getuid,
    SYS_geteuid,
    SYS_getgid,
    SYS_getegid,
    SYS_getgroups,
    SYS_getresuid,
    SYS_getresgid,
    SYS_getpgid,
    SYS_getsid,
    SYS_getpriority,
    SYS_getrusage,
    SYS_prlimit64, // read-only, own process: deny filter
    SYS_uname,
    SYS_sysinfo,
    SYS_getrandom,
    SYS_capget,
    SYS_prctl, // options filtered by the deny filter
];

/// x86_64 legacy syscalls that glibc, CPython or the extension modules still use.
#[cfg(target_arch = "x86_64")]
const ALLOW_ARCH: &[Syscall] = sys![
    SYS_open,
    SYS_creat,
    SYS_stat,
    SYS_lstat,
    SYS_access,
    SYS_readlink,
    SYS_getdents,
    SYS_rename,
    SYS_unlink,
    SYS_mkdir,
    SYS_rmdir,
    SYS_link,
    SYS_symlink,
    SYS_utime,
    SYS_utimes,
    SYS_futimesat,
    SYS_dup2,
    SYS_pipe,
    SYS_poll,
    SYS_select,
    SYS_epoll_create,
    SYS_epoll_wait,
    SYS_eventfd,
    SYS_time,
    SYS_alarm,
    SYS_pause,
    SYS_getpgrp,
    SYS_getrlimit,
    SYS_arch_prctl, // per-thread FS/GS base and CET state of the caller only
];

/// aarch64 has no legacy syscalls beyond the common set.
#[cfg(target_arch = "aarch64")]
const ALLOW_ARCH: &[Syscall] = &[];

/// Refused with `EPERM` on every supported architecture.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const DENY_COMMON: &[Syscall] = sys![
    // network: no new sockets at all (the supervisor talks over the socket the worker
    // was started with)
    SYS_socket,
    SYS_socketpair,
    SYS_connect,
    SYS_bind,
    SYS_listen,
    SYS_accept,
    SYS_accept4,
    SYS_sendto,
    SYS_recvfrom,
    SYS_sendmsg,
    SYS_sendmmsg,
    SYS_recvmmsg,
    SYS_shutdown,
    SYS_getsockopt,
    SYS_setsockopt,
    SYS_getsockname,
    SYS_getpeername,
    // programs and processes
    SYS_execve,
    SYS_execveat,
    SYS_clone3, // answers ENOSYS instead: see ENOSYS_INSTEAD
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_process_madvise,
    SYS_kcmp,
    SYS_tkill, // cannot be pinned to this process; glibc uses tgkill
    SYS_pidfd_open,
    SYS_pidfd_getfd,
    SYS_pidfd_send_signal,
    SYS_setpgid,
    SYS_setsid,
    SYS_setpriority,
    SYS_sched_setaffinity,
    SYS_sched_setscheduler,
    SYS_sched_setparam,
    SYS_sched_setattr,
    SYS_migrate_pages,
    SYS_move_pages,
    SYS_setrlimit,
    // namespaces, mounts, kernel administration
    SYS_mount,
    SYS_umount2,
    SYS_unshare,
    SYS_setns,
    SYS_pivot_root,
    SYS_chroot,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
    SYS_move_mount,
    SYS_open_tree,
    SYS_mount_setattr,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_userfaultfd,
    SYS_io_uring_setup,
    SYS_io_uring_enter,
    SYS_io_uring_register,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_kexec_load,
    SYS_kexec_file_load,
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_acct,
    SYS_quotactl,
    SYS_syslog,
    SYS_settimeofday,
    SYS_clock_settime,
    SYS_clock_adjtime,
    SYS_adjtimex,
    SYS_sethostname,
    SYS_setdomainname,
    SYS_vhangup,
    SYS_personality,
    SYS_fanotify_init,
    SYS_name_to_handle_at,
    SYS_open_by_handle_at, // bypasses path checks with CAP_DAC_READ_SEARCH
    SYS_memfd_create,
    SYS_memfd_secret,
    SYS_mlock,
    SYS_mlock2,
    SYS_mlockall,
    // credentials
    SYS_setuid,
    SYS_setgid,
    SYS_setreuid,
    SYS_setregid,
    SYS_setresuid,
    SYS_setresgid,
    SYS_setfsuid,
    SYS_setfsgid,
    SYS_setgroups,
    SYS_capset,
    // metadata writes Landlock does not control (landlock(7), "Current limitations")
    SYS_fchmodat,
    SYS_fchownat,
    SYS_fchown,
    SYS_setxattr,
    SYS_lsetxattr,
    SYS_fsetxattr,
    SYS_removexattr,
    SYS_lremovexattr,
    SYS_fremovexattr,
    SYS_mknodat,
];

/// x86_64-only syscalls refused with `EPERM`.
#[cfg(target_arch = "x86_64")]
const DENY_ARCH: &[Syscall] = sys![
    SYS_fork,
    SYS_vfork,
    SYS_chmod,
    SYS_fchmodat2,
    SYS_chown,
    SYS_lchown,
    SYS_mknod,
    SYS_iopl,
    SYS_ioperm,
    SYS_modify_ldt,
    SYS_uselib,
];

/// aarch64 has no extra syscalls to refuse.
#[cfg(target_arch = "aarch64")]
const DENY_ARCH: &[Syscall] = &[];

/// Every allowed syscall (before argument filtering) on this architecture.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn allowlist() -> Vec<Syscall> {
    ALLOW_COMMON.iter().chain(ALLOW_ARCH).copied().collect()
}

/// Every syscall refused with `EPERM` regardless of arguments, on this architecture.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn denylist() -> Vec<Syscall> {
    DENY_COMMON
        .iter()
        .chain(DENY_ARCH)
        .copied()
        .filter(|(name, _)| !ENOSYS_INSTEAD.contains(name))
        .collect()
}

/// Denied syscalls that answer `ENOSYS` (from the allow filter) instead of `EPERM`,
/// because glibc falls back to an older, argument-filtered call on `ENOSYS` only:
/// `clone3` (seccomp cannot inspect its `struct clone_args`) -> `clone`, whose
/// `CLONE_THREAD` flag the deny filter checks (glibc `pthread_create`, since 2.34).
pub const ENOSYS_INSTEAD: &[&str] = &["SYS_clone3"];

/// `ioctl` requests allowed: terminal queries that fail harmlessly on pipes and files
/// (`isatty`, `os.get_terminal_size`) and descriptor flags. Everything else, `TIOCSTI`
/// (typing into a terminal) included, gets `EPERM`.
#[allow(clippy::unnecessary_cast)] // ioctl request constants are typed per target
const IOCTL_ALLOWED: &[u64] = &[
    libc::TCGETS as u64,
    libc::TIOCGWINSZ as u64,
    libc::TIOCGPGRP as u64,
    libc::FIONREAD as u64,
    libc::FIONBIO as u64,
    libc::FIOCLEX as u64,
    libc::FIONCLEX as u64,
];

/// `prctl` options allowed (prctl(2)): naming threads and anonymous mappings, reading
/// flags, and the one-way `PR_SET_NO_NEW_PRIVS`. Refused among others: `PR_SET_MM`,
/// `PR_SET_PTRACER`, `PR_SET_DUMPABLE`, `PR_SET_SECCOMP`, `PR_CAP_AMBIENT`,
/// `PR_SET_SECUREBITS`, `PR_SET_CHILD_SUBREAPER`.
const PRCTL_ALLOWED: &[u64] = &[
    libc::PR_SET_NAME as u64,
    libc::PR_GET_NAME as u64,
    libc::PR_GET_DUMPABLE as u64,
    libc::PR_SET_VMA as u64,
    libc::PR_GET_SECCOMP as u64,
    libc::PR_SET_NO_NEW_PRIVS as u64,
    libc::PR_GET_NO_NEW_PRIVS as u64,
    libc::PR_CAPBSET_READ as u64,
    libc::PR_GET_TIMERSLACK as u64,
    libc::PR_GET_THP_DISABLE as u64,
];

/// Namespace flags refused in `clone` even with `CLONE_THREAD` (clone(2)).
const CLONE_NAMESPACES: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| SandboxError::Seccomp(e.into()))
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conds).map_err(|e| SandboxError::Seccomp(e.into()))
}

/// `arg != v` for every `v` in `values`, as one rule (a rule is a conjunction).
fn none_of(arg: u8, len: SeccompCmpArgLen, values: &[u64]) -> Result<SeccompRule, SandboxError> {
    rule(
        values
            .iter()
            .map(|&v| cond(arg, len.clone(), SeccompCmpOp::Ne, v))
            .collect::<Result<_, _>>()?,
    )
}

/// Argument-filtered denials (each rule that matches returns `EPERM`); `own_pid` is
/// the process id read when the sandbox is applied, `receive_fd` the one descriptor
/// recvmsg(2) may read (the worker's protocol socket; reading it grants nothing a
/// plain read(2) of it would not, and it is how a job's shared arrays arrive).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn deny_rules(
    own_pid: u32,
    receive_fd: Option<i32>,
) -> Result<Vec<(i64, Vec<SeccompRule>)>, SandboxError> {
    use SeccompCmpArgLen::{Dword, Qword};
    let pid = u64::from(own_pid);
    let other_process = || rule(vec![cond(0, Dword, SeccompCmpOp::Ne, pid)?]);
    // clone(2): flags are argument 0 on x86_64 and aarch64. Deny when CLONE_THREAD is
    // clear (fork, vfork, posix_spawn), or when any namespace flag is set.
    let thread = libc::CLONE_THREAD as u64;
    let mut clone_rules = vec![rule(vec![cond(
        0,
        Qword,
        SeccompCmpOp::MaskedEq(thread),
        0,
    )?])?];
    for &ns in CLONE_NAMESPACES {
        clone_rules.push(rule(vec![cond(0, Qword, SeccompCmpOp::MaskedEq(ns), ns)?])?);
    }
    Ok(vec![
        (libc::SYS_clone, clone_rules),
        // kill(2): pid must be exactly this process (0, -1 and negative groups fail).
        (libc::SYS_kill, vec![other_process()?]),
        // tgkill(2), rt_sigqueueinfo(2), rt_tgsigqueueinfo: tgid must be this process.
        (libc::SYS_tgkill, vec![other_process()?]),
        (libc::SYS_rt_sigqueueinfo, vec![other_process()?]),
        (libc::SYS_rt_tgsigqueueinfo, vec![other_process()?]),
        // prlimit64(2): new_limit (arg 2) must be NULL; pid must be 0 or this process.
        (
            libc::SYS_prlimit64,
            vec![
                rule(vec![cond(2, Qword, SeccompCmpOp::Ne, 0)?])?,
                rule(vec![
                    cond(0, Dword, SeccompCmpOp::Ne, 0)?,
                    cond(0, Dword, SeccompCmpOp::Ne, pid)?,
                ])?,
            ],
        ),
        (libc::SYS_prctl, vec![none_of(0, Dword, PRCTL_ALLOWED)?]),
        (libc::SYS_ioctl, vec![none_of(1, Dword, IOCTL_ALLOWED)?]),
        // recvmsg(2): only on the protocol socket (an empty chain denies it outright).
        (
            libc::SYS_recvmsg,
            match receive_fd {
                Some(fd) => vec![none_of(0, Dword, &[fd as u64])?],
                None => Vec::new(),
            },
        ),
    ])
}

#[cfg(target_arch = "x86_64")]
fn target_arch() -> Option<TargetArch> {
    Some(TargetArch::x86_64)
}
#[cfg(target_arch = "aarch64")]
fn target_arch() -> Option<TargetArch> {
    Some(TargetArch::aarch64)
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn target_arch() -> Option<TargetArch> {
    None
}

/// Compiles both programs. Pure computation: installs nothing.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn build(own_pid: u32, receive_fd: Option<i32>) -> Result<Filters, SandboxError> {
    let arch = target_arch().ok_or_else(unsupported_arch)?;
    let seccomp_err = |e: seccompiler::BackendError| SandboxError::Seccomp(e.into());

    let mut deny: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (_, nr) in denylist() {
        deny.insert(nr, Vec::new()); // empty chain: matches any arguments
    }
    for (nr, rules) in deny_rules(own_pid, receive_fd)? {
        deny.insert(nr, rules);
    }

    let mut allow: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (_, nr) in allowlist() {
        allow.insert(nr, Vec::new());
    }
    // Pass-through for the denied ones so the deny filter's EPERM is the only errno
    // (see the module docs).
    for nr in deny.keys() {
        allow.entry(*nr).or_default();
    }

    let deny = SeccompFilter::new(
        deny,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(seccomp_err)?;
    let allow = SeccompFilter::new(
        allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        SeccompAction::Allow,
        arch,
    )
    .map_err(seccomp_err)?;
    Ok(Filters {
        deny: BpfProgram::try_from(deny).map_err(seccomp_err)?,
        allow: BpfProgram::try_from(allow).map_err(seccomp_err)?,
    })
}

/// No filter for this architecture.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn build(_own_pid: u32, _receive_fd: Option<i32>) -> Result<Filters, SandboxError> {
    Err(unsupported_arch())
}

fn unsupported_arch() -> SandboxError {
    SandboxError::NotSupported {
        layer: crate::sandbox::Layer::Seccomp,
        reason: format!("no filter for {}", std::env::consts::ARCH),
    }
}

/// Installs the deny filter, then the allow filter, on every thread (TSYNC).
pub fn install(filters: &Filters) -> Result<(), SandboxError> {
    seccompiler::apply_filter_all_threads(&filters.deny).map_err(SandboxError::Seccomp)?;
    seccompiler::apply_filter_all_threads(&filters.allow).map_err(SandboxError::Seccomp)?;
    Ok(())
}

/// Whether filters with `SECCOMP_RET_ERRNO` can be installed here. Read-only query:
/// seccomp(2) `SECCOMP_GET_ACTION_AVAIL` (Linux 4.14).
pub fn available() -> Result<(), String> {
    if target_arch().is_none() {
        return Err(format!("no filter for {}", std::env::consts::ARCH));
    }
    crate::sys::seccomp_errno_available().map_err(|e| {
        format!(
            "seccomp filters unavailable: errno {}",
            e.raw_os_error().unwrap_or(0)
        )
    })
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn builds() {
        build(std::process::id(), None).expect("filters compile");
        build(std::process::id(), Some(3)).expect("filters compile");
    }

    #[test]
    fn lists_are_disjoint_and_unique() {
        let allow: BTreeSet<i64> = allowlist().iter().map(|s| s.1).collect();
        assert_eq!(allow.len(), allowlist().len(), "duplicate in allowlist");
        for (name, nr) in DENY_COMMON.iter().chain(DENY_ARCH) {
            assert!(!allow.contains(nr), "{name} both allowed and denied");
        }
    }

    #[test]
    fn required_denials_present() {
        let deny: BTreeSet<&str> = denylist().iter().map(|s| s.0).collect();
        for name in [
            "SYS_socket",
            "SYS_connect",
            "SYS_bind",
            "SYS_execve",
            "SYS_execveat",
            "SYS_ptrace",
            "SYS_mount",
            "SYS_unshare",
            "SYS_setns",
            "SYS_bpf",
            "SYS_perf_event_open",
            "SYS_userfaultfd",
            "SYS_io_uring_setup",
            "SYS_keyctl",
            "SYS_process_vm_readv",
            "SYS_process_vm_writev",
        ] {
            assert!(deny.contains(name), "{name} not denied");
        }
        assert!(!allowlist().iter().any(|s| s.0 == "SYS_clone3"));
    }
}
