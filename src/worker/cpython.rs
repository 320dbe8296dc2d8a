//! The interpreter's C API, in one room: every call into CPython (and numpy's) that
//! Rust cannot check lives here, each with the argument for why it is sound. The rest
//! of the worker uses the safe functions below; libc calls have their own room
//! (`crate::sys`).
//!
//! - [`initialize`]: this process's interpreter, isolated. Isolated means: no user site
//!   directory, `PYTHON*` environment variables ignored, no `site` import (so no `.pth`
//!   file runs code at start-up), no bytecode written, signal handlers left alone, and
//!   `sys.path` set to exactly the entries the supervisor sent. The hash seed is fixed
//!   so that set iteration order, and therefore figures, are reproducible run to run.
//! - [`add_audit_hook`] and [`innermost_code_filename`], for the audit hook (`audit`).
//! - [`fork`]: fork(2) inside CPython's own fork protocol (the zygote).
//! - [`readonly_array`]: a numpy array over a shared mapping (shared arrays).
//! - the state guard's [`identities`] and [`changed`], read through borrowed references.

use std::mem::MaybeUninit;

use libc::wchar_t;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use numpy::ndarray::{ArrayViewD, IxDyn};
use numpy::{Element, PyArray};
use pyo3::exceptions::{PyPermissionError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::array::{byte_len, dtype_itemsize};
use crate::protocol::PythonEnv;
use crate::sys::Mapping;

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

// ------------------------------------------------------------------ audit hook

extern "C" {
    // Declared by CPython's `Include/cpython/sysmodule.h`; pyo3-ffi does not bind it.
    fn PySys_AddAuditHook(
        hook: extern "C" fn(*const c_char, *mut ffi::PyObject, *mut c_void) -> c_int,
        user_data: *mut c_void,
    ) -> c_int;
}

/// What the audit hook asks about one event: `Some(message)` refuses it (the event's
/// caller gets a `PermissionError` with the message).
pub(super) type AuditDecision = fn(Python<'_>, &str, &Bound<'_, PyTuple>) -> Option<String>;

struct AuditHook {
    armed: &'static AtomicBool,
    decide: AuditDecision,
}

static AUDIT_HOOK: OnceLock<AuditHook> = OnceLock::new();

/// Registers the process's audit hook: while `armed` is false every event passes at
/// once; after that `decide` judges each one. Must run before [`initialize`], once.
pub(super) fn add_audit_hook(
    armed: &'static AtomicBool,
    decide: AuditDecision,
) -> Result<(), String> {
    if AUDIT_HOOK.set(AuditHook { armed, decide }).is_err() {
        return Err("the audit hook is registered already".into());
    }
    // SAFETY: PySys_AddAuditHook may be called before Py_Initialize (it is documented
    // for exactly that); `audit_hook` is a plain function that lives for the process.
    let rc = unsafe { PySys_AddAuditHook(audit_hook, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err("PySys_AddAuditHook refused the hook".into())
    }
}

extern "C" fn audit_hook(event: *const c_char, args: *mut ffi::PyObject, _: *mut c_void) -> c_int {
    let Some(hook) = AUDIT_HOOK.get() else {
        return 0;
    };
    if !hook.armed.load(Ordering::Relaxed) {
        return 0;
    }
    // SAFETY: CPython calls audit hooks with a valid NUL-terminated event name.
    let name = unsafe { CStr::from_ptr(event) }.to_str().unwrap_or("");
    // SAFETY: audit hooks are called with the GIL held (sys.audit's contract).
    let py = unsafe { Python::assume_attached() };
    // SAFETY: `args` is a borrowed, valid tuple for the duration of the call.
    let args = unsafe { Bound::from_borrowed_ptr(py, args) };
    let Ok(args) = args.cast::<PyTuple>() else {
        return 0;
    };
    match (hook.decide)(py, name, args) {
        None => 0,
        Some(message) => {
            PyPermissionError::new_err(message).restore(py);
            -1
        }
    }
}

/// The file name of the innermost Python frame's code (`<job>` for the job's own).
pub(super) fn innermost_code_filename(py: Python<'_>) -> Option<String> {
    // SAFETY: with the GIL held (`py`), PyEval_GetFrame returns a borrowed frame or
    // NULL; PyFrame_GetCode returns a new reference that `from_owned_ptr` takes over.
    let code = unsafe {
        let frame = ffi::PyEval_GetFrame();
        if frame.is_null() {
            return None;
        }
        let code = ffi::PyFrame_GetCode(frame);
        if code.is_null() {
            return None;
        }
        Bound::from_owned_ptr(py, code.cast::<ffi::PyObject>())
    };
    code.getattr("co_filename").and_then(|f| f.extract()).ok()
}

// ------------------------------------------------------------------ fork

/// fork(2) inside CPython's own fork protocol, as `os.fork` does: `PyOS_BeforeFork`,
/// then `PyOS_AfterFork_Child` or `PyOS_AfterFork_Parent` (the import lock and other
/// interpreter state are consistent in the child, and `os.register_at_fork` hooks run).
/// Returns fork's result (0 in the child). The caller is a process with exactly one
/// thread (the zygote, which starts none).
pub(super) fn fork() -> libc::pid_t {
    Python::attach(|_py| {
        // SAFETY: the GIL is held (we are inside `attach`), as PyOS_BeforeFork and the
        // after-fork functions require; the process has exactly one thread, so fork(2)
        // cannot copy a lock that another thread holds. Exactly one of the after-fork
        // functions runs on each side.
        unsafe {
            ffi::PyOS_BeforeFork();
            let pid = crate::sys::fork();
            if pid == 0 {
                ffi::PyOS_AfterFork_Child();
            } else {
                ffi::PyOS_AfterFork_Parent();
            }
            pid
        }
    })
}

// ------------------------------------------------------------------ shared arrays

/// Owns one read-only mapping; it is the numpy array's base object, so the memory
/// stays mapped exactly as long as some array still refers to it.
#[pyclass(frozen, name = "SharedMemory", module = "pyward")]
struct MappingOwner {
    _mapping: Option<Mapping>,
}

/// A read-only numpy array of `dtype` (`<f8`, `|u1`, ...) and `shape` over `mapping`
/// (`None` for an empty array), which the array keeps alive as its base.
pub(super) fn readonly_array<'py>(
    py: Python<'py>,
    mapping: Option<Mapping>,
    dtype: &str,
    shape: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    let bad = |why: &str| PyValueError::new_err(format!("shared array: {why}"));
    let itemsize = dtype_itemsize(dtype).ok_or_else(|| bad("dtype"))?;
    let nbytes = byte_len(dtype, shape).ok_or_else(|| bad("shape overflows"))?;
    let mapped = mapping.as_ref().map_or(0, |m| m.bytes().len());
    if mapped < nbytes {
        return Err(bad("shape larger than the mapping"));
    }
    let ptr = mapping.as_ref().map_or(
        std::ptr::NonNull::<u64>::dangling()
            .as_ptr()
            .cast::<u8>()
            .cast_const(),
        |m| m.as_ptr(),
    );
    let owner = Bound::new(py, MappingOwner { _mapping: mapping })?.into_any();
    let shape = IxDyn(shape);
    // SAFETY: in each arm `ptr` points at `nbytes` = count * size_of::<T>() readable
    // bytes (checked above; page-aligned, or dangling-but-aligned when empty), which
    // stay mapped while `owner`, the array's base object, lives.
    unsafe {
        match (dtype.as_bytes()[1], itemsize) {
            (b'f', 8) => wrap::<f64>(ptr, shape, owner),
            (b'f', 4) => wrap::<f32>(ptr, shape, owner),
            (b'i', 8) => wrap::<i64>(ptr, shape, owner),
            (b'i', 4) => wrap::<i32>(ptr, shape, owner),
            (b'i', 2) => wrap::<i16>(ptr, shape, owner),
            (b'i', 1) => wrap::<i8>(ptr, shape, owner),
            (b'u', 8) => wrap::<u64>(ptr, shape, owner),
            (b'u', 4) => wrap::<u32>(ptr, shape, owner),
            (b'u', 2) => wrap::<u16>(ptr, shape, owner),
            (b'u', 1) => wrap::<u8>(ptr, shape, owner),
            (b'b', 1) => wrap::<bool>(ptr, shape, owner),
            _ => Err(bad("dtype")),
        }
    }
}

/// # Safety
/// `ptr` must address `shape.size()` values of `T` that stay valid while `owner` lives.
unsafe fn wrap<'py, T: Element>(
    ptr: *const u8,
    shape: IxDyn,
    owner: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the caller's contract.
    let view = unsafe { ArrayViewD::from_shape_ptr(shape, ptr.cast::<T>()) };
    // SAFETY: `owner` keeps the memory alive and becomes the array's base.
    let array = unsafe { PyArray::<T, IxDyn>::borrow_from_array(&view, owner) };
    // Read-only for the job: numpy refuses writes (the pages are PROT_READ anyway, and
    // the memory file is sealed against writable mappings).
    let kwargs = PyDict::new(array.py());
    kwargs.set_item("write", false)?;
    array.call_method("setflags", (), Some(&kwargs))?;
    Ok(array.into_any())
}

