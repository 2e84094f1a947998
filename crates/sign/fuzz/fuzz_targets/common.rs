//! What the aws-chunked fuzz targets share: a validly signed streaming PUT that announces 64
//! bytes, and its verdict, so each target feeds arbitrary bodies to the body verifier.

use slipstream_sign::verify::{ChunkedBody, CredentialKeys, Incoming, Verifier};
use slipstream_sign::{Credentials, PayloadHash, Request, Settings, Signer, SigningTime};

/// A fresh verifier of the signed request's body; `None` only if signing itself failed.
pub fn signed_streaming_body() -> Option<ChunkedBody> {
    let creds = Credentials::new("AKID", "secret", None).ok()?;
    let t = SigningTime::from_unix(1_440_938_160).ok()?;
    let signer = Signer::new(creds.clone(), "us-east-1", "s3", Settings::S3).ok()?;
    let headers = [("host", "h"), ("x-amz-decoded-content-length", "64")];
    let req = Request { method: "PUT", path: "/b/k", query: "", headers: &headers };
    let sig = signer.sign_headers(&req, &PayloadHash::StreamingSigned, t).ok()?;
    let mut all: Vec<(&str, &str)> = headers.to_vec();
    all.extend(sig.headers.iter().map(|(n, v)| (*n, v.as_str())));
    let keys = CredentialKeys::new([creds]);
    let incoming = Incoming { method: "PUT", target: "/b/k", headers: &all, body_sha256: None };
    let verified = Verifier::s3("us-east-1").verify(&incoming, &keys, t).ok()?;
    ChunkedBody::new(&verified, &keys, &all).ok()
}
