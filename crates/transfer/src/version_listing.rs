//! Every version a selection names, page by page into a channel (`rm --all-versions`, which
//! deletes them as they come), and, for work that takes them in any order (`du
//! --all-versions`), from a far server cut into key ranges listed side by side, as `spread.rs`
//! cuts a listing of objects: `ListObjectVersions` has no continuation token a second
//! connection could take, but `key-marker` alone starts a listing after a key, so a range is
//! the keys after one cut up to and including the next, guessed from the first page as
//! `spread.rs` guesses them.
//!
//! What comes out may be deleted at once: the versions of the key a page ends with are held
//! back until that range's next page is in. A server that looks its next page up from the
//! marker's entry (versitygw) would otherwise lose the rest of that key when the consumer
//! deletes the entry first, and one key's versions stay in one page, so batches cut between
//! keys never split them.

use std::sync::Arc;

use slipstream_client::{S3Client, Version, VersionMarker};
use slipstream_s3::pattern::Filters;
use tokio::sync::mpsc;

use crate::select::Selection;
use crate::spread::{guess_cuts, Listed, Lister, Spread};
use crate::TransferError;

/// The versions (and delete markers) of `bucket` that `selection` and `filters` take, folder
/// markers included, in no particular order once the listing is cut (in key order, newest
/// first for each key, while it is not): pages go into the returned channel as they arrive,
/// up to `ahead` waiting. A listing error ends the stream with that error.
pub fn list_versions_spread(
    client: Arc<S3Client>,
    bucket: &str,
    (selection, filters): (Selection, Filters),
    ahead: usize,
    spread: Spread,
) -> mpsc::Receiver<Result<Vec<Version>, TransferError>> {
    let listing = (client, bucket, selection, filters);
    Lister::start(listing, ahead, spread, |lister| {
        lister.range(None, None, (Vec::new(), true))
    })
}

impl Lister<Version> {
    /// Lists the versions from `after` (a marker: a key, and the version within it to go on
    /// after) up to and including the key `upto`, `held` versions going out with the first
    /// page; the listing's first page (`first`), when full and far, cuts the rest into ranges.
    fn range(
        self: Arc<Self>,
        mut after: Option<VersionMarker>,
        upto: Option<String>,
        (mut held, first): (Vec<Version>, bool),
    ) -> Listed {
        Box::pin(async move {
            loop {
                if self.tx.is_closed() {
                    return Ok(());
                }
                let page = {
                    let _permit = self.permit().await?;
                    let client = &self.client;
                    client
                        .list_object_versions(&self.bucket, &self.prefix, None, after.as_ref())
                        .await?
                };
                let mut versions = std::mem::take(&mut held);
                versions.extend(page.versions);
                // Keys past `upto` belong to the next range.
                let listed = versions.len();
                if let Some(upto) = &upto {
                    versions.retain(|v| v.key <= *upto);
                }
                let next = page.next.filter(|_| versions.len() == listed);
                let far = first && self.worth_it();
                let cuts = match (&next, far) {
                    (Some(_), true) => {
                        let mut keys: Vec<&str> = versions.iter().map(|v| v.key.as_str()).collect();
                        keys.dedup();
                        guess_cuts(&self.prefix, &keys, None)
                    }
                    _ => Vec::new(),
                };
                if let Some(next) = &next {
                    let cut = versions.len()
                        - versions
                            .iter()
                            .rev()
                            .take_while(|v| v.key == next.key)
                            .count();
                    held = versions.split_off(cut);
                }
                let taken: Vec<Version> = versions
                    .into_iter()
                    .filter(|v| {
                        self.selection.takes(&v.key)
                            && self.filters.takes(self.selection.relative(&v.key))
                    })
                    .collect();
                if !taken.is_empty() && self.tx.send(Ok(taken)).await.is_err() {
                    return Ok(());
                }
                let Some(next) = next else {
                    return Ok(());
                };
                if !cuts.is_empty() {
                    return self.split(next, cuts, held).await;
                }
                after = Some(next);
            }
        })
    }

    /// The keys from `next` on, in the ranges `cuts` make, side by side: the first goes on
    /// from the marker (with the versions `held` back), each other starts after a cut.
    async fn split(
        self: Arc<Self>,
        next: VersionMarker,
        cuts: Vec<String>,
        held: Vec<Version>,
    ) -> Result<(), TransferError> {
        let ends = cuts.iter().cloned().map(Some).chain(std::iter::once(None));
        let starts = std::iter::once(next).chain(cuts.iter().map(|cut| VersionMarker {
            key: cut.clone(),
            ..VersionMarker::default()
        }));
        let mut held = Some(held);
        let ranges = starts.zip(ends).map(|(start, upto)| {
            let carried = held.take().unwrap_or_default();
            Arc::clone(&self).range(Some(start), upto, (carried, false))
        });
        Self::side_by_side(ranges).await
    }
}
