//! The transfer engine: downloads and uploads that fill the link.
//!
//! One TCP stream cannot fill a long, fat link, so an object moves as parts over several pooled
//! connections at once. Downloads learn the size and ETag from a HEAD sent together with the
//! GET of the first bytes (one round trip for a small object), then fetch the other ranges in
//! parallel, each pinned to the ETag (`If-Match`) so an object replaced mid-download is an
//! error rather than a file stitched from two versions; the file is written at offsets into a temporary file
//! that is renamed only once complete and checked. Uploads go in one `PutObject` below a
//! threshold and as a multipart upload above it, parts read and sent in parallel, each with its
//! checksum (CRC32C unless asked otherwise); an upload that fails is aborted so no parts linger.
//! Downloads check the object's whole-object checksum (CRC64NVME, CRC32C or CRC32) when it has
//! one, combining the CRCs of the parts.
//!
//! Memory is bounded by `concurrency x part_size`: no more than `concurrency` parts are in
//! flight, each held at most whole (file downloads hold a 1 MiB batch of frames at a time). A
//! download into memory holds the object itself, once: parts land in their place in it.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use slipstream_client::{ChecksumAlgorithm, CustomerKey};

mod case_conflict;
mod cleanup;
mod copy;
mod cut;
mod delete;
mod download;
mod error;
mod file_time;
mod flat_names;
mod flight;
mod headers;
mod many;
mod memory;
mod offset_writer;
mod overwrite;
mod pool;
mod range_frames;
mod ranges;
mod runtime;
mod select;
mod sides;
mod source;
mod spread;
mod stall;
mod stream;
mod sync;
mod through;
mod upload;
mod version_listing;
mod versions;
mod walk;

pub use case_conflict::{CaseConflict, CaseConflictSeen};
pub use cleanup::{finish_cleanups, finish_cleanups_within, CLEANUP_WAIT};
pub use copy::{copy_listed, copy_object, CopiedObject, CopySettings, CopySource, MAX_COPY_OBJECT};
pub use delete::{delete_all, delete_listed, DeleteReport, Deleted};
pub use download::{download_to_file, Downloaded};
pub use error::TransferError;
pub use flat_names::last_name;
pub use headers::{Grants, MetadataDirective, ObjectHeaders};
pub use many::{
    download_prefix, objects_in_flight, upload_directory, upload_objects_in_flight, Many,
    ManyOptions, ObjectDone, ObjectFailed, FAR_OBJECTS, FAR_UPLOAD_OBJECTS, LARGE_OBJECT,
    LOCAL_ANSWER, MID_OBJECTS, NEAR_LARGE_OBJECTS, NEAR_OBJECTS,
};
pub use memory::{download_to_memory, MemoryDownload};
pub use overwrite::{Overwrite, Stat};
pub use ranges::{list_ranges, worth_cutting};
pub use runtime::{blocking_threads, io_runtime};
pub use select::{list_selected, Selection};
pub use spread::{list_spread, Spread};
pub use stream::{
    download_stream_to_writer, download_to_writer, upload_from_reader, StreamOf, StreamSignals,
};
pub use sync::{
    differs, sync, Act, Action, ActionDone, Compare, Direction, Entry, Place, SyncOptions, Synced,
};
pub use through::{copy_listed_through, copy_through};
pub use upload::{upload_bytes, upload_file, Uploaded};
pub use version_listing::list_versions_spread;
pub use versions::{delete_versions_listed, VersionName, VersionReport};
pub use walk::{glob_root, walk_files, Links, Walked};

/// Bytes moved so far, and the total once known, for progress displays. The engine adds a
/// part's bytes when the part is written (downloads) or accepted by S3 (uploads).
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    /// `u64::MAX` until known.
    total: AtomicU64,
    /// Set by many-object transfers: the total is theirs, not each object's.
    total_fixed: AtomicBool,
}

impl Progress {
    /// A counter with the total unknown.
    pub fn new() -> Self {
        Self {
            done: AtomicU64::new(0),
            total: AtomicU64::new(u64::MAX),
            total_fixed: AtomicBool::new(false),
        }
    }

    /// Bytes moved so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// The size of the transfer, when known (not for a stream being uploaded).
    pub fn total(&self) -> Option<u64> {
        Some(self.total.load(Ordering::Relaxed)).filter(|t| *t != u64::MAX)
    }

    pub(crate) fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn set_total(&self, n: u64) {
        if !self.total_fixed.load(Ordering::Relaxed) {
            self.total.store(n, Ordering::Relaxed);
        }
    }

    /// The total of a many-object transfer; later per-object totals are ignored.
    pub(crate) fn fix_total(&self, n: u64) {
        self.total.store(n, Ordering::Relaxed);
        self.total_fixed.store(true, Ordering::Relaxed);
    }
}

