//! `Client.open(bucket, key, "wb")`: an object written as a binary stream (`csv.writer`,
//! `gzip.GzipFile(fileobj=)`, `write` calls), uploaded as it is written.
//!
//! Writes gather into chunks of [`CHUNK`] bytes, which go through a bounded channel to the
//! transfer crate's stream upload (a single `PutObject` when the object ends within the first
//! part, else a multipart upload sending parts while the next is written). Memory is the
//! upload's window and a few chunks; a write waits (the GIL released) when the upload is behind.
//!
//! Only `close` (or a `with` block that ends without an exception) completes the object. A
//! writer abandoned otherwise (an exception in the block, `abort`, or dropped unclosed) ends its
//! stream with an error, so the upload is aborted and no object appears: nothing half-written
//! is ever left looking complete.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use pyo3::exceptions::{PyIOError, PyValueError};
use pyo3::prelude::*;
use slipstream_client::Activity;
use slipstream_transfer::{upload_from_reader, TransferError, Uploaded};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::client::Client;
use crate::one_thread::one_thread;

/// What a chunk gathers before it goes to the upload.
const CHUNK: usize = 1 << 20;
/// Chunks written ahead of the upload.
const CHUNKS_AHEAD: usize = 4;

/// The upload's side of the channel. Its end is the object's end only once the writer said so
/// (`finished`); a writer dropped without that is an error, which aborts the upload.
struct Incoming {
    chunks: mpsc::Receiver<Bytes>,
    current: Bytes,
    finished: Arc<AtomicBool>,
}

impl AsyncRead for Incoming {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        while self.current.is_empty() {
            match ready!(self.chunks.poll_recv(cx)) {
                Some(chunk) => self.current = chunk,
                None if self.finished.load(Ordering::Acquire) => return Poll::Ready(Ok(())),
                None => {
                    return Poll::Ready(Err(std::io::Error::other(
                        "the writer was abandoned before close: the upload is aborted",
                    )))
                }
            }
        }
        let n = buf.remaining().min(self.current.len());
        let part = self.current.split_to(n);
        buf.put_slice(&part);
        Poll::Ready(Ok(()))
    }
}

