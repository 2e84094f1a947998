//! What each `Client` call does, once for both of its forms: the work as a future that owns its
//! arguments (the blocking form waits for it with the GIL released, the `*_async` form hands
//! it to the event loop), and the answer as the Python object boto3 users expect.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList, PyMemoryView, PyString};
use slipstream_client::xml::{ListPage, Object};
use slipstream_client::{
    ClientError, CustomerKey, DeleteError, ObjectInfo, ObjectKey, Version, SSE_C_ALGORITHM,
};
use slipstream_s3::pattern::Filters;
use slipstream_transfer::{
    copy_object, delete_listed, delete_versions_listed, download_to_file, list_versions_spread,
    sync, upload_bytes, upload_file, CopySettings, CopySource, DeleteReport, Deleted, Links,
    MemoryDownload, MetadataDirective, ObjectHeaders, Progress, Selection, Spread, SyncOptions,
    Synced, TransferError, VersionReport,
};

use crate::client::Client;
use crate::errors::Raise;
use crate::fresh_bytes::FreshBytes;

/// What `put_bytes` sends of `data`, as boto3's `put_object` takes a `Body`: a `bytes` as it
/// is (no copy: it cannot change); a `bytearray`, `memoryview`, `array.array`, NumPy array or
/// any object with the buffer protocol, its bytes copied (the caller may change the object
/// while the upload runs, and the GIL is released then); a `str` encoded as UTF-8. Anything
/// else is a `TypeError` naming what was given (`bytes(5)` would have made five zero bytes
/// of an `int`).
pub(crate) fn body(data: &Bound<'_, PyAny>) -> PyResult<PyBackedBytes> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(bytes.clone().into());
    }
    if let Ok(text) = data.cast::<PyString>() {
        let encoded = text.call_method1("encode", ("utf-8",))?;
        return Ok(encoded.cast_into::<PyBytes>()?.into());
    }
    let view = PyMemoryView::from(data).map_err(|_| {
        let given = data
            .get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        PyTypeError::new_err(format!(
            "data must be bytes, bytearray, memoryview, str or another object with the buffer \
             protocol, not {given}"
        ))
    })?;
    let copied = data.py().get_type::<PyBytes>().call1((view,))?;
    Ok(copied.cast_into::<PyBytes>()?.into())
}

/// `Client.sync`'s keywords.
pub(crate) struct SyncArgs {
    pub(crate) delete: bool,
    pub(crate) size_only: bool,
    pub(crate) exact_timestamps: bool,
    pub(crate) dryrun: bool,
    pub(crate) filters: Vec<(String, String)>,
    pub(crate) objects: Option<usize>,
    pub(crate) follow_symlinks: bool,
    /// `*`, `?` and `[` in the S3 paths are characters of the keys, not wildcards.
    pub(crate) raw: bool,
    /// The counter a `callback=` reads (`progress.rs`).
    pub(crate) progress: Option<Arc<Progress>>,
}

