//! A bounded set of tasks fed from a stream of work (a listing, a sync's plan): at most
//! `limit` run at once, each result is settled as it ends, and the first error stops new work
//! while the tasks already running finish (an object half-copied is not abandoned mid-request).
//! `copy_listed`, `delete_listed` and `sync` share it.

use std::future::Future;

use slipstream_client::xml::Object;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::many::Ended;
use crate::{Many, TransferError};

/// Runs `each(object)` for every object of a listing's pages, `limit` at a time, starting with
/// the first page; each task answers how its object [`Ended`].
/// A listing error stops new work; the first error is the answer once the tasks running ended.
pub(crate) async fn for_each_listed<F, Fut>(
    mut listed: mpsc::Receiver<Result<Vec<Object>, TransferError>>,
    limit: usize,
    mut each: F,
) -> Result<Many, TransferError>
where
    F: FnMut(Object) -> Fut,
    Fut: Future<Output = Result<Ended, TransferError>> + Send + 'static,
{
    let mut flight = Flight::new(limit);
    let mut moved = Many::default();
    let mut settle = |end: Ended| moved.settle(end);
    'listing: while let Some(page) = listed.recv().await {
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                flight.fail(e);
                break;
            }
        };
        for o in page {
            if !flight.start(each(o), &mut settle).await {
                break 'listing;
            }
        }
    }
    flight.finish(&mut settle).await?;
    Ok(moved)
}

/// Tasks in flight, at most `limit`, and the first error any of them met.
pub(crate) struct Flight<T> {
    tasks: JoinSet<Result<T, TransferError>>,
    limit: usize,
    failed: Option<TransferError>,
}

impl<T: Send + 'static> Flight<T> {
    /// At most `limit` (at least one) tasks at once.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            tasks: JoinSet::new(),
            limit: limit.max(1),
            failed: None,
        }
    }

    /// Starts `task` once fewer than `limit` run, settling the ones that end meanwhile with
    /// `settle`. After an error (a task's, or one [`Flight::fail`] was given) nothing new starts
    /// and this returns `false`: the caller stops feeding.
    pub(crate) async fn start<F>(&mut self, task: F, settle: &mut impl FnMut(T)) -> bool
    where
        F: Future<Output = Result<T, TransferError>> + Send + 'static,
    {
        while self.failed.is_none() && self.tasks.len() >= self.limit {
            self.settle_one(settle).await;
        }
        if self.failed.is_some() {
            return false;
        }
        self.tasks.spawn(task);
        true
    }

    /// Stops new work with `error` (the feed itself failed: a listing error).
    pub(crate) fn fail(&mut self, error: TransferError) {
        self.failed.get_or_insert(error);
    }

    /// Waits for every task still running; the first error met, if any.
    pub(crate) async fn finish(mut self, settle: &mut impl FnMut(T)) -> Result<(), TransferError> {
        while !self.tasks.is_empty() {
            self.settle_one(settle).await;
        }
        match self.failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    async fn settle_one(&mut self, settle: &mut impl FnMut(T)) {
        let Some(joined) = self.tasks.join_next().await else {
            return;
        };
        match joined.map_err(TransferError::from).and_then(|r| r) {
            Ok(value) => settle(value),
            Err(e) => {
                self.failed.get_or_insert(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn at_most_the_limit_run_and_the_first_error_stops_new_work() {
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut flight = Flight::new(3);
        let mut sum = 0;
        for i in 0..20u64 {
            let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
            let task = async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(i)
            };
            assert!(flight.start(task, &mut |v| sum += v).await);
        }
        flight.finish(&mut |v| sum += v).await.unwrap();
        assert_eq!(sum, (0..20).sum::<u64>());
        assert_eq!(peak.load(Ordering::SeqCst), 3);

        let mut flight = Flight::new(2);
        let mut settled = 0;
        let mut started = 0;
        for i in 0..50 {
            let task = async move {
                if i == 3 {
                    return Err(TransferError::Invalid("part 3".into()));
                }
                Ok(())
            };
            if !flight.start(task, &mut |()| settled += 1).await {
                break;
            }
            started += 1;
        }
        assert!(started < 50, "work went on after the error");
        let err = flight.finish(&mut |()| settled += 1).await.unwrap_err();
        assert!(err.to_string().contains("part 3"), "{err}");
        assert_eq!(settled, started - 1);
    }
}
