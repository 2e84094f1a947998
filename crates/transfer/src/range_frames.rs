//! A range of an object written on frame by frame as it arrives, in one GET resumed where its
//! body breaks off: the first part of a stream download (`Source::write_first`; its other
//! parts are held whole in the window behind it), which is all of a range of up to a part, a
//! reader's read after a seek. A part held until it is whole suits a window of parts in
//! flight, not the one part awaited: a 64 KiB ZIP member at the head of a 1 MiB range would
//! wait for the whole MiB, several round trips of a cold congestion window on a long link.

use bytes::Bytes;
use slipstream_client::{ClientError, ObjectKey, ObjectStream, S3Client};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::source::{pinned_error, range_total};
use crate::TransferError;

/// A range [`write_range`] writes.
pub(crate) struct Range<'a> {
    pub names: (&'a str, ObjectKey<'a>),
    /// Start and end (exclusive).
    pub span: (u64, u64),
    /// An answer to a GET of exactly `span`, already open (a download's first answer), or
    /// `None` to ask for it. A range asked for here is cut short where the answer's
    /// `Content-Range` says the object ends.
    pub opened: Option<ObjectStream>,
}

/// Writes `range` into `out` as its frames arrive; a body that breaks off (or ends early) is
/// asked for again from where it broke, pinned to `pin` (set to the first answer's ETag when
/// `None`), up to the client's attempts. `each` sees every frame before it is written (a
/// checksum, progress). Returns the bytes written.
pub(crate) async fn write_range<W: AsyncWrite + Unpin>(
    client: &S3Client,
    Range {
        names: (bucket, key),
        span: (start, mut end),
        mut opened,
    }: Range<'_>,
    pin: &mut Option<String>,
    out: &mut W,
    mut each: impl FnMut(&Bytes),
) -> Result<u64, TransferError> {
    let (mut at, mut attempt) = (start, 0);
    while at < end {
        attempt += 1;
        let mut body = match opened.take() {
            Some(body) => body,
            None => {
                let sent = client
                    .get_object(bucket, key, Some((at, end)), pin.as_deref())
                    .await;
                match sent {
                    Ok(body) => {
                        end = end.min(range_total(&body, key)?);
                        body
                    }
                    Err(e) if e.is_retryable() && attempt < client.max_attempts() => {
                        tokio::time::sleep(client.backoff(attempt)).await;
                        continue;
                    }
                    Err(e) => return Err(pinned_error(e, key, pin.as_deref())),
                }
            }
        };
        pin.get_or_insert_with(|| body.etag.clone());
        let broke = loop {
            match body.chunk().await {
                Ok(Some(frame)) => {
                    if frame.len() as u64 > end - at {
                        return Err(TransferError::BadResponse(format!(
                            "{}: more bytes than the range {start}-{end} holds",
                            key.key
                        )));
                    }
                    each(&frame);
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
    Ok(at - start)
}
