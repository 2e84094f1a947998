//! Parallel ranged downloads into a file that appears only when complete and checked.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures_util::FutureExt;
use tokio::io::AsyncWriteExt;

use slipstream_client::{ChecksumAlgorithm, ObjectKey, ObjectStream, S3Client};

use crate::cut::file_cut;
use crate::error::at;
use crate::file_time::{object_time, set_modified};
use crate::offset_writer::OffsetWriter;
use crate::pool::{for_each_part, part_permit};
use crate::source::{check_checksum, next_chunk, short, start, whole_first_len, Source};
use crate::stall;
use crate::stream::download_to_writer_seen;
use crate::walk::is_special;
use crate::TransferError;
use crate::TransferOptions;

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

/// Gives the downloaded file at `tmp` (to be renamed `dest`) its object's `time`. A file system
/// that refuses times (some network and FUSE mounts) keeps the download with the time it has,
/// as the AWS CLI keeps it: the data is whole and checked, only the next sync will move it
/// again; `opts.warn` is told, as the AWS CLI warns.
fn keep_time(tmp: &Path, time: std::time::SystemTime, dest: &Path, opts: &TransferOptions) {
    if let Err(e) = set_modified(tmp, time) {
        opts.tell(&format!(
            "{} was downloaded, but the file system refused it its object's time ({e}): a \
             sync will take it as changed",
            dest.display()
        ));
    }
}

/// Downloads `bucket/key` to `dest`. The data goes to a temporary file next to `dest`, renamed
/// to `dest` only after every part arrived, the size matched and (when the object has one) the
/// checksum matched; on any error the temporary file is removed and `dest` is untouched. A
/// file that cannot be made or written is a [`TransferError::File`] naming `dest`. `key` names
/// a version of the object, or (a `&str`) the current one.
///
/// A `dest` that is a device or a pipe (`/dev/null`, `/dev/stdout`, a FIFO, or a link to one)
/// is written in place, in order, as s3transfer writes such "special files": a temporary file
/// renamed over it would replace the device itself (as root, `/dev/null` with the object).
/// There the bytes are out before the checksum is compared, as on standard output.
pub async fn download_to_file<'k>(
    client: Arc<S3Client>,
    bucket: &str,
    key: impl Into<ObjectKey<'k>>,
    dest: &Path,
    opts: TransferOptions,
) -> Result<Downloaded, TransferError> {
    download_listed(client, bucket, key.into(), dest, None, opts).await
}

/// What a listing just said of an object: its size and (when it parsed) its time, nanoseconds
/// since 1970.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Listed {
    pub(crate) size: u64,
    pub(crate) modified: Option<i64>,
}

/// [`download_to_file`] of an object a listing just described: a small one then comes whole
/// from one GET, where an object of unknown size needs a HeadObject beside its first ranged GET
/// for its checksum (AWS S3 sends none on ranged answers). Over a long link that halves the
/// requests and connections of a prefix of small objects. The file takes the listing's time,
/// to the millisecond, when `opts.keep_modified_time` asks for the object's.
pub(crate) async fn download_listed(
    client: Arc<S3Client>,
    bucket: &str,
    key: ObjectKey<'_>,
    dest: &Path,
    listed: Option<Listed>,
    opts: TransferOptions,
) -> Result<Downloaded, TransferError> {
    if is_special(dest) {
        return to_special(client, (bucket, key, listed), dest, opts).await;
    }
    let (watched, limit) = (Arc::clone(&client), opts.stall_timeout);
    let work = to_file(client, bucket, key, dest, listed, opts);
    let done = stall::bounded(&watched, limit, true, work).await;
    done.map_err(|e| e.about(dest))
}

/// The object written into the device or pipe at `dest`, in order (opened for writing, not
/// made or truncated: neither means anything there).
async fn to_special(
    client: Arc<S3Client>,
    (bucket, key, listed): (&str, ObjectKey<'_>, Option<Listed>),
    dest: &Path,
    opts: TransferOptions,
) -> Result<Downloaded, TransferError> {
    let mut out = tokio::fs::OpenOptions::new()
        .write(true)
        .open(dest)
        .await
        .map_err(at(dest))?;
    let what = (bucket, key, listed.map(|l| l.size));
    let done = download_to_writer_seen(client, what, &mut out, opts, None).await;
    let flushed = out.flush().await;
    let done = done.map_err(|e| e.about(dest))?;
    flushed.map_err(at(dest))?;
    Ok(done)
}

/// The transfer itself, under the stall bound of [`download_to_file`].
async fn to_file(
    client: Arc<S3Client>,
    bucket: &str,
    key: ObjectKey<'_>,
    dest: &Path,
    listed: Option<Listed>,
    opts: TransferOptions,
) -> Result<Downloaded, TransferError> {
    let asked = Instant::now();
    let (info, first) = start(
        &client,
        bucket,
        key,
        whole_first_len(opts.part_size),
        listed.map(|l| l.size),
    )
    .await?;
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
        &info,
        first,
        part_size,
        concurrency,
    ));
    // Every part's length was checked on arrival and the file was sized up front, so the
    // combined checksum is all that is left to compare.
    let algorithm = info.checksum.as_ref().map(|c| c.algorithm);
    let crcs = fetch_all(&source, &file, algorithm, concurrency, &opts).await?;
    let checksum_verified = check_checksum(&info, |alg| {
        let parts = crcs.iter().zip(&source.ranges);
        parts.fold(0, |acc, (crc, (s, e))| alg.combine(acc, *crc, e - s))
    })?;
    if opts.keep_modified_time {
        let listed_time = listed.and_then(|l| l.modified);
        if let Some(time) = object_time(listed_time, &info.last_modified) {
            keep_time(&tmp, time, dest, &opts);
        }
    }
    // No fsync: a killed process leaves the page cache intact, so the rename still only ever
    // shows complete data; surviving power loss as well would slow every download.
    std::fs::rename(&tmp, dest)?;
    guard.0 = None;
    Ok(Downloaded {
        size: info.size,
        etag: info.etag,
        checksum_verified,
    })
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
) -> Result<Vec<u64>, TransferError> {
    let (progress, budget) = (opts.progress.clone(), opts.shared_parts.clone());
    let (source, file) = (Arc::clone(source), Arc::clone(file));
    for_each_part(source.ranges.len(), concurrency, move |i| {
        let (source, file, progress) = (Arc::clone(&source), Arc::clone(&file), progress.clone());
        let budget = budget.clone();
        async move {
            let (start, end) = source.ranges[i];
            // Part 0 is the first GET, already answered: it never waits for the budget.
            let _place = if i == 0 {
                None
            } else {
                part_permit(&budget).await
            };
            let crc = write_part(&source, i, &file, algorithm).await?;
            if let Some(p) = progress {
                p.add(end - start);
            }
            Ok(crc)
        }
    })
    .await
}

