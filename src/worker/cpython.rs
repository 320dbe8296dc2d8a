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
use pyo3::exceptions::{PyModuleNotFoundError, PyPermissionError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};

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

/// What the audit hook asks about one event: `Some(refusal)` refuses it.
pub(super) type AuditDecision = fn(Python<'_>, &str, &Bound<'_, PyTuple>) -> Option<Refusal>;

/// How the audit hook refuses an event: the exception the event's caller gets.
pub(super) enum Refusal {
    /// `PermissionError(message)`.
    Permission(String),
    /// `ModuleNotFoundError(message)`: an import refused the way a missing module is, so
    /// that library code importing optionally (`try: import x` / `except ImportError`,
    /// Pillow's plugin loader) carries on without it.
    Import(String),
}

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
        Some(Refusal::Permission(message)) => {
            PyPermissionError::new_err(message).restore(py);
            -1
        }
        Some(Refusal::Import(message)) => {
            PyModuleNotFoundError::new_err(message).restore(py);
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

// ------------------------------------------------------------------ str methods

/// Puts `methods` (name -> function) into the namespace of the built-in `str` type, for
/// the whole process: the prelude's checked `str.format` and `str.format_map`
/// (`STR_METHODS` in python/prelude/name_rules.py), so that a format field built at run time that
/// reads a refused attribute (`'{0.__class__}'`) is judged when it is used, whoever
/// formats it, job or library. Python itself refuses to set attributes of built-in
/// types, and no other hook sees a format string: this is the one way in.
///
/// Runs during warm-up, before the audit hook is armed (it reads the namespace through
/// `gc.get_referents`, which the armed hook refuses), and before the zygote forks, so
/// every worker inherits the replaced type. The namespace dict is found through
/// `str.__dict__`'s referent rather than `tp_dict`, which is no longer the namespace of
/// a static type from Python 3.12 on; then `PyType_Modified` invalidates the type's
/// version tag, so neither the method cache nor bytecode specialised during warm-up
/// keeps calling the stock methods.
pub(super) fn replace_str_methods(methods: &Bound<'_, PyDict>) -> PyResult<()> {
    let py = methods.py();
    let str_type = py.get_type::<pyo3::types::PyString>();
    let proxy = str_type.getattr("__dict__")?;
    let referents = py
        .import("gc")?
        .call_method1("get_referents", (proxy,))?
        .cast_into::<PyList>()?;
    let namespace = referents.get_item(0)?.cast_into_exact::<PyDict>()?;
    for (name, function) in methods.iter() {
        if namespace.get_item(&name)?.is_none() {
            return Err(PyValueError::new_err(format!(
                "str has no method {name} to replace"
            )));
        }
        namespace.set_item(name, function)?;
    }
    // SAFETY: the GIL is held (`methods` is bound to it); `PyUnicode_Type` is the static
    // type object of `str`, which lives as long as the interpreter, and
    // `PyType_Modified` only invalidates its (and its subclasses') cached lookups.
    unsafe { ffi::PyType_Modified(&raw mut ffi::PyUnicode_Type) };
    Ok(())
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
// After every job the guard (`python/state_guard/`) compares every container, class
// namespace and module namespace the allowlist reaches (~12,000 of them, ~200,000
// elements) with their warm-up snapshots by the identities of their elements. Done in
// Python, reading an element takes a reference to it, and taking a reference writes the
// element's reference count: every element of every watched container would have its
// memory page copied out of the zygote's shared pages into the worker, after every job.
//
// Here the element pointers are read with borrowed references (`PyDict_Next`, the
// list's item array), which write nothing, and compared in place with a fingerprint
// kept as a `bytes` object. A dict (and a class's namespace, a module's) is first judged
// by its version tag (PEP 509: CPython 3.6-3.13 give a dict a new tag on every change):
// one read of the dict's header instead of all its entries, which after a job are cold
// in the CPU's caches (measured on the figure profile: ~0.7 ms instead of ~5.5 ms).
// The guard passes the tags only on interpreters that keep them. Dicts, class
// namespaces, lists and sets (and their subclasses' storage) are read this way; anything
// else is left to the guard's Python path.

/// Adds `identities`, `changed`, `versions` and `cell_contents` to the state guard
/// module.
pub(super) fn install_identities(guard: &Bound<'_, PyModule>) -> PyResult<()> {
    guard.add_function(wrap_pyfunction!(identities, guard)?)?;
    guard.add_function(wrap_pyfunction!(changed, guard)?)?;
    guard.add_function(wrap_pyfunction!(versions, guard)?)?;
    guard.add_function(wrap_pyfunction!(cell_contents, guard)?)?;
    if descriptor_layout_holds(guard.py())? {
        guard.add_function(wrap_pyfunction!(descriptor_fields, guard)?)?;
    }
    Ok(())
}

/// How many pointer fields after the object header `__init__` replaces, for the
/// descriptors whose `__init__` a job can call again on a library's own object (no
/// audit event reports it): a property's getter, setter, deleter and doc; a
/// classmethod's or staticmethod's function. `None` for any other object. The structs
/// are CPython's own (`propertyobject`, `classmethod`, `staticmethod`), checked on this
/// interpreter by `descriptor_layout_holds` before `descriptor_fields` is offered.
unsafe fn reinit_fields(obj: *mut ffi::PyObject) -> Option<usize> {
    // SAFETY: the caller holds the GIL and `obj` is live; only its type is read.
    let ty = unsafe { ffi::Py_TYPE(obj) };
    if ty == &raw mut ffi::PyProperty_Type {
        Some(4)
    } else if ty == &raw mut ffi::PyClassMethod_Type || ty == &raw mut ffi::PyStaticMethod_Type {
        Some(1)
    } else {
        None
    }
}

/// The fields `reinit_fields` names, read in place.
unsafe fn read_fields(obj: *mut ffi::PyObject, count: usize, out: &mut Vec<usize>) {
    // SAFETY: the caller holds the GIL, `obj` is live and of a type whose first
    // `count` fields after the header are object pointers (`reinit_fields`).
    unsafe {
        let first = obj.add(1).cast::<*mut ffi::PyObject>();
        for k in 0..count {
            out.push(*first.add(k) as usize);
        }
    }
}

/// Whether this interpreter lays out a property and a classmethod as `read_fields`
/// reads them: built with known objects and read back.
fn descriptor_layout_holds(py: Python<'_>) -> PyResult<bool> {
    let builtins = py.import("builtins")?;
    let parts = ["len", "abs", "repr"].map(|n| builtins.getattr(n));
    let [get, set, del] = parts;
    let (get, set, del) = (get?, set?, del?);
    let doc = pyo3::types::PyString::new(py, "layout probe");
    let property = builtins
        .getattr("property")?
        .call1((&get, &set, &del, &doc))?;
    let classmethod = builtins.getattr("classmethod")?.call1((&get,))?;
    let mut read = Vec::new();
    // SAFETY: the GIL is held; both objects are live and of the types read_fields reads.
    unsafe {
        read_fields(property.as_ptr(), 4, &mut read);
        read_fields(classmethod.as_ptr(), 1, &mut read);
    }
    let want = [&get, &set, &del, doc.as_any(), &get].map(|o| o.as_ptr() as usize);
    Ok(read == want)
}

/// The fields of each descriptor of `objs` that its `__init__` replaces, as a `bytes`
/// fingerprint of identities (an empty field, a property without a setter, is 0); `None` when an item is not such a descriptor. ~3,200 of
/// them in the swept classes, read in place (Python's attribute reads took ~0.9 ms).
#[pyfunction]
fn descriptor_fields<'py>(
    py: Python<'py>,
    objs: &Bound<'py, PyList>,
) -> Option<Bound<'py, PyBytes>> {
    let list = objs.as_ptr();
    let n = objs.len() as ffi::Py_ssize_t;
    let mut ids = Vec::with_capacity(2 * objs.len());
    for i in 0..n {
        // SAFETY: the GIL is held and `i` is below the list's size; the items are live.
        unsafe {
            if i + CELLS_AHEAD < n {
                prefetch(ffi::PyList_GET_ITEM(list, i + CELLS_AHEAD));
            }
            let obj = ffi::PyList_GET_ITEM(list, i);
            let count = reinit_fields(obj)?;
            read_fields(obj, count, &mut ids);
        }
    }
    Some(PyBytes::new(py, &to_bytes(&ids)))
}

