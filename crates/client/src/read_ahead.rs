//! A TCP stream that reads ahead: one `recv` of up to [`READ_AHEAD`] bytes, handed out in the
//! small reads rustls makes.
//!
//! Why: rustls reads its socket 4 KiB at a time, so a TLS download through it costs a `recv`
//! per 4 KiB (262,144 per GiB), each one more kernel entry on the receiving core. Reading what
//! the socket has in one call and serving rustls from memory costs a copy of bytes that are hot
//! in the cache anyway. Plain HTTP connections are not buffered: hyper reads them in large
//! pieces itself, and the copy would only cost.
//!
//! Under a bandwidth cap (`bandwidth.rs`) every `recv` and `send` first waits for its turn on
//! the shared bucket, which bounds its size; reads then always go through the buffer.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tower_service::Service;

use crate::bandwidth::Bandwidth;
use crate::proxy::Reached;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The most one `recv` takes.
pub(crate) const READ_AHEAD: usize = 64 * 1024;

/// A TCP connector whose connections to `https` URIs read ahead (the TLS layer goes on top),
/// whose connections to a forwarding proxy say so (`proxy.rs`), so that hyper writes each
/// request's whole URL as its target, and whose connections share a bandwidth cap if given.
#[derive(Clone)]
pub(crate) struct ReadAheadConnector<C> {
    pub(crate) inner: C,
    pub(crate) bandwidth: Option<Bandwidth>,
}

impl<C> Service<Uri> for ReadAheadConnector<C>
where
    C: Service<Uri, Response = Reached>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = ReadAhead;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ReadAhead, BoxError>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = uri.scheme_str() == Some("https");
        let connecting = self.inner.call(uri);
        let bandwidth = self.bandwidth.clone();
        Box::pin(async move {
            let reached = connecting.await.map_err(Into::into)?;
            let mut stream = ReadAhead::new(reached.io, tls);
            stream.forwarded = reached.forwarded;
            stream.throttle = bandwidth.map(Throttle::new);
            Ok(stream)
        })
    }
}

/// A connection whose reads are buffered (for TLS); writes go straight to the socket.
pub struct ReadAhead {
    io: TokioIo<TcpStream>,
    /// Whether reads go through `buf` (TLS) or straight to the socket (plain HTTP).
    buffered: bool,
    buf: Box<[u8]>,
    at: usize,
    end: usize,
    /// Whether this is a connection to a proxy that forwards requests (`proxy.rs`).
    forwarded: bool,
    /// The bandwidth cap this connection shares, if any.
    throttle: Option<Throttle>,
}

/// A connection's side of a shared [`Bandwidth`]: its turn to read and its turn to write
/// (hyper may poll both at once, each with its own waker).
struct Throttle {
    bandwidth: Bandwidth,
    reading: Option<Turn>,
    writing: Option<Turn>,
}

/// Bytes reserved, and the wait until they may move.
struct Turn {
    bytes: usize,
    wait: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Throttle {
    fn new(bandwidth: Bandwidth) -> Self {
        Self {
            bandwidth,
            reading: None,
            writing: None,
        }
    }
}

/// How many of `want` bytes may move now: a turn reserved on `bandwidth` (kept in `turn` until
/// [`settle`], also while the socket is not ready), once its start has come.
fn ready_turn(
    bandwidth: &Bandwidth,
    turn: &mut Option<Turn>,
    cx: &mut Context<'_>,
    want: usize,
) -> Poll<usize> {
    let t = turn.get_or_insert_with(|| {
        let (bytes, start) = bandwidth.reserve(want);
        let wait = (start > std::time::Instant::now())
            .then(|| Box::pin(tokio::time::sleep_until(start.into())));
        Turn { bytes, wait }
    });
    if let Some(wait) = &mut t.wait {
        ready!(wait.as_mut().poll(cx));
        t.wait = None;
    }
    Poll::Ready(t.bytes)
}

/// The turn in `turn` is over, `used` of its bytes moved; the rest go back to the bucket.
fn settle(bandwidth: &Bandwidth, turn: &mut Option<Turn>, used: usize) {
    if let Some(t) = turn.take() {
        bandwidth.refund(t.bytes.saturating_sub(used));
    }
}

impl ReadAhead {
    /// `io`, its reads buffered when `buffered` (a connection that will carry TLS).
    pub(crate) fn new(io: TokioIo<TcpStream>, buffered: bool) -> Self {
        Self {
            io,
            buffered,
            buf: Box::default(),
            at: 0,
            end: 0,
            forwarded: false,
            throttle: None,
        }
    }

