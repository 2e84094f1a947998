//! An object's bytes as a stream download delivers them: what `Client.open` and
//! `Client.open_async` read from (reader.rs, async_reader.rs).
//!
//! The transfer crate's stream download writes the object in order into a channel of chunks
//! (one per part, copied once out of the part's pooled buffer). Memory is the download's window
//! (`concurrency x part_size`) and [`CHUNKS_AHEAD`] chunks, whatever the size of the object: a
//! reader that stops reading stops the download once the window is full, and closing (or
//! dropping) the stream stops it at once.
//!
//! Waiting only ever adds received chunks to the stream (`want`, `want_line`); reads then take
//! from what is held without waiting (`take`). So a wait that is cancelled (an asyncio task, a
//! Ctrl-C) loses nothing: the next read finds the chunks it had received.
//!
//! The client's stall bound applies to the waits, not to the download: a program may pause
//! between reads as long as it likes, but a wait on a server that moved nothing for
//! `stall_timeout` fails with `TimeoutError`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use pyo3::exceptions::{PyIOError, PyValueError};
use pyo3::PyErr;
use slipstream_client::{Activity, ObjectKeyBuf, S3Client};
use slipstream_transfer::{
    download_range_to_writer, download_to_writer, Downloaded, TransferError, TransferOptions,
};
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::PollSender;

use crate::errors::Raise;

/// Chunks (parts) written ahead of the reader beyond the download's own window.
const CHUNKS_AHEAD: usize = 2;

/// Why a read fails.
pub(crate) enum ReadError {
    Closed,
    /// The download failed before: its message, raised again by every later read rather than
    /// an end that would look complete.
    Failed(String),
    Transfer(TransferError),
}

impl Raise for ReadError {
    fn raise(self) -> PyErr {
        match self {
            ReadError::Closed => PyValueError::new_err("I/O operation on closed file."),
            ReadError::Failed(why) => PyIOError::new_err(why),
            ReadError::Transfer(e) => e.raise(),
        }
    }
}

/// A size argument as Python's file objects take it: negative or `None` for "all".
pub(crate) fn size_of(size: Option<i64>) -> usize {
    size.and_then(|s| usize::try_from(s).ok())
        .unwrap_or(usize::MAX)
}

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

/// An object being read.
pub(crate) struct ObjectBytes {
    /// Received and not yet read, in order.
    held: VecDeque<Bytes>,
    held_len: usize,
    /// How far into `held` a search for a newline has looked (`want_line`).
    scanned: usize,
    /// Bytes read so far.
    position: u64,
    /// Chunks still to come; `None` once the download ended (or the stream was closed).
    chunks: Option<mpsc::Receiver<Bytes>>,
    download: Option<JoinHandle<Result<Downloaded, TransferError>>>,
    failed: Option<String>,
    closed: bool,
    activity: Arc<Activity>,
    stall_timeout: Duration,
}

impl Drop for ObjectBytes {
    fn drop(&mut self) {
        if let Some(download) = &self.download {
            download.abort();
        }
    }
}

