//! The zygote: every worker, the first ones and every replacement, is a process forked
//! from the warm template, confined exactly like a cold worker; cold starts happen only
//! as the visible fallback; nothing survives the executor.

use crate::common;

use std::time::Duration;

use common::{builder, examples_data, expect_ok, process_alive};
use pyward::gate::Policy;
use pyward::{Job, JobFailure};

const FIGURE: &str = "plt.plot([1, 3, 2]); plt.savefig(OUT)\n";

/// A job that the watchdog kills (legitimate jobs keep the 20 s default of `builder`).
fn spin() -> Job {
    Job::new("while True:\n    pass\n").timeout(Duration::from_millis(300))
}

/// (parent pid, process group) of a live process, from /proc/<pid>/stat.
fn parent_and_group(pid: u32) -> (u32, u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let mut fields = stat.rsplit(')').next().unwrap().split_whitespace().skip(1);
    let ppid = fields.next().unwrap().parse().unwrap();
    let pgrp = fields.next().unwrap().parse().unwrap();
    (ppid, pgrp)
}

#[test]
fn every_worker_is_a_fork_of_the_zygote_confined_like_a_cold_one() {
    let exec = builder().build().unwrap();
    let zygote = exec.zygote_pid().expect("the zygote runs");
    let first = exec.run(Job::new(FIGURE)).unwrap();
    expect_ok(&first);
    let born = first.worker.clone().unwrap();
    assert_eq!(
        parent_and_group(born.pid),
        (zygote, born.pid),
        "the pool's first worker is the zygote's child and leads its own process group"
    );
    let stats = exec.stats();
    assert_eq!((stats.forked, stats.cold_fallbacks), (1, 0));
    assert_eq!(stats.workers[0].birth, pyward::Birth::Zygote);

    // A cold worker (zygote off) is confined the same way and draws the same bytes.
    let cold_exec = builder().zygote(false).build().unwrap();
    let cold_run = cold_exec.run(Job::new(FIGURE)).unwrap();
    expect_ok(&cold_run);
    let cold = cold_run.worker.clone().unwrap();
    assert_eq!(parent_and_group(cold.pid), (std::process::id(), cold.pid));
    assert_eq!(cold_exec.stats().workers[0].birth, pyward::Birth::Cold);
    assert_eq!(
        cold_exec.stats().cold_fallbacks,
        0,
        "no zygote wanted: no fallback"
    );
    assert_eq!(first.artifacts()[0].bytes, cold_run.artifacts()[0].bytes);
    drop(cold_exec);

    // Killed by the watchdog: the slot replaces the worker right away.
    let spin = exec.run(spin()).unwrap();
    assert!(matches!(spin.failure(), Some(JobFailure::Timeout { .. })));

    let next = exec
        .run(
            Job::new("d = np.loadtxt(srcpath('v.txt'))\nplt.plot(d); plt.savefig(OUT)\n")
                .src_bytes("v.txt", b"1\n2\n3\n".to_vec()),
        )
        .unwrap();
    expect_ok(&next);
    let forked = next.worker.clone().unwrap();
    assert_ne!(forked.pid, born.pid);
    assert!(!process_alive(born.pid));
    assert_eq!(
        parent_and_group(forked.pid),
        (zygote, forked.pid),
        "a forked worker is the zygote's child and leads its own process group"
    );
    let (_, was_forked) = exec.last_recycle(0).expect("one recycle happened");
    assert!(was_forked);
    assert_eq!(forked.sandbox, cold.sandbox);
    assert_eq!(forked.versions, cold.versions);
    assert_eq!(forked.render_once, cold.render_once);

    // The same figure, byte for byte, from the first and the replacement worker.
    let again = exec.run(Job::new(FIGURE)).unwrap();
    expect_ok(&again);
    assert_eq!(first.artifacts()[0].bytes, again.artifacts()[0].bytes);
}