/// How far ahead of its read a closure cell is asked for: the cells are in address
/// order, so most asks land on a line already coming.
const CELLS_AHEAD: ffi::Py_ssize_t = 32;

/// What each closure cell of `cells` holds, as a `bytes` fingerprint of identities (0
/// for an empty cell); `None` when an item is not a cell. Read in place, as
/// `identities` reads, without a reference to any content: Python's `cell_contents`
/// took ~0.9 ms for the ~5,900 cells of the swept functions.
#[pyfunction]
fn cell_contents<'py>(py: Python<'py>, cells: &Bound<'py, PyList>) -> Option<Bound<'py, PyBytes>> {
    let list = cells.as_ptr();
    let n = cells.len() as ffi::Py_ssize_t;
    let mut ids = Vec::with_capacity(cells.len());
    for i in 0..n {
        // SAFETY: the GIL is held and `i` is below the list's size; the cells are live
        // items of the list, and a cell's `ob_ref` is read as `PyCell_GET` reads it,
        // without taking a reference. Each cell is a cache line of its own, cold after
        // a job: asked for ahead of its read, as `changed` asks for its entries.
        unsafe {
            if i + CELLS_AHEAD < n {
                prefetch(ffi::PyList_GET_ITEM(list, i + CELLS_AHEAD));
            }
            let cell = ffi::PyList_GET_ITEM(list, i);
            if ffi::PyCell_Check(cell) == 0 {
                return None;
            }
            ids.push((*cell.cast::<ffi::PyCellObject>()).ob_ref as usize);
        }
    }
    Some(PyBytes::new(py, &to_bytes(&ids)))
}

