//! The streaming verifier against bodies from our chunk signer: accepted whole and byte by byte,
//! and refused when a chunk is tampered with, missing, truncated, or the trailer is wrong.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{creds, t};
use sha2::{Digest, Sha256};
use slipstream_sign::chunk::{
    encode_unsigned_chunk, encode_unsigned_final, signed_encoded_length, V4A_SIGNATURE_LEN,
    V4_SIGNATURE_LEN,
};
use slipstream_sign::encode::hex;
use slipstream_sign::v4a;
use slipstream_sign::verify::{
    encoded_len, ChunkedBody, CredentialKeys, Incoming, Reframer, Trailer, TrailerChecksum,
    Verified, Verifier, REFRAMED_CHUNK,
};
use slipstream_sign::{ChunkSigner, PayloadHash, Request, Settings, Signer};

/// A signed streaming PUT of `len` bytes: its headers, the verifier's verdict, and a chunk signer.
fn request(
    payload: PayloadHash,
    len: usize,
    trailer: Option<&str>,
) -> (Vec<(String, String)>, Verified, Option<ChunkSigner>) {
    let signer = Signer::new(creds(), "us-east-1", "s3", Settings::S3).unwrap();
    request_with(&signer, payload, len, trailer)
}

/// The same, signed with SigV4A for `us-east-1,us-west-2`.
fn request_v4a(
    payload: PayloadHash,
    len: usize,
    trailer: Option<&str>,
) -> (Vec<(String, String)>, Verified, ChunkSigner) {
    let signer = Signer::new_v4a(creds(), "us-east-1,us-west-2", "s3", Settings::S3).unwrap();
    let (headers, verified, chunks) = request_with(&signer, payload, len, trailer);
    (headers, verified, chunks.unwrap())
}

fn request_with(
    signer: &Signer,
    payload: PayloadHash,
    len: usize,
    trailer: Option<&str>,
) -> (Vec<(String, String)>, Verified, Option<ChunkSigner>) {
    let mut headers: Vec<(String, String)> = vec![
        ("host".into(), "s3.amazonaws.com".into()),
        ("content-encoding".into(), "aws-chunked".into()),
        ("x-amz-decoded-content-length".into(), len.to_string()),
    ];
    if let Some(name) = trailer {
        headers.push(("x-amz-trailer".into(), name.into()));
    }
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let sig = signer
        .sign_headers(
            &Request {
                method: "PUT",
                path: "/examplebucket/chunkObject.txt",
                query: "",
                headers: &refs,
            },
            &payload,
            t(),
        )
        .unwrap();
    headers.extend(
        sig.headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.clone())),
    );
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let incoming = Incoming {
        method: "PUT",
        target: "/examplebucket/chunkObject.txt",
        headers: &refs,
        body_sha256: None,
    };
    let verified = Verifier::s3("us-east-1")
        .verify(&incoming, &CredentialKeys::new([creds()]), t())
        .unwrap();
    let chunks = payload
        .chunks_signed_with_v4a()
        .map(|_| signer.chunk_signer(t(), &sig.signature).unwrap());
    (headers, verified, chunks)
}

