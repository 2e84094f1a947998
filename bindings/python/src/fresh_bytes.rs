//! A `bytes` object filled in place by a download, without being zero-filled first.
//!
//! PyO3's `PyBytes::new_with` allocates the object and writes zeros over all of it before the
//! download may write the object's bytes there: for 1 GiB that is a quarter of a million page
//! faults and a memset on one thread with the GIL held, before the first part is copied.
//! `bytes(n)` called from Python asks the allocator for zeroed memory (`calloc`), which for a
//! large object is fresh pages the kernel zeroes when each is first written: the pages are
//! then first touched by the parts as they are copied in, with the GIL released, while later
//! parts are still on the wire (docs/BENCHMARKS.md, "Python `get_bytes` without the zero-fill").
//!
//! Huge pages (`MADV_HUGEPAGE`, as arrow_ffi.rs asks for its URL buffers) were tried on this
//! buffer and left out: calls of 1 GiB took 0.43 s to 2.5 s, by how much memory the kernel had
//! to compact first, where 4 KiB pages took 0.65-0.70 s every time.
//!
//! Writing into a `bytes` object is what CPython's own C code does with one it has just made
//! and not yet handed out (`PyBytes_FromStringAndSize(NULL, n)` then filling it). This is the
//! second module of the package allowed `unsafe` (the other is arrow_ffi.rs), for that alone.
#![allow(unsafe_code)]

use std::ptr::NonNull;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::{ffi, PyTypeInfo};

/// A `bytes` object that Python has not seen yet, and its buffer, to be filled before
/// [`FreshBytes::into_bytes`] hands it out. Dropped unfilled (a failed download), the object
/// is freed and no one has read it.
pub(crate) struct FreshBytes {
    object: Py<PyBytes>,
    start: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer belongs to `object`, to which this handle holds the only reference
// (checked in `new`); moving the handle to another thread moves the only access to both.
// `Py<T>` is `Send` itself.
unsafe impl Send for FreshBytes {}

impl FreshBytes {
    /// A new `bytes` of `size` zero bytes (the kernel's zero pages until written, for a large
    /// one), not shared with anything.
    pub(crate) fn new(py: Python<'_>, size: usize) -> PyResult<Self> {
        let mut object = PyBytes::type_object(py)
            .call1((size,))?
            .cast_into::<PyBytes>()?;
        // SAFETY: reads the header of a live object. A count of one says this is the only
        // reference: not an object CPython caches and hands out again (`b""` is one).
        if size == 0 || unsafe { ffi::Py_REFCNT(object.as_ptr()) } != 1 {
            // Made by `PyBytes_FromStringAndSize(NULL, n)`: a new object for any n > 0.
            object = PyBytes::new_with(py, size, |_| Ok(()))?;
        }
        // SAFETY: `PyBytes_AsString` of a `bytes` cannot fail and returns its buffer of
        // `ob_size` (= `size`) bytes plus a NUL, never NULL; the buffer lives as long as
        // the object, which `FreshBytes` keeps.
        let start = unsafe { ffi::PyBytes_AsString(object.as_ptr()) }.cast::<u8>();
        let start = NonNull::new(start)
            .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("bytes without a buffer"))?;
        Ok(Self {
            object: object.unbind(),
            start,
            len: size,
        })
    }

    /// The object's bytes, to be written. They start as zeros.
    pub(crate) fn buffer(&mut self) -> &mut [u8] {
        if self.len == 0 {
            // `b""` may be CPython's shared empty object: nothing of it is handed out.
            return &mut [];
        }
        // SAFETY: `len` initialised bytes at `start` (zeroed by `bytes(n)` or `new_with`),
        // owned by `object`, which lives as long as `self`; no Python code can reach the
        // object until `into_bytes` (its hash is not computed yet, so writing leaves no
        // stale hash), and `&mut self` makes this borrow the only one.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }

    /// The filled object, now Python's.
    pub(crate) fn into_bytes(self, py: Python<'_>) -> Bound<'_, PyBytes> {
        self.object.into_bound(py)
    }
}
