//! The S3 operations the transfer engine and the CLI use, each one signed request.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::Method;
use slipstream_sign::encode::encode_query;

use crate::checksum::{Checksum, ChecksumAlgorithm};
use crate::client::Call;
use crate::object::ObjectStream;
use crate::xml::{self, ListPage};
use crate::{BucketFilter, ClientError, CustomerKey, FileRange, ObjectKey, Payload, S3Client};
use slipstream_s3::versions::{version_page, VersionMarker, VersionPage};

/// What `HeadObject` says about an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Size in bytes.
    pub size: u64,
    /// The ETag, quotes included: pinned on every ranged GET of a download.
    pub etag: String,
    /// `Last-Modified`, as sent.
    pub last_modified: String,
    /// A checksum of the whole object (CRC64NVME, CRC32C or CRC32, the first the object has),
    /// which a download can check. A composite checksum (of the part checksums, `…-N`, left by
    /// a multipart upload with a 32-bit CRC) is not one and is left out.
    pub checksum: Option<Checksum>,
    /// The headers a multipart copy carries to the new object (content headers and
    /// `x-amz-meta-*`, see `slipstream_s3::copy::is_copied_header`), lowercase names.
    pub copied_headers: Vec<(String, String)>,
    /// `x-amz-storage-class`: S3 sends it for every class but STANDARD.
    pub storage_class: Option<String>,
    /// `x-amz-version-id`, in a versioned bucket.
    pub version_id: Option<String>,
    /// How the object is encrypted at rest, as the answer says (boto3's `ServerSideEncryption`,
    /// `SSEKMSKeyId`, `SSECustomerAlgorithm`, `SSECustomerKeyMD5`, `BucketKeyEnabled`): the
    /// `x-amz-server-side-encryption*` headers, lowercase names.
    pub encryption: Vec<(String, String)>,
}

/// A part of a multipart upload, as `CompleteMultipartUpload` needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedPart {
    /// 1 to 10,000.
    pub number: u32,
    /// The ETag S3 returned for it.
    pub etag: String,
    /// Its checksum's algorithm, which S3 checked on arrival; `None` for a part copied on the
    /// server into an upload created without one.
    pub algorithm: Option<ChecksumAlgorithm>,
    /// The CRC of its bytes (0 without an algorithm).
    pub crc: u64,
    /// Its length, to combine the CRCs of the parts into the whole object's.
    pub size: u64,
}

pub(crate) fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The `Range` header of bytes `start..end` (end exclusive; an empty range is refused).
fn range_header((start, end): (u64, u64)) -> Result<(Cow<'static, str>, String), ClientError> {
    if end <= start {
        return Err(ClientError::Request(format!("empty range {start}..{end}")));
    }
    Ok(("range".into(), format!("bytes={start}-{}", end - 1)))
}

/// What a HeadObject (or a whole GET) answer says of the object, with its size given.
fn object_info(h: &HeaderMap, size: u64) -> ObjectInfo {
    ObjectInfo {
        size,
        etag: header(h, "etag").unwrap_or_default(),
        last_modified: header(h, "last-modified").unwrap_or_default(),
        checksum: whole_checksum(h),
        copied_headers: h
            .iter()
            .filter(|(n, _)| slipstream_s3::copy::is_copied_header(n.as_str()))
            // UTF-8, not only ASCII: servers pass `x-amz-meta-*` bytes through as sent.
            .filter_map(|(n, v)| {
                let v = std::str::from_utf8(v.as_bytes()).ok()?;
                Some((n.as_str().to_owned(), v.to_owned()))
            })
            .collect(),
        storage_class: header(h, "x-amz-storage-class"),
        version_id: header(h, "x-amz-version-id"),
        encryption: h
            .iter()
            .filter(|(n, _)| n.as_str().starts_with("x-amz-server-side-encryption"))
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect(),
    }
}

