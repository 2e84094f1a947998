//! The two sides of a sync: each side's entries (a local directory walked, an S3 prefix
//! listed in one listing or in ranges), and their merge in name order, one name at a time,
//! with a side out of order an error (with `--delete`, a guess could delete what the source
//! has). What to do with each name is `sync.rs`'s.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use slipstream_client::S3Client;
use slipstream_s3::pattern::{Filters, Pattern};
use slipstream_s3::time::parse_timestamp;
use tokio::sync::mpsc;

use crate::error::at;
use crate::ranges::list_ranges;
use crate::select::{list_selected, Selection};
use crate::sync::{Entry, Place};
use crate::walk::{walk_files, Links};
use crate::TransferError;

/// A time as nanoseconds since 1970 (negative before), as `Entry::modified` holds it.
pub(crate) fn nanos_since_epoch(time: SystemTime) -> Option<i64> {
    match time.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).ok(),
        Err(e) => i64::try_from(e.duration().as_nanos()).ok().map(|n| -n),
    }
}

pub(crate) type Entries = mpsc::Receiver<Result<Vec<Entry>, TransferError>>;

/// Pages of a side's entries, sorted by name, that `filters` take. A local side is `local`,
/// walked already (a missing directory has none: a download creates it); an S3 side is listed
/// in ranges cut at `cut_at`'s names (`ranges.rs`), or in one listing.
pub(crate) fn entries(
    client: &Arc<S3Client>,
    place: &Place,
    filters: &Filters,
    local: &Arc<Vec<Entry>>,
    cut_at: Option<&[Entry]>,
) -> Entries {
    let (tx, rx) = mpsc::channel(4);
    match place {
        Place::Local(_) => {
            let local = Arc::clone(local);
            tokio::spawn(async move {
                for page in local.chunks(1000) {
                    if tx.send(Ok(page.to_vec())).await.is_err() {
                        return;
                    }
                }
            });
        }
        Place::S3 { bucket, prefix } => {
            let mut pages = if let Some(names) = cut_at {
                let expected: Vec<String> = names
                    .iter()
                    .map(|e| format!("{prefix}{}", e.name))
                    .collect();
                list_ranges(
                    Arc::clone(client),
                    bucket,
                    prefix,
                    &expected,
                    filters.clone(),
                )
            } else {
                list_selected(
                    Arc::clone(client),
                    bucket,
                    listed(prefix, filters),
                    filters.clone(),
                    4,
                )
            };
            let prefix = prefix.clone();
            tokio::spawn(async move {
                while let Some(page) = pages.recv().await {
                    let page = page.map(|objects| {
                        objects
                            .into_iter()
                            .map(|o| Entry {
                                name: o.key.get(prefix.len()..).unwrap_or("").to_owned(),
                                size: o.size,
                                modified: parse_timestamp(&o.last_modified),
                                etag: o.etag,
                            })
                            .collect()
                    });
                    if tx.send(page).await.is_err() {
                        return;
                    }
                }
            });
        }
    }
    rx
}

/// What an S3 side lists: everything under `prefix`, or under a wildcard source's literal
/// part (`logs/2026-` of `logs/2026-*/*.gz`) when `filters` are bound to one, as s5cmd lists
/// it. That part holds no `/` (the side's prefix ends at the last one), so the selection's base,
/// which names are made relative to, stays `prefix`.
fn listed(prefix: &str, filters: &Filters) -> Selection {
    let bound = filters
        .bound()
        .and_then(|p| Pattern::new(&format!("{}{}", Pattern::escape(prefix), p.as_str())).ok());
    match bound {
        Some(pattern) => Selection::Pattern(pattern),
        None => Selection::Prefix(prefix.to_owned()),
    }
}

/// The files below `dir` that `filters` take, sorted by name (none for a missing directory),
/// and the entries there that are not files ([`crate::Walked::not_files`]).
pub(crate) fn local_entries(
    dir: &Path,
    filters: &Filters,
    links: Links,
) -> Result<(Vec<Entry>, Vec<PathBuf>), TransferError> {
    if !dir.exists() {
        return Ok(Default::default());
    }
    let walked = walk_files(dir, filters, links)?;
    let entries = walked
        .files
        .into_iter()
        .map(|(path, name)| {
            let meta = std::fs::metadata(&path).map_err(at(&path))?;
            Ok(Entry {
                name,
                size: meta.len(),
                modified: meta.modified().ok().and_then(nanos_since_epoch),
                etag: String::new(),
            })
        })
        .collect::<Result<_, TransferError>>()?;
    Ok((entries, walked.not_files))
}

