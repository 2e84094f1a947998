//! Single connections, for callers that keep their own pool: the gateway's warm upstream pool
//! must hold connections open from start-up, keep them alive and count what it does with them,
//! which hyper-util's pool cannot (no minimum idle, no keep-alive, no counters).
//!
//! A [`Dialer`] is the same connector stack as the client's pool (`transport.rs`): TCP_NODELAY,
//! spread over the DNS answers, under the congestion control asked for, TLS 1.3 and 1.2 with the
//! Mozilla roots or `--ca-bundle`'s, so both keep the same behaviour. It can offer HTTP/2 in
//! ALPN, which the client's pool does not (S3 picks HTTP/1.1; the gateway serves origins that
//! pick h2, such as MinIO).

use std::path::Path;

use hyper::Uri;
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::{Connection, HttpConnector};
use tokio::net::TcpStream;
use tower_service::Service;

use crate::congestion::WithCongestion;
use crate::connect_time::{ConnectTimes, Timed};
use crate::dns::SpreadResolver;
use crate::proxy::{Proxied, Proxies};
pub use crate::read_ahead::ReadAhead;
use crate::read_ahead::ReadAheadConnector;
use crate::{ClientError, ClientOptions};

/// The TCP and TLS connector the client's pool and [`Dialer`] share.
pub(crate) type Https = HttpsConnector<
    ReadAheadConnector<Timed<Proxied<WithCongestion<HttpConnector<SpreadResolver>>>>>,
>;

/// A connection as dialled: plain TCP, or TLS over it.
pub type Stream = MaybeHttpsStream<ReadAhead>;

/// A dialled connection and the protocol the server chose.
pub struct Dialed {
    /// The connection, ready for an HTTP handshake.
    pub stream: Stream,
    /// Whether TLS negotiated HTTP/2 (only when offered; never over plain HTTP).
    pub h2: bool,
}

impl Dialed {
    /// The TCP connection underneath (for socket options).
    pub fn tcp(&self) -> &TcpStream {
        match &self.stream {
            MaybeHttpsStream::Http(io) => io.tcp(),
            MaybeHttpsStream::Https(tls) => tls.inner().get_ref().0.inner().tcp(),
        }
    }
}

/// Opens one connection at a time to an origin, with the client's connector stack.
#[derive(Clone)]
pub struct Dialer {
    inner: Https,
}

impl std::fmt::Debug for Dialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dialer").finish_non_exhaustive()
    }
}

impl Dialer {
    /// A dialer with `options`' connect timeout and congestion control, trusting `ca_bundle`'s
    /// certificates (or the Mozilla roots), offering HTTP/2 in ALPN when `offer_h2`. It never
    /// goes through a proxy: the gateway's upstream is near it, and an operator's environment
    /// variables meant for other programs must not reroute it.
    pub fn new(
        options: &ClientOptions,
        ca_bundle: Option<&Path>,
        offer_h2: bool,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            inner: https(options, ca_bundle, None, offer_h2, &ConnectTimes::default())?,
        })
    }

    /// Connects (and handshakes TLS for `https` URIs) to `uri`'s origin.
    pub async fn dial(&self, uri: &Uri) -> Result<Dialed, ClientError> {
        let stream = self.inner.clone().call(uri.clone()).await.map_err(|e| {
            let origin = match (uri.scheme_str(), uri.authority()) {
                (Some(scheme), Some(authority)) => format!("{scheme}://{authority}"),
                _ => uri.to_string(),
            };
            crate::transport::connection_error(&origin, &*e)
        })?;
        let h2 = stream.connected().is_negotiated_h2();
        Ok(Dialed { stream, h2 })
    }
}

/// TCP_NODELAY (without it a request can wait a whole round trip), the connect timeout, the
/// congestion control, through `proxies` where they say so, and TLS over it for `https` URIs;
/// ALPN `h2` offered only when `offer_h2`. How long each TCP connect took (a tunnel's `CONNECT`
/// included) goes into `times`.
pub(crate) fn https(
    options: &ClientOptions,
    ca_bundle: Option<&Path>,
    proxies: Option<&Proxies>,
    offer_h2: bool,
    times: &ConnectTimes,
) -> Result<Https, ClientError> {
    let mut tcp = HttpConnector::new_with_resolver(SpreadResolver::new());
    tcp.set_nodelay(true);
    tcp.enforce_http(false);
    tcp.set_connect_timeout(Some(options.connect_timeout));
    let tcp = WithCongestion::new(tcp, options.tcp_congestion.as_deref())?;
    let tcp = Proxied {
        inner: tcp,
        proxies: proxies.cloned(),
        connect_timeout: options.connect_timeout,
    };
    let tcp = ReadAheadConnector {
        inner: Timed::new(tcp, times.clone()),
        bandwidth: options.max_bandwidth.clone(),
    };
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(if options.skip_certificate_check {
            crate::tls::client_config_unchecked(crate::tls::DEFAULT_VERSIONS)?
        } else {
            crate::tls::client_config(ca_bundle, crate::tls::DEFAULT_VERSIONS)?
        })
        .https_or_http();
    Ok(if offer_h2 {
        builder.enable_all_versions().wrap_connector(tcp)
    } else {
        builder.enable_http1().wrap_connector(tcp)
    })
}
