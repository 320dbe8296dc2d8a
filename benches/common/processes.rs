//! Processes a bench starts: the release binaries beside it, killed when dropped.
//! Included by path (`#[path = "common/processes.rs"] mod processes;`).

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Child;

/// A binary of this workspace's release build (`pyward`, `pyward-worker`), which lives
/// one directory above the bench executable.
pub fn release_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("bench path");
    let bin = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target directory")
        .join(name);
    assert!(
        bin.is_file(),
        "{}: build it first (cargo build --release --workspace --bins)",
        bin.display()
    );
    bin
}

/// A child process killed and reaped on drop.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
