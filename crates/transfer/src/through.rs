//! Copies between two services or accounts (another endpoint, other credentials), where a
//! server-side copy cannot work: S3 would read the source with the destination's credentials.
//! The bytes stream through this machine instead, the download feeding the upload through a
//! pipe, so memory stays bounded: the pipe, plus the parts in flight on each side (which the
//! shared part budget bounds for many objects). A listed object small enough for one
//! `PutObject` goes through one buffer of its size instead.
//!
//! The new object gets the source's content headers and metadata (learnt from the download's
//! first answer, before the upload starts), as a server-side copy keeps them, unless the
//! caller gives its own ([`crate::ObjectHeaders::replacement`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use slipstream_client::xml::Object;
use slipstream_client::{ObjectKey, S3Client};
use tokio::sync::{mpsc, oneshot};

use crate::flight::for_each_listed;
use crate::many::{objects_in_flight_between, with_part_budget};
use crate::memory::MemoryDownload;
use crate::select::Selection;
use crate::stall;
use crate::stream::{download_to_writer_seen, single_put_below};
use crate::{upload_from_reader, Many, ManyOptions, TransferError, TransferOptions, Uploaded};

/// The pipe between the download and the upload: one part, at most 8 MiB (the download's
/// parts wait in its own reorder buffer, not here).
const PIPE_MAX: u64 = 8 << 20;

