//! Containment tests for `sandbox::apply`: each case re-runs this test binary with
//! `PYWARD_SANDBOX_CASE` set (like wasmtime's `tests/host_segfault.rs`), the child
//! applies the sandbox to itself and tries one attack for real; the parent asserts
//! on the child's exit status and checks that the canary effect did not happen.
//!
//! `harness = false`: the child must be single-threaded when it applies the sandbox,
//! and libtest runs every test on a thread of its own.

use pyward::sandbox::{
    self, Enforcement, LandlockStatus, Rlimits, SandboxError, SandboxMode, SandboxSpec,
};
use std::ffi::CString;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const CASE: &str = "PYWARD_SANDBOX_CASE";
const RO: &str = "PYWARD_SANDBOX_RO";
const RW: &str = "PYWARD_SANDBOX_RW";
const OUTSIDE: &str = "PYWARD_SANDBOX_OUTSIDE";
const ARG: &str = "PYWARD_SANDBOX_ARG";

const MIB: u64 = 1 << 20;

/// Set (by `.ci/run`): a test that would skip because the kernel cannot enforce a layer
/// fails instead.
const REQUIRE_SANDBOX: &str = "PYWARD_REQUIRE_SANDBOX";

type ChildResult = Result<(), String>;

fn main() {
    if let Ok(case) = std::env::var(CASE) {
        let code = match run_child(&case) {
            Ok(()) => 0,
            Err(msg) => {
                eprintln!("child {case}: {msg}");
                1
            }
        };
        std::process::exit(code);
    }
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for (name, test) in PARENT_TESTS {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match test() {
            Ok(Verdict::Pass) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Ok(Verdict::Skip(why)) => {
                println!("test {name} ... skipped ({why})");
                skipped += 1;
            }
            Err(msg) => {
                println!("test {name} ... FAILED\n    {msg}");
                failed += 1;
            }
        }
    }
    // CI proves confinement on a kernel that has it: there a skip is a failure.
    let skips_fail = skipped > 0 && std::env::var_os(REQUIRE_SANDBOX).is_some();
    if skips_fail {
        println!("{skipped} test(s) skipped while {REQUIRE_SANDBOX} is set: the kernel must enforce every layer");
        failed += skipped;
    }
    println!(
        "\ntest result: {}. {passed} passed; {failed} failed; {skipped} ignored; 0 measured; 0 filtered out",
        if failed == 0 { "ok" } else { "FAILED" }
    );
    if failed > 0 {
        std::process::exit(101);
    }
}

enum Verdict {
    Pass,
    Skip(&'static str),
}

type ParentTest = fn() -> Result<Verdict, String>;

const PARENT_TESTS: &[(&str, ParentTest)] = &[
    ("read_etc_passwd_fails_eacces", t_read_etc_passwd),
    ("write_outside_rw_dir_fails", t_write_outside),
    ("write_inside_rw_dir_works", t_write_inside),
    ("read_only_dir_is_read_only", t_read_only_dir),
    ("mmap_exec_from_read_only_dir_works", t_mmap_exec),
    ("tcp_connect_to_local_listener_fails", t_tcp_connect),
    ("socket_creation_fails", t_socket),
    ("recvmsg_only_on_the_protocol_socket", t_recvmsg),
    ("execve_fails", t_execve),
    ("fork_fails", t_fork),
    ("clone3_fails_enosys", t_clone3),
    ("kill_other_processes_fails", t_kill),
    ("ptrace_fails", t_ptrace),
    ("proc_of_parent_unreadable", t_proc_parent),
    ("chmod_outside_fails", t_chmod),
    ("rlimits_cannot_be_raised", t_rlimit_raise),
    ("file_size_limit_gives_efbig", t_fsize),
    ("address_space_limit_fails_huge_mmap", t_address_space),
    ("threads_still_work", t_thread),
    ("enforcement_reports_all_layers", t_enforcement),
    ("mode_off_applies_nothing", t_mode_off),
    ("mode_best_effort_reports", t_best_effort),
    ("require_missing_path_errs_unconfined", t_missing_path),
    ("refuses_multithreaded_process", t_multithreaded),
    ("probe_does_not_restrict_caller", t_probe),
];

// ---------------------------------------------------------------- parent side

/// Per-test directories: a read-only one with a file, a read-write one, and one
/// outside the sandbox for canaries.
struct Dirs {
    _root: tempfile::TempDir,
    ro: PathBuf,
    rw: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().expect("tempdir");
    let ro = root.path().join("ro");
    let rw = root.path().join("rw");
    let outside = root.path().join("outside");
    for d in [&ro, &rw, &outside] {
        std::fs::create_dir(d).expect("mkdir");
    }
    std::fs::write(ro.join("data.txt"), b"input").expect("write");
    std::fs::write(outside.join("secret.txt"), b"secret").expect("write");
    Dirs {
        _root: root,
        ro,
        rw,
        outside,
    }
}

fn require_ok() -> bool {
    sandbox::probe().require_ok
}

/// Runs `case` in a child with `arg`; returns (exit code or signal text, stderr).
fn spawn_case(case: &str, d: &Dirs, arg: &str) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().expect("current_exe"))
        .env(CASE, case)
        .env(RO, &d.ro)
        .env(RW, &d.rw)
        .env(OUTSIDE, &d.outside)
        .env(ARG, arg)
        .stdin(Stdio::null())
        .output()
        .expect("spawn child");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn expect_child_ok(case: &str, d: &Dirs, arg: &str) -> Result<(), String> {
    match spawn_case(case, d, arg) {
        (Some(0), _) => Ok(()),
        (code, stderr) => Err(format!("child exit {code:?}: {}", stderr.trim())),
    }
}

