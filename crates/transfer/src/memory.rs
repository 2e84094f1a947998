//! Downloads into memory: every part received straight into its place in the caller's buffer.
//!
//! Going through the in-order stream path (a window of part buffers, then appended to a
//! growing `Vec`) copied each byte twice more than needed, plus the `Vec`'s regrowth, and a
//! caller that wants the bytes in a buffer of its own (Python's `bytes`) paid one copy more.
//! Here a download is started first ([`MemoryDownload::start`]: size, ETag, the first bytes on
//! their way), so the caller can allocate exactly the object's size, and then
//! [`MemoryDownload::read_into`] cuts that buffer into the parts' places and fills them in
//! parallel. The parts run as futures of the calling task, not spawned tasks, since they
//! borrow the buffer; the sockets are still served by the runtime's threads, and the one copy
//! per byte left runs on the caller's.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use slipstream_client::{ChecksumAlgorithm, ObjectInfo, ObjectKey, ObjectStream, S3Client};

use crate::cut::file_cut;
use crate::source::{
    check_checksum, next_chunk, short, start, start_range, whole_first_len, First, Source,
};
use crate::stall;
use crate::TransferError;
use crate::{Downloaded, Progress, TransferOptions};

/// Downloads `bucket/key` into memory, parts in parallel, checking the whole-object checksum
/// when the object has one.
pub async fn download_to_memory<'k>(
    client: Arc<S3Client>,
    bucket: &str,
    key: impl Into<ObjectKey<'k>>,
    opts: TransferOptions,
) -> Result<Bytes, TransferError> {
    let key = key.into();
    let download = MemoryDownload::start(client, bucket, key, opts).await?;
    let size = usize::try_from(download.size()).map_err(|_| {
        TransferError::Invalid(format!(
            "{key}: {} bytes do not fit in memory",
            download.size()
        ))
    })?;
    let mut data = BytesMut::zeroed(size);
    download.read_into(&mut data).await?;
    Ok(data.freeze())
}

/// A download into memory whose size is known and whose bytes are still to come.
pub struct MemoryDownload {
    info: ObjectInfo,
    source: Source,
    concurrency: usize,
    progress: Option<Arc<Progress>>,
    stall_timeout: Duration,
}

