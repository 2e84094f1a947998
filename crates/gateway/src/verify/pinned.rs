//! A streamed body whose SHA-256 the client signed (`x-amz-content-sha256: <hex>`), too large
//! to hold: forwarded as it comes, hashed on the way, and ended with an error instead of its
//! last frame if the hash differs. The origin is asked to check the same hash (the edge signs
//! upstream with it), so a mismatch never creates an object there either.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use sha2::{Digest, Sha256};
use slipstream_sign::verify::Verified;
use tokio::sync::oneshot;

use super::reframe::{fail_body, FailureSlot};
use crate::pool::BoxError;

/// The forwarded body. The frame that completes it is held back until the hash is checked.
pub(crate) struct Pinned {
    inner: Incoming,
    verified: Arc<Verified>,
    hash: Sha256,
    held: Option<Bytes>,
    failure: FailureSlot,
    counted: Arc<AtomicU64>,
    done: Option<oneshot::Sender<()>>,
    ended: bool,
}

impl Pinned {
    pub(crate) fn new(
        inner: Incoming,
        verified: Arc<Verified>,
        failure: FailureSlot,
        counted: Arc<AtomicU64>,
        done: oneshot::Sender<()>,
    ) -> Self {
        Self {
            inner,
            verified,
            hash: Sha256::new(),
            held: None,
            failure,
            counted,
            done: Some(done),
            ended: false,
        }
    }
}

impl Body for Pinned {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        loop {
            if self.ended {
                return Poll::Ready(None);
            }
            match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    let Ok(bytes) = frame.into_data() else {
                        continue;
                    };
                    self.counted
                        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    self.hash.update(&bytes);
                    // One frame is always held back, so the last one goes out only once the
                    // hash is known to match.
                    if let Some(previous) = self.held.replace(bytes) {
                        return Poll::Ready(Some(Ok(Frame::data(previous))));
                    }
                }
                Some(Err(e)) => {
                    self.ended = true;
                    return Poll::Ready(Some(Err(e.into())));
                }
                None => {
                    self.ended = true;
                    let digest: [u8; 32] = std::mem::take(&mut self.hash).finalize().into();
                    if let Err(e) = self.verified.check_body(&digest) {
                        return Poll::Ready(Some(Err(fail_body(&self.failure, e))));
                    }
                    if let Some(done) = self.done.take() {
                        let _ = done.send(());
                    }
                    return Poll::Ready(self.held.take().map(|b| Ok(Frame::data(b))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.held.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
