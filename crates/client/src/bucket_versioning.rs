//! A bucket's versioning: `GetBucketVersioning` and `PutBucketVersioning` (s5cmd's
//! `bucket-version`, boto3's calls of those names), the documents read and written by
//! `slipstream_s3::versioning`.

use hyper::Method;
use slipstream_s3::versioning::{versioning, versioning_body, Versioning, VersioningStatus};

use crate::client::Call;
use crate::{ClientError, S3Client};

impl S3Client {
    /// The bucket's versioning state (`status` `None`: never versioned).
    pub async fn get_bucket_versioning(&self, bucket: &str) -> Result<Versioning, ClientError> {
        let call = Call {
            query: "versioning=".into(),
            ..Call::new(Method::GET, bucket, None)
        };
        self.send_and_read(&call, |answer| Ok(versioning(answer)?))
            .await
    }

    /// Turns the bucket's versioning on or suspends it (the body checksummed, as S3 requires).
    pub async fn put_bucket_versioning(
        &self,
        bucket: &str,
        status: VersioningStatus,
    ) -> Result<(), ClientError> {
        let body = versioning_body(status);
        let call = Call::checksummed(Method::PUT, bucket, "versioning=", body);
        self.send(&call).await.map(drop)
    }
}
