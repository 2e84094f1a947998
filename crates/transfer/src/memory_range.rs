//! A byte range of an object into memory, in one GET, under the transfer's stall bound.
//!
//! [`RangeDownload::start`] sends the GET and returns once its answer's headers are in, so the
//! caller learns how long the body is (a range past the object's end comes back cut short)
//! and can allocate exactly that (Python's `bytes`); [`RangeDownload::read_into`] then copies
//! the body there, once. Collecting the body first and copying it out cost a second copy (and,
//! in Python, one with the GIL held): a 64 MiB range took twice as long as boto3's read.
//! A body that breaks off is asked for again from where it broke, pinned to the first
//! answer's ETag, as a part of a whole download is.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use slipstream_client::{ClientError, ObjectStream, S3Client};

use crate::source::{changed, next_chunk, short};
use crate::stall;
use crate::{TransferError, TransferOptions};

/// A GET of a range whose headers are in and whose body is still to come.
pub struct RangeDownload {
    client: Arc<S3Client>,
    bucket: String,
    key: String,
    start: u64,
    answer: ObjectStream,
    stall_timeout: Duration,
}

impl RangeDownload {
    /// Sends the GET of `range` (start, end exclusive) of `bucket/key`.
    pub async fn start(
        client: Arc<S3Client>,
        bucket: &str,
        key: &str,
        range: (u64, u64),
        opts: &TransferOptions,
    ) -> Result<Self, TransferError> {
        let asked = async { Ok(client.get_object(bucket, key, Some(range), None).await?) };
        let answer = stall::bounded(&client, opts.stall_timeout, true, asked).await?;
        Ok(Self {
            client,
            bucket: bucket.to_owned(),
            key: key.to_owned(),
            start: range.0,
            answer,
            stall_timeout: opts.stall_timeout,
        })
    }

    /// The body's length, when the answer said (`Content-Length`).
    pub fn len(&self) -> Option<u64> {
        self.answer.content_length
    }

    /// Whether the body is known to be empty.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Receives the body into `buf`, which must be exactly [`RangeDownload::len`] long. On
    /// an error `buf` holds part of it.
    pub async fn read_into(self, buf: &mut [u8]) -> Result<(), TransferError> {
        let Self {
            client,
            bucket,
            key,
            start,
            mut answer,
            stall_timeout,
        } = self;
        let etag = answer.etag.clone();
        let want = buf.len() as u64;
        let body = async {
            let mut got = 0;
            let mut attempt = 1;
            loop {
                let failed = match fill(&mut answer, buf, &mut got, start).await {
                    Ok(()) if got == want => return Ok(()),
                    Ok(()) => short(start, got, want),
                    Err(e) => e,
                };
                if !failed.is_retryable() || attempt >= client.max_attempts() {
                    return Err(failed);
                }
                tokio::time::sleep(client.backoff(attempt)).await;
                attempt += 1;
                let rest = (start + got, start + want);
                answer = match client
                    .get_object(&bucket, &key, Some(rest), Some(&etag))
                    .await
                {
                    Err(ClientError::S3 { status: 412, .. }) => return Err(changed(&key, &etag)),
                    other => other?,
                };
            }
        };
        stall::bounded(&client, stall_timeout, true, body).await
    }

    /// The body, for an answer that did not say its length.
    pub async fn bytes(self) -> Result<Bytes, TransferError> {
        let Self {
            client,
            answer,
            stall_timeout,
            ..
        } = self;
        let body = async { Ok(answer.bytes().await?) };
        stall::bounded(&client, stall_timeout, true, body).await
    }
}

/// Copies `answer`'s body into `buf` from `got` on, counting it in `got`, to the body's end.
async fn fill(
    answer: &mut ObjectStream,
    buf: &mut [u8],
    got: &mut u64,
    start: u64,
) -> Result<(), TransferError> {
    let (from, want) = (*got, buf.len() as u64);
    let mut this = from;
    while let Some(chunk) = next_chunk(answer, &mut this, (start, want)).await? {
        let at = (this - chunk.len() as u64) as usize;
        buf[at..at + chunk.len()].copy_from_slice(&chunk);
        *got = this;
    }
    Ok(())
}
