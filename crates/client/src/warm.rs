//! Connections opened before they are needed.
//!
//! A multipart upload cannot send a part before `CreateMultipartUpload` has answered, and its
//! parts then need `concurrency` connections: opened only then, each costs a round trip for TCP
//! and one more for TLS before its first byte. [`Warm`] wraps the pool's connector so that
//! [`Warm::open`] can connect (and handshake) while that first request is on its way; the pool's
//! next connection requests for the same origin take those ready connections instead of
//! dialling. Connections nobody takes within [`KEEP`] are closed (servers close idle ones too).
//!
//! This does not open connections by itself: callers ask, when they know a transfer will need
//! them (a large upload), so a small request never pays for handshakes it does not use. Nor
//! does it open what the pool likely has: the connections to that origin dialled since it was
//! last quiet for the pool's idle timeout count against those asked for, so the next upload of a
//! recursive copy reuses the pool's connections, while a download whose listing and HeadBucket
//! dialled two still gets the rest opened while the listing arrives.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::Uri;
use tokio::sync::Notify;
use tower_service::Service;

use crate::connect_time::origin;

/// How long an opened connection waits to be taken.
const KEEP: Duration = Duration::from_secs(10);

/// A connector with a shelf of connections already open, per origin.
pub(crate) struct Warm<C: Service<Uri>> {
    inner: C,
    shelf: Arc<Mutex<Vec<Shelved<C::Response>>>>,
    /// Per origin, the connections dialled since it was last quiet, and those being opened.
    dialled: Arc<Mutex<HashMap<String, Dials>>>,
    /// Woken whenever an opened connection is shelved or fails.
    opened: Arc<Notify>,
}

/// Connections dialled to one origin (by the pool or [`Warm::open`]) since a pause, and how many
/// of [`Warm::open`]'s are still connecting.
struct Dials {
    last: Instant,
    count: usize,
    connecting: usize,
}

impl<C: Service<Uri> + Clone> Clone for Warm<C> {
    /// The same shelf: the pool's copy and the client's see the same connections.
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shelf: Arc::clone(&self.shelf),
            dialled: Arc::clone(&self.dialled),
            opened: Arc::clone(&self.opened),
        }
    }
}

struct Shelved<T> {
    origin: String,
    opened: Instant,
    connection: T,
}

impl<C> Warm<C>
where
    C: Service<Uri> + Clone + Send + 'static,
    C::Response: Send + 'static,
    C::Future: Send + 'static,
{
    pub(crate) fn new(inner: C) -> Self {
        Self {
            inner,
            shelf: Arc::default(),
            dialled: Arc::default(),
            opened: Arc::default(),
        }
    }

    /// Starts opening connections to `uri`'s origin in the background (on the current runtime)
    /// so that `n` are there: those dialled since the origin was last quiet for `recent` (the
    /// pool likely holds them) count against `n`. Until they connect, the pool's requests for
    /// that origin wait for them rather than dial more. Failures are dropped (the pool then
    /// dials, and reports, as usual).
    pub(crate) fn open(&self, uri: &Uri, n: usize, recent: Duration) {
        let origin = origin(uri);
        let n = self.count_dials(&origin, Some(recent), n);
        for _ in 0..n {
            let (mut inner, this, uri, origin) = (
                self.inner.clone(),
                self.clone(),
                uri.clone(),
                origin.clone(),
            );
            tokio::spawn(async move {
                let connected = inner.call(uri).await;
                if let (Ok(connection), Ok(mut shelf)) = (connected, this.shelf.lock()) {
                    shelf.push(Shelved {
                        origin: origin.clone(),
                        opened: Instant::now(),
                        connection,
                    });
                }
                if let Ok(mut d) = this.dialled.lock() {
                    if let Some(dials) = d.get_mut(&origin) {
                        dials.connecting = dials.connecting.saturating_sub(1);
                    }
                }
                this.opened.notify_waiters();
            });
        }
    }

    /// Counts dials to `origin` (a pause of `recent` or more before this one starts the count
    /// again): up to `wanted` in all since the pause with `Some(recent)` (how many more to
    /// open is returned, counted as connecting), else exactly `wanted` more (the pool's own).
    fn count_dials(&self, origin: &str, recent: Option<Duration>, wanted: usize) -> usize {
        let Ok(mut d) = self.dialled.lock() else {
            return 0;
        };
        let now = Instant::now();
        let dials = d.entry(origin.to_owned()).or_insert(Dials {
            last: now,
            count: 0,
            connecting: 0,
        });
        let more = match recent {
            Some(recent) => {
                if now.duration_since(dials.last) >= recent {
                    dials.count = 0;
                }
                let more = wanted.saturating_sub(dials.count);
                dials.connecting += more;
                more
            }
            None => wanted,
        };
        dials.count += more;
        dials.last = now;
        more
    }

    /// Whether [`Warm::open`] is still connecting some connections to `origin`.
    fn connecting(&self, origin: &str) -> bool {
        let Ok(d) = self.dialled.lock() else {
            return false;
        };
        d.get(origin).is_some_and(|dials| dials.connecting > 0)
    }

    /// A ready connection to `origin`, if one is on the shelf (stale ones are dropped).
    fn take(&self, origin: &str) -> Option<C::Response> {
        let mut shelf = self.shelf.lock().ok()?;
        shelf.retain(|s| s.opened.elapsed() < KEEP);
        let i = shelf.iter().position(|s| s.origin == origin)?;
        Some(shelf.swap_remove(i).connection)
    }
}

