//! The live line: once a second on standard error, rewritten in place (a terminal only).

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::record::Recorder;

/// Prints the running totals every second until aborted.
pub async fn live(recorder: Arc<Recorder>, start: Instant) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let (mut last_done, mut last_bytes) = (0u64, 0u64);
    loop {
        tick.tick().await;
        let done = recorder.done.load(Ordering::Relaxed);
        let bytes = recorder.bytes.load(Ordering::Relaxed);
        let errors = recorder.errors.load(Ordering::Relaxed);
        eprint!(
            "\r[{:>6.1} s] {done} operations, {} ops/s, {:.1} MB/s, {errors} errors   ",
            start.elapsed().as_secs_f64(),
            done - last_done,
            (bytes - last_bytes) as f64 / 1e6
        );
        let _ = std::io::stderr().flush();
        (last_done, last_bytes) = (done, bytes);
    }
}
