//! Presigning and signing costs, with rusty-s3 and aws-sigv4 measured in the same run.
//!
//! `floor` is the unavoidable work for one URL written plainly: the canonical request built in a
//! reused buffer, one SHA-256, one HMAC from a pre-keyed state, hex, and the URL string. The
//! target is ours within 1.25x of it. Run: `cargo bench -p slipstream-sign-bench --bench presign`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, UNIX_EPOCH};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use slipstream_sign::{
    ChunkSigner, Credentials, PayloadHash, PresignOptions, Presigner, Request, Settings, Signer,
    SigningKey, SigningTime, UrlBase,
};

const AKID: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const KEY: &str = "photos/2026/11/21/img-0001234.jpg";
const UNIX: i64 = 1_795_219_200; // 2026-11-21T00:00:00Z

/// Where every benchmark's URLs point: virtual-hosted `examplebucket` on AWS.
fn base() -> UrlBase {
    UrlBase {
        origin: "https://examplebucket.s3.amazonaws.com".into(),
        host: "examplebucket.s3.amazonaws.com".into(),
        path_prefix: "/".into(),
    }
}

fn creds() -> Credentials {
    Credentials::new(AKID, SECRET, None).unwrap()
}

fn presigner() -> Presigner {
    Presigner::new(base(), "us-east-1", creds()).unwrap()
}

fn time() -> SigningTime {
    SigningTime::from_unix(UNIX).unwrap()
}

/// The floor: what any presigner must do per URL, with nothing cached but the signing key.
struct Floor {
    buf: Vec<u8>,
    mac: Hmac<Sha256>,
    query: String,
}

impl Floor {
    fn new() -> Self {
        let key = SigningKey::derive(SECRET, "20261121", "us-east-1", "s3");
        let query = format!(
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={AKID}%2F20261121%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261121T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
        );
        Self {
            buf: Vec::with_capacity(512),
            mac: Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap(),
            query,
        }
    }

    fn sign(&mut self, key: &str) -> String {
        let mut enc = String::with_capacity(key.len() * 3);
        slipstream_sign::encode::encode_path_into(&mut enc, key);
        self.buf.clear();
        self.buf.extend_from_slice(b"GET\n/");
        self.buf.extend_from_slice(enc.as_bytes());
        self.buf.extend_from_slice(b"\n");
        self.buf.extend_from_slice(self.query.as_bytes());
        self.buf
            .extend_from_slice(b"\nhost:examplebucket.s3.amazonaws.com\n\nhost\nUNSIGNED-PAYLOAD");
        let hash = slipstream_sign::encode::hex32(&Sha256::digest(&self.buf).into());
        let mut mac = self.mac.clone();
        mac.update(b"AWS4-HMAC-SHA256\n20261121T000000Z\n20261121/us-east-1/s3/aws4_request\n");
        mac.update(&hash);
        let sig = slipstream_sign::encode::hex32(&mac.finalize().into_bytes().into());
        let mut url = String::with_capacity(320);
        url.push_str("https://examplebucket.s3.amazonaws.com/");
        url.push_str(&enc);
        url.push('?');
        url.push_str(&self.query);
        url.push_str("&X-Amz-Signature=");
        url.extend(sig.iter().map(|&b| char::from(b)));
        url
    }
}

/// The query-string settings both aws-sigv4 anchors use: 1 hour, S3's single encoding.
fn aws_settings() -> aws_sigv4::http_request::SigningSettings {
    use aws_sigv4::http_request::{PercentEncodingMode, SignatureLocation, SigningSettings};
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(Duration::from_secs(3600));
    settings.percent_encoding_mode = PercentEncodingMode::Single;
    settings
}

/// Signs a GET of `key` with aws-sigv4 and builds the URL from its instructions.
fn aws_signed_url(params: &aws_sigv4::http_request::SigningParams<'_>, key: &str) -> String {
    use aws_sigv4::http_request::{sign, SignableBody, SignableRequest};
    let mut url = format!("https://examplebucket.s3.amazonaws.com/{key}");
    let signable = SignableRequest::new(
        "GET",
        url.as_str(),
        std::iter::empty(),
        SignableBody::UnsignedPayload,
    )
    .unwrap();
    let (instructions, _) = sign(signable, params).unwrap().into_parts();
    url.push('?');
    for (i, (name, value)) in instructions.params().iter().enumerate() {
        if i > 0 {
            url.push('&');
        }
        url.push_str(name);
        url.push('=');
        url.extend(url::form_urlencoded::byte_serialize(value.as_bytes()));
    }
    url
}

