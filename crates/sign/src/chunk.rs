//! aws-chunked bodies: signed chunks (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]`) and
//! unsigned chunks with a checksum trailer (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`).
//!
//! Sans-IO: the caller feeds chunks and writes the returned bytes. Each signed chunk's
//! signature covers the previous one, starting from the request's own ("seed") signature, so
//! chunks cannot be reordered, dropped or replayed. This module does not compute checksums:
//! the caller passes the trailer's name and value (the transfer engine computes CRC32C).

use std::fmt;

use hmac::Mac;
use sha2::{Digest, Sha256};

use crate::encode::hex32;
use crate::key::HmacSha256;
use crate::payload::EMPTY_SHA256;
use crate::string_to_sign::scope;
use crate::{Error, SigningKey, SigningTime};

/// Signs the chunks of one request, in order.
pub struct ChunkSigner {
    mac: HmacSha256,
    chunk_prefix: String,
    trailer_prefix: String,
    previous: [u8; 64],
}

impl ChunkSigner {
    /// Starts the chain at `seed_signature`, the hex signature of the request's headers.
    pub fn new(
        key: &SigningKey,
        time: SigningTime,
        region: &str,
        service: &str,
        seed_signature: &str,
    ) -> Result<Self, Error> {
        let scope = scope(&time.date_stamp(), region, service)?;
        let date = time.amz_date();
        let previous: [u8; 64] = seed_signature
            .as_bytes()
            .try_into()
            .ok()
            .filter(|s: &[u8; 64]| s.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .ok_or_else(|| {
                Error::InvalidHeader("the seed signature must be 64 lowercase hex digits".into())
            })?;
        Ok(Self {
            mac: key.mac(),
            chunk_prefix: format!("AWS4-HMAC-SHA256-PAYLOAD\n{date}\n{scope}\n"),
            trailer_prefix: format!("AWS4-HMAC-SHA256-TRAILER\n{date}\n{scope}\n"),
            previous,
        })
    }

    /// Signs `data` as the next chunk and returns its hex signature. An empty `data` is the final chunk.
    pub fn sign_chunk(&mut self, data: &[u8]) -> String {
        let mut mac = self.mac.clone();
        mac.update(self.chunk_prefix.as_bytes());
        mac.update(&self.previous);
        mac.update(b"\n");
        mac.update(EMPTY_SHA256.as_bytes());
        mac.update(b"\n");
        mac.update(&hex32(&Sha256::digest(data).into()));
        self.finish(mac)
    }

    /// Appends `hex(len);chunk-signature=SIG\r\nDATA\r\n`. An empty `data` appends the final chunk
    /// `0;chunk-signature=SIG\r\n\r\n` (use [`ChunkSigner::encode_final_with_trailer`] for trailers).
    pub fn encode_chunk(&mut self, data: &[u8], out: &mut Vec<u8>) {
        let sig = self.sign_chunk(data);
        out.extend_from_slice(format!("{:x};chunk-signature={sig}\r\n", data.len()).as_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
    }

    /// Signs the trailer headers as the last link of the chain (`canonical` is `name:value\n` per
    /// header, names lowercase) and returns the hex signature.
    pub fn sign_trailer(&mut self, canonical: &str) -> String {
        let mut mac = self.mac.clone();
        mac.update(self.trailer_prefix.as_bytes());
        mac.update(&self.previous);
        mac.update(b"\n");
        mac.update(&hex32(&Sha256::digest(canonical.as_bytes()).into()));
        self.finish(mac)
    }

    /// Appends the final chunk, then the trailer `name:value` and its signature
    /// (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`).
    pub fn encode_final_with_trailer(&mut self, name: &str, value: &str, out: &mut Vec<u8>) {
        let sig = self.sign_chunk(b"");
        out.extend_from_slice(format!("0;chunk-signature={sig}\r\n").as_bytes());
        let name = name.to_ascii_lowercase();
        let trailer_sig = self.sign_trailer(&format!("{name}:{value}\n"));
        out.extend_from_slice(
            format!("{name}:{value}\r\nx-amz-trailer-signature:{trailer_sig}\r\n\r\n").as_bytes(),
        );
    }

    fn finish(&mut self, mac: HmacSha256) -> String {
        self.previous = hex32(&mac.finalize().into_bytes().into());
        // `hex32` writes ASCII hex digits only.
        self.previous.iter().map(|&b| char::from(b)).collect()
    }
}

impl fmt::Debug for ChunkSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChunkSigner(<redacted>)")
    }
}

/// Length of a signed aws-chunked body (for `Content-Length`) carrying `decoded_len` bytes in
/// chunks of `chunk_size`, with an optional signed trailer `(name, value length)`.
pub fn signed_encoded_length(
    decoded_len: u64,
    chunk_size: u64,
    trailer: Option<(&str, u64)>,
) -> u64 {
    // hex(size) + ";chunk-signature=" + 64 + "\r\n" + data + "\r\n"
    let chunk = |n: u64| hex_len(n) + 17 + 64 + 2 + n + 2;
    let full = decoded_len / chunk_size.max(1);
    let rest = decoded_len % chunk_size.max(1);
    let mut total = full * chunk(chunk_size) + if rest > 0 { chunk(rest) } else { 0 };
    match trailer {
        // "0;chunk-signature=SIG\r\n" + "name:value\r\n" + "x-amz-trailer-signature:SIG\r\n" + "\r\n"
        Some((name, value_len)) => {
            total += 1 + 17 + 64 + 2 + name.len() as u64 + 1 + value_len + 2 + 24 + 64 + 2 + 2
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
