//! Splitting work over cores while keeping input order.
//!
//! Work runs on rayon's global pool rather than on threads spawned per call: a new thread starts
//! on the busy core and is migrated late, which left a core a third idle in batches of a few
//! milliseconds (docs/BENCHMARKS-HISTORY.md, "Batch: 10,000 URLs per call"). Chunks are
//! contiguous, which keeps order for free; presigning costs the same for every key, so equal
//! chunks finish together.

use std::num::NonZeroUsize;

/// How many threads `None` means: every core the process may use.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// The threads to use for `items` items: `threads` (all cores when `None`), at least 1, at most one per item.
pub fn thread_count(items: usize, threads: Option<usize>) -> usize {
    threads
        .unwrap_or_else(default_threads)
        .clamp(1, items.max(1))
}

/// Runs `f` over `items` cut into `states.len()` contiguous chunks, chunk `i` with `states[i]`,
/// and returns the results in chunk order. The states let callers reuse buffers across calls.
///
/// Each state is moved onto its worker's stack while `f` runs and put back afterwards: states
/// lie next to each other in `states`, and a `String` length updated there on every push would
/// make the cores fight over one cache line (this false sharing cost a quarter of the
/// two-thread rate before it was found).
pub fn zip_chunks<T: Sync, S: Send + Default, R: Send>(
    items: &[T],
    states: &mut [S],
    f: impl Fn(&[T], &mut S) -> R + Sync,
) -> Vec<R> {
    let size = items.len().div_ceil(states.len().max(1)).max(1);
    let mut pieces = items.chunks(size);
    if states.len() <= 1 {
        return states
            .iter_mut()
            .map(|s| f(pieces.next().unwrap_or(&[]), s))
            .collect();
    }
    let mut out: Vec<Option<R>> = (0..states.len()).map(|_| None).collect();
    rayon::scope(|scope| {
        let f = &f;
        for (state, slot) in states.iter_mut().zip(out.iter_mut()) {
            let piece = pieces.next().unwrap_or(&[]);
            scope.spawn(move |_| {
                let mut local = std::mem::take(state);
                *slot = Some(f(piece, &mut local));
                *state = local;
            });
        }
    });
    // `rayon::scope` returns only after every spawned job has run (a panic is re-raised here).
    out.into_iter().flatten().collect()
}

/// Runs `f` over `items` cut into one contiguous chunk per thread; results in chunk order.
pub fn map_chunks<T: Sync, R: Send>(
    items: &[T],
    threads: Option<usize>,
    f: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    let mut states = vec![(); thread_count(items.len(), threads)];
    zip_chunks(items, &mut states, |piece, ()| f(piece))
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

    #[test]
    fn zip_chunks_covers_every_item_once_with_its_state() {
        let items: Vec<u32> = (0..1001).collect();
        for n in [1, 2, 3, 7] {
            let mut states = vec![Vec::new(); n];
            zip_chunks(&items, &mut states, |c, s: &mut Vec<u32>| {
                s.extend_from_slice(c)
            });
            assert_eq!(states.concat(), items, "{n} states");
        }
        let mut states = vec![0usize; 2];
        assert_eq!(
            zip_chunks(&[] as &[u32], &mut states, |c, _| c.len()),
            vec![0, 0]
        );
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn a_panic_in_a_worker_reaches_the_caller() {
        map_chunks(&[1, 2, 3, 4], Some(2), |c| assert!(!c.contains(&4), "boom"));
    }
}
