//! AWS's published S3 SigV4 examples ("Signature calculations for the Authorization header" and
//! "Transferring payload in multiple chunks"): header signing and chunk signing for service `s3`.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use slipstream_sign::chunk::{signed_encoded_length, V4_SIGNATURE_LEN};
use slipstream_sign::{
    ChunkSigner, PayloadHash, Request, Settings, Signer, SigningTime, EMPTY_SHA256,
};

fn signer() -> Signer {
    Signer::new(common::creds(), "us-east-1", "s3", Settings::S3).unwrap()
}

fn time() -> SigningTime {
    common::t()
}

#[test]
fn get_object_with_range() {
    let headers = [
        ("Host", "examplebucket.s3.amazonaws.com"),
        ("Range", "bytes=0-9"),
    ];
    let req = Request {
        method: "GET",
        path: "/test.txt",
        query: "",
        headers: &headers,
    };
    let sig = signer()
        .sign_headers(&req, &PayloadHash::Sha256(EMPTY_SHA256.into()), time())
        .unwrap();
    assert_eq!(
        sig.signature,
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    );
    assert_eq!(
        sig.headers.last().unwrap().1,
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    );
}

#[test]
fn streaming_put_chunks() {
    let length = signed_encoded_length(66_560, 65_536, None, V4_SIGNATURE_LEN);
    assert_eq!(length, 66_824);
    let length = length.to_string();
    let headers = [
        ("Host", "s3.amazonaws.com"),
        ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
        ("Content-Encoding", "aws-chunked"),
        ("x-amz-decoded-content-length", "66560"),
        ("Content-Length", length.as_str()),
    ];
    let req = Request {
        method: "PUT",
        path: "/examplebucket/chunkObject.txt",
        query: "",
        headers: &headers,
    };
    let s = signer();
    let seed = s
        .sign_headers(&req, &PayloadHash::StreamingSigned, time())
        .unwrap();
    assert_eq!(
        seed.signature,
        "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
    );

    let mut chunks = ChunkSigner::new(
        &s.signing_key(time()).unwrap(),
        time(),
        "us-east-1",
        "s3",
        &seed.signature,
    )
    .unwrap();
    let mut body = Vec::new();
    chunks.encode_chunk(&[b'a'; 65_536], &mut body).unwrap();
    chunks.encode_chunk(&[b'a'; 1024], &mut body).unwrap();
    chunks.encode_chunk(b"", &mut body).unwrap();
    let text = String::from_utf8_lossy(&body);
    for sig in [
        "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n",
        "\r\n400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n",
        "\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n",
    ] {
        assert!(text.contains(sig), "missing {sig:?}");
    }
    assert_eq!(body.len(), 66_824);
}

#[test]
fn a_bad_seed_is_refused() {
    let s = signer();
    for seed in ["", "xyz", &"A".repeat(64), &"a".repeat(63)] {
        assert!(
            ChunkSigner::new(
                &s.signing_key(time()).unwrap(),
                time(),
                "us-east-1",
                "s3",
                seed
            )
            .is_err(),
            "{seed}"
        );
    }
}
