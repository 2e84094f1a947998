//! `du`: how many objects and bytes are under a prefix or match a wildcard, in total or per
//! "directory" one level down (`--group`), counted from the listing as it arrives.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use clap::Args;
use slipstream_s3::pattern::{Filters, Pattern};
use slipstream_transfer::{list_spread, list_versions_spread, Selection, Spread};

use crate::flags::{Connection, Transport};
use crate::objects::{client, failed, runtime, s3};
use crate::Failure;

pub const DU_EXAMPLES: &str = "\
Examples:
  slipstream du s3://my-bucket/
  slipstream du --group -H s3://my-bucket/logs/
  slipstream du 's3://my-bucket/logs/2026-*/*.gz' --json

A target without a wildcard is a prefix, as `aws s3 ls --recursive --summarize` reads it
(s3://b/log counts log/ and logs/). --group adds a line per name up to its first / below the
target's last / (the \"directories\" `ls` shows), sorted by name.";

/// `slipstream du`.
#[derive(Args, Debug)]
pub struct DuArgs {
    /// s3://bucket[/prefix], or a wildcard.
    pub target: String,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
    /// A line per "directory" one level below the target, then the total.
    #[arg(long, short)]
    pub group: bool,
    /// Sizes in KiB, MiB, GiB... instead of bytes.
    #[arg(long, short = 'H')]
    pub humanize: bool,
    #[command(flatten)]
    pub filters: crate::args::Filters,
    /// One JSON object per line: {"prefix", "objects", "bytes"}.
    #[arg(long)]
    pub json: bool,
    /// Count every version (what a versioned bucket stores and bills), not only the current
    /// ones; delete markers hold no bytes and are not counted.
    #[arg(long)]
    pub all_versions: bool,
}

/// Objects and bytes of one line.
#[derive(Default)]
struct Count {
    objects: u64,
    bytes: u64,
}

/// `slipstream du`.
pub fn du(a: &DuArgs, filters: Filters) -> Result<(), Failure> {
    let target = s3(&a.target)?;
    let selection = if Pattern::has_wildcard(&target.key) {
        Selection::parse(&target.key, false).map_err(|e| Failure::usage(e.to_string()))?
    } else {
        Selection::Prefix(target.key.clone())
    };
    let base = selection.base().to_owned();
    let client = client(&a.connection, &a.transport)?;
    let (mut total, mut groups) = (Count::default(), BTreeMap::<String, Count>::new());
    let mut count = |key: &str, size: u64| {
        total.objects += 1;
        total.bytes += size;
        if a.group {
            let rest = key.strip_prefix(base.as_str()).unwrap_or(key);
            let group = match rest.find('/') {
                Some(i) => &rest[..=i],
                None => rest,
            };
            let g = groups.entry(format!("{base}{group}")).or_default();
            g.objects += 1;
            g.bytes += size;
        }
    };
    runtime()?.block_on(async {
        if a.all_versions {
            // As objects are counted: no folder markers (delete markers hold no bytes).
            let chosen = (selection, filters);
            let mut listed = list_versions_spread(
                Arc::clone(&client),
                &target.bucket,
                chosen,
                4,
                Spread::WhenFar,
            );
            while let Some(page) = listed.recv().await {
                for v in page.map_err(failed)? {
                    if !v.delete_marker && !v.key.ends_with('/') {
                        count(&v.key, v.size);
                    }
                }
            }
            return Ok(());
        }
        let mut listed = list_spread(
            Arc::clone(&client),
            &target.bucket,
            selection,
            filters,
            4,
            Spread::WhenFar,
        );
        while let Some(page) = listed.recv().await {
            for o in page.map_err(failed)? {
                count(&o.key, o.size);
            }
        }
        Ok::<_, Failure>(())
    })?;
    let mut out = std::io::stdout().lock();
    let mut line = |name: &str, c: &Count| {
        let text = if a.json {
            serde_json::json!({ "prefix": name, "objects": c.objects, "bytes": c.bytes })
                .to_string()
        } else {
            let size = if a.humanize {
                humanize(c.bytes)
            } else {
                format!("{} bytes", c.bytes)
            };
            format!("{size} in {} objects: {name}", c.objects)
        };
        writeln!(out, "{text}").map_err(|e| Failure::from_write(&e))
    };
    for (name, c) in &groups {
        line(&format!("s3://{}/{name}", target.bucket), c)?;
    }
    line(&target.to_string(), &total)
}

/// `n` bytes in binary units with one decimal, as `du -h` prints them.
fn humanize(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_du_h_prints_them() {
        assert_eq!(humanize(0), "0 B");
        assert_eq!(humanize(1023), "1023 B");
        assert_eq!(humanize(1024), "1.0 KiB");
        assert_eq!(humanize(5 << 30), "5.0 GiB");
        assert_eq!(humanize(1536 << 20), "1.5 GiB");
        assert_eq!(humanize(u64::MAX), "16.0 EiB");
    }
}
