//! How long TCP connects take, per origin: how far the network is.
//!
//! Transfers choose how many objects to keep in flight by how far the server is, and a first
//! answer's time mixes the network with the server's CPU. A TCP handshake does not: the
//! kernel answers it however busy the server process is. The TLS handshake on top does not
//! count, for that reason: on a machine whose cores the server shares (both servers of a copy
//! and the client on two cores), versitygw's handshake took over 20 ms on loopback, which
//! made the network look far. So the time is taken under TLS, as soon as TCP connects, and
//! is known while the handshake is still going.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::Uri;
use tower_service::Service;

/// The quickest TCP connect (with its DNS lookup) to each origin, shared by the connectors
/// that record into it and the client that reads it.
#[derive(Clone, Default)]
pub(crate) struct ConnectTimes(Arc<Mutex<HashMap<String, Duration>>>);

impl ConnectTimes {
    /// The quickest connect to `uri`'s origin so far, if one has connected.
    pub(crate) fn quickest(&self, uri: &Uri) -> Option<Duration> {
        self.0.lock().ok()?.get(&origin(uri)).copied()
    }

    fn record(&self, origin: String, took: Duration) {
        if let Ok(mut times) = self.0.lock() {
            times
                .entry(origin)
                .and_modify(|q| *q = (*q).min(took))
                .or_insert(took);
        }
    }
}

/// A TCP connector that records how long each of its connections took into [`ConnectTimes`]
/// (failures do not count).
#[derive(Clone)]
pub(crate) struct Timed<C> {
    inner: C,
    times: ConnectTimes,
}

impl<C> Timed<C> {
    pub(crate) fn new(inner: C, times: ConnectTimes) -> Self {
        Self { inner, times }
    }
}

impl<C> Service<Uri> for Timed<C>
where
    C: Service<Uri>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = C::Error;
    type Future = Pin<Box<dyn Future<Output = Result<C::Response, C::Error>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (origin, times) = (origin(&uri), self.times.clone());
        let started = Instant::now();
        let connecting = self.inner.call(uri);
        Box::pin(async move {
            let connected = connecting.await?;
            times.record(origin, started.elapsed());
            Ok(connected)
        })
    }
}

/// `scheme://host:port`, what makes two connections interchangeable.
pub(crate) fn origin(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("http");
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
    format!("{scheme}://{}:{port}", uri.host().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connector that refuses `down.example` and connects anything else.
    #[derive(Clone)]
    struct Refusing;

    impl Service<Uri> for Refusing {
        type Response = ();
        type Error = std::io::Error;
        type Future = std::future::Ready<Result<(), std::io::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, uri: Uri) -> Self::Future {
            std::future::ready(match uri.host() {
                Some("down.example") => Err(std::io::ErrorKind::ConnectionRefused.into()),
                _ => Ok(()),
            })
        }
    }

    #[tokio::test]
    async fn the_quickest_connect_is_kept_per_origin_and_failures_do_not_count() {
        let times = ConnectTimes::default();
        let mut timed = Timed::new(Refusing, times.clone());
        let (a, down): (Uri, Uri) = (
            "https://a.example/k".parse().unwrap(),
            "https://down.example/k".parse().unwrap(),
        );
        assert_eq!(times.quickest(&a), None);
        timed.call(a.clone()).await.unwrap();
        let first = times.quickest(&a).expect("a connect time");
        for _ in 0..3 {
            timed.call(a.clone()).await.unwrap();
        }
        assert!(times.quickest(&a).unwrap() <= first);
        assert!(timed.call(down.clone()).await.is_err());
        assert_eq!(times.quickest(&down), None);
        assert_eq!(times.quickest(&"http://a.example/".parse().unwrap()), None);
    }

    #[test]
    fn origins_include_the_default_port() {
        let o = |s: &str| origin(&s.parse().unwrap());
        assert_eq!(
            o("https://b.s3.amazonaws.com/k"),
            "https://b.s3.amazonaws.com:443"
        );
        assert_eq!(o("http://127.0.0.1:9000/b/k"), "http://127.0.0.1:9000");
        assert_ne!(o("http://h/"), o("https://h/"));
    }
}
