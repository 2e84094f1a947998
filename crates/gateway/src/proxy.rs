//! Pass-through forwarding: a client's request goes to the origin as it came, and the origin's
//! answer comes back as it was, both streamed.
//!
//! "As it came": the method, the raw path and query byte for byte (`a//b`, `%2F`, `+`, `..`
//! stay: S3 does not normalize, and the client signed those bytes), every header but the
//! hop-by-hop ones, and `Host` unchanged (the client signed it; an origin behind the edge must
//! accept the edge's name). aws-chunked bodies pass untouched. The origin authenticates; this
//! mode checks nothing (the verifying edge is the next step, and it will authorize before
//! signing anything upstream).
//!
//! What the gateway answers itself, as S3-style XML: 503 when the origin cannot be reached,
//! 502 when it closed the connection without answering, 504 when it did not answer within
//! `origin_timeout` of the request's last byte.

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body::Body as _;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONNECTION, EXPECT, HOST, LOCATION};
use hyper::{Method, Request, Response, StatusCode, Uri};

use crate::access_log::{AccessLog, Record};
use crate::body::{Relay, Upload};
use crate::metrics::{ConnectionLabels, Metrics, RequestLabels};
use crate::pool::{Lease, Pool, UpBody};

/// Headers that belong to one connection, not to the request (RFC 9110 §7.6.1).
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "transfer-encoding",
    "upgrade",
];

/// What every request handler shares.
pub(crate) struct Proxy {
    pub(crate) pool: Pool,
    pub(crate) origin: Uri,
    pub(crate) origin_timeout: Duration,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) log: Arc<AccessLog>,
    /// Verify mode's keys, verifier and origin signer; `None` passes requests through.
    pub(crate) verify: Option<Arc<crate::verify::Verify>>,
}

/// The client connection a request came on.
pub(crate) struct ClientConnection {
    pub(crate) peer: SocketAddr,
    pub(crate) accepted: Instant,
    /// Whether no request has been answered on it yet.
    pub(crate) fresh: AtomicBool,
    /// Whether the client speaks TLS to the edge (`https` in the URLs the edge gives back).
    pub(crate) tls: bool,
}