/// How objects are cut and how many parts move at once.
#[derive(Clone, Debug)]
pub struct TransferOptions {
    /// Bytes per part (S3: 5 MiB to 5 GiB, except the last part).
    pub part_size: u64,
    /// Parts in flight at once.
    pub concurrency: usize,
    /// Uploads of this size or more use a multipart upload.
    pub multipart_threshold: u64,
    /// Where to count the bytes moved, if anyone watches.
    pub progress: Option<Arc<Progress>>,
    /// The checksum uploads send with every part and object (downloads check whichever the
    /// object has).
    pub checksum: ChecksumAlgorithm,
    /// A transfer fails when no byte has moved on any connection for this long (the server
    /// froze or the path went dark), retries included; `Duration::ZERO`: never. See `stall.rs`.
    pub stall_timeout: Duration,
    /// Parts in flight across every object of a many-object transfer, on top of each object's
    /// `concurrency`: one budget, so objects in flight and parts per object never multiply into
    /// `objects x concurrency x part_size` of memory. `None` for a single transfer; `many.rs`
    /// sets it.
    pub shared_parts: Option<Arc<tokio::sync::Semaphore>>,
    /// KiB of whole object bodies held at once across a many-object copy between services,
    /// where each object below the multipart threshold is received whole before it is put:
    /// without it memory is `objects x object size` (256 objects just under 8 MiB: 2 GiB).
    /// `None` for a single transfer; `many.rs` sets it, as large as the part budget (one set
    /// by a caller must hold at least one part, the largest body it is asked for).
    pub shared_bodies: Option<Arc<tokio::sync::Semaphore>>,
    /// Content type (given or guessed), cache control, metadata and storage class of the
    /// objects uploads write.
    pub headers: ObjectHeaders,
    /// The customer key (SSE-C) of the objects a many-object download, sync or copy through
    /// this machine reads; a single download takes it in its
    /// [`ObjectKey`](slipstream_client::ObjectKey).
    pub source_customer_key: Option<CustomerKey>,
    /// Give a file a download writes its object's time (`LastModified`) as its modification
    /// time, as the AWS CLI's `cp` and `sync` do, so that a later sync in either direction
    /// finds the two equal (`file_time.rs`); `false` leaves the time of the download, as
    /// boto3's `download_file` does. `sync` sets it whatever this says. A file system that
    /// refuses to set a time does not fail the download: it is told to `warn`.
    pub keep_modified_time: bool,
    /// Told what went wrong without failing the transfer (a downloaded file that kept the time
    /// of its download), for the caller to print as the AWS CLI prints its warnings.
    pub warn: Option<Warn>,
}

/// Where a transfer says what went wrong without failing it (see [`TransferOptions::warn`]).
#[derive(Clone)]
pub struct Warn(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for Warn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Warn")
    }
}

impl TransferOptions {
    pub(crate) fn add_progress(&self, n: u64) {
        if let Some(p) = &self.progress {
            p.add(n);
        }
    }

    pub(crate) fn set_total(&self, n: u64) {
        if let Some(p) = &self.progress {
            p.set_total(n);
        }
    }

    pub(crate) fn tell(&self, text: &str) {
        if let Some(w) = &self.warn {
            (w.0)(text);
        }
    }
}

impl Default for TransferOptions {
    /// 8 MiB parts, 16 at a time: 128 MiB in flight, enough to fill about 10 Gbit/s at 100 ms.
    fn default() -> Self {
        Self {
            part_size: 8 << 20,
            concurrency: 16,
            multipart_threshold: 8 << 20,
            progress: None,
            checksum: ChecksumAlgorithm::default(),
            stall_timeout: DEFAULT_STALL_TIMEOUT,
            shared_parts: None,
            shared_bodies: None,
            headers: ObjectHeaders::default(),
            source_customer_key: None,
            keep_modified_time: false,
            warn: None,
        }
    }
}

/// Two minutes without a byte moving: longer than any one request's timeouts (a part whose
/// connection went quiet is abandoned after 30 s and fetched again), short enough that a frozen
/// server is reported while someone is still watching.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The smallest part S3 accepts, except the last one.
pub const MIN_PART_SIZE: u64 = 5 << 20;
/// The most parts one multipart upload may have.
pub const MAX_PARTS: u64 = 10_000;

/// Byte ranges `start..end` covering `size` in parts of `part_size`.
pub(crate) fn parts(size: u64, part_size: u64) -> Vec<(u64, u64)> {
    let step = part_size.max(1);
    (0..size.div_ceil(step))
        .map(|i| (i * step, ((i + 1) * step).min(size)))
        .collect()
}

/// The ranges of a download of `size` bytes with `concurrency` parts in flight: see
/// [`staggered_ranges`]; parts may shrink to an eighth of `part_size` at the end.
pub(crate) fn download_ranges(size: u64, part_size: u64, concurrency: usize) -> Vec<(u64, u64)> {
    let step = part_size.max(1);
    staggered_ranges(size, step, concurrency, (step / 8).max(1))
}

/// The ranges of a multipart upload of `size` bytes: see [`staggered_ranges`], with no part but
/// the last under S3's 5 MiB minimum, and plain parts if staggering would pass 10,000 parts.
pub(crate) fn upload_ranges(size: u64, part_size: u64, concurrency: usize) -> Vec<(u64, u64)> {
    let step = part_size.max(MIN_PART_SIZE);
    let ranges = staggered_ranges(size, step, concurrency, MIN_PART_SIZE);
    if ranges.len() as u64 > MAX_PARTS {
        return parts(size, step);
    }
    ranges
}

