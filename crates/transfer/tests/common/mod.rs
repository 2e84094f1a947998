//! What the engine's integration tests share: a client for the local versitygw.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use slipstream_client::{ClientOptions, CredentialSource, Resolved, S3Client};
use slipstream_s3::{AddressingStyle, Endpoint};
use slipstream_sign::Credentials;

/// The plain-HTTP server's endpoint.
pub fn server() -> String {
    std::env::var("SLIPSTREAM_TEST_ENDPOINT")
        .expect("no local S3 server: run through `make test` (scripts/with-s3-server.sh)")
}

/// A path-style client for `endpoint` with the server's credentials.
pub fn client_with(
    endpoint: &str,
    options: ClientOptions,
    ca_bundle: Option<PathBuf>,
) -> Arc<S3Client> {
    let config = Resolved {
        credentials: CredentialSource::Static(
            Credentials::new(
                std::env::var("AWS_ACCESS_KEY_ID").unwrap(),
                std::env::var("AWS_SECRET_ACCESS_KEY").unwrap(),
                None,
            )
            .unwrap(),
        ),
        region: std::env::var("SLIPSTREAM_TEST_REGION").unwrap(),
        endpoint: Some(Endpoint::parse(endpoint).unwrap()),
        addressing: AddressingStyle::Path,
        variants: Default::default(),
        credential_source: "test".into(),
        ca_bundle,
        region_set: None,
        proxies: None,
        max_attempts: None,
        max_bandwidth: None,
        transfer: Default::default(),
    };
    Arc::new(S3Client::new(&config, options).unwrap())
}

/// A client for `endpoint` (a fault proxy) that retries at once and calls a body quiet for
/// half a second broken, so that the fault tests' retries take milliseconds.
pub fn quick_client(endpoint: &str) -> Arc<S3Client> {
    let options = ClientOptions {
        backoff_base: std::time::Duration::from_millis(10),
        read_timeout: std::time::Duration::from_millis(500),
        ..ClientOptions::default()
    };
    client_with(endpoint, options, None)
}

/// A client for the plain-HTTP server, with the default options.
pub fn client() -> Arc<S3Client> {
    client_with(&server(), ClientOptions::default(), None)
}

/// A fresh bucket, `{kind}-{pid}-{n}`, per test, so tests run in parallel without seeing each
/// other's objects.
pub async fn bucket(client: &S3Client, kind: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "{kind}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    client.create_bucket(&name).await.unwrap();
    name
}

/// The keys of every page a listing sends, in the order they come; a listing error fails.
pub async fn keys_of(
    mut pages: tokio::sync::mpsc::Receiver<
        Result<Vec<slipstream_client::xml::Object>, slipstream_transfer::TransferError>,
    >,
) -> Vec<String> {
    let mut keys = Vec::new();
    while let Some(page) = pages.recv().await {
        keys.extend(page.unwrap().into_iter().map(|o| o.key));
    }
    keys
}
