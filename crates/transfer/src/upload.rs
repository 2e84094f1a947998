//! Uploads from a file or from memory: one `PutObject` when small, a parallel multipart upload
//! when large.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use slipstream_client::{CompletedPart, FileRange, MultipartUpload, S3Client};

use crate::cleanup::multipart_upload;
use crate::cut::{upload_cut, LONG_PATH};
use crate::error::at;
use crate::pool::{for_each_part, part_permit, BufferPool};
use crate::stall;
use crate::walk::is_special;
use crate::TransferError;
use crate::{upload_from_reader, upload_ranges, TransferOptions};

/// The largest file sent in one `PutObject` from memory, read whole in one go; larger ones
/// (up to the multipart threshold) are read as the connection sends them, so hundreds of
/// objects in flight hold a slice each rather than up to 8 MiB each (`slipstream_client`'s
/// `payload.rs`).
const READ_WHOLE: u64 = 256 << 10;

/// What a finished upload was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uploaded {
    /// Bytes sent.
    pub size: u64,
    /// Parts: 0 for a single `PutObject`.
    pub parts: usize,
}

/// Uploads the file at `path` to `bucket/key`. A multipart upload that fails is aborted, so the
/// bucket keeps no orphaned parts and `key` is unchanged. A file that cannot be read is a
/// [`TransferError::File`] naming `path`.
///
/// A device or a pipe (`/dev/stdin`, a FIFO, a shell's `<(command)`) has no size to cut by: it
/// is read to its end as a stream, as standard input is ([`crate::upload_from_reader`]),
/// where its size of 0 would have made an empty object.
pub async fn upload_file(
    client: Arc<S3Client>,
    path: &Path,
    bucket: &str,
    key: &str,
    opts: TransferOptions,
) -> Result<Uploaded, TransferError> {
    if is_special(path) {
        let mut input = tokio::fs::File::open(path).await.map_err(at(path))?;
        let done = upload_from_reader(client, &mut input, bucket, key, opts).await;
        return done.map_err(|e| e.about(path));
    }
    let (watched, limit) = (Arc::clone(&client), opts.stall_timeout);
    let work = from_file(client, path, bucket, key, opts);
    let done = stall::bounded(&watched, limit, false, work).await;
    done.map_err(|e| e.about(path))
}

/// The transfer itself, under the stall bound of [`upload_file`].
async fn from_file(
    client: Arc<S3Client>,
    path: &Path,
    bucket: &str,
    key: &str,
    opts: TransferOptions,
) -> Result<Uploaded, TransferError> {
    let file = Arc::new(File::open(path)?);
    let size = file.metadata()?.len();
    opts.set_total(size);
    if size < opts.multipart_threshold.max(1) {
        let headers = opts.headers.for_key(key);
        if size <= READ_WHOLE {
            let data = read_at(&file, 0, size).await?;
            client
                .put_object_with(bucket, key, data, opts.checksum, headers)
                .await?;
        } else {
            let body = FileRange::new(Arc::clone(&file), 0, size);
            client
                .put_file(bucket, key, body, opts.checksum, headers)
                .await?;
        }
        opts.add_progress(size);
        return Ok(Uploaded { size, parts: 0 });
    }
    let (parts, _) = multipart(&client, Body::File(file), size, (bucket, key), &opts).await?;
    Ok(Uploaded {
        size,
        parts: parts.len(),
    })
}

/// Uploads `data` to `bucket/key`: one `PutObject` below `opts.multipart_threshold`, else a
/// parallel multipart upload whose parts are slices of `data`, sent without a copy (one
/// stream cannot fill a long link, and one `PutObject` stops at 5 GiB). A multipart upload
/// that fails is aborted. Returns the new object's ETag.
pub async fn upload_bytes(
    client: Arc<S3Client>,
    data: Bytes,
    bucket: &str,
    key: &str,
    opts: TransferOptions,
) -> Result<String, TransferError> {
    let size = data.len() as u64;
    opts.set_total(size);
    let work = async {
        if size < opts.multipart_threshold.max(1) {
            let headers = opts.headers.for_key(key);
            let etag = client
                .put_object_with(bucket, key, data, opts.checksum, headers)
                .await?;
            opts.add_progress(size);
            return Ok(etag);
        }
        let body = Body::Memory(data);
        let (_, etag) = multipart(&client, body, size, (bucket, key), &opts).await?;
        Ok(etag)
    };
    stall::bounded(&client, opts.stall_timeout, false, work).await
}

