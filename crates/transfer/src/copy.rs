//! Server-side copies: the bytes stay in the storage, only requests cross the link.
//!
//! Up to `multipart_threshold` (5 GiB, S3's limit for one `CopyObject`) one `CopyObject`, which
//! keeps the source's metadata and checksum. Above it a multipart upload whose parts are
//! `UploadPartCopy` ranges, `concurrency` at a time; it carries the source's content headers
//! and `x-amz-meta-*` itself (as the AWS CLI does) and is created without a checksum algorithm,
//! like the AWS CLI's and rclone's: the server gives it the checksum it gives new objects. (Part
//! checksums asked of the server cannot be trusted everywhere: versitygw 1.8.0 answers each
//! `UploadPartCopy` with the source's whole checksum when the algorithms match.) Every copy is
//! pinned to the source's ETag, so a source replaced mid-copy fails the copy instead of mixing
//! two versions, and a multipart copy is checked afterwards: the new object's size, and its
//! whole-object checksum against the source's when both have one of the same algorithm.

use std::sync::Arc;

use crate::flight::for_each_listed;
use slipstream_client::xml::Object;
use slipstream_client::{CopyOptions, CustomerKey, ObjectInfo, ObjectKey, S3Client};
use tokio::sync::mpsc;

use crate::cleanup::multipart_upload;
use crate::many::objects_in_flight;
use crate::pool::for_each_part;
use crate::select::Selection;
use crate::{parts, Many, ManyOptions, TransferError, MAX_PARTS, MIN_PART_SIZE};

/// The largest object one `CopyObject` copies.
pub const MAX_COPY_OBJECT: u64 = 5 << 30;

/// How server-side copies are made.
#[derive(Clone, Debug)]
pub struct CopySettings {
    /// Sources larger than this are copied in parts (at most [`MAX_COPY_OBJECT`]).
    pub multipart_threshold: u64,
    /// Bytes per `UploadPartCopy` (raised as needed to stay within 10,000 parts).
    pub part_size: u64,
    /// Parts in flight at once.
    pub concurrency: usize,
    /// Metadata, storage class: what the new object changes (and its customer key, SSE-C).
    pub options: CopyOptions,
    /// The customer key (SSE-C) the sources of a many-object copy are encrypted with (the AWS
    /// CLI's `--sse-c-copy-source-key`); a single copy's is its [`CopySource`]'s.
    pub source_customer_key: Option<CustomerKey>,
}

impl Default for CopySettings {
    /// One `CopyObject` up to 5 GiB; 256 MiB parts, 16 at a time, above (each part is one
    /// request whatever its size, so large parts: 5 GiB is 20 requests, not 640).
    fn default() -> Self {
        Self {
            multipart_threshold: MAX_COPY_OBJECT,
            part_size: 256 << 20,
            concurrency: 16,
            options: CopyOptions::default(),
            source_customer_key: None,
        }
    }
}

/// The object a copy starts from, with what a listing already said about it (a copy of many
/// small objects then needs no `HeadObject` each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopySource {
    /// Its bucket.
    pub bucket: String,
    /// Its key.
    pub key: String,
    /// The version to copy (`None`: the current one).
    pub version_id: Option<String>,
    /// Its size and ETag, when listed; `None` asks the server.
    pub listed: Option<(u64, String)>,
    /// The customer key it is encrypted with (SSE-C), if any.
    pub customer_key: Option<CustomerKey>,
}

impl CopySource {
    /// The key and version copied, opened with its customer key.
    fn object(&self) -> ObjectKey<'_> {
        ObjectKey::new(&self.key, self.version_id.as_deref())
            .with_customer_key(self.customer_key.as_ref())
    }
}

/// What a finished copy made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopiedObject {
    /// Bytes copied.
    pub size: u64,
    /// Parts: 0 for one `CopyObject`.
    pub parts: usize,
}

