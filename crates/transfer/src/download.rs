//! Parallel ranged downloads into a file that appears only when complete and checked.

use std::fs::File;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use slipstream_client::{ChecksumAlgorithm, ClientError, ObjectInfo, S3Client};

use crate::cut::file_cut;
use crate::memory::fill_body;
use crate::offset_writer::OffsetWriter;
use crate::pool::{for_each_part, BufferPool};
use crate::stall;
use crate::{download_ranges, TransferOptions};

/// A part of a stream download, read whole into a buffer from the transfer's [`BufferPool`]: a
/// stream holds a window of parts while it waits for the earliest, and hyper's frames kept that
/// long would pin its larger read buffers (a 5 GiB stream to stdout peaked at 205 MiB with
/// frames, 143 MiB with pooled buffers; bound: 192 MiB). Files need no such buffer: their parts
/// are written as they arrive ([`Source::write_part`]).
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

/// What a finished download was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Downloaded {
    /// Bytes written.
    pub size: u64,
    /// The ETag every part was pinned to.
    pub etag: String,
    /// The whole-object checksum the data matched, if the object has one (sizes are always
    /// compared).
    pub checksum_verified: Option<ChecksumAlgorithm>,
}

/// Downloads `bucket/key` to `dest`. The data goes to a temporary file next to `dest`, renamed
/// to `dest` only after every part arrived, the size matched and (when the object has one) the
/// checksum matched; on any error the temporary file is removed and `dest` is untouched.
pub async fn download_to_file(
    client: Arc<S3Client>,
    bucket: &str,
    key: &str,
    dest: &Path,
    opts: TransferOptions,
) -> Result<Downloaded, ClientError> {
    let (watched, limit) = (Arc::clone(&client), opts.stall_timeout);
    stall::bounded(&watched, limit, true, async move {
        let asked = Instant::now();
        let (info, first) = start(&client, bucket, key, first_len(opts.part_size)).await?;
        let (part_size, concurrency) = file_cut(asked.elapsed(), &opts);
        let tmp = temporary_path(dest);
        let file = File::create(&tmp)?;
        // Removes the temporary file on every way out but success, including this future being
        // dropped (Ctrl-C in the CLI, a caller's timeout).
        let mut guard = RemoveOnDrop(Some(tmp.clone()));
        file.set_len(info.size)?;
        let file = Arc::new(OffsetWriter::new(file));
        opts.set_total(info.size);
        let source = Arc::new(Source::new(
            &client,
            bucket,
            key,
            &info.etag,
            first,
            info.size,
            |n| download_ranges(n, part_size, concurrency),
        ));
        // Every part's length was checked on arrival and the file was sized up front, so the
        // combined checksum is all that is left to compare.
        let algorithm = info.checksum.as_ref().map(|c| c.algorithm);
        let crcs = fetch_all(&source, &file, algorithm, concurrency, &opts).await?;
        let checksum_verified = check_checksum(&info, |alg| {
            let parts = crcs.iter().zip(&source.ranges);
            parts.fold(0, |acc, (crc, (s, e))| alg.combine(acc, *crc, e - s))
        })?;
        // No fsync: a killed process leaves the page cache intact, so the rename still only ever
        // shows complete data; surviving power loss as well cost 14% of a 1 GiB download here.
        std::fs::rename(&tmp, dest)?;
        guard.0 = None;
        Ok(Downloaded {
            size: info.size,
            etag: info.etag,
            checksum_verified,
        })
    })
    .await
}

/// Checks the data against the object's whole-object checksum, if it has one (`crc` computes
/// the data's CRC of that algorithm): `Ok(Some(algorithm))` checked, `Ok(None)` nothing to
/// check, an error on a mismatch.
pub(crate) fn check_checksum(
    info: &ObjectInfo,
    crc: impl FnOnce(ChecksumAlgorithm) -> u64,
) -> Result<Option<ChecksumAlgorithm>, ClientError> {
    let Some(expected) = &info.checksum else {
        return Ok(None);
    };
    let alg = expected.algorithm;
    let got = alg.encode(crc(alg));
    if got != expected.value {
        return Err(ClientError::Response(format!(
            "the downloaded data's {alg} ({got}) does not match the object's ({})",
            expected.value
        )));
    }
    Ok(Some(alg))
}

