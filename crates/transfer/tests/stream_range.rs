//! A stream download of a range of up to a part (the Python reader's read after a seek: one
//! GET written on as it arrives) through the fault proxy: a body that breaks off is asked for
//! again from where it broke, never from its start, so what was written is neither repeated
//! nor skipped; an object replaced is an error.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod proxy;

use std::sync::{Arc, Mutex};

use proxy::{Action, Seen};
use slipstream_client::ObjectKey;
use slipstream_client::S3Client;
use slipstream_transfer::{
    download_stream_to_writer, Downloaded, StreamOf, StreamSignals, TransferError, TransferOptions,
};

/// `range` (end exclusive) of `bucket/k` into `out`, pinned to `if_match` if given.
async fn range_to(
    client: &Arc<S3Client>,
    bucket: &str,
    (range, if_match): ((u64, u64), Option<&str>),
    out: &mut Vec<u8>,
) -> Result<Downloaded, TransferError> {
    let what = StreamOf::Range { range, if_match };
    let names = (bucket, ObjectKey::new("k", None), what);
    let (opts, signals) = (TransferOptions::default(), StreamSignals::default());
    download_stream_to_writer(Arc::clone(client), names, out, opts, signals).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_body_is_resumed_where_it_broke() {
    let direct = common::client();
    let bucket = common::bucket(&direct, "short").await;
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 253) as u8).collect();
    direct
        .put_object(&bucket, "k", body.clone().into(), Default::default())
        .await
        .unwrap();
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&ranges);
    let broken = proxy::start(
        &common::server(),
        Arc::new(move |s: &Seen| {
            let mut seen = seen.lock().unwrap();
            seen.push(s.range.clone().unwrap_or_default());
            if seen.len() <= 2 {
                Action::ResetAfter(300_000)
            } else {
                Action::Forward
            }
        }),
    );
    let client = common::quick_client(&broken.endpoint);
    let mut out = Vec::new();
    let range = ((10, 2_000_010), None);
    let got = range_to(&client, &bucket, range, &mut out).await.unwrap();
    assert_eq!(got.size, 2_000_000);
    assert!(out == body[10..2_000_010], "every byte once, in order");
    let asked = ranges.lock().unwrap().clone();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert_eq!(asked[0], "bytes=10-2000009");
    // Each retry starts where the bytes stopped (after the 300,000 relayed, less what the
    // proxy's reset swallowed), not at 10 again.
    let from = |r: &str| -> u64 { r[6..r.find('-').unwrap()].parse().unwrap() };
    assert!(
        from(&asked[1]) > 10 && from(&asked[2]) > from(&asked[1]),
        "{asked:?}"
    );

    // Past the object's end it is cut short, as S3 cuts it.
    let mut out = Vec::new();
    let tail = ((2_999_990, 3_000_100), None);
    let got = range_to(&client, &bucket, tail, &mut out).await.unwrap();
    assert_eq!((got.size, &out[..]), (10, &body[2_999_990..]));

    // Pinned to an ETag the object no longer has: `Changed`, nothing written.
    let mut out = Vec::new();
    let stale = ((0, 100), Some("\"0123456789abcdef0123456789abcdef\""));
    let e = range_to(&client, &bucket, stale, &mut out)
        .await
        .unwrap_err();
    assert!(matches!(e, TransferError::Changed { .. }), "{e}");
    assert!(out.is_empty());
}