impl ObjectBytes {
    /// Starts the download of `bucket/key` (or of `range` of it, start and end exclusive) on
    /// `runtime`. `opts.stall_timeout` bounds the waits (the module's doc), not the download.
    pub(crate) fn start(
        runtime: &tokio::runtime::Handle,
        s3: &Arc<S3Client>,
        (bucket, key, range): (String, ObjectKeyBuf, Option<(u64, u64)>),
        mut opts: TransferOptions,
    ) -> Self {
        let stall_timeout = std::mem::replace(&mut opts.stall_timeout, Duration::ZERO);
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        let client = Arc::clone(s3);
        let download = runtime.spawn(async move {
            let mut out = Chunks(PollSender::new(tx));
            let key = key.as_key();
            match range {
                None => download_to_writer(client, &bucket, key, &mut out, opts).await,
                Some(r) => download_range_to_writer(client, &bucket, key, r, &mut out, opts).await,
            }
        });
        Self {
            held: VecDeque::new(),
            held_len: 0,
            scanned: 0,
            position: 0,
            chunks: Some(rx),
            download: Some(download),
            failed: None,
            closed: false,
            activity: Arc::clone(s3.activity()),
            stall_timeout,
        }
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    /// Whether `take(n)` has all it needs without a wait.
    pub(crate) fn holds(&self, n: usize) -> bool {
        self.held_len >= n || self.chunks.is_none()
    }

    /// Where the first line held ends (after its `\n`, at most `limit` bytes in), if it is
    /// held whole; the end of what is held if the object has ended.
    pub(crate) fn line_end(&mut self, limit: usize) -> Option<usize> {
        if limit == 0 {
            return Some(0);
        }
        let mut offset = 0;
        for chunk in &self.held {
            let end = offset + chunk.len();
            if end > self.scanned {
                let from = self.scanned.saturating_sub(offset);
                if let Some(i) = chunk[from..].iter().position(|&b| b == b'\n') {
                    return Some((offset + from + i + 1).min(limit));
                }
                self.scanned = end;
            }
            if end >= limit {
                return Some(limit);
            }
            offset = end;
        }
        self.chunks.is_none().then_some(self.held_len.min(limit))
    }

    /// Receives chunks until `n` bytes are held or the object has ended.
    pub(crate) async fn want(&mut self, n: usize) -> Result<(), ReadError> {
        self.usable()?;
        while !self.holds(n) {
            self.receive().await?;
        }
        Ok(())
    }

    /// Receives chunks until a whole line (or `limit` bytes) is held or the object has ended;
    /// returns the line's length.
    pub(crate) async fn want_line(&mut self, limit: usize) -> Result<usize, ReadError> {
        self.usable()?;
        loop {
            if let Some(end) = self.line_end(limit) {
                return Ok(end);
            }
            self.receive().await?;
        }
    }

    /// Takes the first `n` bytes held (fewer at the end of the object): a slice of one chunk
    /// when they lie in one, no copy.
    pub(crate) fn take(&mut self, n: usize) -> Bytes {
        let n = n.min(self.held_len);
        self.held_len -= n;
        self.scanned = self.scanned.saturating_sub(n);
        self.position += n as u64;
        match self.held.front_mut() {
            Some(first) if first.len() > n => first.split_to(n),
            Some(first) if first.len() == n => self.held.pop_front().unwrap_or_default(),
            _ => {
                let mut out = BytesMut::with_capacity(n);
                while out.len() < n {
                    let Some(mut chunk) = self.held.pop_front() else {
                        break;
                    };
                    let part = (n - out.len()).min(chunk.len());
                    out.extend_from_slice(&chunk.split_to(part));
                    if !chunk.is_empty() {
                        self.held.push_front(chunk);
                    }
                }
                out.freeze()
            }
        }
    }

    /// The length of the first chunk held (what `read1` returns at most).
    pub(crate) fn first_len(&self) -> usize {
        self.held.front().map_or(0, Bytes::len)
    }

    /// Stops the download and drops what was held.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.held.clear();
        self.held_len = 0;
        self.chunks = None;
        if let Some(download) = self.download.take() {
            download.abort();
        }
    }

    /// An error when the stream was closed, or failed before (then again, not an end that
    /// would look complete).
    pub(crate) fn usable(&self) -> Result<(), ReadError> {
        if self.closed {
            return Err(ReadError::Closed);
        }
        match &self.failed {
            Some(why) => Err(ReadError::Failed(why.clone())),
            None => Ok(()),
        }
    }

    /// Waits for the next chunk (bounded by the stall timeout), or for the download's end once
    /// its chunks are all here: its error (a part that failed for good, a checksum that did not
    /// match) is the stream's.
    async fn receive(&mut self) -> Result<(), ReadError> {
        let Some(chunks) = self.chunks.as_mut() else {
            return Ok(());
        };
        let limit = self.stall_timeout;
        let next = if limit.is_zero() {
            Some(chunks.recv().await)
        } else {
            self.activity.until_idle(limit, chunks.recv()).await
        };
        let outcome = match next {
            Some(Some(chunk)) => {
                self.held_len += chunk.len();
                self.held.push_back(chunk);
                return Ok(());
            }
            None => Err(TransferError::Stalled {
                idle: limit,
                sending: true,
            }),
            Some(None) => match self.download.as_mut() {
                Some(download) => download.await.unwrap_or_else(|e| Err(e.into())).map(drop),
                None => Ok(()),
            },
        };
        self.chunks = None;
        if let Some(download) = self.download.take() {
            // Ended already, or stalled: stopped either way.
            download.abort();
        }
        outcome.map_err(|e| {
            self.failed = Some(e.to_string());
            ReadError::Transfer(e)
        })
    }
}