/// Deletes the path it holds when dropped, unless emptied first.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// `.NAME.slipstream-PID-RANDOM` in `dest`'s directory: same file system, so the rename is atomic,
/// and hidden, so nothing mistakes it for the finished file.
fn temporary_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "download".into());
    dest.with_file_name(format!(
        ".{name}.slipstream-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ))
}

/// Fetches every part with `concurrency` tasks, each written at its offset as it arrives, and
/// returns the CRC of each part (0 when there is no `algorithm`: nothing to check it against).
async fn fetch_all(
    source: &Arc<Source>,
    file: &Arc<OffsetWriter>,
    algorithm: Option<ChecksumAlgorithm>,
    concurrency: usize,
    opts: &TransferOptions,
) -> Result<Vec<u64>, ClientError> {
    let progress = opts.progress.clone();
    let (source, file) = (Arc::clone(source), Arc::clone(file));
    for_each_part(source.ranges.len(), concurrency, move |i| {
        let (source, file, progress) = (Arc::clone(&source), Arc::clone(&file), progress.clone());
        async move {
            let (start, end) = source.ranges[i];
            let crc = source.write_part(i, &file, algorithm).await?;
            if let Some(p) = progress {
                p.add(end - start);
            }
            Ok(crc)
        }
    })
    .await
}

/// The size of the first range, asked for before the object's size is known: the smallest
/// part [`download_ranges`] makes, so a small object comes whole in that first answer.
pub(crate) fn first_len(part_size: u64) -> u64 {
    (part_size / 8).max(1)
}

/// The GET sent with the HEAD: its headers are in, its body (the object's first `len` bytes)
/// is read as part 0, alongside the other parts. Waiting for that body before starting the
/// others cost half a second over the 100 ms link: a new connection's slow start takes about
/// seven round trips to bring 1 MiB.
pub(crate) struct First {
    response: hyper::Response<hyper::body::Incoming>,
    len: u64,
}

/// Where the parts of one download come from: the object pinned to its ETag, its ranges, and
/// the first GET's open response, which is part 0. Shared by the file and stream paths.
pub(crate) struct Source {
    client: Arc<S3Client>,
    bucket: String,
    key: String,
    etag: String,
    first: std::sync::Mutex<Option<First>>,
    /// Part `i` is `ranges[i]`: the first GET's bytes, then the rest cut by the caller.
    pub ranges: Vec<(u64, u64)>,
}

impl Source {
    /// The parts of an object of `size`: `first`'s bytes, then the rest cut by `cut` as if it
    /// were an object of its own.
    pub(crate) fn new(
        client: &Arc<S3Client>,
        bucket: &str,
        key: &str,
        etag: &str,
        first: Option<First>,
        size: u64,
        cut: impl Fn(u64) -> Vec<(u64, u64)>,
    ) -> Self {
        let covered = first.as_ref().map_or(0, |f| f.len);
        let ranges = first
            .iter()
            .map(|f| (0, f.len))
            .chain(
                cut(size.saturating_sub(covered))
                    .into_iter()
                    .map(|(s, e)| (s + covered, e + covered)),
            )
            .collect();
        Self {
            client: Arc::clone(client),
            bucket: bucket.to_owned(),
            key: key.to_owned(),
            etag: etag.to_owned(),
            first: std::sync::Mutex::new(first),
            ranges,
        }
    }

    /// Part `i`, read whole into a buffer from `pool` (streams).
    pub(crate) async fn part(&self, i: usize, pool: &BufferPool) -> Result<Part, ClientError> {
        let client = &*self.client;
        self.read(i, |response, start, len| {
            read_body(client, response, start, len, pool)
        })
        .await
    }

    /// Part `i`, written into `file` at its offset as it arrives (files); returns its CRC
    /// (0 without an `algorithm`). Nothing waits for the whole part: memory stays at a batch
    /// per part in flight and the bytes are copied while still in the CPU's cache (1 GiB over
    /// loopback: 0.93 -> 0.89 s and 140 -> 35 MiB peak RSS against holding whole parts).
    pub(crate) async fn write_part(
        &self,
        i: usize,
        file: &Arc<OffsetWriter>,
        algorithm: Option<ChecksumAlgorithm>,
    ) -> Result<u64, ClientError> {
        let client = &*self.client;
        self.read(i, |response, start, len| {
            write_body(client, response, start, len, file, algorithm)
        })
        .await
    }

    /// Part `i` received into `place` (exactly its length), frame by frame as it arrives;
    /// returns its CRC (0 without an `algorithm`). A retry overwrites the same place.
    pub(crate) async fn fill_part(
        &self,
        i: usize,
        place: &std::sync::Mutex<&mut [u8]>,
        algorithm: Option<ChecksumAlgorithm>,
    ) -> Result<u64, ClientError> {
        let client = &*self.client;
        self.read(i, |response, start, len| {
            fill_body(client, response, start, len, place, algorithm)
        })
        .await
    }

    /// Part `i`'s body through `take` (given the response, the part's start and length). Part 0
    /// is the first GET's body when there is one; a body that breaks or stalls is fetched again,
    /// pinned to the ETag (the request itself is retried inside the client).
    async fn read<T, Fut>(
        &self,
        i: usize,
        take: impl Fn(hyper::Response<Incoming>, u64, u64) -> Fut,
    ) -> Result<T, ClientError>
    where
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let opened = match i {
            0 => self.first.lock().ok().and_then(|mut f| f.take()),
            _ => None,
        };
        if let Some(first) = opened {
            match take(first.response, 0, first.len).await {
                Err(e) if e.is_retryable() => {}
                other => return other,
            }
        }
        let (start, end) = self.ranges[i];
        let (client, key, etag) = (&self.client, &self.key, &self.etag);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let got = match client
                .get_object(&self.bucket, key, Some((start, end)), Some(etag))
                .await
            {
                Ok(response) => take(response, start, end - start).await,
                Err(e) => Err(e),
            };
            match got {
                Err(e) if e.is_retryable() && attempt < client.max_attempts() => {
                    tokio::time::sleep(client.backoff(attempt)).await;
                }
                Err(ClientError::S3 { status: 412, .. }) => return Err(changed(key, etag)),
                other => return other,
            }
        }
    }
}

