//! The bound on a transfer whose server stops answering.
//!
//! A frozen server (a stopped process, a path gone dark) keeps its connections open and sends
//! nothing. Each part then waits out its own timeouts and is retried, and every retry of every
//! part waits again: a 300 MiB download hung for ten minutes that way. So a transfer runs under
//! one watchdog instead: when no byte has moved on any of the client's connections for
//! `TransferOptions::stall_timeout`, the transfer is dropped (which removes a download's
//! temporary file and aborts an open multipart upload) and fails with
//! [`TransferError::Stalled`]. Retries of a stalled part count against that one bound.
//!
//! The clock is the client's ([`S3Client::activity`]), so transfers sharing a client keep each
//! other alive: the bound is on the whole client going quiet. One part that stalls alone is
//! the client's `read_timeout`'s business (it is fetched again).

use std::future::Future;
use std::time::Duration;

use slipstream_client::S3Client;

use crate::cleanup::{finish_cleanups_within, CLEANUP_WAIT};
use crate::TransferError;

/// Runs `work` until it ends, or fails it once `client` has moved nothing for `limit`
/// (`Duration::ZERO`: no bound). `sending`: a download, for the message.
pub(crate) async fn bounded<T>(
    client: &S3Client,
    limit: Duration,
    sending: bool,
    work: impl Future<Output = Result<T, TransferError>>,
) -> Result<T, TransferError> {
    if limit.is_zero() {
        return work.await;
    }
    if let Some(out) = client.activity().until_idle(limit, work).await {
        return out;
    }
    // The work was dropped: its temporary file is gone and its abort started.
    finish_cleanups_within(CLEANUP_WAIT).await;
    Err(TransferError::Stalled {
        idle: limit,
        sending,
    })
}
