//! What a gateway is told: where to listen, which certificates, which origin, its limits.
//! Parsing flags and files is the CLI's (`slipstream gateway`); this is the resolved result.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A certificate chain and its private key, both PEM files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    /// The chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// A gateway's settings. [`Settings::new`] gives the defaults for an origin.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Addresses to accept clients on (at least one).
    pub listen: Vec<SocketAddr>,
    /// Certificates to serve, chosen by SNI; the first also serves clients that send no name
    /// or a name no certificate has. Empty: the listeners speak plain HTTP (behind a load
    /// balancer that terminates TLS).
    pub tls: Vec<CertFiles>,
    /// The origin, `http[s]://host[:port]` (no path).
    pub origin: String,
    /// Trust only these PEM certificates for the origin's TLS (else the Mozilla roots).
    pub origin_ca_bundle: Option<PathBuf>,
    /// Where `/metrics` and `/healthz` are served, if anywhere.
    pub metrics_listen: Option<SocketAddr>,
    /// Idle upstream connections kept open and ready. `None`: the most requests in flight at
    /// once over the last minute, and at least [`MIN_IDLE_FLOOR`]. Each of the `threads`
    /// keeps its share (rounded up), as it does of `upstream_max_idle`.
    pub upstream_min_idle: Option<usize>,
    /// An idle upstream connection gets a keep-alive request (`HEAD /`; an h2 PING on HTTP/2)
    /// after this long, below the origin's own idle timeout (S3 closes at about 20 s).
    /// `Duration::ZERO`: none; idle connections are then closed after 15 s and redialled.
    pub upstream_keepalive: Duration,
    /// The most idle upstream connections kept (beyond them, returned ones are closed).
    pub upstream_max_idle: usize,
    /// Offer HTTP/2 to the origin in ALPN (used when the origin picks it).
    pub upstream_h2: bool,
    /// Giving up on dialling the origin after this long (answered 503).
    pub connect_timeout: Duration,
    /// Giving up on the origin's response headers this long after the request was sent
    /// (answered 504).
    pub origin_timeout: Duration,
    /// A client must finish its TLS handshake within this long.
    pub handshake_timeout: Duration,
    /// A client must send a request's headers within this long of starting it (HTTP/1.1),
    /// and a connection with no request in flight is closed after this long idle.
    pub header_timeout: Duration,
    /// The largest request head accepted (HTTP/1.1 request line and headers; HTTP/2 header list).
    pub max_header_bytes: usize,
    /// The most client connections open at once; more are closed on accept.
    pub max_connections: usize,
    /// Threads serving client connections (at least one; one per core by default). Each runs
    /// its own runtime and upstream pool and takes accepted connections in turn, so a request
    /// never wakes another thread (workers.rs). The pool's sizes are divided among them.
    pub threads: usize,
    /// On SIGTERM, in-flight requests get this long to finish.
    pub drain_timeout: Duration,
    /// Where the access log's JSON lines go: a file (appended), `-` for standard output, or
    /// nowhere (`None`).
    pub access_log: Option<PathBuf>,
    /// Verify mode: the edge authenticates and authorizes every request and signs it for the
    /// origin with its own credentials. `None`: pass-through (the origin authenticates).
    pub verify: Option<VerifySettings>,
}

/// What verify mode needs.
#[derive(Clone, Debug)]
pub struct VerifySettings {
    /// Where the keys come from.
    pub keys: KeySettings,
    /// The region clients sign for: the edge's (`--region`).
    pub region: String,
    /// The gateway's own credentials for the origin (`Debug` shows where from, never a secret).
    pub origin_credentials: slipstream_client::CredentialSource,
    /// The region the origin checks signatures for.
    pub origin_region: String,
    /// Domains clients address buckets under (`--virtual-host-domain`, lowercase): a request
    /// to `BUCKET.DOMAIN` is for BUCKET (virtual-hosted style) and goes to the origin path
    /// style. Other hosts (the edge's own name, an address) mean path style.
    pub virtual_host_domains: Vec<String>,
}

/// Where a verifying edge gets its keys.
#[derive(Clone, Debug)]
pub enum KeySettings {
    /// A keys file (TOML: access keys, secrets, policies), reloaded on change and SIGHUP.
    File(PathBuf),
    /// An authority (`slipstream authority serve`), through a cache.
    Authority(AuthoritySettings),
}

/// The authority and the edge's cache of its answers.
#[derive(Clone)]
pub struct AuthoritySettings {
    /// Its base URL, `https://authority.example:9470`.
    pub url: String,
    /// The edge's bearer token (`--authority-token-file`).
    pub token: String,
    /// Certificates to trust for it instead of the Mozilla roots.
    pub ca_bundle: Option<PathBuf>,
    /// Entries younger than this are served without asking (jittered ±25%); older ones are
    /// served while one background refresh runs.
    pub soft_ttl: Duration,
    /// Entries older than this are fetched before the request is answered; if the authority
    /// cannot be reached, the request is refused.
    pub hard_ttl: Duration,
    /// How long an unknown access key stays unknown without asking again.
    pub negative_ttl: Duration,
    /// How long past the hard TTL an entry may still be served while the authority cannot be
    /// reached (S3 on Outposts allows 12 hours); zero, the default, is off.
    pub disconnected: Duration,
}

impl AuthoritySettings {
    /// The defaults (soft 5 min, hard 10 min, negative 30 s, no disconnected budget).
    pub fn new(url: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token: token.into(),
            ca_bundle: None,
            soft_ttl: Duration::from_secs(300),
            hard_ttl: Duration::from_secs(600),
            negative_ttl: Duration::from_secs(30),
            disconnected: Duration::ZERO,
        }
    }
}

impl std::fmt::Debug for AuthoritySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthoritySettings")
            .field("url", &self.url)
            .field("token", &"<redacted>")
            .field("ca_bundle", &self.ca_bundle)
            .field("soft_ttl", &self.soft_ttl)
            .field("hard_ttl", &self.hard_ttl)
            .field("negative_ttl", &self.negative_ttl)
            .field("disconnected", &self.disconnected)
            .finish()
    }
}

/// The least number of idle upstream connections kept when none is configured (over all
/// worker threads).
pub const MIN_IDLE_FLOOR: usize = 4;

impl Settings {
    /// The defaults, for `origin` and one listener.
    pub fn new(listen: SocketAddr, origin: impl Into<String>) -> Self {
        Self {
            listen: vec![listen],
            tls: Vec::new(),
            origin: origin.into(),
            origin_ca_bundle: None,
            metrics_listen: None,
            upstream_min_idle: None,
            upstream_keepalive: Duration::from_secs(15),
            upstream_max_idle: 256,
            upstream_h2: true,
            connect_timeout: Duration::from_secs(5),
            origin_timeout: Duration::from_secs(60),
            handshake_timeout: Duration::from_secs(10),
            header_timeout: Duration::from_secs(30),
            max_header_bytes: 64 * 1024,
            max_connections: 10_000,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            drain_timeout: Duration::from_secs(30),
            access_log: None,
            verify: None,
        }
    }
}