impl Client {
    /// `progress`: the counter a `callback=` reads (`progress.rs`).
    pub(crate) fn download_work(
        &self,
        bucket: &str,
        key: ObjectKey<'_>,
        path: PathBuf,
        progress: Option<Arc<Progress>>,
    ) -> impl Future<Output = Result<u64, TransferError>> + Send + 'static {
        let (client, opts) = (Arc::clone(&self.inner), self.transfer_options(progress));
        let (bucket, key) = (bucket.to_owned(), key.to_buf());
        async move {
            download_to_file(client, &bucket, key.as_key(), &path, opts)
                .await
                .map(|d| d.size)
        }
    }

    pub(crate) fn upload_work(
        &self,
        path: PathBuf,
        (bucket, key): (&str, &str),
        checksum_algorithm: Option<&str>,
        headers: ObjectHeaders,
        progress: Option<Arc<Progress>>,
    ) -> PyResult<impl Future<Output = Result<u64, TransferError>> + Send + 'static> {
        let client = Arc::clone(&self.inner);
        let opts = self.upload_options(checksum_algorithm, headers, progress)?;
        let (bucket, key) = (bucket.to_owned(), key.to_owned());
        Ok(async move {
            upload_file(client, &path, &bucket, &key, opts)
                .await
                .map(|u| u.size)
        })
    }

    /// The start of a download of the whole object (`range` `None`) or of `range` (start, end
    /// exclusive): its length is then known (a range past the object's end is cut short, as
    /// S3 cuts it), so the `bytes` can be made that long and the parts received into it.
    pub(crate) fn memory_start(
        &self,
        bucket: &str,
        key: ObjectKey<'_>,
        range: Option<(u64, u64)>,
    ) -> impl Future<Output = Result<MemoryDownload, TransferError>> + Send + 'static {
        let (client, opts) = (Arc::clone(&self.inner), self.opts.clone());
        let (bucket, key) = (bucket.to_owned(), key.to_buf());
        async move {
            let key = key.as_key();
            match range {
                Some(r) => MemoryDownload::start_range(client, &bucket, key, r, opts).await,
                None => MemoryDownload::start(client, &bucket, key, opts).await,
            }
        }
    }

    /// The whole object or `range` of it, parts in parallel: the size first, then the parts
    /// written into a new `bytes` from 1 MiB up (made with the GIL taken on a blocking thread:
    /// the hop costs some 30 µs, nothing beside a megabyte, an eighth of a small GET), else
    /// into a buffer copied into one at the end.
    pub(crate) fn memory_work(
        &self,
        bucket: &str,
        key: ObjectKey<'_>,
        range: Option<(u64, u64)>,
    ) -> impl Future<Output = PyResult<Whole>> + Send + 'static {
        let start = self.memory_start(bucket, key, range);
        let key = key.key.to_owned();
        async move {
            let download = start.await.map_err(Raise::raise)?;
            let size = memory_size(&download, &key)?;
            if size < IN_PLACE_FROM {
                let mut data = BytesMut::zeroed(size);
                download.read_into(&mut data).await.map_err(Raise::raise)?;
                return Ok(Whole::Copied(data.freeze()));
            }
            let mut bytes = fresh_bytes_off_runtime(size).await?;
            download
                .read_into(bytes.buffer())
                .await
                .map_err(Raise::raise)?;
            Ok(Whole::InPlace(bytes))
        }
    }

    /// Sends `data` from Python's own buffer (no copy), kept alive by the future: one
    /// `PutObject`, or from the multipart threshold a multipart upload of its slices.
    pub(crate) fn put_work(
        &self,
        (bucket, key): (&str, &str),
        data: PyBackedBytes,
        checksum_algorithm: Option<&str>,
        headers: ObjectHeaders,
    ) -> PyResult<impl Future<Output = Result<String, TransferError>> + Send + 'static> {
        let client = Arc::clone(&self.inner);
        let opts = self.upload_options(checksum_algorithm, headers, None)?;
        let (bucket, key) = (bucket.to_owned(), key.to_owned());
        let body = Bytes::from_owner(data);
        Ok(async move { upload_bytes(client, body, &bucket, &key, opts).await })
    }

    pub(crate) fn head_work(
        &self,
        bucket: &str,
        key: ObjectKey<'_>,
    ) -> impl Future<Output = Result<ObjectInfo, ClientError>> + Send + 'static {
        let client = Arc::clone(&self.inner);
        let (bucket, key) = (bucket.to_owned(), key.to_buf());
        async move { client.head_object(&bucket, key.as_key()).await }
    }

    /// `ListBuckets` of the buckets named with `prefix`, in `region` (boto3's `Prefix` and
    /// `BucketRegion`).
    pub(crate) fn list_buckets_work(
        &self,
        prefix: Option<String>,
        region: Option<String>,
    ) -> impl Future<Output = Result<Vec<slipstream_client::xml::Bucket>, ClientError>> + Send + 'static
    {
        let client = Arc::clone(&self.inner);
        let only = slipstream_client::BucketFilter { prefix, region };
        async move { client.list_buckets(&only).await }
    }

    /// One level of `prefix`, every page followed: its "directories" (keys cut after the
    /// first `delimiter` past the prefix) and the objects directly in it.
    pub(crate) fn list_level_work(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: &str,
    ) -> PyResult<impl Future<Output = Result<ListPage, ClientError>> + Send + 'static> {
        if delimiter.is_empty() {
            return Err(PyValueError::new_err(
                "delimiter must not be empty (list() lists every object under a prefix)",
            ));
        }
        let client = Arc::clone(&self.inner);
        let (bucket, prefix, delimiter) =
            (bucket.to_owned(), prefix.to_owned(), delimiter.to_owned());
        Ok(async move {
            client
                .list_gathered(&bucket, &prefix, Some(&delimiter))
                .await
        })
    }

    /// Every version and delete marker under `prefix`, all pages.
    pub(crate) fn versions_work(
        &self,
        bucket: &str,
        prefix: &str,
    ) -> impl Future<Output = Result<Vec<Version>, TransferError>> + Send + 'static {
        let selection = (Selection::Prefix(prefix.to_owned()), Filters::new());
        let (client, bucket) = (Arc::clone(&self.inner), bucket.to_owned());
        async move {
            // Spawned on the runtime the future runs on, not the caller's thread.
            let mut pages = list_versions_spread(client, &bucket, selection, 4, Spread::Never);
            let mut all = Vec::new();
            while let Some(page) = pages.recv().await {
                all.extend(page?);
            }
            Ok(all)
        }
    }

    pub(crate) fn delete_work(
        &self,
        bucket: &str,
        key: ObjectKey<'_>,
    ) -> impl Future<Output = Result<(), ClientError>> + Send + 'static {
        let client = Arc::clone(&self.inner);
        let (bucket, key) = (bucket.to_owned(), key.to_buf());
        async move { client.delete_object(&bucket, key.as_key()).await }
    }

    /// `DeleteObjects` batches of 1,000, 8 in flight: the current versions of `keys`, then
    /// the `versions` named (cut by `version_batches`: between keys, current versions last).
    pub(crate) fn delete_many_work(
        &self,
        bucket: &str,
        (keys, versions): (Vec<String>, Vec<Version>),
    ) -> impl Future<Output = Result<Deleted, TransferError>> + Send + 'static {
        let versioned = self.delete_versions_work(bucket, versions);
        let current = self.delete_keys_work(bucket, keys);
        async move {
            let mut done = current.await?;
            let gone = versioned.await?;
            done.deleted += gone.deleted;
            done.failed.extend(gone.failed);
            Ok(done)
        }
    }

    fn delete_versions_work(
        &self,
        bucket: &str,
        versions: Vec<Version>,
    ) -> impl Future<Output = Result<Deleted, TransferError>> + Send + 'static {
        let client = Arc::clone(&self.inner);
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let quiet: VersionReport = Arc::new(|_, _| {});
        let bucket = bucket.to_owned();
        async move {
            // One page, sent before the batches start, as `delete_keys_work` sends its keys.
            let _ = tx.send(Ok(versions)).await;
            drop(tx);
            delete_versions_listed(client, &bucket, rx, DELETES_IN_FLIGHT, quiet).await
        }
    }

    fn delete_keys_work(
        &self,
        bucket: &str,
        keys: Vec<String>,
    ) -> impl Future<Output = Result<Deleted, TransferError>> + Send + 'static {
        let client = Arc::clone(&self.inner);
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let objects = keys
            .into_iter()
            .map(|key| Object {
                key,
                ..Object::default()
            })
            .collect();
        let quiet: DeleteReport = Arc::new(|_| {});
        let bucket = bucket.to_owned();
        async move {
            // Sent before the batches start: the channel holds it, and ends with the sender.
            let _ = tx.send(Ok(objects)).await;
            drop(tx);
            delete_listed(client, &bucket, rx, DELETES_IN_FLIGHT, quiet).await
        }
    }

    pub(crate) fn copy_work(
        &self,
        (src_bucket, src_key): (&str, ObjectKey<'_>),
        (bucket, key): (&str, &str),
        headers: ObjectHeaders,
    ) -> impl Future<Output = Result<u64, TransferError>> + Send + 'static {
        let client = Arc::clone(&self.inner);
        let source = CopySource {
            bucket: src_bucket.to_owned(),
            key: src_key.key.to_owned(),
            version_id: src_key.version_id.map(str::to_owned),
            listed: None,
            customer_key: src_key.customer_key.cloned(),
        };
        let settings = CopySettings {
            concurrency: self.opts.concurrency,
            options: headers.copy_options(),
            ..CopySettings::default()
        };
        let (bucket, key) = (bucket.to_owned(), key.to_owned());
        async move {
            copy_object(&client, &source, (&bucket, &key), &settings)
                .await
                .map(|c| c.size)
        }
    }

    /// The sync, and where its actions gather as they complete.
    pub(crate) fn sync_work(
        &self,
        source: &str,
        destination: &str,
        a: SyncArgs,
    ) -> PyResult<(
        impl Future<Output = Result<Synced, TransferError>> + Send + 'static,
        crate::sync::Taken,
    )> {
        let mut filters = crate::sync::filters(a.filters)?;
        let (from, to) = (
            crate::sync::place(source, a.raw, Some(&mut filters))?,
            crate::sync::place(destination, a.raw, None)?,
        );
        let taken: crate::sync::Taken = Arc::default();
        let gather = Arc::clone(&taken);
        let options = SyncOptions {
            compare: crate::sync::compare(a.size_only, a.exact_timestamps)?,
            delete: a.delete,
            dryrun: a.dryrun,
            objects: a.objects,
            filters,
            copy: CopySettings {
                concurrency: self.opts.concurrency,
                ..CopySettings::default()
            },
            source: None,
            on_action: Some(Arc::new(move |action| {
                if let Ok(mut t) = gather.lock() {
                    t.push(action.clone());
                }
            })),
            // Followed by default, as `slipstream sync` and the AWS CLI follow them.
            links: Links::follow(a.follow_symlinks),
            // The first error raises, as boto3's calls raise.
            on_failure: None,
            case_conflict: Default::default(),
            on_case_conflict: None,
        };
        let (client, opts) = (Arc::clone(&self.inner), self.transfer_options(a.progress));
        let work = async move { sync(client, &from, &to, &options, opts).await };
        Ok((work, taken))
    }
}

