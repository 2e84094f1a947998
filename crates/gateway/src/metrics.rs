//! What the gateway counts, in the Prometheus text format: a histogram per phase of a
//! request's time to first byte, requests by method and status, bytes, and the upstream pool's
//! connections. Served on `--metrics-listen` (`/metrics`, `/healthz`), never on the S3
//! listeners, where every path is an S3 key.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Requests, by method and status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    pub(crate) method: String,
    pub(crate) status: u16,
}

/// Whether a request was the first on its client connection (its time to first byte then
/// includes the connection's handshakes at the edge).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ConnectionLabels {
    pub(crate) connection: &'static str,
}

/// Every metric the gateway exports.
pub(crate) struct Metrics {
    registry: Registry,
    pub(crate) handshake: Histogram,
    pub(crate) pool_wait: Histogram,
    pub(crate) upstream_connect: Histogram,
    pub(crate) origin_ttfb: Histogram,
    pub(crate) ttfb: Family<ConnectionLabels, Histogram>,
    pub(crate) requests: Family<RequestLabels, Counter>,
    pub(crate) bytes_in: Counter,
    pub(crate) bytes_out: Counter,
    pub(crate) errors: Family<RequestLabels, Counter>,
    pub(crate) client_connections: Gauge,
    pub(crate) client_refused: Counter,
    pub(crate) handshake_failures: Counter,
    pub(crate) upstream_idle: Gauge,
    pub(crate) upstream_busy: Gauge,
    pub(crate) dials: Counter,
    pub(crate) dial_failures: Counter,
    pub(crate) reuses: Counter,
    pub(crate) not_reused: Counter,
    pub(crate) waits: Counter,
    pub(crate) stale_retries: Counter,
    pub(crate) keepalives: Counter,
    pub(crate) log_dropped: Counter,
    pub(crate) key_hits: Counter,
    pub(crate) key_misses: Counter,
    pub(crate) key_stale_served: Counter,
    pub(crate) key_negative_hits: Counter,
    pub(crate) key_waiters: Counter,
    pub(crate) key_disconnected_served: Counter,
    pub(crate) key_fetch_failures: Counter,
    pub(crate) key_refresh: Histogram,
    pub(crate) key_age: Histogram,
}