/// The first whole-object checksum among `headers` (see [`ObjectInfo::checksum`]).
fn whole_checksum(headers: &HeaderMap) -> Option<Checksum> {
    if header(headers, "x-amz-checksum-type").is_some_and(|t| t == "COMPOSITE") {
        return None;
    }
    ChecksumAlgorithm::ALL.into_iter().find_map(|algorithm| {
        let value = header(headers, algorithm.header()).filter(|v| !v.contains('-'))?;
        Some(Checksum { algorithm, value })
    })
}

/// A multipart upload under way: its object, its ID, and the customer key the object is
/// encrypted with (SSE-C), which every part and the completion send again.
#[derive(Clone, Debug)]
pub struct MultipartUpload {
    /// The bucket.
    pub bucket: String,
    /// The object's key.
    pub key: String,
    /// What `CreateMultipartUpload` answered.
    pub upload_id: String,
    /// The key `CreateMultipartUpload` was sent with, if any.
    pub customer_key: Option<CustomerKey>,
}

impl MultipartUpload {
    /// The query of part `number`.
    pub(crate) fn part_query(&self, number: u32) -> String {
        format!(
            "partNumber={number}&uploadId={}",
            encode_query(&self.upload_id)
        )
    }
}

pub(crate) async fn body_bytes(body: Incoming) -> Result<Bytes, ClientError> {
    body.collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| ClientError::Network(format!("reading the response body: {e}")))
}

