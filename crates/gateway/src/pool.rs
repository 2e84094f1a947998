//! The warm upstream pool: connections to the origin opened before requests need them, kept
//! alive below the origin's idle timeout, and counted.
//!
//! A client far from the origin gains from the edge only if the edge's request to the origin
//! rides a connection that is already open: a dial on the critical path costs the long round
//! trip twice more (TCP, TLS). hyper-util's pool opens nothing ahead of time, checks its idle
//! timeout only on checkout, and counts nothing, so this one, built on the client crate's
//! [`Dialer`] (TCP_NODELAY, DNS spread, congestion control, roots) and hyper's connections:
//!
//! - a keeper task holds [`Pool::target`] idle connections open from start-up: the configured
//!   minimum, or the most requests in flight at once over the last minute (at least 4), so a
//!   burst of N fresh clients finds N warm connections;
//! - an idle HTTP/1.1 connection gets a `HEAD /` after `keepalive` (15 s; S3 closes idle
//!   connections at about 20 s); an HTTP/2 origin gets one shared connection with h2 PINGs;
//! - a request whose pooled connection turns out closed is sent again, once, on a new one: any
//!   request hyper did not start writing, and body-less GET/HEAD/OPTIONS otherwise.
//!
//! It does not retry anything else (a PUT's body has been streamed away) and does not queue
//! requests behind busy connections (HTTP/1.1 carries one at a time: a request that finds none
//! idle dials its own).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use slipstream_client::{ClientError, Dialer};
use tokio::sync::Notify;

use crate::metrics::Metrics;

/// Errors of a request body on its way upstream.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The body of a request sent upstream.
pub(crate) type UpBody = BoxBody<Bytes, BoxError>;

/// How long the keeper waits after a failed dial before it dials again (an origin that is
/// down is not hammered; requests still dial on their own and get their answer).
const DIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Without keep-alives, idle connections are closed after this long (below S3's ~20 s).
const IDLE_LIMIT: Duration = Duration::from_secs(15);
/// The most of a response an HTTP/1.1 origin connection reads ahead of the client (hyper's
/// default is 400 KiB): once the client connection's socket holds only a bounded unsent queue
/// (server.rs), a client slower than the origin leaves the rest in this buffer.
const UPSTREAM_READ_BUFFER: usize = 128 << 10;
/// The window over which the most requests in flight at once is remembered (two halves).
const PEAK_WINDOW: Duration = Duration::from_secs(30);

/// One pool's settings: each worker thread has its own pool (workers.rs), holding its share
/// of the gateway's.
#[derive(Clone, Debug)]
pub(crate) struct PoolSettings {
    pub(crate) min_idle: Option<usize>,
    /// The least idle connections kept when `min_idle` is `None`.
    pub(crate) floor: usize,
    pub(crate) max_idle: usize,
    pub(crate) keepalive: Duration,
    pub(crate) connect_timeout: Duration,
}

/// The pool for one origin. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Pool {
    inner: Arc<Inner>,
}

struct Inner {
    origin: hyper::Uri,
    /// The origin's `host[:port]`, for keep-alive requests.
    authority: String,
    dialer: Dialer,
    settings: PoolSettings,
    metrics: Arc<Metrics>,
    state: Mutex<State>,
    wake: Notify,
}

#[derive(Default)]
struct State {
    idle: VecDeque<Idle>,
    /// The shared connection, once the origin picked HTTP/2.
    h2: Option<http2::SendRequest<UpBody>>,
    /// Whether the origin picked HTTP/2 on the last dial.
    origin_h2: bool,
    dialing: usize,
    /// Idle connections out for a keep-alive request (coming back).
    keeping: usize,
    in_flight: usize,
    peak: [usize; 2],
    peak_since: Option<Instant>,
    last_failure: Option<Instant>,
    stopped: bool,
    /// This pool's idle connections as last added to the shared gauge.
    counted_idle: usize,
}

struct Idle {
    send: http1::SendRequest<UpBody>,
    since: Instant,
}

/// A connection taken from the pool for one request.
pub(crate) enum Sender {
    H1(http1::SendRequest<UpBody>),
    H2(http2::SendRequest<UpBody>),
}

/// A connection to send one request on, and how it was had.
pub(crate) struct Lease {
    sender: Sender,
    /// Whether the connection was open before this request asked for it.
    pub(crate) reused: bool,
}

impl Lease {
    /// Whether the connection speaks HTTP/2.
    pub(crate) fn is_h2(&self) -> bool {
        matches!(self.sender, Sender::H2(_))
    }
}

/// A request counted as in flight until dropped (when its response body ends).
pub(crate) struct InFlight {
    pool: Pool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut s = self.pool.inner.lock();
        s.in_flight = s.in_flight.saturating_sub(1);
        drop(s);
        self.pool.inner.metrics.upstream_busy.dec();
    }
}

