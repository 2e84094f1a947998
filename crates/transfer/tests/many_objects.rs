//! Server-side copies and batch deletes against the local versitygw (`make test` starts it):
//! the multipart copy path with metadata carried, a source replaced mid-copy, a copy of
//! 5 GiB + 1 byte (past one `CopyObject`), and deletes of keys XML cannot carry.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use slipstream_client::xml::Object;
use slipstream_client::{ChecksumAlgorithm, CopyOptions};
use slipstream_s3::pattern::Filters;
use slipstream_transfer::{
    copy_object, delete_listed, list_ranges, list_selected, upload_from_reader, CopySettings,
    CopySource, DeleteReport, Selection, TransferError, TransferOptions, MAX_COPY_OBJECT,
    MIN_PART_SIZE,
};

fn source(bucket: &str, key: &str) -> CopySource {
    CopySource {
        bucket: bucket.into(),
        key: key.into(),
        version_id: None,
        listed: None,
        customer_key: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multipart_copy_carries_metadata_and_is_checked() {
    let client = common::client();
    let bucket = common::bucket(&client, "many").await;
    let body: Vec<u8> = (0..(12 << 20) + 3).map(|i: u32| (i % 251) as u8).collect();
    client
        .put_object(
            &bucket,
            "raw",
            Bytes::from(body.clone()),
            ChecksumAlgorithm::Crc64Nvme,
        )
        .await
        .unwrap();
    // Metadata set the way S3 allows after the fact: a copy that replaces it.
    let with_metadata = CopyOptions {
        replace_metadata: Some(vec![
            ("content-type".into(), "text/csv".into()),
            ("cache-control".into(), "max-age=60".into()),
            ("x-amz-meta-owner".into(), "ünïcode-free owner".into()),
        ]),
        ..CopyOptions::default()
    };
    client
        .copy_object((&bucket, "raw".into()), &bucket, "src ü+&", &with_metadata)
        .await
        .unwrap();
    let settings = CopySettings {
        multipart_threshold: MIN_PART_SIZE,
        part_size: MIN_PART_SIZE,
        concurrency: 2,
        ..CopySettings::default()
    };
    let copied = copy_object(
        &client,
        &source(&bucket, "src ü+&"),
        (&bucket, "dst/ü copy"),
        &settings,
    )
    .await
    .unwrap();
    assert_eq!((copied.size, copied.parts), (body.len() as u64, 3));
    let made = client.head_object(&bucket, "dst/ü copy").await.unwrap();
    let mut headers = made.copied_headers.clone();
    headers.sort();
    assert_eq!(
        headers,
        [
            ("cache-control".to_owned(), "max-age=60".to_owned()),
            ("content-type".to_owned(), "text/csv".to_owned()),
            (
                "x-amz-meta-owner".to_owned(),
                "ünïcode-free owner".to_owned()
            ),
        ]
    );
    let back = client.get_bytes(&bucket, "dst/ü copy", None).await.unwrap();
    assert!(back == body, "the copy's bytes differ");
    // Below the threshold: one CopyObject, which keeps the checksum by itself.
    let whole = copy_object(
        &client,
        &source(&bucket, "raw"),
        (&bucket, "whole"),
        &CopySettings::default(),
    )
    .await
    .unwrap();
    assert_eq!(whole.parts, 0);
    let (a, b) = (
        client.head_object(&bucket, "raw").await.unwrap(),
        client.head_object(&bucket, "whole").await.unwrap(),
    );
    assert!(a.checksum.is_some());
    assert_eq!(a.checksum, b.checksum);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_replaced_since_it_was_listed_is_not_copied() {
    let client = common::client();
    let bucket = common::bucket(&client, "many").await;
    let put = |body: &'static [u8]| {
        let (client, bucket) = (Arc::clone(&client), bucket.clone());
        async move {
            client
                .put_object(&bucket, "k", Bytes::from_static(body), Default::default())
                .await
                .unwrap()
        }
    };
    let old_etag = put(b"first version").await;
    put(b"second version, longer").await;
    let stale = CopySource {
        listed: Some((13, old_etag)),
        ..source(&bucket, "k")
    };
    let e = copy_object(&client, &stale, (&bucket, "copy"), &CopySettings::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("PreconditionFailed"), "{e}");
    assert!(client.head_object(&bucket, "copy").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_gib_and_one_byte_copy_in_parts() {
    let client = common::client();
    let bucket = common::bucket(&client, "many").await;
    let size = MAX_COPY_OBJECT + 1;
    let opts = TransferOptions {
        part_size: 64 << 20,
        concurrency: 4,
        multipart_threshold: 64 << 20,
        checksum: ChecksumAlgorithm::Crc64Nvme,
        ..TransferOptions::default()
    };
    let mut input = tokio::io::AsyncReadExt::take(tokio::io::repeat(0x5a), size);
    upload_from_reader(Arc::clone(&client), &mut input, &bucket, "big", opts)
        .await
        .unwrap();
    let copied = copy_object(
        &client,
        &source(&bucket, "big"),
        (&bucket, "big copy"),
        &CopySettings::default(),
    )
    .await
    .unwrap();
    // 256 MiB parts: 20 whole ones and the last byte.
    assert_eq!((copied.size, copied.parts), (size, 21));
    assert_eq!(
        client.head_object(&bucket, "big copy").await.unwrap().size,
        size
    );
    let tail = client
        .get_bytes(&bucket, "big copy", Some((size - 3, size)))
        .await
        .unwrap();
    assert_eq!(&tail[..], &[0x5a; 3]);
    for key in ["big", "big copy"] {
        client.delete_object(&bucket, key).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_xml_cannot_carry_are_deleted_one_by_one() {
    let client = common::client();
    let bucket = common::bucket(&client, "many").await;
    let keys = ["plain", "ctl\u{1}key", "line\r\nbreak", "ü & <x>"];
    for k in keys {
        client
            .put_object(&bucket, k, Bytes::from_static(b"x"), Default::default())
            .await
            .unwrap();
    }
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let objects = keys
        .iter()
        .map(|k| Object {
            key: (*k).to_owned(),
            ..Object::default()
        })
        .collect();
    tx.send(Ok::<_, TransferError>(objects)).await.unwrap();
    drop(tx);
    let reported = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&reported);
    let report: DeleteReport = Arc::new(move |result| {
        assert!(result.is_ok(), "{result:?}");
        r.fetch_add(1, Ordering::Relaxed);
    });
    let done = delete_listed(Arc::clone(&client), &bucket, rx, 2, report)
        .await
        .unwrap();
    assert_eq!((done.deleted, done.failed.len()), (4, 0));
    assert_eq!(reported.load(Ordering::Relaxed), 4);
    for k in keys {
        assert!(
            client.head_object(&bucket, k).await.is_err(),
            "{k:?} is still there"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_cut_into_ranges_finds_every_key_once_in_order() {
    let client = common::client();
    let bucket = common::bucket(&client, "ranges").await;
    // 600 keys expected; every 7th is missing, and keys nobody expected sit before the first
    // cut, on and just after cuts, between them, after the last and outside the prefix.
    let expected: Vec<String> = (0..600).map(|i| format!("p/k{i:04}")).collect();
    let mut present: Vec<String> = (0..600)
        .filter(|i| i % 7 != 3)
        .map(|i| format!("p/k{i:04}"))
        .collect();
    for extra in [
        "p/0",
        "p/k0074x",
        "p/k0075",
        "p/k0149~",
        "p/k0300a",
        "p/k0599z",
        "p/zzz",
        "p/dir/",
        "q/outside",
    ] {
        present.push(extra.to_owned());
    }
    let mut puts = tokio::task::JoinSet::new();
    for key in present.clone() {
        let (client, bucket) = (Arc::clone(&client), bucket.clone());
        puts.spawn(async move {
            // A "directory" marker must be empty on a posix backend.
            let body = if key.ends_with('/') {
                Bytes::new()
            } else {
                Bytes::from_static(b"k")
            };
            client
                .put_object(&bucket, &key, body, ChecksumAlgorithm::Crc32c)
                .await
        });
    }
    while let Some(done) = puts.join_next().await {
        done.unwrap().unwrap();
    }
    let ranged = common::keys_of(list_ranges(
        Arc::clone(&client),
        &bucket,
        "p/",
        &expected,
        Filters::new(),
    ))
    .await;
    let plain = common::keys_of(list_selected(
        Arc::clone(&client),
        &bucket,
        Selection::Prefix("p/".into()),
        Filters::new(),
        4,
    ))
    .await;
    let mut want: Vec<String> = present
        .into_iter()
        .filter(|k| k.starts_with("p/") && !k.ends_with('/'))
        .collect();
    want.sort();
    want.dedup();
    assert_eq!(ranged, want, "every key once, in key order");
    assert_eq!(plain, want);
}