fn simple(case: &str) -> Result<Verdict, String> {
    if !require_ok() {
        return Ok(Verdict::Skip("kernel cannot fully enforce"));
    }
    let d = dirs();
    expect_child_ok(case, &d, "")?;
    Ok(Verdict::Pass)
}

fn t_read_etc_passwd() -> Result<Verdict, String> {
    simple("read_etc_passwd")
}

fn t_write_outside() -> Result<Verdict, String> {
    if !require_ok() {
        return Ok(Verdict::Skip("kernel cannot fully enforce"));
    }
    let d = dirs();
    expect_child_ok("write_outside", &d, "")?;
    let canary = d.outside.join("canary");
    if canary.exists() {
        return Err("canary written outside rw dir".into());
    }
    if std::fs::read(d.outside.join("secret.txt")).map_err(|e| e.to_string())? != b"secret" {
        return Err("existing file outside changed".into());
    }
    Ok(Verdict::Pass)
}

fn t_write_inside() -> Result<Verdict, String> {
    if !require_ok() {
        return Ok(Verdict::Skip("kernel cannot fully enforce"));
    }
    let d = dirs();
    expect_child_ok("write_inside", &d, "")?;
    let got = std::fs::read(d.rw.join("out.txt")).map_err(|e| e.to_string())?;
    if got != b"figure bytes" {
        return Err("rw file content wrong".into());
    }
    Ok(Verdict::Pass)
}

fn t_read_only_dir() -> Result<Verdict, String> {
    if !require_ok() {
        return Ok(Verdict::Skip("kernel cannot fully enforce"));
    }
    let d = dirs();
    expect_child_ok("read_only_dir", &d, "")?;
    if std::fs::read(d.ro.join("data.txt")).map_err(|e| e.to_string())? != b"input" {
        return Err("read-only file changed".into());
    }
    if d.ro.join("canary").exists() {
        return Err("canary created in read-only dir".into());
    }
    Ok(Verdict::Pass)
}

fn t_mmap_exec() -> Result<Verdict, String> {
    if !require_ok() {
        return Ok(Verdict::Skip("kernel cannot fully enforce"));
    }
    let d = dirs();
    // Any ELF file stands in for a shared object: the test binary itself.
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    std::fs::copy(exe, d.ro.join("lib.so")).map_err(|e| e.to_string())?;
    expect_child_ok("mmap_exec", &d, "")?;
    Ok(Verdict::Pass)
}

