//! The "from your own crate" contract: `examples/downstream` (a standalone crate with
//! pyward as a path dependency, an async main and a two-line worker binary) is copied
//! outside the repository, pointed at this checkout, and built and run with exactly the
//! commands of its README.

use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The first ```sh block of a README.
fn shell_block(readme: &str) -> String {
    let start = readme
        .find("```sh\n")
        .expect("the README has a ```sh block")
        + 6;
    let end = readme[start..].find("```").expect("closed") + start;
    readme[start..end].to_string()
}

#[test]
fn the_downstream_example_builds_and_renders_as_its_readme_says() {
    let checkout = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let example = checkout.join("examples/downstream");
    let work = tempfile::tempdir().unwrap();
    let crate_dir = work.path().join("downstream");
    copy_dir(&example, &crate_dir);

    // Point the dependency at this checkout, as the README tells a user to.
    let manifest = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains(r#"path = "../..""#), "{text}");
    let text = text.replace(
        r#"path = "../..""#,
        &format!("path = {:?}", checkout.display().to_string()),
    );
    std::fs::write(&manifest, text).unwrap();
    // The same dependency versions as this checkout's build (no surprise upgrades).
    std::fs::copy(checkout.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    // Keep the (slow) first compile between runs: `target` links to a directory in this
    // checkout's own target directory.
    let cache = checkout.join("target/downstream-example");
    std::fs::create_dir_all(&cache).unwrap();
    std::os::unix::fs::symlink(&cache, crate_dir.join("target")).unwrap();

    let readme = std::fs::read_to_string(crate_dir.join("README.md")).unwrap();
    let script = shell_block(&readme);
    let mut cmd = Command::new("bash");
    cmd.args(["-euo", "pipefail", "-c", &script])
        .current_dir(&crate_dir)
        .env("PYWARD_DIR", &checkout);
    // A user's shell, not cargo's test environment.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let keep = key == "CARGO_HOME" || key == "CARGO_NET_OFFLINE";
        if (key.starts_with("CARGO_") && !keep)
            || key.starts_with("RUST") && key != "RUSTUP_HOME" && key != "RUSTUP_TOOLCHAIN"
            || key == "PYO3_PYTHON"
            || key == "PYWARD_WORKER"
        {
            cmd.env_remove(&key);
        }
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{script}\n{stdout}\n{stderr}");
    assert!(stdout.contains("wrote figure.png"), "{stdout}");
    let png = std::fs::read(crate_dir.join("figure.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    assert!(
        !stderr.contains("warning: pyward"),
        "the build warned about the Python: {stderr}"
    );
}