impl Pool {
    /// A pool for `origin` (`scheme://authority`), warming from now on (on the current runtime)
    /// until [`Pool::stop`].
    pub(crate) fn start(
        origin: hyper::Uri,
        dialer: Dialer,
        settings: PoolSettings,
        metrics: Arc<Metrics>,
    ) -> Self {
        let authority = origin
            .authority()
            .map(|a| a.as_str().to_owned())
            .unwrap_or_default();
        let pool = Self {
            inner: Arc::new(Inner {
                origin,
                authority,
                dialer,
                settings,
                metrics,
                state: Mutex::default(),
                wake: Notify::new(),
            }),
        };
        tokio::spawn(pool.clone().keep());
        pool
    }

    /// Stops the keeper and closes the idle connections.
    pub(crate) fn stop(&self) {
        let mut s = self.inner.lock();
        s.stopped = true;
        s.idle.clear();
        s.h2 = None;
        self.count_idle(&mut s);
        drop(s);
        self.inner.wake.notify_one();
    }

    /// Counts a request in flight (sizing the pool) until the guard is dropped.
    pub(crate) fn in_flight(&self) -> InFlight {
        let mut s = self.inner.lock();
        s.in_flight += 1;
        let now = Instant::now();
        match s.peak_since {
            Some(t) if now.duration_since(t) < PEAK_WINDOW => {}
            Some(t) if now.duration_since(t) < 2 * PEAK_WINDOW => {
                s.peak = [s.peak[1], 0];
                s.peak_since = Some(now);
            }
            _ => {
                s.peak = [0, 0];
                s.peak_since = Some(now);
            }
        }
        s.peak[1] = s.peak[1].max(s.in_flight);
        drop(s);
        self.inner.metrics.upstream_busy.inc();
        InFlight { pool: self.clone() }
    }

    /// Idle connections the keeper holds open now.
    fn target(&self, s: &State) -> usize {
        let observed = s.peak[0].max(s.peak[1]).max(self.inner.settings.floor);
        self.inner
            .settings
            .min_idle
            .unwrap_or(observed)
            .min(self.inner.settings.max_idle)
    }

    /// An open connection: the shared HTTP/2 one, the most recently used idle one, or (none
    /// idle) a new one dialled now.
    pub(crate) async fn checkout(&self) -> Result<Lease, String> {
        let started = Instant::now();
        if let Some(sender) = self.take() {
            self.inner.metrics.reuses.inc();
            self.inner
                .metrics
                .pool_wait
                .observe(started.elapsed().as_secs_f64());
            self.inner.wake.notify_one();
            return Ok(Lease {
                sender,
                reused: true,
            });
        }
        self.inner.metrics.waits.inc();
        let sender = self.dial().await;
        self.inner
            .metrics
            .pool_wait
            .observe(started.elapsed().as_secs_f64());
        self.inner.wake.notify_one();
        Ok(Lease {
            sender: sender?,
            reused: false,
        })
    }

    /// A new connection, not from the pool (for a retry after a stale one).
    pub(crate) async fn fresh(&self) -> Result<Lease, String> {
        Ok(Lease {
            sender: self.dial().await?,
            reused: false,
        })
    }

    fn take(&self) -> Option<Sender> {
        let mut s = self.inner.lock();
        if let Some(h2) = &s.h2 {
            if !h2.is_closed() {
                return Some(Sender::H2(h2.clone()));
            }
            s.h2 = None;
        }
        while let Some(idle) = s.idle.pop_back() {
            if idle.send.is_ready() && !idle.send.is_closed() {
                self.count_idle(&mut s);
                return Some(Sender::H1(idle.send));
            }
        }
        self.count_idle(&mut s);
        None
    }

    /// Brings the shared `upstream_idle` gauge in line with this pool's shelf: every worker's
    /// pool adds its own count, so none may set the gauge to it.
    fn count_idle(&self, s: &mut State) {
        let (now, before) = (s.idle.len(), s.counted_idle);
        s.counted_idle = now;
        let change = i64::try_from(now.abs_diff(before)).unwrap_or(i64::MAX);
        match now.cmp(&before) {
            std::cmp::Ordering::Greater => self.inner.metrics.upstream_idle.inc_by(change),
            std::cmp::Ordering::Less => self.inner.metrics.upstream_idle.dec_by(change),
            std::cmp::Ordering::Equal => 0,
        };
    }