/// How a download begins: `HeadObject` (size, ETag, the whole-object checksum that only HEAD and
/// whole-object GETs return) and a GET of the first `first_len` bytes, sent together, so a small
/// object costs one round trip instead of two, and a missing one says `NoSuchKey`. Both must name
/// the same ETag (else the object changed between them); the later parts are pinned to it.
/// `None`: the object is empty.
pub(crate) async fn start(
    client: &S3Client,
    bucket: &str,
    key: &str,
    first_len: u64,
) -> Result<(ObjectInfo, Option<First>), ClientError> {
    let (head, get) = tokio::join!(
        client.head_object(bucket, key),
        client.get_object(bucket, key, Some((0, first_len)), None),
    );
    let response = match get {
        Ok(response) => response,
        // An empty object has no byte 0: S3 answers 416 to any range.
        Err(ClientError::S3 { status: 416, .. }) => {
            let info = head?;
            if info.size != 0 {
                return Err(ClientError::Response(format!(
                    "{key}: the first range was refused, but the object has {} bytes",
                    info.size
                )));
            }
            return Ok((info, None));
        }
        // GET's error names the cause (NoSuchKey, AccessDenied); HEAD's has no body.
        Err(e) => return Err(e),
    };
    let info = head?;
    let headers = response.headers();
    let etag = headers
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if info.etag != etag {
        return Err(changed(key, &info.etag));
    }
    // `bytes 0-N/TOTAL` for a range; without one the server sent the whole object.
    let len = match content_range_total(headers) {
        Some(total) => first_len.min(total),
        None => headers
            .get("content-length")
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .ok_or_else(|| ClientError::Response("a GET without a Content-Length".into()))?,
    };
    if len != first_len.min(info.size) {
        return Err(ClientError::Response(format!(
            "{key}: the first GET brings {len} bytes, not {}",
            first_len.min(info.size)
        )));
    }
    // A server that ignores the range on an empty object answers 200 with no body.
    Ok((info, (len > 0).then_some(First { response, len })))
}