/// The `ExtraArgs` names of boto3's uploads this client sends, for the error that lists them.
const EXTRA_ARGS: &str = "ACL, CacheControl, ContentDisposition, ContentEncoding, \
    ContentLanguage, ContentType, Expires, GrantFullControl, GrantRead, GrantReadACP, \
    GrantWriteACP, Metadata, ServerSideEncryption, SSECustomerAlgorithm, SSECustomerKey, \
    SSECustomerKeyMD5, SSEKMSKeyId, StorageClass, Tagging, WebsiteRedirectLocation";

/// boto3's `ExtraArgs` of an upload as the headers it sends (names in [`EXTRA_ARGS`]; `Metadata`
/// a dict sent as `x-amz-meta-*`, `Expires` a `datetime` or an HTTP date, `Tagging` a query
/// string `a=1&b=2`); any other name is a `ValueError` rather than silently dropped. Nothing is
/// guessed (boto3 guesses no type).
pub(crate) fn object_headers(extra: Option<&Bound<'_, PyDict>>) -> PyResult<ObjectHeaders> {
    let mut headers = ObjectHeaders::default();
    for (name, value) in extra.into_iter().flat_map(|d| d.iter()) {
        let name: String = name.extract()?;
        let slot = match name.as_str() {
            "ContentType" => &mut headers.content_type,
            "CacheControl" => &mut headers.cache_control,
            "StorageClass" => &mut headers.storage_class,
            "ContentDisposition" => &mut headers.content_disposition,
            "ContentEncoding" => &mut headers.content_encoding,
            "ContentLanguage" => &mut headers.content_language,
            "WebsiteRedirectLocation" => &mut headers.website_redirect,
            "ACL" => &mut headers.acl,
            "GrantRead" => &mut headers.grants.read,
            "GrantReadACP" => &mut headers.grants.read_acp,
            "GrantWriteACP" => &mut headers.grants.write_acp,
            "GrantFullControl" => &mut headers.grants.full_control,
            "ServerSideEncryption" => &mut headers.server_side_encryption,
            "SSEKMSKeyId" => &mut headers.sse_kms_key_id,
            "Tagging" => &mut headers.tagging,
            "SSECustomerAlgorithm" | "SSECustomerKey" | "SSECustomerKeyMD5" => continue,
            "Expires" => {
                headers.expires = Some(http_date(&value)?);
                continue;
            }
            "Metadata" => {
                let mut pairs: Vec<(String, String)> = value
                    .extract::<std::collections::HashMap<String, String>>()?
                    .into_iter()
                    .collect();
                pairs.sort();
                headers.metadata = pairs;
                continue;
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "extra_args: {other:?} is not one of {EXTRA_ARGS}"
                )))
            }
        };
        *slot =
            Some(value.extract().map_err(|_| {
                PyTypeError::new_err(format!("extra_args[{name:?}] must be a str"))
            })?);
    }
    headers.customer_key = extra_customer_key(extra)?;
    Ok(headers)
}

