//! Locates the CPython that workers embed and records what they need at run time.
//!
//! The interpreter is the one pyo3 links against (`pyo3_build_config::get()`: pyo3's own
//! lookup order, `PYO3_PYTHON`, then an active virtualenv or conda environment, then
//! `python3`), so the library and the interpreter it describes can never disagree. We
//! record its home, its `sys.path` entries (stdlib, lib-dynload, the virtualenv's
//! site-packages) and emit an rpath to its `LIBDIR`: without the rpath a binary linked
//! against a pyenv Python can resolve `libpython3.x.so` to the system's copy at run time
//! and then see neither the right stdlib nor the virtualenv's packages. A missing
//! package is a build warning that names the fix, not a run-time surprise.
//!
//! It also computes the build id (a hash of the crate's sources) that a worker program
//! and the library compare at start-up: both must come from the same build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The probe script, shared with `PythonEnv::probe`.
const PROBE: &str = include_str!("python/probe_env.py");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=python");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");

    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets this"));
    println!("cargo:rustc-env=PYWARD_BUILD_ID={}", build_id(&manifest));
    let python = locate_python();
    let out = Command::new(&python)
        .arg("-I")
        .arg("-c")
        .arg(PROBE)
        .output();
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!(
            "pyward build: `{}` failed to describe itself: {}",
            python.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "pyward build: cannot run `{}` ({e}); set PYO3_PYTHON or run `make venv`",
            python.display()
        ),
    };
    let text = String::from_utf8(out.stdout).expect("probe prints ASCII json");
    let field = |name: &str| -> String {
        json_field(&text, name).unwrap_or_else(|| panic!("pyward build: probe lacks {name}"))
    };
    warn_missing(&python, &json_list(&text, "missing"), &manifest);
    let libdir = field("libdir");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{libdir}");
    println!("cargo:rustc-env=PYWARD_BUILD_PYTHON={}", python.display());
    println!("cargo:rustc-env=PYWARD_BUILD_PYTHON_HOME={}", field("home"));
    println!(
        "cargo:rustc-env=PYWARD_BUILD_PYTHON_PREFIX={}",
        field("prefix")
    );
    println!(
        "cargo:rustc-env=PYWARD_BUILD_PYTHON_VERSION={}",
        field("version")
    );
    println!("cargo:rustc-env=PYWARD_BUILD_PYTHON_LIBDIR={libdir}");
    println!(
        "cargo:rustc-env=PYWARD_BUILD_PYTHON_PATHS={}",
        json_list(&text, "paths").join(":")
    );
}

/// The interpreter pyo3 resolved (and links against).
fn locate_python() -> PathBuf {
    let config = pyo3_build_config::get();
    match config.executable() {
        Some(exe) => PathBuf::from(exe),
        None => panic!(
            "pyward build: pyo3 resolved Python {} without an executable (a cross-compile \
             config?); set PYO3_PYTHON to a CPython {}.{} built with --enable-shared",
            config.version(),
            config.version().major,
            config.version().minor
        ),
    }
}

/// Warns (with the exact fix) when the interpreter lacks a package every worker imports
/// (the probe lists them).
fn warn_missing(python: &Path, missing: &[String], manifest: &Path) {
    if missing.is_empty() {
        return;
    }
    let requirements = manifest.join("python/requirements.txt");
    println!(
        "cargo:warning=pyward: the Python it embeds ({}) lacks {}: workers will fail \
         to start. Fix: `{} -m pip install -r {}`, or build with PYO3_PYTHON set to a \
         virtualenv's python that has them (pyward's `make venv` makes one in .venv)",
        python.display(),
        missing.join(" "),
        python.display(),
        requirements.display()
    );
}

/// A hash of every source the library and the worker are built from (Rust, Python,
/// the manifest): equal ids mean the worker speaks exactly this library's protocol.
fn build_id(manifest: &Path) -> String {
    use std::hash::Hasher;
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else if p
                .extension()
                .is_some_and(|x| x == "rs" || x == "py" || x == "json")
            {
                files.push(p);
            }
        }
    }
    let mut files = vec![manifest.join("Cargo.toml")];
    walk(&manifest.join("src"), &mut files);
    walk(&manifest.join("python"), &mut files);
    files.sort();
    // FNV-1a: stable across toolchains, unlike std's DefaultHasher.
    struct Fnv(u64);
    impl Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for f in &files {
        let rel = f.strip_prefix(manifest).unwrap_or(f);
        h.write(rel.to_string_lossy().as_bytes());
        h.write(&std::fs::read(f).unwrap_or_default());
    }
    format!("{}-{:016x}", env!("CARGO_PKG_VERSION"), h.finish())
}

/// Minimal extraction from the probe's flat JSON object: build scripts should not pull
/// serde_json into the build graph for one line.
fn json_field(text: &str, name: &str) -> Option<String> {
    let key = format!("\"{name}\": \"");
    let start = text.find(&key)? + key.len();
    let end = text[start..].find('"')? + start;
    Some(text[start..end].to_string())
}

fn json_list(text: &str, name: &str) -> Vec<String> {
    let key = format!("\"{name}\": [");
    let Some(start) = text.find(&key).map(|s| s + key.len()) else {
        return Vec::new();
    };
    let end = text[start..].find(']').map_or(text.len(), |e| e + start);
    text[start..end]
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}
