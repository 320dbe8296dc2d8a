//! Processes of a test: whether one is alive, every process below one, and waiting for
//! one to change state. Included by path from tests of other packages too
//! (`cli/tests/serve.rs`, `cli/tests/queue.rs`).

#![allow(dead_code)]

/// Whether a process with this pid still exists (zombies count as gone: they were reaped
/// or will be by their parent, and hold no resources but the pid).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Every process below `pid` (children are listed per thread that started them).
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                all.push(c);
                frontier.push(c);
            }
        }
    }
    all
}

/// Polls `done` until it holds or `limit` passes (a bound that only keeps a broken build
/// from hanging the test); its last answer.
pub fn wait_until(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    done()
}
