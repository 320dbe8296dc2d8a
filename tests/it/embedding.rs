//! Using pyward from another crate: how the worker program is found (or not, with a
//! message that names the fix), the build-id handshake, one binary as its own worker,
//! and the run-time Python override.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::{builder, expect_ok};
use pyward::{Error, Executor, Job};

#[test]
fn a_missing_worker_says_how_to_get_one_in_display_and_debug() {
    let err = Executor::builder()
        .worker_program("/nonexistent/pyward-worker")
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::WorkerNotFound { .. }));
    for text in [err.to_string(), format!("{err:?}")] {
        assert!(text.contains("/nonexistent/pyward-worker"), "{text}");
        assert!(text.contains("src/bin/pyward-worker.rs"), "{text}");
        assert!(text.contains("pyward::worker::main()"), "{text}");
        assert!(text.contains("pyward::worker::run_if_worker()"), "{text}");
    }
}

#[test]
fn a_worker_of_another_build_refuses_to_run() {
    let worker = env!("CARGO_BIN_EXE_pyward-worker");
    let out = Command::new(worker)
        .env("PYWARD_WORKER_BUILD_ID", "0.0.0-someotherbuild")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(78));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0.0.0-someotherbuild"), "{stderr}");
    assert!(stderr.contains(pyward::worker::BUILD_ID), "{stderr}");

    // Started by hand: it says what it is for.
    let out = Command::new(worker).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pyward library"));
}

/// The `single_binary` example calls `run_if_worker()` first in `main` and builds an
/// executor without naming a worker program: its workers are the example itself.
#[test]
fn one_binary_can_be_its_own_worker() {
    let tests_dir = std::env::current_exe().unwrap();
    let example = tests_dir
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("examples/single_binary"))
        .unwrap();
    assert!(
        example.is_file(),
        "{example:?}: a plain `cargo test` builds examples (alone: cargo build --examples)"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(&example)
        .arg(dir.path().join("fig.png"))
        .env_remove("PYWARD_WORKER")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(dir.path().join("fig.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let program = stdout.trim().rsplit(" runs ").next().unwrap();
    assert_eq!(
        PathBuf::from(program),
        example.canonicalize().unwrap(),
        "{stdout}"
    );
}

#[test]
fn the_python_can_be_chosen_at_run_time_and_a_wrong_one_is_named() {
    let err = builder()
        .python("/nonexistent/bin/python3")
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Python(_)), "{text}");
    assert!(text.contains("/nonexistent/bin/python3"), "{text}");

    // The build's own interpreter, given explicitly, is accepted as an override.
    let exec = builder()
        .python(env!("PYWARD_BUILD_PYTHON"))
        .build()
        .unwrap();
    let outcome = exec
        .run(Job::new("plt.plot([1, 2]); plt.savefig(OUT)"))
        .unwrap();
    expect_ok(&outcome);
    let env = pyward::PythonEnv::probe(env!("PYWARD_BUILD_PYTHON")).unwrap();
    assert_eq!(env.version, pyward::PythonEnv::from_build().version);
    assert!(env.paths.iter().any(|p| p.contains("site-packages")));
}

/// A Python without the packages: the error names the interpreter, its `sys.path` and
/// the command that fixes it.
#[test]
fn a_python_without_the_packages_is_named_with_the_fix() {
    let mut env = pyward::PythonEnv::from_build();
    env.paths.retain(|p| !p.contains("site-packages"));
    let err = builder()
        .zygote(false)
        .python_env(env.clone())
        .build()
        .unwrap_err();
    let text = format!("{err:?}");
    assert!(matches!(err, Error::PackageMissing(_)), "{text}");
    assert!(text.contains("No module named"), "{text}");
    assert!(text.contains(&env.executable), "{text}");
    assert!(text.contains(&env.paths[0]), "{text}");
    assert!(text.contains("-m pip install"), "{text}");
}
