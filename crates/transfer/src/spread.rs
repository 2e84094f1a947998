//! A long listing over a long path, cut into key ranges guessed from its first page and listed
//! side by side.
//!
//! A listing is a page at a time: each page of 1,000 keys (about 300 KB of XML) is a round trip
//! plus its transfer, so far away 10,000 keys take ten in a row and a million take minutes. A
//! download, copy or delete of a prefix takes its objects in any order (only sync needs key
//! order, and cuts at the keys it expects: `ranges.rs`), so once the first page is in and the
//! server is far, the rest of the key space is cut at keys guessed from that page and each
//! range is listed on a connection of its own.
//!
//! The guess: at each position of the page's last key, from the end of the prefix to the first
//! position where the page's first and last keys differ, the last key up to there followed by
//! each character that the page's keys use and that sorts after the last key's own there
//! (`d09/f0009` gives `d0d`, `d1`, `d2`, ..., `d9`, `f`). Range `i` holds the keys after cut
//! `i - 1` up to and including cut `i`, so every key falls in exactly one range whatever the
//! guess: a wrong guess only makes ranges uneven, and a range whose first page is full is cut
//! again the same way, once a one-key request says more of its keys follow.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use slipstream_client::xml::{ListPage, Object};
use slipstream_client::{ListFrom, S3Client};
use slipstream_s3::pattern::Filters;
use tokio::sync::{mpsc, Semaphore, SemaphorePermit};
use tokio::task::JoinSet;

use crate::cut::far_network;
use crate::ranges::{cut_at, range_page};
use crate::select::{taken, Selection};
use crate::TransferError;

/// When a listing is cut into ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// When its first page has more to come and the server is far: a listing connection took
    /// 20 ms or more to connect (near, the pages come quickly and one connection is cheaper for
    /// the server, which walks its keys again from each range's start).
    WhenFar,
    /// Whenever the first page has more to come (tests; a caller that knows the path).
    Always,
    /// Never: one page after another, in key order.
    Never,
}

impl Spread {
    /// Whether a listing of `bucket` is cut into ranges now (asked once its first page is in,
    /// so a listing connection has connected and `WhenFar` knows the distance).
    pub(crate) fn now(self, client: &S3Client, bucket: &str) -> bool {
        match self {
            Spread::Always => true,
            Spread::WhenFar => far_network(client, bucket) == Some(true),
            Spread::Never => false,
        }
    }
}

/// Listing requests in flight at most, over all ranges: connections opened for one listing.
pub(crate) const IN_FLIGHT: usize = 32;
/// Cuts made from one page at most (the coarsest kept: a range left long is cut again).
const MAX_CUTS: usize = 32;
/// How many times a range is cut again at most.
const MAX_DEPTH: usize = 4;

/// The objects of `bucket` that `selection` and `filters` take, as
/// [`crate::list_selected`] lists them but in no particular order: pages go into the returned
/// channel as they arrive, up to `ahead` waiting. With `spread` the listing is cut into ranges
/// after its first page (see the module's doc). A listing error ends the stream with that
/// error; the other ranges stop.
pub fn list_spread(
    client: Arc<S3Client>,
    bucket: &str,
    selection: Selection,
    filters: Filters,
    ahead: usize,
    spread: Spread,
) -> mpsc::Receiver<Result<Vec<Object>, TransferError>> {
    let listing = (client, bucket, selection, filters);
    Lister::start(listing, ahead, spread, |lister| lister.range(None, None, 0))
}

/// What every range of one listing shares; `T` is what it lists (objects, or versions:
/// `version_listing.rs`).
pub(crate) struct Lister<T> {
    pub(crate) client: Arc<S3Client>,
    pub(crate) bucket: String,
    pub(crate) prefix: String,
    pub(crate) selection: Selection,
    pub(crate) filters: Filters,
    pub(crate) tx: mpsc::Sender<Result<Vec<T>, TransferError>>,
    permits: Semaphore,
    spread: Spread,
}

/// A range's listing, or the whole listing's.
pub(crate) type Listed = Pin<Box<dyn Future<Output = Result<(), TransferError>> + Send>>;