fn changed(key: &str, etag: &str) -> ClientError {
    ClientError::Response(format!(
        "{key} changed during the download (its ETag is no longer {etag})"
    ))
}

fn content_range_total(headers: &hyper::HeaderMap) -> Option<u64> {
    let value = headers.get("content-range")?.to_str().ok()?;
    value.rsplit_once('/')?.1.trim().parse().ok()
}

/// Bytes gathered from frames before one positioned write: few enough system calls and
/// blocking-pool hand-offs (a thousand per GiB), small enough to stay in the CPU's cache.
const WRITE_BATCH: usize = 1 << 20;

/// The next frame of `body` with data: `None` at the end; an error if it breaks, stalls, or
/// brings more than `want` bytes in all (`got` counts them).
pub(crate) async fn next_chunk(
    client: &S3Client,
    body: &mut Incoming,
    got: &mut u64,
    (start, want): (u64, u64),
) -> Result<Option<Bytes>, ClientError> {
    loop {
        let quiet = client.read_timeout();
        let frame = tokio::time::timeout(quiet, body.frame())
            .await
            .map_err(|_| ClientError::Network(format!("no data for {quiet:?}")))?;
        client.activity().touch();
        let chunk = match frame {
            None => return Ok(None),
            Some(Err(e)) => return Err(ClientError::Network(format!("the body broke off: {e}"))),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(chunk) => chunk,
                Err(_) => continue,
            },
        };
        *got += chunk.len() as u64;
        if *got > want {
            return Err(ClientError::Response(format!(
                "bytes {start}-{}: more data than asked for",
                start + want - 1
            )));
        }
        return Ok(Some(chunk));
    }
}

pub(crate) fn short(start: u64, got: u64, want: u64) -> ClientError {
    ClientError::Network(format!(
        "bytes {start}-{}: {got} of {want} bytes arrived",
        start + want - 1
    ))
}

/// Reads a GET's body of `want` bytes (those from `start`) into a buffer from `pool`.
async fn read_body(
    client: &S3Client,
    response: hyper::Response<Incoming>,
    start: u64,
    want: u64,
    pool: &BufferPool,
) -> Result<Part, ClientError> {
    let mut body = response.into_body();
    let mut buf = pool.take();
    buf.clear();
    buf.reserve(want as usize);
    let mut got = 0;
    while let Some(chunk) = next_chunk(client, &mut body, &mut got, (start, want)).await? {
        buf.extend_from_slice(&chunk);
    }
    if got != want {
        return Err(short(start, got, want));
    }
    Ok(Part { data: buf.freeze() })
}

/// Writes a GET's body of `want` bytes into `file` from offset `start`, a batch of frames at a
/// time off the runtime's threads (which keep serving the sockets); returns the CRC of the
/// bytes, fed in order. A retry rewrites the same range, so a broken body leaves nothing wrong.
async fn write_body(
    client: &S3Client,
    response: hyper::Response<Incoming>,
    start: u64,
    want: u64,
    file: &Arc<OffsetWriter>,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<u64, ClientError> {
    let mut body = response.into_body();
    let mut crc = algorithm.map(ChecksumAlgorithm::start);
    let (mut batch, mut batched) = (Vec::new(), 0);
    let (mut got, mut written) = (0, 0);
    loop {
        let chunk = next_chunk(client, &mut body, &mut got, (start, want)).await?;
        let end = chunk.is_none();
        if let Some(chunk) = chunk {
            batched += chunk.len();
            batch.push(chunk);
        }
        if batched >= WRITE_BATCH || (end && batched > 0) {
            let (file, frames, at) = (
                Arc::clone(file),
                std::mem::take(&mut batch),
                start + written,
            );
            crc = tokio::task::spawn_blocking(move || {
                file.write(&frames, at, crc.as_mut()).map(|()| crc)
            })
            .await
            .map_err(|e| ClientError::Io(std::io::Error::other(e)))??;
            written += batched as u64;
            batched = 0;
        }
        if end {
            break;
        }
    }
    if got != want {
        return Err(short(start, got, want));
    }
    Ok(crc.map_or(0, |c| c.value()))
}
