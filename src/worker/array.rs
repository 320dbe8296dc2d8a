//! Shared arrays, the worker's end: map each received memory file read-only and wrap
//! it in a read-only numpy array that owns the mapping. The host's end, which makes and
//! seals the memory file, is `crate::array`; the descriptor travels by `crate::fdpass`.

use std::os::fd::{AsRawFd, OwnedFd};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::cpython;
use crate::array::byte_len;
use crate::protocol::ArrayMeta;
use crate::sys::Mapping;

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
    let nbytes = byte_len(&meta.dtype, &meta.shape)
        .filter(|&n| n as u64 == meta.nbytes)
        .ok_or_else(|| {
            bad(format!(
                "dtype {} and shape disagree with the size",
                meta.dtype
            ))
        })?;
    // Only sealed memory: the array must not change under the job.
    match crate::sys::sealed_size(&fd) {
        Some(size) if size >= nbytes as u64 => {}
        _ => return Err(bad("not sealed shared memory of the announced size".into())),
    }
    let mapping = if nbytes == 0 {
        None
    } else {
        Some(Mapping::new(fd.as_raw_fd(), nbytes, false).map_err(|e| bad(e.to_string()))?)
    };
    drop(fd);
    cpython::readonly_array(py, mapping, &meta.dtype, &meta.shape)
}
