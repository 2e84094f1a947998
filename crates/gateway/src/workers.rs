//! The threads that serve client connections: one per core by default, each a current-thread
//! runtime with its own upstream pool. The main runtime accepts and hands each connection to
//! the next worker in turn; from then on the connection's TLS, its requests, their
//! verification and the origin connections they ride all run on that one thread.
//!
//! Why not one multi-thread runtime: its scheduler wakes a parked worker whenever a task
//! becomes ready while another is queued, and a proxied request readies several (the client
//! connection, the origin connection, the pool's keeper, the connection's return). At light
//! load the two threads of a 2-core machine kept waking each other, 2.7 context switches a
//! request, and a request cost 58 us of CPU where one thread spent 49 (docs/BENCHMARKS.md,
//! "The gateway's worker threads at light load"). Here the threads share no task, so a
//! request wakes its own thread only (1.9 switches a request; CPU 10% lower at 4 connections,
//! "A thread per core"), and together they use every core. One thread alone still costs less
//! at light load, as it finds more work waiting each time it wakes (`--threads 1`). What the
//! threads share is behind locks or atomics: the key cache (its fetches run on the main
//! runtime, with the signal handlers), the metrics, the access log's writer thread (each
//! worker hands it a batch of lines at a time: log_writer.rs).
//!
//! Connections are handed out in turn rather than to the least busy worker: a burst of fresh
//! clients then finds every pool's warm connections (each pool holds its share), and the
//! handover costs one wake-up a connection, not a request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::pool::PoolSettings;
use crate::proxy::Proxy;
use crate::GatewayError;

/// One worker thread: where its tasks run, and its own proxy (its own pool).
pub(crate) struct Worker {
    runtime: Handle,
    pub(crate) proxy: Arc<Proxy>,
    /// Sending (or dropping) it ends the thread's runtime; taken by [`Workers::stop`].
    stop: Mutex<Option<oneshot::Sender<()>>>,
    /// Sent once the thread's runtime has been dropped.
    finished: Mutex<Option<oneshot::Receiver<()>>>,
}

impl Worker {
    /// Runs `task` on this worker's thread.
    pub(crate) fn spawn<F>(&self, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        drop(self.runtime.spawn(task));
    }
}

/// The worker threads, handed connections in turn.
pub(crate) struct Workers {
    list: Vec<Worker>,
    next: AtomicUsize,
}

impl Workers {
    /// Starts `threads` workers, each with the proxy `proxy` makes around a pool holding its
    /// share of `pool` (made on the worker's runtime, where the pool's keeper and connections
    /// then run).
    pub(crate) fn start(
        threads: usize,
        pool: &PoolSettings,
        proxy: impl Fn(PoolSettings) -> Proxy,
    ) -> Result<Self, GatewayError> {
        if threads == 0 {
            return Err(GatewayError::Settings(
                "threads: the gateway needs at least one".into(),
            ));
        }
        let share = PoolSettings {
            min_idle: pool.min_idle.map(|n| n.div_ceil(threads)),
            floor: pool.floor.div_ceil(threads),
            max_idle: pool.max_idle.div_ceil(threads),
            ..pool.clone()
        };
        let mut list = Vec::with_capacity(threads);
        for i in 0..threads {
            let (runtime, stop, finished) = thread(i)?;
            let proxy = {
                let _on_worker = runtime.enter();
                proxy(share.clone())
            };
            list.push(Worker {
                runtime,
                proxy: Arc::new(proxy),
                stop: Mutex::new(Some(stop)),
                finished: Mutex::new(Some(finished)),
            });
        }
        Ok(Self {
            list,
            next: AtomicUsize::new(0),
        })
    }

    /// The worker that takes the next connection.
    pub(crate) fn next(&self) -> &Worker {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.list.len();
        &self.list[i]
    }