/// The identities of a dict's keys and values, or of a list's or a set's items, as a
/// `bytes` fingerprint; `None` for other objects.
#[pyfunction]
fn identities<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
    // SAFETY: `obj` is a live object and the GIL is held (we are called from Python).
    let ids = unsafe { raw_identities(obj.as_ptr()) }?;
    Some(PyBytes::new(py, &to_bytes(&ids)))
}

/// The version tags of the dicts (class and module namespaces included) of `entries`
/// (the guard's `(label, object, (items, fingerprint))` tuples), 8 bytes each in entry
/// order, 0 for an entry that is no dict: the `versions` argument of [`changed`].
#[pyfunction]
fn versions<'py>(py: Python<'py>, entries: &Bound<'py, PyList>) -> Bound<'py, PyByteArray> {
    let mut out = Vec::new();
    // SAFETY: the GIL is held; `entries` is a live list read within its size, and each
    // entry's shape is checked before it is read.
    unsafe {
        let list = entries.as_ptr();
        for i in 0..ffi::PyList_GET_SIZE(list) {
            let entry = ffi::PyList_GET_ITEM(list, i);
            let tag = entry_object(entry)
                .and_then(|o| dict_version(o))
                .unwrap_or(0);
            out.extend_from_slice(&tag.to_ne_bytes());
        }
    }
    PyByteArray::new(py, &out)
}

