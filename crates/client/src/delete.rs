//! Deleting many objects and buckets: `DeleteObjects` (up to 1,000 keys a request, whose
//! per-key failures come back inside a 200 and are returned, not dropped) and `DeleteBucket`.

use hyper::Method;
use slipstream_s3::delete::{delete_body, delete_result, delete_versions_body, DeleteError};

use crate::client::Call;
use crate::{ClientError, S3Client};

impl S3Client {
    /// `DeleteObjects` (quiet) of 1 to 1,000 `keys` of `bucket`; returns the keys S3 did not
    /// delete, with its reasons. Keys with control characters XML cannot carry are refused
    /// (`slipstream_s3::delete::fits_in_xml`): delete those with [`S3Client::delete_object`].
    /// The body carries a CRC32C, which S3 requires of this request (instead of `Content-MD5`).
    pub async fn delete_objects(
        &self,
        bucket: &str,
        keys: &[String],
    ) -> Result<Vec<DeleteError>, ClientError> {
        let body = delete_body(keys.iter().map(String::as_str))?;
        self.delete_with(bucket, body).await
    }

    /// [`S3Client::delete_objects`] of 1 to 1,000 versions (key and version ID), each removed
    /// for good; a delete marker named so is removed, which brings its object back.
    pub async fn delete_versions(
        &self,
        bucket: &str,
        versions: &[(String, String)],
    ) -> Result<Vec<DeleteError>, ClientError> {
        let named = versions.iter().map(|(k, v)| (k.as_str(), Some(v.as_str())));
        self.delete_with(bucket, delete_versions_body(named)?).await
    }

    /// One `DeleteObjects` of `body`.
    async fn delete_with(
        &self,
        bucket: &str,
        body: String,
    ) -> Result<Vec<DeleteError>, ClientError> {
        let call = Call::checksummed(Method::POST, bucket, "delete=", body);
        self.send_and_read(&call, |answer| Ok(delete_result(answer)?.errors))
            .await
    }

    /// `DeleteBucket` (S3 refuses one that still holds objects: `BucketNotEmpty`).
    pub async fn delete_bucket(&self, bucket: &str) -> Result<(), ClientError> {
        self.send(&Call::new(Method::DELETE, bucket, None))
            .await
            .map(drop)
    }
}
