//! The bottom layer: a pool of kept-alive connections and plain requests over it.
//!
//! TCP_NODELAY on every connection (without it a request can wait a whole round trip), spread
//! over the DNS answers (`dns.rs`), under the congestion control asked for (`congestion.rs`),
//! opened ahead of need (`warm.rs`); HTTP and HTTPS (rustls with TLS 1.3 and 1.2: `tls.rs`); idle
//! connections closed after 15 s, below S3's ~20 s, so the pool never hands out one the server
//! already closed. Nothing here signs: the credential sources send their unsigned requests with
//! [`request`], and the S3 client (`client.rs`) signs its own on top of [`Http`].

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::activity::Sending;
use crate::connect_time::ConnectTimes;
use crate::proxy::Proxies;
use crate::warm::Warm;
use crate::{ClientError, ClientOptions};

/// The pool's connector: TCP (spread over DNS answers, under the congestion control asked
/// for), TLS when the endpoint is HTTPS, and connections opened ahead of need.
pub(crate) type Connector = Warm<crate::dial::Https>;
/// The pool.
pub(crate) type Http = Client<Connector, Sending>;

/// The connection pool: TCP_NODELAY on every connection (without it a request can wait a whole
/// round trip), HTTP and HTTPS (rustls with TLS 1.3 and 1.2; the Mozilla roots, or only the
/// certificates of `ca_bundle`), idle connections closed before S3 does; through `proxies`
/// where they say so.
pub(crate) fn http_client(
    options: &ClientOptions,
    ca_bundle: Option<&Path>,
    proxies: Option<&Proxies>,
) -> Result<Http, ClientError> {
    if let Some(why) = proxies.and_then(Proxies::unusable) {
        return Err(ClientError::Request(why.to_owned()));
    }
    let https = crate::dial::https(options, ca_bundle, proxies, false, &ConnectTimes::default())?;
    Ok(pool_over(options, Warm::new(https)))
}

/// The most a connection buffers in user space each way: request bytes queued behind a full
/// socket, and one read of a response. hyper's default (400 KiB) times the hundreds of
/// connections of many objects in flight over a long link is memory the kernel's socket
/// buffers already cover: 256 uploads of 1 MiB files held about 100 MiB of it.
const CONNECTION_BUFFER: usize = 128 << 10;

/// The client's pools: one for every request, one for listings.
pub(crate) struct Pools {
    pub http: Http,
    /// The main pool's connector, which shares its shelf of connections opened ahead.
    pub warm: Connector,
    /// Listing pages only, over connections of their own that nothing opens ahead. A listing
    /// of several pages sends each on the connection the last one came on, whose congestion
    /// window has grown on it; in the main pool its next page could be handed a connection
    /// just opened for the objects (a shelved connection is ready at once, before the last
    /// page's connection is back), which starts its 300 KB page in slow start again.
    pub listing: Http,
    /// How long the TCP connects of both pools took.
    pub connect_times: ConnectTimes,
}

/// The client's pools (see [`Pools`]), through `proxies` where they say so.
pub(crate) fn pools(
    options: &ClientOptions,
    ca_bundle: Option<&Path>,
    proxies: Option<&Proxies>,
) -> Result<Pools, ClientError> {
    let connect_times = ConnectTimes::default();
    let https = crate::dial::https(options, ca_bundle, proxies, false, &connect_times)?;
    let warm = Warm::new(https.clone());
    Ok(Pools {
        http: pool_over(options, warm.clone()),
        warm,
        listing: pool_over(options, Warm::new(https)),
        connect_times,
    })
}

/// A connection pool over `connector`.
fn pool_over(options: &ClientOptions, connector: Connector) -> Http {
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(options.idle_timeout)
        .pool_max_idle_per_host(options.max_idle_connections)
        .http1_max_buf_size(CONNECTION_BUFFER)
        .build(connector)
}

/// A failed connection to `origin` (`scheme://host:port`, named because "connection
/// refused" alone does not say which endpoint a typo or a stopped server is at): a refused TLS
/// certificate will be refused again (not retried, and reported as such), and so will a
/// proxy's refusal to tunnel (its policy or credentials); anything else may be transient.
pub(crate) fn connection_error(origin: &str, e: &dyn std::error::Error) -> ClientError {
    let text = format!("{origin}: {}", crate::error::describe(e));
    if text.contains("invalid peer certificate") {
        ClientError::Tls(text)
    } else if text.contains(crate::proxy::REFUSED) {
        ClientError::Request(text)
    } else {
        ClientError::Network(text)
    }
}

/// One request without SigV4 and without a body; the body of a 2xx answer.
pub(crate) async fn get(
    http: &Http,
    method: Method,
    url: &str,
    headers: &[(&str, String)],
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    request(http, method, url, headers, Bytes::new(), timeout).await
}

/// One request without SigV4; the body of a 2xx answer. Error messages name the URL without
/// its query and the status, never the request's headers, body or query (which may hold
/// tokens).
pub(crate) async fn request(
    http: &Http,
    method: Method,
    url: &str,
    headers: &[(&str, String)],
    body: Bytes,
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    let mut builder = Request::builder().method(method).uri(url);
    for (n, v) in headers {
        builder = builder.header(*n, v.as_str());
    }
    let request = builder
        .body(Sending::from(body))
        .map_err(|e| ClientError::Request(e.to_string()))?;
    let url = url.split_once('?').map_or(url, |(shown, _)| shown);
    let response = tokio::time::timeout(timeout, http.request(request))
        .await
        .map_err(|_| ClientError::Network(format!("{url} did not answer within {timeout:?}")))?
        .map_err(|e| ClientError::Network(format!("{url}: {}", crate::error::describe(&e))))?;
    let status = response.status();
    let body = tokio::time::timeout(
        timeout,
        Limited::new(response.into_body(), 1 << 20).collect(),
    )
    .await
    .map_err(|_| ClientError::Network(format!("{url}: the body did not arrive")))?
    .map_err(|e| ClientError::Network(format!("{url}: {}", crate::error::describe(&*e))))?
    .to_bytes();
    if !status.is_success() {
        let code = crate::xml::error(&body)
            .map(|(c, _)| format!(" ({c})"))
            .unwrap_or_default();
        return Err(ClientError::Response(format!(
            "{url} answered {status}{code}"
        )));
    }
    Ok(body)
}
