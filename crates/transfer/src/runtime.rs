//! The I/O runtime the CLI and the Python package run transfers on.

use std::num::NonZeroUsize;

/// The most threads tokio's blocking pool may start for the file work of transfers (positioned
/// reads and writes, `create_dir_all`): four per core, at least 8 and at most 64. Page-cache
/// reads and writes are CPU work, so more threads than that only wait for the cores. Tokio's
/// default is 512, and each thread keeps its own allocator heap and stack pages, about 1 MiB of
/// RSS: 256 objects in flight over a long link come back in bursts, each burst starts threads
/// while the others are busy, and a download of 10,000 x 16 KiB peaked at 96 to 311 MiB
/// (57 to 197 threads) where 8 threads held it at 67 to 73 MiB in the same time
/// (docs/BENCHMARKS.md, "Many objects in flight, fewer threads").
pub fn blocking_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    cores.saturating_mul(4).clamp(8, 64)
}

/// A multi-threaded runtime with I/O and timers, its blocking pool capped at
/// [`blocking_threads`].
pub fn io_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(blocking_threads())
        .enable_all()
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn blocking_work_beyond_the_cap_waits_its_turn_and_all_of_it_runs() {
        let cap = blocking_threads();
        assert!((8..=64).contains(&cap), "{cap}");
        let runtime = io_runtime().unwrap();
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let done = runtime.block_on(async {
            let tasks: Vec<_> = (0..3 * cap)
                .map(|_| {
                    let (now, most) = (Arc::clone(&now), Arc::clone(&most));
                    tokio::task::spawn_blocking(move || {
                        let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(running, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        now.fetch_sub(1, Ordering::SeqCst);
                    })
                })
                .collect();
            let mut done = 0;
            for t in tasks {
                t.await.unwrap();
                done += 1;
            }
            done
        });
        assert_eq!(done, 3 * cap);
        let most = most.load(Ordering::SeqCst);
        assert!(most <= cap && most > 1, "{most} at once, cap {cap}");
    }
}