/// Where an upload's parts are read from.
#[derive(Clone)]
enum Body {
    File(Arc<File>),
    Memory(Bytes),
}

impl Body {
    /// The `len` bytes at `start`: read into a buffer from `pool` (a file), or a slice of the
    /// caller's memory.
    async fn part(&self, start: u64, len: u64, pool: &BufferPool) -> Result<Bytes, TransferError> {
        match self {
            Body::File(file) => read_into(file, start, len, pool.take()).await,
            Body::Memory(data) => Ok(data.slice(start as usize..(start + len) as usize)),
        }
    }
}

/// The multipart upload of `body`'s `size` bytes: its parts and the new object's ETag.
async fn multipart(
    client: &Arc<S3Client>,
    body: Body,
    size: u64,
    (bucket, key): (&str, &str),
    opts: &TransferOptions,
) -> Result<(Vec<CompletedPart>, String), TransferError> {
    // The parts' connections open while CreateMultipartUpload is on its way (that request
    // takes one of its own, which the parts reuse); as many as a long path uses, the rest
    // connect when needed.
    let (part_size, connections) = upload_cut(LONG_PATH, size, opts);
    let connections = connections.min(size.div_ceil(part_size) as usize);
    client.preconnect(bucket, connections.saturating_sub(1));
    let asked = Instant::now();
    multipart_upload(
        client,
        (bucket, key),
        Some(opts.checksum),
        opts.headers.for_key(key),
        opts.headers.customer_key.as_ref(),
        |upload| {
            let (part_size, concurrency) = upload_cut(asked.elapsed(), size, opts);
            let ranges = upload_ranges(size, part_size, concurrency);
            send_parts(client, upload, ranges, concurrency, &body, opts)
        },
    )
    .await
}

async fn read_at(file: &Arc<File>, start: u64, len: u64) -> Result<Bytes, TransferError> {
    read_into(file, start, len, BytesMut::new()).await
}

/// Reads `len` bytes at `start` into `buf` (reused: its allocation is kept when large enough).
async fn read_into(
    file: &Arc<File>,
    start: u64,
    len: u64,
    mut buf: BytesMut,
) -> Result<Bytes, TransferError> {
    let file = Arc::clone(file);
    // Sized on this thread: memory a blocking-pool thread allocates stays with its heap when
    // another thread frees it (the client's `payload.rs`).
    buf.clear();
    buf.resize(len as usize, 0);
    let data =
        tokio::task::spawn_blocking(move || file.read_exact_at(&mut buf, start).map(|()| buf))
            .await
            .map_err(TransferError::from)??;
    Ok(data.freeze())
}

/// Reads and uploads every range with `concurrency` tasks; the parts in order. A part of
/// memory given back to the pool is dropped there (it is not the pool's to reuse).
async fn send_parts(
    client: &Arc<S3Client>,
    upload: Arc<MultipartUpload>,
    ranges: Vec<(u64, u64)>,
    concurrency: usize,
    body: &Body,
    opts: &TransferOptions,
) -> Result<Vec<CompletedPart>, TransferError> {
    let (progress, algorithm) = (opts.progress.clone(), opts.checksum);
    let budget = opts.shared_parts.clone();
    let (client, body) = (Arc::clone(client), body.clone());
    let pool = Arc::new(BufferPool::default());
    for_each_part(ranges.len(), concurrency, move |i| {
        let (client, body, pool) = (Arc::clone(&client), body.clone(), Arc::clone(&pool));
        let (progress, budget) = (progress.clone(), budget.clone());
        let upload = Arc::clone(&upload);
        let (start, end) = ranges[i];
        async move {
            let _place = part_permit(&budget).await;
            let data = body.part(start, end - start, &pool).await?;
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let sent = client
                .upload_part(&upload, number, data.clone(), algorithm)
                .await;
            pool.give(data);
            if let (Ok(_), Some(p)) = (&sent, &progress) {
                p.add(end - start);
            }
            sent.map_err(TransferError::from)
        }
    })
    .await
}
