//! Zero-copy numeric inputs: arrays handed to a job through sealed shared memory. This
//! is the host's end; the worker's end, which maps them, is `crate::worker::array`.
//!
//! A backend often holds its data in memory already; writing it to a file for the job
//! to parse again costs a copy, a write, a read and a parse. [`SharedArray::new`]
//! copies the array once into an anonymous memory file (memfd_create(2)) and seals it:
//! no write, no resize, and the seals themselves sealed (fcntl(2), "File Sealing"), so
//! neither the host nor any worker can change the bytes afterwards. A job's run message
//! carries the descriptor over the worker's protocol socket; the worker maps it
//! read-only and exposes it under its name as a read-only numpy array whose memory *is*
//! the mapping: no file, no copy, no parse on the Python side.
//!
//! A `SharedArray` is cheap to clone (one descriptor behind an `Arc`) and can be given
//! to any number of jobs, on any worker, so data reused across jobs is copied once.
//!
//! Costs to know: the mapping counts towards the worker's address-space limit, and the
//! pages a job touches count towards its resident set (the memory watchdog sees them).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use numpy::ndarray::{ArrayBase, Data, Dimension};

use crate::sys::Mapping;

mod sealed {
    pub trait Sealed {}
}

/// Element types a [`SharedArray`] can hold: the fixed-size numpy types that map to a
/// Rust primitive.
pub trait ArrayElement: Copy + bytemuck::NoUninit + sealed::Sealed + 'static {
    /// numpy's kind character (`f`, `i`, `u`, `b`).
    const KIND: char;
}

macro_rules! elements {
    ($($t:ty => $kind:literal),* $(,)?) => {
        $(
            impl sealed::Sealed for $t {}
            impl ArrayElement for $t {
                const KIND: char = $kind;
            }
        )*
    };
}

elements! {
    f64 => 'f', f32 => 'f',
    i64 => 'i', i32 => 'i', i16 => 'i', i8 => 'i',
    u64 => 'u', u32 => 'u', u16 => 'u', u8 => 'u',
    bool => 'b',
}

/// The numpy dtype string of `T` in this machine's byte order, e.g. `<f8`.
fn dtype_of<T: ArrayElement>() -> String {
    let size = std::mem::size_of::<T>();
    let order = if size == 1 {
        '|'
    } else if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    format!("{order}{}{size}", T::KIND)
}

/// Bytes of an array of `dtype` and `shape` in C order; `None` for a dtype this module
/// does not know or a size that overflows (shapes come from records, `.npy` headers
/// and run messages).
pub(crate) fn byte_len(dtype: &str, shape: &[usize]) -> Option<usize> {
    shape
        .iter()
        .try_fold(dtype_itemsize(dtype)?, |n, &d| n.checked_mul(d))
}

/// Item size in bytes of a dtype string this module produced (or a record holds).
pub(crate) fn dtype_itemsize(dtype: &str) -> Option<usize> {
    let mut chars = dtype.chars();
    let order = chars.next()?;
    let kind = chars.next()?;
    let size: usize = chars.as_str().parse().ok()?;
    let known = matches!(
        (kind, size),
        ('f', 4 | 8) | ('i' | 'u', 1 | 2 | 4 | 8) | ('b', 1)
    );
    let native = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    (known && (order == native || (order == '|' && size == 1))).then_some(size)
}

/// A numeric array in sealed shared memory, ready to be passed to jobs with
/// [`crate::Job::with_shared_array`]. See the module docs.
#[derive(Clone, Debug)]
pub struct SharedArray {
    fd: Arc<OwnedFd>,
    dtype: String,
    shape: Vec<usize>,
    nbytes: usize,
}

impl SharedArray {
    /// Copies `array` (any layout; it is written in C order) into sealed shared memory.
    pub fn new<A, S, D>(array: &ArrayBase<S, D>) -> io::Result<SharedArray>
    where
        A: ArrayElement,
        S: Data<Elem = A>,
        D: Dimension,
    {
        let nbytes = array.len() * std::mem::size_of::<A>();
        let shape = array.shape().to_vec();
        let dtype = dtype_of::<A>();
        let fill = |dst: &mut [u8]| match array.as_slice() {
            Some(src) => dst.copy_from_slice(bytemuck::cast_slice(src)),
            None => {
                let size = std::mem::size_of::<A>();
                for (chunk, v) in dst.chunks_exact_mut(size).zip(array.iter()) {
                    chunk.copy_from_slice(bytemuck::bytes_of(v));
                }
            }
        };
        Self::from_fill(dtype, shape, nbytes, fill)
    }

