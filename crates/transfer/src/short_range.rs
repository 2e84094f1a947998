//! A short range of an object in one GET, written on frame by frame as it arrives: what a
//! reader waiting on a few bytes after a seek needs. The stream download holds each part
//! until it is whole, which suits a window of parts in flight, not one small part awaited: a
//! 64 KiB ZIP member at the head of a 1 MiB range would wait for the whole MiB, several round
//! trips of a cold congestion window on a long link.

use std::sync::Arc;

use slipstream_client::{ClientError, ObjectKey, S3Client};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::source::{pinned_error, range_total};
use crate::{Downloaded, TransferError};

/// Writes `range` (start, end exclusive; cut short at the object's end, as S3 cuts it) of
/// `bucket/key` into `out` as its frames arrive, pinned to `if_match` if given, else to the
/// ETag of the first answer. A body that breaks off is asked for again from where it broke
/// (up to the client's attempts), so what is written is never repeated or skipped.
pub async fn download_short_range_to_writer<W: AsyncWrite + Unpin>(
    client: Arc<S3Client>,
    (bucket, key): (&str, ObjectKey<'_>),
    ((start, mut end), if_match): ((u64, u64), Option<&str>),
    out: &mut W,
) -> Result<Downloaded, TransferError> {
    let mut pin = if_match.map(str::to_owned);
    let (mut at, mut attempt) = (start, 0);
    while at < end {
        attempt += 1;
        let sent = client
            .get_object(bucket, key, Some((at, end)), pin.as_deref())
            .await;
        let mut body = match sent {
            Ok(body) => body,
            Err(e) if e.is_retryable() && attempt < client.max_attempts() => {
                tokio::time::sleep(client.backoff(attempt)).await;
                continue;
            }
            Err(e) => return Err(pinned_error(e, key, pin.as_deref())),
        };
        pin.get_or_insert_with(|| body.etag.clone());
        end = end.min(range_total(&body, key)?);
        let broke = loop {
            match body.chunk().await {
                Ok(Some(frame)) => {
                    if frame.len() as u64 > end - at {
                        return Err(TransferError::BadResponse(format!(
                            "{}: more bytes than the range {start}-{end} holds",
                            key.key
                        )));
                    }
                    out.write_all(&frame).await?;
                    at += frame.len() as u64;
                }
                Ok(None) if at < end => {
                    let came = format!("{} of {} bytes came", at - start, end - start);
                    break Some(ClientError::Network(came));
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        match broke {
            None => {}
            Some(e) if e.is_retryable() && attempt < client.max_attempts() => {
                tokio::time::sleep(client.backoff(attempt)).await;
            }
            Some(e) => return Err(e.into()),
        }
    }
    out.flush().await?;
    Ok(Downloaded {
        size: at - start,
        etag: pin.unwrap_or_default(),
        checksum_verified: None,
    })
}