impl MemoryDownload {
    /// Learns the object's size and ETag; its first bytes are already being sent. `key` names
    /// a version of the object, or (a `&str`) the current one.
    pub async fn start<'k>(
        client: Arc<S3Client>,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
        opts: TransferOptions,
    ) -> Result<Self, TransferError> {
        Self::start_listed(client, (bucket, key.into(), None), opts).await
    }

    /// [`MemoryDownload::start`] of an object a listing named, `listed` its size there: a
    /// small one is asked for whole, without a HeadObject beside the GET.
    pub(crate) async fn start_listed(
        client: Arc<S3Client>,
        (bucket, key, listed): (&str, ObjectKey<'_>, Option<u64>),
        opts: TransferOptions,
    ) -> Result<Self, TransferError> {
        let asked = Instant::now();
        let first_part = start(
            &client,
            bucket,
            key,
            whole_first_len(opts.part_size),
            listed,
        );
        let (info, first) = stall::bounded(&client, opts.stall_timeout, true, first_part).await?;
        Ok(Self::cut(
            &client,
            (bucket, key),
            info,
            (first, 0),
            asked,
            opts,
        ))
    }

    /// [`MemoryDownload::start`] of the bytes `range` (start, end exclusive) of `bucket/key`.
    /// The first GET asks for the range's first part, and its `Content-Range` says where
    /// the object ends (a range that runs past it is cut short, as S3 cuts it); the rest is cut
    /// into parts fetched in parallel, as a whole object's would be, pinned to that answer's
    /// ETag. No whole-object checksum applies to a range.
    pub async fn start_range<'k>(
        client: Arc<S3Client>,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
        (start, end): (u64, u64),
        opts: TransferOptions,
    ) -> Result<Self, TransferError> {
        let key = key.into();
        let asked = Instant::now();
        let whole = (whole_first_len(opts.part_size), opts.part_size);
        let first = start_range(&client, bucket, key, ((start, end), None), whole);
        let (info, first) = stall::bounded(&client, opts.stall_timeout, true, first).await?;
        Ok(Self::cut(
            &client,
            (bucket, key),
            info,
            (Some(first), start),
            asked,
            opts,
        ))
    }

    /// The download of what `info` describes, its first answer in: cut into parts for the
    /// distance the first answer's time (since `asked`) shows, `at` bytes into the object
    /// (a range's start; 0 for a whole object).
    fn cut(
        client: &Arc<S3Client>,
        (bucket, key): (&str, ObjectKey<'_>),
        info: ObjectInfo,
        (first, at): (Option<First>, u64),
        asked: Instant,
        opts: TransferOptions,
    ) -> Self {
        opts.set_total(info.size);
        // As for files (the object is held whole anyway, so longer parts cost no memory).
        let (part_size, concurrency) = file_cut(asked.elapsed(), &opts);
        let source = Source::new(client, bucket, key, &info, first, part_size, concurrency);
        Self {
            info,
            source: source.shifted(at),
            concurrency,
            progress: opts.progress,
            stall_timeout: opts.stall_timeout,
        }
    }

    /// The object's size (a range's length): what [`MemoryDownload::read_into`] needs.
    pub fn size(&self) -> u64 {
        self.info.size
    }

    /// What the first answer said of the object (its content headers and metadata among it).
    pub(crate) fn info(&self) -> &ObjectInfo {
        &self.info
    }

    /// Receives the object into `buf`, which must be exactly [`MemoryDownload::size`] long,
    /// with up to `concurrency` parts at once. On an error `buf` holds part of the object.
    pub async fn read_into(self, buf: &mut [u8]) -> Result<Downloaded, TransferError> {
        if buf.len() as u64 != self.info.size {
            return Err(TransferError::Invalid(format!(
                "a buffer of {} bytes for an object of {}",
                buf.len(),
                self.info.size
            )));
        }
        let Self {
            info,
            source,
            concurrency,
            progress,
            stall_timeout,
        } = self;
        let algorithm = info.checksum.as_ref().map(|c| c.algorithm);
        // The buffer cut into the parts' places, in part order.
        let mut places = Vec::with_capacity(source.ranges.len());
        let mut rest = buf;
        for (s, e) in &source.ranges {
            let (place, after) = rest.split_at_mut((e - s) as usize);
            places.push(place);
            rest = after;
        }
        let (source, progress) = (&source, progress.as_deref());
        // Collected first: a future holding the `map` closure over `&mut [u8]` is not provably
        // `Send` for every lifetime (a compiler limit), and callers (Python) poll it on other
        // threads.
        let parts: Vec<_> = places
            .into_iter()
            .enumerate()
            .map(|(i, place)| fill_one(source, progress, i, place, algorithm))
            .collect();
        // Unordered: a slow part must not keep the next ones from starting. After the first
        // error no new part starts, and those running are dropped.
        let all = stream::iter(parts)
            .buffer_unordered(concurrency.max(1))
            .try_collect();
        let mut crcs: Vec<(usize, u64)> =
            stall::bounded(source.client(), stall_timeout, true, all).await?;
        crcs.sort_unstable_by_key(|c| c.0);
        let crcs: Vec<u64> = crcs.into_iter().map(|c| c.1).collect();
        let checksum_verified = check_checksum(&info, |alg| {
            let parts = crcs.iter().zip(&source.ranges);
            parts.fold(0, |acc, (crc, (s, e))| alg.combine(acc, *crc, e - s))
        })?;
        Ok(Downloaded {
            size: info.size,
            etag: info.etag,
            checksum_verified,
        })
    }
}

/// Part `i` received into `place`; returns `(i, its CRC)`.
async fn fill_one(
    source: &Source,
    progress: Option<&Progress>,
    i: usize,
    place: &mut [u8],
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<(usize, u64), TransferError> {
    let place = Mutex::new(place);
    let crc = source
        .read(i, |response, start, len| {
            fill_body(response, start, len, &place, algorithm)
        })
        .await?;
    if let Some(p) = progress {
        let (start, end) = source.ranges[i];
        p.add(end - start);
    }
    Ok((i, crc))
}

/// Copies a GET's body of `want` bytes (those from `start`) into `place`, exactly that long;
/// returns the body's CRC (0 without an `algorithm`).
async fn fill_body(
    mut body: ObjectStream,
    start: u64,
    want: u64,
    place: &Mutex<&mut [u8]>,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<u64, TransferError> {
    let mut crc = algorithm.map(ChecksumAlgorithm::start);
    let mut got = 0;
    while let Some(chunk) = next_chunk(&mut body, &mut got, (start, want)).await? {
        let at = (got - chunk.len() as u64) as usize;
        if let Some(c) = crc.as_mut() {
            c.update(&chunk);
        }
        let mut place = place.lock().unwrap_or_else(|p| p.into_inner());
        let into = place.get_mut(at..at + chunk.len()).ok_or_else(|| {
            TransferError::BadResponse(format!("bytes from {start}: more data than the part holds"))
        })?;
        into.copy_from_slice(&chunk);
    }
    if got != want {
        return Err(short(start, got, want));
    }
    Ok(crc.map_or(0, |c| c.value()))
}