/// boto3's `ExtraArgs` of a copy: an upload's names ([`object_headers`]) and
/// `MetadataDirective` (`"COPY"` keeps the source's metadata and content headers whatever is
/// given, `"REPLACE"` replaces them even with none; without it, giving any replaces them, as
/// the CLI's `cp` does). The copy's SSE-C key is `sse_customer_key` or the `ExtraArgs`' one.
pub(crate) fn copy_headers(
    extra: Option<&Bound<'_, PyDict>>,
    sse_customer_key: Option<&Bound<'_, PyAny>>,
) -> PyResult<ObjectHeaders> {
    let directive = match extra
        .map(|d| d.get_item("MetadataDirective"))
        .transpose()?
        .flatten()
    {
        None => None,
        Some(v) => Some(match v.extract::<String>()?.as_str() {
            "COPY" => MetadataDirective::Copy,
            "REPLACE" => MetadataDirective::Replace,
            other => {
                return Err(PyValueError::new_err(format!(
                    "extra_args: MetadataDirective is \"COPY\" or \"REPLACE\", not {other:?}"
                )))
            }
        }),
    };
    let rest = match extra {
        Some(d) if directive.is_some() => {
            let rest = d.copy()?;
            rest.del_item("MetadataDirective")?;
            Some(rest)
        }
        _ => extra.cloned(),
    };
    let mut headers = object_headers(rest.as_ref())?;
    headers.metadata_directive = directive;
    if let Some(key) = customer_key(sse_customer_key)? {
        if headers.customer_key.is_some() {
            return Err(PyValueError::new_err(
                "the copy's SSE-C key is given twice: sse_customer_key and extra_args",
            ));
        }
        headers.customer_key = Some(key);
    }
    Ok(headers)
}

