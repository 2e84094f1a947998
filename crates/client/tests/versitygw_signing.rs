//! Header signing and aws-chunked signing checked by a real verifier: the local versitygw.
//!
//! Requests are written by hand over a `TcpStream`, so nothing but `slipstream-sign` decides
//! what is signed. Run through `make test` (scripts/with-s3-server.sh); without a server these
//! tests fail rather than skip, because a skipped signing test proves nothing.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};

use slipstream_sign::chunk::{
    encode_unsigned_chunk, encode_unsigned_final, signed_encoded_length, unsigned_encoded_length,
    V4_SIGNATURE_LEN,
};
use slipstream_sign::{
    ChunkSigner, Credentials, PayloadHash, Request, Settings, Signer, SigningTime,
};

struct Server {
    addr: String,
    signer: Signer,
}

fn server() -> Server {
    let endpoint = std::env::var("SLIPSTREAM_TEST_ENDPOINT")
        .expect("no local S3 server: run through `make test` (scripts/with-s3-server.sh)");
    let addr = endpoint
        .strip_prefix("http://")
        .expect("an http:// endpoint")
        .to_owned();
    let creds = Credentials::new(
        std::env::var("AWS_ACCESS_KEY_ID").unwrap(),
        std::env::var("AWS_SECRET_ACCESS_KEY").unwrap(),
        None,
    )
    .unwrap();
    Server {
        addr,
        signer: Signer::new(
            creds,
            &std::env::var("SLIPSTREAM_TEST_REGION").unwrap(),
            "s3",
            Settings::S3,
        )
        .unwrap(),
    }
}

fn now() -> SigningTime {
    SigningTime::from_system_time(SystemTime::now()).unwrap()
}

/// Sends one HTTP/1.1 request and returns (status, body). `Connection: close` keeps reading simple.
fn send(
    s: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut conn = TcpStream::connect(&s.addr).unwrap();
    conn.set_nodelay(true).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).unwrap();
    // The server may answer and close before reading a refused body.
    let _ = conn.write_all(body);
    let mut response = Vec::new();
    let _ = conn.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body_at = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(response.len(), |i| i + 4);
    (status, response[body_at..].to_vec())
}

/// Signs with `payload` and sends; `extra` headers are signed too.
fn signed(
    s: &Server,
    method: &str,
    path: &str,
    extra: &[(&str, String)],
    payload: &PayloadHash,
    body: &[u8],
) -> (u16, Vec<u8>) {
    let time = now();
    let mut headers: Vec<(&str, String)> = vec![("host", s.addr.clone())];
    headers.extend(extra.iter().cloned());
    let refs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let (path_only, query) = path.split_once('?').unwrap_or((path, ""));
    let sig = s
        .signer
        .sign_headers(
            &Request {
                method,
                path: path_only,
                query,
                headers: &refs,
            },
            payload,
            time,
        )
        .unwrap();
    headers.extend(sig.headers.iter().map(|(n, v)| (*n, v.clone())));
    send(s, method, path, &headers, body)
}

fn make_bucket(s: &Server, name: &str) {
    let (status, body) = signed(
        s,
        "PUT",
        &format!("/{name}"),
        &[],
        &PayloadHash::of(b""),
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
}

fn get(s: &Server, path: &str) -> Vec<u8> {
    let (status, body) = signed(s, "GET", path, &[], &PayloadHash::of(b""), b"");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    body
}

#[test]
fn header_signed_put_and_get_with_hashed_and_unsigned_payloads() {
    let s = server();
    make_bucket(&s, "hdr-sign");
    let body = b"hello from a header-signed PUT";
    let (status, resp) = signed(
        &s,
        "PUT",
        "/hdr-sign/a%20b/c%2Bd",
        &[("content-length", body.len().to_string())],
        &PayloadHash::of(body),
        body,
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&resp));
    assert_eq!(get(&s, "/hdr-sign/a%20b/c%2Bd"), body);

    let (status, resp) = signed(
        &s,
        "PUT",
        "/hdr-sign/unsigned",
        &[("content-length", "3".into())],
        &PayloadHash::Unsigned,
        b"xyz",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&resp));
    assert_eq!(get(&s, "/hdr-sign/unsigned"), b"xyz");

    let (status, _) = signed(
        &s,
        "PUT",
        "/hdr-sign/wrong-hash",
        &[("content-length", "3".into())],
        &PayloadHash::of(b"abc"),
        b"abd",
    );
    assert_ne!(
        status, 200,
        "a body that does not match x-amz-content-sha256 must be refused"
    );

    let (status, body) = signed(
        &s,
        "GET",
        "/hdr-sign?list-type=2&prefix=a%20",
        &[],
        &PayloadHash::of(b""),
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert!(
        String::from_utf8_lossy(&body).contains("<Key>a b/c+d</Key>"),
        "{}",
        String::from_utf8_lossy(&body)
    );
}

