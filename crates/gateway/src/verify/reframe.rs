//! A client's aws-chunked body on its way to the origin, verified and re-framed by
//! `slipstream_sign::verify::Reframer` (why, and why this framing: its module's doc). This is
//! the I/O around it: the client's frames in, the re-framed bytes out as they are ready, and
//! a failure left for the handler, which answers the client with it.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use slipstream_client::{checksum::Crc, ChecksumAlgorithm};
use slipstream_sign::verify::{Reframer, Trailer, TrailerChecksum, VerifyError};
use tokio::sync::oneshot;

use crate::pool::BoxError;

/// The checksum the edge computes when the client sent none: CRC64NVME, what S3 computes for
/// objects anyway.
struct Computed {
    algorithm: ChecksumAlgorithm,
    crc: Crc,
}

impl TrailerChecksum for Computed {
    fn update(&mut self, data: &[u8]) {
        self.crc.update(data);
    }

    fn value(&self) -> String {
        self.algorithm.encode(self.crc.value())
    }
}

/// The trailer for a request that announced `x-amz-trailer: client` (or none: computed).
pub(crate) fn trailer_for(client: Option<&str>) -> Result<Trailer, VerifyError> {
    match client {
        Some(name) => Trailer::client(name),
        None => {
            let algorithm = ChecksumAlgorithm::Crc64Nvme;
            Ok(Trailer::Computed {
                name: algorithm.header().to_owned(),
                checksum: Box::new(Computed {
                    algorithm,
                    crc: algorithm.start(),
                }),
            })
        }
    }
}

/// Where a verification failure is left for the handler, which answers the client with it
/// (the upstream request fails with a generic body error).
pub(crate) type FailureSlot = Arc<Mutex<Option<VerifyError>>>;

/// Leaves `e` in `slot` (the first failure wins) and returns the error that ends the upstream
/// body.
pub(crate) fn fail_body(slot: &FailureSlot, e: VerifyError) -> BoxError {
    let text = e.to_string();
    if let Ok(mut first) = slot.lock() {
        first.get_or_insert(e);
    }
    text.into()
}

/// The forwarded body.
pub(crate) struct Reframed {
    inner: Incoming,
    reframer: Reframer,
    failure: FailureSlot,
    counted: Arc<AtomicU64>,
    done: Option<oneshot::Sender<()>>,
    ended: bool,
}

impl Reframed {
    pub(crate) fn new(
        inner: Incoming,
        reframer: Reframer,
        failure: FailureSlot,
        counted: Arc<AtomicU64>,
        done: oneshot::Sender<()>,
    ) -> Self {
        Self {
            inner,
            reframer,
            failure,
            counted,
            done: Some(done),
            ended: false,
        }
    }

    /// Records why the body was refused and ends the upstream request with an error.
    fn fail(&mut self, e: VerifyError) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.ended = true;
        Poll::Ready(Some(Err(fail_body(&self.failure, e))))
    }
}

impl Body for Reframed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        loop {
            if self.ended {
                return Poll::Ready(None);
            }
            let mut out = Vec::new();
            match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    let Ok(bytes) = frame.into_data() else {
                        continue; // HTTP trailers of the client's request: not S3's
                    };
                    self.counted
                        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    if let Err(e) = self.reframer.feed(&bytes, &mut out) {
                        return self.fail(e);
                    }
                }
                Some(Err(e)) => {
                    self.ended = true;
                    return Poll::Ready(Some(Err(e.into())));
                }
                None => {
                    if let Err(e) = self.reframer.finish(&mut out) {
                        return self.fail(e);
                    }
                    self.ended = true;
                    if let Some(done) = self.done.take() {
                        let _ = done.send(());
                    }
                }
            }
            if !out.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