    /// The TCP stream (for socket options).
    pub fn tcp(&self) -> &TcpStream {
        self.io.inner()
    }
}

impl Read for ReadAhead {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut out: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.buffered && this.throttle.is_none() {
            return Pin::new(&mut this.io).poll_read(cx, out);
        }
        if this.at == this.end {
            if this.buf.is_empty() {
                this.buf = vec![0; READ_AHEAD].into_boxed_slice();
            }
            let most = match &mut this.throttle {
                Some(t) => {
                    // A turn only once bytes are there: an idle connection in the pool, read
                    // to notice its close, would hold one up for nothing.
                    if t.reading.is_none() {
                        ready!(this.io.inner().poll_read_ready(cx))?;
                    }
                    ready!(ready_turn(&t.bandwidth, &mut t.reading, cx, READ_AHEAD))
                }
                None => READ_AHEAD,
            };
            let mut read = ReadBuf::new(&mut this.buf[..most]);
            let done = ready!(Pin::new(this.io.inner_mut()).poll_read(cx, &mut read));
            if let Some(t) = &mut this.throttle {
                settle(&t.bandwidth, &mut t.reading, read.filled().len());
            }
            done?;
            this.at = 0;
            this.end = read.filled().len();
            if this.end == 0 {
                return Poll::Ready(Ok(())); // end of stream
            }
        }
        let n = out.remaining().min(this.end - this.at);
        out.put_slice(&this.buf[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

impl Write for ReadAhead {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(t) = &mut this.throttle else {
            return Pin::new(this.io.inner_mut()).poll_write(cx, buf);
        };
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if t.writing.is_none() {
            // Likewise, no turn while the socket's send buffer is full.
            ready!(this.io.inner().poll_write_ready(cx))?;
        }
        let most = ready!(ready_turn(&t.bandwidth, &mut t.writing, cx, buf.len()));
        let done =
            ready!(Pin::new(this.io.inner_mut()).poll_write(cx, &buf[..most.min(buf.len())]));
        settle(&t.bandwidth, &mut t.writing, *done.as_ref().unwrap_or(&0));
        Poll::Ready(done)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.throttle.is_some() {
            // One slice at a time, each within its grant (hyper asks `is_write_vectored` first).
            let first = bufs
                .iter()
                .find(|b| !b.is_empty())
                .map_or(&[][..], |b| &b[..]);
            return self.poll_write(cx, first);
        }
        Pin::new(self.get_mut().io.inner_mut()).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.throttle.is_none() && self.io.inner().is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.get_mut().io.inner_mut()).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.get_mut().io.inner_mut()).poll_shutdown(cx)
    }
}

impl Connection for ReadAhead {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.forwarded)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// Every byte, in order, then the end, whatever the reads' and the writes' sizes.
    #[tokio::test]
    async fn reads_of_any_size_get_every_byte_in_order_then_the_end() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        for (buffered, read_size) in [(true, 4096), (true, 100_000), (false, 4096), (true, 1)] {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let sent = data.clone();
            let sender = tokio::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                for piece in sent.chunks(7000) {
                    s.write_all(piece).await.unwrap();
                }
                s.shutdown().await.unwrap();
            });
            let tcp = TcpStream::connect(addr).await.unwrap();
            let mut r = TokioIo::new(ReadAhead::new(TokioIo::new(tcp), buffered));
            let mut got = Vec::new();
            let mut chunk = vec![0u8; read_size];
            loop {
                let n = r.read(&mut chunk).await.unwrap();
                if n == 0 {
                    break;
                }
                assert!(n <= READ_AHEAD || !buffered);
                got.extend_from_slice(&chunk[..n]);
            }
            sender.await.unwrap();
            assert!(got == data, "buffered {buffered}, reads of {read_size}");
        }
    }
}
