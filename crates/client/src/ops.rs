//! The S3 operations the transfer engine and the CLI use, each one signed request.

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::{Method, Response};
use slipstream_sign::encode::encode_query;

use crate::checksum::crc32c_base64;
use crate::http::Call;
use crate::xml::{self, ListPage};
use crate::{ClientError, S3Client};

/// What `HeadObject` says about an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Size in bytes.
    pub size: u64,
    /// The ETag, quotes included: pinned on every ranged GET of a download.
    pub etag: String,
    /// `Last-Modified`, as sent.
    pub last_modified: String,
    /// The whole object's CRC32C, when it was uploaded in one piece with one (base64).
    /// Multipart objects carry a checksum of part checksums (`…-N`), which is not this.
    pub crc32c: Option<String>,
}

/// A part of a multipart upload, as `CompleteMultipartUpload` needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedPart {
    /// 1 to 10,000.
    pub number: u32,
    /// The ETag S3 returned for it.
    pub etag: String,
    /// Its CRC32C (base64), which S3 checked on arrival.
    pub crc32c: String,
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn body_bytes(response: Response<Incoming>) -> Result<Bytes, ClientError> {
    response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| ClientError::Network(format!("reading the response body: {e}")))
}

impl S3Client {
    /// `HeadObject`: size, ETag and checksum (asks for it with `x-amz-checksum-mode`).
    pub async fn head_object(&self, bucket: &str, key: &str) -> Result<ObjectInfo, ClientError> {
        let r = self
            .send(&Call {
                headers: vec![("x-amz-checksum-mode", "ENABLED".into())],
                ..Call::new(Method::HEAD, bucket, Some(key))
            })
            .await?;
        let h = r.headers();
        let size = header(h, "content-length")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ClientError::Response("HeadObject without a Content-Length".into()))?;
        Ok(ObjectInfo {
            size,
            etag: header(h, "etag").unwrap_or_default(),
            last_modified: header(h, "last-modified").unwrap_or_default(),
            crc32c: header(h, "x-amz-checksum-crc32c").filter(|c| !c.contains('-')),
        })
    }

    /// `GetObject` of bytes `start..end` (all when `None`), only if the ETag is still `if_match`;
    /// the body streams from the response.
    pub async fn get_object(
        &self,
        bucket: &str,
        key: &str,
        range: Option<(u64, u64)>,
        if_match: Option<&str>,
    ) -> Result<Response<Incoming>, ClientError> {
        let mut headers = Vec::new();
        if let Some(etag) = if_match {
            headers.push(("if-match", etag.to_owned()));
        }
        if let Some((start, end)) = range {
            if end <= start {
                return Err(ClientError::Request(format!("empty range {start}..{end}")));
            }
            headers.push(("range", format!("bytes={start}-{}", end - 1)));
        }
        self.send(&Call {
            headers,
            ..Call::new(Method::GET, bucket, Some(key))
        })
        .await
    }

    /// `GetObject` into memory (whole object, or `start..end`).
    pub async fn get_bytes(
        &self,
        bucket: &str,
        key: &str,
        range: Option<(u64, u64)>,
    ) -> Result<Bytes, ClientError> {
        body_bytes(self.get_object(bucket, key, range, None).await?).await
    }

    /// `PutObject` of `body` in one request, with its CRC32C (S3 refuses it if the bytes differ).
    /// Returns the ETag.
    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: Bytes,
    ) -> Result<String, ClientError> {
        let r = self
            .send(&Call {
                headers: vec![("x-amz-checksum-crc32c", crc32c_base64(&body))],
                body,
                ..Call::new(Method::PUT, bucket, Some(key))
            })
            .await?;
        Ok(header(r.headers(), "etag").unwrap_or_default())
    }

    /// `CreateMultipartUpload` with CRC32C part checksums; returns the upload ID.
    pub async fn create_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
    ) -> Result<String, ClientError> {
        let r = self
            .send(&Call {
                query: "uploads=".into(),
                headers: vec![("x-amz-checksum-algorithm", "CRC32C".into())],
                ..Call::new(Method::POST, bucket, Some(key))
            })
            .await?;
        xml::upload_id(&body_bytes(r).await?)
    }

    /// `UploadPart` number `number` (1 to 10,000) with its CRC32C.
    pub async fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: u32,
        body: Bytes,
    ) -> Result<CompletedPart, ClientError> {
        let crc32c = crc32c_base64(&body);
        let r = self
            .send(&Call {
                query: format!("partNumber={number}&uploadId={}", encode_query(upload_id)),
                headers: vec![("x-amz-checksum-crc32c", crc32c.clone())],
                body,
                ..Call::new(Method::PUT, bucket, Some(key))
            })
            .await?;
        let etag = header(r.headers(), "etag").ok_or_else(|| {
            ClientError::Response(format!("UploadPart {number} returned no ETag"))
        })?;
        Ok(CompletedPart {
            number,
            etag,
            crc32c,
        })
    }

    /// `CompleteMultipartUpload`. S3 may answer 200 with an error in the body: that is an error here.
    pub async fn complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[CompletedPart],
    ) -> Result<(), ClientError> {
        let list = parts
            .iter()
            .map(|p| (p.number, p.etag.as_str(), p.crc32c.as_str()));
        let r = self
            .send(&Call {
                query: format!("uploadId={}", encode_query(upload_id)),
                body: Bytes::from(xml::complete_body(list)),
                ..Call::new(Method::POST, bucket, Some(key))
            })
            .await?;
        let body = body_bytes(r).await?;
        match xml::error(&body) {
            Some((code, message)) => Err(ClientError::S3 {
                status: 200,
                code,
                message,
            }),
            None => Ok(()),
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
        let mut query = vec![("list-type", "2".to_owned())];
        if let Some(token) = continuation {
            query.push(("continuation-token", encode_query(token)));
        }
        if let Some(d) = delimiter {
            query.push(("delimiter", encode_query(d)));
        }
        query.push(("prefix", encode_query(prefix)));
        query.sort();
        let query = query
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        let r = self
            .send(&Call {
                query,
                ..Call::new(Method::GET, bucket, None)
            })
            .await?;
        xml::list_page(&body_bytes(r).await?)
    }

    /// Every object under `prefix` (all pages).
    pub async fn list_all(
        &self,
        bucket: &str,
        prefix: &str,
    ) -> Result<Vec<xml::Object>, ClientError> {
        let mut out = Vec::new();
        let mut token = None;
        loop {
            let page = self
                .list_objects_v2(bucket, prefix, None, token.as_deref())
                .await?;
            out.extend(page.objects);
            match page.continuation {
                Some(t) => token = Some(t),
                None => return Ok(out),
            }
        }
    }

    /// `DeleteObject`.
    pub async fn delete_object(&self, bucket: &str, key: &str) -> Result<(), ClientError> {
        self.send(&Call::new(Method::DELETE, bucket, Some(key)))
            .await
            .map(drop)
    }

    /// `CreateBucket` (no location constraint: the endpoint's region).
    pub async fn create_bucket(&self, bucket: &str) -> Result<(), ClientError> {
        self.send(&Call::new(Method::PUT, bucket, None))
            .await
            .map(drop)
    }
}
