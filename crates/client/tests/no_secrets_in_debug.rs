//! Every public type that can hold a secret, formatted with `{:?}` (and `{:#?}`), shows none of
//! it: not the secret access key, the session token, the container authorization token, a
//! derived signing key, nor a signature. Logs and panics print `Debug`, so this is where a
//! secret would leak.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use slipstream_client::{
    ClientOptions, CredentialSource, Env, Expiring, Overrides, ProvideCredentials, Resolved,
    S3Client,
};
use slipstream_s3::AddressingStyle;
use slipstream_sign::encode::hex;
use slipstream_sign::verify::{CredentialKeys, Incoming, Verifier};
use slipstream_sign::{
    ChunkSigner, Credentials, KeyCache, PayloadHash, PresignOptions, Presigner, Request, Settings,
    Signer, SigningKey, SigningTime, UrlBase,
};

const SECRET: &str = "SeCrEtKeyWJalrXUtnFEMIK7MDENGbPxRfiCY";
/// A proxy's password in `https_proxy` (shown without it).
const PROXY_PASSWORD: &str = "PrOxYpAsSwOrD";
const TOKEN: &str = "SeSsIoNtOkEnFwoGZXIvYXdzEJr";
const CONTAINER_TOKEN: &str = "CoNtAiNeRtOkEnBearer1234";

/// Fails if `value`'s `Debug`, plain or pretty, contains any of `secrets`.
#[track_caller]
fn assert_redacted(what: &str, value: &dyn std::fmt::Debug, secrets: &[&str]) {
    for text in [format!("{value:?}"), format!("{value:#?}")] {
        for secret in secrets {
            assert!(
                !secret.is_empty() && !text.contains(secret),
                "{what}'s Debug shows a secret ({secret}): {text}"
            );
        }
    }
}

fn credentials() -> Credentials {
    Credentials::new("AKIDEXAMPLE", SECRET, Some(TOKEN.to_owned())).unwrap()
}

fn time() -> SigningTime {
    SigningTime::parse_rfc3339("2026-11-23T12:00:00Z").unwrap()
}

#[test]
fn signing_types_hide_keys_tokens_and_signatures() {
    let creds = credentials();
    assert_redacted("Credentials", &creds, &[SECRET, TOKEN]);

    let key = SigningKey::derive(SECRET, "20261123", "us-east-1", "s3");
    let key_hex = hex(key.as_bytes());
    assert_redacted("SigningKey", &key, &[SECRET, &key_hex]);
    let cache = KeyCache::default();
    let _ = cache.key(&creds, time(), "us-east-1", "s3");
    assert_redacted("KeyCache", &cache, &[SECRET, &key_hex]);

    for signer in [
        Signer::new(creds.clone(), "us-east-1", "s3", Settings::S3).unwrap(),
        Signer::new_v4a(creds.clone(), "*", "s3", Settings::S3).unwrap(),
    ] {
        assert_redacted("Signer", &signer, &[SECRET, TOKEN]);
        let headers = [("host", "b.s3.amazonaws.com")];
        let req = Request {
            method: "GET",
            path: "/k",
            query: "",
            headers: &headers,
        };
        let sig = signer
            .sign_headers(&req, &PayloadHash::Unsigned, time())
            .unwrap();
        assert_redacted("HeaderSignature", &sig, &[SECRET, TOKEN, &sig.signature]);
        let chunk: ChunkSigner = signer.chunk_signer(time(), &sig.signature).unwrap();
        assert_redacted("ChunkSigner", &chunk, &[SECRET, TOKEN, &sig.signature]);
        let q = signer
            .presign(&req, 600, &PayloadHash::Unsigned, time())
            .unwrap();
        assert_redacted("QuerySignature", &q, &[SECRET, TOKEN, &q.signature]);
    }

    let base = UrlBase {
        origin: "https://b.s3.amazonaws.com".into(),
        host: "b.s3.amazonaws.com".into(),
        path_prefix: "/".into(),
    };
    let presigner = Presigner::new(base.clone(), "us-east-1", creds.clone()).unwrap();
    assert_redacted("Presigner", &presigner, &[SECRET, TOKEN]);
    let v4a = Presigner::new_v4a(base, "*", creds.clone()).unwrap();
    assert_redacted("Presigner (SigV4A)", &v4a, &[SECRET, TOKEN]);
    let template = presigner.template(&PresignOptions::get(), time()).unwrap();
    let url = template.sign("k").unwrap();
    let signature = url.rsplit_once("X-Amz-Signature=").unwrap().1;
    assert_redacted("Template", &template, &[SECRET, TOKEN, signature]);
    let batch = presigner
        .presign_batch(&["a", "b"], &PresignOptions::get(), time(), Some(1))
        .unwrap();
    assert_redacted("UrlBatch", &batch, &[SECRET, TOKEN, "X-Amz-Signature="]);
}

