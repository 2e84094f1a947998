//! A client's aws-chunked body, verified chunk by chunk and forwarded as a new
//! `STREAMING-UNSIGNED-PAYLOAD-TRAILER` body whose checksum trailer closes it.
//!
//! Why re-frame: the client's chunk signatures chain from its seed signature, which the edge
//! replaces when it signs upstream, so they cannot be forwarded (clyso/chorus #265). And why
//! this framing: the origin stores nothing until the trailer arrives and its checksum matches
//! the data, and the edge writes the trailer only after the last chunk, the client's trailer
//! signature and `x-amz-decoded-content-length` verified. An upload that fails verification
//! anywhere ends without a trailer (the upstream request is abandoned), so it never creates an
//! object; and no byte reaches the origin before the chunk that carried it verified.
//!
//! The trailer is the client's checksum trailer when it sent one (the origin checks it against
//! the data), else a CRC64NVME the edge computes (what S3 computes for objects anyway). Chunks
//! go out at [`CHUNK`] bytes so the encoded length, which the origin needs up front, is known
//! from the decoded length.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use slipstream_client::{checksum::Crc, ChecksumAlgorithm};
use slipstream_sign::verify::{ChunkedBody, VerifyError};
use tokio::sync::oneshot;

use crate::pool::BoxError;

/// The size of the chunks sent upstream (the last may be shorter).
pub(crate) const CHUNK: usize = 64 * 1024;

/// The trailer that closes the forwarded body.
pub(crate) enum Trailer {
    /// The client's own checksum trailer: its name, and the length its base64 value has.
    Client { name: String, value_len: usize },
    /// A checksum the client sent as a header, moved into the trailer.
    Header { name: String, value: String },
    /// A checksum the edge computes.
    Computed {
        algorithm: ChecksumAlgorithm,
        crc: Box<Crc>,
    },
}

impl Trailer {
    /// The trailer for a request that announced `x-amz-trailer: client` (or none).
    pub(crate) fn for_request(client: Option<&str>) -> Result<Self, VerifyError> {
        let Some(name) = client else {
            let algorithm = ChecksumAlgorithm::Crc64Nvme;
            return Ok(Trailer::Computed {
                algorithm,
                crc: Box::new(algorithm.start()),
            });
        };
        let name = name.trim().to_ascii_lowercase();
        let value_len = match name.as_str() {
            // Base64 of 4, 8, 20, 32 and 64 bytes (and of MD5's 16 and the xxhashes').
            "x-amz-checksum-crc32" | "x-amz-checksum-crc32c" => 8,
            "x-amz-checksum-crc64nvme" | "x-amz-checksum-xxhash64" | "x-amz-checksum-xxhash3" => 12,
            "x-amz-checksum-md5" | "x-amz-checksum-xxhash128" => 24,
            "x-amz-checksum-sha1" => 28,
            "x-amz-checksum-sha256" => 44,
            "x-amz-checksum-sha512" => 88,
            _ => {
                return Err(VerifyError::InvalidRequest(format!(
                    "the trailer {name} is not a checksum S3 knows"
                )))
            }
        };
        Ok(Trailer::Client { name, value_len })
    }

    /// The trailer header's name.
    pub(crate) fn name(&self) -> &str {
        match self {
            Trailer::Client { name, .. } | Trailer::Header { name, .. } => name,
            Trailer::Computed { algorithm, .. } => algorithm.header(),
        }
    }

    fn value_len(&self) -> usize {
        match self {
            Trailer::Client { value_len, .. } => *value_len,
            Trailer::Header { value, .. } => value.len(),
            Trailer::Computed { algorithm, .. } => algorithm.encode(0).len(),
        }
    }
}

/// The length of the forwarded body for `decoded` bytes of data and `trailer`.
pub(crate) fn encoded_len(decoded: u64, trailer: &Trailer) -> u64 {
    let chunk = CHUNK as u64;
    let full = decoded / chunk;
    let last = decoded % chunk;
    let framed = |size: u64| format!("{size:x}").len() as u64 + 2 + size + 2;
    let mut total = full * framed(chunk);
    if last > 0 {
        total += framed(last);
    }
    // `0\r\n`, `name:value\r\n`, `\r\n`.
    total + 3 + (trailer.name().len() + 1 + trailer.value_len() + 2) as u64 + 2
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
    chunked: ChunkedBody,
    trailer: Trailer,
    /// Verified data not yet sent.
    data: Vec<u8>,
    failure: FailureSlot,
    counted: Arc<AtomicU64>,
    done: Option<oneshot::Sender<()>>,
    ended: bool,
}

