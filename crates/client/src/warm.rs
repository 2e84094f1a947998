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
use tower_service::Service;

/// How long an opened connection waits to be taken.
const KEEP: Duration = Duration::from_secs(10);

/// A connector with a shelf of connections already open, per origin.
pub(crate) struct Warm<C: Service<Uri>> {
    inner: C,
    shelf: Arc<Mutex<Vec<Shelved<C::Response>>>>,
    /// Per origin, the connections dialled since it was last quiet.
    dialled: Arc<Mutex<HashMap<String, Dials>>>,
}

/// Connections dialled to one origin (by the pool or [`Warm::open`]) since a pause.
struct Dials {
    last: Instant,
    count: usize,
}

impl<C: Service<Uri> + Clone> Clone for Warm<C> {
    /// The same shelf: the pool's copy and the client's see the same connections.
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shelf: Arc::clone(&self.shelf),
            dialled: Arc::clone(&self.dialled),
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
        }
    }

    /// Starts opening connections to `uri`'s origin in the background (on the current runtime)
    /// so that `n` are there: those dialled since the origin was last quiet for `recent` (the
    /// pool likely holds them) count against `n`. Failures are dropped (the pool will dial,
    /// and report, as usual).
    pub(crate) fn open(&self, uri: &Uri, n: usize, recent: Duration) {
        let origin = origin(uri);
        let n = self.count_dials(&origin, Some(recent), n);
        for _ in 0..n {
            let (mut inner, shelf, uri, origin) = (
                self.inner.clone(),
                Arc::clone(&self.shelf),
                uri.clone(),
                origin.clone(),
            );
            tokio::spawn(async move {
                if let Ok(connection) = inner.call(uri).await {
                    if let Ok(mut s) = shelf.lock() {
                        s.push(Shelved {
                            origin,
                            opened: Instant::now(),
                            connection,
                        });
                    }
                }
            });
        }
    }

    /// Counts dials to `origin` (a pause of `recent` or more before this one starts the count
    /// again): up to `wanted` in all since the pause with `Some(recent)` (how many more to
    /// dial is returned), else exactly `wanted` more (the pool's own).
    fn count_dials(&self, origin: &str, recent: Option<Duration>, wanted: usize) -> usize {
        let Ok(mut d) = self.dialled.lock() else {
            return 0;
        };
        let now = Instant::now();
        let dials = d.entry(origin.to_owned()).or_insert(Dials {
            last: now,
            count: 0,
        });
        let more = match recent {
            Some(recent) => {
                if now.duration_since(dials.last) >= recent {
                    dials.count = 0;
                }
                wanted.saturating_sub(dials.count)
            }
            None => wanted,
        };
        dials.count += more;
        dials.last = now;
        more
    }

    /// A ready connection to `uri`'s origin, if one is on the shelf (stale ones are dropped).
    fn take(&self, uri: &Uri) -> Option<C::Response> {
        let mut shelf = self.shelf.lock().ok()?;
        shelf.retain(|s| s.opened.elapsed() < KEEP);
        let origin = origin(uri);
        let i = shelf.iter().position(|s| s.origin == origin)?;
        Some(shelf.swap_remove(i).connection)
    }
}

/// `scheme://host:port`, what makes two connections interchangeable.
fn origin(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("http");
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
    format!("{scheme}://{}:{port}", uri.host().unwrap_or(""))
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

    fn call(&mut self, uri: Uri) -> Self::Future {
        match self.take(&uri) {
            Some(connection) => Box::pin(std::future::ready(Ok(connection))),
            None => {
                self.count_dials(&origin(&uri), None, 1);
                Box::pin(self.inner.call(uri))
            }
        }
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

        fn call(&mut self, _: Uri) -> Self::Future {
            std::future::ready(Ok(self.0.fetch_add(1, Ordering::SeqCst)))
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

    #[test]
    fn origins_include_the_default_port() {
        let o = |s: &str| origin(&s.parse().unwrap());
        assert_eq!(
            o("https://b.s3.amazonaws.com/k"),
            "https://b.s3.amazonaws.com:443"
        );
        assert_eq!(o("http://127.0.0.1:9000/b/k"), "http://127.0.0.1:9000");
        assert_ne!(o("http://h/"), o("https://h/"));
    }
}