fn aws_sigv4_presign(
    identity: &aws_smithy_runtime_api::client::identity::Identity,
    key: &str,
) -> String {
    let params: aws_sigv4::http_request::SigningParams<'_> =
        aws_sigv4::sign::v4::SigningParams::builder()
            .identity(identity)
            .region("us-east-1")
            .name("s3")
            .time(UNIX_EPOCH + Duration::from_secs(UNIX as u64))
            .settings(aws_settings())
            .build()
            .unwrap()
            .into();
    aws_signed_url(&params, key)
}

fn presign_get(c: &mut Criterion) {
    let mut g = c.benchmark_group("presign_get");
    g.throughput(Throughput::Elements(1));
    let p = presigner();
    let template = p.template(&PresignOptions::get(), time()).unwrap();
    g.bench_function("slipstream_template", |b| {
        b.iter(|| template.sign(black_box(KEY)).unwrap())
    });
    let opts = PresignOptions::get();
    g.bench_function("slipstream_presign", |b| {
        b.iter(|| p.presign(black_box(KEY), &opts, time()).unwrap())
    });
    let mut floor = Floor::new();
    g.bench_function("floor", |b| b.iter(|| floor.sign(black_box(KEY))));

    let bucket = rusty_s3::Bucket::new(
        url::Url::parse("https://s3.amazonaws.com").unwrap(),
        rusty_s3::UrlStyle::VirtualHost,
        "examplebucket",
        "us-east-1",
    )
    .unwrap();
    let creds = rusty_s3::Credentials::new(AKID, SECRET);
    let ts = jiff::Timestamp::from_second(UNIX).unwrap();
    g.bench_function("rusty_s3", |b| {
        b.iter(|| {
            use rusty_s3::S3Action;
            String::from(
                bucket
                    .get_object(Some(&creds), black_box(KEY))
                    .sign_with_time(Duration::from_secs(3600), &ts),
            )
        })
    });
    let identity = aws_credential_types::Credentials::new(AKID, SECRET, None, None, "bench").into();
    g.bench_function("aws_sigv4", |b| {
        b.iter(|| aws_sigv4_presign(&identity, black_box(KEY)))
    });
    g.finish();

    // Same URL from all three, so they measure the same work.
    let ours = template.sign(KEY).unwrap();
    assert_eq!(ours, floor.sign(KEY));
    assert_eq!(ours, aws_sigv4_presign(&identity, KEY));
}

fn aws_sigv4a_presign(
    identity: &aws_smithy_runtime_api::client::identity::Identity,
    key: &str,
) -> String {
    let params: aws_sigv4::http_request::SigningParams<'_> =
        aws_sigv4::sign::v4a::SigningParams::builder()
            .identity(identity)
            .region_set("*")
            .name("s3")
            .time(UNIX_EPOCH + Duration::from_secs(UNIX as u64))
            .settings(aws_settings())
            .build()
            .unwrap()
            .into();
    aws_signed_url(&params, key)
}