impl Proxy {
    /// Forwards `request` and returns the origin's answer, or the gateway's own when there is
    /// none. Never fails: every error becomes an S3-style answer.
    pub(crate) async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        connection: Arc<ClientConnection>,
    ) -> Result<Response<Relay>, std::convert::Infallible> {
        let (parts, body) = request.into_parts();
        let protocol = match parts.version {
            hyper::Version::HTTP_2 => "HTTP/2",
            hyper::Version::HTTP_10 => "HTTP/1.0",
            _ => "HTTP/1.1",
        };
        let host = client_host(&parts);
        let mut record = Record::start(&self.log, connection.peer, protocol, &parts, &host);
        let fresh = connection.fresh.swap(false, Ordering::Relaxed);
        let since = if fresh {
            connection.accepted
        } else {
            record.started()
        };
        let in_flight = self.pool.in_flight();
        let counted = Arc::clone(&record.bytes_in);
        let admitted = match &self.verify {
            Some(verify) => {
                verify
                    .admit(parts, body, &host, counted, connection.tls)
                    .await
            }
            None => pass_through(parts, body, host, counted, connection.tls),
        };
        let Admitted {
            request,
            path_and_query,
            host,
            safe,
            body_done,
            gate,
            failure,
        } = match admitted {
            Ok(a) => a,
            Err(answer) => {
                record.ttfb = Some(record.started().elapsed());
                return Ok(self.refuse(answer, record));
            }
        };
        let sent = Instant::now();
        let answer = self
            .exchange(
                request,
                &path_and_query,
                &host,
                safe,
                body_done,
                &mut record,
            )
            .await;
        if let Some(gate) = gate {
            // The origin answered: a body it did not ask for is not sent.
            gate.refuse();
        }
        let ttfb = since.elapsed();
        self.metrics
            .ttfb
            .get_or_create(&ConnectionLabels {
                connection: if fresh { "fresh" } else { "reused" },
            })
            .observe(ttfb.as_secs_f64());
        record.ttfb = Some(record.started().elapsed());
        Ok(match answer {
            Ok(response) => {
                self.metrics
                    .origin_ttfb
                    .observe(sent.elapsed().as_secs_f64());
                let (mut head, body) = response.into_parts();
                strip_hop_by_hop(&mut head.headers);
                if let Some(verify) = &self.verify {
                    self.restore_location(verify, &mut head.headers, connection.tls, &record.host);
                }
                record.status = head.status.as_u16();
                Response::from_parts(head, Relay::origin(body, record, in_flight))
            }
            Err(answer) => {
                let failed = failure.and_then(|f| f.lock().ok().and_then(|mut e| e.take()));
                let answer = failed.map_or(answer, crate::verify::refuse);
                self.refuse(answer, record)
            }
        })
    }

    /// In verify mode the origin is addressed by its own name, so a `Location` it returns (a
    /// POST upload's object URL) names the origin: given back as the URL the client used.
    fn restore_location(
        &self,
        verify: &crate::verify::Verify,
        headers: &mut HeaderMap,
        tls: bool,
        client_host: &str,
    ) {
        let Some(location) = headers.get(LOCATION).and_then(|v| v.to_str().ok()) else {
            return;
        };
        let origin = format!(
            "{}://{}",
            self.origin.scheme_str().unwrap_or("https"),
            self.origin.authority().map_or("", |a| a.as_str())
        );
        let scheme = if tls { "https" } else { "http" };
        if let Some(value) = verify
            .client_location(location, &origin, scheme, client_host)
            .and_then(|l| HeaderValue::from_str(&l).ok())
        {
            headers.insert(LOCATION, value);
        }
    }

    /// The gateway's own answer, counted and logged.
    fn refuse(&self, (status, code, message): Answer, mut record: Record) -> Response<Relay> {
        record.status = status.as_u16();
        record.error = Some(message.clone());
        self.metrics
            .errors
            .get_or_create(&RequestLabels {
                method: record.method.clone(),
                status: record.status,
            })
            .inc();
        let resource = record.path.clone();
        crate::s3_error::answer(status, code, &message, &resource, record)
    }

    /// Sends the request, and again once on a new connection if a pooled one turned out
    /// closed: a request hyper did not start writing comes back to be sent again; a body-less
    /// GET, HEAD or OPTIONS is rebuilt (its method and headers kept for that). The origin's
    /// response head, or the gateway's answer.
    async fn exchange(
        &self,
        request: Request<UpBody>,
        path_and_query: &str,
        host: &str,
        safe: bool,
        body_done: Option<tokio::sync::oneshot::Receiver<()>>,
        record: &mut Record,
    ) -> Result<Response<Incoming>, Answer> {
        let template = safe.then(|| (request.method().clone(), request.headers().clone()));
        let lease = self
            .pool
            .checkout()
            .await
            .map_err(|m| self.unreachable(m))?;
        let reused = lease.reused;
        record.reused = Some(reused);
        let (message, back) = match self
            .attempt(lease, request, path_and_query, host, body_done)
            .await?
        {
            Ok(response) => return Ok(response),
            Err(failed) => failed,
        };
        let unsent = back.filter(|_| reused || safe);
        let again = unsent.or_else(|| {
            let (method, headers) = template.filter(|_| reused)?;
            let mut r = Request::new(Empty::new().map_err(|n| match n {}).boxed());
            *r.method_mut() = method;
            *r.headers_mut() = headers;
            Some(r)
        });
        let Some(request) = again else {
            return Err(closed(&message));
        };
        self.pool.count_stale_retry();
        let lease = self.pool.fresh().await.map_err(|m| self.unreachable(m))?;
        record.reused = Some(false);
        match self
            .attempt(lease, request, path_and_query, host, None)
            .await?
        {
            Ok(response) => Ok(response),
            Err((message, _)) => Err(closed(&message)),
        }
    }

    /// One try on `lease`: the response head, or why the connection failed (with the request
    /// if it was not sent); a timeout is the gateway's answer.
    async fn attempt(
        &self,
        lease: Lease,
        mut request: Request<UpBody>,
        path_and_query: &str,
        host: &str,
        body_done: Option<tokio::sync::oneshot::Receiver<()>>,
    ) -> Result<Result<Response<Incoming>, Failed>, Answer> {
        self.fit(&mut request, &lease, path_and_query, host)?;
        let exchange = self.pool.send(lease, request);
        let answered = match body_done {
            Some(done) => self.within_timeout(exchange, done).await,
            None => self.within_timeout(exchange, std::future::ready(())).await,
        };
        answered.map_err(|()| {
            (
                StatusCode::GATEWAY_TIMEOUT,
                "GatewayTimeout",
                format!(
                    "the origin did not answer within {:?} of the request",
                    self.origin_timeout
                ),
            )
        })
    }

    /// The exchange, with `origin_timeout` counted from the request body's end.
    async fn within_timeout<F, T>(
        &self,
        exchange: F,
        body_done: impl std::future::Future,
    ) -> Result<T, ()>
    where
        F: std::future::Future<Output = T>,
    {
        let mut exchange = pin!(exchange);
        tokio::select! {
            r = &mut exchange => Ok(r),
            _ = body_done => tokio::time::timeout(self.origin_timeout, exchange).await.map_err(|_| ()),
        }
    }

    /// The request target and `Host` for the connection's protocol: origin-form and a `Host`
    /// header on HTTP/1.1, an absolute URI (its authority the client's host) on HTTP/2.
    fn fit(
        &self,
        request: &mut Request<UpBody>,
        lease: &Lease,
        path_and_query: &str,
        host: &str,
    ) -> Result<(), Answer> {
        let bad = |e: String| (StatusCode::BAD_REQUEST, "InvalidRequest", e);
        let uri = if lease.is_h2() {
            request.headers_mut().remove(HOST);
            let scheme = self.origin.scheme_str().unwrap_or("https");
            format!("{scheme}://{host}{path_and_query}")
        } else {
            if !host.is_empty() {
                let value = HeaderValue::from_str(host).map_err(|e| bad(e.to_string()))?;
                request.headers_mut().insert(HOST, value);
            }
            path_and_query.to_owned()
        };
        *request.uri_mut() = uri
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| bad(e.to_string()))?;
        *request.version_mut() = if lease.is_h2() {
            hyper::Version::HTTP_2
        } else {
            hyper::Version::HTTP_11
        };
        Ok(())
    }

    fn unreachable(&self, m: String) -> Answer {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            format!("the origin {} cannot be reached: {m}", self.origin),
        )
    }
}

