//! `slipstream ls`: buckets, a "directory" or every object under a prefix, or a wildcard's
//! matches, printed as `aws s3 ls` prints them so that scripts written for its output read
//! ours (times in the local zone, as the AWS CLI converts them). s5cmd's flags add what its
//! users script with: the storage class and ETag as columns before the size, whole `s3://`
//! names alone (`--show-fullpath`), and `--exclude`/`--include`.

use std::io::Write;
use std::sync::Arc;

use clap::Args;
use jiff::tz::TimeZone;
use slipstream_s3::pattern::Filters;
use slipstream_s3::xml::Object;
use slipstream_transfer::{list_selected, Selection};

use crate::args::Filters as FilterFlags;
use crate::flags::{Connection, Transport};
use crate::objects::{client, failed, runtime, s3};
use crate::Failure;

/// `slipstream ls`.
#[derive(Args, Debug)]
pub struct LsArgs {
    /// s3://bucket[/prefix], or a wildcard (`s3://b/logs/*.gz`); nothing (or `s3://`) lists
    /// the buckets.
    pub target: Option<String>,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
    /// Every object under the prefix, without grouping by `/`.
    #[arg(long)]
    pub recursive: bool,
    /// Sizes in KiB, MiB, GiB... as the AWS CLI prints them (also -H and --humanize,
    /// s5cmd's names).
    #[arg(long, short = 'H', visible_alias = "humanize")]
    pub human_readable: bool,
    /// Each object's ETag in a column before its size (s5cmd's flag).
    #[arg(long, short = 'e')]
    pub etag: bool,
    /// Each object's storage class in a column before its size, before the ETag's (s5cmd's
    /// flag; STANDARD where the listing names none, as S3 means by that).
    #[arg(long, short = 's')]
    pub storage_class: bool,
    /// Only the whole name of each object and "directory", `s3://bucket/key`, one a line
    /// (s5cmd's flag): a list to hand to other commands.
    #[arg(long)]
    pub show_fullpath: bool,
    /// Names are matched relative to the listed "directory" (or the wildcard's literal part
    /// up to its last `/`), as `cp` matches them; "directories" are filtered too.
    #[command(flatten)]
    pub filters: FilterFlags,
    /// A last line with the number of objects and their total size.
    #[arg(long)]
    pub summarize: bool,
    /// Take the target literally: `*`, `?` and `[` are characters of the key, not wildcards.
    #[arg(long)]
    pub raw: bool,
    /// One JSON object per line, as s5cmd's --json ls prints them: objects {"key":
    /// "s3://b/k", "type": "file", "size", "last_modified", "etag", "storage_class"},
    /// "directories" {"key", "type": "directory"}, buckets {"name", "created_at"}; with
    /// --summarize a last {"total_objects", "total_size"}.
    #[arg(long)]
    pub json: bool,
    /// Every version and delete marker (ListObjectVersions), newest first for each key, with
    /// its version ID last on the line (JSON: "version_id", "is_latest", "delete_marker").
    #[arg(long)]
    pub all_versions: bool,
    /// With no s3:// path: only buckets whose names start with this (ListBuckets' `prefix`,
    /// the AWS CLI's flag).
    #[arg(long, value_name = "PREFIX")]
    pub bucket_name_prefix: Option<String>,
    /// With no s3:// path: only buckets in this region (ListBuckets' `bucket-region`, the AWS
    /// CLI's flag).
    #[arg(long, value_name = "REGION")]
    pub bucket_region: Option<String>,
}

/// What a listing printed, for `--summarize` and the exit code.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) objects: u64,
    pub(crate) bytes: u64,
    pub(crate) prefixes: u64,
    /// Entries the server listed, filters aside: a prefix that lists nothing exits 1, one
    /// whose entries the filters all left out does not (as s5cmd's `ls --exclude`).
    pub(crate) listed: u64,
}

