//! Initialises the embedded CPython with an isolated configuration.
//!
//! Isolated means: no user site directory, `PYTHON*` environment variables ignored, no
//! `site` import (so no `.pth` file runs code at start-up), no bytecode written, signal
//! handlers left alone, and `sys.path` set to exactly the entries the supervisor sent.
//! The hash seed is fixed so that set iteration order, and therefore figures, are
//! reproducible run to run. The C API calls here are the only `unsafe` of the worker.

use std::mem::MaybeUninit;

use libc::wchar_t;
use pyo3::ffi;

use crate::protocol::PythonEnv;

/// A NUL-terminated wide string, as the PyConfig API wants (UTF-32 on Linux).
fn wide(s: &str) -> Vec<wchar_t> {
    s.chars()
        .map(|c| c as wchar_t)
        .chain(std::iter::once(0))
        .collect()
}

fn check(status: ffi::PyStatus, what: &str) -> Result<(), String> {
    // SAFETY: PyStatus_Exception only reads the status value it is given.
    if unsafe { ffi::PyStatus_Exception(status) } == 0 {
        return Ok(());
    }
    let msg = if status.err_msg.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: a non-null err_msg of a PyStatus is a static NUL-terminated C string.
        unsafe { std::ffi::CStr::from_ptr(status.err_msg) }
            .to_string_lossy()
            .into_owned()
    };
    Err(format!("{what}: {msg}"))
}

/// Initialises the interpreter of this process. Must be called once, before any other
/// Python API, on the thread that will run jobs. Returns with the GIL released.
pub fn initialize(env: &PythonEnv) -> Result<(), String> {
    // SAFETY: called once per process before any other Python API (the worker's main
    // calls it first thing after reading its init message); every pointer passed below
    // points into live local buffers, and PyConfig_Clear releases what the config owns.
    unsafe {
        let mut pre = MaybeUninit::<ffi::PyPreConfig>::uninit();
        ffi::PyPreConfig_InitIsolatedConfig(pre.as_mut_ptr());
        let mut pre = pre.assume_init();
        // UTF-8 mode: file names and stdio are UTF-8 whatever the locale is.
        pre.utf8_mode = 1;
        check(ffi::Py_PreInitialize(&pre), "pre-initialise")?;

        let mut config = MaybeUninit::<ffi::PyConfig>::uninit();
        ffi::PyConfig_InitIsolatedConfig(config.as_mut_ptr());
        let mut config = config.assume_init();
        config.site_import = 0;
        config.user_site_directory = 0;
        config.use_environment = 0;
        config.write_bytecode = 0;
        config.install_signal_handlers = 0;
        config.parse_argv = 0;
        config.pathconfig_warnings = 0;
        config.safe_path = 1;
        config.use_hash_seed = 1;
        config.hash_seed = 0;
        config.buffered_stdio = 0;

        let result = (|| {
            let home = wide(&env.home);
            check(
                ffi::PyConfig_SetString(&mut config, &mut config.home, home.as_ptr()),
                "set home",
            )?;
            config.module_search_paths_set = 1;
            for path in &env.paths {
                let p = wide(path);
                check(
                    ffi::PyWideStringList_Append(&mut config.module_search_paths, p.as_ptr()),
                    "set sys.path",
                )?;
            }
            check(ffi::Py_InitializeFromConfig(&config), "initialise")
        })();
        ffi::PyConfig_Clear(&mut config);
        result?;
        // Release the GIL: jobs re-acquire it through `Python::attach`.
        ffi::PyEval_SaveThread();
    }
    Ok(())
}