#[test]
fn the_verifier_hides_what_it_was_given() {
    let creds = credentials();
    let presigner = Presigner::new(
        UrlBase {
            origin: "http://127.0.0.1:9000".into(),
            host: "127.0.0.1:9000".into(),
            path_prefix: "/b/".into(),
        },
        "us-east-1",
        creds.clone(),
    )
    .unwrap();
    let url = presigner
        .template(&PresignOptions::get(), time())
        .unwrap()
        .sign("k")
        .unwrap();
    let target = &url["http://127.0.0.1:9000".len()..];
    let signature = url.rsplit_once("X-Amz-Signature=").unwrap().1;
    let headers = [("host", "127.0.0.1:9000")];
    let req = Incoming {
        method: "GET",
        target,
        headers: &headers,
        body_sha256: None,
    };
    assert_redacted("Incoming", &req, &[signature, TOKEN]);
    let keys = CredentialKeys::new([creds]);
    assert_redacted("CredentialKeys", &keys, &[SECRET, TOKEN]);
    let verified = Verifier::s3("us-east-1")
        .verify(&req, &keys, time())
        .unwrap();
    assert_redacted("Verified", &verified, &[signature, SECRET, TOKEN]);

    let auth = format!("AWS4-HMAC-SHA256 Credential=AKID/20261123/us-east-1/s3/aws4_request, SignedHeaders=host, Signature={signature}");
    let headers = [
        ("authorization", auth.as_str()),
        ("x-amz-security-token", TOKEN),
    ];
    let req = Incoming {
        method: "GET",
        target: "/b/k",
        headers: &headers,
        body_sha256: None,
    };
    assert_redacted("Incoming (header auth)", &req, &[signature, TOKEN]);
}

/// A provider like Python's callback: its own `Debug` is the caller's business, but the source
/// around it must add nothing.
#[derive(Debug)]
struct Fixed;

impl ProvideCredentials for Fixed {
    fn credentials(&self) -> Result<Expiring, slipstream_client::ClientError> {
        Ok(Expiring {
            credentials: credentials(),
            expires: None,
        })
    }
}

#[test]
fn client_types_hide_credentials_and_tokens() {
    let sources = [
        CredentialSource::Static(credentials()),
        CredentialSource::Container {
            url: "http://169.254.170.2/v2/credentials/x".into(),
            token: Some(CONTAINER_TOKEN.into()),
            token_file: Some(PathBuf::from("/var/run/token")),
        },
        CredentialSource::Provider(Arc::new(Fixed)),
    ];
    for source in &sources {
        assert_redacted(
            "CredentialSource",
            source,
            &[SECRET, TOKEN, CONTAINER_TOKEN],
        );
    }
    let expiring = Expiring {
        credentials: credentials(),
        expires: Some(SystemTime::now()),
    };
    assert_redacted("Expiring", &expiring, &[SECRET, TOKEN]);

    let env = Env::new(
        &[
            ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("AWS_SESSION_TOKEN", TOKEN),
            ("AWS_SECURITY_TOKEN", TOKEN),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", CONTAINER_TOKEN),
            ("AWS_REGION", "eu-west-1"),
            (
                "HTTPS_PROXY",
                &format!("http://ann:{PROXY_PASSWORD}@proxy.corp:3128"),
            ),
            (
                "http_proxy",
                &format!("ann:{PROXY_PASSWORD}@proxy.corp:3128"),
            ),
        ],
        None,
    );
    assert_redacted(
        "Env",
        &env,
        &[SECRET, TOKEN, CONTAINER_TOKEN, PROXY_PASSWORD],
    );
    // Redacted, not dropped: the names and harmless values stay readable.
    let shown = format!("{env:?}");
    assert!(
        shown.contains("AWS_SECRET_ACCESS_KEY") && shown.contains("eu-west-1"),
        "{shown}"
    );

    let resolved = slipstream_client::resolve(&env, &Overrides::default()).unwrap();
    assert_redacted(
        "Resolved (environment)",
        &resolved,
        &[SECRET, TOKEN, PROXY_PASSWORD],
    );
    assert!(format!("{resolved:?}").contains("http://proxy.corp:3128"));
    let container = Env::new(
        &[
            (
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                "http://127.0.0.1:1/creds",
            ),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", CONTAINER_TOKEN),
        ],
        None,
    );
    let resolved = slipstream_client::resolve(&container, &Overrides::default()).unwrap();
    assert!(matches!(
        resolved.credentials,
        CredentialSource::Container { .. }
    ));
    assert_redacted("Resolved (container)", &resolved, &[CONTAINER_TOKEN]);

    for source in sources {
        let config = Resolved {
            credentials: source,
            region: "us-east-1".into(),
            endpoint: None,
            addressing: AddressingStyle::Path,
            variants: Default::default(),
            credential_source: "test".into(),
            ca_bundle: None,
            region_set: None,
            proxies: None,
            max_attempts: None,
            max_bandwidth: None,
            transfer: Default::default(),
        };
        assert_redacted("Resolved", &config, &[SECRET, TOKEN, CONTAINER_TOKEN]);
        let client = S3Client::new(&config, ClientOptions::default()).unwrap();
        assert_redacted("S3Client", &client, &[SECRET, TOKEN, CONTAINER_TOKEN]);
    }
}