    /// Closes every pool, ends the threads' runtimes (dropping any task still on them, such
    /// as a connection that outlived the drain, with what it holds), waits for the threads
    /// to finish and hands their access log lines to the writer. Later calls return at once.
    pub(crate) async fn stop(&self) {
        for w in &self.list {
            w.proxy.pool.stop();
            if let Some(stop) = take(&w.stop) {
                let _ = stop.send(());
            }
        }
        for w in &self.list {
            if let Some(finished) = take(&w.finished) {
                let _ = finished.await;
            }
            w.proxy.log.flush();
        }
    }
}

fn take<T>(slot: &Mutex<Option<T>>) -> Option<T> {
    match slot.lock() {
        Ok(mut s) => s.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    }
}

/// A worker thread running a current-thread runtime until told to stop: its runtime's handle,
/// the stop sender and the "finished" receiver.
fn thread(i: usize) -> Result<(Handle, oneshot::Sender<()>, oneshot::Receiver<()>), GatewayError> {
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (finished_tx, finished_rx) = oneshot::channel();
    let handle = slipstream_client::spawn_runtime_thread(format!("gateway-{i}"), move |runtime| {
        // A dropped sender (the gateway dropped without serving) ends it too.
        runtime.block_on(async move {
            let _ = stop_rx.await;
        });
        drop(runtime);
        let _ = finished_tx.send(());
    })
    .map_err(|e| GatewayError::Settings(format!("cannot start worker thread {i}: {e}")))?;
    Ok((handle, stop_tx, finished_rx))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::access_log::AccessLog;
    use crate::metrics::Metrics;
    use crate::pool::Pool;

    fn workers(threads: usize) -> Result<Workers, GatewayError> {
        let metrics = Arc::new(Metrics::new());
        let log = Arc::new(AccessLog::open(None, Arc::clone(&metrics)).unwrap());
        // Nothing listens on port 1: the keepers' dials fail and back off.
        let origin: hyper::Uri = "http://127.0.0.1:1".parse().unwrap();
        let options = slipstream_client::ClientOptions::default();
        let dialer = slipstream_client::Dialer::new(&options, None, false).unwrap();
        let settings = PoolSettings {
            min_idle: Some(3),
            floor: 4,
            max_idle: 5,
            keepalive: Duration::from_secs(15),
            connect_timeout: Duration::from_secs(1),
        };
        Workers::start(threads, &settings, |share| {
            assert_eq!(
                (share.min_idle, share.floor, share.max_idle),
                (Some(2), 2, 3)
            );
            Proxy {
                pool: Pool::start(origin.clone(), dialer.clone(), share, Arc::clone(&metrics)),
                origin: origin.clone(),
                origin_timeout: Duration::from_secs(1),
                metrics: Arc::clone(&metrics),
                log: Arc::clone(&log),
                verify: None,
            }
        })
    }

    /// The thread `worker` runs its tasks on, or `None` if it runs none.
    async fn thread_of(worker: &Worker) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        worker.spawn(async move {
            let _ = tx.send(std::thread::current().name().map(str::to_owned));
        });
        rx.await.ok().flatten()
    }

    #[tokio::test]
    async fn connections_go_to_each_worker_in_turn_and_stay_on_its_thread() {
        let workers = workers(2).unwrap();
        let turns = [
            thread_of(workers.next()).await,
            thread_of(workers.next()).await,
            thread_of(workers.next()).await,
        ];
        let names = ["gateway-0", "gateway-1", "gateway-0"].map(|n| Some(n.to_owned()));
        assert_eq!(turns, names);
        let first = &workers.list[0];
        workers.stop().await;
        assert_eq!(thread_of(first).await, None, "a stopped worker ran a task");
        workers.stop().await; // again: nothing left to stop
    }

    #[tokio::test]
    async fn no_threads_is_refused() {
        let Err(e) = workers(0) else {
            panic!("0 threads accepted");
        };
        assert!(e.to_string().contains("at least one"), "{e}");
    }
}
