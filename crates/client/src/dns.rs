//! Spreading connections over the addresses DNS returns.
//!
//! S3 answers a name with several addresses. Connecting to the first one every time puts every
//! pooled connection on one front-end host; rotating the list per lookup sends successive
//! connections to successive addresses, so a transfer's 16 connections land on several hosts
//! (the system resolver still does the lookup; hyper still falls back along the list).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use tower_service::Service;

/// The system resolver, with each answer rotated by one more place than the last.
#[derive(Clone)]
pub(crate) struct SpreadResolver {
    inner: GaiResolver,
    turn: Arc<AtomicUsize>,
}

impl SpreadResolver {
    pub(crate) fn new() -> Self {
        Self {
            inner: GaiResolver::new(),
            turn: Arc::default(),
        }
    }
}

/// `addrs` started at place `turn` (modulo its length).
fn rotate(mut addrs: Vec<SocketAddr>, turn: usize) -> Vec<SocketAddr> {
    if !addrs.is_empty() {
        let k = turn % addrs.len();
        addrs.rotate_left(k);
    }
    addrs
}

type Lookup =
    Pin<Box<dyn Future<Output = Result<std::vec::IntoIter<SocketAddr>, std::io::Error>> + Send>>;

impl Service<Name> for SpreadResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Lookup;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let lookup = self.inner.call(name);
        let turn = self.turn.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = lookup.await?.collect();
            Ok(rotate(addrs, turn).into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successive_lookups_start_at_successive_addresses() {
        let addrs: Vec<SocketAddr> = (1..=3)
            .map(|i| SocketAddr::from(([10, 0, 0, i], 443)))
            .collect();
        let firsts: Vec<SocketAddr> = (0..6).map(|t| rotate(addrs.clone(), t)[0]).collect();
        assert_eq!(
            firsts,
            [addrs[0], addrs[1], addrs[2], addrs[0], addrs[1], addrs[2]]
        );
        // Nothing is lost or repeated.
        let mut r = rotate(addrs.clone(), 2);
        r.sort();
        assert_eq!(r, addrs);
        assert!(rotate(Vec::new(), 5).is_empty());
    }

    #[tokio::test]
    async fn resolves_through_the_system_resolver() {
        let mut r = SpreadResolver::new();
        let name: Name = "localhost".parse().unwrap();
        let addrs: Vec<SocketAddr> = r.call(name).await.unwrap().collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }
}
