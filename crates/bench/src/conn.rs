//! Connections made by hand, so each phase of a request can be timed at the socket.
//!
//! A pooled HTTP client hides when a connection was opened and when bytes moved. Here each worker
//! owns its connection: TCP (TCP_NODELAY), then TLS if the endpoint is HTTPS (TLS 1.3 or 1.2, no
//! session resumption for fresh connections: each one pays the full handshake a new client
//! would), then hyper's HTTP/1.1 on top. The stream hyper talks to (TLS's plaintext side for
//! HTTPS) is wrapped in `TimedIo`, which notes when the request's last byte was written and when
//! the response's first byte was read, as curl's `time_starttransfer` does. Not below TLS: TLS
//! 1.3 servers that send their session tickets after the handshake (rustls, OpenSSL, so nginx
//! and most proxies) have them arrive one round trip after the client's Finished, just after the
//! request went out, and a clock on the TCP stream took those tickets for the response.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Which TLS versions a connection may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsVersion {
    /// TLS 1.3 or 1.2, whichever the server prefers (normally 1.3).
    Auto,
    /// TLS 1.3 only: 1 round trip of handshake.
    #[serde(rename = "1.3")]
    V13,
    /// TLS 1.2 only: 2 round trips of handshake.
    #[serde(rename = "1.2")]
    V12,
}

/// Where requests go and how to reach it.
#[derive(Clone)]
pub struct Target {
    /// The server's address (resolved once, before the run: DNS is not part of any latency).
    pub addr: SocketAddr,
    /// The TLS server name (the host without port) and configuration, for HTTPS endpoints.
    pub tls: Option<(ServerName<'static>, Arc<rustls::ClientConfig>)>,
    /// Whether connections are kept from one request to the next.
    pub reuse: bool,
    /// Giving up on connecting (TCP and TLS) after this long.
    pub connect_timeout: Duration,
}

impl Target {
    /// The target of `origin` (`http://host:port` or `https://...`), its TLS trusting the roots
    /// of `ca_bundle` (or the Mozilla roots) with `version`.
    pub async fn new(
        origin: &str,
        ca_bundle: Option<&Path>,
        version: TlsVersion,
        reuse: bool,
    ) -> Result<Self, String> {
        let endpoint = slipstream_s3::Endpoint::parse(origin).map_err(|e| e.to_string())?;
        let host = endpoint.connect_host().to_owned();
        let addr = tokio::net::lookup_host((host.as_str(), endpoint.port_or_default()))
            .await
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("{host} has no address"))?;
        let tls = if endpoint.is_https() {
            let versions: &[&rustls::SupportedProtocolVersion] = match version {
                TlsVersion::Auto => slipstream_client::tls::DEFAULT_VERSIONS,
                TlsVersion::V13 => &[&rustls::version::TLS13],
                TlsVersion::V12 => &[&rustls::version::TLS12],
            };
            let mut config = slipstream_client::tls::client_config(ca_bundle, versions)
                .map_err(|e| e.to_string())?;
            if !reuse {
                config.resumption = rustls::client::Resumption::disabled();
            }
            let name = ServerName::try_from(host.clone())
                .map_err(|e| format!("{host} is not a TLS server name: {e}"))?;
            Some((name, Arc::new(config)))
        } else {
            if version != TlsVersion::Auto {
                return Err("--tls needs an https:// endpoint".into());
            }
            None
        };
        Ok(Self {
            addr,
            tls,
            reuse,
            connect_timeout: Duration::from_secs(10),
        })
    }

    /// A new connection, with how long TCP and TLS took.
    pub async fn connect(&self) -> Result<(Conn, Setup), ConnectError> {
        let start = Instant::now();
        let tcp = tokio::time::timeout(self.connect_timeout, TcpStream::connect(self.addr))
            .await
            .map_err(|_| ConnectError::Connect("timed out".into()))?
            .map_err(|e| ConnectError::Connect(e.to_string()))?;
        tcp.set_nodelay(true)
            .map_err(|e| ConnectError::Connect(e.to_string()))?;
        let connected = Instant::now();
        let marks = Arc::new(Mutex::new(Marks::default()));
        let (sender, tls_done) = match &self.tls {
            None => (handshake(TimedIo::new(tcp, &marks)).await?, None),
            Some((name, config)) => {
                let connector = tokio_rustls::TlsConnector::from(Arc::clone(config));
                let tls = tokio::time::timeout(
                    self.connect_timeout,
                    connector.connect(name.clone(), tcp),
                )
                .await
                .map_err(|_| ConnectError::Tls("handshake timed out".into()))?
                .map_err(|e| ConnectError::Tls(e.to_string()))?;
                let done = Instant::now();
                (handshake(TimedIo::new(tls, &marks)).await?, Some(done))
            }
        };
        let setup = Setup {
            connect: connected - start,
            tls: tls_done.map(|t| t - connected),
        };
        Ok((Conn { sender, marks }, setup))
    }
}

async fn handshake<S>(io: S) -> Result<SendRequest<Full<Bytes>>, ConnectError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| ConnectError::Connect(e.to_string()))?;
    tokio::spawn(async move {
        // Ends when the sender is dropped or the server closes; errors surface on the sender.
        let _ = connection.await;
    });
    Ok(sender)
}

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// TCP failed or timed out.
    Connect(String),
    /// The TLS handshake failed or timed out.
    Tls(String),
}

/// How long a new connection took to set up.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// TCP's handshake (one round trip).
    pub connect: Duration,
    /// TLS's handshake, for HTTPS.
    pub tls: Option<Duration>,
}

/// One HTTP/1.1 connection and its byte-level clock.
pub struct Conn {
    /// Sends requests (one at a time).
    pub sender: SendRequest<Full<Bytes>>,
    marks: Arc<Mutex<Marks>>,
}

impl Conn {
    /// Starts timing a new request: forgets the marks of the previous request (or handshake).
    pub fn arm(&self) {
        if let Ok(mut m) = self.marks.lock() {
            *m = Marks::default();
        }
    }

    /// When the request's last byte was written and the response's first byte read (since the
    /// last [`Conn::arm`]).
    pub fn marks(&self) -> (Option<Instant>, Option<Instant>) {
        self.marks
            .lock()
            .map(|m| (m.last_write, m.first_read))
            .unwrap_or((None, None))
    }
}

#[derive(Default)]
struct Marks {
    last_write: Option<Instant>,
    first_read: Option<Instant>,
}

/// A stream that notes when bytes were written and when the first byte after a write arrived.
struct TimedIo<S> {
    inner: S,
    marks: Arc<Mutex<Marks>>,
}

impl<S> TimedIo<S> {
    fn new(inner: S, marks: &Arc<Mutex<Marks>>) -> Self {
        Self {
            inner,
            marks: Arc::clone(marks),
        }
    }

    /// Passes a write's outcome through, noting the time if bytes went out.
    fn note_write(&self, poll: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            if let Ok(mut m) = self.marks.lock() {
                m.last_write = Some(Instant::now());
            }
        }
        poll
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for TimedIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            if let Ok(mut m) = self.marks.lock() {
                m.first_read.get_or_insert_with(Instant::now);
            }
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TimedIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.note_write(poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.note_write(poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