/// The upload's task, stopped if its waiter goes away first (dropping the upload aborts it).
struct StopOnDrop(JoinHandle<Result<Uploaded, TransferError>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An object being written: the native half of `slipstream.ObjectWriter`.
#[pyclass(frozen, module = "slipstream", name = "_ObjectWriter")]
pub struct ObjectWriter {
    client: Py<Client>,
    state: Mutex<State>,
}

/// A writer dropped unclosed drops `chunks` without `finished`: the upload aborts itself.
struct State {
    pending: BytesMut,
    chunks: Option<mpsc::Sender<Bytes>>,
    upload: Option<JoinHandle<Result<Uploaded, TransferError>>>,
    finished: Arc<AtomicBool>,
    written: u64,
    closed: bool,
    failed: Option<String>,
    activity: Arc<Activity>,
    stall_timeout: Duration,
}

impl ObjectWriter {
    /// Starts the upload of `bucket/key`; its bytes come from the writes.
    pub(crate) fn open(
        client: &Bound<'_, Client>,
        (bucket, key): (&str, &str),
        checksum_algorithm: Option<&str>,
        headers: slipstream_transfer::ObjectHeaders,
    ) -> PyResult<Self> {
        let this = client.get();
        let mut opts = this.upload_options(checksum_algorithm, headers, None)?;
        // Bounded at the writes' waits instead: a program may pause between writes.
        let stall_timeout = std::mem::replace(&mut opts.stall_timeout, Duration::ZERO);
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        let finished = Arc::new(AtomicBool::new(false));
        let mut incoming = Incoming {
            chunks: rx,
            current: Bytes::new(),
            finished: Arc::clone(&finished),
        };
        let (s3, bucket, key) = (Arc::clone(&this.inner), bucket.to_owned(), key.to_owned());
        let upload = this
            .runtime
            .spawn(async move { upload_from_reader(s3, &mut incoming, &bucket, &key, opts).await });
        Ok(Self {
            client: client.clone().unbind(),
            state: Mutex::new(State {
                pending: BytesMut::new(),
                chunks: Some(tx),
                upload: Some(upload),
                finished,
                written: 0,
                closed: false,
                failed: None,
                activity: Arc::clone(this.inner.activity()),
                stall_timeout,
            }),
        })
    }

    /// The state, ready to write (not closed, not failed); an error when another thread is
    /// writing (waiting here while holding the GIL could deadlock with that thread).
    fn lock(&self) -> PyResult<MutexGuard<'_, State>> {
        let state = one_thread(
            &self.state,
            "another thread is writing this object: a writer is one thread's",
        )?;
        if state.closed {
            return Err(PyValueError::new_err("I/O operation on closed file."));
        }
        if let Some(why) = &state.failed {
            return Err(PyIOError::new_err(why.clone()));
        }
        Ok(state)
    }

    /// Hands the gathered bytes to the upload, waiting (the GIL released) while it is behind.
    fn send(&self, py: Python<'_>, state: &mut State) -> PyResult<()> {
        if state.pending.is_empty() {
            return Ok(());
        }
        let chunk = state.pending.split().freeze();
        let Some(tx) = state.chunks.clone() else {
            return Ok(());
        };
        let chunk = match tx.try_send(chunk) {
            Ok(()) => return Ok(()),
            Err(mpsc::error::TrySendError::Full(chunk)) => chunk,
            // The upload ended early: its error is the writer's.
            Err(mpsc::error::TrySendError::Closed(_)) => return self.ended(py, state),
        };
        let (activity, limit) = (Arc::clone(&state.activity), state.stall_timeout);
        let sent = self.client.get().wait(py, async move {
            let send = tx.send(chunk);
            let sent = if limit.is_zero() {
                Some(send.await)
            } else {
                activity.until_idle(limit, send).await
            };
            match sent {
                Some(r) => Ok(r.is_ok()),
                None => Err(TransferError::Stalled {
                    idle: limit,
                    sending: false,
                }),
            }
        });
        match sent {
            Ok(true) => Ok(()),
            Ok(false) => self.ended(py, state),
            Err(e) => {
                self.fail(py, state, &e);
                Err(e)
            }
        }
    }

    /// The upload's end, waited for (under the stall bound): its error, or (having ended
    /// without being told to) one saying so. A wait given up (a stall, Ctrl-C) stops the
    /// upload, which aborts it: no object.
    fn ended(&self, py: Python<'_>, state: &mut State) -> PyResult<()> {
        let Some(upload) = state.upload.take() else {
            return Ok(());
        };
        let (activity, limit) = (Arc::clone(&state.activity), state.stall_timeout);
        let done = self.client.get().wait(py, async move {
            let mut upload = StopOnDrop(upload);
            let joined = if limit.is_zero() {
                Some((&mut upload.0).await)
            } else {
                activity.until_idle(limit, &mut upload.0).await
            };
            match joined {
                Some(outcome) => outcome.unwrap_or_else(|e| Err(e.into())),
                None => Err(TransferError::Stalled {
                    idle: limit,
                    sending: false,
                }),
            }
        });
        match done {
            Ok(_) if state.finished.load(Ordering::Acquire) => Ok(()),
            Ok(_) => Err(PyIOError::new_err(
                "the upload ended before the writer was closed",
            )),
            Err(e) => {
                self.fail(py, state, &e);
                Err(e)
            }
        }
    }

    /// Abandons the upload (aborted, no object) and keeps `e` for later calls.
    fn fail(&self, py: Python<'_>, state: &mut State, e: &PyErr) {
        state.failed = Some(e.value(py).to_string());
        state.chunks = None;
    }
}

#[pymethods]
impl ObjectWriter {
    /// Appends `data` (any bytes-like object); returns its length.
    /// A large write goes a chunk at a time, so memory stays bounded whatever its size.
    fn write(&self, py: Python<'_>, data: &[u8]) -> PyResult<usize> {
        let mut state = self.lock()?;
        let mut rest = data;
        while !rest.is_empty() {
            let room = CHUNK - state.pending.len().min(CHUNK);
            let (now, later) = rest.split_at(room.min(rest.len()));
            state.pending.extend_from_slice(now);
            state.written += now.len() as u64;
            rest = later;
            if state.pending.len() >= CHUNK {
                self.send(py, &mut state)?;
            }
        }
        Ok(data.len())
    }

    /// Bytes written so far.
    fn tell(&self) -> PyResult<u64> {
        Ok(self.lock()?.written)
    }

    /// Completes the object: the last bytes sent, the upload waited for. Raises its error (and
    /// then no object was made).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut state = match self.lock() {
            Ok(state) => state,
            // Closing twice does nothing, as with a file.
            Err(_) if self.state.try_lock().is_ok_and(|s| s.closed) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.send(py, &mut state)?;
        state.finished.store(true, Ordering::Release);
        state.chunks = None;
        state.closed = true;
        self.ended(py, &mut state)
    }

    /// Abandons the object: the upload is aborted and nothing is made (what leaving a `with`
    /// block by an exception does).
    fn abort(&self) {
        // Another thread writing: its write fails or its close completes; nothing to abort here.
        let Ok(mut state) = one_thread(&self.state, "") else {
            return;
        };
        state.closed = true;
        state.pending.clear();
        // Without `finished`, the closed channel is an error to the upload, which aborts.
        state.chunks = None;
    }
}
