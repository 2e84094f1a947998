//! Every version of what a target names (`ListObjectVersions`): `ls --all-versions`, so that
//! the ID `cp`, `cat`, `head` and `rm --version-id` take can be found without another tool
//! (lines as `ls` prints objects, the version ID last, a delete marker said so in the size
//! column), and `rm --all-versions`, which removes them all for good.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use jiff::tz::TimeZone;
use slipstream_client::{ObjectKey, S3Client, Version};
use slipstream_s3::pattern::Filters;
use slipstream_s3::S3Uri;
use slipstream_transfer::{
    delete_versions_listed, list_versions_spread, Selection, Spread, VersionReport,
};

use crate::actions::Printer;
use crate::listing::{columns, directory_line, human_size, relative, when, LsArgs, Tally};
use crate::objects::failed;
use crate::remove::RmArgs;
use crate::Failure;

/// Lists the versions `target` (with `a`'s --recursive and --raw) names, page by page.
pub(crate) async fn ls_versions(
    a: &LsArgs,
    client: &S3Client,
    target: &S3Uri,
    filters: &Filters,
    tally: &mut Tally,
) -> Result<(), Failure> {
    let selection = Selection::parse_as(&target.key, a.recursive, a.raw)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let wildcard = matches!(selection, Selection::Pattern(_));
    // A wildcard's matches and --recursive are whole keys; a level is grouped by `/`.
    let (prefix, delimiter, base) = match &selection {
        Selection::Object(key) => (key.clone(), Some("/"), selection.base()),
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
        tally.listed += (page.prefixes.len() + page.versions.len()) as u64;
        let takes = |key: &str| filters.takes(selection.relative(key));
        for p in page.prefixes.iter().filter(|p| takes(p)) {
            tally.prefixes += 1;
            lines.push_str(&directory_line(a, &target.bucket, p, base));
            lines.push('\n');
        }
        for v in page
            .versions
            .iter()
            .filter(|v| (!wildcard || selection.takes(&v.key)) && takes(&v.key))
        {
            if !v.delete_marker {
                tally.objects += 1;
                tally.bytes += v.size;
            }
            let line = match (a.json, a.show_fullpath) {
                (true, _) => json_line(&target.bucket, v),
                (false, true) => format!("s3://{}/{}", target.bucket, v.key),
                (false, false) => text_line(a, v, relative(&v.key, base), &zone),
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
    let (class, etag) = match v.delete_marker {
        true => ("-", "-"),
        false => (v.storage_class.as_str(), v.etag.as_str()),
    };
    format!(
        "{} {}{size:>10} {name}  {}",
        when(&v.last_modified, zone),
        columns(a, class, etag),
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

/// `rm --all-versions`: every version and delete marker the target names (one key's, a
/// prefix's with --recursive, a wildcard's matches; folder markers too, so that a versioned
/// bucket can be emptied), removed for good in `DeleteObjects` batches naming each version,
/// --batches of them in flight while the listing goes on, as `remove` deletes keys. Returns
/// how many could not be deleted (each printed with S3's reason).
pub(crate) async fn remove_all_versions(
    a: &RmArgs,
    client: &Arc<S3Client>,
    target: &S3Uri,
    filters: &Filters,
    printer: &Arc<Printer>,
) -> Result<usize, Failure> {
    let selection = Selection::parse_as(&target.key, a.recursive, a.raw)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let wildcard = matches!(selection, Selection::Pattern(_));
    let bucket = target.bucket.as_str();
    // Page after page, each key's versions in one page. Not cut into ranges, even far away:
    // over a 100 ms link the ranges made 9,000 versions' delete slower on versitygw (3.39-3.56
    // s against 2.91-3.15 s), whose listing walks the prefix again for each range and takes
    // the CPU its deletes need (docs/BENCHMARKS.md, "Versioned buckets").
    let chosen = (selection, filters.clone());
    let mut listed = list_versions_spread(Arc::clone(client), bucket, chosen, 4, Spread::Never);
    let seen = Arc::new(AtomicUsize::new(0));
    let failures = if a.dryrun {
        while let Some(page) = listed.recv().await {
            for v in page.map_err(failed)? {
                seen.fetch_add(1, Ordering::Relaxed);
                printer.done(
                    "delete",
                    &versioned_name(bucket, &v.key, &v.version_id),
                    None,
                );
            }
        }
        0
    } else {
        let (p, s, name) = (Arc::clone(printer), Arc::clone(&seen), bucket.to_owned());
        let report: VersionReport = Arc::new(move |(key, version), refused| {
            s.fetch_add(1, Ordering::Relaxed);
            let what = versioned_name(&name, key, version);
            match refused {
                None => p.done("delete", &what, None),
                Some(e) => p.failed("delete", &what, &format!("{}: {}", e.code, e.message)),
            }
        });
        let in_flight = usize::from(a.batches);
        let done = delete_versions_listed(Arc::clone(client), bucket, listed, in_flight, report)
            .await
            .map_err(failed)?;
        done.failed.len()
    };
    if wildcard && seen.load(Ordering::Relaxed) == 0 {
        return Err(Failure::input(format!(
            "no object matches s3://{bucket}/{}",
            target.key
        )));
    }
    Ok(failures)
}

/// `s3://bucket/key (version ID)`, as `rm --version-id` names what it deleted.
fn versioned_name(bucket: &str, key: &str, version: &str) -> String {
    format!("s3://{bucket}/{}", ObjectKey::new(key, Some(version)))
}