    /// Dials, handshakes HTTP/1.1 or HTTP/2 (as the origin chose in ALPN), and counts.
    /// Errors say why no connection could be had (refused, unreachable, TLS refused, timed out).
    async fn dial(&self) -> Result<Sender, String> {
        let started = Instant::now();
        let m = &self.inner.metrics;
        m.dials.inc();
        let dialled = tokio::time::timeout(
            self.inner.settings.connect_timeout,
            self.inner.dialer.dial(&self.inner.origin),
        )
        .await;
        let dialled = match dialled {
            Ok(Ok(d)) => d,
            Ok(Err(e)) => {
                m.dial_failures.inc();
                return Err(connect_message(&e));
            }
            Err(_) => {
                m.dial_failures.inc();
                return Err(format!(
                    "no connection within {:?}",
                    self.inner.settings.connect_timeout
                ));
            }
        };
        abort_with_reset(dialled.tcp());
        let io = dialled.stream;
        let handshake_failed = |e: hyper::Error| {
            m.dial_failures.inc();
            format!("HTTP handshake: {e}")
        };
        let sender = if dialled.h2 {
            let mut builder = http2::Builder::new(TokioExecutor::new());
            builder.timer(TokioTimer::new());
            if !self.inner.settings.keepalive.is_zero() {
                builder
                    .keep_alive_interval(self.inner.settings.keepalive)
                    .keep_alive_while_idle(true);
            }
            let (send, conn) = builder.handshake(io).await.map_err(handshake_failed)?;
            tokio::spawn(conn);
            let mut s = self.inner.lock();
            s.origin_h2 = true;
            s.h2 = Some(send.clone());
            Sender::H2(send)
        } else {
            let (send, conn) = http1::Builder::new()
                .max_buf_size(UPSTREAM_READ_BUFFER)
                .handshake(io)
                .await
                .map_err(handshake_failed)?;
            tokio::spawn(conn);
            self.inner.lock().origin_h2 = false;
            Sender::H1(send)
        };
        m.upstream_connect.observe(started.elapsed().as_secs_f64());
        Ok(sender)
    }

    /// Sends `request` on `lease`'s connection; an HTTP/1.1 connection goes back to the pool
    /// once the response's body has been read to its end (a response dropped half-read closes
    /// it). A request hyper did not start writing comes back in the error.
    pub(crate) async fn send(
        &self,
        lease: Lease,
        request: Request<UpBody>,
    ) -> Result<Response<Incoming>, (String, Option<Request<UpBody>>)> {
        match lease.sender {
            Sender::H2(mut send) => send.try_send_request(request).await.map_err(|mut e| {
                let back = e.take_message();
                (slipstream_client::describe(e.error()), back)
            }),
            Sender::H1(mut send) => {
                // Two kinds of exchange leave bytes of the request unread by the origin, which it
                // would then read as the start of the next request on the connection ("error when
                // parsing the HTTP request"), so such a connection is not reused:
                // - an error answer to a request with a body can come before the origin read
                //   that body (versitygw refuses a bad signature at once);
                // - a body sent chunked (no length known: boto3's aws-chunked uploads over
                //   HTTPS) can be read by an origin to the end of its aws-chunked content and no
                //   further: versitygw 1.8 leaves HTTP's closing `0\r\n\r\n` unread, and
                //   answers it with a 400 and a close that races the next request.
                let has_body = !hyper::body::Body::is_end_stream(request.body());
                let chunked = has_body && sent_chunked(&request);
                // The verdict comes with the response's status; the connection waits for it
                // even when its response was read to the end first (a small error answer can
                // be, before this task sees the status). No verdict (the request failed): not
                // reused.
                let (verdict, reusable) = tokio::sync::oneshot::channel::<bool>();
                let response = send.try_send_request(request);
                let pool = self.clone();
                tokio::spawn(async move {
                    // Ready once the response was read to its end.
                    if send.ready().await.is_ok() && reusable.await == Ok(true) {
                        pool.put(send);
                    }
                });
                let response = response.await.map_err(|mut e| {
                    let back = e.take_message();
                    (slipstream_client::describe(e.error()), back)
                })?;
                let refused = has_body && response.status().as_u16() >= 400;
                if chunked || refused {
                    self.inner.metrics.not_reused.inc();
                }
                let _ = verdict.send(!(chunked || refused));
                Ok(response)
            }
        }
    }

    /// An HTTP/1.1 connection ready for its next request, back on the shelf (closed when the
    /// shelf is full or the pool stopped).
    fn put(&self, send: http1::SendRequest<UpBody>) {
        let mut s = self.inner.lock();
        if s.stopped || s.idle.len() >= self.inner.settings.max_idle {
            return;
        }
        s.idle.push_back(Idle {
            send,
            since: Instant::now(),
        });
        self.count_idle(&mut s);
    }