/// Seconds, from 100 µs to about 52 s (20 buckets, doubling).
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 20))
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let ttfb = Family::<ConnectionLabels, Histogram>::new_with_constructor(
            seconds as fn() -> Histogram,
        );
        let mut m = Self {
            registry: Registry::with_prefix("gateway"),
            handshake: seconds(),
            pool_wait: seconds(),
            upstream_connect: seconds(),
            origin_ttfb: seconds(),
            ttfb,
            requests: Family::default(),
            bytes_in: Counter::default(),
            bytes_out: Counter::default(),
            errors: Family::default(),
            client_connections: Gauge::default(),
            client_refused: Counter::default(),
            handshake_failures: Counter::default(),
            upstream_idle: Gauge::default(),
            upstream_busy: Gauge::default(),
            dials: Counter::default(),
            dial_failures: Counter::default(),
            reuses: Counter::default(),
            not_reused: Counter::default(),
            waits: Counter::default(),
            stale_retries: Counter::default(),
            keepalives: Counter::default(),
            log_dropped: Counter::default(),
            key_hits: Counter::default(),
            key_misses: Counter::default(),
            key_stale_served: Counter::default(),
            key_negative_hits: Counter::default(),
            key_waiters: Counter::default(),
            key_disconnected_served: Counter::default(),
            key_fetch_failures: Counter::default(),
            key_refresh: seconds(),
            // Seconds, from 1 s to about 4.6 h (15 buckets, doubling).
            key_age: Histogram::new(exponential_buckets(1.0, 2.0, 15)),
        };
        m.register();
        m
    }

    fn register(&mut self) {
        let r = &mut self.registry;
        r.register(
            "client_tls_handshake_seconds",
            "Client TLS handshakes, accept to done",
            self.handshake.clone(),
        );
        r.register(
            "pool_wait_seconds",
            "Waiting for an upstream connection (a dial when none was idle)",
            self.pool_wait.clone(),
        );
        r.register(
            "upstream_connect_seconds",
            "Dialling the origin, TCP and TLS",
            self.upstream_connect.clone(),
        );
        r.register(
            "origin_ttfb_seconds",
            "Request sent upstream to the origin's response head",
            self.origin_ttfb.clone(),
        );
        r.register(
            "ttfb_seconds",
            "Request head received (fresh: connection accepted) to response head",
            self.ttfb.clone(),
        );
        r.register(
            "requests",
            "Requests answered, by method and status",
            self.requests.clone(),
        );
        r.register("errors", "Requests the gateway answered itself (origin unreachable, timeout), by method and status", self.errors.clone());
        r.register(
            "request_bytes",
            "Request body bytes forwarded upstream",
            self.bytes_in.clone(),
        );
        r.register(
            "response_bytes",
            "Response body bytes sent to clients",
            self.bytes_out.clone(),
        );
        r.register(
            "client_connections",
            "Client connections open",
            self.client_connections.clone(),
        );
        r.register(
            "client_connections_refused",
            "Client connections closed at once: over --max-connections",
            self.client_refused.clone(),
        );
        r.register(
            "client_tls_handshake_failures",
            "Client TLS handshakes that failed or timed out",
            self.handshake_failures.clone(),
        );
        r.register(
            "upstream_idle_connections",
            "Upstream connections open and ready",
            self.upstream_idle.clone(),
        );
        r.register(
            "upstream_busy_connections",
            "Upstream connections carrying a request",
            self.upstream_busy.clone(),
        );
        r.register(
            "upstream_dials",
            "Upstream connections dialled",
            self.dials.clone(),
        );
        r.register(
            "upstream_dial_failures",
            "Upstream dials that failed",
            self.dial_failures.clone(),
        );
        r.register(
            "upstream_reuses",
            "Requests sent on a connection that was already open",
            self.reuses.clone(),
        );
        r.register(
            "upstream_not_reused",
            "Upstream connections closed after one exchange because the origin may not have read \
             the whole request: its body went out chunked, or was answered with an error",
            self.not_reused.clone(),
        );
        r.register(
            "upstream_waits",
            "Requests that found no idle upstream connection and waited for a dial",
            self.waits.clone(),
        );
        r.register(
            "upstream_stale_retries",
            "Requests sent again on a new connection after a pooled one turned out closed",
            self.stale_retries.clone(),
        );
        r.register(
            "upstream_keepalives",
            "Keep-alive requests sent on idle upstream connections",
            self.keepalives.clone(),
        );
        r.register(
            "access_log_dropped",
            "Access log lines dropped because the writer fell behind",
            self.log_dropped.clone(),
        );
        let keys = [
            (
                "key_cache_hits",
                "Requests verified from a fresh cache entry",
                &self.key_hits,
            ),
            (
                "key_cache_misses",
                "Requests that waited for the authority (no entry, or past the hard TTL)",
                &self.key_misses,
            ),
            (
                "key_cache_stale_served",
                "Requests served a stale entry while it was refreshed in the background",
                &self.key_stale_served,
            ),
            (
                "key_cache_negative_hits",
                "Requests for a key the authority recently said it does not know",
                &self.key_negative_hits,
            ),
            (
                "key_cache_waiters",
                "Requests that joined a fetch another request had started (single flight)",
                &self.key_waiters,
            ),
            (
                "key_cache_disconnected_served",
                "Requests served past the hard TTL under the disconnected budget",
                &self.key_disconnected_served,
            ),
            (
                "key_fetch_failures",
                "Fetches from the authority that failed",
                &self.key_fetch_failures,
            ),
        ];
        for (name, help, counter) in keys {
            r.register(name, help, counter.clone());
        }
        r.register(
            "key_fetch_seconds",
            "Fetches from the authority (refresh latency)",
            self.key_refresh.clone(),
        );
        r.register(
            "key_cache_entry_age_seconds",
            "Age of the cache entries requests were verified with",
            self.key_age.clone(),
        );
    }

    /// The text exposition.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