impl Reframed {
    pub(crate) fn new(
        inner: Incoming,
        chunked: ChunkedBody,
        trailer: Trailer,
        failure: FailureSlot,
        counted: Arc<AtomicU64>,
        done: oneshot::Sender<()>,
    ) -> Self {
        Self {
            inner,
            chunked,
            trailer,
            data: Vec::with_capacity(CHUNK),
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

    /// The next `CHUNK` of verified data, framed.
    fn frame(&mut self, size: usize) -> Bytes {
        let mut out = BytesMut::with_capacity(size + 16);
        out.put_slice(format!("{size:x}\r\n").as_bytes());
        out.put_slice(&self.data[..size]);
        out.put_slice(b"\r\n");
        if let Trailer::Computed { crc, .. } = &mut self.trailer {
            crc.update(&self.data[..size]);
        }
        self.data.drain(..size);
        out.freeze()
    }

    /// The final chunk and the trailer, once everything verified.
    fn closing(&self) -> Result<Bytes, VerifyError> {
        let value = match &self.trailer {
            Trailer::Computed { algorithm, crc } => algorithm.encode(crc.value()),
            Trailer::Header { value, .. } => value.clone(),
            Trailer::Client { name, value_len } => {
                let sent = self
                    .chunked
                    .trailers()
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_owned())
                    .ok_or_else(|| {
                        VerifyError::InvalidRequest(format!("the trailer {name} did not arrive"))
                    })?;
                if sent.len() != *value_len {
                    return Err(VerifyError::InvalidRequest(format!(
                        "the trailer {name} is not a base64 checksum of the right length"
                    )));
                }
                sent
            }
        };
        Ok(Bytes::from(format!(
            "0\r\n{}:{value}\r\n\r\n",
            self.trailer.name()
        )))
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
            if self.data.len() >= CHUNK {
                return Poll::Ready(Some(Ok(Frame::data(self.frame(CHUNK)))));
            }
            match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    let Ok(bytes) = frame.into_data() else {
                        continue; // HTTP trailers of the client's request: not S3's
                    };
                    self.counted
                        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    let this = &mut *self;
                    if let Err(e) = this.chunked.feed(&bytes, &mut this.data) {
                        return self.fail(e);
                    }
                }
                Some(Err(e)) => {
                    self.ended = true;
                    return Poll::Ready(Some(Err(e.into())));
                }
                None => {
                    if let Err(e) = self.chunked.finish() {
                        return self.fail(e);
                    }
                    if !self.data.is_empty() {
                        let size = self.data.len();
                        return Poll::Ready(Some(Ok(Frame::data(self.frame(size)))));
                    }
                    let closing = match self.closing() {
                        Ok(c) => c,
                        Err(e) => return self.fail(e),
                    };
                    self.ended = true;
                    if let Some(done) = self.done.take() {
                        let _ = done.send(());
                    }
                    return Poll::Ready(Some(Ok(Frame::data(closing))));
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Reframed` sends for `data`, built independently.
    fn framed(data: &[u8], trailer: &str, value: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in data.chunks(CHUNK) {
            out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            out.extend_from_slice(chunk);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("0\r\n{trailer}:{value}\r\n\r\n").as_bytes());
        out
    }

    #[test]
    fn the_encoded_length_is_known_from_the_decoded_one() {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17] {
            let data = vec![7u8; len];
            let computed = Trailer::for_request(None).unwrap();
            let value = ChecksumAlgorithm::Crc64Nvme.base64_of(&data);
            assert_eq!(
                encoded_len(len as u64, &computed),
                framed(&data, "x-amz-checksum-crc64nvme", &value).len() as u64,
                "{len} bytes"
            );
            let client = Trailer::for_request(Some("x-amz-checksum-crc32")).unwrap();
            assert_eq!(
                encoded_len(len as u64, &client),
                framed(&data, "x-amz-checksum-crc32", "AAAAAA==").len() as u64
            );
        }
    }

    #[test]
    fn only_checksum_trailers_are_forwarded() {
        assert!(Trailer::for_request(Some("x-amz-meta-evil")).is_err());
        assert!(Trailer::for_request(Some("X-Amz-Checksum-CRC32C")).is_ok());
    }
}
