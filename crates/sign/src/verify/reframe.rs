//! A client's aws-chunked body, verified chunk by chunk ([`ChunkedBody`]) and written again as
//! a `STREAMING-UNSIGNED-PAYLOAD-TRAILER` body whose checksum trailer closes it: what a
//! verifying proxy forwards after replacing the client's signature with its own.
//!
//! Why re-frame: the client's chunk signatures chain from its seed signature, which the proxy
//! replaces when it signs upstream, so they cannot be forwarded. And why this framing: the
//! origin stores nothing until the trailer arrives and its checksum matches the data, and the
//! trailer is written only after the last chunk, the client's trailer signature and
//! `x-amz-decoded-content-length` verified ([`Reframer::finish`]). A body that fails anywhere
//! ends without a trailer, so it never creates an object; and no byte is written before the
//! chunk that carried it verified.
//!
//! Chunks go out at [`REFRAMED_CHUNK`] bytes, so the encoded length, which the origin needs up
//! front, is known from the decoded length ([`encoded_len`]). Sans-IO: the caller feeds what
//! arrived and sends what comes out.

use super::{ChunkedBody, VerifyError};

/// The size of the chunks written (the last may be shorter).
pub const REFRAMED_CHUNK: usize = 64 * 1024;

/// A running checksum of the data, for a trailer the proxy computes itself (CRC64NVME, say).
pub trait TrailerChecksum: Send + Sync {
    /// Adds `data`, in order.
    fn update(&mut self, data: &[u8]);
    /// The base64 value so far (of nothing, before any data: its length is the final one's).
    fn value(&self) -> String;
}

/// The trailer that closes the re-framed body.
pub enum Trailer {
    /// The client's own checksum trailer (the origin checks it against the data): its
    /// lowercase name, and the length its base64 value has.
    Client {
        /// `x-amz-checksum-crc32`...
        name: String,
        /// The base64 length of that checksum.
        value_len: usize,
    },
    /// A checksum the client sent as a header, moved into the trailer.
    Header {
        /// Its lowercase name.
        name: String,
        /// Its value, as sent.
        value: String,
    },
    /// A checksum the proxy computes over the verified data.
    Computed {
        /// Its header name.
        name: String,
        /// The running checksum.
        checksum: Box<dyn TrailerChecksum>,
    },
}

impl Trailer {
    /// The client's trailer as announced by `x-amz-trailer`; only checksums S3 knows.
    pub fn client(name: &str) -> Result<Self, VerifyError> {
        let name = name.trim().to_ascii_lowercase();
        let value_len = match name.as_str() {
            // Base64 of 4, 8, 16, 20, 32 and 64 bytes.
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
    pub fn name(&self) -> &str {
        match self {
            Trailer::Client { name, .. }
            | Trailer::Header { name, .. }
            | Trailer::Computed { name, .. } => name,
        }
    }

    fn value_len(&self) -> usize {
        match self {
            Trailer::Client { value_len, .. } => *value_len,
            Trailer::Header { value, .. } => value.len(),
            Trailer::Computed { checksum, .. } => checksum.value().len(),
        }
    }
}

/// The length of the re-framed body for `decoded` bytes of data closed by `trailer`.
pub fn encoded_len(decoded: u64, trailer: &Trailer) -> u64 {
    let chunk = REFRAMED_CHUNK as u64;
    let framed = |size: u64| hex_len(size) + 2 + size + 2;
    let mut total = decoded / chunk * framed(chunk);
    if decoded % chunk > 0 {
        total += framed(decoded % chunk);
    }
    // `0\r\n`, `name:value\r\n`, `\r\n`.
    total + 3 + (trailer.name().len() + 1 + trailer.value_len() + 2) as u64 + 2
}

fn hex_len(n: u64) -> u64 {
    u64::from((64 - n.leading_zeros()).div_ceil(4).max(1))
}

/// The verifier and writer of one body.
pub struct Reframer {
    chunked: ChunkedBody,
    trailer: Trailer,
    /// Verified data not yet written.
    data: Vec<u8>,
    /// Set once `finish` wrote the trailer or anything failed: nothing more is written.
    ended: bool,
}

impl Reframer {
    /// Re-frames what `chunked` verifies, closed by `trailer`.
    pub fn new(chunked: ChunkedBody, trailer: Trailer) -> Self {
        Self {
            chunked,
            trailer,
            data: Vec::with_capacity(REFRAMED_CHUNK),
            ended: false,
        }
    }

    /// Verifies `received` (any split of the client's body) and appends to `out` every whole
    /// chunk of verified data now ready. After an error nothing more is written.
    pub fn feed(&mut self, received: &[u8], out: &mut Vec<u8>) -> Result<(), VerifyError> {
        if self.ended {
            return Err(went_on());
        }
        if let Err(e) = self.chunked.feed(received, &mut self.data) {
            self.ended = true;
            return Err(e);
        }
        let whole = self.data.len() / REFRAMED_CHUNK * REFRAMED_CHUNK;
        for at in (0..whole).step_by(REFRAMED_CHUNK) {
            self.frame(at, REFRAMED_CHUNK, out);
        }
        self.data.drain(..whole);
        Ok(())
    }

    /// The client's body ended: once its final chunk, trailer and length verified, appends the
    /// rest of the data, the final chunk and the trailer to `out`.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), VerifyError> {
        if self.ended {
            return Err(went_on());
        }
        self.ended = true;
        self.chunked.finish()?;
        let mut value = self.closing_value()?;
        if !self.data.is_empty() {
            self.frame(0, self.data.len(), out);
            self.data.clear();
        }
        if let Trailer::Computed { checksum, .. } = &self.trailer {
            value = checksum.value();
        }
        out.extend_from_slice(format!("0\r\n{}:{value}\r\n\r\n", self.trailer.name()).as_bytes());
        Ok(())
    }

    /// The trailer's value, checked before anything more is written.
    fn closing_value(&self) -> Result<String, VerifyError> {
        Ok(match &self.trailer {
            Trailer::Computed { .. } => String::new(), // known once the last data is framed
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
        })
    }

    /// Writes `data[at..at + size]` as one chunk.
    fn frame(&mut self, at: usize, size: usize, out: &mut Vec<u8>) {
        let piece = &self.data[at..at + size];
        out.extend_from_slice(format!("{size:x}\r\n").as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
        if let Trailer::Computed { checksum, .. } = &mut self.trailer {
            checksum.update(piece);
        }
    }
}

/// A body fed or ended again after it ended or failed.
fn went_on() -> VerifyError {
    VerifyError::InvalidRequest("the body went on after it ended or failed".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lengths() {
        for (n, len) in [(0, 1), (1, 1), (15, 1), (16, 2), (0xffff, 4), (0x10000, 5)] {
            assert_eq!(hex_len(n), len, "{n:x}");
        }
    }

    #[test]
    fn only_checksum_trailers_are_forwarded() {
        assert!(Trailer::client("x-amz-meta-evil").is_err());
        assert_eq!(
            Trailer::client(" X-Amz-Checksum-CRC32C").unwrap().name(),
            "x-amz-checksum-crc32c"
        );
    }
}
