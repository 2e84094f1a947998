//! A listing cut into key ranges fetched side by side, when the caller knows roughly which keys
//! to expect (a sync's local side). Over a long path one listing of many keys is slow for a
//! reason besides its round trips: a page of 1,000 keys is about 300 KB of XML, which a fresh
//! connection delivers in TCP slow start over about five round trips (1,000 keys took 0.70 s
//! at 100 ms, 10 keys 0.21 s: docs/BENCHMARKS.md). Cut at the expected names, each range is a
//! short page on a connection of its own, all of them in slow start at once.
//!
//! Range `i` holds the keys after cut `i - 1` up to and including cut `i` (`start-after` is
//! exclusive), so every key falls in exactly one range whatever the bucket holds: keys nobody
//! expected only make their range longer (it follows its continuation tokens). The pages come
//! out in key order, as `select::list_selected`'s do.

use std::sync::Arc;

use slipstream_client::xml::Object;
use slipstream_client::{ListFrom, S3Client};
use slipstream_s3::pattern::Filters;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::select::{taken, Selection};
use crate::TransferError;

/// Keys expected per range: a page short enough to arrive in two round trips of slow start.
const PER_RANGE: usize = 125;
/// Keys asked of a range's first page: its expected share with room for keys nobody expected
/// (a range that holds more follows its continuation tokens, 1,000 keys a page).
const FIRST_PAGE: usize = PER_RANGE + PER_RANGE / 4 + 16;
/// Ranges at most: connections opened for one listing.
const MAX_RANGES: usize = 32;

/// Whether `expected` keys are worth cutting into ranges.
pub fn worth_cutting(expected: usize) -> bool {
    expected >= 2 * PER_RANGE
}

/// Lists `prefix` (the objects `filters` take on names relative to it, "directory" markers
/// left out) in ranges cut at `expected`, sorted full keys the caller expects to find; pages
/// in key order, a listing error ending the stream with that error. Fewer than
/// [`worth_cutting`] expected keys make one range: one listing.
pub fn list_ranges(
    client: Arc<S3Client>,
    bucket: &str,
    prefix: &str,
    expected: &[String],
    filters: Filters,
) -> mpsc::Receiver<Result<Vec<Object>, TransferError>> {
    let (tx, rx) = mpsc::channel(4);
    let cuts = cuts(expected);
    let selection = Selection::Prefix(prefix.to_owned());
    let mut ranges: Vec<JoinHandle<Result<Vec<Object>, TransferError>>> = Vec::new();
    for i in 0..=cuts.len() {
        let after = i.checked_sub(1).map(|j| cuts[j].clone());
        let upto = cuts.get(i).cloned();
        let (client, bucket, prefix) = (Arc::clone(&client), bucket.to_owned(), prefix.to_owned());
        ranges.push(tokio::spawn(async move {
            list_range(&client, &bucket, &prefix, (after, upto)).await
        }));
    }
    tokio::spawn(async move {
        let mut ranges = ranges.into_iter();
        for range in ranges.by_ref() {
            let page = match range.await {
                Ok(Ok(objects)) => Ok(taken(&selection, &filters, objects)),
                Ok(Err(e)) => Err(e),
                Err(e) => Err(TransferError::Io(std::io::Error::other(e))),
            };
            let failed = page.is_err();
            let empty = page.as_ref().is_ok_and(Vec::is_empty);
            if (!empty && tx.send(page).await.is_err()) || failed {
                break;
            }
        }
        // Nobody reads on (or a range failed): the others stop.
        for range in ranges {
            range.abort();
        }
    });
    rx
}

/// Where the ranges meet: about every `PER_RANGE`-th expected key, at most `MAX_RANGES - 1`.
fn cuts(expected: &[String]) -> Vec<String> {
    let ranges = (expected.len() / PER_RANGE).clamp(1, MAX_RANGES);
    (1..ranges)
        .map(|i| expected[i * expected.len() / ranges - 1].clone())
        .collect()
}

/// The keys after `after` up to and including `upto` (open ends for `None`), following
/// continuation tokens while the range goes on.
async fn list_range(
    client: &S3Client,
    bucket: &str,
    prefix: &str,
    (after, upto): (Option<String>, Option<String>),
) -> Result<Vec<Object>, TransferError> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let first = if token.is_none() { FIRST_PAGE } else { 1000 };
        let page = range_page(after.as_deref(), token.as_deref(), Some(first));
        let page = client.list_objects_v2_from(bucket, prefix, &page).await?;
        let mut objects = page.objects;
        let past_end = cut_at(&mut objects, upto.as_deref());
        out.extend(objects);
        match page.continuation {
            Some(t) if !past_end => token = Some(t),
            _ => return Ok(out),
        }
    }
}

/// Leaves out of a range's page (in key order) the keys after `upto`; whether there were any
/// (the range ends there).
pub(crate) fn cut_at(objects: &mut Vec<Object>, upto: Option<&str>) -> bool {
    let past = upto.and_then(|u| objects.iter().position(|o| o.key.as_str() > u));
    if let Some(i) = past {
        objects.truncate(i);
    }
    past.is_some()
}

/// The request for a range's next page: after `after` at first, then from the last page's
/// `token` (which carries the position: S3 ignores start-after beside it).
pub(crate) fn range_page<'a>(
    after: Option<&'a str>,
    token: Option<&'a str>,
    max_keys: Option<usize>,
) -> ListFrom<'a> {
    ListFrom {
        continuation: token,
        start_after: if token.is_none() { after } else { None },
        max_keys,
        ..ListFrom::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_expected_keys_and_are_few() {
        let keys: Vec<String> = (0..1000).map(|i| format!("p/{i:04}")).collect();
        let c = cuts(&keys);
        assert_eq!(c.len(), 7, "1,000 keys: 8 ranges of 125");
        assert_eq!(c[0], "p/0124");
        assert!(c.windows(2).all(|w| w[0] < w[1]));
        assert!(
            cuts(&keys[..100]).is_empty(),
            "a short listing stays one range"
        );
        let many: Vec<String> = (0..100_000).map(|i| format!("{i:06}")).collect();
        assert_eq!(cuts(&many).len(), MAX_RANGES - 1);
        assert!(!worth_cutting(249) && worth_cutting(250));
    }
}