#[test]
fn a_forked_worker_is_still_confined_and_crashes_are_reported_with_their_signal() {
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let spin = exec.run(spin()).unwrap();
    assert!(matches!(spin.failure(), Some(JobFailure::Timeout { .. })));
    let zygote = exec.zygote_pid().expect("the zygote runs");

    // Reading outside the slot's directories fails (audit hook and Landlock), as does
    // signalling the zygote (seccomp), and the worker sees its own slot's paths.
    let probe = "os = srcpath.__globals__['os']\n\
                 r = []\n\
                 for f in (lambda: os.listdir('/etc'), lambda: os.kill(ZYG, 9), lambda: os.open('/etc/hostname', 0)):\n\
                 \x20   try:\n\
                 \x20       f(); r.append('allowed')\n\
                 \x20   except Exception as e:\n\
                 \x20       r.append(type(e).__name__)\n\
                 print(r, os.getcwd() == os.path.realpath(SRC), os.path.dirname(os.path.realpath(os.environ['TMPDIR'])) == os.path.dirname(os.getcwd()))\n\
                 plt.plot([1]); plt.savefig(OUT)\n"
        .replace("ZYG", &zygote.to_string());
    let o = exec.run(Job::new(probe)).unwrap();
    expect_ok(&o);
    let w = o.worker.as_ref().unwrap();
    assert_eq!(parent_and_group(w.pid).0, zygote);
    assert!(!o.stdout.contains("allowed"), "{}", o.stdout);
    // The job runs in its slot's src/ (issue 38), its TMPDIR beside it.
    assert!(o.stdout.trim_end().ends_with("True True"), "{}", o.stdout);
    assert!(process_alive(zygote));

    // A crash of a forked worker still names the signal (the zygote reaps it).
    let o = exec
        .run(Job::new("srcpath.__globals__['os'].abort()\n"))
        .unwrap();
    let Some(JobFailure::WorkerCrashed { exit, .. }) = o.failure() else {
        panic!("{:?}", o.result)
    };
    assert!(exit.signal_name() == Some("SIGABRT"), "{exit}");
    assert!(!process_alive(o.worker.as_ref().unwrap().pid), "reaped");
    let next = exec.run(Job::new(FIGURE)).unwrap();
    expect_ok(&next);
    assert_eq!(parent_and_group(next.worker.unwrap().pid).0, zygote);
}

#[test]
fn src_files_reach_a_forked_worker_and_drop_leaves_no_zygote_and_no_worker() {
    let exec = builder().workers(2).build().unwrap();
    let mut pids = Vec::new();
    for _ in 0..3 {
        let o = exec.run(spin()).unwrap();
        pids.push(o.worker.unwrap().pid);
    }
    let scan = std::fs::read_to_string(examples_data().join("../plot_scan.py")).unwrap();
    let o = exec
        .run(
            Job::new(scan)
                .src_dir(examples_data())
                .timeout(Duration::from_secs(20)),
        )
        .unwrap();
    expect_ok(&o);
    let zygote = exec.zygote_pid().expect("the zygote runs");
    let live = exec.worker_pids();
    assert_eq!(live.len(), 2);
    assert!(live.iter().any(|&p| parent_and_group(p).0 == zygote));
    drop(exec);
    assert!(!process_alive(zygote), "the zygote survived the executor");
    for pid in live.into_iter().chain(pids) {
        assert!(!process_alive(pid), "worker {pid} survived the executor");
    }
}

#[test]
fn without_the_zygote_replacements_start_cold() {
    let exec = builder().zygote(false).build().unwrap();
    assert_eq!(exec.zygote_pid(), None);
    let o = exec.run(spin()).unwrap();
    assert!(matches!(o.failure(), Some(JobFailure::Timeout { .. })));
    let o = exec.run(Job::new(FIGURE)).unwrap();
    expect_ok(&o);
    assert_eq!(
        parent_and_group(o.worker.unwrap().pid).0,
        std::process::id()
    );
    assert_eq!(exec.last_recycle(0).map(|r| r.1), Some(false));
}