fn body_verifier(headers: &[(String, String)], verified: &Verified) -> ChunkedBody {
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    ChunkedBody::new(verified, &CredentialKeys::new([creds()]), &refs).unwrap()
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// The AWS example's body: 65,536 + 1,024 bytes and the final chunk.
fn signed_body(chunks: &mut ChunkSigner, data: &[u8], size: usize) -> Vec<u8> {
    let mut body = Vec::new();
    for piece in data.chunks(size) {
        chunks.encode_chunk(piece, &mut body).unwrap();
    }
    chunks.encode_chunk(b"", &mut body).unwrap();
    body
}

/// A signed streaming body of `d` closed by a signed CRC32C trailer of `value`, and its verifier.
fn with_crc32c_trailer(d: &[u8], value: &str) -> (ChunkedBody, Vec<u8>) {
    let (headers, verified, chunks) = request(
        PayloadHash::StreamingSignedTrailer,
        d.len(),
        Some("x-amz-checksum-crc32c"),
    );
    let mut cs = chunks.unwrap();
    let mut body = Vec::new();
    cs.encode_chunk(d, &mut body).unwrap();
    cs.encode_final_with_trailer("x-amz-checksum-crc32c", value, &mut body)
        .unwrap();
    (body_verifier(&headers, &verified), body)
}

#[test]
fn a_signed_body_verifies_whole_and_byte_by_byte() {
    let d = data(66_560);
    let (headers, verified, chunks) = request(PayloadHash::StreamingSigned, d.len(), None);
    let body = signed_body(&mut chunks.unwrap(), &d, 65_536);
    assert_eq!(
        body.len() as u64,
        signed_encoded_length(66_560, 65_536, None, V4_SIGNATURE_LEN)
    );
    let mut v = body_verifier(&headers, &verified);
    let mut out = Vec::new();
    v.feed(&body, &mut out).unwrap();
    v.finish().unwrap();
    assert_eq!(out, d);
    let mut v = body_verifier(&headers, &verified);
    let mut out = Vec::new();
    for b in &body {
        v.feed(std::slice::from_ref(b), &mut out).unwrap();
    }
    v.finish().unwrap();
    assert_eq!(out, d);
}

#[test]
fn a_tampered_chunk_is_refused_and_its_bytes_never_released() {
    let d = data(3000);
    let (headers, verified, chunks) = request(PayloadHash::StreamingSigned, d.len(), None);
    let mut body = signed_body(&mut chunks.unwrap(), &d, 1000);
    let second_chunk_byte =
        body.iter().position(|&b| b == b'\n').unwrap() + 1 + 1000 + 2 + 100 + 90;
    body[second_chunk_byte] ^= 1;
    let mut v = body_verifier(&headers, &verified);
    let mut out = Vec::new();
    assert!(v.feed(&body, &mut out).is_err());
    assert_eq!(
        out,
        d[..1000],
        "only the first, verified chunk was released"
    );
}

#[test]
fn missing_reordered_and_truncated_chunks_are_refused() {
    let d = data(3000);
    let (headers, verified, chunks) = request(PayloadHash::StreamingSigned, d.len(), None);
    let mut cs = chunks.unwrap();
    let pieces: Vec<Vec<u8>> = d
        .chunks(1000)
        .chain(std::iter::once(&[][..]))
        .map(|p| {
            let mut b = Vec::new();
            cs.encode_chunk(p, &mut b).unwrap();
            b
        })
        .collect();
    let run = |parts: &[&Vec<u8>]| {
        let mut v = body_verifier(&headers, &verified);
        let mut out = Vec::new();
        let fed = parts.iter().try_for_each(|p| v.feed(p, &mut out));
        fed.and_then(|()| v.finish())
    };
    assert!(run(&[&pieces[0], &pieces[1], &pieces[2], &pieces[3]]).is_ok());
    assert!(
        run(&[&pieces[0], &pieces[2], &pieces[3]]).is_err(),
        "a missing chunk"
    );
    assert!(
        run(&[&pieces[1], &pieces[0], &pieces[2], &pieces[3]]).is_err(),
        "reordered chunks"
    );
    assert!(
        run(&[&pieces[0], &pieces[1], &pieces[2]]).is_err(),
        "no final chunk"
    );
    let mut half = pieces[1].clone();
    half.truncate(500);
    assert!(run(&[&pieces[0], &half]).is_err(), "a truncated chunk");
}

#[test]
fn the_decoded_length_must_match() {
    let d = data(2000);
    let (mut headers, _, _) = request(PayloadHash::StreamingSigned, d.len(), None);
    // Re-sign with a length that lies: the signature is valid, the body is shorter.
    let (h2, verified, chunks) = request(PayloadHash::StreamingSigned, 2500, None);
    headers.clone_from(&h2);
    let body = signed_body(&mut chunks.unwrap(), &d, 1000);
    let mut v = body_verifier(&headers, &verified);
    let mut out = Vec::new();
    v.feed(&body, &mut out).unwrap();
    assert!(v.finish().is_err());
}

#[test]
fn a_signed_trailer_is_checked() {
    let d = data(1500);
    for tamper in [false, true] {
        let (mut v, mut body) = with_crc32c_trailer(&d, "sOO8/Q==");
        if tamper {
            let text = String::from_utf8_lossy(&body)
                .replace("sOO8/Q==", "sOO8/R==")
                .into_bytes();
            body = text;
        }
        let mut out = Vec::new();
        let result = v.feed(&body, &mut out).and_then(|()| v.finish());
        assert_eq!(result.is_ok(), !tamper, "tamper={tamper}: {result:?}");
        if !tamper {
            assert_eq!(
                v.trailers(),
                [("x-amz-checksum-crc32c".to_owned(), "sOO8/Q==".to_owned())]
            );
        }
    }
}

#[test]
fn a_signed_trailer_without_its_signature_is_refused() {
    let d = data(100);
    let (mut v, body) = with_crc32c_trailer(&d, "AAAAAA==");
    let text = String::from_utf8_lossy(&body).into_owned();
    let stripped: String = text
        .split("\r\n")
        .filter(|l| !l.starts_with("x-amz-trailer-signature"))
        .collect::<Vec<_>>()
        .join("\r\n");
    let mut out = Vec::new();
    assert!(v
        .feed(stripped.as_bytes(), &mut out)
        .and_then(|()| v.finish())
        .is_err());
}

#[test]
fn unsigned_chunks_with_a_trailer() {
    let d = data(5000);
    let (headers, verified, _) = request(
        PayloadHash::StreamingUnsignedTrailer,
        d.len(),
        Some("x-amz-checksum-crc32c"),
    );
    let mut body = Vec::new();
    for p in d.chunks(2048) {
        encode_unsigned_chunk(p, &mut body);
    }
    encode_unsigned_final("x-amz-checksum-crc32c", "AAAAAA==", &mut body);
    let mut v = body_verifier(&headers, &verified);
    let mut out = Vec::new();
    v.feed(&body, &mut out).unwrap();
    v.finish().unwrap();
    assert_eq!(out, d);
    assert_eq!(v.trailers()[0].1, "AAAAAA==");
    let mut no_trailer = Vec::new();
    encode_unsigned_chunk(&d, &mut no_trailer);
    no_trailer.extend_from_slice(b"0\r\n\r\n");
    let mut v = body_verifier(&headers, &verified);
    assert!(v
        .feed(&no_trailer, &mut Vec::new())
        .and_then(|()| v.finish())
        .is_err());
}

#[test]
fn oversized_and_malformed_chunks_are_refused() {
    let (headers, verified, _) = request(PayloadHash::StreamingSigned, 10, None);
    for body in [
        &b"2000000;chunk-signature=00\r\n"[..],
        b"zz;chunk-signature=00\r\n",
        b"a\r\n0123456789\r\n",
        &[b'1'; 5000][..],
    ] {
        let mut v = body_verifier(&headers, &verified);
        assert!(
            v.feed(body, &mut Vec::new()).is_err(),
            "{:?}",
            String::from_utf8_lossy(&body[..body.len().min(40)])
        );
    }
    let (headers, verified, chunks) = request(PayloadHash::StreamingSigned, 10, None);
    let mut body = signed_body(&mut chunks.unwrap(), &data(10), 10);
    body.extend_from_slice(b"extra");
    let mut v = body_verifier(&headers, &verified);
    assert!(
        v.feed(&body, &mut Vec::new()).is_err(),
        "data after the end"
    );
}

/// Every chunk signature line of an encoded body.
fn chunk_signatures(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body)
        .split("\r\n")
        .filter_map(|l| l.split_once(";chunk-signature=").map(|(_, s)| s.to_owned()))
        .collect()
}

