//! Which objects a many-object command works on, listed page by page into a channel so the
//! work starts with the first page instead of after the whole listing (a million keys are a
//! thousand pages, minutes at a distance).
//!
//! A selection is one object (`s3://b/k`), everything under a prefix (`s3://b/dir/` with
//! `--recursive`), or the keys a wildcard matches (`s3://b/logs/2026-*/*.gz`: the listing is
//! of the literal text before the first wildcard). `--include`/`--exclude` filters then apply
//! to each key's name relative to the selection's base.

use std::sync::Arc;

use slipstream_client::xml::Object;
use slipstream_client::S3Client;
use slipstream_s3::pattern::{Filters, Pattern};
use tokio::sync::mpsc;

use crate::TransferError;

/// What a command's `s3://` source names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// One object, named exactly.
    Object(String),
    /// Every object whose key starts with the prefix.
    Prefix(String),
    /// Every object whose whole key matches.
    Pattern(Pattern),
}

impl Selection {
    /// How `key` reads: a wildcard pattern if it has one; else a prefix with `recursive` (a
    /// `/` added as the AWS CLI adds it, so `dir` does not take `dir2/`; none to an empty key,
    /// the whole bucket); else one object.
    pub fn parse(key: &str, recursive: bool) -> Result<Self, TransferError> {
        Self::parse_as(key, recursive, false)
    }

    /// [`Selection::parse`], or with `raw` the key taken literally: `*`, `?` and `[` are
    /// characters of the key (s5cmd's `--raw`), for keys that contain them.
    pub fn parse_as(key: &str, recursive: bool, raw: bool) -> Result<Self, TransferError> {
        if !raw && Pattern::has_wildcard(key) {
            let pattern = Pattern::new(key).map_err(|e| TransferError::Invalid(e.to_string()))?;
            return Ok(Selection::Pattern(pattern));
        }
        if recursive {
            let mut prefix = key.to_owned();
            if !prefix.is_empty() && !prefix.ends_with('/') {
                prefix.push('/');
            }
            return Ok(Selection::Prefix(prefix));
        }
        Ok(Selection::Object(key.to_owned()))
    }

    /// The part of every key that names the selection rather than the object: the prefix, or
    /// the pattern's literal text up to its last `/`. Names relative to it are what filters see
    /// and what a destination appends.
    pub fn base(&self) -> &str {
        match self {
            Selection::Object(key) => directory(key),
            Selection::Prefix(prefix) => prefix,
            Selection::Pattern(p) => directory(p.literal_prefix()),
        }
    }

    /// The name of `key` relative to [`Selection::base`].
    pub fn relative<'k>(&self, key: &'k str) -> &'k str {
        key.strip_prefix(self.base()).unwrap_or(key)
    }

    /// The prefix a listing of the selection asks for.
    pub fn list_prefix(&self) -> String {
        match self {
            Selection::Object(key) => key.clone(),
            Selection::Prefix(prefix) => prefix.clone(),
            Selection::Pattern(p) => p.literal_prefix().to_owned(),
        }
    }

    /// Whether `key` is one of the selection's (filters aside).
    pub fn takes(&self, key: &str) -> bool {
        match self {
            Selection::Object(k) => k == key,
            Selection::Prefix(p) => key.starts_with(p.as_str()),
            Selection::Pattern(p) => p.matches(key),
        }
    }
}

/// `key` up to and including its last `/` (empty without one).
fn directory(key: &str) -> &str {
    key.rfind('/').map_or("", |i| &key[..=i])
}

/// Lists the objects of `bucket` that `selection` and `filters` take, a page at a time, into
/// the returned channel (pages fetched ahead while the receiver works, up to `ahead` pages).
/// "Directory" markers (keys ending in `/`) are left out. A listing error ends the stream with
/// that error.
pub fn list_selected(
    client: Arc<S3Client>,
    bucket: &str,
    selection: Selection,
    filters: Filters,
    ahead: usize,
) -> mpsc::Receiver<Result<Vec<Object>, TransferError>> {
    let (tx, rx) = mpsc::channel(ahead.max(1));
    let bucket = bucket.to_owned();
    tokio::spawn(async move {
        let prefix = selection.list_prefix();
        let mut token = None;
        loop {
            let page = match client
                .list_objects_v2(&bucket, &prefix, None, token.as_deref())
                .await
            {
                Ok(page) => page,
                Err(e) => {
                    let _ = tx.send(Err(e.into())).await;
                    return;
                }
            };
            let taken = taken(&selection, &filters, page.objects);
            if !taken.is_empty() && tx.send(Ok(taken)).await.is_err() {
                return;
            }
            match page.continuation {
                Some(t) => token = Some(t),
                None => return,
            }
        }
    });
    rx
}

/// The objects of a page that `selection` and `filters` take, "directory" markers (keys ending
/// in `/`) left out.
pub(crate) fn taken(selection: &Selection, filters: &Filters, objects: Vec<Object>) -> Vec<Object> {
    objects
        .into_iter()
        .filter(|o| {
            !o.key.ends_with('/')
                && selection.takes(&o.key)
                && filters.takes(selection.relative(&o.key))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_read_as_the_aws_cli_and_s5cmd_read_them() {
        let s = Selection::parse("dir", true).unwrap();
        assert_eq!(s, Selection::Prefix("dir/".into()));
        assert!(s.takes("dir/a") && !s.takes("dir2/a"));
        assert_eq!(s.relative("dir/x/y"), "x/y");
        assert_eq!(
            Selection::parse("", true).unwrap(),
            Selection::Prefix(String::new())
        );
        let o = Selection::parse("a/b.txt", false).unwrap();
        assert!(o.takes("a/b.txt") && !o.takes("a/b.txt2"));
        assert_eq!(o.relative("a/b.txt"), "b.txt");
        assert_eq!(
            Selection::parse("top", false).unwrap().relative("top"),
            "top"
        );
        let p = Selection::parse("logs/2026-*/*.gz", false).unwrap();
        assert_eq!(p.list_prefix(), "logs/2026-");
        assert_eq!(p.base(), "logs/");
        assert!(p.takes("logs/2026-01/a.gz") && !p.takes("logs/2026-01/a.txt"));
        assert_eq!(p.relative("logs/2026-01/a.gz"), "2026-01/a.gz");
        assert_eq!(Selection::parse("*.gz", false).unwrap().base(), "");
        assert!(Selection::parse("a[b", false).is_err());
        let raw = Selection::parse_as("a[1]*.txt", false, true).unwrap();
        assert!(raw.takes("a[1]*.txt") && !raw.takes("a1x.txt"));
    }
}
