//! The access log: one JSON line per request (method, bucket and key, status, bytes, time to
//! first byte, whether the upstream connection was reused), written in batches by a thread of
//! its own (log_writer.rs) so a slow disk never holds a request; batches it cannot keep up
//! with are dropped and their lines counted.
//!
//! It holds no credentials: no header is logged, and of the query only whether it carried a
//! presigned signature (`X-Amz-Signature`, `X-Amz-Credential` and `X-Amz-Security-Token`
//! values never appear). Keys are logged: they are the operator's data, not secrets.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::log_writer::{Batch, Writer};
use crate::metrics::{Metrics, RequestLabels};
use crate::GatewayError;

/// Where the lines go, and the metrics every finished request updates. Each worker thread
/// has its own ([`AccessLog::for_worker`]): its own batch, the one writer.
pub(crate) struct AccessLog {
    /// `None`: no log.
    batch: Option<Arc<Batch>>,
    metrics: Arc<Metrics>,
}

impl AccessLog {
    /// A log appended to `path` (`-`: standard output), or none; starts its writer thread.
    pub(crate) fn open(path: Option<&Path>, metrics: Arc<Metrics>) -> Result<Self, GatewayError> {
        let Some(path) = path else {
            return Ok(Self {
                batch: None,
                metrics,
            });
        };
        let failed =
            |e: std::io::Error| GatewayError::Log(format!("access log {}: {e}", path.display()));
        let out: Box<dyn std::io::Write + Send> = if path == Path::new("-") {
            Box::new(std::io::stdout())
        } else {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(failed)?;
            Box::new(file)
        };
        let writer = Writer::start(out).map_err(failed)?;
        Ok(Self {
            batch: Some(Arc::new(Batch::new(writer, Arc::clone(&metrics)))),
            metrics,
        })
    }

    /// The same log for another worker thread: a batch of its own, the same writer.
    pub(crate) fn for_worker(&self) -> Self {
        Self {
            batch: self.batch.as_ref().map(|b| Arc::new(b.sibling())),
            metrics: Arc::clone(&self.metrics),
        }
    }

    /// Hands this log's pending lines to the writer now.
    pub(crate) fn flush(&self) {
        if let Some(batch) = &self.batch {
            batch.flush();
        }
    }

    /// Hands this log's pending lines over and waits until the writer has written everything
    /// it was given (at shutdown, after every worker's [`AccessLog::flush`]).
    pub(crate) async fn sync(&self) {
        if let Some(batch) = &self.batch {
            batch.flush();
            batch.writer().sync().await;
        }
    }
}

/// One request's line, filled in as it goes and written when its response body ends.
pub(crate) struct Record {
    log: Arc<AccessLog>,
    time: SystemTime,
    started: Instant,
    pub(crate) client: SocketAddr,
    pub(crate) protocol: &'static str,
    pub(crate) method: String,
    pub(crate) host: String,
    /// The raw path, without the query.
    pub(crate) path: String,
    pub(crate) presigned: bool,
    pub(crate) status: u16,
    pub(crate) bytes_in: Arc<AtomicU64>,
    pub(crate) bytes_out: u64,
    pub(crate) ttfb: Option<Duration>,
    pub(crate) reused: Option<bool>,
    pub(crate) complete: bool,
    pub(crate) error: Option<String>,
}

impl Record {
    /// A record for a request starting now.
    pub(crate) fn start(
        log: &Arc<AccessLog>,
        client: SocketAddr,
        protocol: &'static str,
        request: &hyper::http::request::Parts,
        host: &str,
    ) -> Self {
        let query = request.uri.query().unwrap_or("");
        Self {
            log: Arc::clone(log),
            time: SystemTime::now(),
            started: Instant::now(),
            client,
            protocol,
            method: request.method.as_str().to_owned(),
            host: host.to_owned(),
            path: request.uri.path().to_owned(),
            presigned: query
                .split('&')
                .any(|p| p.len() >= 16 && p[..16].eq_ignore_ascii_case("X-Amz-Signature=")),
            status: 0,
            bytes_in: Arc::default(),
            bytes_out: 0,
            ttfb: None,
            reused: None,
            complete: false,
            error: None,
        }
    }

    /// When the request started.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// Counts the request in the metrics and queues its line.
    pub(crate) fn finish(self) {
        let m = &self.log.metrics;
        let bytes_in = self.bytes_in.load(Ordering::Relaxed);
        m.requests
            .get_or_create(&RequestLabels {
                method: self.method.clone(),
                status: self.status,
            })
            .inc();
        m.bytes_in.inc_by(bytes_in);
        m.bytes_out.inc_by(self.bytes_out);
        let Some(batch) = &self.log.batch else { return };
        let (bucket, key) = bucket_and_key(&self.path);
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        let line = serde_json::json!({
            // Microseconds: lines come in order per worker only, and readers sort by this.
            "time": self.time.duration_since(UNIX_EPOCH).map(|d| d.as_micros() as f64 / 1e6).unwrap_or(0.0),
            "client": self.client.to_string(),
            "protocol": self.protocol,
            "method": self.method,
            "host": self.host,
            "bucket": bucket,
            "key": key,
            "presigned": self.presigned,
            "status": self.status,
            "bytes_in": bytes_in,
            "bytes_out": self.bytes_out,
            "ttfb_ms": self.ttfb.map(ms),
            "total_ms": ms(self.started.elapsed()),
            "upstream_reused": self.reused,
            "complete": self.complete,
            "error": self.error,
        });
        batch.push(&line);
    }
}

/// The bucket and key of a path-style path (`/bucket/key`), the key percent-decoded (lossily:
/// the log is for reading).
fn bucket_and_key(path: &str) -> (String, String) {
    let rest = path.strip_prefix('/').unwrap_or(path);
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    (decode(bucket), decode(key))
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_bucket_and_decoded_key() {
        assert_eq!(bucket_and_key("/b/a%20b/c"), ("b".into(), "a b/c".into()));
        assert_eq!(bucket_and_key("/b"), ("b".into(), "".into()));
        assert_eq!(bucket_and_key("/b/%2"), ("b".into(), "%2".into()));
        assert_eq!(bucket_and_key("/b/k%2F"), ("b".into(), "k/".into()));
    }
}