#[test]
fn a_sigv4a_body_verifies_whole_and_byte_by_byte() {
    let d = data(66_560);
    let (headers, verified, mut chunks) = request_v4a(PayloadHash::StreamingEcdsa, d.len(), None);
    assert_eq!(chunks.signature_len(), V4A_SIGNATURE_LEN);
    let body = signed_body(&mut chunks, &d, 65_536);
    assert_eq!(
        body.len() as u64,
        signed_encoded_length(66_560, 65_536, None, V4A_SIGNATURE_LEN)
    );
    let sigs = chunk_signatures(&body);
    assert_eq!(sigs.len(), 3);
    for sig in &sigs {
        // Hex DER (at most 72 bytes, usually 70 to 72) padded with `*` to 144, as aws-c-auth
        // sends it.
        assert_eq!(sig.len(), 144, "{sig}");
        let bare = sig.trim_end_matches('*');
        assert!(bare.len() <= 144 && bare.len() % 2 == 0, "{sig}");
        assert!(bare.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    let mut v = body_verifier(&headers, &verified);
    let mut out = Vec::new();
    v.feed(&body, &mut out).unwrap();
    v.finish().unwrap();
    assert_eq!(out, d);
    let mut v = body_verifier(&headers, &verified);
    let mut out = Vec::new();
    for b in &body {
        v.feed(std::slice::from_ref(b), &mut out).unwrap();
    }
    v.finish().unwrap();
    assert_eq!(out, d);
}

/// The first chunk's signature checked against a string to sign written out by hand in
/// aws-c-auth's layout: algorithm, date, region-less scope, the seed signature, the empty hash
/// and the chunk's hash.
#[test]
fn a_sigv4a_chunk_signs_the_documented_string() {
    let d = data(1000);
    let (headers, _, mut chunks) = request_v4a(PayloadHash::StreamingEcdsa, d.len(), None);
    let seed = headers
        .iter()
        .find(|(n, _)| n == "authorization")
        .and_then(|(_, v)| v.split("Signature=").nth(1))
        .unwrap()
        .to_owned();
    let sig = chunks.sign_chunk(&d).unwrap();
    let text = format!(
        "AWS4-ECDSA-P256-SHA256-PAYLOAD\n20130524T000000Z\n20130524/s3/aws4_request\n{seed}\n{}\n{}",
        slipstream_sign::EMPTY_SHA256,
        hex(&Sha256::digest(&d))
    );
    let signer = Signer::new_v4a(creds(), "*", "s3", Settings::S3).unwrap();
    let public = signer.public_key().unwrap();
    assert!(v4a::verify(
        public,
        text.as_bytes(),
        sig.trim_end_matches('*')
    ));
    // The next link covers the previous signature without its padding.
    let sig2 = chunks.sign_chunk(b"").unwrap();
    let text2 = format!(
        "AWS4-ECDSA-P256-SHA256-PAYLOAD\n20130524T000000Z\n20130524/s3/aws4_request\n{}\n{}\n{}",
        sig.trim_end_matches('*'),
        slipstream_sign::EMPTY_SHA256,
        slipstream_sign::EMPTY_SHA256
    );
    assert!(v4a::verify(
        public,
        text2.as_bytes(),
        sig2.trim_end_matches('*')
    ));
}

/// About one ECDSA signature in 500 has an r or s with a leading zero byte, which DER drops:
/// its hex is shorter than 140 digits. Such a request signature must verify and seed the chain
/// (CI once failed at random on a check that wanted 140).
#[test]
fn a_short_sigv4a_seed_signature_seeds_the_chain() {
    let d = data(3000);
    for _ in 0..50_000 {
        let (headers, verified, mut chunks) =
            request_v4a(PayloadHash::StreamingEcdsa, d.len(), None);
        let auth = &headers
            .iter()
            .find(|(n, _)| n == "authorization")
            .unwrap()
            .1;
        let seed = auth.rsplit("Signature=").next().unwrap();
        if seed.len() >= 140 {
            continue;
        }
        let body = signed_body(&mut chunks, &d, 1000);
        let mut v = body_verifier(&headers, &verified);
        let mut out = Vec::new();
        v.feed(&body, &mut out).unwrap();
        v.finish().unwrap();
        assert_eq!(out, d);
        return;
    }
    panic!("no short signature in 50,000 (expected one in about 500)");
}

#[test]
fn a_tampered_sigv4a_body_is_refused() {
    let d = data(3000);
    let (headers, verified, mut chunks) = request_v4a(PayloadHash::StreamingEcdsa, d.len(), None);
    let body = signed_body(&mut chunks, &d, 1000);
    let text = String::from_utf8_lossy(&body).into_owned();
    let sigs = chunk_signatures(&body);
    let mut tampered = Vec::new();
    // One data byte changed.
    let mut b = body.clone();
    let at = text.find("\r\n").unwrap() + 2 + 10;
    b[at] ^= 1;
    tampered.push(b);
    // One signature digit changed.
    let s = &sigs[1];
    let flipped = format!("{}{}", if s.starts_with('3') { '4' } else { '3' }, &s[1..]);
    tampered.push(text.replacen(s.as_str(), &flipped, 1).into_bytes());
    // The padding removed (the body would no longer have its announced length).
    tampered.push(
        text.replacen(s.as_str(), s.trim_end_matches('*'), 1)
            .into_bytes(),
    );
    // The second chunk dropped.
    let second = text
        .find(&format!("3e8;chunk-signature={}", sigs[1]))
        .unwrap();
    let third = text
        .find(&format!("3e8;chunk-signature={}", sigs[2]))
        .unwrap();
    tampered.push(format!("{}{}", &text[..second], &text[third..]).into_bytes());
    for (i, body) in tampered.iter().enumerate() {
        let mut v = body_verifier(&headers, &verified);
        let result = v.feed(body, &mut Vec::new()).and_then(|()| v.finish());
        assert!(result.is_err(), "tampering {i} was accepted");
    }
}

#[test]
fn a_sigv4a_trailer_is_checked() {
    let d = data(1500);
    for tamper in [false, true] {
        let (headers, verified, mut cs) = request_v4a(
            PayloadHash::StreamingEcdsaTrailer,
            d.len(),
            Some("x-amz-checksum-crc32c"),
        );
        let mut body = Vec::new();
        cs.encode_chunk(&d, &mut body).unwrap();
        cs.encode_final_with_trailer("x-amz-checksum-crc32c", "sOO8/Q==", &mut body)
            .unwrap();
        assert_eq!(
            body.len() as u64,
            signed_encoded_length(
                1500,
                1500,
                Some(("x-amz-checksum-crc32c", 8)),
                V4A_SIGNATURE_LEN
            )
        );
        if tamper {
            body = String::from_utf8_lossy(&body)
                .replace("sOO8/Q==", "sOO8/R==")
                .into_bytes();
        }
        let mut v = body_verifier(&headers, &verified);
        let mut out = Vec::new();
        let result = v.feed(&body, &mut out).and_then(|()| v.finish());
        assert_eq!(result.is_ok(), !tamper, "tamper={tamper}: {result:?}");
    }
}

#[test]
fn chunk_modes_must_match_the_algorithm() {
    let v4 = Signer::new(creds(), "us-east-1", "s3", Settings::S3).unwrap();
    let v4a = Signer::new_v4a(creds(), "*", "s3", Settings::S3).unwrap();
    let req = Request {
        method: "PUT",
        path: "/b/k",
        query: "",
        headers: &[("host", "s3.amazonaws.com")],
    };
    for (signer, payload) in [
        (&v4, PayloadHash::StreamingEcdsa),
        (&v4, PayloadHash::StreamingEcdsaTrailer),
        (&v4a, PayloadHash::StreamingSigned),
        (&v4a, PayloadHash::StreamingSignedTrailer),
    ] {
        let err = signer.sign_headers(&req, &payload, t()).unwrap_err();
        assert!(err.to_string().contains("cannot be signed"), "{err}");
    }
}

/// A checksum for the re-framing tests: the byte count and a sum, as text of a fixed length.
struct Sum(u64, u64);

impl TrailerChecksum for Sum {
    fn update(&mut self, data: &[u8]) {
        self.0 += data.len() as u64;
        self.1 = data.iter().fold(self.1, |s, b| {
            s.wrapping_mul(31).wrapping_add(u64::from(*b))
        });
    }
    fn value(&self) -> String {
        format!("{:08x}{:016x}", self.0, self.1)
    }
}

/// What a re-framed body of `data` is, built independently of the re-framer.
fn reframed(data: &[u8], trailer: &str, value: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(REFRAMED_CHUNK) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("0\r\n{trailer}:{value}\r\n\r\n").as_bytes());
    out
}

/// Feeds `body` cut at pseudo-random points (seeded), then ends it: what was written, and
/// the first error.
fn reframe_in_pieces(mut r: Reframer, body: &[u8], seed: u64) -> (Vec<u8>, Result<(), String>) {
    let mut out = Vec::new();
    let mut state = seed | 1;
    let mut at = 0;
    while at < body.len() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let step = (state % 70_000) as usize + 1;
        let end = (at + step).min(body.len());
        if let Err(e) = r.feed(&body[at..end], &mut out) {
            return (out, Err(e.to_string()));
        }
        at = end;
    }
    let result = r.finish(&mut out).map_err(|e| e.to_string());
    (out, result)
}