/// SSE-C in boto3's `ExtraArgs`: `SSECustomerAlgorithm` (`"AES256"`) with `SSECustomerKey`,
/// the key's 32 bytes (a `str` taken as its UTF-8); with `SSECustomerKeyMD5` too, botocore
/// sends the key as given, so it is then taken in base64, and checked against the MD5.
fn extra_customer_key(extra: Option<&Bound<'_, PyDict>>) -> PyResult<Option<CustomerKey>> {
    let Some(extra) = extra else {
        return Ok(None);
    };
    let algorithm: Option<String> = extra
        .get_item("SSECustomerAlgorithm")?
        .map(|v| v.extract())
        .transpose()?;
    let key = extra.get_item("SSECustomerKey")?;
    let md5: Option<String> = extra
        .get_item("SSECustomerKeyMD5")?
        .map(|v| v.extract())
        .transpose()?;
    let key = match (algorithm.as_deref(), key) {
        (None, None) if md5.is_none() => return Ok(None),
        (Some(SSE_C_ALGORITHM), Some(key)) => key,
        (Some(other), Some(_)) => {
            return Err(PyValueError::new_err(format!(
                "extra_args: SSECustomerAlgorithm is {other:?}; S3's only one is \"AES256\""
            )))
        }
        _ => {
            return Err(PyValueError::new_err(
                "extra_args: SSE-C takes SSECustomerAlgorithm (\"AES256\") and SSECustomerKey \
                 together",
            ))
        }
    };
    match md5 {
        Some(md5) => {
            let text: String = key.extract().map_err(|_| {
                PyTypeError::new_err(
                    "extra_args: with SSECustomerKeyMD5, SSECustomerKey is the key in base64 (a str)",
                )
            })?;
            CustomerKey::from_base64(&text, &md5)
                .map(Some)
                .map_err(PyValueError::new_err)
        }
        None => customer_key(Some(&key)),
    }
}