    /// The array as an `.npy` file (format 1.0, C order), as `numpy.save` writes it.
    pub fn to_npy(&self) -> io::Result<Vec<u8>> {
        let mut npy = self.npy_header()?;
        npy.extend_from_slice(&self.to_bytes()?);
        Ok(npy)
    }

    /// The `.npy` header (format 1.0) that precedes the bytes of [`Self::to_bytes`].
    pub fn npy_header(&self) -> io::Result<Vec<u8>> {
        let shape = match self.shape.as_slice() {
            [one] => format!("({one},)"),
            dims => format!(
                "({})",
                dims.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            self.dtype
        );
        // Magic (6) + version (2) + length (2) + header, padded with spaces so the
        // data starts on a 64-byte boundary, ending in a newline.
        let unpadded = 10 + header.len() + 1;
        header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
        header.push('\n');
        let len = u16::try_from(header.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "npy header too long"))?;
        let mut out = Vec::with_capacity(10 + header.len());
        out.extend_from_slice(b"\x93NUMPY\x01\x00");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        Ok(out)
    }

    /// Reads an `.npy` file (format 1.x or 2.x, C order, a dtype [`ArrayElement`]
    /// covers in this machine's byte order) into sealed shared memory.
    pub fn from_npy(npy: &[u8]) -> io::Result<SharedArray> {
        let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, format!("npy: {why}"));
        if npy.len() < 10 || &npy[..6] != b"\x93NUMPY" {
            return Err(bad("not an .npy file"));
        }
        let (len, start) = match npy[6] {
            1 => (usize::from(u16::from_le_bytes([npy[8], npy[9]])), 10),
            2 | 3 if npy.len() >= 12 => (
                u32::from_le_bytes([npy[8], npy[9], npy[10], npy[11]]) as usize,
                12,
            ),
            _ => return Err(bad("unknown format version")),
        };
        let header = npy
            .get(start..start + len)
            .and_then(|h| std::str::from_utf8(h).ok())
            .ok_or_else(|| bad("truncated header"))?;
        let field = |key: &str| -> Option<&str> {
            let at = header.find(&format!("'{key}':"))? + key.len() + 3;
            Some(header[at..].trim_start())
        };
        let descr = field("descr")
            .and_then(|v| v.strip_prefix('\''))
            .and_then(|v| v.split('\'').next())
            .ok_or_else(|| bad("no descr"))?;
        if !field("fortran_order").is_some_and(|v| v.starts_with("False")) {
            return Err(bad("only C-order arrays"));
        }
        let shape = field("shape")
            .and_then(|v| v.strip_prefix('('))
            .and_then(|v| v.split(')').next())
            .ok_or_else(|| bad("no shape"))?;
        let shape = shape
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse::<usize>().map_err(|_| bad("bad shape")))
            .collect::<io::Result<Vec<_>>>()?;
        Self::from_bytes(descr, shape, &npy[start + len..])
    }

    /// An array from raw bytes in C order.
    pub(crate) fn from_bytes(
        dtype: &str,
        shape: Vec<usize>,
        bytes: &[u8],
    ) -> io::Result<SharedArray> {
        dtype_itemsize(dtype)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("dtype {dtype}")))?;
        if byte_len(dtype, &shape) != Some(bytes.len()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "array bytes do not match its shape",
            ));
        }
        Self::from_fill(dtype.to_string(), shape, bytes.len(), |dst| {
            dst.copy_from_slice(bytes)
        })
    }

    fn from_fill(
        dtype: String,
        shape: Vec<usize>,
        nbytes: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> io::Result<SharedArray> {
        let fd = crate::sys::sealable_memfd(c"pyward-array", nbytes)?;
        if nbytes > 0 {
            let mut map = Mapping::new(fd.as_raw_fd(), nbytes, true)?;
            fill(map.bytes_mut());
            // Unmapped before sealing: F_SEAL_WRITE fails while a writable shared
            // mapping exists.
            drop(map);
        }
        crate::sys::seal_for_good(&fd)?;
        Ok(SharedArray {
            fd: Arc::new(fd),
            dtype,
            shape,
            nbytes,
        })
    }

    /// numpy dtype string, e.g. `<f8`.
    pub fn dtype(&self) -> &str {
        &self.dtype
    }

    /// Shape (C order).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Size of the data in bytes.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }

    /// A copy of the bytes (C order), e.g. for run records.
    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        if self.nbytes == 0 {
            return Ok(Vec::new());
        }
        let map = Mapping::new(self.fd.as_raw_fd(), self.nbytes, false)?;
        Ok(map.bytes().to_vec())
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub(crate) fn meta(&self, name: &str) -> crate::protocol::ArrayMeta {
        crate::protocol::ArrayMeta {
            name: name.to_string(),
            dtype: self.dtype.clone(),
            shape: self.shape.clone(),
            nbytes: self.nbytes as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;
    use numpy::ndarray::{arr2, Array3};

    #[test]
    fn any_layout_is_stored_in_c_order_and_sealed() {
        let a = arr2(&[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let t = a.t(); // a transposed view: not C-contiguous
        let shared = SharedArray::new(&t).unwrap();
        assert_eq!(shared.shape(), &[3, 2]);
        assert_eq!(shared.dtype(), "<f8");
        let bytes = shared.to_bytes().unwrap();
        let values: Vec<f64> = bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(values, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        // Sealed: no writable mapping, no resize.
        assert!(Mapping::new(shared.raw_fd(), 8, true).is_err());
        // Sealed against shrinking: truncating it must fail.
        let file = File::from(shared.fd.try_clone().unwrap());
        assert!(file.set_len(0).is_err());
    }

    #[test]
    fn dtypes_and_empty_arrays() {
        let u = SharedArray::new(&Array3::<u8>::zeros((2, 0, 3))).unwrap();
        assert_eq!(
            (u.dtype(), u.nbytes(), u.shape()),
            ("|u1", 0, &[2, 0, 3][..])
        );
        assert_eq!(dtype_itemsize("<i4"), Some(4));
        // A shape whose size overflows is refused, not wrapped (or panicked on).
        assert_eq!(byte_len("<f8", &[usize::MAX, 2]), None);
        assert!(SharedArray::from_bytes("<f8", vec![usize::MAX, 2], &[]).is_err());
        assert_eq!(dtype_itemsize("|b1"), Some(1));
        assert_eq!(dtype_itemsize("<c16"), None);
        assert_eq!(dtype_itemsize(">f8"), None);
        let b = SharedArray::from_bytes("<i2", vec![2], &[1, 0, 2, 0]).unwrap();
        assert_eq!(b.to_bytes().unwrap(), [1, 0, 2, 0]);
        assert!(SharedArray::from_bytes("<i2", vec![3], &[1, 0]).is_err());
    }

    #[test]
    fn npy_round_trips_and_matches_numpy_headers() {
        let a = SharedArray::new(&Array3::<i32>::from_shape_fn((2, 3, 4), |(i, j, k)| {
            (i * 100 + j * 10 + k) as i32
        }))
        .unwrap();
        let npy = a.to_npy().unwrap();
        assert_eq!(&npy[..8], b"\x93NUMPY\x01\x00");
        let header_end = 10 + usize::from(u16::from_le_bytes([npy[8], npy[9]]));
        assert_eq!(header_end % 64, 0);
        assert!(std::str::from_utf8(&npy[10..header_end])
            .unwrap()
            .starts_with("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3, 4), }"));
        let b = SharedArray::from_npy(&npy).unwrap();
        assert_eq!((b.dtype(), b.shape()), ("<i4", &[2, 3, 4][..]));
        assert_eq!(b.to_bytes().unwrap(), a.to_bytes().unwrap());
        let one = SharedArray::new(&numpy::ndarray::arr1(&[1.5f64])).unwrap();
        let back = SharedArray::from_npy(&one.to_npy().unwrap()).unwrap();
        assert_eq!(back.shape(), &[1]);
        assert!(SharedArray::from_npy(b"\x93NUMPY\x01\x00\x05\x00{'de").is_err());
        assert!(SharedArray::from_npy(b"garbage").is_err());
    }
}