    /// The keeper: every 250 ms (sooner when a connection is taken), drops closed connections,
    /// dials up to the target, and sends keep-alives on connections idle for `keepalive`.
    async fn keep(self) {
        let tick = Duration::from_millis(250);
        loop {
            let _ = tokio::time::timeout(tick, self.inner.wake.notified()).await;
            let (dials, stale) = {
                let mut s = self.inner.lock();
                if s.stopped {
                    return;
                }
                s.idle.retain(|i| !i.send.is_closed());
                let target = self.target(&s);
                let stale = self.due_for_keepalive(&mut s, target);
                let backing_off = s.last_failure.is_some_and(|t| t.elapsed() < DIAL_BACKOFF);
                let want = if s.origin_h2 {
                    usize::from(!s.h2.as_ref().is_some_and(|h| !h.is_closed()))
                } else {
                    self.target(&s)
                };
                s.keeping += stale.len();
                let have = if s.origin_h2 { 0 } else { s.idle.len() } + s.dialing + s.keeping;
                let dials = if backing_off {
                    0
                } else {
                    want.saturating_sub(have)
                };
                s.dialing += dials;
                self.count_idle(&mut s);
                (dials, stale)
            };
            for idle in stale {
                tokio::spawn(self.clone().keep_alive(idle.send));
            }
            for _ in 0..dials {
                tokio::spawn(self.clone().warm_one());
            }
        }
    }

    /// Takes out the idle connections due for a keep-alive (or, without keep-alives, drops
    /// those idle past [`IDLE_LIMIT`]). Those beyond `target` (left from a burst) are closed
    /// instead of kept alive.
    fn due_for_keepalive(&self, s: &mut State, target: usize) -> Vec<Idle> {
        let keepalive = self.inner.settings.keepalive;
        if keepalive.is_zero() {
            s.idle.retain(|i| i.since.elapsed() < IDLE_LIMIT);
            return Vec::new();
        }
        let (due, fresh): (VecDeque<Idle>, VecDeque<Idle>) = std::mem::take(&mut s.idle)
            .into_iter()
            .partition(|i| i.since.elapsed() >= keepalive);
        s.idle = fresh;
        let mut due: Vec<Idle> = due.into();
        let surplus = (s.idle.len() + due.len() + s.keeping).saturating_sub(target);
        due.truncate(due.len().saturating_sub(surplus));
        due
    }

    /// A `HEAD /` on an idle connection, read to its end; the connection goes back to the
    /// pool if it is still open (any status will do: the point is the traffic).
    async fn keep_alive(self, mut send: http1::SendRequest<UpBody>) {
        self.inner.metrics.keepalives.inc();
        let request = Request::head("/")
            .header(hyper::header::HOST, &self.inner.authority)
            .header(hyper::header::USER_AGENT, "slipstream-gateway (keep-alive)")
            .body(Empty::new().map_err(|never| match never {}).boxed());
        let Ok(request) = request else { return };
        let answered = tokio::time::timeout(self.inner.settings.connect_timeout, async {
            let response = send.send_request(request).await.ok()?;
            response.into_body().collect().await.ok()
        })
        .await;
        let alive = matches!(answered, Ok(Some(_))) && send.ready().await.is_ok();
        {
            let mut s = self.inner.lock();
            s.keeping = s.keeping.saturating_sub(1);
        }
        if alive {
            self.put(send);
        }
    }

    /// Dials one connection for the shelf.
    async fn warm_one(self) {
        let result = self.dial().await;
        let mut s = self.inner.lock();
        s.dialing = s.dialing.saturating_sub(1);
        match result {
            Ok(Sender::H1(send)) => {
                s.last_failure = None;
                drop(s);
                self.put(send);
            }
            Ok(Sender::H2(_)) => s.last_failure = None,
            Err(_) => s.last_failure = Some(Instant::now()),
        }
    }

    /// Counts a retry after a stale connection.
    pub(crate) fn count_stale_retry(&self) {
        self.inner.metrics.stale_retries.inc();
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

/// Whether hyper sends `request`'s body with chunked framing: it has no `Content-Length` and
/// its size is not known ahead.
fn sent_chunked(request: &Request<UpBody>) -> bool {
    !request
        .headers()
        .contains_key(hyper::header::CONTENT_LENGTH)
        && hyper::body::Body::size_hint(request.body())
            .exact()
            .is_none()
}

/// Closes of this connection reset it (a zero linger). hyper closes an upstream connection
/// mid-request when the client's body fails (the client went away): with a plain FIN the origin
/// reads a clean end of body, and some origins (versitygw among them) then store the truncated
/// object. A reset makes the origin's read fail, so nothing is stored. Closes after a finished
/// exchange lose nothing: the origin has answered, so it read the whole request.
fn abort_with_reset(tcp: &tokio::net::TcpStream) {
    let _ = socket2::SockRef::from(tcp).set_linger(Some(Duration::ZERO));
}

fn connect_message(e: &ClientError) -> String {
    match e {
        ClientError::Network(m) | ClientError::Tls(m) => m.clone(),
        other => other.to_string(),
    }
}
