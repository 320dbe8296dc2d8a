//! Shared arrays, the worker's end: map each received memory file read-only and wrap
//! it in a read-only numpy array that owns the mapping. The host's end, which makes and
//! seals the memory file, is `crate::array`; the descriptor travels by `crate::fdpass`.

use std::os::fd::{AsRawFd, OwnedFd};

use numpy::ndarray::{ArrayViewD, IxDyn};
use numpy::{Element, PyArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::array::{dtype_itemsize, Mapping};
use crate::protocol::ArrayMeta;

/// Owns one read-only mapping; it is the numpy array's base object, so the memory
/// stays mapped exactly as long as some array still refers to it.
#[pyclass(frozen, name = "SharedMemory", module = "pyward")]
struct MappingOwner {
    _mapping: Option<Mapping>,
}

/// A dict `name -> read-only ndarray` over the descriptors of one run message.
pub(super) fn expose<'py>(
    py: Python<'py>,
    metas: &[ArrayMeta],
    fds: Vec<OwnedFd>,
) -> PyResult<Bound<'py, PyDict>> {
    let arrays = PyDict::new(py);
    for (meta, fd) in metas.iter().zip(fds) {
        arrays.set_item(&meta.name, expose_one(py, meta, fd)?)?;
    }
    Ok(arrays)
}

fn expose_one<'py>(py: Python<'py>, meta: &ArrayMeta, fd: OwnedFd) -> PyResult<Bound<'py, PyAny>> {
    let bad = |why: String| PyValueError::new_err(format!("shared array {}: {why}", meta.name));
    let itemsize =
        dtype_itemsize(&meta.dtype).ok_or_else(|| bad(format!("dtype {}", meta.dtype)))?;
    let count = meta
        .shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| bad("shape overflows".into()))?;
    let nbytes = count
        .checked_mul(itemsize)
        .filter(|&n| n as u64 == meta.nbytes)
        .ok_or_else(|| bad("shape and size disagree".into()))?;
    // Only sealed memory: the array must not change under the job.
    // SAFETY: fcntl(2) and fstat(2) on a descriptor this process received and owns.
    let (seals, size) = unsafe {
        let seals = libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS);
        let mut st: libc::stat = std::mem::zeroed();
        let size = if libc::fstat(fd.as_raw_fd(), &mut st) == 0 {
            st.st_size as u64
        } else {
            0
        };
        (seals, size)
    };
    let needed = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK;
    if seals < 0 || seals & needed != needed || size < nbytes as u64 {
        return Err(bad("not sealed shared memory of the announced size".into()));
    }
    let mapping = if nbytes == 0 {
        None
    } else {
        Some(Mapping::new(fd.as_raw_fd(), nbytes, false).map_err(|e| bad(e.to_string()))?)
    };
    drop(fd);
    let ptr = mapping
        .as_ref()
        .map_or(std::ptr::NonNull::<u64>::dangling().as_ptr().cast(), |m| {
            m.ptr
        });
    let owner = Bound::new(py, MappingOwner { _mapping: mapping })?.into_any();
    let shape = IxDyn(&meta.shape);
    // SAFETY: in each arm, `ptr` points at `nbytes` = count * size_of::<T>() readable
    // bytes (checked above; page-aligned, or dangling-but-aligned when empty), which
    // stay mapped while `owner`, the array's base object, lives.
    let array = unsafe {
        match (meta.dtype.as_bytes()[1], itemsize) {
            (b'f', 8) => wrap::<f64>(ptr, shape, owner)?,
            (b'f', 4) => wrap::<f32>(ptr, shape, owner)?,
            (b'i', 8) => wrap::<i64>(ptr, shape, owner)?,
            (b'i', 4) => wrap::<i32>(ptr, shape, owner)?,
            (b'i', 2) => wrap::<i16>(ptr, shape, owner)?,
            (b'i', 1) => wrap::<i8>(ptr, shape, owner)?,
            (b'u', 8) => wrap::<u64>(ptr, shape, owner)?,
            (b'u', 4) => wrap::<u32>(ptr, shape, owner)?,
            (b'u', 2) => wrap::<u16>(ptr, shape, owner)?,
            (b'u', 1) => wrap::<u8>(ptr, shape, owner)?,
            (b'b', 1) => wrap::<bool>(ptr, shape, owner)?,
            _ => return Err(bad(format!("dtype {}", meta.dtype))),
        }
    };
    Ok(array)
}

/// # Safety
/// `ptr` must address `shape.size()` values of `T` that stay valid while `owner` lives.
unsafe fn wrap<'py, T: Element>(
    ptr: *mut libc::c_void,
    shape: IxDyn,
    owner: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the caller's contract.
    let view = unsafe { ArrayViewD::from_shape_ptr(shape, ptr.cast::<T>().cast_const()) };
    // SAFETY: `owner` keeps the memory alive and becomes the array's base.
    let array = unsafe { PyArray::<T, IxDyn>::borrow_from_array(&view, owner) };
    // Read-only for the job: numpy refuses writes (the pages are PROT_READ anyway, and
    // the memory file is sealed against writable mappings).
    let kwargs = PyDict::new(array.py());
    kwargs.set_item("write", false)?;
    array.call_method("setflags", (), Some(&kwargs))?;
    Ok(array.into_any())
}
