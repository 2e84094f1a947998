//! `Client.open_async`: `Client.open` for asyncio. Each read returns an awaitable; one the
//! chunks held can answer is a future already done (no trip through the runtime), one that
//! needs the next chunk waits for it on the client's runtime while the event loop runs on.
//! Cancelling a read loses nothing (object_stream.rs: waits only add chunks).

use std::sync::Arc;

use bytes::Bytes;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use slipstream_client::ObjectKey;
use tokio::sync::Mutex;

use crate::aio;
use crate::client::Client;
use crate::errors::Raise;
use crate::object_stream::{size_of, ObjectBytes, ReadError};

/// An object being read from asyncio: `await r.read(n)`, `await r.readline()`, `async for
/// line in r`, `async with`.
#[pyclass(frozen, module = "slipstream")]
pub struct AsyncObjectReader {
    client: Py<Client>,
    bytes: Arc<Mutex<ObjectBytes>>,
}

/// What a read asks for.
#[derive(Clone, Copy)]
enum Want {
    /// `read(n)`: n bytes, fewer only at the end.
    Exactly(usize),
    /// `read1(n)`: what the first chunk holds, up to n.
    Some(usize),
    /// `readline(limit)`.
    Line(usize),
}

impl Want {
    /// How many bytes to take now, if what is held answers it without a wait.
    fn now(self, bytes: &mut ObjectBytes) -> Option<usize> {
        match self {
            Want::Exactly(n) => bytes.holds(n).then_some(n),
            Want::Some(n) => bytes.holds(1).then(|| n.min(bytes.first_len())),
            Want::Line(limit) => bytes.line_end(limit),
        }
    }

    /// Waits until what is held answers it; how many bytes to take then.
    async fn wait(self, bytes: &mut ObjectBytes) -> Result<usize, ReadError> {
        match self {
            Want::Exactly(n) => bytes.want(n).await.map(|()| n),
            Want::Some(n) => bytes.want(1).await.map(|()| n.min(bytes.first_len())),
            Want::Line(limit) => bytes.want_line(limit).await,
        }
    }
}

impl AsyncObjectReader {
    /// The stream, when no read is under way (a seek or `tell` in the middle of one could not
    /// say where it lands).
    fn idle(&self) -> PyResult<tokio::sync::MutexGuard<'_, ObjectBytes>> {
        self.bytes.try_lock().map_err(|_| {
            PyRuntimeError::new_err("a read of this object is under way: await it first")
        })
    }

    /// The coroutine of `Client.open_async`: the download started, and its first answer (or its
    /// end) awaited, so that a missing object raises at the `await`.
    pub(crate) fn open<'py>(
        client: &Bound<'py, Client>,
        bucket: &str,
        key: ObjectKey<'_>,
        range: Option<(u64, u64)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let this = client.get();
        let names = (bucket.to_owned(), key.to_buf(), range);
        let (s3, opts) = (Arc::clone(&this.inner), this.transfer_options(None));
        let work = async move {
            let runtime = tokio::runtime::Handle::current();
            let mut bytes = ObjectBytes::start(&runtime, &s3, names, opts);
            bytes.opened().await?;
            Ok::<_, ReadError>(bytes)
        };
        let owner = client.clone().unbind();
        let made = move |py: Python<'_>, bytes: ObjectBytes| {
            let reader = AsyncObjectReader {
                client: owner,
                bytes: Arc::new(Mutex::new(bytes)),
            };
            Ok(Py::new(py, reader)?.into_any())
        };
        aio::spawn(client.py(), &this.runtime, work, made)
    }

    /// An awaitable of `want`'s bytes (`at_end`: what the end of the object gives instead, for
    /// `__anext__`).
    fn read_as<'py>(
        &self,
        py: Python<'py>,
        want: Want,
        at_end: fn(Python<'_>, Bytes) -> aio::Outcome,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Ok(mut bytes) = self.bytes.try_lock() {
            if let Err(e) = bytes.usable() {
                return aio::ready(py, Err(e.raise()));
            }
            if let Some(n) = want.now(&mut bytes) {
                let data = bytes.take(n);
                return aio::ready(py, at_end(py, data));
            }
        }
        let bytes = Arc::clone(&self.bytes);
        let work = async move {
            let mut bytes = bytes.lock().await;
            bytes.usable()?;
            let n = want.wait(&mut bytes).await?;
            Ok::<_, ReadError>(bytes.take(n))
        };
        aio::spawn(py, &self.client.get().runtime, work, at_end)
    }
}

fn as_bytes(py: Python<'_>, data: Bytes) -> aio::Outcome {
    Ok(PyBytes::new(py, &data).into_any().unbind())
}

/// A line, or the end of `async for`.
fn as_line(py: Python<'_>, data: Bytes) -> aio::Outcome {
    if data.is_empty() {
        return aio::stop_iteration();
    }
    as_bytes(py, data)
}

#[pymethods]
impl AsyncObjectReader {
    /// Up to `size` bytes, fewer only at the end of the object; all that is left when `size`
    /// is negative or `None`.
    #[pyo3(signature = (size = -1))]
    fn read<'py>(&self, py: Python<'py>, size: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        self.read_as(py, Want::Exactly(size_of(size)), as_bytes)
    }

    /// Up to `size` bytes from the part at hand (waiting for the next only when none is).
    #[pyo3(signature = (size = -1))]
    fn read1<'py>(&self, py: Python<'py>, size: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        self.read_as(py, Want::Some(size_of(size)), as_bytes)
    }

    /// The bytes up to and including the next `\n` (or `size` bytes, or the end of the object).
    #[pyo3(signature = (size = -1))]
    fn readline<'py>(&self, py: Python<'py>, size: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        self.read_as(py, Want::Line(size_of(size)), as_bytes)
    }

    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.read_as(py, Want::Line(usize::MAX), as_line)
    }

    /// The position: bytes from the start of the object (or of the range opened).
    fn tell(&self) -> PyResult<u64> {
        Ok(self.idle()?.position())
    }

    /// Moves to `offset` from the start (`whence` 0), the position (1) or the end (2); the new
    /// position. Not awaited, as `tell` is not: it never waits (the next read fetches what it
    /// needs from there).
    #[pyo3(signature = (offset, whence = 0))]
    fn seek(&self, offset: i64, whence: i32) -> PyResult<u64> {
        self.idle()?.seek(offset, whence).map_err(Raise::raise)
    }

    /// The object's size (the range's length, for a range).
    #[getter]
    fn size(&self) -> PyResult<u64> {
        self.idle()?.size().map_err(Raise::raise)
    }

    /// Stops the download and frees what was fetched ahead (after a read under way, if one is).
    fn close(&self) {
        match self.bytes.try_lock() {
            Ok(mut bytes) => bytes.close(),
            Err(_) => {
                let bytes = Arc::clone(&self.bytes);
                drop(
                    self.client
                        .get()
                        .runtime
                        .spawn(async move { bytes.lock().await.close() }),
                );
            }
        }
    }

    fn __aenter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        aio::ready(slf.py(), Ok(slf.clone().into_any().unbind()))
    }

    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _kind: &Bound<'py, PyAny>,
        _value: &Bound<'py, PyAny>,
        _traceback: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.close();
        aio::ready(py, Ok(py.None()))
    }
}