/// A call's `sse_customer_key=` (boto3's `SSECustomerKey`): an SSE-C key's 32 bytes, as
/// `bytes` or a `str` (its UTF-8, as botocore takes one).
pub(crate) fn customer_key(given: Option<&Bound<'_, PyAny>>) -> PyResult<Option<CustomerKey>> {
    let Some(given) = given else {
        return Ok(None);
    };
    let bytes: Vec<u8> = if given.is_instance_of::<PyString>() {
        given.extract::<String>()?.into_bytes()
    } else if let Ok(bytes) = given.cast::<PyBytes>() {
        bytes.as_bytes().to_vec()
    } else {
        return Err(PyTypeError::new_err(
            "an SSE-C key is bytes (32 of them) or a str of 32 bytes",
        ));
    };
    CustomerKey::from_bytes(&bytes)
        .map(Some)
        .map_err(PyValueError::new_err)
}

/// An `Expires` value as the header's HTTP date: a `datetime` (an aware one, or naive as UTC,
/// as botocore reads it) is formatted, a `str` sent as it is.
fn http_date(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = value.extract::<String>() {
        return Ok(text);
    }
    let py = value.py();
    let datetime = py.import("datetime")?;
    if !value.is_instance(&datetime.getattr("datetime")?)? {
        return Err(PyTypeError::new_err(
            "extra_args[\"Expires\"] must be a datetime or an HTTP date string",
        ));
    }
    let utc = datetime.getattr("timezone")?.getattr("utc")?;
    let aware = if value.getattr("tzinfo")?.is_none() {
        let kwargs = PyDict::new(py);
        kwargs.set_item("tzinfo", &utc)?;
        value.call_method("replace", (), Some(&kwargs))?
    } else {
        value.call_method1("astimezone", (&utc,))?
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item("usegmt", true)?;
    py.import("email.utils")?
        .getattr("format_datetime")?
        .call((aware,), Some(&kwargs))?
        .extract()
}

/// `ListBuckets`' buckets as boto3 names their fields (`Name`, `CreationDate` as S3 wrote it).
pub(crate) fn bucket_list<'py>(
    py: Python<'py>,
    buckets: &[slipstream_client::xml::Bucket],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for b in buckets {
        let d = PyDict::new(py);
        d.set_item("Name", &b.name)?;
        d.set_item("CreationDate", &b.created)?;
        if let Some(region) = &b.region {
            d.set_item("BucketRegion", region)?;
        }
        list.append(d)?;
    }
    Ok(list)
}

/// `HeadObject`'s answer with boto3's names: `ContentLength`, `ETag`, `LastModified`,
/// `Metadata` (`x-amz-meta-*` without the prefix), the content headers (`ContentType`...) and
/// the whole-object checksum (`ChecksumCRC64NVME`...).
pub(crate) fn head_dict<'py>(py: Python<'py>, info: &ObjectInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ContentLength", info.size)?;
    d.set_item("ETag", &info.etag)?;
    d.set_item("LastModified", &info.last_modified)?;
    let metadata = PyDict::new(py);
    for (name, value) in &info.copied_headers {
        match name.strip_prefix("x-amz-meta-") {
            Some(m) => metadata.set_item(m, value)?,
            None => d.set_item(boto3_name(name), value)?,
        }
    }
    d.set_item("Metadata", metadata)?;
    // As boto3: present only when the answer has them (no storage class means STANDARD).
    if let Some(class) = &info.storage_class {
        d.set_item("StorageClass", class)?;
    }
    if let Some(version) = &info.version_id {
        d.set_item("VersionId", version)?;
    }
    if let Some(c) = &info.checksum {
        d.set_item(c.algorithm.xml_tag(), &c.value)?;
    }
    for (name, value) in &info.encryption {
        let boto3 = match name.trim_start_matches("x-amz-server-side-encryption") {
            "" => "ServerSideEncryption",
            "-aws-kms-key-id" => "SSEKMSKeyId",
            "-customer-algorithm" => "SSECustomerAlgorithm",
            "-customer-key-md5" => "SSECustomerKeyMD5",
            "-bucket-key-enabled" => {
                d.set_item("BucketKeyEnabled", value.eq_ignore_ascii_case("true"))?;
                continue;
            }
            _ => continue,
        };
        d.set_item(boto3, value)?;
    }
    Ok(d)
}

