//! Every version of what a target names (`ListObjectVersions`): `ls --all-versions`, so that
//! the ID `cp`, `cat`, `head` and `rm --version-id` take can be found without another tool
//! (lines as `ls` prints objects, the version ID last, a delete marker said so in the size
//! column), and `rm --all-versions`, which removes them all for good.

use std::io::Write;
use std::sync::Arc;

use jiff::tz::TimeZone;
use slipstream_client::{ClientError, DeleteError, ObjectKey, S3Client, Version, MAX_DELETE_KEYS};
use slipstream_s3::delete::fits_in_xml;
use slipstream_s3::pattern::Filters;
use slipstream_s3::S3Uri;
use slipstream_transfer::Selection;
use tokio::task::JoinSet;

use crate::actions::Printer;
use crate::listing::{human_size, relative, when, LsArgs, Tally};
use crate::objects::failed;
use crate::remove::RmArgs;
use crate::Failure;

/// Lists the versions `target` (with `a`'s --recursive and --raw) names, page by page.
pub(crate) async fn ls_versions(
    a: &LsArgs,
    client: &S3Client,
    target: &S3Uri,
    tally: &mut Tally,
) -> Result<(), Failure> {
    let selection = Selection::parse_as(&target.key, a.recursive, a.raw)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let wildcard = matches!(selection, Selection::Pattern(_));
    // A wildcard's matches and --recursive are whole keys; a level is grouped by `/`.
    let (prefix, delimiter, base) = match &selection {
        Selection::Object(key) => (key.clone(), Some("/"), directory(key)),
        Selection::Prefix(_) => (target.key.clone(), None, ""),
        Selection::Pattern(_) => (selection.list_prefix(), None, ""),
    };
    let zone = TimeZone::system();
    let mut out = std::io::stdout().lock();
    let mut after = None;
    loop {
        let page = client
            .list_object_versions(&target.bucket, &prefix, delimiter, after.as_ref())
            .await
            .map_err(failed)?;
        let mut lines = String::new();
        for p in &page.prefixes {
            tally.prefixes += 1;
            lines.push_str(&match a.json {
                true => serde_json::json!({
                    "key": format!("s3://{}/{p}", target.bucket),
                    "type": "directory",
                })
                .to_string(),
                false => format!("{:>26} PRE {}", "", relative(p, base)),
            });
            lines.push('\n');
        }
        for v in page
            .versions
            .iter()
            .filter(|v| !wildcard || selection.takes(&v.key))
        {
            if !v.delete_marker {
                tally.objects += 1;
                tally.bytes += v.size;
            }
            let line = match a.json {
                true => json_line(&target.bucket, v),
                false => text_line(a, v, relative(&v.key, base), &zone),
            };
            lines.push_str(&line);
            lines.push('\n');
        }
        out.write_all(lines.as_bytes())
            .map_err(|e| Failure::from_write(&e))?;
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    if wildcard && tally.objects == 0 {
        return Err(Failure::input(format!(
            "no object matches s3://{}/{}",
            target.bucket, target.key
        )));
    }
    Ok(())
}

/// `2026-11-28 12:15:14          5 a/k1  01M8H19FXGRYNBZYK597TJ8QPS`, a delete marker with
/// `(deleted)` for its size.
fn text_line(a: &LsArgs, v: &Version, name: &str, zone: &TimeZone) -> String {
    let size = match (v.delete_marker, a.human_readable) {
        (true, _) => "(deleted)".to_owned(),
        (false, true) => human_size(v.size),
        (false, false) => v.size.to_string(),
    };
    format!(
        "{} {size:>10} {name}  {}",
        when(&v.last_modified, zone),
        v.version_id
    )
}

/// s5cmd's `--json ls` object, with the version's ID, whether it is the current one, and
/// `"delete_marker": true` (no size or ETag) for a marker.
fn json_line(bucket: &str, v: &Version) -> String {
    let mut line = serde_json::json!({
        "key": format!("s3://{bucket}/{}", v.key),
        "type": "file",
        "last_modified": v.last_modified,
        "version_id": v.version_id,
        "is_latest": v.is_latest,
    });
    if v.delete_marker {
        line["delete_marker"] = true.into();
    } else {
        line["size"] = v.size.into();
        line["etag"] = crate::objects::unquoted(&v.etag).into();
        line["storage_class"] = v.storage_class.clone().into();
    }
    line.to_string()
}

/// `key` up to its last `/`: the level a non-recursive listing shows names relative to.
fn directory(key: &str) -> &str {
    key.rfind('/').map_or("", |i| &key[..=i])
}

/// `rm --all-versions`: every version and delete marker the target names (one key's, a
/// prefix's with --recursive, a wildcard's matches; folder markers too, so that a versioned
/// bucket can be emptied), removed for good in `DeleteObjects` batches of up to 1,000 naming
/// each version, --batches of them in flight while the listing goes on. Returns how many
/// could not be deleted (each printed with S3's reason).
pub(crate) async fn remove_all_versions(
    a: &RmArgs,
    client: &Arc<S3Client>,
    target: &S3Uri,
    filters: &Filters,
    printer: &Arc<Printer>,
) -> Result<usize, Failure> {
    let selection = Selection::parse_as(&target.key, a.recursive, a.raw)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let prefix = selection.list_prefix();
    let bucket = target.bucket.as_str();
    let mut batches = JoinSet::new();
    let (mut after, mut seen, mut failures) = (None, 0usize, 0usize);
    // The versions of the key a page ends with wait for the next page: deleting the one the
    // marker names first loses the rest of that key on a server that looks the marker up
    // (versitygw), and one key's versions deleted in two batches at once race there.
    let mut held: Vec<Entry> = Vec::new();
    loop {
        let page = client
            .list_object_versions(bucket, &prefix, None, after.as_ref())
            .await
            .map_err(failed)?;
        let mut taken = std::mem::take(&mut held);
        taken.extend(
            page.versions
                .into_iter()
                .filter(|v| selection.takes(&v.key) && filters.takes(selection.relative(&v.key)))
                .map(|v| (v.key, v.version_id, v.is_latest)),
        );
        if let Some(next) = &page.next {
            let cut = taken.len()
                - taken
                    .iter()
                    .rev()
                    .take_while(|(k, ..)| *k == next.key)
                    .count();
            held = taken.split_off(cut);
        }
        seen += taken.len();
        for batch in cut_batches(taken, usize::from(a.batches)) {
            if a.dryrun {
                for (key, version) in &batch {
                    printer.done("delete", &versioned_name(bucket, key, version), None);
                }
                continue;
            }
            while batches.len() >= usize::from(a.batches) {
                failures += settle(batches.join_next().await, bucket, printer)?;
            }
            let (client, bucket) = (Arc::clone(client), bucket.to_owned());
            batches.spawn(async move {
                let failed = delete_batch(&client, &bucket, &batch).await?;
                Ok::<_, ClientError>((batch, failed))
            });
        }
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    while !batches.is_empty() {
        failures += settle(batches.join_next().await, bucket, printer)?;
    }
    if seen == 0 && matches!(selection, Selection::Pattern(_)) {
        return Err(Failure::input(format!(
            "no object matches s3://{bucket}/{}",
            target.key
        )));
    }
    Ok(failures)
}

/// A listed version: key, version ID, whether it is the current one.
type Entry = (String, String, bool);

/// The fewest versions a batch is cut to when spreading a page over the batches in flight.
const MIN_BATCH: usize = 100;

/// `taken` (in key order) cut into batches of `DeleteObjects`: a page spread over the batches
/// in flight (at least [`MIN_BATCH`] versions each, at most S3's 1,000), cut only between keys,
/// and each key's current version last. Both for versitygw: deleting the current version first
/// makes it promote the next one (a file moved), each time, and one key's versions deleted by
/// two requests at once race there; S3 takes any order.
fn cut_batches(mut taken: Vec<Entry>, in_flight: usize) -> Vec<Vec<(String, String)>> {
    taken.sort_by(|a, b| (&a.0, a.2).cmp(&(&b.0, b.2)));
    let size = taken
        .len()
        .div_ceil(in_flight.max(1))
        .clamp(MIN_BATCH, MAX_DELETE_KEYS);
    let mut batches: Vec<Vec<(String, String)>> = Vec::new();
    let mut batch: Vec<(String, String)> = Vec::new();
    for (key, version, _) in taken {
        let new_key = batch.last().is_some_and(|(k, _)| *k != key);
        if batch.len() >= MAX_DELETE_KEYS || (batch.len() >= size && new_key) {
            batches.push(std::mem::take(&mut batch));
        }
        batch.push((key, version));
    }
    if !batch.is_empty() {
        batches.push(batch);
    }
    batches
}

type Batch = Result<(Vec<(String, String)>, Vec<DeleteError>), ClientError>;

/// One batch: `DeleteObjects` for the keys XML can carry, `DeleteObject` for the others.
async fn delete_batch(
    client: &S3Client,
    bucket: &str,
    batch: &[(String, String)],
) -> Result<Vec<DeleteError>, ClientError> {
    let (plain, odd): (Vec<_>, Vec<_>) = batch.iter().cloned().partition(|(k, _)| fits_in_xml(k));
    let mut failed = Vec::new();
    if !plain.is_empty() {
        failed = client.delete_versions(bucket, &plain).await?;
    }
    for (key, version) in odd {
        if let Err(e) = client
            .delete_object(bucket, ObjectKey::new(&key, Some(&version)))
            .await
        {
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

/// Prints a finished batch's versions, deleted or refused; returns how many were refused. A
/// batch refused whole (after the client's retries) stops the command with its error.
fn settle(
    joined: Option<Result<Batch, tokio::task::JoinError>>,
    bucket: &str,
    printer: &Printer,
) -> Result<usize, Failure> {
    let Some(joined) = joined else {
        return Ok(0);
    };
    let (batch, refused) = joined
        .map_err(|e| failed(format!("a delete stopped: {e}")))?
        .map_err(failed)?;
    let mut failures = 0;
    for (key, version) in &batch {
        let name = versioned_name(bucket, key, version);
        // S3 names the version of each refusal; a server that leaves it out names the key.
        let refusal = refused
            .iter()
            .find(|e| &e.key == key && e.version_id.as_ref().map_or(true, |v| v == version));
        match refusal {
            Some(e) => {
                failures += 1;
                printer.failed("delete", &name, &format!("{}: {}", e.code, e.message));
            }
            None => printer.done("delete", &name, None),
        }
    }
    Ok(failures)
}

fn versioned_name(bucket: &str, key: &str, version: &str) -> String {
    format!("s3://{bucket}/{key} (version {version})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(keys: &[(&str, usize)]) -> Vec<Entry> {
        let mut all = Vec::new();
        for (key, versions) in keys {
            for i in 0..*versions {
                all.push((key.to_string(), format!("{key}.{i}"), i == 0));
            }
        }
        all
    }

    #[test]
    fn batches_end_between_keys_with_each_current_version_last() {
        let keys: Vec<(String, usize)> = (0..150).map(|i| (format!("k{i:03}"), 3)).collect();
        let keys: Vec<(&str, usize)> = keys.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        let batches = cut_batches(entries(&keys), 4);
        // 450 versions over 4 in flight: ~113 each, cut at the next key (114).
        assert_eq!(
            batches.iter().map(Vec::len).collect::<Vec<_>>(),
            [114, 114, 114, 108]
        );
        for batch in &batches {
            for key in batch.chunks(3) {
                let names: Vec<_> = key
                    .iter()
                    .map(|(_, v)| v.rsplit('.').next().unwrap())
                    .collect();
                assert_eq!(names, ["1", "2", "0"], "the current version (0) last");
            }
        }
    }

    #[test]
    fn a_key_with_more_versions_than_a_request_takes_is_cut() {
        let batches = cut_batches(entries(&[("big", 2500)]), 8);
        assert_eq!(
            batches.iter().map(Vec::len).collect::<Vec<_>>(),
            [1000, 1000, 500]
        );
        assert!(cut_batches(Vec::new(), 8).is_empty());
    }
}
