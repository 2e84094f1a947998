//! The payload line of the canonical request (`x-amz-content-sha256`).

use sha2::{Digest, Sha256};

use crate::encode::hex;

/// SHA-256 of the empty string, the payload hash of a bodiless request.
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// How the body is covered by the signature.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PayloadHash {
    /// `UNSIGNED-PAYLOAD`: the body is not covered (presigned URLs; TLS protects it in transit).
    Unsigned,
    /// The lowercase hex SHA-256 of the whole body, known before sending.
    Sha256(String),
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`: aws-chunked, each chunk signed (see [`crate::ChunkSigner`]).
    StreamingSigned,
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`: signed chunks and a signed trailer.
    StreamingSignedTrailer,
    /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER`: aws-chunked, chunks unsigned, a checksum trailer.
    StreamingUnsignedTrailer,
    /// `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD`: aws-chunked, each chunk signed with SigV4A.
    StreamingEcdsa,
    /// `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER`: SigV4A-signed chunks and trailer.
    StreamingEcdsaTrailer,
}

impl PayloadHash {
    /// The hash of `body`. No body (every GET, HEAD and DELETE) takes the constant: hashing
    /// nothing per request showed in the verifying edge's profile.
    pub fn of(body: &[u8]) -> Self {
        if body.is_empty() {
            return PayloadHash::Sha256(EMPTY_SHA256.to_owned());
        }
        PayloadHash::Sha256(hex(&Sha256::digest(body)))
    }

    /// The inverse of [`PayloadHash::as_str`]: the value of an `x-amz-content-sha256` header, or
    /// `None` if it is neither a known mode nor 64 lowercase hex digits.
    pub fn parse(v: &str) -> Option<Self> {
        Some(match v {
            "UNSIGNED-PAYLOAD" => PayloadHash::Unsigned,
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" => PayloadHash::StreamingSigned,
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" => PayloadHash::StreamingSignedTrailer,
            "STREAMING-UNSIGNED-PAYLOAD-TRAILER" => PayloadHash::StreamingUnsignedTrailer,
            "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD" => PayloadHash::StreamingEcdsa,
            "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER" => {
                PayloadHash::StreamingEcdsaTrailer
            }
            h if h.len() == 64
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
            {
                PayloadHash::Sha256(h.to_owned())
            }
            _ => return None,
        })
    }

    /// The text on the canonical request's last line and in `x-amz-content-sha256`.
    pub fn as_str(&self) -> &str {
        match self {
            PayloadHash::Unsigned => "UNSIGNED-PAYLOAD",
            PayloadHash::Sha256(h) => h,
            PayloadHash::StreamingSigned => "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
            PayloadHash::StreamingSignedTrailer => "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
            PayloadHash::StreamingUnsignedTrailer => "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
            PayloadHash::StreamingEcdsa => "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD",
            PayloadHash::StreamingEcdsaTrailer => {
                "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER"
            }
        }
    }

    /// Whether this mode's chunks are signed with SigV4A (`Some(true)`), SigV4 (`Some(false)`),
    /// or the mode has no chunk signatures (`None`).
    pub fn chunks_signed_with_v4a(&self) -> Option<bool> {
        match self {
            PayloadHash::StreamingSigned | PayloadHash::StreamingSignedTrailer => Some(false),
            PayloadHash::StreamingEcdsa | PayloadHash::StreamingEcdsaTrailer => Some(true),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_body_constant_is_sha256_of_nothing() {
        assert_eq!(EMPTY_SHA256, hex(&Sha256::digest(b"")));
        assert_eq!(PayloadHash::of(b"").as_str(), EMPTY_SHA256);
    }

    #[test]
    fn parse_inverts_as_str() {
        for p in [
            PayloadHash::Unsigned,
            PayloadHash::of(b"x"),
            PayloadHash::StreamingSigned,
            PayloadHash::StreamingSignedTrailer,
            PayloadHash::StreamingUnsignedTrailer,
            PayloadHash::StreamingEcdsa,
            PayloadHash::StreamingEcdsaTrailer,
        ] {
            assert_eq!(PayloadHash::parse(p.as_str()), Some(p.clone()));
        }
        for bad in ["", "unsigned-payload", &"A".repeat(64), &"a".repeat(63)] {
            assert_eq!(PayloadHash::parse(bad), None, "{bad}");
        }
    }
}
