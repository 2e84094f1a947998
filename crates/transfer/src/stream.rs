//! Transfers to and from byte streams (stdout, stdin, memory): parts still move in parallel,
//! but a stream is written and read in order, so memory is bounded by a window of parts.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use slipstream_client::{
    CompletedPart, MultipartUpload, ObjectInfo, ObjectKey, ObjectStream, S3Client,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{oneshot, Semaphore};

use crate::cleanup::multipart_upload;
use crate::cut::LONG_PATH;
use crate::pool::BufferPool;
use crate::source::{check_checksum, next_chunk, short, start, start_range, Source};
use crate::stall;
use crate::TransferError;
use crate::{Downloaded, TransferOptions, Uploaded, MAX_PARTS, MIN_PART_SIZE};

/// Into how many window parts each part's memory is cut, given how long the first answer took.
/// On a long path a part takes many round trips and connections get unequal shares of the
/// link, so one slow part holds back the window; smaller parts in a longer window (the same
/// bytes) let the others keep going: over the emulated long link thirds filled it best. On a
/// short path the same cut costs CPU for three times the requests, and nothing waits long
/// there, so parts stay whole (both measured: docs/BENCHMARKS-HISTORY.md, the stream-download passes).
fn window_split(first_answer: Duration) -> u64 {
    if first_answer >= LONG_PATH {
        LONG_SPLIT
    } else {
        1
    }
}

/// Into how many window parts a part is cut on a long path ([`window_split`]).
const LONG_SPLIT: u64 = 3;

/// The first range of a stream download, which writes in order: the smallest part its window
/// is cut into (a third of a part, on a long path), so an object of up to that comes in one
/// round trip, and a larger one's part 0 (written on as it arrives, [`Source::write_first`])
/// is no longer than the parts fetched beside it. A whole part first made the writer wait on
/// one connection's share of the link for it (a 30 MB range over 100 ms: 1.15 -> 1.25 s).
fn stream_first_len(part_size: u64) -> u64 {
    (part_size / LONG_SPLIT).max(1)
}

/// Downloads `bucket/key` into `out`, in order. The window of parts fetched but not yet
/// written holds `concurrency x part_size` bytes, as `concurrency` whole parts on a short path,
/// or `3 x concurrency` third-size parts on a long one (`window_split`), while at most
/// `concurrency` requests are in flight. The checksum (when the object has a whole-object one) is
/// checked at the end: with a stream, a mismatch is an error after the bytes were written, so
/// callers must treat the output as invalid on error.
pub async fn download_to_writer<'k, W: AsyncWrite + Unpin>(
    client: Arc<S3Client>,
    bucket: &str,
    key: impl Into<ObjectKey<'k>>,
    out: &mut W,
    opts: TransferOptions,
) -> Result<Downloaded, TransferError> {
    download_to_writer_seen(client, (bucket, key.into(), None), out, opts, None).await
}

/// What [`download_stream_to_writer`] writes.
#[derive(Clone, Copy, Debug)]
pub enum StreamOf<'a> {
    /// The whole object, its whole-object checksum checked at the end.
    Object,
    /// A range of the object, without its checksum (none applies to a range).
    Range {
        /// Start and end (exclusive), cut short at the object's end as S3 cuts it.
        range: (u64, u64),
        /// The ETag an earlier answer gave, so that a reader that moves to another offset (a
        /// seek) reads the object it began on, or fails with [`TransferError::Changed`] if it
        /// was replaced.
        if_match: Option<&'a str>,
    },
}

/// What a stream download under a reader that seeks tells it, and waits for
/// ([`download_stream_to_writer`]).
#[derive(Debug, Default)]
pub struct StreamSignals {
    /// Told what the download writes (the length, the ETag) before its first byte: the reader
    /// knows where the object ends, and pins the downloads it resumes with to that ETag.
    pub seen: Option<oneshot::Sender<ObjectInfo>>,
    /// When given, the parts after the first are asked for only once this fires (or its sender
    /// is dropped): a reader whose first move is a seek elsewhere costs the first request, not
    /// a window of them.
    pub go: Option<oneshot::Receiver<()>>,
}

