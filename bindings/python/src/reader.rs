//! `Client.open`: an object read as a binary stream, as boto3's `get_object()["Body"]` is read,
//! with its parts fetched in parallel ahead of the reader (object_stream.rs).
//!
//! A read that the chunks held can answer is answered at once, with the GIL held (a line is
//! one native call); one that needs the next chunk waits for it with the GIL released, in the
//! client's steps that let Python's signal handlers run.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use slipstream_client::ObjectKey;

use crate::client::Client;
use crate::errors::Raise;
use crate::object_stream::{size_of, ObjectBytes};
use crate::one_thread::one_thread;

/// An object being read: the native half of `slipstream.ObjectReader`.
#[pyclass(frozen, module = "slipstream", name = "_ObjectReader")]
pub struct ObjectReader {
    client: Py<Client>,
    bytes: Mutex<ObjectBytes>,
}

impl ObjectReader {
    /// Starts the download of `bucket/key` and waits for its first answer (or its end), so that a
    /// missing object raises here, as boto3's `get_object` does.
    pub(crate) fn open(
        py: Python<'_>,
        client: &Bound<'_, Client>,
        bucket: &str,
        key: ObjectKey<'_>,
        range: Option<(u64, u64)>,
    ) -> PyResult<Self> {
        let this = client.get();
        let names = (bucket.to_owned(), key.to_buf(), range);
        let bytes = ObjectBytes::start(
            this.runtime.handle(),
            &this.inner,
            names,
            this.transfer_options(None),
        );
        let reader = Self {
            client: client.clone().unbind(),
            bytes: Mutex::new(bytes),
        };
        {
            let mut bytes = reader.lock()?;
            this.wait(py, bytes.opened())?;
        }
        Ok(reader)
    }

    /// The stream, ready to read (not closed, not failed); an error when another thread is
    /// reading (a file object is one thread's; waiting here while holding the GIL could
    /// deadlock with that thread).
    fn lock(&self) -> PyResult<MutexGuard<'_, ObjectBytes>> {
        let bytes = one_thread(
            &self.bytes,
            "another thread is reading this object: a reader is one thread's",
        )?;
        bytes.usable().map_err(Raise::raise)?;
        Ok(bytes)
    }

    /// The first `n` bytes, once held.
    fn take(&self, py: Python<'_>, n: usize) -> PyResult<Py<PyBytes>> {
        let mut bytes = self.lock()?;
        if !bytes.holds(n) {
            self.client.get().wait(py, bytes.want(n))?;
        }
        Ok(PyBytes::new(py, &bytes.take(n)).unbind())
    }
}

#[pymethods]
impl ObjectReader {
    /// Up to `size` bytes, fewer only at the end of the object; all that is left when `size`
    /// is negative or `None`.
    #[pyo3(signature = (size = -1))]
    fn read(&self, py: Python<'_>, size: Option<i64>) -> PyResult<Py<PyBytes>> {
        self.take(py, size_of(size))
    }

    /// Up to `size` bytes from the part at hand (waiting for the next part only when none is):
    /// what `io.TextIOWrapper` and copy loops read with.
    #[pyo3(signature = (size = -1))]
    fn read1(&self, py: Python<'_>, size: Option<i64>) -> PyResult<Py<PyBytes>> {
        let mut bytes = self.lock()?;
        if !bytes.holds(1) {
            self.client.get().wait(py, bytes.want(1))?;
        }
        let n = size_of(size).min(bytes.first_len());
        Ok(PyBytes::new(py, &bytes.take(n)).unbind())
    }

    /// The bytes up to and including the next `\n` (or `size` bytes, or the end of the object).
    #[pyo3(signature = (size = -1))]
    fn readline(&self, py: Python<'_>, size: Option<i64>) -> PyResult<Py<PyBytes>> {
        let limit = size_of(size);
        let mut bytes = self.lock()?;
        let end = match bytes.line_end(limit) {
            Some(end) => end,
            None => self.client.get().wait(py, bytes.want_line(limit))?,
        };
        Ok(PyBytes::new(py, &bytes.take(end)).unbind())
    }

    /// The position: bytes from the start of the object (or of the range opened).
    fn tell(&self) -> PyResult<u64> {
        Ok(self.lock()?.position())
    }

    /// Moves to `offset` from the start (`whence` 0), the position (1) or the end (2); the new
    /// position. Never waits: the next read fetches what it needs from there.
    #[pyo3(signature = (offset, whence = 0))]
    fn seek(&self, offset: i64, whence: i32) -> PyResult<u64> {
        self.lock()?.seek(offset, whence).map_err(Raise::raise)
    }

    /// The object's size (the range's length, for a range).
    #[getter]
    fn size(&self) -> PyResult<u64> {
        self.lock()?.size().map_err(Raise::raise)
    }

    /// Stops the download (parts in flight are dropped) and frees what was fetched ahead.
    fn close(&self) -> PyResult<()> {
        let busy = "another thread is reading this object: close it from that thread";
        one_thread(&self.bytes, busy)?.close();
        Ok(())
    }
}