/// The keys S3 refused to delete, as `[{"Key", "Code", "Message"}]`.
pub(crate) fn refused<'py>(
    py: Python<'py>,
    failed: &[DeleteError],
) -> PyResult<Bound<'py, PyList>> {
    let items = failed
        .iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("Key", &f.key)?;
            if let Some(version) = &f.version_id {
                d.set_item("VersionId", version)?;
            }
            d.set_item("Code", &f.code)?;
            d.set_item("Message", &f.message)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// `content-type` as boto3 names it: `ContentType`.
fn boto3_name(header: &str) -> String {
    header
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// What `delete_many` is asked to delete: keys (their current versions), and versions named
/// as `(key, version_id)` or as boto3's dicts (`{"Key", "VersionId"}`, e.g. the entries of
/// `list_versions`, whose `IsLatest` orders the batches).
pub(crate) fn deletions(items: &Bound<'_, PyAny>) -> PyResult<(Vec<String>, Vec<Version>)> {
    if items.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "keys must be a list of keys (or of versions), not one str",
        ));
    }
    let (mut keys, mut versions) = (Vec::new(), Vec::new());
    for item in items.try_iter()? {
        let item = item?;
        if let Ok(key) = item.extract::<String>() {
            keys.push(key);
        } else if let Ok((key, version_id)) = item.extract::<(String, String)>() {
            versions.push(Version {
                key,
                version_id,
                ..Version::default()
            });
        } else if let Ok(d) = item.cast::<PyDict>() {
            let key: String = d
                .get_item("Key")?
                .ok_or_else(|| PyValueError::new_err("a dict to delete needs a \"Key\""))?
                .extract()?;
            match d.get_item("VersionId")? {
                Some(v) if !v.is_none() => versions.push(Version {
                    key,
                    version_id: v.extract()?,
                    is_latest: match d.get_item("IsLatest")? {
                        Some(latest) => latest.is_truthy()?,
                        None => false,
                    },
                    ..Version::default()
                }),
                _ => keys.push(key),
            }
        } else {
            return Err(PyTypeError::new_err(format!(
                "each item to delete is a key (str), a (key, version_id) tuple or a dict with \"Key\" and \"VersionId\", not {}",
                item.get_type().name()?
            )));
        }
    }
    Ok((keys, versions))
}

/// `DeleteObjects` requests in flight for `delete_many`.
const DELETES_IN_FLIGHT: usize = 8;

/// From this size the awaited `get_bytes` fills a `bytes` in place ([`Client::memory_work`]).
const IN_PLACE_FROM: usize = 1 << 20;

/// A whole object for `get_bytes_async`: in the `bytes` it will be, or in a buffer to copy.
pub(crate) enum Whole {
    InPlace(FreshBytes),
    Copied(Bytes),
}

impl Whole {
    pub(crate) fn into_bytes(self, py: Python<'_>) -> Bound<'_, PyBytes> {
        match self {
            Whole::InPlace(bytes) => bytes.into_bytes(py),
            Whole::Copied(data) => PyBytes::new(py, &data),
        }
    }
}

/// A new `bytes` of `size` made from a runtime thread: the GIL is taken on a blocking thread
/// (waiting for it on a runtime thread would hold up the other transfers).
async fn fresh_bytes_off_runtime(size: usize) -> PyResult<FreshBytes> {
    let made =
        tokio::task::spawn_blocking(move || crate::exit::attach(|py| FreshBytes::new(py, size)));
    made.await
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?
        .ok_or_else(|| PyRuntimeError::new_err("Python is exiting"))?
}

/// The object's size as a length in memory, or the `MemoryError` that it does not fit.
pub(crate) fn memory_size(download: &MemoryDownload, key: &str) -> PyResult<usize> {
    usize::try_from(download.size())
        .map_err(|_| PyMemoryError::new_err(format!("{key}: too large for memory")))
}