/// One name's situation: only in the source, on both sides, only in the destination.
pub(crate) enum Step {
    New(Entry),
    Both(Entry, Entry),
    Extra(Entry),
}

/// The next name of the merge of two sorted sides.
pub(crate) async fn next_step(
    source: &mut Cursor<'_>,
    destination: &mut Cursor<'_>,
) -> Result<Option<Step>, TransferError> {
    let order = match (source.peek().await?, destination.peek().await?) {
        (None, None) => return Ok(None),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some(s), Some(d)) => s.name.as_bytes().cmp(d.name.as_bytes()),
    };
    Ok(match order {
        Ordering::Less => source.take().map(Step::New),
        Ordering::Greater => destination.take().map(Step::Extra),
        Ordering::Equal => match (source.take(), destination.take()) {
            (Some(s), Some(d)) => Some(Step::Both(s, d)),
            _ => None,
        },
    })
}

/// A side's entries one at a time, checked to come in strictly increasing order.
pub(crate) struct Cursor<'p> {
    pages: Entries,
    page: std::vec::IntoIter<Entry>,
    head: Option<Entry>,
    last: Option<String>,
    place: &'p Place,
}

impl<'p> Cursor<'p> {
    pub(crate) fn new(pages: Entries, place: &'p Place) -> Self {
        Self {
            pages,
            page: Vec::new().into_iter(),
            head: None,
            last: None,
            place,
        }
    }

    async fn peek(&mut self) -> Result<Option<&Entry>, TransferError> {
        if self.head.is_none() {
            self.head = self.pull().await?;
        }
        Ok(self.head.as_ref())
    }

    fn take(&mut self) -> Option<Entry> {
        self.head.take()
    }

    async fn pull(&mut self) -> Result<Option<Entry>, TransferError> {
        loop {
            if let Some(entry) = self.page.next() {
                if let Some(last) = &self.last {
                    if entry.name.as_bytes() <= last.as_bytes() {
                        return Err(TransferError::BadResponse(format!(
                            "the listing of {} is not in key order ({:?} came after {:?}): sync merges sorted listings",
                            self.place.show(""),
                            entry.name,
                            last
                        )));
                    }
                }
                self.last = Some(entry.name.clone());
                return Ok(Some(entry));
            }
            match self.pages.recv().await {
                Some(page) => self.page = page?.into_iter(),
                None => return Ok(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn entry(name: &str) -> Entry {
        Entry {
            name: name.into(),
            size: 1,
            modified: Some(1_000_000_000),
            etag: String::new(),
        }
    }

    fn pages(sides: Vec<Vec<&str>>) -> Entries {
        let (tx, rx) = mpsc::channel(sides.len().max(1));
        for page in sides {
            let page = page.into_iter().map(entry).collect();
            tx.try_send(Ok(page)).unwrap();
        }
        rx
    }

    async fn merge(src: Vec<Vec<&str>>, dst: Vec<Vec<&str>>) -> Result<String, TransferError> {
        let place = Place::Local(PathBuf::from("d"));
        let mut s = Cursor::new(pages(src), &place);
        let mut d = Cursor::new(pages(dst), &place);
        let mut out = Vec::new();
        while let Some(step) = next_step(&mut s, &mut d).await? {
            out.push(match step {
                Step::New(e) => format!("+{}", e.name),
                Step::Both(e, _) => format!("={}", e.name),
                Step::Extra(e) => format!("-{}", e.name),
            });
        }
        Ok(out.join(" "))
    }

    #[tokio::test]
    async fn sorted_sides_merge_across_pages_and_disorder_is_an_error() {
        let merged = merge(
            vec![vec!["a", "a-c"], vec![], vec!["a/b", "z"]],
            vec![vec!["a-c", "a.x"], vec!["a/b", "é"]],
        )
        .await
        .unwrap();
        assert_eq!(merged, "+a =a-c -a.x =a/b +z -é");
        assert_eq!(merge(vec![], vec![]).await.unwrap(), "");
        let err = merge(vec![vec!["a/b"], vec!["a-c"]], vec![])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not in key order"), "{err}");
        let err = merge(vec![], vec![vec!["b", "b"]]).await.unwrap_err();
        assert!(err.to_string().contains("not in key order"), "{err}");
    }
}