/// Indices into `entries` (the guard's `(label, container, (items, fingerprint))`
/// tuples) of the containers that differ from their fingerprint, or that this
/// function cannot read (the guard checks those itself). Reads everything through
/// borrowed references. `versions` (from [`versions`], or `None`): a dict whose version
/// tag is the one recorded there is unchanged without reading its entries; one whose
/// tag moved but whose entries match gets its new tag recorded.
#[pyfunction]
#[pyo3(signature = (entries, versions=None))]
fn changed(entries: &Bound<'_, PyList>, versions: Option<&Bound<'_, PyByteArray>>) -> Vec<usize> {
    let mut out = Vec::new();
    let list = entries.as_ptr();
    // SAFETY: the GIL is held; `entries` is a live list and `versions` a live bytearray,
    // and nothing runs Python code (which could mutate either) between the reads and
    // writes below: no reference is released, no object is created. Each entry's shape
    // is checked before it is read, and the bytearray's buffer is only indexed within
    // its length, which is not changed here.
    unsafe {
        let (tags, tag_count) = match versions {
            Some(v) => (
                ffi::PyByteArray_AsString(v.as_ptr()).cast::<u8>(),
                usize::try_from(ffi::PyByteArray_Size(v.as_ptr())).unwrap_or(0) / 8,
            ),
            None => (std::ptr::null_mut(), 0),
        };
        let n = ffi::PyList_GET_SIZE(list);
        for i in 0..n {
            if i + 3 * AHEAD < n {
                prefetch(ffi::PyList_GET_ITEM(list, i + 3 * AHEAD));
            }
            if i + 2 * AHEAD < n {
                prefetch_parts(ffi::PyList_GET_ITEM(list, i + 2 * AHEAD));
            }
            if i + AHEAD < n {
                prefetch_contents(ffi::PyList_GET_ITEM(list, i + AHEAD));
            }
            let entry = ffi::PyList_GET_ITEM(list, i);
            let index = i as usize;
            let tag_at = (index < tag_count && !tags.is_null()).then(|| tags.add(index * 8));
            let recorded = tag_at.map(|at| u64::from_ne_bytes(*at.cast::<[u8; 8]>()));
            let now = entry_object(entry).and_then(|o| dict_version(o));
            if let (Some(recorded), Some(now)) = (recorded, now) {
                if recorded != 0 && recorded == now {
                    continue;
                }
            }
            let same = entry_unchanged(entry).unwrap_or(false);
            if !same {
                out.push(index);
            } else if let (Some(at), Some(now)) = (tag_at, now) {
                *at.cast::<[u8; 8]>() = now.to_ne_bytes();
            }
        }
    }
    out
}

/// How many entries ahead `changed` asks for the memory of each of its three steps
/// (the entry, then its container and snapshot, then what those point to).
const AHEAD: ffi::Py_ssize_t = 12;

/// Asks the CPU to start loading the cache line at `ptr`, so that a later read finds it
/// there. After a job, the guard's ~20,000 containers are cold in the caches, and
/// reading each waits on a chain of dependent loads (entry, container, items); issuing
/// the loads of the entries ahead overlaps those waits (measured after a job, medians
/// of one interleaved run: the scan of the containers 0.86 -> 0.58 ms, of the classes
/// ~0.19 -> ~0.10 ms). Only a hint: it reads nothing and cannot fault.
#[inline(always)]
fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 only hints the cache; an invalid address is ignored, never read.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// The second step ahead: one entry's container and snapshot (the entry itself was
/// asked for a step before).
///
/// # Safety
/// The GIL must be held and `entry` must be a live object.
unsafe fn prefetch_parts(entry: *mut ffi::PyObject) {
    // SAFETY: the caller's contract; `entry_object` checks the entry's shape.
    unsafe {
        if let Some(container) = entry_object(entry) {
            prefetch(container);
            prefetch(ffi::PyTuple_GET_ITEM(entry, 2));
        }
    }
}

/// The third step ahead: a class's namespace dict, a list's item array, and the
/// snapshot's fingerprint.
///
/// # Safety
/// The GIL must be held and `entry` must be a live object.
unsafe fn prefetch_contents(entry: *mut ffi::PyObject) {
    // SAFETY: the caller's contract; every object's shape is checked before it is read.
    unsafe {
        let Some(container) = entry_object(entry) else {
            return;
        };
        if ffi::PyType_Check(container) != 0 {
            prefetch((*container.cast::<ffi::PyTypeObject>()).tp_dict);
        } else if ffi::PyList_Check(container) != 0 {
            prefetch((*container.cast::<ffi::PyListObject>()).ob_item);
        }
        let snap = ffi::PyTuple_GET_ITEM(entry, 2);
        if ffi::PyTuple_Check(snap) != 0 && ffi::PyTuple_GET_SIZE(snap) == 2 {
            prefetch(ffi::PyTuple_GET_ITEM(snap, 1));
        }
    }
}

