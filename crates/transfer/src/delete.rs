//! Deleting many objects: `DeleteObjects` batches of up to 1,000 keys, several in flight, fed
//! by a listing as it goes (see `select.rs`). The per-key failures S3 returns inside a 200 are
//! collected and reported, never dropped; keys with control characters XML cannot carry are
//! deleted one by one instead.

use std::sync::Arc;

use slipstream_client::xml::Object;
use slipstream_client::{ClientError, DeleteError, S3Client, MAX_DELETE_KEYS};
use slipstream_s3::delete::fits_in_xml;
use slipstream_s3::pattern::Filters;
use tokio::sync::mpsc;

use crate::flight::Flight;
use crate::TransferError;
use crate::{list_spread, Selection, Spread};

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

/// Deletes every object of `bucket` (their current versions: older versions and delete
/// markers stay), listing spread when the service is far, 8 batches in flight: what `rb
/// --force` and the Python `delete_bucket(force=True)` do before deleting the bucket, as the
/// AWS CLI's `rb --force` does.
pub async fn delete_all(
    client: Arc<S3Client>,
    bucket: &str,
    report: DeleteReport,
) -> Result<Deleted, TransferError> {
    let everything = Selection::Prefix(String::new());
    let listed = list_spread(
        Arc::clone(&client),
        bucket,
        everything,
        Filters::new(),
        4,
        Spread::WhenFar,
    );
    delete_listed(client, bucket, listed, 8, report).await
}

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
    // Everything already listed, up to a full batch for every slot: a listing ahead of the
    // deletes (pages side by side) then goes in batches of 1,000, fewer round trips per key,
    // while a lone page is still spread over the slots.
    let gather = in_flight.max(1) * MAX_DELETE_KEYS;
    'listing: while let Some(page) = listed.recv().await {
        let keys = match waiting(page, &mut listed, gather) {
            Ok(keys) => keys,
            Err(e) => {
                flight.fail(e);
                break 'listing;
            }
        };
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

/// The keys of `page` and of the pages already waiting behind it, until `limit` is reached or
/// none waits: keys that trickle in (`mv` sends each as its copy completes) and pages listed
/// side by side are gathered into full batches without waiting for more.
fn waiting(
    page: Result<Vec<Object>, TransferError>,
    listed: &mut mpsc::Receiver<Result<Vec<Object>, TransferError>>,
    limit: usize,
) -> Result<Vec<String>, TransferError> {
    let mut keys: Vec<String> = Vec::new();
    let mut next = Some(page);
    while let Some(page) = next.take() {
        keys.extend(page?.into_iter().map(|o| o.key));
        if keys.len() < limit {
            next = listed.try_recv().ok();
        }
    }
    Ok(keys)
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
        version_id: None,
        code: e.code().unwrap_or("").to_owned(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(first: usize, n: usize) -> Result<Vec<Object>, TransferError> {
        Ok((first..first + n)
            .map(|i| Object {
                key: format!("k{i}"),
                ..Object::default()
            })
            .collect())
    }

    #[test]
    fn pages_already_listed_are_gathered_up_to_the_limit_and_no_further() {
        let (tx, mut rx) = mpsc::channel(16);
        for i in 1..4 {
            tx.try_send(page(i * 1000, 1000)).unwrap();
        }
        // Three pages wait behind the first: all four go together under a limit of 8,000.
        let keys = waiting(page(0, 1000), &mut rx, 8 * MAX_DELETE_KEYS).unwrap();
        assert_eq!(keys.len(), 4000);
        assert_eq!((keys[0].as_str(), keys[3999].as_str()), ("k0", "k3999"));
        assert_eq!(batch_len(keys.len(), 8), 500);
        // Under a limit of 1,000 the first page goes alone; the rest still wait, in order.
        for i in 5..7 {
            tx.try_send(page(i * 1000, 1000)).unwrap();
        }
        assert_eq!(
            waiting(page(4000, 1000), &mut rx, 1000).unwrap().len(),
            1000
        );
        let next = rx.try_recv().unwrap().unwrap();
        assert_eq!(next[0].key, "k5000");
        // An error among the waiting pages is the result: its batch is not sent.
        tx.try_send(Err(TransferError::Invalid("listing failed".into())))
            .unwrap();
        assert!(waiting(page(7000, 10), &mut rx, 8000).is_err());
    }

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