/// `slipstream ls`.
pub fn ls(a: &LsArgs, filters: Filters) -> Result<(), Failure> {
    let target = match a.target.as_deref() {
        None | Some("s3://") => None,
        Some(t) => Some(s3(t)?),
    };
    if target.is_some() && (a.bucket_name_prefix.is_some() || a.bucket_region.is_some()) {
        return Err(Failure::usage(
            "--bucket-name-prefix and --bucket-region choose among the buckets: give no s3:// path",
        ));
    }
    if a.all_versions && target.is_none() {
        return Err(Failure::usage(
            "--all-versions lists the versions under s3://bucket[/prefix], not the buckets",
        ));
    }
    let client = client(&a.connection, &a.transport)?;
    let mut out = std::io::stdout().lock();
    let mut line = |text: String| writeln!(out, "{text}").map_err(|e| Failure::from_write(&e));
    let size = |n: u64| match a.human_readable {
        true => human_size(n),
        false => n.to_string(),
    };
    let mut tally = Tally::default();
    // `TZ`, else /etc/localtime, as Python's `tzlocal()` reads them for the AWS CLI; UTC when
    // neither names a zone.
    let zone = TimeZone::system();
    let bucket_of = target
        .as_ref()
        .map(|t| t.bucket.clone())
        .unwrap_or_default();
    // An object's line: as the AWS CLI prints it (`name` relative to the listed level), or
    // s5cmd's JSON (the whole s3:// key).
    let object_line = |o: &Object, name: &str| match a.json {
        true => serde_json::json!({
            "key": format!("s3://{bucket_of}/{}", o.key),
            "type": "file",
            "size": o.size,
            "last_modified": o.last_modified,
            "etag": crate::objects::unquoted(&o.etag),
            "storage_class": o.storage_class,
        })
        .to_string(),
        false if a.show_fullpath => format!("s3://{bucket_of}/{}", o.key),
        false => format!(
            "{} {}{:>10} {name}",
            when(&o.last_modified, &zone),
            columns(a, &o.storage_class, &o.etag),
            size(o.size)
        ),
    };
    runtime()?.block_on(async {
        if let (true, Some(target)) = (a.all_versions, &target) {
            crate::versions::ls_versions(a, &client, target, &filters, &mut tally).await?;
            if !target.key.is_empty() && tally.listed == 0 {
                return Err(Failure::input(String::new()));
            }
            return Ok(());
        }
        let Some(target) = target else {
            let only = slipstream_client::BucketFilter {
                prefix: a.bucket_name_prefix.clone(),
                region: a.bucket_region.clone(),
            };
            for b in client.list_buckets(&only).await.map_err(failed)? {
                line(match a.json {
                    true => {
                        serde_json::json!({ "name": b.name, "created_at": b.created }).to_string()
                    }
                    false => format!("{} {}", when(&b.created, &zone), b.name),
                })?;
            }
            return Ok(());
        };
        let selection = Selection::parse_as(&target.key, a.recursive, a.raw)
            .map_err(|e| Failure::usage(e.to_string()))?;
        if let Selection::Pattern(_) = selection {
            // A wildcard's matches: whole keys, as with --recursive.
            let mut pages =
                list_selected(Arc::clone(&client), &target.bucket, selection, filters, 4);
            while let Some(page) = pages.recv().await {
                for o in page.map_err(failed)? {
                    tally.objects += 1;
                    tally.bytes += o.size;
                    line(object_line(&o, &o.key))?;
                }
            }
            if tally.objects == 0 {
                // As `cp`, `rm` and s5cmd: a wildcard that matches nothing is an error.
                return Err(Failure::input(format!(
                    "no object matches s3://{}/{}",
                    target.bucket, target.key
                )));
            }
            return Ok(());
        }
        let delimiter = (!a.recursive).then_some("/");
        // As the AWS CLI: names relative to the listed "directory" unless --recursive.
        let base = match a.recursive {
            true => "",
            false => target.key.rfind('/').map_or("", |i| &target.key[..=i]),
        };
        let takes = |key: &str| filters.takes(selection.relative(key));
        let mut token = None;
        loop {
            let page = client
                .list_objects_v2(&target.bucket, &target.key, delimiter, token.as_deref())
                .await
                .map_err(failed)?;
            tally.listed += (page.prefixes.len() + page.objects.len()) as u64;
            for p in page.prefixes.iter().filter(|p| takes(p)) {
                tally.prefixes += 1;
                line(directory_line(a, &target.bucket, p, base))?;
            }
            for o in page.objects.iter().filter(|o| takes(&o.key)) {
                tally.objects += 1;
                tally.bytes += o.size;
                line(object_line(o, relative(&o.key, base)))?;
            }
            match page.continuation {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        if !target.key.is_empty() && tally.listed == 0 {
            // As the AWS CLI: exit 1, silently, when a prefix or key lists nothing, so that
            // `ls s3://bucket/key` answers whether the object is there.
            return Err(Failure::input(String::new()));
        }
        Ok(())
    })?;
    if a.summarize && a.json && a.target.as_deref().is_some_and(|t| t != "s3://") {
        let total =
            serde_json::json!({ "total_objects": tally.objects, "total_size": tally.bytes });
        line(total.to_string())?;
    } else if a.summarize && a.target.as_deref().is_some_and(|t| t != "s3://") {
        line(String::new())?;
        line(format!("Total Objects: {}", tally.objects))?;
        line(format!("   Total Size: {}", size(tally.bytes)))?;
    }
    Ok(())
}

/// A "directory" (`prefix` of `bucket`) as `aws s3 ls` prints it, relative to `base`, or as
/// s5cmd's `--json ls` and `--show-fullpath` do.
pub(crate) fn directory_line(a: &LsArgs, bucket: &str, prefix: &str, base: &str) -> String {
    match (a.json, a.show_fullpath) {
        (true, _) => {
            serde_json::json!({ "key": format!("s3://{bucket}/{prefix}"), "type": "directory" })
                .to_string()
        }
        (false, true) => format!("s3://{bucket}/{prefix}"),
        (false, false) => format!("{:>26} PRE {}", "", relative(prefix, base)),
    }
}

/// The columns s5cmd's `--storage-class` and `--etag` add before the size, in its order, each
/// followed by a space (nothing when neither is asked for). A delete marker has neither: `-`.
pub(crate) fn columns(a: &LsArgs, storage_class: &str, etag: &str) -> String {
    let mut text = String::new();
    if a.storage_class {
        text.push_str(match storage_class {
            "" => "STANDARD",
            class => class,
        });
        text.push(' ');
    }
    if a.etag {
        text.push_str(match crate::objects::unquoted(etag) {
            "" => "-",
            etag => etag,
        });
        text.push(' ');
    }
    text
}

pub(crate) fn relative<'k>(key: &'k str, base: &str) -> &'k str {
    key.strip_prefix(base).unwrap_or(key)
}

