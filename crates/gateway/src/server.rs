//! Listeners and connections: accepting clients (up to `max_connections`) and handing them to
//! the worker threads (workers.rs), their TLS handshakes, HTTP/1.1 and HTTP/2 on the same port
//! (ALPN, or the HTTP/2 preface on plain listeners), the metrics listener, certificate reload
//! and the drain on shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::access_log::AccessLog;
use crate::body::Relay;
use crate::metrics::Metrics;
use crate::pool::{Pool, PoolSettings};
use crate::proxy::{ClientConnection, Proxy};
use crate::tls::Certificates;
use crate::verify::Verify;
use crate::workers::Workers;
use crate::{GatewayError, Settings};

/// A gateway with its listeners bound, its certificates loaded and its upstream pool warming;
/// [`Gateway::serve`] runs it.
pub struct Gateway {
    settings: Settings,
    listeners: Vec<TcpListener>,
    metrics_listener: Option<TcpListener>,
    tls: Option<(TlsAcceptor, Arc<Certificates>)>,
    workers: Workers,
    verify: Option<Arc<Verify>>,
    log: Arc<AccessLog>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("listen", &self.local_addrs())
            .field("origin", &self.settings.origin)
            .finish_non_exhaustive()
    }
}

/// Re-reads the certificate files and verify mode's keys file (SIGHUP); existing
/// connections keep their certificates.
#[derive(Clone)]
pub struct Reloader {
    certificates: Option<Arc<Certificates>>,
    verify: Option<Arc<Verify>>,
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloader").finish_non_exhaustive()
    }
}

impl Reloader {
    /// Reloads both; on error what is in use stays (the other one still reloads). Says what
    /// was reloaded.
    pub fn reload(&self) -> Result<String, GatewayError> {
        let certificates = match &self.certificates {
            Some(c) => c.reload().map(|()| "certificates reloaded".to_owned()),
            None => Ok(String::new()),
        };
        let keys = match &self.verify {
            Some(v) => v.reload().map_err(GatewayError::Settings),
            None => Ok(String::new()),
        };
        let done: Vec<String> = [certificates?, keys?]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
        Ok(done.join("; "))
    }
}

impl Gateway {
    /// Checks the settings, loads the certificates, opens the access log, binds every listener
    /// and starts the worker threads, their upstream pools warming. Must run inside a tokio
    /// runtime, which then accepts connections, writes the access log and talks to the
    /// authority.
    pub async fn bind(settings: Settings) -> Result<Self, GatewayError> {
        if settings.listen.is_empty() {
            return Err(GatewayError::Settings(
                "no --listen address: give at least one, such as --listen 127.0.0.1:8443".into(),
            ));
        }
        let origin = origin(&settings.origin)?;
        let tls = if settings.tls.is_empty() {
            None
        } else {
            let certificates = Arc::new(Certificates::load(&settings.tls)?);
            let config = crate::tls::server_config(Arc::clone(&certificates))?;
            Some((TlsAcceptor::from(config), certificates))
        };
        let metrics = Arc::new(Metrics::new());
        let log = Arc::new(AccessLog::open(
            settings.access_log.as_deref(),
            Arc::clone(&metrics),
        )?);
        let options = slipstream_client::ClientOptions {
            connect_timeout: settings.connect_timeout,
            ..Default::default()
        };
        let dialer = slipstream_client::Dialer::new(
            &options,
            settings.origin_ca_bundle.as_deref(),
            settings.upstream_h2,
        )
        .map_err(|e| GatewayError::Settings(format!("--origin-ca-bundle: {e}")))?;
        let mut listeners = Vec::new();
        for addr in &settings.listen {
            listeners.push(bind(*addr).await?);
        }
        let metrics_listener = match settings.metrics_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        let verify = match &settings.verify {
            Some(v) => Some(Arc::new(verify_mode(v, &origin, Arc::clone(&metrics))?)),
            None => None,
        };
        let pool = PoolSettings {
            min_idle: settings.upstream_min_idle,
            floor: crate::MIN_IDLE_FLOOR,
            max_idle: settings.upstream_max_idle,
            keepalive: settings.upstream_keepalive,
            connect_timeout: settings.connect_timeout,
        };
        let workers = Workers::start(settings.threads, &pool, |share| Proxy {
            pool: Pool::start(origin.clone(), dialer.clone(), share, Arc::clone(&metrics)),
            origin: origin.clone(),
            origin_timeout: settings.origin_timeout,
            metrics: Arc::clone(&metrics),
            log: Arc::new(log.for_worker()),
            verify: verify.clone(),
        })?;
        if let Some(v) = &verify {
            match v.follow_authority() {
                Some(follow) => {
                    tokio::spawn(follow);
                }
                None => {
                    tokio::spawn(watch_keys(Arc::downgrade(v)));
                }
            }
        }
        Ok(Self {
            settings,
            listeners,
            metrics_listener,
            tls,
            workers,
            verify,
            log,
            metrics,
        })
    }

