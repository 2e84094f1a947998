//! Server-side copies: `CopyObject` (up to 5 GiB) and `UploadPartCopy` (a range of the source
//! into a part of a multipart upload). The bytes never cross this machine's link; the answers
//! may carry an error inside a 200 (S3 copies before it knows the outcome), read as errors here.

use std::borrow::Cow;

use hyper::Method;
use slipstream_s3::copy::{copy_result, Copied};
use slipstream_sign::encode::encode_path_into;

use crate::client::Call;
use crate::{ClientError, CompletedPart, CustomerKey, MultipartUpload, ObjectKey, S3Client};

/// What a `CopyObject` changes; the default keeps the source's metadata, checksum and storage
/// class and copies whatever version is current.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyOptions {
    /// Copy only while the source's ETag is this one (`x-amz-copy-source-if-match`): a source
    /// replaced since it was listed fails with `PreconditionFailed` instead of copying other bytes.
    pub if_match: Option<String>,
    /// Headers that replace the source's metadata and content headers
    /// (`x-amz-metadata-directive: REPLACE`), lowercase names; `None` keeps them.
    pub replace_metadata: Option<Vec<(String, String)>>,
    /// `x-amz-storage-class` of the new object.
    pub storage_class: Option<String>,
    /// Headers that set the new object's ACL, encryption and tags (`x-amz-acl`,
    /// `x-amz-server-side-encryption[-aws-kms-key-id]`, `x-amz-tagging`), whatever the metadata
    /// directive. Tags given replace the source's (`x-amz-tagging-directive: REPLACE`).
    pub settings: Vec<(String, String)>,
    /// The customer key the new object is encrypted with (SSE-C); the source's, if it has one,
    /// goes with the source's [`ObjectKey`].
    pub customer_key: Option<CustomerKey>,
}

/// The `x-amz-copy-source` value: `bucket/key` percent-encoded as botocore encodes it (`/` kept),
/// and `?versionId=` with the version as given (botocore does not encode it either).
pub fn copy_source<'k>(bucket: &str, key: impl Into<ObjectKey<'k>>) -> String {
    let key = key.into();
    let mut s = String::with_capacity(bucket.len() + key.key.len() + 8);
    encode_path_into(&mut s, bucket);
    s.push('/');
    encode_path_into(&mut s, key.key);
    if let Some(version) = key.version_id {
        s.push_str("?versionId=");
        s.push_str(version);
    }
    s
}

impl S3Client {
    /// `CopyObject` of `src_bucket/src_key` to `bucket/key`, on the server (sources up to 5 GiB).
    pub async fn copy_object(
        &self,
        (src_bucket, src_key): (&str, ObjectKey<'_>),
        bucket: &str,
        key: &str,
        options: &CopyOptions,
    ) -> Result<Copied, ClientError> {
        let mut headers = sources_headers(src_bucket, src_key);
        headers.extend(options.customer_key.iter().flat_map(CustomerKey::headers));
        if let Some(etag) = &options.if_match {
            headers.push(("x-amz-copy-source-if-match".into(), etag.clone()));
        }
        if let Some(replaced) = &options.replace_metadata {
            headers.push(("x-amz-metadata-directive".into(), "REPLACE".into()));
            headers.extend(replaced.iter().map(|(n, v)| (n.clone().into(), v.clone())));
        }
        if let Some(class) = &options.storage_class {
            headers.push(("x-amz-storage-class".into(), class.clone()));
        }
        for (name, value) in &options.settings {
            if name == "x-amz-tagging" {
                headers.push(("x-amz-tagging-directive".into(), "REPLACE".into()));
            }
            headers.push((name.clone().into(), value.clone()));
        }
        let call = Call {
            headers,
            ..Call::new(Method::PUT, bucket, Some(key))
        };
        self.send_and_read(&call, |body| Ok(copy_result(body)?))
            .await
    }

    /// `UploadPartCopy`: bytes `start..end` of `src_bucket/src_key` (only while its ETag is
    /// `if_match`) become part `number` of `upload`.
    pub async fn upload_part_copy(
        &self,
        (src_bucket, src_key): (&str, ObjectKey<'_>),
        (start, end): (u64, u64),
        if_match: &str,
        upload: &MultipartUpload,
        number: u32,
    ) -> Result<CompletedPart, ClientError> {
        if end <= start {
            return Err(ClientError::Request(format!("empty range {start}..{end}")));
        }
        let mut headers = sources_headers(src_bucket, src_key);
        headers.extend(CustomerKey::headers_of(upload.customer_key.as_ref()));
        headers.push(("x-amz-copy-source-if-match".into(), if_match.to_owned()));
        headers.push((
            "x-amz-copy-source-range".into(),
            format!("bytes={start}-{}", end - 1),
        ));
        let call = Call {
            query: upload.part_query(number),
            headers,
            ..Call::new(Method::PUT, &upload.bucket, Some(&upload.key))
        };
        let copied = self
            .send_and_read(&call, |body| Ok(copy_result(body)?))
            .await?;
        Ok(CompletedPart {
            number,
            etag: copied.etag,
            algorithm: None,
            crc: 0,
            size: end - start,
        })
    }
}

/// `x-amz-copy-source`, and the source's customer key under the copy-source names when it is
/// encrypted with one.
fn sources_headers(bucket: &str, key: ObjectKey<'_>) -> Vec<(Cow<'static, str>, String)> {
    let mut headers = vec![("x-amz-copy-source".into(), copy_source(bucket, key))];
    if let Some(k) = key.customer_key {
        headers.extend(k.copy_source_headers());
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_source_is_encoded_as_botocore_does() {
        assert_eq!(copy_source("b", "a/b c+d?e"), "b/a/b%20c%2Bd%3Fe");
        assert_eq!(copy_source("b", "ü~x"), "b/%C3%BC~x");
        let versioned = ObjectKey::new("a b", Some("3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"));
        assert_eq!(
            copy_source("b", versioned),
            "b/a%20b?versionId=3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"
        );
    }
}