impl<C> Service<Uri> for Warm<C>
where
    C: Service<Uri> + Clone + Send + 'static,
    C::Response: Send + 'static,
    C::Error: Send + 'static,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = C::Error;
    type Future = Pin<Box<dyn Future<Output = Result<C::Response, C::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    /// A shelved connection; else, while [`Warm::open`] is still connecting some, the first of
    /// them to connect (a burst of requests right after `open` would otherwise dial as many
    /// again); else a new one.
    fn call(&mut self, uri: Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let origin = origin(&uri);
            loop {
                let opened = this.opened.notified();
                tokio::pin!(opened);
                opened.as_mut().enable();
                if let Some(connection) = this.take(&origin) {
                    return Ok(connection);
                }
                if !this.connecting(&origin) {
                    this.count_dials(&origin, None, 1);
                    let mut inner = this.inner.clone();
                    return inner.call(uri).await;
                }
                opened.await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A connector whose "connections" are numbers, counting its dials.
    #[derive(Clone, Default)]
    struct Counting(Arc<AtomicUsize>);

    impl Service<Uri> for Counting {
        type Response = usize;
        type Error = std::io::Error;
        type Future = std::future::Ready<Result<usize, std::io::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        /// `down.example` refuses (after counting the dial).
        fn call(&mut self, uri: Uri) -> Self::Future {
            let n = self.0.fetch_add(1, Ordering::SeqCst);
            std::future::ready(match uri.host() {
                Some("down.example") => Err(std::io::ErrorKind::ConnectionRefused.into()),
                _ => Ok(n),
            })
        }
    }

    #[tokio::test]
    async fn opened_connections_are_taken_before_dialling_and_only_for_their_origin() {
        let dials = Counting::default();
        let mut warm = Warm::new(dials.clone());
        let a: Uri = "https://a.example/k".parse().unwrap();
        let b: Uri = "https://b.example/k".parse().unwrap();
        warm.open(&a, 3, Duration::from_secs(15));
        while warm.shelf.lock().unwrap().len() < 3 {
            tokio::task::yield_now().await;
        }
        assert_eq!(dials.0.load(Ordering::SeqCst), 3);
        // Another origin dials; `a` gets its three shelved ones, then dials again.
        warm.call(b.clone()).await.unwrap();
        assert_eq!(dials.0.load(Ordering::SeqCst), 4);
        let mut got: Vec<usize> = Vec::new();
        for _ in 0..3 {
            got.push(warm.call(a.clone()).await.unwrap());
        }
        got.sort_unstable();
        assert_eq!(got, [0, 1, 2]);
        assert_eq!(dials.0.load(Ordering::SeqCst), 4);
        warm.call(a.clone()).await.unwrap();
        assert_eq!(dials.0.load(Ordering::SeqCst), 5);
        // `a` has had four dials, `b` one: asking for four of each opens only `b`'s other three.
        warm.open(&a, 4, Duration::from_secs(15));
        warm.open(&b, 4, Duration::from_secs(15));
        while warm.shelf.lock().unwrap().len() < 3 {
            tokio::task::yield_now().await;
        }
        assert_eq!(dials.0.load(Ordering::SeqCst), 8);
        assert!(warm
            .shelf
            .lock()
            .unwrap()
            .iter()
            .all(|s| s.origin.contains("b.example")));
        // After a pause as long as `recent`, the count starts again.
        warm.open(&a, 2, Duration::ZERO);
        while warm.shelf.lock().unwrap().len() < 5 {
            tokio::task::yield_now().await;
        }
        assert_eq!(dials.0.load(Ordering::SeqCst), 10);
    }

    #[tokio::test]
    async fn requests_right_after_open_wait_for_its_connections_instead_of_dialling() {
        let dials = Counting::default();
        let mut warm = Warm::new(dials.clone());
        let a: Uri = "https://a.example/k".parse().unwrap();
        // The opens are spawned, not yet run, when the requests come: they take them.
        warm.open(&a, 3, Duration::from_secs(15));
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(warm.call(a.clone()).await.unwrap());
        }
        got.sort_unstable();
        assert_eq!((got, dials.0.load(Ordering::SeqCst)), (vec![0, 1, 2], 3));
        // Once none is connecting, a request dials.
        assert_eq!(warm.call(a.clone()).await.unwrap(), 3);
        // Opens that fail leave nobody waiting: the request dials itself.
        let down: Uri = "https://down.example/k".parse().unwrap();
        warm.open(&down, 2, Duration::from_secs(15));
        assert!(warm.call(down.clone()).await.is_err());
        assert_eq!(dials.0.load(Ordering::SeqCst), 7);
    }
}