#[test]
fn streaming_signed_chunks_are_accepted_and_a_tampered_chunk_is_not() {
    let s = server();
    make_bucket(&s, "chunked");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let chunk = 64 * 1024;
    for tamper in [false, true] {
        let time = now();
        let length = signed_encoded_length(data.len() as u64, chunk as u64, None, V4_SIGNATURE_LEN);
        let mut headers: Vec<(&str, String)> = vec![
            ("host", s.addr.clone()),
            ("content-encoding", "aws-chunked".into()),
            ("x-amz-decoded-content-length", data.len().to_string()),
            ("content-length", length.to_string()),
        ];
        let refs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let req = Request {
            method: "PUT",
            path: "/chunked/obj",
            query: "",
            headers: &refs,
        };
        let seed = s
            .signer
            .sign_headers(&req, &PayloadHash::StreamingSigned, time)
            .unwrap();
        headers.extend(seed.headers.iter().map(|(n, v)| (*n, v.clone())));
        let mut chunks = ChunkSigner::new(
            &s.signer.signing_key(time).unwrap(),
            time,
            "us-east-1",
            "s3",
            &seed.signature,
        )
        .unwrap();
        let mut body = Vec::new();
        for piece in data.chunks(chunk) {
            chunks.encode_chunk(piece, &mut body).unwrap();
        }
        chunks.encode_chunk(b"", &mut body).unwrap();
        assert_eq!(body.len() as u64, length);
        if tamper {
            let at = body.len() / 2;
            body[at] ^= 1;
        }
        let (status, resp) = send(&s, "PUT", "/chunked/obj", &headers, &body);
        if tamper {
            assert_eq!(status, 403, "{}", String::from_utf8_lossy(&resp));
        } else {
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&resp));
            assert_eq!(get(&s, "/chunked/obj"), data);
        }
    }
}

#[test]
fn unsigned_chunks_with_a_checksum_trailer() {
    let s = server();
    make_bucket(&s, "trailer");
    let data: Vec<u8> = (0..150_000u32).map(|i| (i * 7 % 256) as u8).collect();
    for corrupt in [false, true] {
        // The library's CRC32C and base64 form; versitygw recomputes the checksum itself.
        let alg = slipstream_client::ChecksumAlgorithm::Crc32c;
        let sum = alg.encode(alg.compute(&data) ^ u64::from(corrupt));
        let chunk = 32 * 1024;
        let length = unsigned_encoded_length(
            data.len() as u64,
            chunk as u64,
            "x-amz-checksum-crc32c",
            sum.len() as u64,
        );
        let extra = [
            ("content-encoding", "aws-chunked".to_owned()),
            ("x-amz-decoded-content-length", data.len().to_string()),
            ("x-amz-trailer", "x-amz-checksum-crc32c".to_owned()),
            ("content-length", length.to_string()),
        ];
        let mut body = Vec::new();
        for piece in data.chunks(chunk) {
            encode_unsigned_chunk(piece, &mut body);
        }
        encode_unsigned_final("x-amz-checksum-crc32c", &sum, &mut body);
        assert_eq!(body.len() as u64, length);
        let (status, resp) = signed(
            &s,
            "PUT",
            "/trailer/obj",
            &extra,
            &PayloadHash::StreamingUnsignedTrailer,
            &body,
        );
        if corrupt {
            assert_ne!(status, 200, "a wrong checksum must be refused");
        } else {
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&resp));
            assert_eq!(get(&s, "/trailer/obj"), data);
        }
    }
}

#[test]
fn a_wrong_secret_is_refused() {
    let s = server();
    let creds = Credentials::new(
        std::env::var("AWS_ACCESS_KEY_ID").unwrap(),
        "not-the-secret",
        None,
    )
    .unwrap();
    let bad = Server {
        addr: s.addr.clone(),
        signer: Signer::new(creds, "us-east-1", "s3", Settings::S3).unwrap(),
    };
    let (status, _) = signed(&bad, "GET", "/", &[], &PayloadHash::of(b""), b"");
    assert_eq!(status, 403);
}
