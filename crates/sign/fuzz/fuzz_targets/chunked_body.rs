//! Any bytes, fed in any split, through the aws-chunked verifier of a validly signed streaming
//! request: no panic, and nothing is released unless its chunk verified (the output never
//! exceeds the announced length).
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_sign::verify::{ChunkedBody, CredentialKeys, Incoming, Verifier};
use slipstream_sign::{Credentials, PayloadHash, Request, Settings, Signer, SigningTime};

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
    let Ok(mut v) = ChunkedBody::new(&verified, &keys, &all) else { return };
    let mut out = Vec::new();
    let cut = usize::from(split).min(body.len());
    if v.feed(&body[..cut], &mut out).and_then(|()| v.feed(&body[cut..], &mut out)).is_ok() {
        let _ = v.finish();
    }
    assert!(out.len() <= 64);
});