fn computed() -> Trailer {
    Trailer::Computed {
        name: "x-amz-checksum-test".into(),
        checksum: Box::new(Sum(0, 0)),
    }
}

#[test]
fn the_reframed_length_is_known_from_the_decoded_one() {
    let edges = [
        0,
        1,
        15,
        16,
        REFRAMED_CHUNK - 1,
        REFRAMED_CHUNK,
        REFRAMED_CHUNK + 1,
    ];
    for len in edges.into_iter().chain([3 * REFRAMED_CHUNK + 17]) {
        let d = data(len);
        let want = reframed(&d, "x-amz-checksum-test", &Sum(0, 0).value());
        assert_eq!(
            encoded_len(len as u64, &computed()),
            want.len() as u64,
            "{len}"
        );
        let client = Trailer::client("x-amz-checksum-crc32").unwrap();
        let want = reframed(&d, "x-amz-checksum-crc32", "AAAAAA==");
        assert_eq!(encoded_len(len as u64, &client), want.len() as u64, "{len}");
    }
}

#[test]
fn a_verified_body_is_reframed_whatever_its_pieces() {
    for (len, size) in [
        (0, 1000),
        (1, 1000),
        (200_000, 65_536),
        (REFRAMED_CHUNK * 2, 8192),
        (150_001, 100_000),
    ] {
        let d = data(len);
        let (headers, verified, chunks) = request(PayloadHash::StreamingSigned, d.len(), None);
        let body = signed_body(&mut chunks.unwrap(), &d, size);
        let mut sum = Sum(0, 0);
        sum.update(&d);
        let want = reframed(&d, "x-amz-checksum-test", &sum.value());
        assert_eq!(encoded_len(len as u64, &computed()), want.len() as u64);
        for seed in 1..6 {
            let r = Reframer::new(body_verifier(&headers, &verified), computed());
            let (out, result) = reframe_in_pieces(r, &body, seed);
            assert_eq!(result, Ok(()), "{len} bytes, seed {seed}");
            assert!(
                out == want,
                "{len} bytes, seed {seed}: the re-framed body differs"
            );
        }
    }
}