/// The gateway's own answer: status, S3 error code, message.
pub(crate) type Answer = (StatusCode, &'static str, String);

/// A request ready for the origin: pass-through's as it came, verify mode's as it was signed.
pub(crate) struct Admitted {
    /// Method, headers and body (the target is set per connection).
    pub(crate) request: Request<UpBody>,
    pub(crate) path_and_query: String,
    /// The `Host` (or `:authority`) to send.
    pub(crate) host: String,
    /// A body-less GET, HEAD or OPTIONS: may be sent again on a stale connection.
    pub(crate) safe: bool,
    /// Told when the body has been read to its end (`None`: no body).
    pub(crate) body_done: Option<tokio::sync::oneshot::Receiver<()>>,
    /// `Expect: 100-continue` passed through: opened by the origin's `100`.
    pub(crate) gate: Option<crate::body::Continue>,
    /// Verify mode: why a body failed verification on its way, if it did.
    pub(crate) failure: Option<crate::verify::FailureSlot>,
}

/// Pass-through: the request as it came, minus hop-by-hop headers, its body streamed (held
/// for the origin's `100 Continue` when the client expects one).
fn pass_through(
    parts: hyper::http::request::Parts,
    body: Incoming,
    host: String,
    counted: Arc<std::sync::atomic::AtomicU64>,
    tls: bool,
) -> Result<Admitted, Answer> {
    // One walk over the names: hop-by-hop headers to drop, an SSE-C key to refuse in the clear.
    let (mut hop_by_hop, mut customer_key) = (false, false);
    for name in parts.headers.keys() {
        let name = name.as_str();
        hop_by_hop |= HOP_BY_HOP.contains(&name);
        customer_key |= crate::customer_key::names_key(name);
    }
    if !tls
        && (customer_key || crate::customer_key::query_names_key(parts.uri.query().unwrap_or("")))
    {
        return Err(crate::customer_key::insecure());
    }
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let bodyless = body.is_end_stream();
    let safe = bodyless && matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
    let expect_continue = parts
        .headers
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    // The origin's response timeout starts when the body has been read (a body-less
    // request's at once: `None`).
    let (upload, gate, body_done): (UpBody, _, _) = if bodyless {
        (
            Empty::new().map_err(|never| match never {}).boxed(),
            None,
            None,
        )
    } else {
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        if expect_continue {
            let (u, gate) = Upload::gated(body, counted, done_tx);
            (u.boxed(), Some(gate), Some(done_rx))
        } else {
            (
                Upload::new(body, counted, done_tx).boxed(),
                None,
                Some(done_rx),
            )
        }
    };
    let mut request = Request::new(upload);
    *request.method_mut() = parts.method;
    *request.headers_mut() = parts.headers;
    if hop_by_hop {
        strip_named_hop_by_hop(request.headers_mut());
    }
    if let Some(gate) = &gate {
        let gate = gate.clone();
        hyper::ext::on_informational(&mut request, move |r| {
            if r.status() == StatusCode::CONTINUE {
                gate.open();
            }
        });
    }
    Ok(Admitted {
        request,
        path_and_query,
        host,
        safe,
        body_done,
        gate,
        failure: None,
    })
}

/// A connection that failed: why, and the request if hyper did not start sending it.
type Failed = (String, Option<Request<UpBody>>);

/// The origin closed the connection without answering.
fn closed(message: &str) -> Answer {
    (
        StatusCode::BAD_GATEWAY,
        "BadGateway",
        format!("the origin closed the connection without answering: {message}"),
    )
}

/// The host the client addressed (and signed): `Host`, else HTTP/2's `:authority`.
fn client_host(parts: &hyper::http::request::Parts) -> String {
    parts
        .headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| parts.uri.authority().map(|a| a.as_str().to_owned()))
        .unwrap_or_default()
}