/// Copies `src_bucket/src_key` (a version of it, when the key names one), read with `source`,
/// to `bucket/key`, written with `client`. A
/// failed download fails the upload (which is then aborted): a truncated object is never
/// completed. Progress counts the download's bytes.
pub async fn copy_through(
    source: Arc<S3Client>,
    client: Arc<S3Client>,
    (src_bucket, src_key): (&str, ObjectKey<'_>),
    (bucket, key): (&str, &str),
    opts: TransferOptions,
) -> Result<Uploaded, TransferError> {
    copy_listed_object(
        source,
        client,
        (src_bucket, src_key, None),
        (bucket, key),
        opts,
    )
    .await
}

/// [`copy_through`] of an object a listing named, `listed` its size there: a small object is
/// then read with one GET, without the HeadObject an unknown size needs beside it, and one
/// that fits a single `PutObject` goes through memory ([`copy_small`]) rather than the pipe.
pub(crate) async fn copy_listed_object(
    source: Arc<S3Client>,
    client: Arc<S3Client>,
    (src_bucket, src_key, listed): (&str, ObjectKey<'_>, Option<u64>),
    (bucket, key): (&str, &str),
    opts: TransferOptions,
) -> Result<Uploaded, TransferError> {
    if let Some(size) = listed.filter(|&size| size < single_put_below(&opts)) {
        let from = (src_bucket, src_key, size);
        let small = copy_small(Arc::clone(&source), &client, from, (bucket, key), &opts).await?;
        if let Some(done) = small {
            return Ok(done);
        }
    }
    let up_opts = TransferOptions {
        progress: None,
        ..opts.clone()
    };
    let pipe = usize::try_from(opts.part_size.min(PIPE_MAX)).unwrap_or(1 << 20);
    let (mut writer, reader) = tokio::io::duplex(pipe);
    let failed = Arc::new(AtomicBool::new(false));
    let mut reader = FailableReader {
        inner: reader,
        failed: Arc::clone(&failed),
    };
    let (seen_tx, seen) = oneshot::channel();
    let down = async {
        let r = download_to_writer_seen(
            source,
            (src_bucket, src_key, listed),
            &mut writer,
            opts,
            Some(seen_tx),
        )
        .await;
        // Set before the writer closes, so the upload sees the failure, not a clean end.
        failed.store(r.is_err(), Ordering::SeqCst);
        drop(writer);
        r
    };
    let up = async {
        // The download's first answer names the source's headers; without one the download
        // failed, and its error is the one returned.
        let info = seen.await.map_err(|_| {
            TransferError::Invalid("the copy's download ended before its first answer".into())
        })?;
        let up_opts = TransferOptions {
            headers: up_opts.headers.copying(&info.copied_headers),
            ..up_opts
        };
        upload_from_reader(client, &mut reader, bucket, key, up_opts).await
    };
    let (down, up) = tokio::join!(down, up);
    down?;
    up
}

/// An object small enough for one `PutObject`, received whole into a buffer of its size (its
/// parts retried, their lengths and the object's checksum checked, as any download's) and put
/// from it. Through the pipe the same object was held up to three times (the download's part,
/// the pipe, the upload's buffer) and copied twice more: 64 objects of 1 MiB in flight took
/// over 300 MiB. `None`, with nothing written, when the object has grown past a single
/// `PutObject` since the listing: the caller streams it. Its listed size is taken from the
/// transfer's budget of bodies held (`shared_bodies`) before the GET, and given back once the
/// object is put.
async fn copy_small(
    source: Arc<S3Client>,
    client: &Arc<S3Client>,
    (src_bucket, src_key, listed): (&str, ObjectKey<'_>, u64),
    (bucket, key): (&str, &str),
    opts: &TransferOptions,
) -> Result<Option<Uploaded>, TransferError> {
    // Below the multipart threshold, so below one part: within any budget.
    let kib = u32::try_from(listed.div_ceil(1024).max(1)).unwrap_or(u32::MAX);
    let _held = match &opts.shared_bodies {
        Some(budget) => Some(
            budget
                .acquire_many(kib)
                .await
                .map_err(|_| TransferError::Io(std::io::Error::other("the copy was stopped")))?,
        ),
        None => None,
    };
    let from = (src_bucket, src_key, Some(listed));
    let down = MemoryDownload::start_listed(source, from, opts.clone()).await?;
    let size = down.size();
    if size >= single_put_below(opts) {
        return Ok(None);
    }
    let headers = opts
        .headers
        .copying(&down.info().copied_headers)
        .for_key(key);
    let mut data = BytesMut::zeroed(size as usize);
    down.read_into(&mut data).await?;
    let put = async {
        client
            .put_object_with(bucket, key, data.freeze(), opts.checksum, headers)
            .await
            .map_err(TransferError::from)
    };
    stall::bounded(client, opts.stall_timeout, false, put).await?;
    Ok(Some(Uploaded { size, parts: 0 }))
}

/// [`copy_through`] for every object `listed` yields (a listing of `selection` made with
/// `source`), to `bucket/prefix` + its name relative to the selection's base,
/// `many.objects` at a time, starting with the first page. Stops at the first error (unless
/// `many.on_failure` takes the errors of single objects) once the
/// copies in flight have ended.
pub async fn copy_listed_through(
    source: &Arc<S3Client>,
    client: &Arc<S3Client>,
    (src_bucket, selection): (&str, &Selection),
    listed: mpsc::Receiver<Result<Vec<Object>, TransferError>>,
    (bucket, prefix): (&str, &str),
    many: &ManyOptions,
    opts: TransferOptions,
) -> Result<Many, TransferError> {
    let ends = ((&**source, src_bucket), (&**client, bucket));
    let in_flight = objects_in_flight_between(ends.0, ends.1, many.objects).await?;
    let opts = with_part_budget(opts);
    let flat = many.flat_names();
    for_each_listed(listed, in_flight, |o| {
        let key = format!(
            "{prefix}{}",
            many.destination_name(selection.relative(&o.key))
        );
        let (source, client, many, opts, flat) = (
            Arc::clone(source),
            Arc::clone(client),
            many.clone(),
            opts.clone(),
            flat.clone(),
        );
        let (src_bucket, bucket) = (src_bucket.to_owned(), bucket.to_owned());
        async move {
            let moved = async {
                let named = || format!("s3://{src_bucket}/{} -> s3://{bucket}/{key}", o.key);
                let from = format!("s3://{src_bucket}/{}", o.key);
                let to = (&*client, (bucket.as_str(), key.as_str()));
                let made_key = opts.headers.customer_key.as_ref();
                let leaves = many.leaves_copy(
                    flat.as_deref(),
                    (&from, o.size, &o.last_modified),
                    to,
                    made_key,
                );
                if leaves.await? {
                    return Ok(None);
                }
                let read = opts.source_customer_key.clone();
                let object = ObjectKey::from(&o.key).with_customer_key(read.as_ref());
                let from = (src_bucket.as_str(), object, Some(o.size));
                let done = copy_listed_object(source, client, from, (&bucket, &key), opts)
                    .await
                    .map_err(|e| e.of_object(named))?;
                many.report(&o.key, &key, done.size);
                Ok(Some(done.size))
            };
            many.ended(moved.await)
        }
    })
    .await
}

/// The upload side of [`copy_through`]: an end of input after a failed download is an error.
struct FailableReader {
    inner: tokio::io::DuplexStream,
    failed: Arc<AtomicBool>,
}

impl tokio::io::AsyncRead for FailableReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = polled {
            if buf.filled().len() == before && self.failed.load(Ordering::SeqCst) {
                return std::task::Poll::Ready(Err(std::io::Error::other(
                    "the download side of the copy failed",
                )));
            }
        }
        polled
    }
}
