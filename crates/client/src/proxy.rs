//! HTTP proxies, taken as botocore, the AWS CLI and s5cmd take them: from `https_proxy` for
//! `https` endpoints and `http_proxy` for `http` ones (lower case first, then upper case, as
//! Python's urllib reads them), with `no_proxy` naming the hosts that go direct
//! (`no_proxy.rs`), or given in code (the Python `Client`'s
//! `proxies=`, as boto3's `Config(proxies=...)`).
//!
//! How a connection goes through one: to an `https` endpoint, a `CONNECT` tunnel through the
//! proxy, and TLS with the endpoint inside it (the proxy sees a host name, never a request);
//! to an `http` endpoint, requests sent to the proxy with the whole URL as their target, as
//! urllib3 sends them (a proxy that only tunnels to port 443, as most are set up, still takes
//! them). A `user:password@` in the proxy's URL (percent-encoded) becomes `Proxy-Authorization:
//! Basic` on the `CONNECT`, or on each request sent to the proxy. SigV4 never signs that header
//! (a proxy may drop it), and neither it nor the password appears in `Debug` output or errors.
//!
//! Not here: proxies reached over TLS (`https://` proxy URLs) and SOCKS, which botocore also
//! leaves out without extra packages; they are refused with an error rather than ignored.
//! The gateway's upstream connections never use a proxy (`dial.rs` is given none).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::header::HeaderValue;
use hyper::Uri;
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower_service::Service;

use crate::no_proxy::NoProxy;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The proxies a client's connections go through, and the hosts that go direct.
#[derive(Clone)]
pub struct Proxies {
    /// The proxies' URLs and credentials, parsed.
    matcher: Arc<Matcher>,
    /// The hosts that go direct.
    direct: NoProxy,
    /// The proxies' URLs without credentials, for `Debug` and errors.
    http: Option<String>,
    https: Option<String>,
    no_proxy: Option<String>,
    /// Why the environment's setting cannot be used: the client that would connect through it
    /// fails with this, while what never connects (presigning) is not held up by it.
    unusable: Option<String>,
}

/// How a connection to one endpoint is made.
pub(crate) enum Route {
    /// Straight to the endpoint.
    Direct,
    /// Through a `CONNECT` tunnel (`https` endpoints).
    Tunnel(Intercept),
    /// To the proxy, each request's target the whole URL (`http` endpoints).
    Forward(Intercept),
}

impl Proxies {
    /// Proxies for `http` and `https` endpoints (URLs such as `http://proxy.corp:3128` or
    /// `http://user:pass@10.0.0.1:8080`; without a scheme `http://` is meant), and the hosts
    /// `no_proxy` names going direct. `None` when neither proxy is given. A URL that cannot be
    /// used is an error naming the setting, never silently a direct connection.
    pub fn new(
        http: Option<&str>,
        https: Option<&str>,
        no_proxy: Option<&str>,
    ) -> Result<Option<Self>, String> {
        let http = http
            .filter(|v| !v.is_empty())
            .map(|v| checked("http", v))
            .transpose()?;
        let https = https
            .filter(|v| !v.is_empty())
            .map(|v| checked("https", v))
            .transpose()?;
        if http.is_none() && https.is_none() {
            return Ok(None);
        }
        let no_proxy = no_proxy.filter(|v| !v.trim().is_empty()).map(str::to_owned);
        let mut builder = Matcher::builder();
        if let Some((url, _)) = &http {
            builder = builder.http(url.as_str());
        }
        if let Some((url, _)) = &https {
            builder = builder.https(url.as_str());
        }
        Ok(Some(Self {
            matcher: Arc::new(builder.build()),
            direct: NoProxy::parse(no_proxy.as_deref().unwrap_or_default()),
            http: http.map(|(_, shown)| shown),
            https: https.map(|(_, shown)| shown),
            no_proxy,
            unusable: None,
        }))
    }

    /// As [`Proxies::new`], but a setting that cannot be used is kept as the reason a client
    /// fails when it is made ([`Proxies::unusable`]) rather than failing now.
    pub(crate) fn from_settings(
        http: Option<&str>,
        https: Option<&str>,
        no_proxy: Option<&str>,
    ) -> Option<Self> {
        Self::new(http, https, no_proxy).unwrap_or_else(|why| {
            Some(Self {
                matcher: Arc::new(Matcher::builder().build()),
                direct: NoProxy::default(),
                http: None,
                https: None,
                no_proxy: None,
                unusable: Some(why),
            })
        })
    }

    /// Why these proxies cannot be used (a URL in the environment that is not one), if so.
    pub fn unusable(&self) -> Option<&str> {
        self.unusable.as_deref()
    }