fn t_tcp_connect() -> Result<Verdict, String> {
    let d = dirs();
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    // Sanity: the listener does accept a connection from the unconfined parent.
    drop(TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?);
    listener.set_nonblocking(false).map_err(|e| e.to_string())?;
    listener
        .accept()
        .map_err(|e| format!("sanity accept: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    expect_child_ok("tcp_connect", &d, &port.to_string())?;
    // The child has exited: a connection it made would be in the accept queue now.
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(Verdict::Pass),
        Ok((_, peer)) => Err(format!("listener saw a connection from {peer}")),
        Err(e) => Err(format!("accept: {e}")),
    }
}

fn t_socket() -> Result<Verdict, String> {
    simple("socket")
}

fn t_recvmsg() -> Result<Verdict, String> {
    simple("recvmsg")
}

fn t_execve() -> Result<Verdict, String> {
    let d = dirs();
    expect_child_ok("execve", &d, "")?;
    if d.rw.join("canary").exists() {
        return Err("exec'd program wrote the canary".into());
    }
    Ok(Verdict::Pass)
}

fn t_fork() -> Result<Verdict, String> {
    let d = dirs();
    // `expect_child_ok` reads the child's stdout and stderr to their end, and a process
    // the child made holds them open until it exits: a canary it wrote is there now.
    expect_child_ok("fork", &d, "")?;
    if d.rw.join("canary").exists() {
        return Err("forked child wrote the canary".into());
    }
    Ok(Verdict::Pass)
}

fn t_clone3() -> Result<Verdict, String> {
    let d = dirs();
    // `expect_child_ok` reads the child's stdout and stderr to their end, and a process
    // the child made holds them open until it exits: a canary it wrote is there now.
    expect_child_ok("clone3", &d, "")?;
    if d.rw.join("canary").exists() {
        return Err("clone3 child wrote the canary".into());
    }
    Ok(Verdict::Pass)
}

fn spawn_victim() -> Result<std::process::Child, String> {
    Command::new("sleep")
        .arg("30")
        .spawn()
        .map_err(|e| format!("spawn victim: {e}"))
}

fn check_victim(mut victim: std::process::Child) -> Result<(), String> {
    let alive = victim.try_wait().map_err(|e| e.to_string())?.is_none();
    let _ = victim.kill();
    let _ = victim.wait();
    if alive {
        Ok(())
    } else {
        Err("victim process was killed".into())
    }
}

fn t_kill() -> Result<Verdict, String> {
    let d = dirs();
    let victim = spawn_victim()?;
    let r = expect_child_ok("kill", &d, &victim.id().to_string());
    // This process (the child's parent) got SIGTERM if the filter failed; reaching
    // this line means it survived.
    check_victim(victim)?;
    r?;
    Ok(Verdict::Pass)
}

fn t_ptrace() -> Result<Verdict, String> {
    let d = dirs();
    let victim = spawn_victim()?;
    let r = expect_child_ok("ptrace", &d, &victim.id().to_string());
    check_victim(victim)?;
    r?;
    Ok(Verdict::Pass)
}

fn t_proc_parent() -> Result<Verdict, String> {
    simple("proc_parent")
}

fn t_chmod() -> Result<Verdict, String> {
    let d = dirs();
    let target = d.outside.join("secret.txt");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    expect_child_ok("chmod", &d, "")?;
    let mode = std::fs::metadata(&target)
        .map_err(|e| e.to_string())?
        .permissions()
        .mode();
    if mode & 0o777 != 0o600 {
        return Err(format!("mode changed to {:o}", mode & 0o777));
    }
    Ok(Verdict::Pass)
}

fn t_rlimit_raise() -> Result<Verdict, String> {
    simple("rlimit_raise")
}

fn t_fsize() -> Result<Verdict, String> {
    let d = dirs();
    expect_child_ok("fsize", &d, "")?;
    let len = std::fs::metadata(d.rw.join("big.bin"))
        .map_err(|e| e.to_string())?
        .len();
    if len > MIB {
        return Err(format!("file grew to {len} bytes past the 1 MiB cap"));
    }
    Ok(Verdict::Pass)
}

fn t_address_space() -> Result<Verdict, String> {
    simple("address_space")
}

fn t_thread() -> Result<Verdict, String> {
    simple("thread")
}

fn t_enforcement() -> Result<Verdict, String> {
    simple("enforcement")
}

fn t_mode_off() -> Result<Verdict, String> {
    let d = dirs();
    expect_child_ok("mode_off", &d, "")?;
    Ok(Verdict::Pass)
}

fn t_best_effort() -> Result<Verdict, String> {
    let d = dirs();
    expect_child_ok("best_effort", &d, "")?;
    Ok(Verdict::Pass)
}

fn t_missing_path() -> Result<Verdict, String> {
    let d = dirs();
    expect_child_ok("missing_path", &d, "")?;
    Ok(Verdict::Pass)
}

fn t_multithreaded() -> Result<Verdict, String> {
    let d = dirs();
    expect_child_ok("multithreaded", &d, "")?;
    Ok(Verdict::Pass)
}

fn t_probe() -> Result<Verdict, String> {
    let s = sandbox::probe();
    let s2 = sandbox::probe();
    if s != s2 {
        return Err("probe not stable".into());
    }
    // The caller is not restricted: it can still read /etc/passwd and start a process.
    std::fs::read("/etc/passwd").map_err(|e| format!("parent lost fs access: {e}"))?;
    let st = Command::new("true")
        .status()
        .map_err(|e| format!("parent lost exec: {e}"))?;
    if !st.success() {
        return Err("true failed".into());
    }
    let json = serde_json_like(&s);
    if !json.contains("landlock_abi") {
        return Err("support not serialisable".into());
    }
    if s.landlock_abi.is_some_and(|v| v >= 6) && s.seccomp && !s.require_ok {
        return Err(format!("inconsistent support: {s:?}"));
    }
    if !s.require_ok && std::env::var_os(REQUIRE_SANDBOX).is_some() {
        return Err(format!(
            "{REQUIRE_SANDBOX} is set and this kernel cannot enforce every layer: {s:?}"
        ));
    }
    println!("    probe: {s:?}");
    Ok(Verdict::Pass)
}

/// Debug rendering stands in for serde output (no serde_json dev-dependency).
fn serde_json_like(s: &sandbox::Support) -> String {
    format!("{s:?}")
}

// ---------------------------------------------------------------- child side

fn env_path(key: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(key).expect("env path"))
}