fn presign_get_v4a(c: &mut Criterion) {
    let mut g = c.benchmark_group("presign_get_v4a");
    g.throughput(Throughput::Elements(1));
    let base = base();
    let creds = creds();
    let p = Presigner::new_v4a(base, "*", creds.clone()).unwrap();
    let template = p.template(&PresignOptions::get(), time()).unwrap();
    g.bench_function("slipstream_template", |b| {
        b.iter(|| template.sign(black_box(KEY)).unwrap())
    });
    // The floor: one ECDSA P-256 signature of a string to sign of the same length.
    let key = slipstream_sign::v4a::EcdsaKey::derive(&creds).unwrap();
    let sts = format!(
        "AWS4-ECDSA-P256-SHA256\n20261121T000000Z\n20261121/s3/aws4_request\n{}",
        "0".repeat(64)
    );
    g.bench_function("ecdsa_sign_only", |b| {
        b.iter(|| key.sign(black_box(sts.as_bytes())).unwrap())
    });
    let identity = aws_credential_types::Credentials::new(AKID, SECRET, None, None, "bench").into();
    g.bench_function("aws_sigv4", |b| {
        b.iter(|| aws_sigv4a_presign(&identity, black_box(KEY)))
    });
    g.finish();

    let mut g = c.benchmark_group("presign_many_v4a_1k");
    let keys: Vec<String> = (0..1000)
        .map(|i| format!("photos/2026/11/21/img-{i:07}.jpg"))
        .collect();
    g.throughput(Throughput::Elements(keys.len() as u64));
    let mut out = slipstream_sign::UrlBatch::default();
    for threads in [1, 2] {
        g.bench_function(format!("{threads}_threads"), |b| {
            b.iter(|| {
                p.presign_batch_into(
                    &keys,
                    &PresignOptions::get(),
                    time(),
                    Some(threads),
                    &mut out,
                )
                .unwrap()
            })
        });
    }
    g.finish();
}

fn verification(c: &mut Criterion) {
    use slipstream_sign::verify::{CredentialKeys, Incoming, Verifier};
    let mut g = c.benchmark_group("verify_presigned_get");
    let base = base();
    let creds = creds();
    let keys = CredentialKeys::new([creds.clone()]);
    let verifier = Verifier::s3("us-east-1");
    let headers = [("host", "examplebucket.s3.amazonaws.com")];
    for (name, p) in [
        (
            "sigv4",
            Presigner::new(base.clone(), "us-east-1", creds.clone()).unwrap(),
        ),
        (
            "sigv4a",
            Presigner::new_v4a(base.clone(), "*", creds.clone()).unwrap(),
        ),
    ] {
        let url = p.presign(KEY, &PresignOptions::get(), time()).unwrap();
        let target = url["https://examplebucket.s3.amazonaws.com".len()..].to_owned();
        let req = Incoming {
            method: "GET",
            target: &target,
            headers: &headers,
            body_sha256: None,
        };
        verifier.verify(&req, &keys, time()).unwrap();
        g.bench_function(name, |b| {
            b.iter(|| verifier.verify(black_box(&req), &keys, time()).unwrap())
        });
    }
    g.finish();
}

fn key_derivation_v4a(c: &mut Criterion) {
    let creds = creds();
    c.bench_function("key_derivation_v4a/slipstream", |b| {
        b.iter(|| slipstream_sign::v4a::EcdsaKey::derive(black_box(&creds)).unwrap())
    });
}

fn presign_many(c: &mut Criterion) {
    let mut g = c.benchmark_group("presign_many_10k");
    let p = presigner();
    let keys: Vec<String> = (0..10_000)
        .map(|i| format!("photos/2026/11/21/img-{i:07}.jpg"))
        .collect();
    g.throughput(Throughput::Elements(keys.len() as u64));
    let opts = PresignOptions::get();
    for threads in [1, 2] {
        let mut out = slipstream_sign::UrlBatch::default();
        g.bench_function(format!("batch_reused_{threads}_threads"), |b| {
            b.iter(|| {
                p.presign_batch_into(&keys, &opts, time(), Some(threads), &mut out)
                    .unwrap()
            })
        });
        g.bench_function(format!("batch_fresh_{threads}_threads"), |b| {
            b.iter(|| {
                p.presign_batch(&keys, &opts, time(), Some(threads))
                    .unwrap()
            })
        });
        g.bench_function(format!("vec_{threads}_threads"), |b| {
            b.iter(|| p.presign_many(&keys, &opts, time(), Some(threads)).unwrap())
        });
        // Into Arrow's large-string layout, sized first and written in place (presign_arrow's core).
        let column: Vec<Option<&str>> = keys.iter().map(|k| Some(k.as_str())).collect();
        g.bench_function(format!("column_{threads}_threads"), |b| {
            b.iter(|| {
                let t = p.template(&opts, time()).unwrap();
                slipstream_sign::column::sign_column(&t, column.as_slice(), Some(threads)).unwrap()
            })
        });
    }
    g.finish();
}

