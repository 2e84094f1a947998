//! Verifying an aws-chunked body as it streams in, sans-IO.
//!
//! Feed body bytes with [`ChunkedBody::feed`]; a chunk's bytes are handed out only after that
//! chunk's signature (chained from the request's seed signature) verified, so nothing
//! unauthenticated ever reaches storage. [`ChunkedBody::finish`] then checks that the final
//! chunk, the trailer (if announced) and `x-amz-decoded-content-length` all arrived as signed.
//! Memory is bounded: at most one chunk ([`MAX_CHUNK`]) is held.
//!
//! Modes: `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`, `…-PAYLOAD-TRAILER` (signed trailer), their
//! SigV4A twins `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD[-TRAILER]` (each chunk's ECDSA
//! signature checked with the public key) and `STREAMING-UNSIGNED-PAYLOAD-TRAILER`. Checksum
//! values in trailers are returned, not checked: computing CRC32C is the caller's job.

use subtle::ConstantTimeEq;

use super::{KeySource, Verified, VerifyError};
use crate::chunk::{unpad, Chain, Link, V4A_SIGNATURE_LEN};
use crate::{v4a, ChunkSigner, PayloadHash};

/// How the links of a signed body are checked.
enum Links {
    /// SigV4: recompute each HMAC and compare in constant time.
    Hmac(ChunkSigner),
    /// SigV4A: check each ECDSA signature with the public key.
    Ecdsa { public_key: Vec<u8>, chain: Chain },
}

impl Links {
    /// Whether `sig` (as received) signs `link`; the chain advances only if so.
    fn check(&mut self, link: Link<'_>, sig: &str) -> bool {
        match self {
            Links::Hmac(signer) => signer
                .sign(link)
                .is_ok_and(|own| bool::from(own.as_bytes().ct_eq(sig.as_bytes()))),
            Links::Ecdsa { public_key, chain } => {
                let text = chain.text(link);
                check_ecdsa(public_key, text, sig)
                    .map(|s| chain.advance(s))
                    .is_some()
            }
        }
    }
}

/// The unpadded signature if `sig` is a padded SigV4A signature of `text`.
fn check_ecdsa<'s>(public_key: &[u8], text: &[u8], sig: &'s str) -> Option<&'s str> {
    let bare = unpad(sig);
    (sig.len() == V4A_SIGNATURE_LEN as usize && v4a::verify(public_key, text, bare)).then_some(bare)
}

/// The largest chunk accepted (S3 clients use 64 KiB to 8 MiB).
pub const MAX_CHUNK: usize = 16 << 20;
/// The longest chunk header or trailer line accepted.
const MAX_LINE: usize = 4096;

enum State {
    /// Waiting for `hex-size[;chunk-signature=sig]\r\n`.
    Header,
    /// Waiting for `size` bytes and `\r\n`.
    Data {
        size: usize,
        signature: Option<String>,
    },
    /// After the final chunk: trailer lines until an empty line.
    Trailer,
    Done,
}

/// The verification state of one aws-chunked body.
pub struct ChunkedBody {
    /// The signing chain, checked link by link (`None` for unsigned chunks).
    chain: Option<Links>,
    expected_len: u64,
    decoded: u64,
    trailer_name: Option<String>,
    trailers: Vec<(String, String)>,
    trailer_signed: bool,
    pending: Vec<u8>,
    state: State,
}

fn bad(why: impl Into<String>) -> VerifyError {
    VerifyError::AccessDenied(format!("invalid aws-chunked body: {}", why.into()))
}

