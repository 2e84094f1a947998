//! Choosing the TCP congestion control of the connections we send on.
//!
//! The sender's congestion control decides how full a long link stays, and on uploads the
//! sender is us. The host's default serves most paths and stays the default. Where it does not
//! fill a long, clean link, `ClientOptions::tcp_congestion` picks another, as `iperf3 -C` does.
//! On the emulated long link, BBR (this host's default) loses time when all flows drain the
//! queue together for PROBE_RTT, and at the tail as the flows finish at their own pace; reno and
//! cubic keep the shared queue full to the last byte (figures: docs/BENCHMARKS-HISTORY.md, "Uploads
//! under a loss-based congestion control").
//! Downloads are sent by the server, so this changes nothing for them.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower_service::Service;

use crate::ClientError;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A TCP connector whose connections use `algorithm`, or the host's default when `None`.
#[derive(Clone)]
pub(crate) struct WithCongestion<C> {
    inner: C,
    algorithm: Option<Arc<str>>,
}

impl<C> WithCongestion<C> {
    /// Fails when this host will not give us `algorithm` (see [`check`]).
    pub(crate) fn new(inner: C, algorithm: Option<&str>) -> Result<Self, ClientError> {
        if let Some(name) = algorithm {
            check(name)?;
        }
        Ok(Self {
            inner,
            algorithm: algorithm.map(Arc::from),
        })
    }
}

impl<C> Service<Uri> for WithCongestion<C>
where
    C: Service<Uri, Response = TokioIo<TcpStream>>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future =
        Pin<Box<dyn Future<Output = Result<TokioIo<TcpStream>, BoxError>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let algorithm = self.algorithm.clone();
        Box::pin(async move {
            let stream = connecting.await.map_err(Into::into)?;
            if let Some(name) = algorithm {
                // Before the first byte is sent, so the whole connection runs under it.
                set(stream.inner(), &name)?;
            }
            Ok(stream)
        })
    }
}

/// Whether this host lets us use `name`, tried on a socket of our own so that a misspelt or
/// refused name fails when the client is built, not at its first request.
fn check(name: &str) -> Result<(), ClientError> {
    let refused = |e: io::Error| {
        // The kernel's errno says which; its text ("No such file or directory") would not.
        let why = match e.kind() {
            io::ErrorKind::NotFound => "this host does not have it".to_owned(),
            io::ErrorKind::PermissionDenied => "not allowed without CAP_NET_ADMIN".to_owned(),
            _ => e.to_string(),
        };
        ClientError::Request(format!(
            "TCP congestion control {name:?} refused: {why}{}",
            choices()
        ))
    };
    let probe = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
        .map_err(ClientError::Io)?;
    set_on(&probe, name).map_err(refused)
}

fn set(stream: &TcpStream, name: &str) -> io::Result<()> {
    set_on(&socket2::SockRef::from(stream), name)
}

#[cfg(any(target_os = "linux", target_os = "freebsd"))]
fn set_on(socket: &socket2::Socket, name: &str) -> io::Result<()> {
    socket.set_tcp_congestion(name.as_bytes())
}

#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
fn set_on(_socket: &socket2::Socket, _name: &str) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "this system does not let a program choose its TCP congestion control",
    ))
}

/// What the host offers, from Linux's own lists (an unprivileged process may use only the
/// "allowed" ones), for the error message.
fn choices() -> String {
    let read = |what: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/ipv4/tcp_{what}_congestion_control"))
            .map(|s| s.trim().to_owned())
            .ok()
    };
    match (read("available"), read("allowed")) {
        (Some(available), Some(allowed)) => {
            format!(" (this host has: {available}; without CAP_NET_ADMIN: {allowed})")
        }
        _ => String::new(),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use hyper_util::client::legacy::connect::HttpConnector;

    #[tokio::test]
    async fn connections_use_the_chosen_algorithm() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri: Uri = format!("http://{}/", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        // reno is always built in and always allowed, even without privileges.
        for (algorithm, want) in [(Some("reno"), Some("reno")), (None, None)] {
            let mut connector = WithCongestion::new(HttpConnector::new(), algorithm).unwrap();
            let stream = connector.call(uri.clone()).await.unwrap();
            let used = socket2::SockRef::from(stream.inner())
                .tcp_congestion()
                .unwrap();
            let used = String::from_utf8_lossy(&used);
            let used = used.trim_end_matches('\0');
            match want {
                Some(name) => assert_eq!(used, name),
                None => {
                    let default =
                        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
                            .unwrap();
                    assert_eq!(used, default.trim(), "the host's default when unset");
                }
            }
        }
    }

    #[test]
    fn an_unknown_algorithm_is_refused_up_front_with_the_choices() {
        assert!(check("reno").is_ok());
        let err = check("no-such-cc").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ClientError::Request(_)), "{err:?}");
        assert!(
            text.contains("\"no-such-cc\" refused: this host does not have it"),
            "{text}"
        );
        assert!(text.contains("reno"), "lists what the host has: {text}");
    }
}
