//! Any bytes, fed in any split, as the aws-chunked body of a validly signed streaming request,
//! through the verifying edge's re-framer: no panic; nothing written unless the body verified
//! to its end (the announced length is under one re-framed chunk), and then exactly the bytes
//! the chunk verifier releases, framed, and the trailer. (Bodies of many chunks: the unit tests
//! in crates/sign/tests/chunked.rs.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_sign::verify::{
    ChunkedBody, CredentialKeys, Incoming, Reframer, Trailer, TrailerChecksum, Verifier,
};
use slipstream_sign::{Credentials, PayloadHash, Request, Settings, Signer, SigningTime};

/// A stand-in checksum: the byte count.
struct Count(u64);

impl TrailerChecksum for Count {
    fn update(&mut self, data: &[u8]) {
        self.0 += data.len() as u64;
    }
    fn value(&self) -> String {
        format!("{:04}", self.0)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, body)) = data.split_first() else { return };
    let (Ok(creds), Ok(t)) = (Credentials::new("AKID", "secret", None), SigningTime::from_unix(1_440_938_160)) else { return };
    let Ok(signer) = Signer::new(creds.clone(), "us-east-1", "s3", Settings::S3) else { return };
    let headers = [("host", "h"), ("x-amz-decoded-content-length", "64")];
    let req = Request { method: "PUT", path: "/b/k", query: "", headers: &headers };
    let Ok(sig) = signer.sign_headers(&req, &PayloadHash::StreamingSigned, t) else { return };
    let mut all: Vec<(&str, &str)> = headers.to_vec();
    all.extend(sig.headers.iter().map(|(n, v)| (*n, v.as_str())));
    let keys = CredentialKeys::new([creds]);
    let incoming = Incoming { method: "PUT", target: "/b/k", headers: &all, body_sha256: None };
    let Ok(verified) = Verifier::s3("us-east-1").verify(&incoming, &keys, t) else { return };
    let (Ok(chunked), Ok(mut alone)) =
        (ChunkedBody::new(&verified, &keys, &all), ChunkedBody::new(&verified, &keys, &all))
    else {
        return;
    };
    let trailer = Trailer::Computed { name: "x-amz-checksum-count".into(), checksum: Box::new(Count(0)) };
    let mut r = Reframer::new(chunked, trailer);
    let cut = usize::from(split).min(body.len());
    let mut out = Vec::new();
    let finished = r.feed(&body[..cut], &mut out).and_then(|()| r.feed(&body[cut..], &mut out)).and_then(|()| r.finish(&mut out));
    // What the chunk verifier alone releases for the same bytes.
    let mut released = Vec::new();
    let verified_whole = alone.feed(body, &mut released).and_then(|()| alone.finish());
    assert_eq!(finished.is_ok(), verified_whole.is_ok());
    assert!(released.len() <= 64);
    // The announced 64 bytes are less than one re-framed chunk: nothing is written before the
    // whole body verified, then the data and the trailer.
    let mut expected = Vec::new();
    if finished.is_ok() {
        if !released.is_empty() {
            expected.extend_from_slice(format!("{:x}\r\n", released.len()).as_bytes());
            expected.extend_from_slice(&released);
            expected.extend_from_slice(b"\r\n");
        }
        expected.extend_from_slice(format!("0\r\nx-amz-checksum-count:{:04}\r\n\r\n", released.len()).as_bytes());
    }
    assert_eq!(out, expected);
});