// ------------------------------------------------------------------ the state guard's comparison
// Done without touching what it compares.
//
// After every job the guard (`python/state_guard.py`) compares ~750 library containers
// with their warm-up snapshots by the identities of their elements. Done in Python,
// reading an element takes a reference to it, and taking a reference writes the
// element's reference count: every element of every watched container has its memory
// page copied out of the zygote's shared pages into the worker, after every job. That
// was ~7 MiB of every forked worker's private memory and most of the guard's ~12 ms.
//
// Here the element pointers are read with borrowed references (`PyDict_Next`, the
// list's item array), which write nothing, and compared with a fingerprint kept as a
// `bytes` object. Only dicts, class namespaces and lists (and their subclasses'
// storage) are read this way; anything else is left to the guard's Python path.

/// Adds `identities` and `changed` to the state guard module.
pub(super) fn install_identities(guard: &Bound<'_, PyModule>) -> PyResult<()> {
    guard.add_function(wrap_pyfunction!(identities, guard)?)?;
    guard.add_function(wrap_pyfunction!(changed, guard)?)?;
    Ok(())
}

/// The identities of a dict's keys and values, or of a list's items, as a `bytes`
/// fingerprint; `None` for other objects.
#[pyfunction]
fn identities<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
    // SAFETY: `obj` is a live object and the GIL is held (we are called from Python).
    let ids = unsafe { raw_identities(obj.as_ptr()) }?;
    Some(PyBytes::new(py, &to_bytes(&ids)))
}