impl<T: Send + 'static> Lister<T> {
    /// Lists what `selection` and `filters` take of `bucket` into the returned channel (up to
    /// `ahead` pages waiting): `whole` is the listing of the whole key space; its error ends
    /// the stream.
    pub(crate) fn start(
        (client, bucket, selection, filters): (Arc<S3Client>, &str, Selection, Filters),
        ahead: usize,
        spread: Spread,
        whole: impl FnOnce(Arc<Self>) -> Listed,
    ) -> mpsc::Receiver<Result<Vec<T>, TransferError>> {
        let (tx, rx) = mpsc::channel(ahead.max(1));
        let lister = Arc::new(Lister {
            prefix: selection.list_prefix(),
            client,
            bucket: bucket.to_owned(),
            selection,
            filters,
            tx: tx.clone(),
            permits: Semaphore::new(IN_FLIGHT),
            spread,
        });
        let whole = whole(lister);
        tokio::spawn(async move {
            if let Err(e) = whole.await {
                let _ = tx.send(Err(e)).await;
            }
        });
        rx
    }

    /// Whether this listing is cut into ranges (asked once its first page is in, so a
    /// listing connection has connected).
    pub(crate) fn worth_it(&self) -> bool {
        self.spread.now(&self.client, &self.bucket)
    }

    /// A listing request's place within the listing's [`IN_FLIGHT`].
    pub(crate) async fn permit(&self) -> Result<SemaphorePermit<'_>, TransferError> {
        self.permits
            .acquire()
            .await
            .map_err(|e| TransferError::Io(std::io::Error::other(e)))
    }

    /// Lists `ranges` side by side; the first error stops the others.
    pub(crate) async fn side_by_side(
        ranges: impl IntoIterator<Item = Listed>,
    ) -> Result<(), TransferError> {
        let mut running = JoinSet::new();
        for range in ranges {
            running.spawn(range);
        }
        while let Some(done) = running.join_next().await {
            done.map_err(|e| TransferError::Io(std::io::Error::other(e)))??;
        }
        Ok(())
    }
}

impl Lister<Object> {
    /// Lists the keys after `after` up to and including `upto` (open ends for `None`); its
    /// first page full, cuts the rest into ranges listed side by side (`depth` cuts so far).
    /// `Ok` also when nobody reads on.
    fn range(self: Arc<Self>, after: Option<String>, upto: Option<String>, depth: usize) -> Listed {
        Box::pin(async move {
            let mut token: Option<String> = None;
            loop {
                // Nobody reads on (the command failed or stopped): no more requests.
                if self.tx.is_closed() {
                    return Ok(());
                }
                let from = range_page(after.as_deref(), token.as_deref(), None);
                let (permit, page) = self.page(&from).await?;
                let mut objects = page.objects;
                let ended = cut_at(&mut objects, upto.as_deref()) || page.continuation.is_none();
                // A range's first page, full: the rest is cut after its last key.
                let split = if !ended && token.is_none() && depth < MAX_DEPTH && self.worth_it() {
                    let keys: Vec<&str> = objects.iter().map(|o| o.key.as_str()).collect();
                    let cuts = guess_cuts(&self.prefix, &keys, upto.as_deref());
                    keys.last()
                        .filter(|_| !cuts.is_empty())
                        .map(|last| (last.to_string(), cuts))
                } else {
                    None
                };
                let objects = taken(&self.selection, &self.filters, objects);
                // The permit is held until the page is taken: pages waiting are bounded too.
                if !objects.is_empty() && self.tx.send(Ok(objects)).await.is_err() {
                    return Ok(());
                }
                drop(permit);
                if ended {
                    return Ok(());
                }
                if let Some((last, cuts)) = split {
                    if !self.more_within(&last, upto.as_deref()).await? {
                        return Ok(());
                    }
                    return self.split(last, cuts, upto, depth).await;
                }
                token = page.continuation;
            }
        })
    }

    /// Lists the keys after `last` up to `upto` in the ranges `cuts` make, side by side; the
    /// first error stops the others.
    async fn split(
        self: Arc<Self>,
        last: String,
        cuts: Vec<String>,
        upto: Option<String>,
        depth: usize,
    ) -> Result<(), TransferError> {
        let starts: Vec<String> = std::iter::once(last).chain(cuts.iter().cloned()).collect();
        let ends = cuts.into_iter().map(Some).chain(std::iter::once(upto));
        let ranges = starts.into_iter().zip(ends);
        Self::side_by_side(
            ranges.map(|(after, upto)| Arc::clone(&self).range(Some(after), upto, depth + 1)),
        )
        .await
    }

