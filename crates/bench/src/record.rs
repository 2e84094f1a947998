//! What workers report after each request, and where it is added up.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::request::OpKind;
use crate::stats::Durations;

/// One finished request, timed.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// From the request's start (its scheduled time in an open-loop run) to the last byte.
    pub latency: Duration,
    /// From the start to the response's first byte on the socket.
    pub ttfb: Duration,
    /// TCP's handshake, when this request opened a connection.
    pub connect: Option<Duration>,
    /// TLS's handshake, when this request opened an HTTPS connection.
    pub tls: Option<Duration>,
    /// From handing the request over to its last byte written.
    pub send: Option<Duration>,
    /// From the last byte written to the first byte read: the server's time plus one round trip.
    pub wait: Option<Duration>,
    /// From the first byte read to the last.
    pub body: Duration,
    /// Payload bytes moved (object bytes sent or received).
    pub bytes: u64,
}

/// The figures of one kind of operation.
#[derive(Clone, Default)]
pub struct KindStats {
    /// Successful requests' latencies.
    pub latency: Durations,
    /// Successful requests' times to first byte.
    pub ttfb: Durations,
    /// The phases of successful requests, by name (connect, tls, send, wait, body).
    pub phases: BTreeMap<&'static str, Durations>,
    /// Successful requests.
    pub ok: u64,
    /// Failed requests.
    pub errors: u64,
    /// Payload bytes of successful requests.
    pub bytes: u64,
}

/// One second of the run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Second {
    /// Requests that finished in it.
    pub ops: u64,
    /// Payload bytes of those.
    pub bytes: u64,
    /// Failures in it.
    pub errors: u64,
}

/// Everything recorded during the measured phase.
#[derive(Clone, Default)]
pub struct Totals {
    /// Per kind of operation.
    pub kinds: BTreeMap<OpKind, KindStats>,
    /// Failures by what went wrong (`HTTP 503 SlowDown`, `connect: ...`).
    pub error_kinds: BTreeMap<String, u64>,
    /// Per second since the start of the measured phase.
    pub timeline: Vec<Second>,
}

/// Shared by the workers: a lock around the totals (a few hundred nanoseconds per request,
/// against requests of tens of microseconds at least), and counters for the live line.
pub struct Recorder {
    start: Instant,
    totals: Mutex<Totals>,
    /// Finished requests, failures included.
    pub done: AtomicU64,
    /// Payload bytes so far.
    pub bytes: AtomicU64,
    /// Failures so far.
    pub errors: AtomicU64,
}

impl Recorder {
    /// A recorder whose timeline starts at `start`.
    pub fn new(start: Instant) -> Self {
        Self {
            start,
            totals: Mutex::new(Totals::default()),
            done: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// Adds a successful request of `kind` that ended at `end`.
    pub fn ok(&self, kind: OpKind, s: &Sample, end: Instant) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(s.bytes, Ordering::Relaxed);
        let mut t = self.lock();
        let k = t.kinds.entry(kind).or_default();
        k.ok += 1;
        k.bytes += s.bytes;
        k.latency.record(nanos(s.latency));
        k.ttfb.record(nanos(s.ttfb));
        for (name, v) in [
            ("connect", s.connect),
            ("tls", s.tls),
            ("send", s.send),
            ("wait", s.wait),
            ("body", Some(s.body)),
        ] {
            if let Some(v) = v {
                k.phases.entry(name).or_default().record(nanos(v));
            }
        }
        let sec = second(&mut t.timeline, end.saturating_duration_since(self.start));
        sec.ops += 1;
        sec.bytes += s.bytes;
    }

    /// Adds a failed request of `kind` that ended at `end`.
    pub fn error(&self, kind: OpKind, what: String, end: Instant) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut t = self.lock();
        t.kinds.entry(kind).or_default().errors += 1;
        *t.error_kinds.entry(what).or_default() += 1;
        second(&mut t.timeline, end.saturating_duration_since(self.start)).errors += 1;
    }

    /// Adds another recorder's totals (a presign thread's).
    pub fn merge(&self, other: Totals) {
        let mut t = self.lock();
        for (kind, k) in other.kinds {
            let into = t.kinds.entry(kind).or_default();
            into.latency.merge(&k.latency);
            into.ttfb.merge(&k.ttfb);
            for (name, d) in &k.phases {
                into.phases.entry(name).or_default().merge(d);
            }
            into.ok += k.ok;
            into.errors += k.errors;
            into.bytes += k.bytes;
        }
        for (i, s) in other.timeline.into_iter().enumerate() {
            if t.timeline.len() <= i {
                t.timeline.resize(i + 1, Second::default());
            }
            t.timeline[i].ops += s.ops;
            t.timeline[i].bytes += s.bytes;
            t.timeline[i].errors += s.errors;
        }
    }

    /// The totals so far.
    pub fn totals(&self) -> Totals {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Totals> {
        // A worker that panicked mid-update leaves counts that are still counts.
        self.totals.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The timeline entry for `at` after the start, created if needed.
pub fn second(timeline: &mut Vec<Second>, at: Duration) -> &mut Second {
    let i = at.as_secs() as usize;
    if timeline.len() <= i {
        timeline.resize(i + 1, Second::default());
    }
    &mut timeline[i]
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
