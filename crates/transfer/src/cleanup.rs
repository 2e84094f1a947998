//! Aborting multipart uploads that will not complete, also when the upload is cancelled.
//!
//! An upload future dropped halfway (Ctrl-C, a caller's timeout) cannot await anything, so its
//! guard spawns the abort and records the task; [`finish_cleanups`] waits for those tasks, and
//! the CLI calls it before exiting after an interruption. Without this, S3 keeps (and bills)
//! the parts of an abandoned upload until a lifecycle rule removes them.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::future::Future;

use crate::TransferError;
use slipstream_client::{
    ChecksumAlgorithm, ClientError, CompletedPart, CustomerKey, MultipartUpload, S3Client,
};
use tokio::task::JoinHandle;

static PENDING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// A multipart upload's whole life: create it (parts checked with `algorithm`, if any, and
/// the new object's `headers`, which carry `customer_key`'s when the object is encrypted with
/// one), let `send` upload or copy the parts (given the upload),
/// complete it with the parts `send` returns, and abort it if any step fails or the future is
/// dropped. Returns the parts and the new object's ETag.
pub(crate) async fn multipart_upload<F, Fut>(
    client: &Arc<S3Client>,
    (bucket, key): (&str, &str),
    algorithm: Option<ChecksumAlgorithm>,
    headers: Vec<(Cow<'static, str>, String)>,
    customer_key: Option<&CustomerKey>,
    send: F,
) -> Result<(Vec<CompletedPart>, String), TransferError>
where
    F: FnOnce(Arc<MultipartUpload>) -> Fut,
    Fut: Future<Output = Result<Vec<CompletedPart>, TransferError>>,
{
    let upload_id = client
        .create_multipart_upload(bucket, key, algorithm, headers)
        .await?;
    let guard = MultipartGuard::new(client, bucket, key, &upload_id);
    let upload = Arc::new(MultipartUpload {
        bucket: bucket.to_owned(),
        key: key.to_owned(),
        upload_id,
        customer_key: customer_key.cloned(),
    });
    let completed = match send(Arc::clone(&upload)).await {
        Ok(parts) => client
            .complete_multipart_upload(&upload, &parts)
            .await
            .map(|etag| (parts, etag))
            .map_err(TransferError::from),
        Err(e) => Err(e),
    };
    match completed {
        Ok(done) => {
            guard.disarm();
            Ok(done)
        }
        Err(e) => {
            guard.abort().await;
            Err(e)
        }
    }
}

/// An open multipart upload, aborted unless [`MultipartGuard::disarm`]ed.
struct MultipartGuard {
    client: Arc<S3Client>,
    bucket: String,
    key: String,
    upload_id: String,
    armed: bool,
    /// The runtime the upload runs on, where a drop spawns the abort: the future may be
    /// dropped on a thread outside it (a Python thread cancelling a transfer).
    runtime: Option<tokio::runtime::Handle>,
}

impl MultipartGuard {
    fn new(client: &Arc<S3Client>, bucket: &str, key: &str, upload_id: &str) -> Self {
        Self {
            client: Arc::clone(client),
            bucket: bucket.to_owned(),
            key: key.to_owned(),
            upload_id: upload_id.to_owned(),
            armed: true,
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }

    /// The upload completed: nothing to clean up.
    fn disarm(mut self) {
        self.armed = false;
    }

    /// The upload failed: abort it now (best effort; the failure is what gets reported).
    async fn abort(mut self) {
        self.armed = false;
        abort(&self.client, &self.bucket, &self.key, &self.upload_id).await;
    }
}

impl Drop for MultipartGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        let (client, bucket, key, id) = (
            Arc::clone(&self.client),
            std::mem::take(&mut self.bucket),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.upload_id),
        );
        let task = runtime.spawn(async move {
            abort(&client, &bucket, &key, &id).await;
        });
        if let Ok(mut pending) = PENDING.lock() {
            pending.push(task);
        }
    }
}

/// Aborts a multipart upload, and again while the server still knows it. A part whose upload
/// was in flight when the first abort arrived (the connection closed by a cancellation, but its
/// bytes already with the server) may still be stored afterwards and bring the upload back; S3's
/// documentation says to repeat the abort for that reason. Seen with versitygw after SIGHUP.
/// The later aborts stop at the first "no such upload" (404), which is the usual answer to the
/// second; best effort throughout.
async fn abort(client: &S3Client, bucket: &str, key: &str, upload_id: &str) {
    if client
        .abort_multipart_upload(bucket, key, upload_id)
        .await
        .is_err()
    {
        return;
    }
    let mut wait = Duration::from_millis(100);
    for _ in 0..3 {
        tokio::time::sleep(wait).await;
        if let Err(ClientError::S3 { status: 404, .. }) =
            client.abort_multipart_upload(bucket, key, upload_id).await
        {
            return;
        }
        wait *= 2;
    }
}

/// Waits for the aborts of uploads that were cancelled (dropped) mid-way.
pub async fn finish_cleanups() {
    let tasks: Vec<JoinHandle<()>> = PENDING
        .lock()
        .map(|mut p| std::mem::take(&mut *p))
        .unwrap_or_default();
    for t in tasks {
        let _ = t.await;
    }
}

/// How long a cancelled or stalled transfer's caller waits for its aborts: Kubernetes gives a pod
/// 30 s between SIGTERM and SIGKILL, and a server that stopped answering would hold it forever.
pub const CLEANUP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// [`finish_cleanups`], giving up after `limit` (a server that stopped answering will not
/// answer the aborts either); `false` if some abort had not finished by then. Those go on in
/// the background for as long as the runtime runs.
pub async fn finish_cleanups_within(limit: std::time::Duration) -> bool {
    tokio::time::timeout(limit, finish_cleanups()).await.is_ok()
}
