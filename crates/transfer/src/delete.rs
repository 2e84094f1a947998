//! Deleting many objects: `DeleteObjects` batches of up to 1,000 keys, several in flight, fed
//! by a listing as it goes (see `select.rs`). The per-key failures S3 returns inside a 200 are
//! collected and reported, never dropped; keys with control characters XML cannot carry are
//! deleted one by one instead.

use std::sync::Arc;

use slipstream_client::xml::Object;
use slipstream_client::{ClientError, DeleteError, S3Client, MAX_DELETE_KEYS};
use slipstream_s3::delete::fits_in_xml;
use tokio::sync::mpsc;

use crate::flight::Flight;
use crate::TransferError;

/// What a many-object delete did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deleted {
    /// Objects deleted.
    pub deleted: usize,
    /// Objects not deleted, with S3's reasons.
    pub failed: Vec<DeleteError>,
}

/// Called for each key as its batch returns: `Ok(key)` deleted, `Err` not.
pub type DeleteReport = Arc<dyn Fn(Result<&str, &DeleteError>) + Send + Sync>;

/// Deletes what `listed` yields from `bucket`, `in_flight` batches at a time. Per-key failures
/// are collected in [`Deleted::failed`]; a listing error or a batch refused as a whole (after
/// the client's retries: a missing bucket, no permission to list) stops it with that error,
/// once the batches already sent have answered.
pub async fn delete_listed(
    client: Arc<S3Client>,
    bucket: &str,
    mut listed: mpsc::Receiver<Result<Vec<Object>, TransferError>>,
    in_flight: usize,
    report: DeleteReport,
) -> Result<Deleted, TransferError> {
    let mut flight = Flight::new(in_flight);
    let mut done = Deleted::default();
    let mut settle = |(keys, failed): (Vec<String>, Vec<DeleteError>)| {
        for key in &keys {
            match failed.iter().find(|f| &f.key == key) {
                Some(f) => report(Err(f)),
                None => {
                    done.deleted += 1;
                    report(Ok(key));
                }
            }
        }
        done.failed.extend(failed);
    };
    // The batches' connections open while the listing's first page arrives (the listing's
    // pages go on connections of their own, so none of these takes its next page cold).
    client.preconnect(bucket, in_flight);
    'listing: while let Some(page) = listed.recv().await {
        let mut keys: Vec<String> = Vec::new();
        let mut next = Some(page);
        // Keys that trickle in (`mv` sends each as its copy completes) are gathered into full
        // batches from what is already waiting, without waiting for more.
        while let Some(page) = next.take() {
            match page {
                Ok(objects) => keys.extend(objects.into_iter().map(|o| o.key)),
                Err(e) => {
                    flight.fail(e);
                    break 'listing;
                }
            }
            if keys.len() < MAX_DELETE_KEYS {
                next = listed.try_recv().ok();
            }
        }
        for batch in keys.chunks(batch_len(keys.len(), in_flight)) {
            let (client, bucket, batch) = (Arc::clone(&client), bucket.to_owned(), batch.to_vec());
            let task = async move { delete_batch(&client, &bucket, batch).await };
            if !flight.start(task, &mut settle).await {
                break 'listing;
            }
        }
    }
    flight.finish(&mut settle).await?;
    Ok(done)
}

/// The fewest keys a batch is cut to when spreading a page over the batches in flight.
const MIN_BATCH: usize = 100;

/// Keys per batch for `keys` waiting with `in_flight` batches allowed: spread over them (but
/// not below [`MIN_BATCH`] keys, nor above S3's 1,000). One 1,000-key batch is a ~50 KB body
/// that a new connection's slow start takes about four round trips to send, and one
/// connection's work for the server; eight of 125 go out side by side in about one.
fn batch_len(keys: usize, in_flight: usize) -> usize {
    keys.div_ceil(in_flight.max(1))
        .clamp(MIN_BATCH, MAX_DELETE_KEYS)
}

type Batch = Result<(Vec<String>, Vec<DeleteError>), TransferError>;

/// One batch: `DeleteObjects` for the keys XML can carry, `DeleteObject` for the others.
/// Returns the keys and those that failed.
async fn delete_batch(client: &S3Client, bucket: &str, keys: Vec<String>) -> Batch {
    let (plain, odd): (Vec<String>, Vec<String>) =
        keys.iter().cloned().partition(|k| fits_in_xml(k));
    let mut failed = Vec::new();
    if !plain.is_empty() {
        failed = client.delete_objects(bucket, &plain).await?;
    }
    for key in odd {
        if let Err(e) = client.delete_object(bucket, &key).await {
            failed.push(as_key_error(key, &e));
        }
    }
    Ok((keys, failed))
}

fn as_key_error(key: String, e: &ClientError) -> DeleteError {
    DeleteError {
        key,
        code: e.code().unwrap_or("").to_owned(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_spread_over_the_batches_in_flight_within_bounds() {
        assert_eq!(batch_len(1000, 8), 125);
        assert_eq!(batch_len(1001, 8), 126);
        // Never below MIN_BATCH (a small page goes in fewer batches) nor above S3's limit.
        assert_eq!(batch_len(200, 8), MIN_BATCH);
        assert_eq!(batch_len(3, 8), MIN_BATCH);
        assert_eq!(batch_len(20_000, 8), MAX_DELETE_KEYS);
        assert_eq!(batch_len(1000, 1), MAX_DELETE_KEYS);
        assert_eq!(batch_len(1000, 0), MAX_DELETE_KEYS);
    }
}
