//! The `presign` workload: URLs per second and the latency of each, on every core asked for.
//! No server: this measures the signer, as `make bench` does, but with percentiles.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use slipstream_sign::{PresignOptions, Presigner, SigningTime};

use crate::error::BenchError;
use crate::record::{second, KindStats, Recorder, Totals};
use crate::report::Report;
use crate::request::OpKind;
use crate::settings::Settings;
use crate::workload::Keys;

/// Presigns `count` URLs (or for `duration`) on `concurrency` threads, each URL for a new key,
/// timing each one.
pub fn run(settings: &Settings, presigner: Presigner) -> Result<Report, BenchError> {
    let s = settings;
    let template = presigner
        .template(
            &PresignOptions::get(),
            SigningTime::from_system_time(std::time::SystemTime::now())
                .map_err(|e| BenchError::Local(e.to_string()))?,
        )
        .map_err(|e| BenchError::Config(e.to_string()))?;
    let template = Arc::new(template);
    let keys = Keys {
        root: s
            .prefix
            .clone()
            .unwrap_or_else(|| "slipstream-bench/presign/".into()),
        prefixes: s.prefixes.max(1),
    };
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = s.count.map(|c| s.warmup + c);
    let deadline = s.duration.map(|d| start + d);
    let recorder = Recorder::new(start);
    let threads: Vec<_> = (0..s.concurrency)
        .map(|_| {
            let (template, next, keys) = (Arc::clone(&template), Arc::clone(&next), keys.clone());
            let warmup = s.warmup;
            std::thread::spawn(move || -> Result<Totals, String> {
                let mut stats = KindStats::default();
                let mut totals = Totals::default();
                let mut url = String::with_capacity(512);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if end.is_some_and(|e| i >= e) {
                        break;
                    }
                    let key = keys.fixture(i);
                    let t = Instant::now();
                    if deadline.is_some_and(|d| t >= d) {
                        break;
                    }
                    url.clear();
                    template
                        .sign_into(&key, &mut url)
                        .map_err(|e| e.to_string())?;
                    let took = t.elapsed();
                    if i >= warmup {
                        stats.ok += 1;
                        stats
                            .latency
                            .record(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX));
                        second(&mut totals.timeline, t.saturating_duration_since(start)).ops += 1;
                    }
                }
                totals.kinds.insert(OpKind::Presign, stats);
                Ok(totals)
            })
        })
        .collect();
    for t in threads {
        let totals = t
            .join()
            .map_err(|_| BenchError::Local("a presign thread panicked".into()))?
            .map_err(BenchError::Local)?;
        recorder.merge(totals);
    }
    let elapsed = deadline.map_or_else(|| start.elapsed(), |d| d.saturating_duration_since(start));
    Ok(Report::new(
        s,
        "",
        elapsed.max(Duration::from_nanos(1)),
        recorder.totals(),
    ))
}
