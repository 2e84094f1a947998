//! An object's bytes as a stream download delivers them: what `Client.open` and
//! `Client.open_async` read from (reader.rs, async_reader.rs).
//!
//! The transfer crate's stream download writes the object in order into a channel of chunks
//! (one per part, copied once out of the part's pooled buffer). Memory is the download's window
//! (`concurrency x part_size`) and [`CHUNKS_AHEAD`] chunks, whatever the size of the object: a
//! reader that stops reading stops the download once the window is full, and closing (or
//! dropping) the stream stops it at once.
//!
//! Opening waits for the first answer's headers (size, ETag) only, and the first download asks
//! for its parts after the first only at the first wait for chunks: a reader whose first move
//! is a seek to the end (Parquet's footer, a ZIP's directory) costs one request.
//!
//! Seeking: a seek within what is held (ahead, or the last MiB read: held.rs) moves at once; a
//! seek forward through chunks already here, or less than [`WINDOW`] past them, reads on; any
//! other seek stops the download, and the next read starts one from there, pinned to the
//! object's ETag (an object replaced since the open is an error, not bytes of two versions).
//! That download is the read's size (at least [`WINDOW`]): up to a part, one GET handed on as
//! it arrives (left to finish, its bytes dropped, if the reader seeks away with at most
//! [`WINDOW`] to come, which keeps its connection warm); more, parallel parts. A read that runs
//! past it starts one to the end in parallel parts: random reads cost a request each, in-order
//! reads after a seek fill the link again.
//!
//! Waiting only ever adds received chunks to the stream (`want`, `want_line`); reads then take
//! from what is held without waiting (`take`). So a wait that is cancelled (an asyncio task, a
//! Ctrl-C) loses nothing: the next read finds the chunks it had received.
//!
//! The client's stall bound applies to the waits, not to the download: a program may pause
//! between reads as long as it likes, but a wait on a server that moved nothing for
//! `stall_timeout` fails with `TimeoutError`.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use pyo3::exceptions::{PyIOError, PyValueError};
use pyo3::PyErr;
use slipstream_client::{Activity, ObjectInfo, ObjectKeyBuf, S3Client};
use slipstream_transfer::{
    download_stream_to_writer, Downloaded, StreamOf, StreamSignals, TransferError, TransferOptions,
};
use tokio::io::AsyncWrite;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::PollSender;

use crate::errors::Raise;
use crate::held::Held;

/// Chunks (parts) written ahead of the reader beyond the download's own window.
const CHUNKS_AHEAD: usize = 2;

/// The least a download started by a read after a seek fetches: one request's worth on any
/// link (obstore's reader fetches 1 MiB a time too), so small random reads do not each cost a
/// round trip, nor a window of parts read for nothing.
pub(crate) const WINDOW: u64 = 1 << 20;

/// Why a read fails.
pub(crate) enum ReadError {
    Closed,
    /// A seek the caller got wrong (a negative position, an unknown `whence`).
    Invalid(String),
    /// The download failed before: its message, raised again by every later read rather than
    /// an end that would look complete.
    Failed(String),
    Transfer(TransferError),
}