/// Ranges for `concurrency` connections that keep a long link full. Small objects (under two
/// parts per connection) get plain `part_size` parts. Larger ones get two changes, both seen on
/// the emulated 100 ms link (docs/BENCHMARKS.md):
/// - the first `concurrency` parts grow from `min` to a whole part, so the connections do not
///   all finish their first part (and wait a round trip for the next) at the same moment;
/// - near the end each part is the remaining bytes over `concurrency` (guided self-scheduling),
///   shrinking down to `min`, so the connections run out of work together instead of the last
///   few full-size parts finishing alone at a fraction of the link.
fn staggered_ranges(size: u64, step: u64, concurrency: usize, min: u64) -> Vec<(u64, u64)> {
    let c = (concurrency as u64).max(1);
    let min = min.clamp(1, step);
    if size < 2 * c * step {
        return parts(size, step);
    }
    let mut out = Vec::new();
    let mut at = 0;
    for k in 0..c {
        let len = min + (step - min) * k / (c - 1).max(1);
        out.push((at, at + len));
        at += len;
    }
    while at < size {
        let remaining = size - at;
        // Only the last part can be under `min` (as S3 requires of uploads).
        let len = (remaining / c).clamp(min, step).min(remaining);
        out.push((at, at + len));
        at += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_ranges_cover_the_object_once_and_taper() {
        let mib = 1 << 20;
        // Small objects: plain parts.
        assert_eq!(download_ranges(29, 10, 4), parts(29, 10));
        assert_eq!(
            download_ranges(16 * mib, 8 * mib, 16),
            parts(16 * mib, 8 * mib)
        );
        for (size, part, c) in [
            (1u64 << 30, 8 * mib, 16),
            ((5 << 30) + 7, 8 * mib, 32),
            (300 * mib + 1, 5 * mib, 4),
        ] {
            let r = download_ranges(size, part, c);
            assert_eq!(r[0].0, 0);
            assert_eq!(r.last().map(|x| x.1), Some(size));
            assert!(r.windows(2).all(|w| w[0].1 == w[1].0), "contiguous");
            assert!(
                r.iter().all(|(s, e)| e > s && e - s <= part),
                "no part over part_size"
            );
            // The first wave is staggered: from a small part up to a whole one.
            let first: Vec<u64> = r[..c].iter().map(|(s, e)| e - s).collect();
            assert!(first.windows(2).all(|w| w[0] <= w[1]));
            assert!(first[0] <= part / 4 && first[c - 1] == part, "{first:?}");
            // The tail tapers: the last parts are smaller than a part.
            assert!(r[r.len() - c..].iter().all(|(s, e)| e - s < part));
            // Not many more requests than plain parts.
            assert!(r.len() < parts(size, part).len() + 6 * c, "{}", r.len());
        }
    }

    #[test]
    fn upload_ranges_keep_every_part_but_the_last_at_5_mib() {
        let mib = 1 << 20;
        for (size, part, c) in [
            (1u64 << 30, 8 * mib, 16),
            (200 * mib + 3, 5 * mib, 4),
            (100 * mib, 64 * mib, 16),
        ] {
            let r = upload_ranges(size, part, c);
            assert_eq!((r[0].0, r.last().map(|x| x.1)), (0, Some(size)));
            assert!(r.windows(2).all(|w| w[0].1 == w[1].0), "contiguous");
            let lens: Vec<u64> = r.iter().map(|(s, e)| e - s).collect();
            assert!(lens[..lens.len() - 1].iter().all(|l| *l >= MIN_PART_SIZE));
            assert!(lens.iter().all(|l| *l <= part.max(MIN_PART_SIZE)));
        }
        // 8 MiB parts of 1 GiB over 16 connections: staggered from 5 MiB, tapered at the end.
        let r = upload_ranges(1 << 30, 8 * mib, 16);
        let first: Vec<u64> = r[..16].iter().map(|(s, e)| e - s).collect();
        assert!(
            first.windows(2).all(|w| w[0] < w[1]) && first[15] == 8 * mib,
            "{first:?}"
        );
        assert!(r[r.len() - 8..].iter().all(|(s, e)| e - s < 8 * mib));
        // Past 10,000 parts the plain cut is kept.
        let huge = upload_ranges(10_000 * 8 * mib, 8 * mib, 16);
        assert_eq!(huge, parts(10_000 * 8 * mib, 8 * mib));
    }

    #[test]
    fn parts_cover_the_object_once() {
        assert!(parts(0, 10).is_empty());
        assert_eq!(parts(1, 10), [(0, 1)]);
        assert_eq!(parts(10, 10), [(0, 10)]);
        assert_eq!(parts(11, 10), [(0, 10), (10, 11)]);
        assert_eq!(parts(29, 10), [(0, 10), (10, 20), (20, 29)]);
    }
}
