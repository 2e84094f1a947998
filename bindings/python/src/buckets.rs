//! `Client.create_bucket` and `delete_bucket` (the CLI's `mb` and `rb`) and the bucket's
//! versioning (`bucket-version`), the work of both forms of each: what boto3's calls of those
//! names do, with `delete_bucket`'s `force` emptying the bucket first as the AWS CLI's `rb
//! --force` does.

use std::future::Future;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use slipstream_client::{ClientError, Versioning, VersioningStatus};
use slipstream_transfer::{delete_all, DeleteReport, TransferError};

use crate::client::Client;

/// `tags` (a dict) as (key, value) pairs, in the dict's order.
pub(crate) fn tag_pairs(tags: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let Some(tags) = tags else {
        return Ok(Vec::new());
    };
    tags.iter()
        .map(|(k, v)| Ok((k.extract()?, v.extract()?)))
        .collect()
}

/// `"Enabled"` or `"Suspended"` (any case), else a `ValueError` saying so.
pub(crate) fn versioning_status(status: &str) -> PyResult<VersioningStatus> {
    status.parse().map_err(PyValueError::new_err)
}

/// `GetBucketVersioning`'s answer as boto3 returns it: `Status` and `MFADelete`, each only when
/// the bucket has one (a bucket never versioned: `{}`).
pub(crate) fn versioning_dict<'py>(
    py: Python<'py>,
    v: &Versioning,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if let Some(status) = &v.status {
        d.set_item("Status", status)?;
    }
    if let Some(mfa) = &v.mfa_delete {
        d.set_item("MFADelete", mfa)?;
    }
    Ok(d)
}

impl Client {
    /// `GetBucketVersioning`.
    pub(crate) fn get_versioning_work(
        &self,
        bucket: &str,
    ) -> impl Future<Output = Result<Versioning, ClientError>> + Send + 'static {
        let (client, bucket) = (Arc::clone(&self.inner), bucket.to_owned());
        async move { client.get_bucket_versioning(&bucket).await }
    }

    /// `PutBucketVersioning`.
    pub(crate) fn put_versioning_work(
        &self,
        bucket: &str,
        status: VersioningStatus,
    ) -> impl Future<Output = Result<(), ClientError>> + Send + 'static {
        let (client, bucket) = (Arc::clone(&self.inner), bucket.to_owned());
        async move { client.put_bucket_versioning(&bucket, status).await }
    }

    /// `CreateBucket` in the client's region (its `LocationConstraint` outside us-east-1),
    /// tagged with `tags` from the start.
    pub(crate) fn create_bucket_work(
        &self,
        bucket: &str,
        tags: Vec<(String, String)>,
    ) -> impl Future<Output = Result<(), ClientError>> + Send + 'static {
        let (client, bucket) = (Arc::clone(&self.inner), bucket.to_owned());
        async move { client.create_bucket_tagged(&bucket, &tags).await }
    }

    /// `DeleteBucket`, after deleting every object when `force`. An object S3 refuses to
    /// delete keeps the bucket: the error is S3's `BucketNotEmpty` (409), naming how many were
    /// refused and the first of them with S3's reason.
    pub(crate) fn delete_bucket_work(
        &self,
        bucket: &str,
        force: bool,
    ) -> impl Future<Output = Result<(), TransferError>> + Send + 'static {
        let (client, bucket) = (Arc::clone(&self.inner), bucket.to_owned());
        async move {
            if force {
                let quiet: DeleteReport = Arc::new(|_| {});
                let done = delete_all(Arc::clone(&client), &bucket, quiet).await?;
                if let Some(first) = done.failed.first() {
                    return Err(TransferError::Client(ClientError::S3 {
                        status: 409,
                        code: "BucketNotEmpty".into(),
                        message: format!(
                            "{} object(s) could not be deleted (the first, {}: {}: {}), so the \
                             bucket stays",
                            done.failed.len(),
                            first.key,
                            first.code,
                            first.message
                        ),
                    }));
                }
            }
            client.delete_bucket(&bucket).await.map_err(|e| match e {
                ClientError::S3 {
                    status,
                    code,
                    message,
                } if code == "BucketNotEmpty" => TransferError::Client(ClientError::S3 {
                    message: format!("{message} ({})", not_empty_hint(force)),
                    status,
                    code,
                }),
                e => TransferError::Client(e),
            })
        }
    }
}

/// What to do about `BucketNotEmpty`: delete the objects, or (left after `force`, which deletes
/// only current versions) the versions and delete markers of a bucket that is or was versioned.
fn not_empty_hint(force: bool) -> &'static str {
    match force {
        false => "delete_bucket(bucket, force=True) deletes its objects first",
        true => {
            "what is left is versions or delete markers: with v = list_versions(bucket), \
                 delete_many(bucket, v[\"Versions\"] + v[\"DeleteMarkers\"]) removes them for good"
        }
    }
}