fn key_derivation(c: &mut Criterion) {
    let mut g = c.benchmark_group("key_derivation");
    g.bench_function("slipstream", |b| {
        b.iter(|| SigningKey::derive(black_box(SECRET), "20261121", "us-east-1", "s3"))
    });
    let t = UNIX_EPOCH + Duration::from_secs(UNIX as u64);
    g.bench_function("aws_sigv4", |b| {
        b.iter(|| {
            aws_sigv4::sign::v4::generate_signing_key(black_box(SECRET), t, "us-east-1", "s3")
        })
    });
    g.finish();
}

fn header_signing(c: &mut Criterion) {
    let mut g = c.benchmark_group("header_sign_get");
    let signer = Signer::new(creds(), "us-east-1", "s3", Settings::S3).unwrap();
    let headers = [
        ("host", "examplebucket.s3.amazonaws.com"),
        ("range", "bytes=0-1048575"),
    ];
    let req = Request {
        method: "GET",
        path: "/photos/2026/11/21/img-0001234.jpg",
        query: "",
        headers: &headers,
    };
    let payload = PayloadHash::Unsigned;
    g.bench_function("slipstream", |b| {
        b.iter(|| {
            signer
                .sign_headers(black_box(&req), &payload, time())
                .unwrap()
        })
    });

    use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
    let identity: aws_smithy_runtime_api::client::identity::Identity =
        aws_credential_types::Credentials::new(AKID, SECRET, None, None, "bench").into();
    g.bench_function("aws_sigv4", |b| {
        b.iter(|| {
            let params: aws_sigv4::http_request::SigningParams<'_> =
                aws_sigv4::sign::v4::SigningParams::builder()
                    .identity(&identity)
                    .region("us-east-1")
                    .name("s3")
                    .time(UNIX_EPOCH + Duration::from_secs(UNIX as u64))
                    .settings(SigningSettings::default())
                    .build()
                    .unwrap()
                    .into();
            let signable = SignableRequest::new(
                "GET",
                "https://examplebucket.s3.amazonaws.com/photos/2026/11/21/img-0001234.jpg",
                headers.iter().copied(),
                SignableBody::UnsignedPayload,
            )
            .unwrap();
            sign(signable, &params).unwrap()
        })
    });
    g.finish();
}

fn chunk_signing(c: &mut Criterion) {
    let mut g = c.benchmark_group("chunk_sign");
    let key = SigningKey::derive(SECRET, "20261121", "us-east-1", "s3");
    let seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
    for size in [0usize, 64 * 1024] {
        let data = vec![b'a'; size];
        g.throughput(Throughput::Bytes(size.max(1) as u64));
        g.bench_function(format!("{size}_bytes"), |b| {
            b.iter_batched(
                || ChunkSigner::new(&key, time(), "us-east-1", "s3", seed).unwrap(),
                |mut s| s.sign_chunk(black_box(&data)).unwrap(),
                BatchSize::SmallInput,
            )
        });
    }
    // SigV4A: one ECDSA signature per chunk, so 64 KiB chunks cost SHA-256 plus ~18 µs.
    let signer =
        slipstream_sign::Signer::new_v4a(creds(), "*", "s3", slipstream_sign::Settings::S3)
            .unwrap();
    let seed_v4a = "3045022100e6e30f1ac5ea39b6090c34197923398ec58c3dabe138c027e5ce72287aedc32302205d3fdd555bd3d5d555b4a0d2402d4609d1475a5c90f2715029129d1e2b88e528";
    for size in [0usize, 64 * 1024] {
        let data = vec![b'a'; size];
        g.throughput(Throughput::Bytes(size.max(1) as u64));
        g.bench_function(format!("v4a_{size}_bytes"), |b| {
            b.iter_batched(
                || signer.chunk_signer(time(), seed_v4a).unwrap(),
                |mut s| s.sign_chunk(black_box(&data)).unwrap(),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! { name = benches; config = config(); targets = presign_get, presign_many, presign_get_v4a, verification, key_derivation, key_derivation_v4a, header_signing, chunk_signing }
criterion_main!(benches);