impl ChunkedBody {
    /// Starts verifying the body of a request that `verified` authenticated. `headers` are the
    /// request's headers (for `x-amz-decoded-content-length` and `x-amz-trailer`).
    pub fn new(
        verified: &Verified,
        keys: &impl KeySource,
        headers: &[(&str, &str)],
    ) -> Result<Self, VerifyError> {
        let signed_v4a = verified.payload.chunks_signed_with_v4a();
        if signed_v4a.is_none() && verified.payload != PayloadHash::StreamingUnsignedTrailer {
            return Err(VerifyError::InvalidRequest(
                "the request does not announce an aws-chunked body".into(),
            ));
        }
        if signed_v4a.is_some_and(|v4a| v4a != (verified.algorithm == super::Algorithm::V4a)) {
            return Err(VerifyError::InvalidRequest(format!(
                "{} chunks do not match the request's signature algorithm",
                verified.payload.as_str()
            )));
        }
        let header = |name: &str| super::steps::single_header(headers, name);
        let expected_len = header("x-amz-decoded-content-length")?
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| {
                VerifyError::InvalidRequest(
                    "x-amz-decoded-content-length is missing or not a number".into(),
                )
            })?;
        let trailer_name = header("x-amz-trailer")?.map(|t| t.trim().to_ascii_lowercase());
        let wants_trailer = matches!(
            verified.payload,
            PayloadHash::StreamingSignedTrailer
                | PayloadHash::StreamingEcdsaTrailer
                | PayloadHash::StreamingUnsignedTrailer
        );
        if wants_trailer != trailer_name.is_some() {
            return Err(VerifyError::InvalidRequest(
                "x-amz-trailer must be sent exactly with the trailer modes".into(),
            ));
        }
        let chain = match signed_v4a {
            None => None,
            Some(false) => {
                let key = keys
                    .signing_key(
                        verified.access_key_id(),
                        verified.date_stamp(),
                        verified.region(),
                        verified.service(),
                    )
                    .ok_or(VerifyError::InvalidAccessKeyId)?;
                let signer = ChunkSigner::new(
                    &key,
                    verified.signed_at,
                    verified.region(),
                    verified.service(),
                    &verified.seed_signature,
                )
                .map_err(|e| VerifyError::InvalidRequest(e.to_string()))?;
                Some(Links::Hmac(signer))
            }
            Some(true) => {
                let public_key = keys
                    .public_key(verified.access_key_id())
                    .ok_or(VerifyError::InvalidAccessKeyId)?;
                let chain = Chain::new(
                    true,
                    verified.signed_at,
                    "",
                    verified.service(),
                    &verified.seed_signature,
                )
                .map_err(|e| VerifyError::InvalidRequest(e.to_string()))?;
                Some(Links::Ecdsa { public_key, chain })
            }
        };
        Ok(Self {
            chain,
            expected_len,
            decoded: 0,
            trailer_name,
            trailers: Vec::new(),
            trailer_signed: false,
            pending: Vec::new(),
            state: State::Header,
        })
    }

    /// Consumes `input`; appends the bytes of every chunk that verified to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), VerifyError> {
        self.pending.extend_from_slice(input);
        let mut at = 0;
        let result = loop {
            match self.step(at, out) {
                Ok(Some(next)) => at = next,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.pending.drain(..at);
        result
    }

    /// The input ended: errors unless the body was complete and as long as announced.
    pub fn finish(&mut self) -> Result<(), VerifyError> {
        if !matches!(self.state, State::Done) || !self.pending.is_empty() {
            return Err(bad("the body ended before its final chunk"));
        }
        if self.decoded != self.expected_len {
            return Err(bad(format!(
                "{} bytes arrived, x-amz-decoded-content-length says {}",
                self.decoded, self.expected_len
            )));
        }
        Ok(())
    }

    /// The trailer headers received (`x-amz-checksum-crc32c` and the like), to check against the data.
    pub fn trailers(&self) -> &[(String, String)] {
        &self.trailers
    }

    /// Parses what `pending[at..]` holds; the new position, or `None` when more input is needed.
    fn step(&mut self, at: usize, out: &mut Vec<u8>) -> Result<Option<usize>, VerifyError> {
        let rest = &self.pending[at..];
        match &self.state {
            State::Done if rest.is_empty() => Ok(None),
            State::Done => Err(bad("data after the end of the body")),
            State::Header => {
                let Some(line) = line(rest)? else {
                    return Ok(None);
                };
                let text =
                    std::str::from_utf8(line).map_err(|_| bad("a chunk header is not text"))?;
                let (size, signature) = match (text.split_once(';'), self.chain.is_some()) {
                    (Some((size, ext)), true) => {
                        let sig = ext
                            .strip_prefix("chunk-signature=")
                            .ok_or_else(|| bad("a chunk has no chunk-signature"))?;
                        (size, Some(sig.to_owned()))
                    }
                    (None, false) => (text, None),
                    (Some(_), false) => return Err(bad("an unsigned chunk carries a signature")),
                    (None, true) => return Err(bad("a chunk has no chunk-signature")),
                };
                let size = usize::from_str_radix(size, 16)
                    .ok()
                    .filter(|s| *s <= MAX_CHUNK)
                    .ok_or_else(|| bad(format!("chunk size {size:?}")))?;
                let consumed = at + line.len() + 2;
                self.state = State::Data { size, signature };
                Ok(Some(consumed))
            }
            State::Data { size, signature } => {
                let (size, signature) = (*size, signature.clone());
                let is_final = size == 0;
                // `DATA\r\n`; a final chunk is followed by `\r\n`, or by the trailer lines.
                let tail = if !is_final || self.trailer_name.is_none() {
                    2
                } else {
                    0
                };
                if rest.len() < size + tail {
                    return Ok(None);
                }
                if tail == 2 && &rest[size..size + 2] != b"\r\n" {
                    return Err(bad(
                        "a chunk is longer than its size, or not followed by an empty line",
                    ));
                }
                let data = &rest[..size];
                if let (Some(chain), Some(sig)) = (&mut self.chain, &signature) {
                    // The chain advances to its own result; on a mismatch the body is rejected.
                    if !chain.check(Link::Chunk(data), sig) {
                        return Err(bad(
                            "a chunk signature does not match: the body was changed",
                        ));
                    }
                }
                self.decoded += size as u64;
                if self.decoded > self.expected_len {
                    return Err(bad("more data than x-amz-decoded-content-length"));
                }
                out.extend_from_slice(data);
                self.state = match (is_final, self.trailer_name.is_some()) {
                    (false, _) => State::Header,
                    (true, true) => State::Trailer,
                    (true, false) => State::Done,
                };
                Ok(Some(at + size + tail))
            }
            State::Trailer => {
                let Some(line) = line(rest)? else {
                    return Ok(None);
                };
                let consumed = at + line.len() + 2;
                if line.is_empty() {
                    self.end_trailer()?;
                    self.state = State::Done;
                    return Ok(Some(consumed));
                }
                let text = std::str::from_utf8(line)
                    .map_err(|_| bad("a trailer is not text"))?
                    .to_owned();
                let (name, value) = text
                    .split_once(':')
                    .ok_or_else(|| bad("a trailer line is not NAME:VALUE"))?;
                let name = name.trim().to_ascii_lowercase();
                if name == "x-amz-trailer-signature" {
                    self.check_trailer_signature(value.trim())?;
                } else if self.trailer_signed {
                    return Err(bad("a trailer after the trailer signature"));
                } else {
                    self.trailers.push((name, value.trim().to_owned()));
                }
                Ok(Some(consumed))
            }
        }
    }

    fn check_trailer_signature(&mut self, sig: &str) -> Result<(), VerifyError> {
        let Some(chain) = &mut self.chain else {
            return Err(bad("an unsigned trailer carries a signature"));
        };
        let canonical: String = self
            .trailers
            .iter()
            .map(|(n, v)| format!("{n}:{v}\n"))
            .collect();
        if !chain.check(Link::Trailer(&canonical), sig) {
            return Err(bad("the trailer signature does not match"));
        }
        self.trailer_signed = true;
        Ok(())
    }

    /// The trailer ended: the announced trailer must be there, and signed in signed mode.
    fn end_trailer(&self) -> Result<(), VerifyError> {
        let announced = self.trailer_name.as_deref().unwrap_or_default();
        if !self.trailers.iter().any(|(n, _)| n == announced) {
            return Err(bad(format!("the announced trailer {announced} is missing")));
        }
        if self.chain.is_some() && !self.trailer_signed {
            return Err(bad("the trailer is not signed"));
        }
        Ok(())
    }
}

/// The line at the start of `rest` (without `\r\n`), `None` if incomplete.
fn line(rest: &[u8]) -> Result<Option<&[u8]>, VerifyError> {
    match rest.windows(2).position(|w| w == b"\r\n") {
        Some(i) => Ok(Some(&rest[..i])),
        None if rest.len() > MAX_LINE => Err(bad("a chunk header or trailer line is too long")),
        None => Ok(None),
    }
}
