//! How a client connects, waits and retries: the settings every layer above the pool reads.

use std::time::Duration;

use crate::Bandwidth;

/// Connection and retry settings.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Idle connections kept per host (the pool's size for one endpoint).
    pub max_idle_connections: usize,
    /// Idle connections are closed after this long (S3 closes them at about 20 s).
    pub idle_timeout: Duration,
    /// Giving up on connecting after this long.
    pub connect_timeout: Duration,
    /// Giving up on response headers when none came this long after the request's last byte
    /// was sent (a slow upload is not cut short); the attempt is then retried.
    pub response_timeout: Duration,
    /// A response body that brings nothing for this long is abandoned and fetched again (one
    /// connection gone quiet). A transfer as a whole gives up after its own, longer
    /// `stall_timeout` of silence on every connection (`slipstream-transfer`).
    pub read_timeout: Duration,
    /// Attempts per request, the first included.
    pub max_attempts: u32,
    /// The first backoff's upper bound; doubled per attempt, capped at 10 s (full jitter).
    pub backoff_base: Duration,
    /// The TCP congestion control of every connection (`"cubic"`, `"reno"`, `"bbr"`...), else
    /// the host's. We are the sender on uploads; on a long clean link where the host's default
    /// (BBR) leaves gaps, a loss-based one fills it (see `congestion.rs`). Checked when the
    /// client is built: a name the host lacks or refuses is an error then.
    pub tcp_congestion: Option<String>,
    /// At most this many keys a `ListObjectsV2` page (the AWS CLI's `--page-size`); `None`:
    /// S3's 1,000. Smaller pages cost more requests; they help where a server is slow to
    /// answer a page of 1,000.
    pub list_page_size: Option<usize>,
    /// Send `x-amz-request-payer: requester` with every request: the caller accepts the
    /// charges of a Requester Pays bucket, which refuses requests without it (403).
    pub request_payer: bool,
    /// A cap on the bytes per second all connections move, both ways (`--max-bandwidth`, the
    /// AWS CLI's `s3.max_bandwidth`); clones of one [`Bandwidth`] given to several clients
    /// share it. `None`: as fast as the link allows.
    pub max_bandwidth: Option<Bandwidth>,
    /// Check no server certificate (`--no-verify-ssl`, boto3's `verify=False`): for a test
    /// server with a self-signed one. A CA bundle is the safe way to trust such a server.
    pub skip_certificate_check: bool,
    /// Called after every attempt of every request with its method, URL, outcome and time
    /// (the CLI's `--debug`); never given a header. `None`: nothing is measured or reported.
    pub trace: Option<crate::Trace>,
}

impl ClientOptions {
    /// These options with the AWS CLI's and boto3's two timeouts where given: `connect` bounds
    /// setting up a connection; `read` both the wait for an answer and each read of its body.
    pub fn with_timeouts(self, connect: Option<Duration>, read: Option<Duration>) -> Self {
        Self {
            connect_timeout: connect.unwrap_or(self.connect_timeout),
            response_timeout: read.unwrap_or(self.response_timeout),
            read_timeout: read.unwrap_or(self.read_timeout),
            ..self
        }
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            max_idle_connections: 64,
            idle_timeout: Duration::from_secs(15),
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(60),
            read_timeout: Duration::from_secs(30),
            max_attempts: 5,
            backoff_base: Duration::from_millis(100),
            tcp_congestion: None,
            list_page_size: None,
            request_payer: false,
            max_bandwidth: None,
            skip_certificate_check: false,
            trace: None,
        }
    }
}
