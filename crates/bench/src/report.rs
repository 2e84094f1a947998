//! The result of a run: the JSON document (schema in docs/bench-json.md) and the summary table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::record::Totals;
use crate::settings::{ConnectionMode, Settings};
use crate::stats::{Durations, Summary};
use crate::workload::Workload;

/// The schema version written into every report; bumped on incompatible changes.
pub const SCHEMA: u32 = 1;

/// Points kept per CDF in the JSON: enough for a smooth plot, few enough for a small file.
const CDF_POINTS: usize = 400;

/// One run, as written by `--json` and read by `bench compare`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: u32,
    /// `put`, `get`, `head`, `delete`, `list`, `mixed`, `put-head` or `presign`.
    pub workload: String,
    /// Where the requests went (`scheme://host:port`); empty for presign.
    pub endpoint: String,
    /// The parameters.
    pub config: RunConfig,
    /// Length of the measured phase.
    pub elapsed_s: f64,
    /// Successful operations (requests; a put-head pair is two).
    pub ops: u64,
    /// `ops / elapsed_s`.
    pub ops_per_s: f64,
    /// Payload megabytes (10^6 bytes) moved per second: PUT bodies sent, GET bodies received.
    pub mb_per_s: f64,
    /// Payload bytes moved.
    pub bytes: u64,
    /// Failed operations.
    pub errors: u64,
    /// Failures by what went wrong.
    pub error_kinds: BTreeMap<String, u64>,
    /// Latency of every successful operation, in milliseconds.
    pub latency_ms: Summary,
    /// Time to first byte of every successful request, in milliseconds.
    pub ttfb_ms: Summary,
    /// Per kind of operation (`get`, `put`, ...).
    pub operations: BTreeMap<String, Operation>,
    /// Per second of the measured phase.
    pub timeline: Vec<TimelinePoint>,
}

/// The parameters of a run, as reported.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunConfig {
    /// Bucket.
    pub bucket: String,
    /// Object size in bytes.
    pub size: u64,
    /// Operations asked for (absent for a timed run).
    pub count: Option<u64>,
    /// Seconds asked for (absent for a counted run).
    pub duration_s: Option<f64>,
    /// Requests in flight.
    pub concurrency: usize,
    /// Unrecorded operations before the measured phase.
    pub warmup: u64,
    /// Seconds of quiet before the measured phase (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_s: Option<f64>,
    /// Open-loop rate in operations per second; absent: closed loop.
    pub rate: Option<f64>,
    /// Objects uploaded before the run.
    pub objects: u64,
    /// Sub-prefixes.
    pub prefixes: u64,
    /// `pooled` or `fresh`.
    pub connection: ConnectionMode,
    /// `auto`, `1.3` or `1.2`.
    pub tls: crate::conn::TlsVersion,
    /// The mixed workload's weights.
    pub mix: Option<String>,
}

/// The figures of one kind of operation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Operation {
    /// Successful operations.
    pub count: u64,
    /// Failed operations.
    pub errors: u64,
    /// Successful operations per second of the run.
    pub ops_per_s: f64,
    /// Payload megabytes per second.
    pub mb_per_s: f64,
    /// Latency.
    pub latency_ms: Summary,
    /// Time to first byte.
    pub ttfb_ms: Summary,
    /// The parts of a request: `connect` (TCP handshake, new connections only), `tls`
    /// (handshake), `send` (request written), `wait` (last byte written to first byte read),
    /// `body` (first byte to last).
    pub phases_ms: BTreeMap<String, Summary>,
    /// `(ms, fraction at or below)`, for plots.
    pub latency_cdf: Vec<(f64, f64)>,
    /// `(ms, fraction at or below)`, for plots.
    pub ttfb_cdf: Vec<(f64, f64)>,
    /// `(bucket upper bound ms, count)`, ten log-spaced buckets per decade.
    pub latency_histogram: Vec<(f64, u64)>,
}

/// One second of the run.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds since the start of the measured phase (this point covers `[second, second+1)`).
    pub second: u64,
    /// Operations finished.
    pub ops: u64,
    /// Payload megabytes moved.
    pub mb: f64,
    /// Failures.
    pub errors: u64,
}

impl Report {
    /// The report of a finished run.
    pub fn new(settings: &Settings, endpoint: &str, elapsed: Duration, totals: Totals) -> Self {
        let secs = elapsed.as_secs_f64().max(1e-9);
        let mut all_latency = Durations::new();
        let mut all_ttfb = Durations::new();
        let mut operations = BTreeMap::new();
        let (mut ops, mut bytes, mut errors) = (0, 0, 0);
        for (kind, k) in &totals.kinds {
            all_latency.merge(&k.latency);
            all_ttfb.merge(&k.ttfb);
            ops += k.ok;
            bytes += k.bytes;
            errors += k.errors;
            operations.insert(
                kind.name().to_owned(),
                Operation {
                    count: k.ok,
                    errors: k.errors,
                    ops_per_s: k.ok as f64 / secs,
                    mb_per_s: k.bytes as f64 / 1e6 / secs,
                    latency_ms: k.latency.summary(),
                    ttfb_ms: k.ttfb.summary(),
                    phases_ms: k
                        .phases
                        .iter()
                        .map(|(n, d)| ((*n).to_owned(), d.summary()))
                        .collect(),
                    latency_cdf: thin(k.latency.cdf()),
                    ttfb_cdf: thin(k.ttfb.cdf()),
                    latency_histogram: k.latency.log_buckets(),
                },
            );
        }
        let timeline = totals
            .timeline
            .iter()
            .enumerate()
            .map(|(i, s)| TimelinePoint {
                second: i as u64,
                ops: s.ops,
                mb: s.bytes as f64 / 1e6,
                errors: s.errors,
            })
            .collect();
        Report {
            schema: SCHEMA,
            workload: settings.workload.name().to_owned(),
            endpoint: endpoint.to_owned(),
            config: RunConfig {
                bucket: settings.bucket.clone(),
                size: settings.size,
                count: settings.count,
                duration_s: settings.duration.map(|d| d.as_secs_f64()),
                concurrency: settings.concurrency,
                warmup: settings.warmup,
                idle_s: settings.idle.map(|d| d.as_secs_f64()),
                rate: settings.rate,
                objects: settings.objects,
                prefixes: settings.prefixes,
                connection: settings.connection,
                tls: settings.tls,
                mix: match &settings.workload {
                    Workload::Mixed(m) => Some(m.describe()),
                    _ => None,
                },
            },
            elapsed_s: secs,
            ops,
            ops_per_s: ops as f64 / secs,
            mb_per_s: bytes as f64 / 1e6 / secs,
            bytes,
            errors,
            error_kinds: totals.error_kinds,
            latency_ms: all_latency.summary(),
            ttfb_ms: all_ttfb.summary(),
            operations,
            timeline,
        }
    }

