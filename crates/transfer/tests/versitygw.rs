//! Round trips through the engine against the local versitygw (`make test` starts it).
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use slipstream_client::{Checksum, ChecksumAlgorithm, ClientError, ClientOptions};
use slipstream_transfer::{
    download_prefix, download_to_file, download_to_memory, download_to_writer, upload_bytes,
    upload_directory, upload_file, upload_from_reader, ManyOptions, MemoryDownload, Selection,
    TransferOptions, MIN_PART_SIZE,
};

fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Nothing but `expected` names in `dir`: no temporary file left behind.
fn assert_only(dir: &Path, expected: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
    want.sort();
    assert_eq!(names, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_around_the_part_size() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let part = MIN_PART_SIZE as usize;
    let opts = TransferOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 4,
        multipart_threshold: MIN_PART_SIZE,
        ..TransferOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    for (i, len) in [0, 1, part - 1, part, part + 1, 100 << 20]
        .into_iter()
        .enumerate()
    {
        let body = data(len, i as u64 + 7);
        let src = dir.path().join("src");
        std::fs::write(&src, &body).unwrap();
        let key = format!("sizes/ü {len} a+b&c=d%e");
        // A file's cut depends on how long CreateMultipartUpload took (cut.rs): with more than
        // one connection, parts twice as long when it took 20 ms or more, which a loaded
        // machine's versitygw does. One connection keeps the part size, so the sizes around
        // it get exactly the parts they are chosen for (a last part of one byte at part + 1);
        // the large object goes up on four and may take either cut.
        let large = len > part + 1;
        let opts = TransferOptions {
            concurrency: if large { opts.concurrency } else { 1 },
            ..opts.clone()
        };
        let up = upload_file(Arc::clone(&client), &src, &bucket, &key, opts.clone())
            .await
            .unwrap();
        assert_eq!(up.size, len as u64);
        let cuts = if len < part {
            vec![0]
        } else if large {
            vec![len.div_ceil(part), len.div_ceil(2 * part)]
        } else {
            vec![len.div_ceil(part)]
        };
        assert!(cuts.contains(&up.parts), "{len}: {} parts", up.parts);
        let info = client.head_object(&bucket, &key).await.unwrap();
        assert_eq!(info.size, len as u64);
        let dest = dir.path().join("dest");
        let down = download_to_file(Arc::clone(&client), &bucket, &key, &dest, opts.clone())
            .await
            .unwrap();
        assert_eq!(down.size, len as u64);
        // Single PUTs carry a whole-object CRC32C, which the download checks; multipart uploads
        // with CRC32C have a checksum of the part checksums, which it cannot.
        let checked = (len < part).then_some(ChecksumAlgorithm::Crc32c);
        assert_eq!(down.checksum_verified, checked, "{len}: {info:?}");
        assert!(std::fs::read(&dest).unwrap() == body, "{len} bytes differ");
        assert_only(dir.path(), &["src", "dest"]);
        if len > 0 && len <= part + 1 {
            let whole = client.get_bytes(&bucket, &key, None).await.unwrap();
            assert!(whole[..] == body[..]);
            let middle = client
                .get_bytes(&bucket, &key, Some((len as u64 / 2, len as u64)))
                .await
                .unwrap();
            assert!(middle[..] == body[len / 2..]);
        }
    }
}

/// Memory goes up as a file does: one PutObject below the threshold, slices of it as parts
/// from there; the ETag returned is the one S3 keeps (a multipart one ends in `-N`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_goes_up_whole_or_in_slices_and_its_etag_is_returned() {
    let client = common::client();
    let bucket = common::bucket(&client, "from-memory").await;
    let part = MIN_PART_SIZE as usize;
    let opts = TransferOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 1,
        multipart_threshold: MIN_PART_SIZE,
        ..TransferOptions::default()
    };
    for (len, parts) in [(0, 0), (part - 1, 0), (part, 1), (3 * part + 1, 4)] {
        let body = bytes::Bytes::from(data(len, len as u64));
        let etag = upload_bytes(
            Arc::clone(&client),
            body.clone(),
            &bucket,
            "m",
            opts.clone(),
        )
        .await
        .unwrap();
        let info = client.head_object(&bucket, "m").await.unwrap();
        assert_eq!((info.size, &info.etag), (len as u64, &etag));
        let suffix = format!("-{parts}\"");
        assert_eq!(etag.ends_with(&suffix), parts > 0, "{len}: {etag}");
        let back = client.get_bytes(&bucket, "m", None).await.unwrap();
        assert!(back == body, "{len} bytes differ");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_checksum_algorithm_goes_up_with_the_data_and_is_checked_coming_down() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let part = MIN_PART_SIZE as usize;
    let dir = tempfile::tempdir().unwrap();
    for algorithm in ChecksumAlgorithm::ALL {
        let opts = TransferOptions {
            part_size: MIN_PART_SIZE,
            concurrency: 3,
            multipart_threshold: MIN_PART_SIZE,
            checksum: algorithm,
            ..TransferOptions::default()
        };
        for (len, from_stream) in [
            (part - 1, false),
            (2 * part + 1, false),
            (2 * part + 1, true),
        ] {
            let body = data(len, len as u64 + algorithm as u64);
            let key = format!("{algorithm}/{len}/{from_stream}");
            let src = dir.path().join("src");
            std::fs::write(&src, &body).unwrap();
            let up = if from_stream {
                let mut input = &body[..];
                upload_from_reader(Arc::clone(&client), &mut input, &bucket, &key, opts.clone())
                    .await
            } else {
                upload_file(Arc::clone(&client), &src, &bucket, &key, opts.clone()).await
            };
            // A file's cut depends on how long CreateMultipartUpload took (cut.rs): 5 MiB
            // parts, or 10 MiB ones when it took 20 ms or more (a busy machine). A stream's
            // parts are always the part size.
            let parts = up.unwrap().parts;
            match (len < part, from_stream) {
                (true, _) => assert_eq!(parts, 0, "{key}"),
                (false, true) => assert_eq!(parts, 3, "{key}"),
                (false, false) => assert!(parts == 3 || parts == 2, "{key}: {parts} parts"),
            }
            // A single PUT keeps the checksum it was sent with; a multipart upload keeps one
            // of the whole object only with CRC64NVME (the 32-bit CRCs are composite).
            let whole = len < part || algorithm.full_object();
            let info = client.head_object(&bucket, &key).await.unwrap();
            let expected = whole.then(|| Checksum {
                algorithm,
                value: algorithm.base64_of(&body),
            });
            assert_eq!(info.checksum, expected, "{key}");
            let checked = whole.then_some(algorithm);
            let dest = dir.path().join("dest");
            let down = download_to_file(Arc::clone(&client), &bucket, &key, &dest, opts.clone())
                .await
                .unwrap();
            assert_eq!(down.checksum_verified, checked, "{key}");
            assert!(std::fs::read(&dest).unwrap() == body, "{key}: file differs");
            let mut out = Vec::new();
            let down =
                download_to_writer(Arc::clone(&client), &bucket, &key, &mut out, opts.clone())
                    .await
                    .unwrap();
            assert_eq!(down.checksum_verified, checked, "{key}");
            assert!(out == body, "{key}: stream differs");
            let mem = download_to_memory(Arc::clone(&client), &bucket, &key, opts.clone())
                .await
                .unwrap();
            assert!(mem[..] == body[..], "{key}: memory differs");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_download_fills_a_buffer_of_its_size_and_refuses_others() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let opts = TransferOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 3,
        multipart_threshold: MIN_PART_SIZE,
        checksum: ChecksumAlgorithm::Crc64Nvme,
        ..TransferOptions::default()
    };
    let body = data(3 * MIN_PART_SIZE as usize + 5, 7);
    let mut input = &body[..];
    upload_from_reader(Arc::clone(&client), &mut input, &bucket, "m", opts.clone())
        .await
        .unwrap();
    let start = || MemoryDownload::start(Arc::clone(&client), &bucket, "m", opts.clone());
    let download = start().await.unwrap();
    assert_eq!(download.size(), body.len() as u64);
    let mut short = vec![0; body.len() - 1];
    let err = download.read_into(&mut short).await.unwrap_err();
    assert!(err.to_string().contains("a buffer of"), "{err}");
    let mut buf = vec![0; body.len()];
    let done = start().await.unwrap().read_into(&mut buf).await.unwrap();
    assert!(buf == body, "the buffer differs");
    assert_eq!(done.size, body.len() as u64);
    assert_eq!(done.checksum_verified, Some(ChecksumAlgorithm::Crc64Nvme));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_object_leaves_no_file() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("never");
    let err = download_to_file(
        Arc::clone(&client),
        &bucket,
        "nope",
        &dest,
        TransferOptions::default(),
    )
    .await
    .unwrap_err();
    // The first GET goes out with the HEAD, so the error is S3's own code, not HEAD's bare 404.
    assert_eq!(err.code(), Some("NoSuchKey"), "{err}");
    assert_only(dir.path(), &[]);
    let err = client.get_bytes(&bucket, "nope", None).await.unwrap_err();
    assert_eq!(err.code(), Some("NoSuchKey"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_pages_and_delete() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let keys = ["a/1", "a/2 ü", "a/b/3", "b/4"];
    for k in keys {
        client
            .put_object(
                &bucket,
                k,
                bytes::Bytes::from(k.as_bytes().to_vec()),
                Default::default(),
            )
            .await
            .unwrap();
    }
    let all = client.list_all(&bucket, "a/").await.unwrap();
    let names: Vec<&str> = all.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(names, ["a/1", "a/2 ü", "a/b/3"]);
    assert_eq!(all[1].size, "a/2 ü".len() as u64);
    let page = client
        .list_objects_v2(&bucket, "a/", Some("/"), None)
        .await
        .unwrap();
    assert_eq!(page.prefixes, ["a/b/"]);
    assert_eq!(page.objects.len(), 2);
    client.delete_object(&bucket, "a/1").await.unwrap();
    let left: Vec<String> = client
        .list_all(&bucket, "")
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.key)
        .collect();
    assert_eq!(left, ["a/2 ü", "a/b/3", "b/4"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_smaller_page_size_asks_for_shorter_pages_and_lists_the_same() {
    let paged = common::client_with(
        &common::server(),
        ClientOptions {
            list_page_size: Some(2),
            ..ClientOptions::default()
        },
        None,
    );
    let bucket = common::bucket(&paged, "transfer").await;
    let keys: Vec<String> = (0..5).map(|i| format!("p/{i}")).collect();
    for k in &keys {
        paged
            .put_object(&bucket, k, bytes::Bytes::new(), Default::default())
            .await
            .unwrap();
    }
    let page = paged
        .list_objects_v2(&bucket, "p/", None, None)
        .await
        .unwrap();
    assert_eq!(page.objects.len(), 2);
    assert!(page.continuation.is_some());
    // Every page followed, and a listing's own smaller ask is kept.
    let all = paged.list_all(&bucket, "p/").await.unwrap();
    let names: Vec<String> = all.into_iter().map(|o| o.key).collect();
    assert_eq!(names, keys);
    let one = slipstream_client::ListFrom {
        max_keys: Some(1),
        ..Default::default()
    };
    let page = paged
        .list_objects_v2_from(&bucket, "p/", &one)
        .await
        .unwrap();
    assert_eq!(page.objects.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_upload_leaves_nothing() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let id = client
        .create_multipart_upload(&bucket, "mp", Some(Default::default()), Vec::new())
        .await
        .unwrap();
    let upload = slipstream_client::MultipartUpload {
        bucket: bucket.clone(),
        key: "mp".into(),
        upload_id: id.clone(),
        customer_key: None,
    };
    let part = bytes::Bytes::from(data(1000, 3));
    client
        .upload_part(&upload, 1, part, Default::default())
        .await
        .unwrap();
    client
        .abort_multipart_upload(&bucket, "mp", &id)
        .await
        .unwrap();
    let err = client.head_object(&bucket, "mp").await.unwrap_err();
    assert!(matches!(err, ClientError::S3 { status: 404, .. }), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_round_trip_in_order() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let part = MIN_PART_SIZE as usize;
    let opts = TransferOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 3,
        multipart_threshold: MIN_PART_SIZE,
        ..TransferOptions::default()
    };
    for (i, len) in [0, 1, part - 1, part, part + 1, 4 * part + 3]
        .into_iter()
        .enumerate()
    {
        let body = data(len, i as u64 + 100);
        let key = format!("stream/{len}");
        let mut input: &[u8] = &body;
        let up = upload_from_reader(Arc::clone(&client), &mut input, &bucket, &key, opts.clone())
            .await
            .unwrap();
        assert_eq!(up.size, len as u64);
        assert_eq!(
            up.parts,
            if len < part { 0 } else { len.div_ceil(part) },
            "{len}"
        );
        // A window of 2 parts over a 5-part object: parts arrive out of order, leave in order.
        let narrow = TransferOptions {
            concurrency: 2,
            ..opts.clone()
        };
        let mut out = Vec::new();
        let down = download_to_writer(Arc::clone(&client), &bucket, &key, &mut out, narrow)
            .await
            .unwrap();
        assert_eq!(down.size, len as u64);
        assert!(out == body, "{len} bytes differ");
        let mem = download_to_memory(Arc::clone(&client), &bucket, &key, opts.clone())
            .await
            .unwrap();
        assert!(mem[..] == body[..]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_with_awkward_names_round_trips() {
    let client = common::client();
    let bucket = common::bucket(&client, "transfer").await;
    let src = tempfile::tempdir().unwrap();
    let files = [
        "a.txt",
        "dir one/ü ñ.bin",
        "dir one/deeper/x+y=z&w.dat",
        "tilde~/50%.txt",
        "big/part-sized.bin",
    ];
    for (i, f) in files.iter().enumerate() {
        let path = src.path().join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let len = if f.starts_with("big/") {
            MIN_PART_SIZE as usize + 9
        } else {
            100 * i + 1
        };
        std::fs::write(&path, data(len, i as u64)).unwrap();
    }
    let opts = TransferOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 2,
        multipart_threshold: MIN_PART_SIZE,
        ..TransferOptions::default()
    };
    let up = upload_directory(
        Arc::clone(&client),
        src.path(),
        &bucket,
        "tree/",
        &ManyOptions::new(Some(3)),
        opts.clone(),
    )
    .await
    .unwrap();
    assert_eq!(up.objects, files.len());
    let keys: Vec<String> = client
        .list_all(&bucket, "tree/")
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.key)
        .collect();
    let mut want: Vec<String> = files.iter().map(|f| format!("tree/{f}")).collect();
    want.sort();
    assert_eq!(keys, want);
    let dest = tempfile::tempdir().unwrap();
    let down = download_prefix(
        Arc::clone(&client),
        &bucket,
        Selection::Prefix("tree/".into()),
        dest.path(),
        &ManyOptions::new(Some(3)),
        opts.clone(),
    )
    .await
    .unwrap();
    assert_eq!((down.objects, down.bytes), (up.objects, up.bytes));
    for f in files {
        assert!(
            std::fs::read(src.path().join(f)).unwrap()
                == std::fs::read(dest.path().join(f)).unwrap(),
            "{f}"
        );
    }
    // Keys with `..` segments are refused by `local_path` (unit-tested): versitygw normalizes
    // them away before storing, so they cannot be created here.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_ca_bundle_and_refused_without_it() {
    let endpoint = std::env::var("SLIPSTREAM_TEST_TLS_ENDPOINT").expect("run through `make test`");
    let ca = std::env::var("SLIPSTREAM_TEST_CA").unwrap();
    let tls_client = |ca_bundle: Option<std::path::PathBuf>| {
        common::client_with(&endpoint, ClientOptions::default(), ca_bundle)
    };
    let trusted = tls_client(Some(ca.into()));
    trusted.create_bucket("tls").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let body = data(MIN_PART_SIZE as usize + 77, 5);
    std::fs::write(dir.path().join("src"), &body).unwrap();
    let opts = TransferOptions {
        part_size: MIN_PART_SIZE,
        multipart_threshold: MIN_PART_SIZE,
        ..TransferOptions::default()
    };
    upload_file(
        Arc::clone(&trusted),
        &dir.path().join("src"),
        "tls",
        "k",
        opts.clone(),
    )
    .await
    .unwrap();
    download_to_file(
        Arc::clone(&trusted),
        "tls",
        "k",
        &dir.path().join("dst"),
        opts,
    )
    .await
    .unwrap();
    assert!(std::fs::read(dir.path().join("dst")).unwrap() == body);
    // The usual roots do not include the test CA: the handshake fails, and says why.
    let err = tls_client(None).head_object("tls", "k").await.unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("certificate"),
        "{err}"
    );
}
