//! A storm of abandoned futures: 1,000 jobs dropped at random points leave no process,
//! no file and a whole pool. The pool's processes are its zygote and what is below it
//! (other tests of this program run pools of their own beside it).

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use common::{builder, expect_ok};
use pyward::Job;

/// A job that runs `code` and then saves a small figure (every job must write `OUT`).
fn job(code: &str) -> Job {
    Job::new(format!("{code}\nplt.plot([1, 2])\nplt.savefig(OUT)\n"))
}

/// Every live process below `root` (for the zygote: its workers and anything they left).
fn descendants(root: u32) -> HashSet<u32> {
    let mut parent_of = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after = stat.rsplit(')').next().unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if let Some(ppid) = fields.get(1).and_then(|p| p.parse::<u32>().ok()) {
            parent_of.push((pid, ppid));
        }
    }
    let mut found: HashSet<u32> = HashSet::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(child, parent) in &parent_of {
            if parent == p && found.insert(child) {
                frontier.push(child);
            }
        }
    }
    found
}

/// Files (not directories) under `dir`, except the shared matplotlib configuration.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    common::files_under(dir)
        .into_iter()
        .filter(|p| {
            !p.strip_prefix(dir)
                .is_ok_and(|rel| rel.components().any(|c| c.as_os_str() == "mplconfig"))
        })
        .collect()
}

/// 1,000 futures, each dropped at a random point (before its first poll, while queued,
/// while running, or never): afterwards no stray process, no leftover file, and every
/// slot serves a job.
#[test]
fn a_thousand_abandoned_futures_leave_a_whole_pool() {
    let workers = 2;
    let exec = builder()
        .workers(workers)
        .queue_depth(64)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let root = exec.work_root().to_path_buf();
    let baseline_files = files_under(&root).len();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // A small deterministic generator: the same storm on every run.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut completed = 0u32;
    let mut cancelled = 0u32;
    rt.block_on(async {
        for _round in 0..100 {
            let mut tasks = Vec::new();
            for _ in 0..10 {
                let work_ms = next(40);
                let code = match next(3) {
                    0 => format!("import time\ntime.sleep({})\n", work_ms as f64 / 1000.0),
                    1 => "plt.plot([1, 2, 3])\nplt.savefig(OUT)\n".to_string(),
                    _ => format!("x = sum(range({}))\n", work_ms * 20_000),
                };
                let future = exec.run_async(job(&code));
                let drop_after = next(300);
                tasks.push(tokio::spawn(async move {
                    if drop_after == 0 {
                        drop(future); // never polled
                        return None;
                    }
                    if drop_after >= 270 {
                        // About one in ten is awaited to its end, however slow the
                        // machine: the storm always mixes ends with cancellations.
                        return Some(future.await);
                    }
                    tokio::time::timeout(Duration::from_millis(drop_after), future)
                        .await
                        .ok()
                }));
            }
            for t in tasks {
                match t.await.unwrap() {
                    Some(Ok(o)) if o.status() == "cancelled" => cancelled += 1,
                    Some(Ok(_)) => completed += 1,
                    Some(Err(e)) => panic!("infrastructure error: {e}"),
                    None => cancelled += 1,
                }
            }
        }
    });
    eprintln!("{completed} completed, {cancelled} cancelled");
    assert_eq!(completed + cancelled, 1000);
    assert!(
        completed > 0 && cancelled > 0,
        "{completed} completed, {cancelled} cancelled"
    );

    // The pool is whole: every slot serves a job (two slow jobs at once land on two
    // different slots).
    let jobs: Vec<_> = (0..workers)
        .map(|_| {
            let exec = exec.clone();
            std::thread::spawn(move || exec.run(job("import time\ntime.sleep(0.5)")))
        })
        .collect();
    let slots: HashSet<usize> = jobs
        .into_iter()
        .map(|j| {
            let o = j.join().unwrap().unwrap();
            expect_ok(&o);
            o.worker.unwrap().slot
        })
        .collect();
    assert_eq!(slots.len(), workers, "every slot serves a job");

    // No process beyond the live workers and the zygote.
    let zygote = exec.zygote_pid().expect("the pool has a zygote");
    let mut expected: HashSet<u32> = exec.worker_pids().into_iter().collect();
    assert_eq!(expected.len(), workers);
    let mut found = descendants(zygote);
    found.insert(zygote);
    expected.insert(zygote);
    let strays: Vec<String> = found
        .difference(&expected)
        .map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            format!(
                "{stat} | {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            )
        })
        .collect();
    assert!(
        strays.is_empty(),
        "stray processes: {strays:#?} (expected {expected:?})"
    );
    // Nothing left behind in the pool's tree.
    let files = files_under(&root);
    assert!(
        files.len() <= baseline_files,
        "files left behind: {files:?}"
    );
    drop(exec);
    assert!(!root.exists());
    let outlived: Vec<u32> = found
        .into_iter()
        .filter(|&p| common::process_alive(p))
        .collect();
    assert!(
        outlived.is_empty(),
        "processes outlived the pool: {outlived:?}"
    );
}