impl S3Client {
    /// Whether `key` exists: `HeadObject`, its 404 read as `false` (`--no-clobber`'s check).
    pub async fn object_exists<'k>(
        &self,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
    ) -> Result<bool, ClientError> {
        let key = key.into();
        let call = Call {
            headers: CustomerKey::headers_of(key.customer_key),
            ..Call::of(Method::HEAD, bucket, key)
        };
        match self.send(&call).await {
            Ok(_) => Ok(true),
            Err(ClientError::S3 { status: 404, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `HeadObject`: size, ETag and checksum (asks for it with `x-amz-checksum-mode`).
    pub async fn head_object<'k>(
        &self,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
    ) -> Result<ObjectInfo, ClientError> {
        let key = key.into();
        let mut headers = CustomerKey::headers_of(key.customer_key);
        headers.push(("x-amz-checksum-mode".into(), "ENABLED".into()));
        let r = self
            .send(&Call {
                headers,
                ..Call::of(Method::HEAD, bucket, key)
            })
            .await
            .map_err(|e| head_failed(e, || format!("HeadObject s3://{bucket}/{key}")))?;
        let h = r.headers();
        let size = header(h, "content-length")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ClientError::Response("HeadObject without a Content-Length".into()))?;
        Ok(object_info(h, size))
    }

    /// A download's first `GetObject`: bytes `start..end`, or the whole object when `range`
    /// is `None` (one request for an object a listing said is small), asking for the object's
    /// checksum (`x-amz-checksum-mode`). Besides the stream, what the answer says of the
    /// object, as HeadObject would: the size from `Content-Range` (the answer's length without
    /// one), the ETag, and the checksum when the server sent one (S3 sends it on whole-object
    /// answers, none on ranged ones; some servers do when the range covers the whole object).
    pub async fn get_first<'k>(
        &self,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
        range: Option<(u64, u64)>,
    ) -> Result<(ObjectStream, ObjectInfo), ClientError> {
        let key = key.into();
        let mut headers = CustomerKey::headers_of(key.customer_key);
        headers.push(("x-amz-checksum-mode".into(), "ENABLED".into()));
        if let Some(range) = range {
            headers.push(range_header(range)?);
        }
        let response = self
            .send(&Call {
                headers,
                ..Call::of(Method::GET, bucket, key)
            })
            .await?;
        let mut info = object_info(response.headers(), 0);
        let stream = ObjectStream::new(response, self.read_timeout(), Arc::clone(self.activity()));
        info.size = stream
            .total_size
            .or(stream.content_length)
            .ok_or_else(|| ClientError::Response("a GET without a Content-Length".into()))?;
        Ok((stream, info))
    }

    /// `GetObject` of bytes `start..end` (all when `None`), only if the ETag is still `if_match`;
    /// the body streams from the response.
    pub async fn get_object<'k>(
        &self,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
        range: Option<(u64, u64)>,
        if_match: Option<&str>,
    ) -> Result<ObjectStream, ClientError> {
        let key = key.into();
        let mut headers = CustomerKey::headers_of(key.customer_key);
        if let Some(etag) = if_match {
            headers.push(("if-match".into(), etag.to_owned()));
        }
        if let Some(range) = range {
            headers.push(range_header(range)?);
        }
        let response = self
            .send(&Call {
                headers,
                ..Call::of(Method::GET, bucket, key)
            })
            .await?;
        Ok(ObjectStream::new(
            response,
            self.read_timeout(),
            Arc::clone(self.activity()),
        ))
    }

    /// `GetObject` into memory (whole object, or `start..end`).
    pub async fn get_bytes<'k>(
        &self,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
        range: Option<(u64, u64)>,
    ) -> Result<Bytes, ClientError> {
        self.get_object(bucket, key, range, None)
            .await?
            .bytes()
            .await
    }

    /// `PutObject` of `body` in one request, with its checksum (S3 refuses it if the bytes
    /// differ). Returns the ETag.
    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: Bytes,
        algorithm: ChecksumAlgorithm,
    ) -> Result<String, ClientError> {
        self.put_object_with(bucket, key, body, algorithm, Vec::new())
            .await
    }

    /// [`S3Client::put_object`] with `headers` for the new object (`content-type`,
    /// `cache-control`, `x-amz-meta-*`, `x-amz-storage-class`).
    pub async fn put_object_with(
        &self,
        bucket: &str,
        key: &str,
        body: Bytes,
        algorithm: ChecksumAlgorithm,
        headers: Vec<(Cow<'static, str>, String)>,
    ) -> Result<String, ClientError> {
        let checksum = algorithm.base64_of(&body);
        self.put(bucket, key, body.into(), (algorithm, checksum), headers)
            .await
    }

    /// [`S3Client::put_object_with`] of a file's range, read as it is sent (twice: once for the
    /// checksum first), so memory holds a slice of it, not all of it.
    pub async fn put_file(
        &self,
        bucket: &str,
        key: &str,
        body: FileRange,
        algorithm: ChecksumAlgorithm,
        headers: Vec<(Cow<'static, str>, String)>,
    ) -> Result<String, ClientError> {
        let checksum = algorithm.encode(body.checksum(algorithm).await?);
        self.put(
            bucket,
            key,
            Payload::File(body),
            (algorithm, checksum),
            headers,
        )
        .await
    }

    /// `PutObject` of `body` with its checksum header.
    async fn put(
        &self,
        bucket: &str,
        key: &str,
        body: Payload,
        (algorithm, checksum): (ChecksumAlgorithm, String),
        mut headers: Vec<(Cow<'static, str>, String)>,
    ) -> Result<String, ClientError> {
        headers.push((algorithm.header().into(), checksum));
        let r = self
            .send(&Call {
                headers,
                body,
                ..Call::new(Method::PUT, bucket, Some(key))
            })
            .await?;
        Ok(header(r.headers(), "etag").unwrap_or_default())
    }

    /// `CreateMultipartUpload` with part checksums of `algorithm` (and a whole-object checksum
    /// when it is a [full-object](ChecksumAlgorithm::full_object) one), or none (parts copied on
    /// the server), and `headers` for the new object (`content-type`, `x-amz-meta-*`); returns
    /// the upload ID.
    pub async fn create_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        algorithm: Option<ChecksumAlgorithm>,
        mut headers: Vec<(Cow<'static, str>, String)>,
    ) -> Result<String, ClientError> {
        if let Some(algorithm) = algorithm {
            headers.push(("x-amz-checksum-algorithm".into(), algorithm.name().into()));
            if algorithm.full_object() {
                headers.push(("x-amz-checksum-type".into(), "FULL_OBJECT".into()));
            }
        }
        let r = self
            .send(&Call {
                query: "uploads=".into(),
                headers,
                ..Call::new(Method::POST, bucket, Some(key))
            })
            .await?;
        Ok(xml::upload_id(&body_bytes(r.into_body()).await?)?)
    }

    /// `UploadPart` number `number` (1 to 10,000) of `upload` with its checksum, of the
    /// algorithm the upload was created with.
    pub async fn upload_part(
        &self,
        upload: &MultipartUpload,
        number: u32,
        body: Bytes,
        algorithm: ChecksumAlgorithm,
    ) -> Result<CompletedPart, ClientError> {
        let (crc, size) = (algorithm.compute(&body), body.len() as u64);
        let mut headers = CustomerKey::headers_of(upload.customer_key.as_ref());
        headers.push((algorithm.header().into(), algorithm.encode(crc)));
        let r = self
            .send(&Call {
                query: upload.part_query(number),
                headers,
                body: body.into(),
                ..Call::new(Method::PUT, &upload.bucket, Some(&upload.key))
            })
            .await?;
        let etag = header(r.headers(), "etag").ok_or_else(|| {
            ClientError::Response(format!("UploadPart {number} returned no ETag"))
        })?;
        Ok(CompletedPart {
            number,
            etag,
            algorithm: Some(algorithm),
            crc,
            size,
        })
    }

    /// `CompleteMultipartUpload` of `parts`, in order. For a full-object checksum it also sends
    /// the whole object's, combined from the parts', which S3 checks against what it assembled.
    /// S3 may answer 200 with an error in the body: that is an error here. Returns the new
    /// object's ETag, quotes included (empty if the answer names none).
    pub async fn complete_multipart_upload(
        &self,
        upload: &MultipartUpload,
        parts: &[CompletedPart],
    ) -> Result<String, ClientError> {
        // Sent again as the AWS CLI (s3transfer) sends it: S3 requires it where the upload has
        // checksums.
        let mut headers = CustomerKey::headers_of(upload.customer_key.as_ref());
        if let Some(alg) = parts.first().and_then(|p| p.algorithm) {
            if alg.full_object() {
                let whole = parts
                    .iter()
                    .skip(1)
                    .fold(parts[0].crc, |acc, p| alg.combine(acc, p.crc, p.size));
                headers.push(("x-amz-checksum-type".into(), "FULL_OBJECT".into()));
                headers.push((alg.header().into(), alg.encode(whole)));
            }
        }
        let list = parts.iter().map(|p| {
            let checksum = p.algorithm.map(|a| (a.xml_tag(), a.encode(p.crc)));
            (p.number, p.etag.as_str(), checksum)
        });
        let r = self
            .send(&Call {
                query: format!("uploadId={}", encode_query(&upload.upload_id)),
                headers,
                body: Bytes::from(xml::complete_body(list)).into(),
                ..Call::new(Method::POST, &upload.bucket, Some(&upload.key))
            })
            .await?;
        let body = body_bytes(r.into_body()).await?;
        match xml::error(&body) {
            Some((code, message)) => Err(ClientError::S3 {
                status: 200,
                code,
                message,
            }),
            None => Ok(xml::completed_etag(&body).unwrap_or_default()),
        }
    }

    /// `AbortMultipartUpload`: frees the parts of an upload that will not complete.
    pub async fn abort_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<(), ClientError> {
        self.send(&Call {
            query: format!("uploadId={}", encode_query(upload_id)),
            ..Call::new(Method::DELETE, bucket, Some(key))
        })
        .await
        .map(drop)
    }

    /// One page of `ListObjectsV2` under `prefix`; with a `delimiter`, "directories" come back
    /// as prefixes.
    pub async fn list_objects_v2(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: Option<&str>,
        continuation: Option<&str>,
    ) -> Result<ListPage, ClientError> {
        let page = ListFrom {
            delimiter,
            continuation,
            ..ListFrom::default()
        };
        self.list_objects_v2_from(bucket, prefix, &page).await
    }

    /// One page of `ListObjectsV2` under `prefix` that starts after a key or holds at most
    /// so many keys: for listings cut into ranges fetched side by side.
    pub async fn list_objects_v2_from(
        &self,
        bucket: &str,
        prefix: &str,
        page: &ListFrom<'_>,
    ) -> Result<ListPage, ClientError> {
        let mut query = vec![("list-type", "2".to_owned())];
        if let Some(token) = page.continuation {
            query.push(("continuation-token", encode_query(token)));
        }
        if let Some(d) = page.delimiter {
            query.push(("delimiter", encode_query(d)));
        }
        if let Some(after) = page.start_after {
            query.push(("start-after", encode_query(after)));
        }
        let max_keys = match (page.max_keys, self.list_page_size()) {
            (Some(asked), Some(most)) => Some(asked.min(most)),
            (asked, most) => asked.or(most),
        };
        if let Some(n) = max_keys {
            query.push(("max-keys", n.to_string()));
        }
        query.push(("prefix", encode_query(prefix)));
        let query = query_string(query);
        let r = self
            .send(&Call {
                query,
                listing: true,
                ..Call::new(Method::GET, bucket, None)
            })
            .await?;
        Ok(xml::list_page(&body_bytes(r.into_body()).await?)?)
    }

    /// One page of `ListObjectVersions` under `prefix` (with a `delimiter`, one level of it),
    /// from `after` (the previous page's [`VersionMarker`]) on, without the entries the
    /// previous page held should the server send one again ([`VersionPage::drop_seen`]).
    pub async fn list_object_versions(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: Option<&str>,
        after: Option<&VersionMarker>,
    ) -> Result<VersionPage, ClientError> {
        let mut query = vec![
            ("prefix", encode_query(prefix)),
            ("versions", String::new()),
        ];
        if let Some(d) = delimiter {
            query.push(("delimiter", encode_query(d)));
        }
        if let Some(marker) = after {
            query.push(("key-marker", encode_query(&marker.key)));
            if let Some(version) = &marker.version_id {
                query.push(("version-id-marker", encode_query(version)));
            }
        }
        if let Some(n) = self.list_page_size() {
            query.push(("max-keys", n.to_string()));
        }
        let query = query_string(query);
        let call = Call {
            query,
            listing: true,
            ..Call::new(Method::GET, bucket, None)
        };
        let page = self
            .send_and_read(&call, |body| Ok(version_page(body)?))
            .await?;
        Ok(page.drop_seen(after))
    }

    /// Every object under `prefix` (all pages).
    pub async fn list_all(
        &self,
        bucket: &str,
        prefix: &str,
    ) -> Result<Vec<xml::Object>, ClientError> {
        Ok(self.list_gathered(bucket, prefix, None).await?.objects)
    }

    /// Every page of a listing gathered into one: with a `delimiter`, one level of `prefix`
    /// (its "directories" and the objects right in it), without, every object under it.
    /// `continuation` is `None`.
    pub async fn list_gathered(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: Option<&str>,
    ) -> Result<xml::ListPage, ClientError> {
        let mut all = xml::ListPage::default();
        loop {
            let token = all.continuation.take();
            let page = self
                .list_objects_v2(bucket, prefix, delimiter, token.as_deref())
                .await?;
            all.objects.extend(page.objects);
            all.prefixes.extend(page.prefixes);
            if page.continuation.is_none() {
                return Ok(all);
            }
            all.continuation = page.continuation;
        }
    }

    /// `DeleteObject`. Of the current version, in a versioned bucket, it leaves a delete marker
    /// (the object's versions stay); of a named version, it removes that version for good.
    pub async fn delete_object<'k>(
        &self,
        bucket: &str,
        key: impl Into<ObjectKey<'k>>,
    ) -> Result<(), ClientError> {
        self.send(&Call::of(Method::DELETE, bucket, key.into()))
            .await
            .map(drop)
    }

    /// `HeadBucket`: the bucket exists and these credentials may use it (S3 answers 404 or 403
    /// otherwise, without a body).
    pub async fn head_bucket(&self, bucket: &str) -> Result<(), ClientError> {
        match self.send(&Call::new(Method::HEAD, bucket, None)).await {
            Ok(_) => Ok(()),
            // A HEAD answer has no body to name the error: a 404 of a bucket can only be this.
            Err(ClientError::S3 { status: 404, .. }) => Err(ClientError::S3 {
                status: 404,
                code: "NoSuchBucket".into(),
                message: format!("the bucket {bucket} does not exist"),
            }),
            Err(e) => Err(head_failed(e, || format!("HeadBucket s3://{bucket}"))),
        }
    }

    /// `ListBuckets`: the buckets these credentials own that `only` admits, following the
    /// service's pages.
    pub async fn list_buckets(&self, only: &BucketFilter) -> Result<Vec<xml::Bucket>, ClientError> {
        let mut all = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut pairs = Vec::new();
            if let Some(region) = &only.region {
                pairs.push(("bucket-region", encode_query(region)));
            }
            if let Some(t) = &token {
                pairs.push(("continuation-token", encode_query(t)));
            }
            if let Some(prefix) = &only.prefix {
                pairs.push(("prefix", encode_query(prefix)));
            }
            let call = Call {
                query: query_string(pairs),
                service: true,
                ..Call::new(Method::GET, "", None)
            };
            let (buckets, next) = self
                .send_and_read(&call, |b| Ok(xml::bucket_list(b)?))
                .await?;
            all.extend(buckets.into_iter().filter(|b| only.admits(b)));
            match next {
                // A server that hands back the token it was given would never end.
                Some(t) if Some(&t) != token.as_ref() => token = Some(t),
                _ => return Ok(all),
            }
        }
    }

    /// `CreateBucket` in the client's region. Outside us-east-1 the request says so in a
    /// `CreateBucketConfiguration` (S3's regional endpoints refuse a bucket without one,
    /// `IllegalLocationConstraintException`), as the AWS CLI's `mb` sends it.
    pub async fn create_bucket(&self, bucket: &str) -> Result<(), ClientError> {
        self.create_bucket_tagged(bucket, &[]).await
    }

    /// [`S3Client::create_bucket`] with `tags` (key, value) in its configuration, as the AWS
    /// CLI's `mb --tags` sends them: the bucket is made tagged, with no moment untagged.
    pub async fn create_bucket_tagged(
        &self,
        bucket: &str,
        tags: &[(String, String)],
    ) -> Result<(), ClientError> {
        let body = bucket_configuration(self.region(), tags);
        self.send(&Call {
            body: Bytes::from(body).into(),
            ..Call::new(Method::PUT, bucket, None)
        })
        .await
        .map(drop)
    }
}