    /// How a connection to `uri`'s origin goes.
    pub(crate) fn route(&self, uri: &Uri) -> Route {
        let host = uri.host().unwrap_or_default();
        if self.direct.bypasses(host, uri.port_u16()) {
            return Route::Direct;
        }
        match self.matcher.intercept(uri) {
            None => Route::Direct,
            Some(proxy) if uri.scheme_str() == Some("https") => Route::Tunnel(proxy),
            Some(proxy) => Route::Forward(proxy),
        }
    }

    /// The `Proxy-Authorization` a request to `origin` (`scheme://host:port`) carries: only
    /// one sent to a proxy whose URL has credentials (a tunnel's goes on its `CONNECT`).
    pub(crate) fn forward_auth(&self, origin: &str) -> Option<HeaderValue> {
        let uri = origin.parse::<Uri>().ok()?;
        match self.route(&uri) {
            Route::Forward(proxy) => proxy.basic_auth().cloned(),
            Route::Direct | Route::Tunnel(_) => None,
        }
    }
}

impl fmt::Debug for Proxies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxies")
            .field("http", &self.http)
            .field("https", &self.https)
            .field("no_proxy", &self.no_proxy)
            .field("unusable", &self.unusable)
            .finish()
    }
}

/// `value` as a proxy URL the matcher takes (a scheme added where it has none), and the same
/// without credentials, for messages. Refused: a scheme other than `http`, no host, a path.
fn checked(setting: &str, value: &str) -> Result<(String, String), String> {
    let refuse = |why: &str| Err(format!("the {setting} proxy {}: {why}", shown(value)));
    let url = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    let Ok(uri) = url.parse::<Uri>() else {
        return refuse("not a URL such as http://proxy.example.com:3128");
    };
    match uri.scheme_str() {
        Some("http") => {}
        Some("https") => {
            return refuse("a proxy reached over TLS is not supported; give its http:// URL")
        }
        Some(other) => return refuse(&format!("{other} proxies are not supported, only http://")),
        None => return refuse("not a URL such as http://proxy.example.com:3128"),
    }
    let Some(authority) = uri.authority() else {
        return refuse("it names no host");
    };
    let host_port = authority.as_str().rsplit('@').next().unwrap_or_default();
    if host_port.is_empty() || authority.host().is_empty() {
        return refuse("it names no host");
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return refuse("a proxy's URL has no path");
    }
    Ok((url, format!("http://{host_port}")))
}

/// A proxy setting as it may be shown: credentials left out.
pub(crate) fn shown(value: &str) -> String {
    let (scheme, rest) = value.split_once("://").unwrap_or(("", value));
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    match scheme {
        "" => rest.to_owned(),
        s => format!("{s}://{rest}"),
    }
}

/// A TCP connection as [`Proxied`] made it: to the endpoint (directly or through a tunnel),
/// or to a proxy that forwards requests, which hyper must then send with the whole URL as
/// their target. The route is decided once, here, for the layers above to read.
#[derive(Debug)]
pub(crate) struct Reached {
    pub(crate) io: TokioIo<TcpStream>,
    pub(crate) forwarded: bool,
}

/// A TCP connector that goes through the proxies where they say so: a tunnel's `CONNECT` done
/// before the connection is handed on, so what comes out is a connection to the endpoint.
#[derive(Clone)]
pub(crate) struct Proxied<C> {
    pub(crate) inner: C,
    pub(crate) proxies: Option<Proxies>,
    /// The most a tunnel's `CONNECT` may wait for its answer (the client's connect timeout):
    /// a proxy that takes the connection and says nothing fails it then, and it is retried.
    pub(crate) connect_timeout: Duration,
}

impl<C> Service<Uri> for Proxied<C>
where
    C: Service<Uri, Response = TokioIo<TcpStream>>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = Reached;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let route = self
            .proxies
            .as_ref()
            .map_or(Route::Direct, |p| p.route(&uri));
        match route {
            Route::Direct => {
                let connecting = self.inner.call(uri);
                Box::pin(async move {
                    let io = connecting.await.map_err(Into::into)?;
                    Ok(Reached {
                        io,
                        forwarded: false,
                    })
                })
            }
            Route::Forward(proxy) => {
                let connecting = self.inner.call(proxy.uri().clone());
                let at = proxy_name(&proxy);
                Box::pin(async move {
                    let io = connecting
                        .await
                        .map_err(|e| proxy_error(&at, &crate::describe(&*e.into())))?;
                    Ok(Reached {
                        io,
                        forwarded: true,
                    })
                })
            }
            Route::Tunnel(proxy) => {
                let connecting = self.inner.call(proxy.uri().clone());
                let limit = self.connect_timeout;
                Box::pin(async move {
                    let at = proxy_name(&proxy);
                    let mut io = connecting
                        .await
                        .map_err(|e| proxy_error(&at, &crate::describe(&*e.into())))?;
                    let target = target(&uri)?;
                    let auth = proxy.basic_auth();
                    tokio::time::timeout(limit, tunnel(io.inner_mut(), &target, auth))
                        .await
                        .map_err(|_| {
                            let why = format!("no answer to CONNECT {target} within {limit:?}");
                            proxy_error(&at, &why)
                        })?
                        .map_err(|why| proxy_error(&at, &why))?;
                    Ok(Reached {
                        io,
                        forwarded: false,
                    })
                })
            }
        }
    }
}