    /// One line saying what was run.
    pub fn title(&self) -> String {
        let c = &self.config;
        let mut t = format!("slipstream bench {}", self.workload);
        if self.workload != "presign" {
            let _ = write!(t, ", {} objects", size_text(c.size));
        }
        match (c.count, c.duration_s) {
            (_, Some(d)) => {
                let _ = write!(t, ", {d} s");
            }
            (Some(n), None) => {
                let _ = write!(t, ", {n} operations");
            }
            _ => {}
        }
        let _ = write!(t, ", concurrency {}", c.concurrency);
        if let Some(r) = c.rate {
            let _ = write!(t, ", open loop at {r} ops/s");
        }
        if self.workload != "presign" {
            let conn = match c.connection {
                ConnectionMode::Pooled => "pooled",
                ConnectionMode::Fresh => "fresh",
            };
            let _ = write!(t, ", {conn} connections to {}", self.endpoint);
        }
        t
    }

    /// The summary table printed after a run.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.title());
        let _ = writeln!(
            out,
            "{} operations in {:.2} s: {:.0} ops/s, {:.1} MB/s, {} errors",
            self.ops, self.elapsed_s, self.ops_per_s, self.mb_per_s, self.errors
        );
        let unit = if self.workload == "presign" {
            "us"
        } else {
            "ms"
        };
        let scale = if self.workload == "presign" { 1e3 } else { 1.0 };
        let _ = writeln!(
            out,
            "{:<16}{:>8}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
            format!("({unit})"),
            "count",
            "p25",
            "p50",
            "p75",
            "p90",
            "p99",
            "p99.9",
            "max",
            "mean"
        );
        for (name, op) in &self.operations {
            row(&mut out, &format!("{name} latency"), &op.latency_ms, scale);
            if op.ttfb_ms.count > 0 {
                row(&mut out, &format!("{name} ttfb"), &op.ttfb_ms, scale);
            }
        }
        for (name, op) in &self.operations {
            if op.phases_ms.is_empty() {
                continue;
            }
            let parts: Vec<String> = ["connect", "tls", "send", "wait", "body"]
                .iter()
                .filter_map(|p| {
                    op.phases_ms
                        .get(*p)
                        .map(|s| format!("{p} {:.3} ({} of {})", s.mean, s.count, op.count))
                })
                .collect();
            let _ = writeln!(out, "{name} phases, mean ms: {}", parts.join(", "));
        }
        for (what, n) in &self.error_kinds {
            let _ = writeln!(out, "error x{n}: {what}");
        }
        out
    }
}

fn row(out: &mut String, name: &str, s: &Summary, scale: f64) {
    let _ = write!(out, "{name:<16}{:>8}", s.count);
    for (_, v) in s.named() {
        let _ = write!(out, "{:>10.3}", v * scale);
    }
    out.push('\n');
}

/// `4 KiB`, `8 MiB`, `1 GiB`, `1000 B`.
pub fn size_text(n: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if n >= 1 << shift && n % (1 << shift) == 0 {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} B")
}

/// At most [`CDF_POINTS`] points of a CDF, evenly spaced by rank, the last one kept.
fn thin(cdf: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if cdf.len() <= CDF_POINTS {
        return cdf;
    }
    let step = cdf.len() as f64 / CDF_POINTS as f64;
    let mut out: Vec<(f64, f64)> = (0..CDF_POINTS)
        .map(|i| cdf[(i as f64 * step) as usize])
        .collect();
    if let Some(last) = cdf.last() {
        out.push(*last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_typed() {
        assert_eq!(size_text(4096), "4 KiB");
        assert_eq!(size_text(1 << 30), "1 GiB");
        assert_eq!(size_text(1000), "1000 B");
    }

    #[test]
    fn thinning_keeps_the_ends_and_order() {
        let cdf: Vec<(f64, f64)> = (1..=5000).map(|i| (i as f64, i as f64 / 5000.0)).collect();
        let t = thin(cdf);
        assert_eq!(t.len(), CDF_POINTS + 1);
        assert_eq!(t.first(), Some(&(1.0, 1.0 / 5000.0)));
        assert_eq!(t.last(), Some(&(5000.0, 1.0)));
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