/// Removes the hop-by-hop headers (and those `Connection` names). Most requests and responses
/// carry none, so one look at the names comes first: each `remove` by name parses and hashes
/// it, and the eight of them were about 2,200 instructions a message, twice a request.
pub(crate) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if headers.keys().any(|n| HOP_BY_HOP.contains(&n.as_str())) {
        strip_named_hop_by_hop(headers);
    }
}

/// [`strip_hop_by_hop`] once a walk found one.
fn strip_named_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (n, v) in pairs {
            m.append(HeaderName::from_static(n), HeaderValue::from_static(v));
        }
        m
    }

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_removed() {
        let mut none = map(&[("host", "h"), ("x-amz-date", "d"), ("content-length", "0")]);
        strip_hop_by_hop(&mut none);
        assert_eq!(none.len(), 3);

        let mut some = map(&[
            ("host", "h"),
            ("connection", "x-private, close"),
            ("x-private", "p"),
            ("keep-alive", "timeout=5"),
            ("te", "trailers"),
            ("x-amz-date", "d"),
        ]);
        strip_hop_by_hop(&mut some);
        let mut left: Vec<&str> = some.keys().map(HeaderName::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["host", "x-amz-date"]);

        // A name listed in Connection is removed even when no fixed hop-by-hop name is present
        // but Connection itself.
        let mut listed = map(&[("connection", "x-a"), ("x-a", "1"), ("x-b", "2")]);
        strip_hop_by_hop(&mut listed);
        assert_eq!(
            listed.keys().map(HeaderName::as_str).collect::<Vec<_>>(),
            ["x-b"]
        );
    }
}