/// `pairs` (values already encoded) as a query string, sorted as the signature sorts them.
fn query_string(mut pairs: Vec<(&str, String)>) -> String {
    pairs.sort();
    let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join("&")
}

/// The body of a `CreateBucket` for `region` with `tags`: none for us-east-1 (S3's default,
/// which refuses it named) without tags, else a `CreateBucketConfiguration` with the
/// `LocationConstraint` (outside us-east-1) and the `Tags`.
fn bucket_configuration(region: &str, tags: &[(String, String)]) -> String {
    let location = !matches!(region, "us-east-1" | "");
    if !location && tags.is_empty() {
        return String::new();
    }
    let mut body = String::from(
        "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">",
    );
    if location {
        body.push_str(&format!(
            "<LocationConstraint>{}</LocationConstraint>",
            xml::escape(region)
        ));
    }
    if !tags.is_empty() {
        body.push_str("<Tags>");
        for (key, value) in tags {
            body.push_str(&format!(
                "<Tag><Key>{}</Key><Value>{}</Value></Tag>",
                xml::escape(key),
                xml::escape(value)
            ));
        }
        body.push_str("</Tags>");
    }
    body.push_str("</CreateBucketConfiguration>");
    body
}

/// Where a `ListObjectsV2` page starts and how long it may be; `Default`: the first page of
/// up to 1,000 keys.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListFrom<'a> {
    /// Group keys by this into "directories".
    pub delimiter: Option<&'a str>,
    /// The previous page's token.
    pub continuation: Option<&'a str>,
    /// Only keys after this one (ignored by S3 once a continuation token is given).
    pub start_after: Option<&'a str>,
    /// At most this many keys (S3 gives at most 1,000).
    pub max_keys: Option<usize>,
}

