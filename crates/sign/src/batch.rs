//! Splitting work over cores while keeping input order.

use std::num::NonZeroUsize;
use std::thread;

/// How many threads `None` means: every core the process may use.
pub fn default_threads() -> usize {
    thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// Runs `f` over `items` cut into one contiguous chunk per thread and returns the results in
/// chunk order. Contiguous chunks (rather than work stealing) keep order for free; presigning
/// costs the same for every key, so the chunks finish together.
pub fn map_chunks<T: Sync, R: Send>(
    items: &[T],
    threads: Option<usize>,
    f: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    let threads = threads
        .unwrap_or_else(default_threads)
        .clamp(1, items.len().max(1));
    if threads == 1 {
        return vec![f(items)];
    }
    let chunk = items.len().div_ceil(threads);
    thread::scope(|s| {
        let handles: Vec<_> = items.chunks(chunk).map(|c| s.spawn(|| f(c))).collect();
        // A panic in `f` is a bug in this crate; re-raise it on the caller's thread.
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_for_any_thread_count() {
        let items: Vec<u32> = (0..1001).collect();
        for threads in [1, 2, 3, 7, 64, 5000] {
            let out: Vec<u32> = map_chunks(&items, Some(threads), |c| c.to_vec()).concat();
            assert_eq!(out, items, "{threads} threads");
        }
        assert_eq!(map_chunks(&[] as &[u32], None, |c| c.len()), vec![0]);
    }
}
