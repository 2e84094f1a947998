//! SSE-C through the engine against MinIO over TLS (versitygw does not implement SSE-C, and S3
//! and MinIO take it over HTTPS only): a multipart upload whose every part carries the key, a
//! download in parallel ranges, and a multipart server-side copy (`UploadPartCopy`) from one
//! key to another, checked afterwards with the new key. `make test` runs these under
//! `SLIPSTREAM_MINIO_TLS=1 scripts/with-minio.sh` with `--ignored`.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use bytes::Bytes;
use slipstream_client::{
    ClientError, ClientOptions, CopyOptions, CustomerKey, ObjectKey, S3Client,
};
use slipstream_transfer::{
    copy_object, download_to_memory, upload_bytes, CopySettings, CopySource, ObjectHeaders,
    TransferError, TransferOptions, MIN_PART_SIZE,
};

fn minio() -> Arc<S3Client> {
    let endpoint = std::env::var("SLIPSTREAM_TEST_TLS_ENDPOINT")
        .expect("no MinIO over TLS: run through `make test` (scripts/with-minio.sh)");
    let ca = std::env::var("SLIPSTREAM_TEST_CA").unwrap();
    common::client_with(&endpoint, ClientOptions::default(), Some(ca.into()))
}

fn key(fill: u8) -> CustomerKey {
    CustomerKey::from_bytes(&[fill; 32]).unwrap()
}

fn small_parts() -> TransferOptions {
    TransferOptions {
        part_size: MIN_PART_SIZE,
        multipart_threshold: MIN_PART_SIZE,
        concurrency: 3,
        ..TransferOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MinIO over TLS: make test runs it under scripts/with-minio.sh"]
async fn multipart_upload_ranged_download_and_multipart_copy_carry_the_keys() {
    let client = minio();
    let bucket = common::bucket(&client, "ssec").await;
    let (first, second) = (key(1), key(2));
    let body = Bytes::from(
        (0..3 * MIN_PART_SIZE as usize + 11)
            .map(|i| (i % 251) as u8)
            .collect::<Vec<u8>>(),
    );
    let opts = TransferOptions {
        headers: ObjectHeaders {
            customer_key: Some(first.clone()),
            ..ObjectHeaders::default()
        },
        ..small_parts()
    };
    upload_bytes(Arc::clone(&client), body.clone(), &bucket, "src", opts)
        .await
        .unwrap();

    let read = |k: &CustomerKey, name: &'static str| {
        let (client, bucket, k) = (Arc::clone(&client), bucket.clone(), k.clone());
        async move {
            let object = ObjectKey::from(name).with_customer_key(Some(&k));
            download_to_memory(client, &bucket, object, small_parts()).await
        }
    };
    assert_eq!(read(&first, "src").await.unwrap(), body);
    let wrong = read(&second, "src").await.unwrap_err();
    assert!(
        matches!(
            wrong,
            TransferError::Client(ClientError::S3 { status: 403, .. })
        ),
        "{wrong}"
    );
    let none = download_to_memory(Arc::clone(&client), &bucket, "src", small_parts())
        .await
        .unwrap_err();
    assert!(
        matches!(
            none,
            TransferError::Client(ClientError::S3 { status: 400, .. })
        ),
        "{none}"
    );

    let source = CopySource {
        bucket: bucket.clone(),
        key: "src".into(),
        version_id: None,
        listed: None,
        customer_key: Some(first.clone()),
    };
    let settings = CopySettings {
        multipart_threshold: MIN_PART_SIZE,
        part_size: MIN_PART_SIZE,
        options: CopyOptions {
            customer_key: Some(second.clone()),
            ..CopyOptions::default()
        },
        ..CopySettings::default()
    };
    let copied = copy_object(&client, &source, (&bucket, "dst"), &settings)
        .await
        .unwrap();
    assert_eq!((copied.size, copied.parts), (body.len() as u64, 4));
    assert_eq!(read(&second, "dst").await.unwrap(), body);
    assert!(read(&first, "dst").await.is_err());
}