/// `host:port` of `uri`, as `CONNECT` names it.
fn target(uri: &Uri) -> Result<String, BoxError> {
    let host = uri.host().ok_or("a URL without a host")?;
    let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
        Some("https") => 443,
        _ => 80,
    });
    Ok(format!("{host}:{port}"))
}

/// What a proxy's refusal says: its policy or its credentials, which trying again will not
/// change (`transport::connection_error` does not retry it).
pub(crate) const REFUSED: &str = "refused CONNECT";

/// The most a proxy's answer to `CONNECT` may take: its status line and headers.
const MAX_ANSWER: usize = 16 << 10;

/// Asks the proxy at the other end of `tcp` for a tunnel to `target`. Only the answer's head is
/// read: the endpoint says nothing before the TLS handshake starts, so no byte of it is taken.
async fn tunnel(
    tcp: &mut TcpStream,
    target: &str,
    auth: Option<&HeaderValue>,
) -> Result<(), String> {
    let mut ask = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n").into_bytes();
    if let Some(auth) = auth {
        ask.extend_from_slice(b"Proxy-Authorization: ");
        ask.extend_from_slice(auth.as_bytes());
        ask.extend_from_slice(b"\r\n");
    }
    ask.extend_from_slice(b"\r\n");
    tcp.write_all(&ask).await.map_err(|e| e.to_string())?;
    let mut answer = Vec::with_capacity(512);
    let mut buf = [0u8; 2048];
    let head_end = loop {
        let n = tcp.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(format!(
                "it closed the connection when asked to CONNECT {target}"
            ));
        }
        answer.extend_from_slice(&buf[..n]);
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if answer.len() > MAX_ANSWER {
            return Err(format!("its answer to CONNECT {target} is too long"));
        }
    };
    let status_line = answer
        .split(|&b| b == b'\r')
        .next()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let mut words = status_line.splitn(3, ' ');
    let (version, code) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    if !version.starts_with("HTTP/1.") || code.len() != 3 {
        return Err(format!("its answer to CONNECT {target} is not HTTP"));
    }
    if code.starts_with('5') {
        // The proxy could not reach the endpoint: as a connection that failed, retried.
        return Err(format!(
            "it could not CONNECT {target}: {}",
            status_line.trim()
        ));
    }
    if !code.starts_with('2') {
        let hint = match code {
            // 407 is HTTP's answer; some proxies (tinyproxy) send 401 to a CONNECT.
            "401" | "407" if auth.is_none() => {
                " (it wants credentials: http://user:password@host:port)"
            }
            "401" | "407" => " (it refused the credentials in its URL)",
            _ => "",
        };
        return Err(format!(
            "it {REFUSED} {target}: {}{hint}",
            status_line.trim()
        ));
    }
    if answer.len() > head_end {
        return Err(format!(
            "it sent bytes after its answer to CONNECT {target}"
        ));
    }
    Ok(())
}

/// The proxy as messages name it (no credentials: the intercept's URI has none).
fn proxy_name(proxy: &Intercept) -> String {
    let uri = proxy.uri();
    let authority = uri.authority().map_or("", |a| a.as_str());
    format!("http://{authority}")
}

