//! [`PythonEnv`]: which Python installation workers embed, from the build or overridden
//! at run time for a deployment where the build machine's paths do not exist.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The environment variable that overrides the Python installation at run time (a path
/// to its `python` executable, typically a virtualenv's `bin/python`); see
/// [`ExecutorBuilder::python`](crate::ExecutorBuilder::python).
pub const PYTHON_ENV_VAR: &str = "PYWARD_PYTHON";

const PROBE: &str = include_str!("../python/probe_env.py");

/// Where the worker's embedded interpreter finds its standard library and packages.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PythonEnv {
    /// `sys.base_prefix`: the installation whose libpython the worker loads.
    pub home: String,
    /// The complete `sys.path`: stdlib, lib-dynload, the virtualenv's site-packages.
    pub paths: Vec<String>,
    /// The `python` executable this was read from.
    #[serde(default)]
    pub executable: String,
    /// `major.minor.micro`.
    #[serde(default)]
    pub version: String,
    /// The directory holding `libpython3.x.so`.
    #[serde(default)]
    pub libdir: String,
}

impl PythonEnv {
    /// The interpreter pyo3 linked this crate against, as `build.rs` found it.
    pub fn from_build() -> PythonEnv {
        PythonEnv {
            home: env!("PYWARD_BUILD_PYTHON_HOME").to_string(),
            paths: env!("PYWARD_BUILD_PYTHON_PATHS")
                .split(':')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect(),
            executable: env!("PYWARD_BUILD_PYTHON").to_string(),
            version: env!("PYWARD_BUILD_PYTHON_VERSION").to_string(),
            libdir: env!("PYWARD_BUILD_PYTHON_LIBDIR").to_string(),
        }
    }

    /// Describes the installation of `python` (an executable, e.g. a virtualenv's
    /// `bin/python` on the machine this runs on), checking that workers built for
    /// [`PythonEnv::from_build`] can embed it: same `major.minor`, a shared libpython.
    pub fn probe(python: impl AsRef<Path>) -> Result<PythonEnv> {
        let python = python.as_ref();
        let built = PythonEnv::from_build();
        let out = Command::new(python)
            .args(["-I", "-c", PROBE])
            .output()
            .map_err(|e| {
                Error::Python(format!(
                    "cannot run {} to describe it ({e}); give the path of a CPython {} \
                     executable with numpy and matplotlib installed",
                    python.display(),
                    built.minor_version()
                ))
            })?;
        if !out.status.success() {
            return Err(Error::Python(format!(
                "{} failed to describe itself: {}",
                python.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        #[derive(Deserialize)]
        struct Probe {
            executable: String,
            libdir: String,
            home: String,
            paths: Vec<String>,
            version: String,
            shared: bool,
        }
        let p: Probe = serde_json::from_slice(&out.stdout)
            .map_err(|e| Error::Python(format!("{}: unreadable probe: {e}", python.display())))?;
        let env = PythonEnv {
            home: p.home,
            paths: p.paths,
            executable: if p.executable.is_empty() {
                python.display().to_string()
            } else {
                p.executable
            },
            version: p.version,
            libdir: p.libdir,
        };
        if env.minor_version() != built.minor_version() {
            return Err(Error::Python(format!(
                "{} is Python {}, but this program was built against Python {} (its \
                 libpython is linked in): use a Python {} installation, or rebuild with \
                 PYO3_PYTHON={}",
                python.display(),
                env.version,
                built.version,
                built.minor_version(),
                python.display()
            )));
        }
        if !p.shared {
            return Err(Error::Python(format!(
                "{} has no shared libpython (built without --enable-shared); workers \
                 load libpython{} from it",
                python.display(),
                built.minor_version()
            )));
        }
        Ok(env)
    }

    /// The environment workers use when nothing is configured: `PYWARD_PYTHON` if set
    /// (probed), else the build's.
    pub fn from_env_or_build() -> Result<PythonEnv> {
        match std::env::var_os(PYTHON_ENV_VAR) {
            Some(p) if !p.is_empty() => PythonEnv::probe(PathBuf::from(p)),
            _ => Ok(PythonEnv::from_build()),
        }
    }

    /// `major.minor`.
    pub fn minor_version(&self) -> &str {
        let mut dots = self.version.match_indices('.');
        match dots.nth(1) {
            Some((at, _)) => &self.version[..at],
            None => &self.version,
        }
    }

    /// One line for error messages: the executable, home and `sys.path`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "Python {} ({}; home {}; sys.path {})",
            self.version,
            self.executable,
            self.home,
            self.paths.join(":")
        )
    }
}
