//! Running one step per part on a bounded number of tasks, results in part order.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::TransferError;

/// Runs `step(i)` for every `i` in `0..count` on `concurrency` tasks, each task taking the next
/// part as it finishes one (so a slow part does not hold back a batch). After the first error no
/// new part starts; that error is returned. Otherwise the results, in part order.
pub(crate) async fn for_each_part<T, F, Fut>(
    count: usize,
    concurrency: usize,
    step: F,
) -> Result<Vec<T>, TransferError>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, TransferError>> + Send + 'static,
{
    let next = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let results: Arc<Mutex<Vec<Option<T>>>> =
        Arc::new(Mutex::new((0..count).map(|_| None).collect()));
    let step = Arc::new(step);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.clamp(1, count.max(1)) {
        let (next, failed, results, step) = (
            Arc::clone(&next),
            Arc::clone(&failed),
            Arc::clone(&results),
            Arc::clone(&step),
        );
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count || failed.load(Ordering::Relaxed) {
                    return Ok(());
                }
                match step(i).await {
                    Ok(value) => {
                        if let Ok(mut r) = results.lock() {
                            r[i] = Some(value);
                        }
                    }
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
        });
    }
    let mut first_error = None;
    while let Some(joined) = tasks.join_next().await {
        let outcome = joined.unwrap_or_else(|e| Err(e.into()));
        if let (Err(e), None) = (outcome, &first_error) {
            first_error = Some(e);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let results = std::mem::take(
        &mut *results
            .lock()
            .map_err(|_| TransferError::Io(std::io::Error::other("a transfer task panicked")))?,
    );
    results
        .into_iter()
        .collect::<Option<Vec<T>>>()
        .ok_or_else(|| TransferError::Io(std::io::Error::other("a part went missing")))
}

/// A place in a many-object transfer's shared budget of parts in flight
/// (`TransferOptions::shared_parts`), held while one part moves; nothing without a budget.
pub(crate) async fn part_permit(budget: &Option<Arc<Semaphore>>) -> Option<OwnedSemaphorePermit> {
    match budget {
        Some(b) => Arc::clone(b).acquire_owned().await.ok(),
        None => None,
    }
}

/// Part buffers handed from a finished part to the next one, for uploads and downloads. Fresh
/// 8 MiB allocations per part cost RSS well beyond `concurrency x part_size` (docs/BENCHMARKS.md),
/// because the allocator keeps freed large blocks in per-thread
/// arenas; reusing them keeps memory at the bound.
#[derive(Default)]
pub(crate) struct BufferPool(Mutex<Vec<BytesMut>>);

impl BufferPool {
    pub(crate) fn take(&self) -> BytesMut {
        self.0
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default()
    }

    /// Keeps `data`'s allocation if nobody else holds it any more.
    pub(crate) fn give(&self, data: Bytes) {
        if let (Ok(buf), Ok(mut pool)) = (data.try_into_mut(), self.0.lock()) {
            pool.push(buf);
        }
    }
}