fn proxy_error(at: &str, why: &str) -> BoxError {
    format!("through the proxy {at}: {why}").into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn https_endpoints_tunnel_http_ones_forward_and_no_proxy_goes_direct() {
        let p = Proxies::new(
            Some("proxy.corp:3128"),
            Some("http://proxy.corp:3129"),
            Some("internal.example, 10.0.0.0/8"),
        )
        .unwrap()
        .unwrap();
        assert!(
            matches!(p.route(&uri("https://s3.amazonaws.com/b")), Route::Tunnel(i) if i.uri().port_u16() == Some(3129))
        );
        assert!(
            matches!(p.route(&uri("http://s3.amazonaws.com/b")), Route::Forward(i) if i.uri().port_u16() == Some(3128))
        );
        assert!(matches!(
            p.route(&uri("https://s3.internal.example/")),
            Route::Direct
        ));
        assert!(matches!(
            p.route(&uri("http://10.1.2.3:9000/")),
            Route::Direct
        ));
        assert!(matches!(
            p.route(&uri("http://11.1.2.3:9000/")),
            Route::Forward(_)
        ));
    }

    #[test]
    fn a_scheme_without_its_proxy_goes_direct() {
        let p = Proxies::new(None, Some("http://p:1"), None)
            .unwrap()
            .unwrap();
        assert!(matches!(p.route(&uri("http://s3.example/")), Route::Direct));
        assert!(Proxies::new(None, Some(""), None).unwrap().is_none());
        assert!(Proxies::new(None, None, Some("*")).unwrap().is_none());
        let everything_direct = Proxies::new(Some("p:1"), Some("p:1"), Some("*"))
            .unwrap()
            .unwrap();
        assert!(matches!(
            everything_direct.route(&uri("https://s3.example/")),
            Route::Direct
        ));
    }

    #[test]
    fn credentials_go_on_forwarded_requests_only_and_never_into_debug() {
        let p = Proxies::new(
            Some("http://ann:s%40cret@p:3128"),
            Some("http://ann:s%40cret@p:3128"),
            None,
        )
        .unwrap()
        .unwrap();
        let auth = p.forward_auth("http://s3.example:9000").unwrap();
        // "ann:s@cret" in base64.
        assert_eq!(auth.to_str().unwrap(), "Basic YW5uOnNAY3JldA==");
        assert!(p.forward_auth("https://s3.example").is_none());
        let shown = format!("{p:?}");
        assert!(!shown.contains("cret") && !shown.contains("ann"), "{shown}");
        assert!(shown.contains("http://p:3128"), "{shown}");
    }

    #[test]
    fn unusable_proxy_urls_are_refused_naming_the_setting_without_the_password() {
        for (value, why) in [
            ("https://ann:pw@p:3128", "over TLS"),
            ("socks5://p:1080", "socks5 proxies are not supported"),
            ("http://", "not a URL"),
            ("http://p:3128/path", "no path"),
            ("http://ann:pw@:3128", "no host"),
        ] {
            let e = Proxies::new(None, Some(value), None).unwrap_err();
            assert!(e.starts_with("the https proxy"), "{value}: {e}");
            assert!(e.contains(why), "{value}: {e}");
            assert!(!e.contains("pw"), "{value}: {e}");
        }
    }

    /// A proxy that answers `CONNECT` with `status`, then echoes what comes through.
    async fn proxy_answering(status: &'static str) -> (u16, tokio::task::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut asked = Vec::new();
            let mut buf = [0u8; 1024];
            while !asked.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf).await.unwrap();
                asked.extend_from_slice(&buf[..n]);
            }
            s.write_all(status.as_bytes()).await.unwrap();
            let n = s.read(&mut buf).await.unwrap_or(0);
            s.write_all(&buf[..n]).await.unwrap_or(());
            String::from_utf8(asked).unwrap()
        });
        (port, task)
    }

    #[tokio::test]
    async fn a_tunnel_asks_for_the_endpoint_with_credentials_then_carries_bytes() {
        let (port, proxy) = proxy_answering("HTTP/1.1 200 Connection established\r\n\r\n").await;
        let mut tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let auth = HeaderValue::from_static("Basic YW5uOnB3");
        tunnel(&mut tcp, "s3.example:443", Some(&auth))
            .await
            .unwrap();
        tcp.write_all(b"hello").await.unwrap();
        let mut back = [0u8; 5];
        tcp.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"hello");
        let asked = proxy.await.unwrap();
        assert!(
            asked.starts_with("CONNECT s3.example:443 HTTP/1.1\r\nHost: s3.example:443\r\n"),
            "{asked}"
        );
        assert!(
            asked.contains("Proxy-Authorization: Basic YW5uOnB3\r\n"),
            "{asked}"
        );
    }

    #[tokio::test]
    async fn a_proxy_that_never_answers_connect_fails_the_connection_in_the_connect_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let silent = tokio::spawn(async move {
            let (_held, _) = listener.accept().await.unwrap();
            std::future::pending::<()>().await;
        });
        let mut connector = Proxied {
            inner: hyper_util::client::legacy::connect::HttpConnector::new(),
            proxies: Proxies::new(None, Some(&url), None).unwrap(),
            connect_timeout: Duration::from_millis(200),
        };
        let started = std::time::Instant::now();
        let e = connector
            .call(uri("https://s3.example:443/"))
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("no answer to CONNECT s3.example:443 within 200ms"),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        silent.abort();
    }

    #[tokio::test]
    async fn a_refused_tunnel_says_what_the_proxy_answered() {
        let (port, _proxy) =
            proxy_answering("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n").await;
        let mut tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let e = tunnel(&mut tcp, "s3.example:443", None).await.unwrap_err();
        assert!(e.contains("407 Proxy Authentication Required"), "{e}");
        assert!(e.contains("wants credentials"), "{e}");
    }
}
