//! A TCP stream that reads ahead: one `recv` of up to [`READ_AHEAD`] bytes, handed out in the
//! small reads rustls makes.
//!
//! Why: rustls reads its socket 4 KiB at a time, so a TLS download through it costs a `recv`
//! per 4 KiB (262,144 per GiB), each one more kernel entry on the receiving core. Reading what
//! the socket has in one call and serving rustls from memory costs a copy of bytes that are hot
//! in the cache anyway. Plain HTTP connections are not buffered: hyper reads them in large
//! pieces itself, and the copy would only cost.

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

use crate::proxy::Reached;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The most one `recv` takes.
pub(crate) const READ_AHEAD: usize = 64 * 1024;

/// A TCP connector whose connections to `https` URIs read ahead (the TLS layer goes on top),
/// and whose connections to a forwarding proxy say so (`proxy.rs`), so that hyper writes each
/// request's whole URL as its target.
#[derive(Clone)]
pub(crate) struct ReadAheadConnector<C>(pub(crate) C);

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
        self.0.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = uri.scheme_str() == Some("https");
        let connecting = self.0.call(uri);
        Box::pin(async move {
            let reached = connecting.await.map_err(Into::into)?;
            let mut stream = ReadAhead::new(reached.io, tls);
            stream.forwarded = reached.forwarded;
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
        if !this.buffered {
            return Pin::new(&mut this.io).poll_read(cx, out);
        }
        if this.at == this.end {
            if this.buf.is_empty() {
                this.buf = vec![0; READ_AHEAD].into_boxed_slice();
            }
            let mut read = ReadBuf::new(&mut this.buf);
            ready!(Pin::new(this.io.inner_mut()).poll_read(cx, &mut read))?;
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
        Pin::new(self.get_mut().io.inner_mut()).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self.get_mut().io.inner_mut()).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.inner().is_write_vectored()
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
