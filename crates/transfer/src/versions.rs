//! Deleting versions for good, as `delete.rs` deletes keys: `DeleteObjects` batches that name
//! each version, several in flight, fed by a listing (`version_listing.rs`) or by the caller,
//! the per-version refusals S3 returns inside a 200 reported and kept. Shared by `rm
//! --all-versions` and the Python `delete_many` of versions.

use std::sync::Arc;

use slipstream_client::{DeleteError, ObjectKey, S3Client, Version, MAX_DELETE_KEYS};
use slipstream_s3::delete::fits_in_xml;
use tokio::sync::mpsc;

use crate::delete::Deleted;
use crate::flight::Flight;
use crate::TransferError;

/// A version to delete: its key and ID.
pub type VersionName = (String, String);

/// Called for each version as its batch returns, with S3's refusal when it was not deleted.
pub type VersionReport = Arc<dyn Fn(&VersionName, Option<&DeleteError>) + Send + Sync>;

/// Deletes every version `listed` yields from `bucket`, for good, each page cut into batches
/// between keys (each key's current version last), `in_flight` batches at a time. Refusals are reported and collected in
/// [`Deleted::failed`]; a listing error or a batch refused as a whole (after the client's
/// retries) stops it with that error, once the batches already sent have answered.
pub async fn delete_versions_listed(
    client: Arc<S3Client>,
    bucket: &str,
    mut listed: mpsc::Receiver<Result<Vec<Version>, TransferError>>,
    in_flight: usize,
    report: VersionReport,
) -> Result<Deleted, TransferError> {
    let mut flight = Flight::new(in_flight);
    let mut done = Deleted::default();
    let mut settle = |(batch, refused): (Vec<VersionName>, Vec<DeleteError>)| {
        for named in &batch {
            let why = refusal(&refused, named);
            done.deleted += usize::from(why.is_none());
            report(named, why);
        }
        done.failed.extend(refused);
    };
    'listing: while let Some(page) = listed.recv().await {
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                flight.fail(e);
                break;
            }
        };
        for batch in version_batches(page, in_flight) {
            let (client, bucket) = (Arc::clone(&client), bucket.to_owned());
            let task = async move {
                let refused = delete_version_batch(&client, &bucket, &batch).await?;
                Ok((batch, refused))
            };
            if !flight.start(task, &mut settle).await {
                break 'listing;
            }
        }
    }
    flight.finish(&mut settle).await?;
    Ok(done)
}

/// The fewest versions a batch is cut to when spreading them over the batches in flight.
const MIN_BATCH: usize = 100;

/// `versions` cut into batches of `DeleteObjects`: spread over the batches in flight (at
/// least 100 versions each, at most S3's 1,000), cut only between keys, each key's
/// current version last. Both for versitygw: deleting the current version first makes it
/// promote the next one (a file moved), each time, and one key's versions deleted by two
/// requests at once race there (`InvalidArgument: Invalid version id specified`); S3 takes
/// any order.
fn version_batches(mut versions: Vec<Version>, in_flight: usize) -> Vec<Vec<VersionName>> {
    versions.sort_by(|a, b| (&a.key, a.is_latest).cmp(&(&b.key, b.is_latest)));
    let size = versions
        .len()
        .div_ceil(in_flight.max(1))
        .clamp(MIN_BATCH, MAX_DELETE_KEYS);
    let mut batches: Vec<Vec<VersionName>> = Vec::new();
    let mut batch: Vec<VersionName> = Vec::new();
    for v in versions {
        let new_key = batch.last().is_some_and(|(k, _)| *k != v.key);
        if batch.len() >= MAX_DELETE_KEYS || (batch.len() >= size && new_key) {
            batches.push(std::mem::take(&mut batch));
        }
        batch.push((v.key, v.version_id));
    }
    if !batch.is_empty() {
        batches.push(batch);
    }
    batches
}

/// Deletes one batch of versions: `DeleteObjects` for the keys XML can carry, `DeleteObject`
/// for the others. Returns the versions S3 refused, with its reasons; an error of the whole
/// request (after the client's retries) is the error.
async fn delete_version_batch(
    client: &S3Client,
    bucket: &str,
    batch: &[VersionName],
) -> Result<Vec<DeleteError>, TransferError> {
    let (plain, odd): (Vec<_>, Vec<_>) = batch.iter().cloned().partition(|(k, _)| fits_in_xml(k));
    let mut failed = Vec::new();
    if !plain.is_empty() {
        failed = client.delete_versions(bucket, &plain).await?;
    }
    for (key, version) in odd {
        let named = ObjectKey::new(&key, Some(&version));
        if let Err(e) = client.delete_object(bucket, named).await {
            failed.push(DeleteError {
                code: e.code().unwrap_or("").to_owned(),
                message: e.to_string(),
                key,
                version_id: Some(version),
            });
        }
    }
    Ok(failed)
}

/// The refusal among `refused` of `key` at `version`: S3 names the version of each; a server
/// that leaves it out names the key.
fn refusal<'e>(
    refused: &'e [DeleteError],
    (key, version): &VersionName,
) -> Option<&'e DeleteError> {
    refused
        .iter()
        .find(|e| &e.key == key && e.version_id.as_ref().map_or(true, |v| v == version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(keys: &[(&str, usize)]) -> Vec<Version> {
        let mut all = Vec::new();
        for (key, count) in keys {
            for i in 0..*count {
                all.push(Version {
                    key: key.to_string(),
                    version_id: format!("{key}.{i}"),
                    is_latest: i == 0,
                    ..Version::default()
                });
            }
        }
        all
    }

    #[test]
    fn batches_end_between_keys_with_each_current_version_last() {
        let keys: Vec<(String, usize)> = (0..150).map(|i| (format!("k{i:03}"), 3)).collect();
        let keys: Vec<(&str, usize)> = keys.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        let batches = version_batches(versions(&keys), 4);
        // 450 versions over 4 in flight: ~113 each, cut at the next key (114).
        let lengths: Vec<_> = batches.iter().map(Vec::len).collect();
        assert_eq!(lengths, [114, 114, 114, 108]);
        for batch in &batches {
            for key in batch.chunks(3) {
                let ids: Vec<_> = key
                    .iter()
                    .map(|(_, v)| v.rsplit('.').next().unwrap())
                    .collect();
                assert_eq!(ids, ["1", "2", "0"], "the current version (0) last");
            }
        }
    }

    #[test]
    fn a_key_with_more_versions_than_a_request_takes_is_cut() {
        let batches = version_batches(versions(&[("big", 2500)]), 8);
        let lengths: Vec<_> = batches.iter().map(Vec::len).collect();
        assert_eq!(lengths, [1000, 1000, 500]);
        assert!(version_batches(Vec::new(), 8).is_empty());
    }

    #[test]
    fn a_refusal_is_matched_by_version_or_by_key() {
        let refused = |version: Option<&str>| DeleteError {
            key: "k".into(),
            version_id: version.map(str::to_owned),
            code: "AccessDenied".into(),
            message: String::new(),
        };
        let named = [refused(Some("v1"))];
        assert!(refusal(&named, &("k".into(), "v1".into())).is_some());
        assert!(refusal(&named, &("k".into(), "v2".into())).is_none());
        assert!(refusal(&[refused(None)], &("k".into(), "v2".into())).is_some());
    }
}
