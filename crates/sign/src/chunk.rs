//! aws-chunked bodies: signed chunks (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]`, and for
//! SigV4A `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD[-TRAILER]`) and unsigned chunks with a
//! checksum trailer (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`).
//!
//! Sans-IO: the caller feeds chunks and writes the returned bytes. Each signed chunk's
//! signature covers the previous one, starting from the request's own ("seed") signature, so
//! chunks cannot be reordered, dropped or replayed. This module does not compute checksums:
//! the caller passes the trailer's name and value (the transfer engine computes CRC32C).
//!
//! SigV4A chunks follow aws-c-auth (the CRT signer the SDKs use): the string to sign starts
//! with `AWS4-ECDSA-P256-SHA256-PAYLOAD` (trailer: `…-TRAILER`), the scope has no region, and
//! the hex DER signature, at most 144 digits long (usually 140 to 144), is padded with `*` to
//! 144 on the wire so that the body's length is known before signing. The chain links the
//! unpadded signatures.

use std::fmt;
use std::sync::Arc;

use hmac::Mac;
use sha2::{Digest, Sha256};

use crate::encode::{hex32, hex_into};
use crate::key::HmacSha256;
use crate::payload::EMPTY_SHA256;
use crate::string_to_sign::{scope, scope_v4a, ALGORITHM};
use crate::v4a::EcdsaKey;
use crate::v4a::ALGORITHM_V4A;
use crate::{Error, SigningKey, SigningTime};

/// Length of a SigV4 chunk signature on the wire.
pub const V4_SIGNATURE_LEN: u64 = 64;
/// Length of a SigV4A chunk signature on the wire (padded with `*`).
pub const V4A_SIGNATURE_LEN: u64 = 144;
/// The byte that pads SigV4A chunk signatures to [`V4A_SIGNATURE_LEN`].
const PADDING: char = '*';

/// The text both sides of a chunk chain compute: the signer signs it, the verifier checks it.
pub(crate) struct Chain {
    chunk_prefix: String,
    trailer_prefix: String,
    previous: String,
    text: Vec<u8>,
}

impl Chain {
    /// `ecdsa`: SigV4A's names and region-less scope; `region` is then ignored.
    pub(crate) fn new(
        ecdsa: bool,
        time: SigningTime,
        region: &str,
        service: &str,
        seed_signature: &str,
    ) -> Result<Self, Error> {
        let (name, scope) = if ecdsa {
            (ALGORITHM_V4A, scope_v4a(&time.date_stamp(), service))
        } else {
            (ALGORITHM, scope(&time.date_stamp(), region, service)?)
        };
        let valid = if ecdsa {
            crate::v4a::is_signature_hex_len(seed_signature.len())
        } else {
            seed_signature.len() == 64
        };
        if !valid
            || !seed_signature
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(Error::InvalidHeader(
                "the seed signature must be the request's lowercase hex signature".into(),
            ));
        }
        let date = time.amz_date();
        Ok(Self {
            chunk_prefix: format!("{name}-PAYLOAD\n{date}\n{scope}\n"),
            trailer_prefix: format!("{name}-TRAILER\n{date}\n{scope}\n"),
            previous: seed_signature.to_owned(),
            text: Vec::with_capacity(320),
        })
    }

    /// The string to sign of the next link.
    pub(crate) fn text(&mut self, link: Link<'_>) -> &[u8] {
        let (prefix, body) = match link {
            Link::Chunk(data) => (&self.chunk_prefix, data),
            Link::Trailer(canonical) => (&self.trailer_prefix, canonical.as_bytes()),
        };
        self.text.clear();
        self.text.extend_from_slice(prefix.as_bytes());
        self.text.extend_from_slice(self.previous.as_bytes());
        self.text.push(b'\n');
        // Chunks sign the hash of their (empty) headers as well; the trailer does not.
        if let Link::Chunk(_) = link {
            self.text.extend_from_slice(EMPTY_SHA256.as_bytes());
            self.text.push(b'\n');
        }
        self.text
            .extend_from_slice(&hex32(&Sha256::digest(body).into()));
        &self.text
    }

    /// Links `signature` (unpadded hex) as the previous one of the next link.
    pub(crate) fn advance(&mut self, signature: &str) {
        self.previous.clear();
        self.previous.push_str(signature);
    }
}

