//! A `GetObject` answer as the transfer engine reads it: what its headers say, parsed once, and
//! its body read frame by frame, each read bounded by the client's read timeout and noted on its
//! activity clock (so a transfer's stall watchdog sees the bytes move).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::Response;

use crate::ops::{body_bytes, header};
use crate::{Activity, ClientError};

/// An object's bytes on their way: the answer's metadata and its body.
pub struct ObjectStream {
    /// The ETag of the object the bytes come from, quotes included.
    pub etag: String,
    /// Bytes in this answer (`Content-Length`), when the server said.
    pub content_length: Option<u64>,
    /// The object's whole size, from `Content-Range: bytes A-B/TOTAL` (ranged answers only).
    pub total_size: Option<u64>,
    body: Incoming,
    read_timeout: Duration,
    activity: Arc<Activity>,
}

impl std::fmt::Debug for ObjectStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStream")
            .field("etag", &self.etag)
            .field("content_length", &self.content_length)
            .field("total_size", &self.total_size)
            .finish_non_exhaustive()
    }
}

impl ObjectStream {
    pub(crate) fn new(
        response: Response<Incoming>,
        read_timeout: Duration,
        activity: Arc<Activity>,
    ) -> Self {
        let headers = response.headers();
        let etag = header(headers, "etag").unwrap_or_default();
        let content_length = header(headers, "content-length").and_then(|v| v.parse().ok());
        let total_size = header(headers, "content-range")
            .and_then(|v| v.rsplit_once('/')?.1.trim().parse().ok());
        Self {
            etag,
            content_length,
            total_size,
            body: response.into_body(),
            read_timeout,
            activity,
        }
    }

    /// The next bytes of the body; `None` at its end. Fails (retryably) when the body breaks
    /// off or brings nothing for the client's read timeout.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, ClientError> {
        loop {
            let quiet = self.read_timeout;
            let frame = tokio::time::timeout(quiet, self.body.frame())
                .await
                .map_err(|_| ClientError::Network(format!("no data for {quiet:?}")))?;
            self.activity.touch();
            match frame {
                None => return Ok(None),
                Some(Err(e)) => {
                    return Err(ClientError::Network(format!("the body broke off: {e}")))
                }
                Some(Ok(frame)) => {
                    if let Ok(chunk) = frame.into_data() {
                        return Ok(Some(chunk));
                    }
                }
            }
        }
    }

    /// The whole body.
    pub async fn bytes(self) -> Result<Bytes, ClientError> {
        body_bytes(self.body).await
    }
}
