//! What a run is asked to do, after defaults: read by the runner (`run.rs`) and written into
//! the report (`report.rs`), so it belongs to neither.

use std::time::Duration;

use crate::conn::TlsVersion;
use crate::workload::Workload;

/// How connections are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionMode {
    /// Kept alive for the whole run, one per worker (what an SDK's pool does).
    Pooled,
    /// A new connection (TCP, and TLS for HTTPS) for every request: a first visit.
    Fresh,
}

/// A run's parameters, after defaults.
#[derive(Clone, Debug)]
pub struct Settings {
    /// What to do.
    pub workload: Workload,
    /// The bucket (created if missing).
    pub bucket: String,
    /// Object size for PUT and for the objects uploaded before GET, HEAD, LIST and DELETE runs.
    pub size: u64,
    /// Operations to measure (a put-head pair counts once), unless `duration` is set.
    pub count: Option<u64>,
    /// Measure for this long instead of a count.
    pub duration: Option<Duration>,
    /// Requests in flight (workers).
    pub concurrency: usize,
    /// Operations before the measured phase, not recorded (opens pooled connections).
    pub warmup: u64,
    /// A quiet period after the set-up and the warm-up, before the measured phase: what a
    /// proxy or a pool in between does when traffic returns after its idle timeouts.
    pub idle: Option<Duration>,
    /// Open loop: operations per second in total; closed loop without it.
    pub rate: Option<f64>,
    /// Objects uploaded before GET, HEAD, LIST and mixed runs.
    pub objects: u64,
    /// Sub-prefixes the keys are spread over.
    pub prefixes: u64,
    /// The root of the run's keys; `slipstream-bench/RUN-ID/` by default.
    pub prefix: Option<String>,
    /// Pooled or fresh connections.
    pub connection: ConnectionMode,
    /// TLS versions allowed (HTTPS endpoints).
    pub tls: TlsVersion,
    /// Delete the run's objects at the end.
    pub cleanup: bool,
    /// A request not finished after this long counts as an error.
    pub timeout: Duration,
    /// Print a live line on standard error (on a terminal only, unless forced).
    pub progress: bool,
}