/// One link of the chain: a chunk's data (empty for the final chunk), or the trailer headers
/// as `name:value\n` per header.
#[derive(Clone, Copy)]
pub(crate) enum Link<'a> {
    Chunk(&'a [u8]),
    Trailer(&'a str),
}

/// The key that signs the links.
enum ChunkKey {
    Hmac(HmacSha256),
    Ecdsa(Arc<EcdsaKey>),
}

/// Signs the chunks of one request, in order.
pub struct ChunkSigner {
    key: ChunkKey,
    chain: Chain,
}

impl ChunkSigner {
    /// SigV4: starts the chain at `seed_signature`, the hex signature of the request's headers.
    pub fn new(
        key: &SigningKey,
        time: SigningTime,
        region: &str,
        service: &str,
        seed_signature: &str,
    ) -> Result<Self, Error> {
        Ok(Self {
            key: ChunkKey::Hmac(key.mac()),
            chain: Chain::new(false, time, region, service, seed_signature)?,
        })
    }

    /// SigV4A: starts the chain at `seed_signature`, the hex signature of the request's headers
    /// (signed with `AWS4-ECDSA-P256-SHA256` and a `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD…`
    /// payload).
    pub fn new_v4a(
        key: Arc<EcdsaKey>,
        time: SigningTime,
        service: &str,
        seed_signature: &str,
    ) -> Result<Self, Error> {
        Ok(Self {
            key: ChunkKey::Ecdsa(key),
            chain: Chain::new(true, time, "", service, seed_signature)?,
        })
    }

    /// The length of this signer's chunk signatures on the wire.
    pub fn signature_len(&self) -> u64 {
        match self.key {
            ChunkKey::Hmac(_) => V4_SIGNATURE_LEN,
            ChunkKey::Ecdsa(_) => V4A_SIGNATURE_LEN,
        }
    }

    /// Signs `data` as the next chunk and returns its signature as sent (SigV4A: padded). An
    /// empty `data` is the final chunk.
    pub fn sign_chunk(&mut self, data: &[u8]) -> Result<String, Error> {
        self.sign(Link::Chunk(data))
    }

    /// Appends `hex(len);chunk-signature=SIG\r\nDATA\r\n`. An empty `data` appends the final chunk
    /// `0;chunk-signature=SIG\r\n\r\n` (use [`ChunkSigner::encode_final_with_trailer`] for trailers).
    pub fn encode_chunk(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let sig = self.sign_chunk(data)?;
        out.extend_from_slice(format!("{:x};chunk-signature={sig}\r\n", data.len()).as_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
        Ok(())
    }

    /// Signs the trailer headers as the last link of the chain (`canonical` is `name:value\n` per
    /// header, names lowercase) and returns the signature as sent.
    pub fn sign_trailer(&mut self, canonical: &str) -> Result<String, Error> {
        self.sign(Link::Trailer(canonical))
    }

    /// Appends the final chunk, then the trailer `name:value` and its signature
    /// (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER` and its SigV4A twin).
    pub fn encode_final_with_trailer(
        &mut self,
        name: &str,
        value: &str,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let sig = self.sign_chunk(b"")?;
        out.extend_from_slice(format!("0;chunk-signature={sig}\r\n").as_bytes());
        let name = name.to_ascii_lowercase();
        let trailer_sig = self.sign_trailer(&format!("{name}:{value}\n"))?;
        out.extend_from_slice(
            format!("{name}:{value}\r\nx-amz-trailer-signature:{trailer_sig}\r\n\r\n").as_bytes(),
        );
        Ok(())
    }

    /// Signs `link`, makes it the chain's previous signature and returns it as sent.
    pub(crate) fn sign(&mut self, link: Link<'_>) -> Result<String, Error> {
        self.chain.text(link);
        let mut sig = String::with_capacity(V4A_SIGNATURE_LEN as usize);
        match &self.key {
            ChunkKey::Hmac(mac) => {
                let mut mac = mac.clone();
                mac.update(&self.chain.text);
                hex_into(&mut sig, &mac.finalize().into_bytes());
                self.chain.advance(&sig);
            }
            ChunkKey::Ecdsa(key) => {
                key.sign_into(&self.chain.text, &mut sig)?;
                self.chain.advance(&sig);
                while sig.len() < V4A_SIGNATURE_LEN as usize {
                    sig.push(PADDING);
                }
            }
        }
        Ok(sig)
    }
}

/// A SigV4A chunk signature as sent, without its `*` padding.
pub(crate) fn unpad(signature: &str) -> &str {
    signature.trim_end_matches(PADDING)
}

impl fmt::Debug for ChunkSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChunkSigner(<redacted>)")
    }
}

/// Length of a signed aws-chunked body (for `Content-Length`) carrying `decoded_len` bytes in
/// chunks of `chunk_size`, with an optional signed trailer `(name, value length)`.
/// `signature_len` is [`V4_SIGNATURE_LEN`] or [`V4A_SIGNATURE_LEN`].
pub fn signed_encoded_length(
    decoded_len: u64,
    chunk_size: u64,
    trailer: Option<(&str, u64)>,
    signature_len: u64,
) -> u64 {
    let sig = signature_len;
    // hex(size) + ";chunk-signature=" + SIG + "\r\n" + data + "\r\n"
    let chunk = |n: u64| hex_len(n) + 17 + sig + 2 + n + 2;
    let full = decoded_len / chunk_size.max(1);
    let rest = decoded_len % chunk_size.max(1);
    let mut total = full * chunk(chunk_size) + if rest > 0 { chunk(rest) } else { 0 };
    match trailer {
        // "0;chunk-signature=SIG\r\n" + "name:value\r\n" + "x-amz-trailer-signature:SIG\r\n" + "\r\n"
        Some((name, value_len)) => {
            total += 1 + 17 + sig + 2 + name.len() as u64 + 1 + value_len + 2 + 24 + sig + 2 + 2
        }
        None => total += chunk(0),
    }
    total
}

/// Appends an unsigned chunk `hex(len)\r\nDATA\r\n` (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`).
pub fn encode_unsigned_chunk(data: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Appends the final unsigned chunk and the checksum trailer: `0\r\nname:value\r\n\r\n`.
pub fn encode_unsigned_final(name: &str, value: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("0\r\n{}:{value}\r\n\r\n", name.to_ascii_lowercase()).as_bytes());
}

/// Length of an unsigned aws-chunked body with a trailer `(name, value length)`.
pub fn unsigned_encoded_length(
    decoded_len: u64,
    chunk_size: u64,
    trailer_name: &str,
    trailer_value_len: u64,
) -> u64 {
    let chunk = |n: u64| hex_len(n) + 2 + n + 2;
    let full = decoded_len / chunk_size.max(1);
    let rest = decoded_len % chunk_size.max(1);
    full * chunk(chunk_size)
        + if rest > 0 { chunk(rest) } else { 0 }
        + 3
        + trailer_name.len() as u64
        + 1
        + trailer_value_len
        + 4
}

fn hex_len(n: u64) -> u64 {
    u64::from((64 - n.leading_zeros()).div_ceil(4).max(1))
}