/// Indices into `entries` (the guard's `(label, container, (items, fingerprint))`
/// tuples) of the containers that differ from their fingerprint, or that this
/// function cannot read (the guard checks those itself). Reads everything through
/// borrowed references.
#[pyfunction]
fn changed(entries: &Bound<'_, PyList>) -> Vec<usize> {
    let mut out = Vec::new();
    let list = entries.as_ptr();
    // SAFETY: the GIL is held; `entries` is a live list, and nothing runs Python code
    // (which could mutate it) between the reads below: no reference is released, no
    // object is created. Each entry's shape is checked before it is read.
    unsafe {
        for i in 0..ffi::PyList_GET_SIZE(list) {
            let entry = ffi::PyList_GET_ITEM(list, i);
            let same = entry_unchanged(entry).unwrap_or(false);
            if !same {
                out.push(i as usize);
            }
        }
    }
    out
}

/// Whether one guard entry still matches its fingerprint; `None` when it cannot tell.
///
/// # Safety
/// The GIL must be held and `entry` must be a live object.
unsafe fn entry_unchanged(entry: *mut ffi::PyObject) -> Option<bool> {
    // SAFETY: the caller holds the GIL; sizes are checked before each item read.
    unsafe {
        if ffi::PyTuple_Check(entry) == 0 || ffi::PyTuple_GET_SIZE(entry) != 3 {
            return None;
        }
        let container = ffi::PyTuple_GET_ITEM(entry, 1);
        let snap = ffi::PyTuple_GET_ITEM(entry, 2);
        if ffi::PyTuple_Check(snap) == 0 || ffi::PyTuple_GET_SIZE(snap) != 2 {
            return None;
        }
        let fingerprint = ffi::PyTuple_GET_ITEM(snap, 1);
        if ffi::PyBytes_Check(fingerprint) == 0 {
            return None;
        }
        let len = usize::try_from(ffi::PyBytes_Size(fingerprint)).ok()?;
        let data = ffi::PyBytes_AsString(fingerprint) as *const u8;
        let saved = std::slice::from_raw_parts(data, len);
        let now = raw_identities(container)?;
        Some(same_identities(&now, saved))
    }
}

/// Element pointers of a dict (key, value, key, value, ...), of a class's namespace
/// (the same, from its type dict) or of a list.
///
/// # Safety
/// The GIL must be held and `obj` must be a live object.
unsafe fn raw_identities(obj: *mut ffi::PyObject) -> Option<Vec<usize>> {
    // SAFETY: the caller holds the GIL; PyDict_Next hands out borrowed references and
    // the list's items are read within its current size. A type's `tp_dict` is its
    // namespace dict (what `vars(cls)` shows through a read-only proxy).
    unsafe {
        let obj = if ffi::PyType_Check(obj) != 0 {
            let namespace = (*(obj as *mut ffi::PyTypeObject)).tp_dict;
            if namespace.is_null() {
                return None;
            }
            namespace
        } else {
            obj
        };
        if ffi::PyDict_Check(obj) != 0 {
            let mut ids = Vec::with_capacity(2 * ffi::PyDict_Size(obj).max(0) as usize);
            let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            while ffi::PyDict_Next(obj, &mut pos, &mut key, &mut value) != 0 {
                ids.push(key as usize);
                ids.push(value as usize);
            }
            return Some(ids);
        }
        if ffi::PyList_Check(obj) != 0 {
            let n = ffi::PyList_GET_SIZE(obj);
            return Some(
                (0..n)
                    .map(|i| ffi::PyList_GET_ITEM(obj, i) as usize)
                    .collect(),
            );
        }
        None
    }
}

/// Whether `ids` are the identities `fingerprint` holds (no allocation: this runs for
/// every watched container after every job).
fn same_identities(ids: &[usize], fingerprint: &[u8]) -> bool {
    const WIDTH: usize = std::mem::size_of::<usize>();
    fingerprint.len() == ids.len() * WIDTH
        && (fingerprint.chunks_exact(WIDTH).zip(ids)).all(|(saved, id)| saved == id.to_ne_bytes())
}

fn to_bytes(ids: &[usize]) -> Vec<u8> {
    ids.iter().flat_map(|id| id.to_ne_bytes()).collect()
}