/// Part `i` of `source`, written into `file` at its offset as it arrives; returns its CRC
/// (0 without an `algorithm`). Nothing waits for the whole part: memory stays at a batch per
/// part in flight and the bytes are copied while still in the CPU's cache (faster, and a
/// fraction of the memory of holding whole parts: docs/BENCHMARKS-HISTORY.md, "Checksums and file parts
/// written as they arrive").
async fn write_part(
    source: &Source,
    i: usize,
    file: &Arc<OffsetWriter>,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<u64, TransferError> {
    source
        .read(i, |response, start, len| {
            write_body(response, start, len, file, algorithm)
        })
        .await
}

/// The most bytes gathered from frames for one positioned write: few enough system calls and
/// blocking-pool hand-offs (a thousand per GiB), small enough to stay in the CPU's cache.
const WRITE_BATCH: usize = 1 << 20;
/// The fewest: a write goes as soon as this much has come and the socket has nothing more
/// ready. A slow body (one of 256 objects sharing a long link) is not held until it makes a
/// whole batch: 256 objects of 1 MiB each held to the end took 858 MiB.
const WRITE_AT_LEAST: usize = 64 << 10;

/// Writes a GET's body of `want` bytes into `file` from offset `start`, the frames that have
/// arrived at a time (from [`WRITE_AT_LEAST`] to [`WRITE_BATCH`] bytes) off the runtime's
/// threads (which keep serving the sockets); returns the CRC of the bytes, fed in order. A
/// retry rewrites the same range, so a broken body leaves nothing wrong.
async fn write_body(
    mut body: ObjectStream,
    start: u64,
    want: u64,
    file: &Arc<OffsetWriter>,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<u64, TransferError> {
    let mut crc = algorithm.map(ChecksumAlgorithm::start);
    let (mut batch, mut batched) = (Vec::new(), 0);
    let (mut got, mut written) = (0, 0);
    loop {
        // Under WRITE_AT_LEAST, wait for the next frame; past it, take only a frame already
        // there (a pending read is dropped before it takes anything: frames are cancel-safe),
        // and write once none is.
        let next = if batched < WRITE_AT_LEAST {
            Some(next_chunk(&mut body, &mut got, (start, want)).await?)
        } else {
            next_chunk(&mut body, &mut got, (start, want))
                .now_or_never()
                .transpose()?
        };
        let end = matches!(next, Some(None));
        if let Some(Some(chunk)) = next {
            batched += chunk.len();
            batch.push(chunk);
            if batched < WRITE_BATCH {
                continue;
            }
        }
        if batched > 0 {
            let (file, frames, at) = (
                Arc::clone(file),
                std::mem::take(&mut batch),
                start + written,
            );
            crc = tokio::task::spawn_blocking(move || {
                file.write(&frames, at, crc.as_mut()).map(|()| crc)
            })
            .await
            .map_err(TransferError::from)??;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_time_the_file_system_refuses_keeps_the_file_and_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let told = Arc::new(Mutex::new(Vec::new()));
        let heard = Arc::clone(&told);
        let opts = TransferOptions {
            warn: Some(crate::Warn(Arc::new(move |text| {
                heard.lock().unwrap().push(text.to_owned())
            }))),
            ..TransferOptions::default()
        };
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_600_800);
        let (tmp, dest) = (dir.path().join(".f.part"), dir.path().join("f"));
        std::fs::write(&tmp, b"x").unwrap();
        keep_time(&tmp, at, &dest, &opts);
        assert!(told.lock().unwrap().is_empty(), "set: nothing to say");
        assert_eq!(std::fs::metadata(&tmp).unwrap().modified().unwrap(), at);
        // A file the time cannot be set on (here: gone) is said, by the name it will have.
        keep_time(&dir.path().join("gone"), at, &dest, &opts);
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 1);
        assert!(told[0].contains(&dest.display().to_string()) && told[0].contains("time"));
    }
}