impl Raise for ReadError {
    fn raise(self) -> PyErr {
        match self {
            ReadError::Closed => PyValueError::new_err("I/O operation on closed file."),
            ReadError::Invalid(why) => PyValueError::new_err(why),
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

/// The download's side of the channel: each write is one chunk. `drains`: once the reader has
/// gone, writes are dropped rather than failed, so a short download left to finish reads its
/// body to the end and its connection goes back to the pool (`Download::drain`).
struct Chunks(PollSender<Bytes>, bool);

impl AsyncWrite for Chunks {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let closed =
            || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the reader was closed");
        let sent = match ready!(self.0.poll_reserve(cx)) {
            Ok(()) => self.0.send_item(Bytes::copy_from_slice(buf)),
            Err(e) => Err(e),
        };
        match sent {
            Err(_) if !self.1 => Err(closed()),
            _ => Ok(buf.len()),
        }
        .into()
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Where the object's bytes come from: what a seek starts downloads again with.
struct Origin {
    runtime: tokio::runtime::Handle,
    client: Arc<S3Client>,
    bucket: String,
    key: ObjectKeyBuf,
    /// Where the reader's byte 0 is in the object (a range's start).
    base: u64,
    opts: TransferOptions,
}

/// A download under way, its chunks coming in order up to `end` (in the reader's offsets).
struct Download {
    chunks: mpsc::Receiver<Bytes>,
    task: JoinHandle<Result<Downloaded, TransferError>>,
    end: u64,
    /// One GET handed on as it arrives (`Origin::from`): it may be left to finish.
    short: bool,
    /// Left to finish when dropped, its bytes dropped (`ObjectBytes::settle`).
    drain: bool,
}

impl Drop for Download {
    fn drop(&mut self) {
        if !self.drain {
            self.task.abort();
        }
    }
}

/// An object being read.
pub(crate) struct ObjectBytes {
    held: Held,
    /// The reader's offset of the first byte held ahead.
    held_at: u64,
    /// The reader's position: `held_at` but after a seek out of reach, until the next read.
    position: u64,
    /// `None` once the download ended (or was stopped, or the stream was closed).
    download: Option<Download>,
    /// What the first download says of the object before its first chunk (`opened`).
    seen: Option<oneshot::Receiver<ObjectInfo>>,
    /// Lets the first download ask for its other parts: sent by the first wait for chunks, so a
    /// reader whose first move is a far seek never has them fetched.
    go: Option<oneshot::Sender<()>>,
    /// The bytes there are to read (the object's, or its range's), once known.
    len: Option<u64>,
    /// The object's ETag, once known: downloads after a seek are pinned to it.
    etag: Option<String>,
    failed: Option<String>,
    closed: bool,
    origin: Origin,
    activity: Arc<Activity>,
    stall_timeout: Duration,
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
        let (seen_tx, seen) = oneshot::channel();
        let (go, go_rx) = oneshot::channel();
        let mut bytes = Self {
            held: Held::default(),
            held_at: 0,
            position: 0,
            download: None,
            seen: Some(seen),
            go: Some(go),
            len: None,
            etag: None,
            failed: None,
            closed: false,
            origin: Origin {
                runtime: runtime.clone(),
                client: Arc::clone(s3),
                bucket,
                key,
                base: range.map_or(0, |r| r.0),
                opts,
            },
            activity: Arc::clone(s3.activity()),
            stall_timeout,
        };
        let what = range.map(|(start, end)| (0, end.saturating_sub(start)));
        let signals = StreamSignals {
            seen: Some(seen_tx),
            go: Some(go_rx),
        };
        bytes.download = Some(bytes.origin.first(what, signals));
        bytes
    }

    /// Waits for the first answer's word on the object (its size and ETag, before its body),
    /// so that a missing object raises at the open without the first part's bytes awaited.
    pub(crate) async fn opened(&mut self) -> Result<(), ReadError> {
        let Some(seen) = self.seen.take() else {
            return Ok(());
        };
        let limit = self.stall_timeout;
        let said = if limit.is_zero() {
            Some(seen.await)
        } else {
            self.activity.until_idle(limit, seen).await
        };
        match said {
            Some(Ok(info)) => {
                self.len = Some(info.size);
                self.etag = Some(info.etag);
                Ok(())
            }
            // The download ended without a word: its error, once its chunks are all in.
            Some(Err(_)) => loop {
                self.receive().await?;
                if self.download.is_none() {
                    let why = "the download ended before the object's first answer";
                    return Err(ReadError::Failed(why.into()));
                }
            },
            None => {
                self.download = None;
                let e = TransferError::Stalled {
                    idle: limit,
                    sending: true,
                };
                self.failed = Some(e.to_string());
                Err(ReadError::Transfer(e))
            }
        }
    }

    /// The reader's position.
    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    /// The bytes there are to read (the object's, or its range's): known once open, which waits
    /// for the first answer.
    pub(crate) fn size(&self) -> Result<u64, ReadError> {
        let unknown = || ReadError::Failed("the object's size is not known yet".into());
        self.len.ok_or_else(unknown)
    }

    /// Moves the reader `offset` bytes from the start (`whence` 0), the position (1) or the
    /// end (2), as a file's `seek` does; past the end, reads give nothing. Never waits: what is
    /// held answers at once, else the next read catches up or starts a download from there.
    pub(crate) fn seek(&mut self, offset: i64, whence: i32) -> Result<u64, ReadError> {
        self.usable()?;
        let len = self.size()?;
        let from = match whence {
            0 => 0,
            1 => self.position,
            2 => len,
            _ => {
                let why = format!("invalid whence ({whence}, should be 0, 1 or 2)");
                return Err(ReadError::Invalid(why));
            }
        };
        let to = i128::from(from) + i128::from(offset);
        self.position = u64::try_from(to)
            .map_err(|_| ReadError::Invalid(format!("negative seek position {to}")))?;
        self.catch_up_held();
        Ok(self.position)
    }

    /// Whether `take(n)` has all it needs without a wait.
    pub(crate) fn holds(&self, n: usize) -> bool {
        self.held_at == self.position && (self.held.len() >= n || self.ended())
    }

    /// Where the first line held ends (after its `\n`, at most `limit` bytes in), if it is
    /// held whole; the end of what is held if the object has ended.
    pub(crate) fn line_end(&mut self, limit: usize) -> Option<usize> {
        if self.held_at != self.position {
            return None;
        }
        let end = self.held.line_end(limit);
        end.or_else(|| self.ended().then_some(self.held.len().min(limit)))
    }

    /// Receives chunks until `n` bytes are held or the object has ended.
    pub(crate) async fn want(&mut self, n: usize) -> Result<(), ReadError> {
        self.usable()?;
        self.settle(n).await?;
        while !self.holds(n) {
            self.receive().await?;
        }
        Ok(())
    }

    /// Receives chunks until a whole line (or `limit` bytes) is held or the object has ended;
    /// returns the line's length.
    pub(crate) async fn want_line(&mut self, limit: usize) -> Result<usize, ReadError> {
        self.usable()?;
        self.settle(0).await?;
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
        if self.held_at != self.position {
            return Bytes::new();
        }
        let out = self.held.take(n);
        self.held_at += out.len() as u64;
        self.position = self.held_at;
        out
    }

    /// The length of the first chunk held (what `read1` returns at most).
    pub(crate) fn first_len(&self) -> usize {
        self.held.first_len()
    }

    /// Stops the download and drops what was held.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.held.clear();
        self.download = None;
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

    /// Whether all there is to read is held: no download under way, and what is held reaches
    /// the end.
    fn ended(&self) -> bool {
        self.download.is_none()
            && self
                .len
                .map_or(true, |len| self.held_at + self.held.len() as u64 >= len)
    }

    /// Moves the held bytes to the position when it is within them, ahead or behind.
    fn catch_up_held(&mut self) {
        if self.position >= self.held_at {
            let ahead = self.position - self.held_at;
            if ahead <= self.held.len() as u64 {
                self.held.skip(ahead as usize);
                self.held_at = self.position;
            }
        } else {
            let back = self.held_at - self.position;
            if back <= self.held.behind() as u64 {
                self.held.unread(back as usize);
                self.held_at = self.position;
            }
        }
    }

    /// Brings what is held to the position after a seek out of reach: reading on to it when
    /// the chunks already here reach it, or when it is less than [`WINDOW`] past them (what a
    /// new download would fetch at least); else a download from there of `wanted` bytes (at
    /// least [`WINDOW`]; the rest of the object when that is less). Reading on further would
    /// wait for bytes nobody asked for, where a new request costs one round trip.
    async fn settle(&mut self, wanted: usize) -> Result<(), ReadError> {
        self.catch_up_held();
        let Some(len) = self.len.filter(|_| self.held_at != self.position) else {
            return Ok(());
        };
        if self.position > self.held_at {
            self.skip_arrived();
            let near = |b: &Self| {
                b.download.as_ref().is_some_and(|d| {
                    let reach = (b.held_at + b.held.len() as u64).saturating_add(WINDOW);
                    b.position < reach.min(d.end)
                })
            };
            while self.held_at != self.position && near(self) {
                self.receive().await?;
                self.catch_up_held();
            }
            if self.held_at == self.position {
                return Ok(());
            }
        }
        let received = self.held_at + self.held.len() as u64;
        if let Some(d) = self.download.as_mut() {
            // The rest of a short GET is cheaper than a new connection's round trip and cold
            // congestion window for the next one: it is read to its end, and dropped.
            d.drain = d.short && d.end.saturating_sub(received) <= WINDOW;
        }
        self.held.clear();
        self.held_at = self.position;
        self.download = None;
        if self.position < len {
            let end = self
                .position
                .saturating_add((wanted as u64).max(WINDOW))
                .min(len);
            self.download_from(self.position, end);
        }
        Ok(())
    }

    /// Starts a download of the reader's bytes `from..to`, pinned to the object's ETag.
    fn download_from(&mut self, from: u64, to: u64) {
        self.download = Some(self.origin.from((from, to), self.etag.as_deref()));
    }

    /// Skips through the chunks that have arrived, without waiting, towards a position ahead.
    fn skip_arrived(&mut self) {
        while self.held_at != self.position {
            let Some(Ok(chunk)) = self.download.as_mut().map(|d| d.chunks.try_recv()) else {
                return;
            };
            self.held.push(chunk);
            self.catch_up_held();
            if self.held_at != self.position {
                // Not there yet: all of it is behind the position.
                let all = self.held.len();
                self.held.skip(all);
                self.held_at += all as u64;
            }
        }
    }

    /// Waits for the next chunk (bounded by the stall timeout), or for the download's end once
    /// its chunks are all here: its error (a part that failed for good, a checksum that did not
    /// match) is the stream's. A download after a seek that ended before the object did is
    /// followed by one to the end: the reads are in order again.
    async fn receive(&mut self) -> Result<(), ReadError> {
        if self.download.is_none() {
            let from = self.held_at + self.held.len() as u64;
            match self.len {
                Some(len) if from < len => self.download_from(from, len),
                _ => return Ok(()),
            }
        }
        let Some(download) = self.download.as_mut() else {
            return Ok(());
        };
        if let Some(go) = self.go.take() {
            let _ = go.send(());
        }
        let limit = self.stall_timeout;
        let next = if limit.is_zero() {
            Some(download.chunks.recv().await)
        } else {
            self.activity
                .until_idle(limit, download.chunks.recv())
                .await
        };
        let outcome = match next {
            Some(Some(chunk)) => {
                self.held.push(chunk);
                return Ok(());
            }
            None => Err(TransferError::Stalled {
                idle: limit,
                sending: true,
            }),
            Some(None) => (&mut download.task)
                .await
                .unwrap_or_else(|e| Err(e.into()))
                .map(drop),
        };
        // Ended already, or stalled: stopped either way.
        self.download = None;
        outcome.map_err(|e| {
            self.failed = Some(e.to_string());
            ReadError::Transfer(e)
        })
    }
}

impl Origin {
    /// The first download: of the whole object (`None`) or of the reader's range (end
    /// exclusive), in parallel parts, with the reader's `signals`.
    fn first(&self, range: Option<(u64, u64)>, signals: StreamSignals) -> Download {
        let (range, short) = (range.map(|r| (r, None)), false);
        self.spawn(range, short, signals)
    }

    /// A download of the reader's bytes `range` (end exclusive) after a seek or past a short
    /// one, pinned to `etag`: up to a part, one GET handed on as it arrives (the stream
    /// download's first part), so the reader's first bytes do not wait for the rest of it, and
    /// `short`, so it may be left to finish; a longer one in parallel parts.
    fn from(&self, range: (u64, u64), etag: Option<&str>) -> Download {
        let short = range.1 - range.0 <= self.opts.part_size;
        let pinned = Some((range, etag.map(str::to_owned)));
        self.spawn(pinned, short, StreamSignals::default())
    }

    /// Starts a download into a new channel.
    fn spawn(
        &self,
        range: Option<((u64, u64), Option<String>)>,
        short: bool,
        signals: StreamSignals,
    ) -> Download {
        let (tx, chunks) = mpsc::channel(CHUNKS_AHEAD);
        let (client, bucket, key) = (
            Arc::clone(&self.client),
            self.bucket.clone(),
            self.key.clone(),
        );
        let (base, opts) = (self.base, self.opts.clone());
        let end = range.as_ref().map_or(u64::MAX, |r| r.0 .1);
        let task = self.runtime.spawn(async move {
            let mut out = Chunks(PollSender::new(tx), short);
            let (bucket, key) = (bucket.as_str(), key.as_key());
            let Some(((start, end), etag)) = range else {
                let names = (bucket, key, StreamOf::Object);
                return download_stream_to_writer(client, names, &mut out, opts, signals).await;
            };
            let (range, if_match) = ((base + start, base.saturating_add(end)), etag.as_deref());
            let names = (bucket, key, StreamOf::Range { range, if_match });
            download_stream_to_writer(client, names, &mut out, opts, signals).await
        });
        Download {
            chunks,
            task,
            end,
            short,
            drain: false,
        }
    }
}
