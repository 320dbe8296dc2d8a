//! Locates the CPython that workers embed and records what they need at run time.
//!
//! The interpreter is `PYO3_PYTHON` when set (the Makefile sets it to the project's
//! virtualenv), else `.venv/bin/python`, else `python3`. We record its home, its
//! `sys.path` entries (stdlib, lib-dynload, the virtualenv's site-packages) and emit an
//! rpath to its `LIBDIR`: without the rpath a binary linked against a pyenv Python can
//! resolve `libpython3.x.so` to the system's copy at run time and then see neither the
//! right stdlib nor the virtualenv's packages.

use std::path::{Path, PathBuf};
use std::process::Command;

const PROBE: &str = r#"
import json, os, sys, sysconfig
# The interpreter's own sys.path under -I: stdlib, lib-dynload and, because `site` ran,
# the virtualenv's site-packages; the worker sets exactly these.
seen = []
for p in sys.path:
    if p and p not in seen and os.path.isdir(p):
        seen.append(p)
print(json.dumps({
    'libdir': sysconfig.get_config_var('LIBDIR'),
    'home': sys.base_prefix,
    'prefix': sys.prefix,
    'paths': seen,
    'version': '%d.%d.%d' % sys.version_info[:3],
    'shared': bool(sysconfig.get_config_var('Py_ENABLE_SHARED')),
}))
"#;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=python");
    println!("cargo:rerun-if-changed=.venv/pyvenv.cfg");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");

    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets this"));
    let python = locate_python(&manifest);
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

fn locate_python(manifest: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("PYO3_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = manifest.join(".venv/bin/python");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("python3")
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