/// [`download_to_writer`] of the object or of a range of it, with a reader's `signals`.
pub async fn download_stream_to_writer<W: AsyncWrite + Unpin>(
    client: Arc<S3Client>,
    (bucket, key, what): (&str, ObjectKey<'_>, StreamOf<'_>),
    out: &mut W,
    opts: TransferOptions,
    signals: StreamSignals,
) -> Result<Downloaded, TransferError> {
    bounded(client, (bucket, key, what, None), out, opts, signals).await
}

/// [`download_to_writer`], telling `seen` what the object is (size, ETag, content headers and
/// metadata) before its first byte is written: a copy through this machine starts its upload
/// with the source's headers. `listed`: the object's size in a listing, so that a small object
/// is asked for whole, without a HeadObject beside its GET.
pub(crate) async fn download_to_writer_seen<W: AsyncWrite + Unpin>(
    client: Arc<S3Client>,
    (bucket, key, listed): (&str, ObjectKey<'_>, Option<u64>),
    out: &mut W,
    opts: TransferOptions,
    seen: Option<oneshot::Sender<ObjectInfo>>,
) -> Result<Downloaded, TransferError> {
    let what = (bucket, key, StreamOf::Object, listed);
    bounded(client, what, out, opts, StreamSignals { seen, go: None }).await
}

/// [`to_writer`] under the client's stall bound.
async fn bounded<W: AsyncWrite + Unpin>(
    client: Arc<S3Client>,
    what: (&str, ObjectKey<'_>, StreamOf<'_>, Option<u64>),
    out: &mut W,
    opts: TransferOptions,
    signals: StreamSignals,
) -> Result<Downloaded, TransferError> {
    let (watched, limit) = (Arc::clone(&client), opts.stall_timeout);
    let work = to_writer(client, what, out, opts, signals);
    stall::bounded(&watched, limit, true, work).await
}

/// The transfer itself, under [`bounded`]'s stall bound. `listed`: a listing's size, for a
/// whole object.
async fn to_writer<W: AsyncWrite + Unpin>(
    client: Arc<S3Client>,
    (bucket, key, what, listed): (&str, ObjectKey<'_>, StreamOf<'_>, Option<u64>),
    out: &mut W,
    opts: TransferOptions,
    StreamSignals { seen, mut go }: StreamSignals,
) -> Result<Downloaded, TransferError> {
    let concurrency = opts.concurrency.max(1);
    let pool = Arc::new(BufferPool::default());
    let asked = Instant::now();
    // The first answer is written on as it arrives, so the first bytes wait for no more of it.
    // The split of the other parts is chosen once it has answered.
    let first_len = stream_first_len(opts.part_size);
    let (info, first, at) = match what {
        StreamOf::Object => {
            let (info, first) = start(&client, bucket, key, first_len, listed).await?;
            (info, first, 0)
        }
        StreamOf::Range { range, if_match } => {
            // A range known to be longer than a part starts with the smallest piece the rest
            // is cut into (`download_ranges` starts at an eighth), so part 0 does not hold up
            // the parts beside it; one of up to a part is asked for whole.
            let pinned = (range, if_match);
            let cut = ((first_len / 8).max(1), opts.part_size);
            let (info, first) = start_range(&client, bucket, key, pinned, cut).await?;
            (info, Some(first), range.0)
        }
    };
    if let Some(seen) = seen {
        let _ = seen.send(info.clone());
    }
    let split = window_split(asked.elapsed());
    let part_size = (opts.part_size / split).max(1);
    opts.set_total(info.size);
    let source = Arc::new(
        Source::new(&client, bucket, key, &info, first, part_size, concurrency).shifted(at),
    );
    let window = split as usize * concurrency;
    // Requests in flight; fair, so parts get connections in order.
    let requests = Arc::new(Semaphore::new(concurrency));
    let mut in_window = AbortOnDrop(VecDeque::new());
    // The object's checksum, fed in order.
    let mut crc = info.checksum.as_ref().map(|c| c.algorithm.start());
    let spawn = |i: usize| {
        let (source, pool, requests) = (
            Arc::clone(&source),
            Arc::clone(&pool),
            Arc::clone(&requests),
        );
        tokio::spawn(async move {
            let _request = requests.acquire_owned().await.map_err(stopped)?;
            part(&source, i, &pool).await
        })
    };
    let count = source.ranges.len();
    let mut next = 1;
    if count > 0 {
        // Part 0 holds a request of its own while the window fills behind it (once `go`
        // fires, when given).
        let _request = Arc::clone(&requests)
            .acquire_owned()
            .await
            .map_err(stopped)?;
        let each = |frame: &Bytes| {
            if let Some(c) = crc.as_mut() {
                c.update(frame);
            }
            opts.add_progress(frame.len() as u64);
        };
        let fill = async {
            if let Some(go) = go.take() {
                let _ = go.await;
            }
            while next < count && in_window.0.len() < window {
                in_window.0.push_back(spawn(next));
                next += 1;
            }
            Ok(())
        };
        tokio::try_join!(source.write_first(out, each), fill)?;
    }
    while let Some(task) = in_window.0.pop_front() {
        let part = match task.await {
            Ok(Ok(part)) => part,
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(e.into()),
        };
        if let Some(c) = crc.as_mut() {
            c.update(&part.data);
        }
        out.write_all(&part.data).await?;
        opts.add_progress(part.data.len() as u64);
        // The next part enters the window once this one's buffer is free.
        part.recycle(&pool);
        if next < count {
            in_window.0.push_back(spawn(next));
            next += 1;
        }
    }
    out.flush().await?;
    // The parts cover the object and each one's length was checked on arrival.
    let checksum_verified = check_checksum(&info, |_| crc.map_or(0, |c| c.value()))?;
    Ok(Downloaded {
        size: info.size,
        etag: info.etag,
        checksum_verified,
    })
}

/// The error of a part whose download was stopped (its semaphore closed).
fn stopped(_: tokio::sync::AcquireError) -> TransferError {
    TransferError::Io(std::io::Error::other("the download was stopped"))
}

/// The parts of a stream download; on an error (or the download being dropped) the parts
/// still in the window are stopped rather than fetched for nobody.
struct AbortOnDrop<T>(VecDeque<tokio::task::JoinHandle<T>>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// Uploads everything `input` yields to `bucket/key`: a single `PutObject` if it ends before
/// `multipart_threshold` bytes, a multipart upload otherwise, with up to `concurrency` parts
/// sent while the next is read (memory: `(concurrency + 1) x part_size`). The size is unknown
/// in advance, so parts start at `part_size` (at least 5 MiB) and grow as the stream goes on
/// (they double every 1,000 parts, up to 5 GiB) with fewer in flight, in the same memory. A
/// failed upload is aborted.
pub async fn upload_from_reader<R: AsyncRead + Unpin>(
    client: Arc<S3Client>,
    input: &mut R,
    bucket: &str,
    key: &str,
    opts: TransferOptions,
) -> Result<Uploaded, TransferError> {
    let (watched, limit) = (Arc::clone(&client), opts.stall_timeout);
    let work = from_reader(client, input, bucket, key, opts);
    stall::bounded(&watched, limit, false, work).await
}

/// The transfer itself, under the stall bound of [`upload_from_reader`].
async fn from_reader<R: AsyncRead + Unpin>(
    client: Arc<S3Client>,
    input: &mut R,
    bucket: &str,
    key: &str,
    opts: TransferOptions,
) -> Result<Uploaded, TransferError> {
    let part_size = opts.part_size.max(MIN_PART_SIZE) as usize;
    let first = read_up_to(input, part_size).await?;
    if (first.len() as u64) < single_put_below(&opts) {
        let size = first.len() as u64;
        let headers = opts.headers.for_key(key);
        client
            .put_object_with(bucket, key, first, opts.checksum, headers)
            .await?;
        opts.add_progress(size);
        return Ok(Uploaded { size, parts: 0 });
    }
    let mut size = 0;
    // As for files: the parts' connections open during CreateMultipartUpload.
    client.preconnect(bucket, opts.concurrency.saturating_sub(1));
    let (parts, _) = multipart_upload(
        &client,
        (bucket, key),
        Some(opts.checksum),
        opts.headers.for_key(key),
        opts.headers.customer_key.as_ref(),
        |upload| send_stream(&client, input, upload, first, part_size, &opts, &mut size),
    )
    .await?;
    Ok(Uploaded {
        size,
        parts: parts.len(),
    })
}

/// The size from which a stream is uploaded in parts: `multipart_threshold`, at most one part.
pub(crate) fn single_put_below(opts: &TransferOptions) -> u64 {
    opts.multipart_threshold
        .clamp(1, opts.part_size.max(MIN_PART_SIZE))
}

async fn send_stream<R: AsyncRead + Unpin>(
    client: &Arc<S3Client>,
    input: &mut R,
    upload: Arc<MultipartUpload>,
    first: Bytes,
    part_size: usize,
    opts: &TransferOptions,
    size: &mut u64,
) -> Result<Vec<CompletedPart>, TransferError> {
    let algorithm = opts.checksum;
    let mut tasks = tokio::task::JoinSet::new();
    let mut done = Vec::new();
    let mut data = first;
    let mut number = 0u32;
    while !data.is_empty() {
        number += 1;
        if u64::from(number) > MAX_PARTS {
            return Err(TransferError::Invalid(format!(
                "the stream is longer than {MAX_PARTS} parts growing from {part_size} bytes \
                 (S3's largest object is 5 TiB)"
            )));
        }
        *size += data.len() as u64;
        // The bytes in flight stay `concurrency` first parts' worth as the parts grow.
        let in_flight = opts.concurrency.max(1) * part_size / data.len().max(part_size);
        while tasks.len() >= in_flight.max(1) {
            done.push(joined(tasks.join_next().await)?);
        }
        let (client, upload) = (Arc::clone(client), Arc::clone(&upload));
        let part = data;
        let (len, progress) = (part.len() as u64, opts.progress.clone());
        tasks.spawn(async move {
            let sent = client.upload_part(&upload, number, part, algorithm).await;
            if let (Ok(_), Some(p)) = (&sent, &progress) {
                p.add(len);
            }
            sent.map_err(TransferError::from)
        });
        data = read_up_to(input, stream_part_size(part_size, number + 1)).await?;
    }
    while let Some(j) = tasks.join_next().await {
        done.push(joined(Some(j))?);
    }
    done.sort_by_key(|p| p.number);
    Ok(done)
}

fn joined(
    j: Option<Result<Result<CompletedPart, TransferError>, tokio::task::JoinError>>,
) -> Result<CompletedPart, TransferError> {
    match j {
        Some(Ok(r)) => r,
        Some(Err(e)) => Err(e.into()),
        None => Err(TransferError::Io(std::io::Error::other(
            "an upload task vanished",
        ))),
    }
}

/// How long part `number` (from 1) of a stream of unknown length is: `first` for the first
/// 1,000 parts, then twice as long every 1,000 parts, up to S3's 5 GiB. S3 takes parts of
/// different sizes (only the last may be under 5 MiB), and its 10,000 parts then hold a stream
/// of up to ~8 TiB from 8 MiB parts, where fixed 8 MiB parts stopped at 78 GiB (the AWS CLI
/// needs `--expected-size` for more than 50 GB). Up to 8 GiB the parts are `first` long.
pub(crate) fn stream_part_size(first: usize, number: u32) -> usize {
    const MAX_PART_SIZE: usize = 5 << 30;
    let doublings = (number.saturating_sub(1) / 1_000).min(20);
    first
        .saturating_mul(1 << doublings)
        .min(MAX_PART_SIZE.max(first))
}

/// Reads until `limit` bytes or the end of the input.
async fn read_up_to<R: AsyncRead + Unpin>(
    input: &mut R,
    limit: usize,
) -> Result<Bytes, TransferError> {
    let mut buf = BytesMut::with_capacity(limit);
    while buf.len() < limit {
        let n = (&mut *input)
            .take((limit - buf.len()) as u64)
            .read_buf(&mut buf)
            .await?;
        if n == 0 {
            break;
        }
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_s_parts_grow_to_hold_s3_s_largest_object_in_10_000() {
        let mib = 1 << 20;
        let sizes: Vec<usize> = (1..=MAX_PARTS as u32)
            .map(|n| stream_part_size(8 * mib, n))
            .collect();
        assert_eq!((sizes[0], sizes[999]), (8 * mib, 8 * mib));
        assert_eq!(
            (sizes[1000], sizes[1999], sizes[2000]),
            (16 * mib, 16 * mib, 32 * mib)
        );
        assert!(sizes.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*sizes.last().unwrap(), 4 << 30);
        assert_eq!(
            stream_part_size(16 * mib, 10_000),
            5 << 30,
            "capped at S3's largest part"
        );
        let total: u64 = sizes.iter().map(|&s| s as u64).sum();
        assert!(total > 5 << 40, "{total} bytes: S3's 5 TiB object fits");
        // The smallest part S3 takes grows too; a part size above the cap stays as given.
        assert_eq!(stream_part_size(5 * mib, 1001), 10 * mib);
        assert_eq!(stream_part_size(6 << 30, 5000), 6 << 30);
    }

    #[test]
    fn parts_are_cut_smaller_only_on_a_long_path() {
        assert_eq!(window_split(Duration::from_micros(400)), 1, "loopback");
        assert_eq!(window_split(Duration::from_millis(19)), 1);
        assert_eq!(window_split(Duration::from_millis(20)), 3);
        assert_eq!(window_split(Duration::from_millis(205)), 3, "100 ms RTT");
    }
}

/// A part of a stream download, read whole into a buffer from the transfer's [`BufferPool`]: a
/// stream holds a window of parts while it waits for the earliest, and hyper's frames kept that
/// long would pin its larger read buffers (RSS over the bound for a long stream to stdout;
/// docs/BENCHMARKS.md). Files need no such buffer: their parts
/// are written as they arrive (`download.rs`).
#[derive(Debug)]
pub(crate) struct Part {
    pub data: Bytes,
}

impl Part {
    /// Hands the buffer back for the next part.
    pub fn recycle(self, pool: &BufferPool) {
        pool.give(self.data);
    }
}

/// Part `i` of `source`, read whole into a buffer from `pool`.
async fn part(source: &Source, i: usize, pool: &BufferPool) -> Result<Part, TransferError> {
    source
        .read(i, |response, start, len| {
            read_body(response, start, len, pool)
        })
        .await
}

/// Reads a GET's body of `want` bytes (those from `start`) into a buffer from `pool`.
async fn read_body(
    mut body: ObjectStream,
    start: u64,
    want: u64,
    pool: &BufferPool,
) -> Result<Part, TransferError> {
    let mut buf = pool.take();
    buf.clear();
    buf.reserve(want as usize);
    let mut got = 0;
    while let Some(chunk) = next_chunk(&mut body, &mut got, (start, want)).await? {
        buf.extend_from_slice(&chunk);
    }
    if got != want {
        return Err(short(start, got, want));
    }
    Ok(Part { data: buf.freeze() })
}