#[test]
fn when_the_zygote_dies_workers_start_cold_visibly_and_a_new_zygote_takes_over() {
    let exec = builder().build().unwrap();
    let o = exec.run(spin()).unwrap();
    assert!(matches!(o.failure(), Some(JobFailure::Timeout { .. })));
    let zygote = exec.zygote_pid().expect("the zygote runs");
    // SAFETY: kill(2) of a process this test's executor started.
    unsafe { libc::kill(zygote as libc::pid_t, libc::SIGKILL) };
    // Its forked worker dies with it (parent-death signal); the job that finds it dead
    // may fail, after which the slot starts a worker cold.
    let mut served = None;
    for _ in 0..3 {
        let o = exec.run(Job::new(FIGURE)).unwrap();
        if o.is_success() {
            served = o.worker;
            break;
        }
        assert!(
            matches!(o.failure(), Some(JobFailure::WorkerCrashed { .. })),
            "{:?}",
            o.result
        );
    }
    let served = served.expect("the pool recovered");
    assert_eq!(parent_and_group(served.pid).0, std::process::id());
    let stats = exec.stats();
    assert!(stats.cold_fallbacks >= 1, "{stats:?}");
    assert!(stats.workers.iter().any(|w| w.birth == pyward::Birth::Cold));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let new_zygote = loop {
        match exec.zygote_pid() {
            Some(p) if p != zygote => break p,
            _ if std::time::Instant::now() > deadline => panic!("no new zygote"),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    assert!(exec.stats().zygote.unwrap().restarts >= 1);
    // The next replacement is a fork of the new zygote again.
    let o = exec.run(spin()).unwrap();
    assert!(matches!(o.failure(), Some(JobFailure::Timeout { .. })));
    let o = exec.run(Job::new(FIGURE)).unwrap();
    expect_ok(&o);
    assert_eq!(parent_and_group(o.worker.unwrap().pid).0, new_zygote);
}

#[test]
fn a_work_dir_reached_through_a_symlink_is_usable_by_both_spellings_in_forked_workers() {
    let real = tempfile::tempdir().unwrap();
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("work");
    std::os::unix::fs::symlink(real.path(), &link).unwrap();
    // The gate is off only so the job can spell the resolved path itself.
    let exec = builder()
        .work_dir(&link)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let o = exec.run(spin()).unwrap();
    assert!(matches!(o.failure(), Some(JobFailure::Timeout { .. })));
    let code = "os = srcpath.__globals__['os']\n\
                real = os.path.realpath(OUT)\n\
                print(real != OUT)\n\
                plt.plot([1, 2]); plt.title('fonts load in a fork'); plt.savefig(real)\n";
    let o = exec.run(Job::new(code)).unwrap();
    expect_ok(&o);
    assert_eq!(o.stdout.trim(), "True");
    assert_eq!(exec.last_recycle(0).map(|r| r.1), Some(true));
    // Outside the work directory stays closed under either spelling.
    let probe = format!(
        "os = srcpath.__globals__['os']\n\
         try:\n    open({:?}).read(); print('allowed')\n\
         except Exception as e:\n    print(type(e).__name__)\n\
         plt.plot([1]); plt.savefig(OUT)\n",
        links.path().join("outside.txt").to_string_lossy()
    );
    std::fs::write(links.path().join("outside.txt"), "secret").unwrap();
    let o = exec.run(Job::new(probe)).unwrap();
    expect_ok(&o);
    assert_eq!(o.stdout.trim(), "PermissionError");
}

/// Descriptors of a live process, as (number, what it points at).
fn descriptors(pid: u32) -> Vec<(i32, String)> {
    let mut fds: Vec<(i32, String)> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let fd = e.file_name().to_str()?.parse().ok()?;
            Some((fd, std::fs::read_link(e.path()).ok()?.display().to_string()))
        })
        .collect();
    fds.sort();
    fds
}

#[test]
fn no_descriptor_of_the_host_or_the_template_reaches_a_worker() {
    // A secret the host holds open without close-on-exec (as a service manager's
    // socket or a careless library's file would be).
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "canary-7f3a9").unwrap();
    let path = std::ffi::CString::new(secret.to_str().unwrap()).unwrap();
    // SAFETY: open(2) of a file this test created; the descriptor is closed below.
    let leaked = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
    assert!(leaked > 2);

    for zygote in [true, false] {
        let exec = builder()
            .zygote(zygote)
            .policy(Policy::gate_disabled_for_testing())
            .build()
            .unwrap();
        let worker = exec.worker_pids()[0];
        let mut pids = vec![worker];
        pids.extend(exec.zygote_pid());
        for pid in pids {
            let fds = descriptors(pid);
            assert!(
                fds.iter().all(|(_, what)| !what.contains("secret")),
                "process {pid} (zygote pool: {zygote}) holds {fds:?}"
            );
            if zygote {
                // The template and its forks hold stdio and their protocol ends only,
                // those at high numbers (tests/it/descriptors.rs checks the range).
                let protocol = |(fd, what): &(i32, String)| {
                    *fd > 256 && (what.starts_with("socket:") || what.starts_with("pipe:"))
                };
                assert!(
                    fds.len() == 5 && fds.iter().all(|d| d.0 <= 2 || protocol(d)),
                    "process {pid}: {fds:?}"
                );
            }
        }
        // The job reads every descriptor it has, for real.
        let o = exec
            .run(Job::new(
                "os = srcpath.__globals__['os']\nseen = []\nfor fd in range(3, 1024):\n    \
                 try:\n        seen.append(os.pread(fd, 64, 0))\n    except OSError:\n        pass\n\
                 print(any(b'canary' in s for s in seen))\nplt.plot([1]); plt.savefig(OUT)\n",
            ))
            .unwrap();
        expect_ok(&o);
        assert_eq!(o.stdout.trim(), "False", "zygote pool: {zygote}");
    }
    // SAFETY: the descriptor opened above.
    unsafe { libc::close(leaked) };
}