/// S3's ISO 8601 time (`2026-11-27T20:49:11.000Z`) in `zone`, as `2026-11-27 20:49:11`;
/// anything else as it came.
pub(crate) fn when(iso: &str, zone: &TimeZone) -> String {
    match iso.parse::<jiff::Timestamp>() {
        Ok(t) => zone
            .to_datetime(t)
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string(),
        Err(_) => iso.to_owned(),
    }
}

/// `n` bytes as the AWS CLI's `--human-readable` prints them: `1 Byte`, `512 Bytes`,
/// `1.5 KiB`, with a unit chosen so that the figure rounds below 1024.
pub(crate) fn human_size(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    match n {
        1 => return "1 Byte".into(),
        0..=1023 => return format!("{n} Bytes"),
        _ => {}
    }
    let bytes = n as f64;
    let mut scale = 1024.0;
    for unit in &UNITS[..UNITS.len() - 1] {
        if (bytes / scale).round() < 1024.0 {
            return format!("{:.1} {unit}", bytes / scale);
        }
        scale *= 1024.0;
    }
    format!("{:.1} EiB", bytes / scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_the_aws_cli_prints_them() {
        let utc = TimeZone::UTC;
        assert_eq!(
            when("2026-11-27T20:49:11.000Z", &utc),
            "2026-11-27 20:49:11"
        );
        assert_eq!(when("2026-11-27T20:49:11Z", &utc), "2026-11-27 20:49:11");
        assert_eq!(when("yesterday", &utc), "yesterday");
        assert_eq!(when("", &utc), "");
        // A zone east of UTC by a half hour crosses midnight.
        let east = TimeZone::posix("XST-5:30").unwrap();
        assert_eq!(
            when("2026-11-27T20:49:11.000Z", &east),
            "2026-11-28 02:19:11"
        );
        // A zone with summer time, each half of the year (POSIX rules: no tz database needed).
        let ny = TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap();
        assert_eq!(when("2026-01-15T12:00:00.000Z", &ny), "2026-01-15 07:00:00");
        assert_eq!(when("2026-07-15T12:00:00.000Z", &ny), "2026-07-15 08:00:00");
    }

    /// Figures printed by awscli 1.x's `human_readable_size`.
    #[test]
    fn sizes_read_as_the_aws_cli_prints_them() {
        assert_eq!(human_size(0), "0 Bytes");
        assert_eq!(human_size(1), "1 Byte");
        assert_eq!(human_size(1023), "1023 Bytes");
        assert_eq!(human_size(1024), "1.0 KiB");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(1024 * 1024 - 1), "1.0 MiB");
        assert_eq!(human_size(1_048_064), "1.0 MiB");
        assert_eq!(human_size(1_048_063), "1023.5 KiB");
        assert_eq!(human_size(5 << 30), "5.0 GiB");
        assert_eq!(human_size(u64::MAX), "16.0 EiB");
    }
}
