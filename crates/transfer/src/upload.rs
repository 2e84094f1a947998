//! Uploads from a file: one `PutObject` when small, a parallel multipart upload when large.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use slipstream_client::{ClientError, CompletedPart, S3Client};

use crate::cleanup::multipart_upload;
use crate::download::LONG_PATH;
use crate::pool::{for_each_part, BufferPool};
use crate::{upload_ranges, TransferOptions, MAX_PARTS, MIN_PART_SIZE};

/// What a finished upload was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uploaded {
    /// Bytes sent.
    pub size: u64,
    /// Parts: 0 for a single `PutObject`.
    pub parts: usize,
}

/// Uploads the file at `path` to `bucket/key`. A multipart upload that fails is aborted, so the
/// bucket keeps no orphaned parts and `key` is unchanged.
pub async fn upload_file(
    client: Arc<S3Client>,
    path: &Path,
    bucket: &str,
    key: &str,
    opts: TransferOptions,
) -> Result<Uploaded, ClientError> {
    let file = Arc::new(File::open(path)?);
    let size = file.metadata()?.len();
    opts.set_total(size);
    if size < opts.multipart_threshold.max(1) {
        let data = read_at(&file, 0, size).await?;
        client.put_object(bucket, key, data, opts.checksum).await?;
        opts.add_progress(size);
        return Ok(Uploaded { size, parts: 0 });
    }
    // The parts' connections open while CreateMultipartUpload is on its way (that request
    // takes one of its own, which the parts reuse); as many as a long path uses, the rest
    // connect when needed.
    let (part_size, connections) = upload_cut(LONG_PATH, size, &opts);
    let connections = connections.min(size.div_ceil(part_size) as usize);
    client.preconnect(bucket, connections.saturating_sub(1));
    let asked = Instant::now();
    let mut parts = 0;
    let (client, file) = (&client, &file);
    multipart_upload(client, bucket, key, opts.checksum, |upload_id| {
        let (part_size, concurrency) = upload_cut(asked.elapsed(), size, &opts);
        let ranges = upload_ranges(size, part_size, concurrency);
        parts = ranges.len();
        let opts = TransferOptions {
            concurrency,
            ..opts.clone()
        };
        async move { send_parts(client, bucket, key, upload_id, &ranges, file, &opts).await }
    })
    .await?;
    Ok(Uploaded { size, parts })
}

/// Part size and connections for a multipart upload of `size` bytes, given how long
/// CreateMultipartUpload took. Parts are at least 5 MiB and few enough for S3's 10,000. On a
/// long path the last parts decide the end: none may be under 5 MiB, so the connections finish
/// their last parts up to one 5 MiB part's time apart, at a `1/concurrency` share of the link,
/// while the link idles. Half the connections with parts twice as long halve that tail (100 ms
/// RTT, 500 Mbit/s, 1 GiB to MinIO, alternated runs: 16 x 8 MiB 19.40 s median of 15,
/// 8 x 16 MiB 19.16 s median of 11; docs/BENCHMARKS.md). Downloads keep every connection there: their last
/// parts shrink to an eighth of a part, so more connections only speed up the start. Memory
/// (`concurrency x part_size`) is the same either way.
pub(crate) fn upload_cut(create_took: Duration, size: u64, opts: &TransferOptions) -> (u64, usize) {
    let (part_size, concurrency) = if create_took < LONG_PATH || opts.concurrency < 2 {
        (opts.part_size, opts.concurrency)
    } else {
        (opts.part_size.saturating_mul(2), opts.concurrency / 2)
    };
    let part_size = part_size.max(MIN_PART_SIZE).max(size.div_ceil(MAX_PARTS));
    (part_size, concurrency)
}

async fn read_at(file: &Arc<File>, start: u64, len: u64) -> Result<Bytes, ClientError> {
    read_into(file, start, len, BytesMut::new()).await
}

/// Reads `len` bytes at `start` into `buf` (reused: its allocation is kept when large enough).
async fn read_into(
    file: &Arc<File>,
    start: u64,
    len: u64,
    mut buf: BytesMut,
) -> Result<Bytes, ClientError> {
    let file = Arc::clone(file);
    let data = tokio::task::spawn_blocking(move || {
        buf.clear();
        buf.resize(len as usize, 0);
        file.read_exact_at(&mut buf, start).map(|()| buf)
    })
    .await
    .map_err(|e| ClientError::Io(std::io::Error::other(e)))??;
    Ok(data.freeze())
}

/// Reads and uploads every range with `concurrency` tasks; the parts in order.
async fn send_parts(
    client: &Arc<S3Client>,
    bucket: &str,
    key: &str,
    upload_id: String,
    ranges: &[(u64, u64)],
    file: &Arc<File>,
    opts: &TransferOptions,
) -> Result<Vec<CompletedPart>, ClientError> {
    let (concurrency, progress, algorithm) =
        (opts.concurrency, opts.progress.clone(), opts.checksum);
    let (client, file, ranges) = (Arc::clone(client), Arc::clone(file), ranges.to_vec());
    let (bucket, key) = (bucket.to_owned(), key.to_owned());
    let pool = Arc::new(BufferPool::default());
    for_each_part(ranges.len(), concurrency, move |i| {
        let (client, file, pool) = (Arc::clone(&client), Arc::clone(&file), Arc::clone(&pool));
        let progress = progress.clone();
        let (bucket, key, upload_id) = (bucket.clone(), key.clone(), upload_id.clone());
        let (start, end) = ranges[i];
        async move {
            let data = read_into(&file, start, end - start, pool.take()).await?;
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let sent = client
                .upload_part(&bucket, &key, &upload_id, number, data.clone(), algorithm)
                .await;
            pool.give(data);
            if let (Ok(_), Some(p)) = (&sent, &progress) {
                p.add(end - start);
            }
            sent
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_path_uploads_on_half_the_connections_with_twice_the_part() {
        let opts = TransferOptions::default();
        let (part, c) = (opts.part_size, opts.concurrency);
        let gib = 1 << 30;
        let cut = |took| upload_cut(took, gib, &opts);
        assert_eq!(cut(Duration::from_micros(400)), (part, c), "loopback");
        assert_eq!(cut(Duration::from_millis(19)), (part, c));
        assert_eq!(cut(Duration::from_millis(20)), (2 * part, c / 2));
        assert_eq!(
            cut(Duration::from_millis(205)),
            (2 * part, c / 2),
            "100 ms RTT"
        );
        let one = TransferOptions {
            concurrency: 1,
            ..opts.clone()
        };
        assert_eq!(upload_cut(Duration::from_secs(1), gib, &one), (part, 1));
    }

    #[test]
    fn upload_parts_stay_within_s3_limits_after_the_cut() {
        let small = TransferOptions {
            part_size: 1 << 20,
            ..TransferOptions::default()
        };
        let (part, _) = upload_cut(Duration::ZERO, 1 << 30, &small);
        assert_eq!(part, MIN_PART_SIZE, "no part under 5 MiB");
        // 5 TiB, S3's largest object: 10,000 parts at most, on either path.
        let huge = 5 << 40;
        for took in [Duration::ZERO, Duration::from_millis(205)] {
            let (part, c) = upload_cut(took, huge, &TransferOptions::default());
            assert!(upload_ranges(huge, part, c).len() as u64 <= MAX_PARTS);
        }
    }
}
