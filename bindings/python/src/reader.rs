//! `Client.open`: an object read as a binary stream, as boto3's `get_object()["Body"]` is read,
//! with its parts fetched in parallel ahead of the reader.
//!
//! The transfer crate's stream download writes the object in order into a channel of chunks
//! (one per part, copied once out of the part's pooled buffer); `read`, `read1` and `readline`
//! take from the chunk at hand and wait, the GIL released, for the next. Memory is the
//! download's window (`concurrency x part_size`) and [`CHUNKS_AHEAD`] chunks, whatever the size
//! of the object. A reader that stops reading stops the download once the window is full:
//! nothing is fetched for nobody, and closing (or dropping) the reader stops it at once.
//!
//! The client's stall bound applies to the reader's waits, not to the download: a program may
//! pause between reads for as long as it likes, but a read that waits on a server that moved
//! nothing for `stall_timeout` raises `TimeoutError`.

use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use pyo3::exceptions::{PyIOError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use slipstream_transfer::{download_to_writer, Downloaded, TransferError};
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::PollSender;

use crate::client::Client;

/// Chunks (parts) written ahead of the reader beyond the download's own window.
const CHUNKS_AHEAD: usize = 2;

/// The download's side of the channel: each write is one chunk.
struct Chunks(PollSender<Bytes>);

impl AsyncWrite for Chunks {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let closed =
            || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the reader was closed");
        ready!(self.0.poll_reserve(cx)).map_err(|_| closed())?;
        self.0
            .send_item(Bytes::copy_from_slice(buf))
            .map_err(|_| closed())?;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// An object being read: the native half of `slipstream.ObjectReader`.
#[pyclass(frozen, module = "slipstream", name = "_ObjectReader")]
pub struct ObjectReader {
    client: Py<Client>,
    stall_timeout: Duration,
    state: Mutex<State>,
}

/// Where the reader is in the object.
struct State {
    /// What the last chunk has left to read.
    current: Bytes,
    /// Bytes handed to Python so far.
    position: u64,
    /// Chunks still to come; `None` once the download ended (or the reader was closed).
    chunks: Option<mpsc::Receiver<Bytes>>,
    download: Option<JoinHandle<Result<Downloaded, TransferError>>>,
    /// Why the download failed: raised again by every later read.
    failed: Option<String>,
    closed: bool,
}

impl Drop for State {
    fn drop(&mut self) {
        if let Some(download) = &self.download {
            download.abort();
        }
    }
}

impl ObjectReader {
    /// Starts the download of `bucket/key` and waits for its first chunk (or its end), so that a
    /// missing object raises here, as boto3's `get_object` does.
    pub(crate) fn open(
        py: Python<'_>,
        client: &Bound<'_, Client>,
        bucket: &str,
        key: slipstream_client::ObjectKey<'_>,
    ) -> PyResult<Self> {
        let this = client.get();
        let stall_timeout = this.opts.stall_timeout;
        let mut opts = this.transfer_options(None);
        // Bounded at the reader's waits instead (the module's doc).
        opts.stall_timeout = Duration::ZERO;
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        let (s3, bucket, key) = (
            std::sync::Arc::clone(&this.inner),
            bucket.to_owned(),
            key.to_buf(),
        );
        let download = this.runtime.spawn(async move {
            let mut out = Chunks(PollSender::new(tx));
            download_to_writer(s3, &bucket, key.as_key(), &mut out, opts).await
        });
        let reader = Self {
            client: client.clone().unbind(),
            stall_timeout,
            state: Mutex::new(State {
                current: Bytes::new(),
                position: 0,
                chunks: Some(rx),
                download: Some(download),
                failed: None,
                closed: false,
            }),
        };
        {
            let mut state = reader.lock()?;
            reader.fill(py, &mut state)?;
        }
        Ok(reader)
    }

    /// The state, or an error when another thread is reading (a file object is one thread's;
    /// waiting here while holding the GIL could deadlock with that thread).
    fn lock(&self) -> PyResult<MutexGuard<'_, State>> {
        match self.state.try_lock() {
            Ok(state) => Ok(state),
            Err(TryLockError::Poisoned(e)) => Ok(e.into_inner()),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
                "another thread is reading this object: a reader is one thread's",
            )),
        }
    }

    /// Makes `state.current` non-empty unless the object has ended; raises the download's
    /// error, a stall, or what a signal handler raised while waiting.
    fn fill(&self, py: Python<'_>, state: &mut State) -> PyResult<()> {
        if state.closed {
            return Err(PyValueError::new_err("I/O operation on closed file."));
        }
        if let Some(why) = &state.failed {
            return Err(PyIOError::new_err(why.clone()));
        }
        let client = self.client.get();
        while state.current.is_empty() {
            let Some(chunks) = state.chunks.as_mut() else {
                return Ok(());
            };
            let (activity, limit) = (client.inner.activity(), self.stall_timeout);
            let next = client.wait(py, async move {
                if limit.is_zero() {
                    return Ok(chunks.recv().await);
                }
                activity
                    .until_idle(limit, chunks.recv())
                    .await
                    .ok_or(TransferError::Stalled {
                        idle: limit,
                        sending: true,
                    })
            });
            match next {
                Ok(Some(chunk)) => state.current = chunk,
                Ok(None) => {
                    state.chunks = None;
                    self.finish(py, state)?;
                }
                Err(e) => {
                    if e.is_instance_of::<pyo3::exceptions::PyTimeoutError>(py) {
                        self.fail(state, &e, py);
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// The download's outcome, once its chunks are all read: its error (a checksum that did
    /// not match, a part that failed) is the reader's.
    fn finish(&self, py: Python<'_>, state: &mut State) -> PyResult<()> {
        let Some(download) = state.download.take() else {
            return Ok(());
        };
        let client = self.client.get();
        let ended = client.wait(py, async move {
            download.await.unwrap_or_else(|e| Err(e.into()))
        });
        ended.map(drop).inspect_err(|e| self.fail(state, e, py))
    }

    /// Stops the download and keeps `e` for the reads to come.
    fn fail(&self, state: &mut State, e: &PyErr, py: Python<'_>) {
        state.failed = Some(e.value(py).to_string());
        state.chunks = None;
        if let Some(download) = state.download.take() {
            download.abort();
        }
    }

    /// Up to `size` bytes (all that is left when `None`), from as many chunks as it takes.
    fn take(&self, py: Python<'_>, size: Option<usize>) -> PyResult<Py<PyBytes>> {
        let mut state = self.lock()?;
        self.fill(py, &mut state)?;
        let wanted = size.unwrap_or(usize::MAX);
        if state.current.len() >= wanted || state.chunks.is_none() {
            // The common case: one copy, out of the chunk at hand.
            let n = wanted.min(state.current.len());
            return Ok(self.hand_out(py, &mut state, n));
        }
        let mut out = Vec::with_capacity(size.unwrap_or(state.current.len()));
        while out.len() < wanted {
            self.fill(py, &mut state)?;
            if state.current.is_empty() {
                break;
            }
            let n = (wanted - out.len()).min(state.current.len());
            out.extend_from_slice(&state.current.split_to(n));
            state.position += n as u64;
        }
        Ok(PyBytes::new(py, &out).unbind())
    }

    /// The first `n` bytes of the chunk at hand, as `bytes`.
    fn hand_out(&self, py: Python<'_>, state: &mut State, n: usize) -> Py<PyBytes> {
        let out = PyBytes::new(py, &state.current[..n]).unbind();
        let _ = state.current.split_to(n);
        state.position += n as u64;
        out
    }
}

/// A size argument as Python's file objects take it: negative or `None` for "all".
fn size_of(size: Option<i64>) -> Option<usize> {
    size.and_then(|s| usize::try_from(s).ok())
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
        let mut state = self.lock()?;
        self.fill(py, &mut state)?;
        let n = size_of(size).unwrap_or(usize::MAX).min(state.current.len());
        Ok(self.hand_out(py, &mut state, n))
    }

    /// The bytes up to and including the next `\n` (or `size` bytes, or the end of the object).
    #[pyo3(signature = (size = -1))]
    fn readline(&self, py: Python<'_>, size: Option<i64>) -> PyResult<Py<PyBytes>> {
        let limit = size_of(size).unwrap_or(usize::MAX);
        let mut state = self.lock()?;
        self.fill(py, &mut state)?;
        if let Some(i) = state.current.iter().take(limit).position(|&b| b == b'\n') {
            return Ok(self.hand_out(py, &mut state, i + 1));
        }
        // The line goes on into the next part (or is longer than `limit`).
        let mut line = Vec::new();
        while line.len() < limit {
            self.fill(py, &mut state)?;
            if state.current.is_empty() {
                break;
            }
            let room = (limit - line.len()).min(state.current.len());
            let end = match state.current[..room].iter().position(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => room,
            };
            line.extend_from_slice(&state.current.split_to(end));
            state.position += end as u64;
            if line.last() == Some(&b'\n') {
                break;
            }
        }
        Ok(PyBytes::new(py, &line).unbind())
    }

    /// Bytes read so far.
    fn tell(&self) -> PyResult<u64> {
        Ok(self.lock()?.position)
    }

    /// Stops the download (parts in flight are dropped) and frees what was fetched ahead.
    fn close(&self) -> PyResult<()> {
        let mut state = self.lock()?;
        state.closed = true;
        state.current = Bytes::new();
        state.chunks = None;
        if let Some(download) = state.download.take() {
            download.abort();
        }
        Ok(())
    }
}
