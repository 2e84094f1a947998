//! aws-chunked uploads signed by aws-crt-java (aws-c-auth, the signer inside the AWS SDKs), checked
//! by our verifier: the independent evidence that SigV4A chunk signing follows the same format.
//! SigV4's chunks are deterministic, so there our signer must also produce the same bytes.
//!
//! Needs `java`, `javac` and Maven Central (scripts/crt-java-chunks.sh fetches the jar once).
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use slipstream_sign::verify::{ChunkedBody, CredentialKeys, Incoming, Verifier};
use slipstream_sign::{Credentials, PayloadHash, Request, Settings, Signer, SigningTime};

fn creds() -> Credentials {
    Credentials::new(
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        None,
    )
    .unwrap()
}

fn t() -> SigningTime {
    SigningTime::parse_amz("20130524T000000Z").unwrap()
}

/// Runs the Java signer once for all tests of this file.
fn fixtures() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("crt-java");
        let status = Command::new(root.join("scripts/crt-java-chunks.sh"))
            .arg(&dir)
            .status()
            .expect("run scripts/crt-java-chunks.sh (needs java and javac)");
        assert!(status.success(), "scripts/crt-java-chunks.sh failed");
        dir
    })
}

struct Upload {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn load(name: &str) -> Upload {
    let dir = fixtures().join(name);
    let text = std::fs::read_to_string(dir.join("headers.txt")).unwrap();
    let headers = text
        .lines()
        .map(|l| {
            let (n, v) = l.split_once(": ").unwrap();
            (n.to_owned(), v.to_owned())
        })
        .collect();
    let body = std::fs::read(dir.join("body.bin")).unwrap();
    Upload { headers, body }
}

fn data() -> Vec<u8> {
    (0..66_560).map(|i| (i * 31 % 251) as u8).collect()
}

/// Our verifier accepts the CRT's request and body, hands out the data, and refuses the body
/// once one byte of it changed.
fn verify(upload: &Upload) {
    let refs: Vec<(&str, &str)> = upload
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let incoming = Incoming {
        method: "PUT",
        target: "/examplebucket/chunkObject.txt",
        headers: &refs,
        body_sha256: None,
    };
    let keys = CredentialKeys::new([creds()]);
    let verified = Verifier::s3("us-east-1")
        .verify(&incoming, &keys, t())
        .unwrap();
    let mut body = ChunkedBody::new(&verified, &keys, &refs).unwrap();
    let mut out = Vec::new();
    body.feed(&upload.body, &mut out).unwrap();
    body.finish().unwrap();
    assert_eq!(out, data());
    let mut tampered = upload.body.clone();
    tampered[1000] ^= 1;
    let mut body = ChunkedBody::new(&verified, &keys, &refs).unwrap();
    assert!(body
        .feed(&tampered, &mut Vec::new())
        .and_then(|()| body.finish())
        .is_err());
}

#[test]
fn crt_sigv4a_chunks_verify() {
    verify(&load("v4a-plain"));
}

#[test]
fn crt_sigv4a_chunks_with_a_signed_trailer_verify() {
    let upload = load("v4a-trailer");
    verify(&upload);
    let text = String::from_utf8_lossy(&upload.body);
    assert!(text.contains("x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:"));
}

#[test]
fn crt_sigv4_chunks_verify_and_equal_ours() {
    for (name, payload, trailer) in [
        ("v4-plain", PayloadHash::StreamingSigned, false),
        ("v4-trailer", PayloadHash::StreamingSignedTrailer, true),
    ] {
        let upload = load(name);
        verify(&upload);
        // Sign the same request ourselves: same headers, same seed, same chunks, same bytes.
        let unsigned: Vec<(&str, &str)> = upload
            .headers
            .iter()
            .filter(|(n, _)| {
                !["authorization", "x-amz-date", "x-amz-content-sha256"]
                    .contains(&n.to_ascii_lowercase().as_str())
            })
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let signer = Signer::new(creds(), "us-east-1", "s3", Settings::S3).unwrap();
        let req = Request {
            method: "PUT",
            path: "/examplebucket/chunkObject.txt",
            query: "",
            headers: &unsigned,
        };
        let sig = signer.sign_headers(&req, &payload, t()).unwrap();
        let crt_auth = &upload
            .headers
            .iter()
            .find(|(n, _)| n == "Authorization")
            .unwrap()
            .1;
        let ours = &sig
            .headers
            .iter()
            .find(|(n, _)| *n == "authorization")
            .unwrap()
            .1;
        assert_eq!(ours, crt_auth, "{name}");
        let mut chunks = signer.chunk_signer(t(), &sig.signature).unwrap();
        let d = data();
        let mut body = Vec::new();
        for piece in d.chunks(65_536) {
            chunks.encode_chunk(piece, &mut body).unwrap();
        }
        if trailer {
            chunks
                .encode_final_with_trailer("x-amz-checksum-crc32c", "sOO8/Q==", &mut body)
                .unwrap();
        } else {
            chunks.encode_chunk(b"", &mut body).unwrap();
        }
        assert!(
            body == upload.body,
            "{name}: our body differs from the CRT's"
        );
    }
}
