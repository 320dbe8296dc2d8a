//! The Python side of the worker: every module compiled into it (`python/`), in the
//! order warm-up loads them, each with the files it is made of. This table is the one
//! place that says which Python code a worker runs; the scripts that load the worker's
//! modules outside a worker (tests/data, benches) read it too (`python/worker_modules.py`).
//!
//! A module made of several files (a folder of `python/`) is one namespace: its files
//! run in the order listed into the same module, as if they were one file. A name one
//! file defines is a global of the others, warm-up rebinds the state they share, and a
//! function keeps its identity (and its `__module__`) whichever file defines it, so the
//! guards that compare identities and the state guard's snapshot see the same objects
//! however the code is divided. Each file keeps its own name in tracebacks
//! (`pyward_prelude/pathlib_view.py`).

use std::ffi::CStr;

use pyo3::prelude::*;
use pyo3::types::PyModule;

use crate::protocol::InitMsg;

/// What runs on a module once it is loaded (the state guard's C functions, the
/// diagnosis's migration table).
type AfterLoad = fn(&Bound<'_, PyModule>) -> PyResult<()>;

/// One Python module compiled into the worker.
pub(super) struct Embedded {
    /// Its name in `sys.modules`.
    pub(super) name: &'static CStr,
    /// The keyword warm-up receives it under; `None` for the prelude, whose `warm_up` is
    /// the one called.
    pub(super) option: Option<&'static str>,
    /// Whether this worker loads it (a module not loaded is passed to warm-up as None).
    pub(super) wanted: fn(&InitMsg) -> bool,
    /// Run once it is loaded, before the next module is.
    pub(super) then: Option<AfterLoad>,
    /// Its files, in the order they run: (the name tracebacks show, the source).
    pub(super) files: &'static [(&'static str, &'static str)],
}

/// The files of one module, below `python/`, in the order they run.
macro_rules! files {
    ($($file:literal),+ $(,)?) => {
        &[$((concat!("pyward_", $file), include_str!(concat!("../../python/", $file)))),+]
    };
}

/// The warm-up option (and the role) of the state guard's module, which the worker
/// keeps to itself (see `unlist`).
pub(super) const STATE_GUARD: &str = "state_guard";

/// Takes `module` out of `sys.modules`: what was loaded stays reachable only through
/// the handles the worker holds. Run before warm-up, so the guard's snapshot of
/// `sys.modules` never knew it.
pub(super) fn unlist(py: Python<'_>, module: &Bound<'_, PyModule>) -> PyResult<()> {
    let modules = py.import("sys")?.getattr("modules")?;
    modules.del_item(module.name()?)
}

/// The worker's Python modules, in load order: the prelude first (it owns warm-up and
/// the job), then the modules warm-up is given.
pub(super) const MODULES: &[Embedded] = &[
    Embedded {
        name: c"_pyward_prelude",
        option: None,
        wanted: |_| true,
        then: None,
        files: files![
            "prelude/state.py",
            "prelude/name_rules.py",
            "prelude/module_views.py",
            "prelude/job_paths.py",
            "prelude/pathlib_view.py",
            "prelude/job_logging.py",
            "prelude/job_arguments.py",
            "prelude/writes.py",
            "prelude/file_copies.py",
            "prelude/spreadsheets.py",
            "prelude/figure_capture.py",
            "prelude/fonts.py",
            "prelude/warm_up.py",
            "prelude/one_job.py",
            "prelude/between_jobs.py",
        ],
    },
    Embedded {
        name: c"_pyward_render_once",
        option: Some("render_once"),
        wanted: |init| init.render_once,
        then: None,
        files: files!["render_once.py"],
    },
    Embedded {
        name: c"_pyward_text_metrics",
        option: Some("text_metrics"),
        wanted: |init| init.text_metrics,
        then: None,
        files: files!["text_metrics.py"],
    },
    // A worker that serves one job never checks process-wide state after it.
    Embedded {
        name: c"_pyward_state_guard",
        option: Some(STATE_GUARD),
        wanted: |init| !(init.single_job || init.no_state_guard),
        then: Some(super::cpython::install_identities),
        files: files![
            "state_guard/tables.py",
            "state_guard/custom_state.py",
            "state_guard/sweep.py",
            "state_guard/check.py",
        ],
    },
    Embedded {
        name: c"_pyward_diagnose",
        option: Some("diagnose"),
        wanted: |_| true,
        then: Some(|diagnose| {
            diagnose
                .call_method1("load_migrations", (super::MIGRATIONS,))
                .map(drop)
        }),
        files: files![
            "diagnose/close_names.py",
            "diagnose/explainer.py",
            "diagnose/job_objects.py",
            "diagnose/older_versions.py",
        ],
    },
    Embedded {
        name: c"_pyward_figures",
        option: Some("figures"),
        wanted: |_| true,
        then: None,
        files: files!["figures.py"],
    },
    Embedded {
        name: c"_pyward_library_guards",
        option: Some("library_guards"),
        wanted: |_| true,
        then: None,
        files: files![
            "library_guards/libraries.py",
            "library_guards/pandas_expressions.py",
            "library_guards/pandas_dispatch.py",
            "library_guards/unimportable.py",
        ],
    },
];

impl Embedded {
    /// Loads the module when this worker wants it: its first file as a new module
    /// under its name (in `sys.modules`), each further file run into that module's
    /// namespace; then its `then`. The module's docstring is its first file's.
    pub(super) fn load<'py>(
        &self,
        py: Python<'py>,
        init: &InitMsg,
    ) -> PyResult<Option<Bound<'py, PyModule>>> {
        if !(self.wanted)(init) {
            return Ok(None);
        }
        let ((first_file, first_source), rest) =
            self.files.split_first().expect("a module has files");
        let module =
            PyModule::from_code(py, &cstring(first_source), &cstring(first_file), self.name)?;
        if !rest.is_empty() {
            let namespace = module.dict();
            let doc = namespace.get_item("__doc__")?;
            let builtins = py.import("builtins")?;
            let (compile, exec) = (builtins.getattr("compile")?, builtins.getattr("exec")?);
            for (file, source) in rest {
                // No flags inherited: each file compiles as the first one does.
                let code = compile.call1((*source, *file, "exec", 0, true))?;
                exec.call1((code, &namespace))?;
            }
            namespace.set_item("__doc__", doc)?;
        }
        if let Some(then) = self.then {
            then(&module)?;
        }
        Ok(Some(module))
    }
}

fn cstring(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).expect("the worker's Python files contain no NUL byte")
}