#[test]
fn the_clients_trailer_closes_the_reframed_body_once_verified() {
    let d = data(70_000);
    let (verifier, body) = with_crc32c_trailer(&d, "sOO8/Q==");
    let trailer = Trailer::client("x-amz-checksum-crc32c").unwrap();
    let (out, result) = reframe_in_pieces(Reframer::new(verifier, trailer), &body, 7);
    assert_eq!(result, Ok(()));
    assert!(out == reframed(&d, "x-amz-checksum-crc32c", "sOO8/Q=="));
    // A trailer of the wrong length, though signed, closes nothing.
    let (verifier, body) = with_crc32c_trailer(&d, "sOO8");
    let trailer = Trailer::client("x-amz-checksum-crc32c").unwrap();
    let (out, result) = reframe_in_pieces(Reframer::new(verifier, trailer), &body, 3);
    assert!(result.is_err());
    // Only the whole first chunk went out: not the rest of the data, not the final chunk.
    let whole = reframed(&d, "x-amz-checksum-crc32c", "sOO8/Q==");
    assert!(
        out == whole[..REFRAMED_CHUNK + 9],
        "{} bytes written",
        out.len()
    );
}

#[test]
fn a_tampered_or_cut_body_never_gets_a_trailer_and_unverified_bytes_never_go_out() {
    let d = data(300_000);
    let (headers, verified, chunks) = request(PayloadHash::StreamingSigned, d.len(), None);
    let body = signed_body(&mut chunks.unwrap(), &d, 65_536);
    let whole = reframed(&d, "x-amz-checksum-test", "");
    for cut in [10, 65_536 + 100, 200_000, body.len() - 1] {
        for tamper in [false, true] {
            let mut sent = body.clone();
            if tamper {
                sent[cut] ^= 0x20;
            } else {
                sent.truncate(cut);
            }
            let r = Reframer::new(body_verifier(&headers, &verified), computed());
            let (out, result) = reframe_in_pieces(r, &sent, cut as u64);
            assert!(result.is_err(), "cut {cut}, tamper {tamper}");
            // Only whole chunks of verified data, as the complete body would have them.
            assert!(
                out.len() % (REFRAMED_CHUNK + 9) == 0 && whole.starts_with(&out),
                "cut {cut}"
            );
            // Never more data than arrived before the fault.
            assert!(
                out.len() / (REFRAMED_CHUNK + 9) * REFRAMED_CHUNK <= cut,
                "cut {cut}"
            );
        }
    }
}