    /// Whether a key follows `last` up to and including `upto`, asked for one key. A range
    /// whose first page was full often held just that page (a guess that fell on a page's
    /// worth of keys, as `d01` to `d02` over `d01000`...`d01999` does): cut again, each of its
    /// ranges would list a full page from past its end, 1,000 keys of the next range that the
    /// server walks and sends over the long path for nothing. The one-key answer costs a round
    /// trip where the range goes on, and saves those pages where it does not.
    async fn more_within(&self, last: &str, upto: Option<&str>) -> Result<bool, TransferError> {
        let Some(upto) = upto else {
            return Ok(true);
        };
        let (_permit, page) = self.page(&range_page(Some(last), None, Some(1))).await?;
        Ok(page.objects.first().is_some_and(|o| o.key.as_str() <= upto))
    }

    /// One listing request `from`, within the listing's [`IN_FLIGHT`]: the page, and the permit
    /// the caller holds until it is done with the page.
    async fn page(
        &self,
        from: &ListFrom<'_>,
    ) -> Result<(SemaphorePermit<'_>, ListPage), TransferError> {
        let permit = self.permit().await?;
        let page = self
            .client
            .list_objects_v2_from(&self.bucket, &self.prefix, from)
            .await?;
        Ok((permit, page))
    }
}

/// Where to cut the keys after the last of `keys` (a page in key order, under `prefix`) and
/// up to `upto`: see the module's doc. Sorted, each after the last key and before `upto`.
pub(crate) fn guess_cuts(prefix: &str, keys: &[&str], upto: Option<&str>) -> Vec<String> {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return Vec::new();
    };
    let start = prefix.len();
    if !last.starts_with(prefix) || last.len() <= start {
        return Vec::new();
    }
    let mut alphabet = [false; 128];
    for key in keys {
        for &b in key.as_bytes().get(start..).unwrap_or_default() {
            if let Some(seen) = alphabet.get_mut(usize::from(b)) {
                *seen = true;
            }
        }
    }
    let differ = first
        .bytes()
        .zip(last.bytes())
        .skip(start)
        .position(|(a, b)| a != b)
        .map_or(first.len().min(last.len()), |i| i + start)
        .min(last.len() - 1);
    let mut cuts = Vec::new();
    for q in start..=differ {
        if !last.is_char_boundary(q) {
            continue;
        }
        let here = last.as_bytes()[q];
        for c in (here.saturating_add(1)..128).filter(|&c| alphabet[usize::from(c)]) {
            let mut cut = String::with_capacity(q + 1);
            cut.push_str(&last[..q]);
            cut.push(char::from(c));
            if upto.map_or(true, |u| cut.as_str() < u) && cuts.len() < MAX_CUTS {
                cuts.push(cut);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_follow_the_characters_the_page_uses_after_its_last_key() {
        // The first page of 10,000 keys in 100 directories of 100.
        let page: Vec<String> = (0..1000)
            .map(|i| format!("seed/d{:02}/f{:07}", i / 100, i % 100))
            .collect();
        let keys: Vec<&str> = page.iter().map(String::as_str).collect();
        let cuts = guess_cuts("seed/", &keys, None);
        assert!(cuts.iter().all(|c| c.as_str() > keys[999]), "{cuts:?}");
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        for want in ["seed/d1", "seed/d5", "seed/d9", "seed/f"] {
            assert!(cuts.iter().any(|c| c == want), "{want} in {cuts:?}");
        }
        // Within a range, no cut reaches its end.
        let cuts = guess_cuts("seed/", &keys, Some("seed/d1"));
        assert!(cuts.iter().all(|c| c.as_str() < "seed/d1"), "{cuts:?}");
        // Nothing to cut by: one key, or keys outside the prefix.
        assert!(guess_cuts("seed/", &["seed/"], None).is_empty());
        assert!(guess_cuts("other/", &keys, None).is_empty());
        assert!(guess_cuts("seed/", &[], None).is_empty());
        // Random hex names: cut at the next hex digits of the first position.
        let hex = ["p/00a1", "p/03f2", "p/0c7e"];
        let cuts = guess_cuts("p/", &hex, None);
        assert!(cuts.contains(&"p/1".to_owned()) && cuts.contains(&"p/f".to_owned()));
        assert!(cuts.len() <= MAX_CUTS);
        // A key with characters beyond ASCII: cuts stay valid UTF-8 and after it.
        let odd = ["p/ä/1", "p/é/2"];
        let cuts = guess_cuts("p/", &odd, None);
        assert!(cuts.iter().all(|c| c.as_str() > "p/é/2"), "{cuts:?}");
    }
}