    /// The addresses the S3 listeners are bound to (ports resolved when 0 was asked for).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// The metrics listener's address, if there is one.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// A handle that reloads the certificates while the gateway serves.
    pub fn reloader(&self) -> Reloader {
        Reloader {
            certificates: self.tls.as_ref().map(|(_, c)| Arc::clone(c)),
            verify: self.verify.clone(),
        }
    }

    /// Serves until `shutdown` completes; then stops accepting, lets in-flight requests finish
    /// (HTTP/1.1 connections close after their current response, HTTP/2 ones get GOAWAY) for
    /// up to `drain_timeout`, closes the upstream pools and ends the worker threads.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let Gateway {
            settings,
            listeners,
            metrics_listener,
            tls,
            workers,
            verify: _,
            log,
            metrics,
        } = self;
        let workers = Arc::new(workers);
        let (stop_tx, stop_rx) = watch::channel(false);
        let graceful = Arc::new(GracefulShutdown::new());
        let builder = Arc::new(http_builder(&settings));
        let acceptor = tls.map(|(a, _)| a);
        let mut accepting = Vec::new();
        for listener in listeners {
            let accept = Accept {
                listener,
                acceptor: acceptor.clone(),
                builder: Arc::clone(&builder),
                workers: Arc::clone(&workers),
                metrics: Arc::clone(&metrics),
                max_connections: settings.max_connections,
                handshake_timeout: settings.handshake_timeout,
            };
            accepting.push(tokio::spawn(
                accept.run(stop_rx.clone(), Arc::clone(&graceful)),
            ));
        }
        let ops = metrics_listener
            .map(|l| tokio::spawn(serve_metrics(l, Arc::clone(&metrics), stop_rx.clone())));
        shutdown.await;
        let _ = stop_tx.send(true);
        for a in accepting {
            let _ = a.await;
        }
        // The accept loops are gone, so this is the last reference.
        if let Ok(graceful) = Arc::try_unwrap(graceful) {
            let _ = tokio::time::timeout(settings.drain_timeout, graceful.shutdown()).await;
        }
        workers.stop().await;
        log.sync().await;
        if let Some(ops) = ops {
            ops.abort();
        }
    }
}

/// Verify mode's state: the keys loaded, the origin signer ready.
fn verify_mode(
    v: &crate::VerifySettings,
    origin: &hyper::Uri,
    metrics: Arc<Metrics>,
) -> Result<crate::verify::Verify, GatewayError> {
    let signer =
        slipstream_client::RefreshingSigner::new(v.origin_credentials.clone(), &v.origin_region)
            .map_err(|e| GatewayError::Settings(format!("the origin credentials: {e}")))?;
    let host = origin
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_default();
    crate::verify::Verify::new(v, signer, host, metrics).map_err(GatewayError::Settings)
}

/// Reloads the keys file when it changes (checked every second), until the gateway is gone.
/// A file that does not load is reported once per change and the keys in use stay.
async fn watch_keys(verify: std::sync::Weak<Verify>) {
    let modified = |v: &Verify| {
        v.keys_file()
            .and_then(|f| std::fs::metadata(f).ok())
            .and_then(|m| m.modified().ok())
    };
    let mut last = verify.upgrade().and_then(|v| modified(&v));
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let Some(v) = verify.upgrade() else { return };
        let now = modified(&v);
        if now == last {
            continue;
        }
        last = now;
        match v.reload() {
            Ok(done) => eprintln!("slipstream gateway: {done}"),
            Err(e) => eprintln!("slipstream gateway: keys not reloaded, keeping those in use: {e}"),
        }
    }
}