fn spec(mode: SandboxMode, limits: Rlimits) -> SandboxSpec {
    SandboxSpec::new(mode, vec![env_path(RO)], vec![env_path(RW)], limits).with_system_defaults()
}

fn confine() -> Result<Enforcement, String> {
    confine_with(Rlimits::default())
}

fn confine_with(limits: Rlimits) -> Result<Enforcement, String> {
    let mode = if sandbox::probe().require_ok {
        SandboxMode::Require
    } else {
        SandboxMode::BestEffort
    };
    sandbox::apply(&spec(mode, limits)).map_err(|e| format!("apply: {e} ({e:?})"))
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn expect_errno(what: &str, rc: i64, want: &[i32]) -> ChildResult {
    if rc != -1 {
        return Err(format!("{what} succeeded (rc {rc})"));
    }
    let e = errno();
    if want.contains(&e) {
        Ok(())
    } else {
        Err(format!("{what} failed with errno {e}, wanted {want:?}"))
    }
}

fn expect_io_err(what: &str, r: std::io::Result<impl Sized>, want: i32) -> ChildResult {
    match r {
        Ok(_) => Err(format!("{what} succeeded")),
        Err(e) if e.raw_os_error() == Some(want) => Ok(()),
        Err(e) => Err(format!("{what}: got {e}, wanted errno {want}")),
    }
}

/// kill(2), returning the raw result.
fn kill(pid: i32, sig: i32) -> i64 {
    // SAFETY: kill(2) takes integers only and touches no memory of ours.
    unsafe { libc::kill(pid, sig) }.into()
}

/// A signal syscall with three integer arguments (tgkill(2), tkill(2)).
fn sig3(nr: i64, a: i32, b: i32, c: i32) -> i64 {
    // SAFETY: the signal syscalls used here take integers only.
    unsafe { libc::syscall(nr, a, b, c) }
}

fn arg() -> String {
    std::env::var(ARG).unwrap_or_default()
}

fn run_child(case: &str) -> ChildResult {
    match case {
        "read_etc_passwd" => {
            confine()?;
            expect_io_err(
                "open /etc/passwd",
                std::fs::File::open("/etc/passwd"),
                libc::EACCES,
            )?;
            expect_io_err("list /etc", std::fs::read_dir("/etc"), libc::EACCES)
        }
        "write_outside" => {
            confine()?;
            let outside = env_path(OUTSIDE);
            expect_io_err(
                "create outside",
                std::fs::File::create(outside.join("canary")),
                libc::EACCES,
            )?;
            expect_io_err(
                "truncate outside",
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(outside.join("secret.txt")),
                libc::EACCES,
            )?;
            expect_io_err(
                "rename out of rw",
                std::fs::rename(env_path(RW), outside.join("moved")),
                libc::EACCES,
            )
            .or_else(|_| {
                expect_io_err(
                    "rename out of rw",
                    std::fs::rename(env_path(RW), outside.join("moved")),
                    libc::EXDEV,
                )
            })?;
            expect_io_err(
                "hard link secret into rw",
                std::fs::hard_link(outside.join("secret.txt"), env_path(RW).join("l")),
                libc::EXDEV,
            )
            .or_else(|_| {
                expect_io_err(
                    "hard link secret into rw",
                    std::fs::hard_link(outside.join("secret.txt"), env_path(RW).join("l")),
                    libc::EACCES,
                )
            })
        }
        "write_inside" => {
            confine()?;
            let rw = env_path(RW);
            let io = |r: std::io::Result<()>| r.map_err(|e| e.to_string());
            io(std::fs::create_dir_all(rw.join("sub/deeper")))?;
            io(std::fs::write(rw.join("sub/deeper/x.png"), b"tmp"))?;
            io(std::fs::rename(
                rw.join("sub/deeper/x.png"),
                rw.join("y.png"),
            ))?;
            io(std::fs::remove_file(rw.join("y.png")))?;
            io(std::fs::remove_dir_all(rw.join("sub")))?;
            let mut f = std::fs::File::create(rw.join("out.txt")).map_err(|e| e.to_string())?;
            f.write_all(b"figure bytes").map_err(|e| e.to_string())?;
            // /dev/null (system default) is writable, /dev/urandom readable.
            io(std::fs::write("/dev/null", b"x"))?;
            let mut buf = [0u8; 8];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut buf))
                .map_err(|e| e.to_string())
        }
        "read_only_dir" => {
            confine()?;
            let ro = env_path(RO);
            let got = std::fs::read(ro.join("data.txt")).map_err(|e| e.to_string())?;
            if got != b"input" {
                return Err("bad content".into());
            }
            std::fs::read_dir(&ro).map_err(|e| e.to_string())?;
            expect_io_err(
                "write ro file",
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(ro.join("data.txt")),
                libc::EACCES,
            )?;
            expect_io_err(
                "create in ro",
                std::fs::File::create(ro.join("canary")),
                libc::EACCES,
            )?;
            expect_io_err(
                "remove ro file",
                std::fs::remove_file(ro.join("data.txt")),
                libc::EACCES,
            )
        }
        "mmap_exec" => {
            confine()?;
            let f = std::fs::File::open(env_path(RO).join("lib.so")).map_err(|e| e.to_string())?;
            use std::os::fd::AsRawFd;
            // SAFETY: maps 4096 bytes of a file we hold open; the mapping is only
            // checked for success and unmapped, never executed or read.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ | libc::PROT_EXEC,
                    libc::MAP_PRIVATE,
                    f.as_raw_fd(),
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(format!("mmap PROT_EXEC failed: errno {}", errno()));
            }
            // SAFETY: `p` is the live 4096-byte mapping created above.
            unsafe { libc::munmap(p, 4096) };
            Ok(())
        }
        "tcp_connect" => {
            confine()?;
            let port: u16 = arg().parse().map_err(|_| "port")?;
            expect_io_err(
                "tcp connect",
                TcpStream::connect(("127.0.0.1", port)),
                libc::EPERM,
            )
        }
        "socket" => {
            confine()?;
            for (family, ty) in [
                (libc::AF_INET, libc::SOCK_STREAM),
                (libc::AF_INET6, libc::SOCK_DGRAM),
                (libc::AF_UNIX, libc::SOCK_STREAM),
                (libc::AF_NETLINK, libc::SOCK_RAW),
            ] {
                // SAFETY: socket(2) takes integers only.
                let rc = unsafe { libc::socket(family, ty, 0) };
                expect_errno("socket", rc.into(), &[libc::EPERM])?;
            }
            let mut fds = [0; 2];
            // SAFETY: `fds` is a writable array of two ints, as socketpair(2) needs.
            let rc =
                unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) };
            expect_errno("socketpair", rc.into(), &[libc::EPERM])
        }
        "recvmsg" => {
            // Two socket pairs made before confinement: recvmsg(2) works on the one named
            // as the protocol socket (how a job's shared arrays arrive) and nowhere else.
            let mut protocol = [0; 2];
            let mut other = [0; 2];
            for pair in [&mut protocol, &mut other] {
                // SAFETY: a writable array of two ints, as socketpair(2) needs.
                let rc = unsafe {
                    libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, pair.as_mut_ptr())
                };
                if rc != 0 {
                    return Err(format!("socketpair before confinement: errno {}", errno()));
                }
                // SAFETY: write(2) of one byte from a static buffer to our own socket.
                unsafe { libc::write(pair[0], b"x".as_ptr().cast(), 1) };
            }
            // `simple` runs this only where the kernel can fully enforce.
            let mut s = spec(SandboxMode::Require, Rlimits::default());
            s.receive_fd = Some(protocol[1]);
            sandbox::apply(&s).map_err(|e| format!("apply: {e}"))?;
            let recv = |fd: i32| -> i64 {
                let mut byte = [0u8; 1];
                let mut iov = libc::iovec {
                    iov_base: byte.as_mut_ptr().cast(),
                    iov_len: 1,
                };
                // SAFETY: an all-zero msghdr is valid; it points at live locals only.
                let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
                msg.msg_iov = &mut iov;
                msg.msg_iovlen = 1;
                // SAFETY: recvmsg(2) into the local buffers described by `msg`.
                // Non-blocking: a wrongly allowed call on an empty socket must fail the
                // test, not hang it.
                unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) as i64 }
            };
            let rc = recv(protocol[1]);
            if rc != 1 {
                return Err(format!(
                    "recvmsg on the protocol socket returned {rc} (errno {})",
                    errno()
                ));
            }
            expect_errno("recvmsg on another socket", recv(other[1]), &[libc::EPERM])
        }
        "execve" => {
            confine()?;
            let canary = env_path(RW).join("canary");
            let sh = CString::new("/bin/sh").expect("cstr");
            let script = CString::new(format!("echo x > '{}'", canary.display())).expect("cstr");
            let dash_c = CString::new("-c").expect("cstr");
            let argv = [
                sh.as_ptr(),
                dash_c.as_ptr(),
                script.as_ptr(),
                std::ptr::null(),
            ];
            let envp = [std::ptr::null()];
            // SAFETY: argv and envp are NULL-terminated arrays of valid C strings that
            // outlive the call. On success the process image is replaced (the parent
            // then sees the canary and fails the test).
            let rc = unsafe { libc::execve(sh.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
            expect_errno("execve", rc.into(), &[libc::EPERM])?;
            match Command::new("/bin/sh").arg("-c").arg("true").status() {
                Ok(s) => Err(format!("Command spawned a program: {s}")),
                Err(_) => Ok(()),
            }
        }
        "fork" => {
            confine()?;
            let canary = env_path(RW).join("canary");
            // SAFETY: fork(2) in a single-threaded process; the child only writes the
            // canary and calls _exit.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let _ = std::fs::write(&canary, b"forked");
                // SAFETY: _exit is async-signal-safe and ends the forked child.
                unsafe { libc::_exit(0) };
            }
            expect_errno("fork", pid.into(), &[libc::EPERM])?;
            // SAFETY: vfork child calls only _exit (permitted after vfork).
            let pid = unsafe { libc::syscall(libc::SYS_vfork) };
            if pid == 0 {
                // SAFETY: as above.
                unsafe { libc::_exit(0) };
            }
            expect_errno("vfork", pid, &[libc::EPERM])?;
            // clone without CLONE_THREAD (what glibc's fork uses).
            // SAFETY: raw clone with SIGCHLD only and a NULL stack behaves like fork;
            // the child (if any) writes the canary and _exits.
            let pid = unsafe {
                libc::syscall(
                    libc::SYS_clone,
                    libc::SIGCHLD as libc::c_ulong,
                    0usize,
                    0usize,
                    0usize,
                    0usize,
                )
            };
            if pid == 0 {
                let _ = std::fs::write(&canary, b"cloned");
                // SAFETY: as above.
                unsafe { libc::_exit(0) };
            }
            expect_errno("clone", pid, &[libc::EPERM])
        }
        "clone3" => {
            confine()?;
            let canary = env_path(RW).join("canary");
            // struct clone_args (clone(2)): 11 u64 fields in the v2 layout; all zero
            // except exit_signal = SIGCHLD, which makes it a plain fork.
            let mut args = [0u64; 11];
            args[4] = libc::SIGCHLD as u64;
            // SAFETY: `args` is a valid clone_args of the size passed; no stack given,
            // so the child (if any) continues on a copy of ours and _exits at once.
            let pid = unsafe {
                libc::syscall(
                    libc::SYS_clone3,
                    args.as_mut_ptr(),
                    std::mem::size_of_val(&args),
                )
            };
            if pid == 0 {
                let _ = std::fs::write(&canary, b"clone3");
                // SAFETY: as above.
                unsafe { libc::_exit(0) };
            }
            expect_errno("clone3", pid, &[libc::ENOSYS])
        }
        "kill" => {
            confine()?;
            let victim: i32 = arg().parse().map_err(|_| "victim pid")?;
            // SAFETY: getppid/kill/syscall take integers only.
            let ppid = unsafe { libc::getppid() };
            let own = std::process::id() as i32;
            let calls: [(&str, i64); 7] = [
                ("kill victim", kill(victim, libc::SIGKILL)),
                ("kill parent", kill(ppid, libc::SIGTERM)),
                ("kill parent probe", kill(ppid, 0)),
                ("kill own group", kill(0, 0)),
                ("kill -victim", kill(-victim, 0)),
                (
                    "tgkill parent",
                    sig3(libc::SYS_tgkill, ppid, ppid, libc::SIGTERM),
                ),
                (
                    "tkill victim",
                    sig3(libc::SYS_tkill, victim, libc::SIGKILL, 0),
                ),
            ];
            for (what, rc) in calls {
                expect_errno(what, rc, &[libc::EPERM])?;
            }
            // Signalling itself still works (signal 0: existence check).
            // SAFETY: integer-only.
            let rc = unsafe { libc::kill(own, 0) };
            if rc != 0 {
                return Err(format!("kill(self, 0) failed: errno {}", errno()));
            }
            Ok(())
        }
        "ptrace" => {
            confine()?;
            let victim: i32 = arg().parse().map_err(|_| "victim pid")?;
            // SAFETY: PTRACE_ATTACH takes a pid and no memory.
            let rc = unsafe {
                libc::ptrace(
                    libc::PTRACE_ATTACH,
                    victim,
                    std::ptr::null_mut::<libc::c_void>(),
                    std::ptr::null_mut::<libc::c_void>(),
                )
            };
            expect_errno("ptrace attach", rc, &[libc::EPERM])?;
            let mut buf = [0u8; 8];
            let local = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            let remote = libc::iovec {
                iov_base: 0x400000 as *mut libc::c_void,
                iov_len: 8,
            };
            // SAFETY: `local` describes our writable buffer; the remote side is only
            // read by the kernel from the other process (and is refused anyway).
            let rc = unsafe { libc::process_vm_readv(victim, &local, 1, &remote, 1, 0) };
            expect_errno("process_vm_readv", rc as i64, &[libc::EPERM])
        }
        "proc_parent" => {
            confine()?;
            // SAFETY: integer-only.
            let ppid = unsafe { libc::getppid() };
            for f in ["environ", "mem", "cmdline", "maps"] {
                let p = format!("/proc/{ppid}/{f}");
                expect_io_err(&p, std::fs::read(&p), libc::EACCES)?;
            }
            expect_io_err(
                "/proc/self/environ",
                std::fs::read("/proc/self/environ"),
                libc::EACCES,
            )
        }
        "chmod" => {
            confine()?;
            let target = env_path(OUTSIDE).join("secret.txt");
            expect_io_err(
                "chmod",
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o666)),
                libc::EPERM,
            )?;
            let c = CString::new(target.as_os_str().as_encoded_bytes()).expect("cstr");
            // SAFETY: `c` is a valid C string for the call.
            let rc = unsafe { libc::chown(c.as_ptr(), 65534, 65534) };
            expect_errno("chown", rc.into(), &[libc::EPERM])?;
            let name = CString::new("user.x").expect("cstr");
            // SAFETY: valid C strings and a 1-byte value buffer.
            let rc =
                unsafe { libc::setxattr(c.as_ptr(), name.as_ptr(), b"x".as_ptr().cast(), 1, 0) };
            expect_errno("setxattr", rc.into(), &[libc::EPERM])
        }
        "rlimit_raise" => {
            confine_with(Rlimits::default().file_size(MIB))?;
            let big = libc::rlimit {
                rlim_cur: libc::RLIM_INFINITY,
                rlim_max: libc::RLIM_INFINITY,
            };
            // SAFETY: `big` is a valid rlimit read by the kernel.
            let rc = unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &big) };
            expect_errno("setrlimit", rc.into(), &[libc::EPERM])?;
            // SAFETY: as above; prlimit64 writing the limit must be refused.
            let rc = unsafe { libc::prlimit(0, libc::RLIMIT_FSIZE, &big, std::ptr::null_mut()) };
            expect_errno("prlimit write", rc.into(), &[libc::EPERM])?;
            let mut cur = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: `cur` is writable; reading the own limit stays allowed.
            let rc = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut cur) };
            if rc != 0 || cur.rlim_max != MIB {
                return Err(format!("getrlimit rc {rc} max {}", cur.rlim_max));
            }
            let mut core = libc::rlimit {
                rlim_cur: 1,
                rlim_max: 1,
            };
            // SAFETY: as above.
            unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut core) };
            if core.rlim_max != 0 {
                return Err("core dumps not disabled".into());
            }
            Ok(())
        }
        "fsize" => {
            confine_with(Rlimits::default().file_size(MIB))?;
            let mut f =
                std::fs::File::create(env_path(RW).join("big.bin")).map_err(|e| e.to_string())?;
            let chunk = vec![7u8; 64 * 1024];
            for _ in 0..32 {
                if let Err(e) = f.write_all(&chunk) {
                    return if e.raw_os_error() == Some(libc::EFBIG) {
                        Ok(()) // and SIGXFSZ did not kill us
                    } else {
                        Err(format!("write failed with {e}, wanted EFBIG"))
                    };
                }
            }
            Err("wrote 2 MiB past a 1 MiB cap".into())
        }
        "address_space" => {
            confine_with(Rlimits::default().address_space(4 << 30))?;
            // SAFETY: anonymous mapping request; only the failure is inspected.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    8 << 30,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                return Err("8 GiB mmap succeeded under a 4 GiB cap".into());
            }
            if errno() != libc::ENOMEM {
                return Err(format!("mmap errno {}, wanted ENOMEM", errno()));
            }
            let mut v: Vec<u8> = Vec::new();
            if v.try_reserve(8 << 30).is_ok() {
                return Err("8 GiB reserve succeeded".into());
            }
            Ok(())
        }
        "thread" => {
            confine()?;
            let h = std::thread::spawn(|| (0..1000u64).sum::<u64>());
            let v = h.join().map_err(|_| "thread panicked")?;
            if v != 499500 {
                return Err("wrong thread result".into());
            }
            // Threads inherit Landlock: a new thread cannot read /etc/passwd either.
            let r = std::thread::spawn(|| std::fs::read("/etc/passwd").is_err())
                .join()
                .map_err(|_| "thread panicked")?;
            if !r {
                return Err("thread escaped landlock".into());
            }
            Ok(())
        }
        "enforcement" => {
            let e = confine()?;
            if !e.is_full() || e.landlock != LandlockStatus::FullyEnforced || !e.degraded.is_empty()
            {
                return Err(format!("not fully enforced: {e:?}"));
            }
            Ok(())
        }
        "mode_off" => {
            let e = sandbox::apply(&spec(SandboxMode::Off, Rlimits::default()))
                .map_err(|e| e.to_string())?;
            if e != Enforcement::none() {
                return Err(format!("off reported {e:?}"));
            }
            std::fs::read("/etc/passwd").map_err(|e| format!("off restricted fs: {e}"))?;
            Command::new("true")
                .status()
                .map_err(|e| format!("off restricted exec: {e}"))?;
            Ok(())
        }
        "best_effort" => {
            // Probe first: after apply, the landlock and seccomp queries are filtered.
            let s = sandbox::probe();
            let e = sandbox::apply(&spec(SandboxMode::BestEffort, Rlimits::default()))
                .map_err(|e| e.to_string())?;
            if !sandbox::probe().inside_seccomp {
                return Err("probe after apply does not say it is filtered".into());
            }
            // BestEffort reports exactly what the kernel gave.
            if e.seccomp != s.seccomp || e.landlock_abi != s.landlock_abi {
                return Err(format!("report disagrees with probe: {e:?} vs {s:?}"));
            }
            if s.require_ok && !e.is_full() {
                return Err(format!("capable kernel but degraded: {e:?}"));
            }
            if e.landlock != LandlockStatus::NotEnforced && std::fs::read("/etc/passwd").is_ok() {
                return Err("landlock reported but /etc/passwd readable".into());
            }
            Ok(())
        }
        "missing_path" => {
            let mut s = spec(SandboxMode::Require, Rlimits::default());
            let missing = env_path(OUTSIDE).join("does-not-exist");
            s.read_only.push(missing.clone());
            match sandbox::apply(&s) {
                Err(SandboxError::Path { path, .. }) if path == missing => {}
                Err(SandboxError::NotSupported { .. }) if !sandbox::probe().require_ok => {}
                other => return Err(format!("wanted path error, got {other:?}")),
            }
            // Configuration errors are found before anything irreversible happens.
            std::fs::read("/etc/passwd").map_err(|e| format!("left confined: {e}"))?;
            Command::new("true")
                .status()
                .map_err(|e| format!("left confined: {e}"))?;
            Ok(())
        }
        "multithreaded" => {
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let h = std::thread::spawn(move || {
                let _ = rx.recv();
            });
            let r = sandbox::apply(&spec(SandboxMode::BestEffort, Rlimits::default()));
            drop(tx);
            let _ = h.join();
            match r {
                Err(SandboxError::NotSingleThreaded { threads: 2 }) => Ok(()),
                other => Err(format!("wanted NotSingleThreaded, got {other:?}")),
            }
        }
        other => Err(format!("unknown case {other}")),
    }
}