/// The object of one guard entry (its second item), if the entry has the guard's shape.
///
/// # Safety
/// The GIL must be held and `entry` must be a live object.
unsafe fn entry_object(entry: *mut ffi::PyObject) -> Option<*mut ffi::PyObject> {
    // SAFETY: the caller holds the GIL; the tuple's size is checked before the read.
    unsafe {
        (ffi::PyTuple_Check(entry) != 0 && ffi::PyTuple_GET_SIZE(entry) == 3)
            .then(|| ffi::PyTuple_GET_ITEM(entry, 1))
    }
}

/// The namespace dict of a class, the object itself otherwise.
///
/// # Safety
/// The GIL must be held and `obj` must be a live object.
unsafe fn namespace_of(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: the caller holds the GIL; a type's `tp_dict` is its namespace dict (what
    // `vars(cls)` shows through a read-only proxy), or NULL.
    unsafe {
        if ffi::PyType_Check(obj) != 0 {
            (*obj.cast::<ffi::PyTypeObject>()).tp_dict
        } else {
            obj
        }
    }
}

/// A dict's version tag (PEP 509), read from the dict's header; `None` for anything
/// that is not a dict or a class with a namespace. The word after `ma_used` is the tag
/// on the interpreters the guard asks this of (3.6-3.13), which is why the guard only
/// passes recorded tags there.
///
/// # Safety
/// The GIL must be held and `obj` must be a live object.
unsafe fn dict_version(obj: *mut ffi::PyObject) -> Option<u64> {
    // SAFETY: the caller holds the GIL; a dict (subclasses included) starts with the
    // `PyDictObject` header, whose word after `ma_used` is read as a u64 (it is one: the
    // version tag, or the watcher tag that replaced it).
    unsafe {
        let obj = namespace_of(obj);
        if obj.is_null() || ffi::PyDict_Check(obj) == 0 {
            return None;
        }
        let at = std::mem::offset_of!(ffi::PyDictObject, ma_used)
            + std::mem::size_of::<ffi::Py_ssize_t>();
        Some(std::ptr::read(obj.cast::<u8>().add(at).cast::<u64>()))
    }
}

/// Whether one guard entry still matches its fingerprint; `None` when it cannot tell.
///
/// # Safety
/// The GIL must be held and `entry` must be a live object.
unsafe fn entry_unchanged(entry: *mut ffi::PyObject) -> Option<bool> {
    // SAFETY: the caller holds the GIL; sizes are checked before each item read.
    unsafe {
        let container = entry_object(entry)?;
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
        matches_identities(container, saved)
    }
}

/// Whether a dict's (key, value) pointers, a class namespace's, a list's or a set's item
/// pointers are those of `fingerprint`, compared in place (no allocation but for a set:
/// this runs for every watched container after every job); `None` for other objects.
///
/// # Safety
/// The GIL must be held and `obj` must be a live object.
unsafe fn matches_identities(obj: *mut ffi::PyObject, fingerprint: &[u8]) -> Option<bool> {
    const WIDTH: usize = std::mem::size_of::<usize>();
    let mut saved = fingerprint.chunks_exact(WIDTH);
    let mut next_is = |ptr: *mut ffi::PyObject| {
        saved
            .next()
            .is_some_and(|chunk| chunk == (ptr as usize).to_ne_bytes())
    };
    // SAFETY: the caller holds the GIL; PyDict_Next hands out borrowed references and
    // the list's items are read within its current size.
    unsafe {
        let obj = namespace_of(obj);
        if obj.is_null() {
            return None;
        }
        if ffi::PyDict_Check(obj) != 0 {
            if fingerprint.len() != 2 * WIDTH * ffi::PyDict_Size(obj).max(0) as usize {
                return Some(false);
            }
            let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            while ffi::PyDict_Next(obj, &mut pos, &mut key, &mut value) != 0 {
                if !next_is(key) || !next_is(value) {
                    return Some(false);
                }
            }
            return Some(true);
        }
        if ffi::PyList_Check(obj) != 0 {
            let n = ffi::PyList_GET_SIZE(obj);
            if fingerprint.len() != WIDTH * n.max(0) as usize {
                return Some(false);
            }
            return Some((0..n).all(|i| next_is(ffi::PyList_GET_ITEM(obj, i))));
        }
        if ffi::PySet_Check(obj) != 0 {
            let keys = set_keys(obj);
            if fingerprint.len() != WIDTH * keys.len() {
                return Some(false);
            }
            return Some(keys.into_iter().all(|k| next_is(k as *mut ffi::PyObject)));
        }
        None
    }
}

