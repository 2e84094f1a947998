//! aws-crt-java (aws-c-auth, the signer inside the AWS SDKs) as the independent other side:
//! its aws-chunked uploads are checked by our verifier (SigV4's chunks are deterministic, so there
//! our signer must also produce the same bytes), and it checks our SigV4A signatures, header and
//! presigned, for awkward keys (SigV4A signatures are random, so they can only be verified).
//!
//! Needs `java`, `javac` and Maven Central (scripts/crt-java.sh chunks fetches the jar once).
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use common::{creds, t};
use slipstream_sign::encode::{encode_path_into, encode_query, hex};
use slipstream_sign::verify::{ChunkedBody, CredentialKeys, Incoming, Verifier};
use slipstream_sign::{PayloadHash, Request, Settings, Signer};

/// Runs the Java signer once for all tests of this file.
fn fixtures() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("crt-java");
        let status = Command::new(root.join("scripts/crt-java.sh"))
            .arg("chunks")
            .arg(&dir)
            .status()
            .expect("run scripts/crt-java.sh chunks (needs java and javac)");
        assert!(status.success(), "scripts/crt-java.sh chunks failed");
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

/// One request for aws-c-auth to verify, as a line of tests/interop/CrtVerify.java's input.
fn verify_line(
    form: &str,
    method: &str,
    target: &str,
    payload: &str,
    cr: &str,
    sig: &str,
) -> String {
    let signer = Signer::new_v4a(creds(), "us-east-1", "s3", Settings::S3).unwrap();
    let public = signer.public_key().unwrap();
    let (x, y) = (hex(&public[1..33]), hex(&public[33..]));
    format!(
        "{form}\t{method}\t{target}\ts3.amazonaws.com\t{payload}\t{}\t{sig}\t{x}\t{y}\n",
        hex(cr.as_bytes())
    )
}

/// aws-c-auth's verdicts on `lines`, one per line.
fn crt_verdicts(lines: &str) -> Vec<bool> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut child = Command::new(root.join("scripts/crt-java.sh"))
        .arg("verify")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run scripts/crt-java.sh verify (needs java and javac)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "scripts/crt-java.sh verify failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l == "true")
        .collect()
}

#[test]
fn crt_verifies_our_sigv4a_signatures() {
    let signer = Signer::new_v4a(creds(), "us-east-1", "s3", Settings::S3).unwrap();
    let keys = [
        "photos/2026/a b.jpg",
        "ünïcødé/ñ/日本語.txt",
        "x+y=z&w;v,u@t:s!r$q'p(o)n*m",
        "tilde~dot.dash-under_score",
        "50% off/%41%2F",
        "a//b/./c/../d",
        "emoji 🚀 key",
        "questions?hash#",
    ];
    let extras = [
        String::new(),
        format!(
            "response-content-disposition={}&versionId=3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY",
            encode_query("attachment; filename=\"r\u{e9}sum\u{e9}.pdf\"")
        ),
    ];
    let mut lines = String::new();
    let mut expected = Vec::new();
    for key in keys {
        let mut path = String::from("/examplebucket/");
        encode_path_into(&mut path, key);
        for query in &extras {
            let target = if query.is_empty() {
                path.clone()
            } else {
                format!("{path}?{query}")
            };
            let req = Request {
                method: "GET",
                path: &path,
                query,
                headers: &[("host", "s3.amazonaws.com")],
            };
            let p = signer
                .presign(&req, 3600, &PayloadHash::Unsigned, t())
                .unwrap();
            lines += &verify_line(
                "query",
                "GET",
                &target,
                "UNSIGNED-PAYLOAD",
                &p.canonical_request,
                &p.signature,
            );
            expected.push(true);
            let put = Request {
                method: "PUT",
                ..req
            };
            let body = PayloadHash::of(key.as_bytes());
            let h = signer.sign_headers(&put, &body, t()).unwrap();
            lines += &verify_line(
                "header",
                "PUT",
                &target,
                body.as_str(),
                &h.canonical_request,
                &h.signature,
            );
            expected.push(true);
            // Someone else's signature on this request, and our canonical request with one
            // character changed: both must be refused, or the checks above prove nothing.
            let other = signer
                .presign(
                    &Request {
                        path: "/examplebucket/other",
                        ..req
                    },
                    3600,
                    &PayloadHash::Unsigned,
                    t(),
                )
                .unwrap();
            lines += &verify_line(
                "query",
                "GET",
                &target,
                "UNSIGNED-PAYLOAD",
                &p.canonical_request,
                &other.signature,
            );
            expected.push(false);
            let altered = p.canonical_request.replacen("GET", "PUT", 1);
            lines += &verify_line(
                "query",
                "GET",
                &target,
                "UNSIGNED-PAYLOAD",
                &altered,
                &p.signature,
            );
            expected.push(false);
        }
    }
    assert_eq!(crt_verdicts(&lines), expected);
}