/// A HEAD answer has no body to carry S3's error: its code and message are only the status's
/// (`NotFound`, "Bad Request"), so the message says which request the status answered
/// (`what`), where "HTTP 400" alone says nothing a user can act on.
fn head_failed(e: ClientError, what: impl FnOnce() -> String) -> ClientError {
    match e {
        ClientError::S3 {
            status,
            code,
            message,
        } => {
            // A status with a code of its own (404 NotFound) says enough; others need the note.
            let why = match code.is_empty() {
                true => " (a HEAD answer has no body to say why)",
                false => "",
            };
            ClientError::S3 {
                status,
                message: format!("{message}, in answer to {}{why}", what()),
                code,
            }
        }
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(n, v)| {
                let name = HeaderName::from_bytes(n.as_bytes()).unwrap();
                (name, HeaderValue::from_str(v).unwrap())
            })
            .collect()
    }

    #[test]
    fn an_answer_s_headers_say_what_the_object_is() {
        let h = headers(&[
            ("etag", "\"abc\""),
            ("last-modified", "Sat, 28 Nov 2026 09:20:19 GMT"),
            ("content-type", "text/html"),
            ("x-amz-meta-owner", "me"),
            ("x-amz-storage-class", "GLACIER_IR"),
            ("x-amz-version-id", "3sL4kqtJlcpXroDTDmJ"),
            ("x-amz-checksum-crc32c", "G9ywgw=="),
            ("x-amz-request-id", "not kept"),
        ]);
        let info = object_info(&h, 7);
        assert_eq!((info.size, info.etag.as_str()), (7, "\"abc\""));
        assert_eq!(info.storage_class.as_deref(), Some("GLACIER_IR"));
        assert_eq!(info.version_id.as_deref(), Some("3sL4kqtJlcpXroDTDmJ"));
        let kept: Vec<_> = info
            .copied_headers
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(kept, ["content-type", "x-amz-meta-owner"]);
        let checksum = info.checksum.expect("a whole-object CRC32C");
        assert_eq!(checksum.algorithm, ChecksumAlgorithm::Crc32c);
    }

    #[test]
    fn buckets_outside_us_east_1_name_their_region_and_tags_ride_along() {
        assert_eq!(bucket_configuration("us-east-1", &[]), "");
        assert_eq!(
            bucket_configuration("eu-west-1", &[]),
            "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
             <LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>"
        );
        let tags = [("team".to_owned(), "a&b <c>".to_owned())];
        assert_eq!(
            bucket_configuration("us-east-1", &tags),
            "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
             <Tags><Tag><Key>team</Key><Value>a&amp;b &lt;c&gt;</Value></Tag></Tags>\
             </CreateBucketConfiguration>"
        );
    }

    #[test]
    fn standard_objects_and_composite_checksums_say_nothing() {
        let h = headers(&[
            ("x-amz-checksum-crc32", "AAAAAA==-3"),
            ("x-amz-checksum-type", "COMPOSITE"),
        ]);
        let info = object_info(&h, 0);
        assert_eq!((info.storage_class, info.version_id), (None, None));
        assert_eq!(info.checksum, None);
    }
}