/// A set's element pointers, sorted (a set has no order of its own), read from its hash
/// table: slots that are empty or hold the dummy of a deleted element (whose hash is
/// -1, which no element's hash ever is) are skipped.
///
/// # Safety
/// The GIL must be held and `obj` must be a live set (`PySet_Check`).
unsafe fn set_keys(obj: *mut ffi::PyObject) -> Vec<usize> {
    // SAFETY: the caller holds the GIL and passes a set, whose object starts with the
    // `PySetObject` header; its table has `mask + 1` slots.
    unsafe {
        let set = obj.cast::<ffi::PySetObject>();
        let slots = usize::try_from((*set).mask).map_or(0, |m| m + 1);
        let table = (*set).table;
        let mut keys = Vec::with_capacity(usize::try_from((*set).used).unwrap_or(0));
        for i in 0..slots {
            let entry = &*table.add(i);
            if !entry.key.is_null() && entry.hash != -1 {
                keys.push(entry.key as usize);
            }
        }
        keys.sort_unstable();
        keys
    }
}

/// Element pointers of a dict (key, value, key, value, ...), of a class's namespace
/// (the same, from its type dict), of a list, or of a set (sorted).
///
/// # Safety
/// The GIL must be held and `obj` must be a live object.
unsafe fn raw_identities(obj: *mut ffi::PyObject) -> Option<Vec<usize>> {
    // SAFETY: the caller holds the GIL; PyDict_Next hands out borrowed references and
    // the list's items are read within its current size.
    unsafe {
        let obj = namespace_of(obj);
        if obj.is_null() {
            return None;
        }
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
        if ffi::PySet_Check(obj) != 0 {
            return Some(set_keys(obj));
        }
        None
    }
}

fn to_bytes(ids: &[usize]) -> Vec<u8> {
    ids.iter().flat_map(|id| id.to_ne_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The native readers of closure cells and reinitialisable descriptors read what
    /// Python reads, and refuse anything else.
    #[test]
    fn the_native_readers_read_what_python_reads() {
        Python::initialize();
        Python::attach(|py| {
            assert!(descriptor_layout_holds(py).unwrap());
            let g = PyDict::new(py);
            py.run(
                c"def outer():\n    x, y = [1], 'y'\n    def inner():\n        return x, y\n    return inner\n\
                  cells = list(outer().__closure__)\n\
                  class K:\n    @property\n    def p(self):\n        'doc'\n    @classmethod\n    def c(cls): pass\n    @staticmethod\n    def s(): pass\n\
                  descriptors = [K.__dict__[n] for n in ('p', 'c', 's')]\n\
                  p, c, s = descriptors\n",
                Some(&g),
                None,
            )
            .unwrap();
            let ids = |expr: &std::ffi::CStr| -> Vec<u8> {
                to_bytes(
                    &py.eval(expr, Some(&g), None)
                        .unwrap()
                        .extract::<Vec<usize>>()
                        .unwrap(),
                )
            };
            let list = |name: &str| {
                g.get_item(name)
                    .unwrap()
                    .unwrap()
                    .cast_into::<PyList>()
                    .unwrap()
            };
            let cells = cell_contents(py, &list("cells")).unwrap();
            assert_eq!(
                cells.as_bytes(),
                ids(c"[id(c.cell_contents) for c in cells]")
            );
            let fields = descriptor_fields(py, &list("descriptors")).unwrap();
            assert_eq!(
                fields.as_bytes(),
                // A property keeps no setter or deleter as an empty field (Python shows None).
                ids(c"[id(p.fget), 0, 0, id(p.__doc__), id(c.__func__), id(s.__func__)]")
            );
            let neither = PyList::new(py, [1, 2]).unwrap();
            assert!(cell_contents(py, &neither).is_none());
            assert!(descriptor_fields(py, &neither).is_none());
        });
    }
}