/// The HTTP/1.1 and HTTP/2 server settings: the header limits and timeouts of `settings`.
fn http_builder(settings: &Settings) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_timeout)
        .max_buf_size(settings.max_header_bytes.max(8192))
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(settings.max_header_bytes).unwrap_or(u32::MAX))
        .keep_alive_interval(Some(Duration::from_secs(20)))
        .max_concurrent_streams(256);
    builder
}

/// One listener's accept loop and what each connection needs.
struct Accept {
    listener: TcpListener,
    acceptor: Option<TlsAcceptor>,
    builder: Arc<auto::Builder<TokioExecutor>>,
    workers: Arc<Workers>,
    metrics: Arc<Metrics>,
    max_connections: usize,
    handshake_timeout: Duration,
}

/// Counts a client connection as open (the `client_connections` gauge, which the limit reads)
/// until dropped.
struct Open(Arc<Metrics>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.client_connections.dec();
    }
}

impl Accept {
    async fn run(self, mut stop: watch::Receiver<bool>, graceful: Arc<GracefulShutdown>) {
        let this = Arc::new(self);
        loop {
            let accepted = tokio::select! {
                a = this.listener.accept() => a,
                _ = stop.changed() => return,
            };
            let (tcp, peer) = match accepted {
                Ok(a) => a,
                Err(_) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let guard = Open(Arc::clone(&this.metrics));
            let before = this.metrics.client_connections.inc();
            if usize::try_from(before).unwrap_or(0) >= this.max_connections {
                this.metrics.client_refused.inc();
                continue; // dropping `tcp` and `guard` closes and uncounts it
            }
            tune(&tcp);
            // Out of this runtime's reactor, into the worker's (in `connection`).
            let Ok(tcp) = tcp.into_std() else { continue };
            let worker = this.workers.next();
            let proxy = Arc::clone(&worker.proxy);
            let watcher = graceful.watcher();
            worker.spawn(Arc::clone(&this).connection(tcp, peer, proxy, watcher, guard));
        }
    }

    /// Serves one connection; runs on a worker thread.
    async fn connection(
        self: Arc<Self>,
        tcp: std::net::TcpStream,
        peer: SocketAddr,
        proxy: Arc<Proxy>,
        watcher: Watcher,
        _open: Open,
    ) {
        let accepted = Instant::now();
        let Ok(tcp) = TcpStream::from_std(tcp) else {
            return;
        };
        let client = Arc::new(ClientConnection {
            peer,
            accepted,
            fresh: AtomicBool::new(true),
            tls: self.acceptor.is_some(),
        });
        let service = service_fn(move |request| proxy.clone().handle(request, Arc::clone(&client)));
        match &self.acceptor {
            None => {
                let conn = self.builder.serve_connection(TokioIo::new(tcp), service);
                let _ = watcher.watch(conn).await;
            }
            Some(acceptor) => {
                let handshake =
                    tokio::time::timeout(self.handshake_timeout, acceptor.accept(tcp)).await;
                let stream = match handshake {
                    Ok(Ok(s)) => s,
                    _ => {
                        self.metrics.handshake_failures.inc();
                        return;
                    }
                };
                self.metrics
                    .handshake
                    .observe(accepted.elapsed().as_secs_f64());
                let conn = self.builder.serve_connection(TokioIo::new(stream), service);
                let _ = watcher.watch(conn).await;
            }
        }
    }
}

/// `/metrics` (Prometheus text) and `/healthz` (200 `ok`; 503 `draining` once `stop` says
/// shutdown began).
async fn serve_metrics(listener: TcpListener, metrics: Arc<Metrics>, stop: watch::Receiver<bool>) {
    loop {
        // It keeps answering while the gateway drains (/healthz says 503), until `serve` ends.
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let (metrics, stop) = (Arc::clone(&metrics), stop.clone());
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                let answer = operations(request.uri().path(), &metrics, *stop.borrow());
                async move { Ok::<_, std::convert::Infallible>(answer) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}

fn operations(path: &str, metrics: &Metrics, draining: bool) -> Response<Relay> {
    let (status, kind, body) = match path {
        "/metrics" => (
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics.encode(),
        ),
        "/healthz" if draining => (
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "draining\n".into(),
        ),
        "/healthz" => (StatusCode::OK, "text/plain", "ok\n".into()),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain",
            "try /metrics or /healthz\n".into(),
        ),
    };
    let mut response = Response::new(Relay::plain(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(kind),
    );
    response
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, GatewayError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| GatewayError::Bind(format!("cannot listen on {addr}: {e}")))
}

/// The origin as `scheme://authority`, refusing anything with a path or query.
fn origin(s: &str) -> Result<hyper::Uri, GatewayError> {
    let bad = |why: &str| {
        GatewayError::Settings(format!(
            "--origin {s:?}: {why}; give the origin as http[s]://host[:port], such as https://s3.example.com"
        ))
    };
    let uri: hyper::Uri = s.parse().map_err(|_| bad("not a URL"))?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        _ => return Err(bad("the scheme must be http or https")),
    }
    if uri.host().map_or(true, str::is_empty) {
        return Err(bad("no host"));
    }
    if uri.path_and_query().is_some_and(|p| p.as_str() != "/") {
        return Err(bad("no path or query allowed"));
    }
    let authority = uri
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_default();
    format!("{}://{authority}", uri.scheme_str().unwrap_or("https"))
        .parse()
        .map_err(|_| bad("not a URL"))
}

/// The most bytes a client connection's socket may hold that TCP has not yet sent
/// (`TCP_NOTSENT_LOWAT`). Without a bound the kernel queues up to the send buffer (megabytes
/// once autotuned) whenever a client reads slower than the origin sends, and each of the
/// client's acknowledgements then sends from that queue in whatever context processes it: on
/// loopback, the client's own process, so a client and an origin sharing a core paid for the
/// gateway's sending too (a 1 GiB TLS download through a gateway on a core of its own: 75-82%
/// of direct; bounded, 100-103%). Bounded, the gateway writes as the window opens and sends from its
/// own core, and a slow client holds 128 KiB of kernel memory, not megabytes. Bytes in flight
/// are not limited, so a long link stays full: 128 KiB is 2 ms at 500 Mbit/s, far longer than
/// the gateway takes to refill it (4 to 128 KiB measured alike).
const UNSENT_QUEUE: u32 = 128 << 10;

/// An accepted client connection's TCP settings: no Nagle delay, a bounded unsent queue.
/// Failures are ignored: both are optimizations, and the connection works without them.
fn tune(tcp: &TcpStream) {
    let _ = tcp.set_nodelay(true);
    let _ = socket2::SockRef::from(tcp).set_tcp_notsent_lowat(UNSENT_QUEUE);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_without_delay_from_a_bounded_queue() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (_client, accepted) = tokio::join!(TcpStream::connect(address), listener.accept());
        let (tcp, _) = accepted.unwrap();
        tune(&tcp);
        assert!(tcp.nodelay().unwrap());
        let socket = socket2::SockRef::from(&tcp);
        assert_eq!(socket.tcp_notsent_lowat().unwrap(), UNSENT_QUEUE);
    }

    #[test]
    fn origins_are_scheme_and_authority_only() {
        assert_eq!(
            origin("http://127.0.0.1:9000").unwrap().to_string(),
            "http://127.0.0.1:9000/"
        );
        assert_eq!(
            origin("https://s3.example.com/")
                .unwrap()
                .authority()
                .unwrap()
                .as_str(),
            "s3.example.com"
        );
        for bad in [
            "s3.example.com",
            "ftp://h",
            "https://h/bucket",
            "https://h/?x=1",
            "http://",
        ] {
            let e = origin(bad).unwrap_err().to_string();
            assert!(e.contains("http[s]://host[:port]"), "{bad}: {e}");
        }
    }
}
