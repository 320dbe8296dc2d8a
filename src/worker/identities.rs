//! The state guard's per-job comparison, done without touching what it compares.
//!
//! After every job the guard (`python/state_guard.py`) compares ~750 library containers
//! with their warm-up snapshots by the identities of their elements. Done in Python,
//! reading an element takes a reference to it, and taking a reference writes the
//! element's reference count: every element of every watched container has its memory
//! page copied out of the zygote's shared pages into the worker, after every job. That
//! was ~7 MiB of every forked worker's private memory and most of the guard's ~12 ms.
//!
//! Here the element pointers are read with borrowed references (`PyDict_Next`, the
//! list's item array), which write nothing, and compared with a fingerprint kept as a
//! `bytes` object. Only dicts, class namespaces and lists (and their subclasses'
//! storage) are read this way; anything else is left to the guard's Python path.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// Adds `identities` and `changed` to the state guard module.
pub(super) fn install(guard: &Bound<'_, PyModule>) -> PyResult<()> {
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