/// Copies `source` to `bucket/key` on the server. A multipart copy that fails is aborted:
/// `key` is then unchanged.
pub async fn copy_object(
    client: &Arc<S3Client>,
    source: &CopySource,
    (bucket, key): (&str, &str),
    settings: &CopySettings,
) -> Result<CopiedObject, TransferError> {
    let threshold = settings.multipart_threshold.min(MAX_COPY_OBJECT);
    if let Some((size, etag)) = &source.listed {
        if *size <= threshold {
            return copy_whole(client, source, (bucket, key), *size, etag, settings).await;
        }
    }
    let info = client.head_object(&source.bucket, source.object()).await?;
    if info.size <= threshold {
        return copy_whole(
            client,
            source,
            (bucket, key),
            info.size,
            &info.etag,
            settings,
        )
        .await;
    }
    let part_size = settings
        .part_size
        .max(MIN_PART_SIZE)
        .max(info.size.div_ceil(MAX_PARTS));
    let ranges = Arc::new(parts(info.size, part_size));
    let mut headers: Vec<_> = match &settings.options.replace_metadata {
        Some(replaced) => replaced.clone(),
        None => info.copied_headers.clone(),
    }
    .into_iter()
    .map(|(n, v)| (n.into(), v))
    .collect();
    if let Some(class) = &settings.options.storage_class {
        headers.push(("x-amz-storage-class".into(), class.clone()));
    }
    // A multipart copy makes a new upload: its settings are plain upload headers.
    headers.extend(
        settings
            .options
            .settings
            .iter()
            .map(|(n, v)| (n.clone().into(), v.clone())),
    );
    let count = ranges.len();
    let made_key = settings.options.customer_key.as_ref();
    headers.extend(made_key.iter().flat_map(|k| k.headers()));
    multipart_upload(client, (bucket, key), None, headers, made_key, |upload| {
        let client = Arc::clone(client);
        let (src_bucket, src_key) = (source.bucket.clone(), source.object().to_buf());
        let etag = info.etag.clone();
        for_each_part(count, settings.concurrency, move |i| {
            let (client, ranges) = (Arc::clone(&client), Arc::clone(&ranges));
            let (src_bucket, src_key) = (src_bucket.clone(), src_key.clone());
            let (upload, etag) = (Arc::clone(&upload), etag.clone());
            async move {
                let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
                let from = (src_bucket.as_str(), src_key.as_key());
                client
                    .upload_part_copy(from, ranges[i], &etag, &upload, number)
                    .await
                    .map_err(TransferError::from)
            }
        })
    })
    .await?;
    let made = ObjectKey::from(key).with_customer_key(made_key);
    verify(client, (bucket, made), &info).await?;
    Ok(CopiedObject {
        size: info.size,
        parts: count,
    })
}

/// One `CopyObject`, pinned to the source's `etag`.
async fn copy_whole(
    client: &S3Client,
    source: &CopySource,
    (bucket, key): (&str, &str),
    size: u64,
    etag: &str,
    settings: &CopySettings,
) -> Result<CopiedObject, TransferError> {
    let options = CopyOptions {
        if_match: Some(etag.to_owned()).filter(|e| !e.is_empty()),
        ..settings.options.clone()
    };
    let from = (source.bucket.as_str(), source.object());
    client.copy_object(from, bucket, key, &options).await?;
    Ok(CopiedObject { size, parts: 0 })
}

/// Checks a completed multipart copy against its source: the same size, and the same
/// whole-object checksum when both have one of one algorithm.
async fn verify(
    client: &S3Client,
    (bucket, key): (&str, ObjectKey<'_>),
    source: &ObjectInfo,
) -> Result<(), TransferError> {
    let made = client.head_object(bucket, key).await?;
    if made.size != source.size {
        return Err(TransferError::BadResponse(format!(
            "the copy of {} bytes made an object of {} bytes",
            source.size, made.size
        )));
    }
    if let (Some(want), Some(got)) = (&source.checksum, &made.checksum) {
        if want.algorithm == got.algorithm && want.value != got.value {
            return Err(TransferError::ChecksumMismatch {
                algorithm: want.algorithm,
                computed: got.value.clone(),
                expected: want.value.clone(),
            });
        }
    }
    Ok(())
}

/// Copies every object `listed` yields (a listing of `selection`, see `select.rs`) to
/// `bucket/prefix` + its name relative to the selection's base, on the server,
/// `many.objects` at a time, starting with the first page of the listing. Stops at the first
/// error, once the copies in flight have ended, unless `many.on_failure` takes the errors of
/// single objects.
pub async fn copy_listed(
    client: &Arc<S3Client>,
    (src_bucket, selection): (&str, &Selection),
    listed: mpsc::Receiver<Result<Vec<Object>, TransferError>>,
    (bucket, prefix): (&str, &str),
    many: &ManyOptions,
    settings: &CopySettings,
) -> Result<Many, TransferError> {
    let in_flight = objects_in_flight(client, bucket, many.objects, usize::MAX).await?;
    let flat = many.flat_names();
    for_each_listed(listed, in_flight, |o| {
        let (size, modified) = (o.size, o.last_modified);
        let source = CopySource {
            bucket: src_bucket.to_owned(),
            key: o.key.clone(),
            version_id: None,
            listed: Some((o.size, o.etag)),
            customer_key: settings.source_customer_key.clone(),
        };
        let key = format!(
            "{prefix}{}",
            many.destination_name(selection.relative(&o.key))
        );
        let (client, bucket, settings, many, flat) = (
            Arc::clone(client),
            bucket.to_owned(),
            settings.clone(),
            many.clone(),
            flat.clone(),
        );
        async move {
            let moved = async {
                let named = || {
                    format!(
                        "s3://{}/{} -> s3://{bucket}/{key}",
                        source.bucket, source.key
                    )
                };
                let from = format!("s3://{}/{}", source.bucket, source.key);
                let to = (&*client, (bucket.as_str(), key.as_str()));
                let made_key = settings.options.customer_key.as_ref();
                let leaves =
                    many.leaves_copy(flat.as_deref(), (&from, size, &modified), to, made_key);
                if leaves.await? {
                    return Ok(None);
                }
                let copied = copy_object(&client, &source, (&bucket, &key), &settings)
                    .await
                    .map_err(|e| e.of_object(named))?;
                many.report(&source.key, &key, copied.size);
                Ok(Some(copied.size))
            };
            many.ended(moved.await)
        }
    })
    .await
}
