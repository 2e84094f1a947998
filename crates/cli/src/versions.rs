//! `ls --all-versions`: every version and delete marker under a prefix or a wildcard's
//! literal text (`ListObjectVersions`), so that the ID `cp`, `cat`, `head` and `rm
//! --version-id` take can be found without another tool. Lines as `ls` prints objects, the
//! version ID last; a delete marker says so in the size column.

use std::io::Write;

use jiff::tz::TimeZone;
use slipstream_client::{S3Client, Version};
use slipstream_s3::S3Uri;
use slipstream_transfer::Selection;

use crate::listing::{human_size, relative, when, LsArgs, Tally};
use crate::objects::failed;
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
