//! `slipstream cat`: one object's bytes on standard output, in order (its parts fetched in
//! parallel), or, as s5cmd's `cat`, several objects one after another in key order: every
//! object a wildcard matches (`s3://b/logs/*.gz`), or those directly under a prefix that ends
//! in `/` or in a bucket (one level, as s5cmd lists them). Objects are fetched ahead while
//! one is written, up to a budget of bytes, so that many small objects do not cost a round
//! trip each; a large one streams in its turn.

use std::sync::Arc;

use bytes::Bytes;
use clap::Args;
use slipstream_client::xml::Object;
use slipstream_client::{ObjectKey, S3Client};
use slipstream_s3::pattern::{Filters, Pattern};
use slipstream_s3::S3Uri;
use slipstream_transfer::{
    download_to_memory, download_to_writer, list_selected, Selection, TransferError,
    TransferOptions,
};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use crate::args::ReadArgs;
use crate::objects::{client, failed, interruptible, object, runtime, s3};
use crate::Failure;

/// Bytes of the objects fetched ahead of the one being written, in units of [`UNIT`].
const AHEAD_UNITS: u32 = 1024;
/// The budget's unit: 64 KiB, so 1,024 of them are 64 MiB.
const UNIT: u64 = 64 << 10;
/// An object up to this size is fetched ahead whole; a larger one streams when its turn
/// comes (its parts in parallel, in order), holding no more than a download's window.
const WHOLE: u64 = 8 << 20;
/// Objects fetched ahead at most, whatever their sizes (requests in flight).
const AHEAD_OBJECTS: usize = 32;

/// The next object to write, in key order.
enum Next {
    /// Fetched ahead: its bytes to come, and the budget they hold until written.
    Whole(
        String,
        JoinHandle<Result<Bytes, TransferError>>,
        OwnedSemaphorePermit,
    ),
    /// Large: downloaded in its turn.
    Stream(String),
}

/// `slipstream cat`.
#[derive(Args, Debug)]
pub struct CatArgs {
    /// s3://bucket/key (`--version-id` for a version of it), a wildcard (`s3://b/logs/*.gz`:
    /// every match, in key order), or s3://bucket[/prefix/] (the objects directly under it).
    #[command(flatten)]
    pub read: ReadArgs,
    /// Take the key literally: `*`, `?` and `[` are characters of it, not wildcards.
    #[arg(long)]
    pub raw: bool,
}

/// `slipstream cat`.
pub fn cat(a: &CatArgs) -> Result<(), Failure> {
    let r = &a.read;
    let target = s3(&r.object.target)?;
    let wildcard = !a.raw && Pattern::has_wildcard(&target.key);
    if !wildcard && !target.key.is_empty() && !target.key.ends_with('/') {
        return cat_one(r);
    }
    if r.version_id.is_some() {
        return Err(Failure::usage(
            "--version-id names a version of one object: s3://bucket/key",
        ));
    }
    let selection = match wildcard {
        true => Some(
            Selection::parse_as(&target.key, true, false)
                .map_err(|e| Failure::usage(e.to_string()))?,
        ),
        false => None,
    };
    let client = client(&r.object.connection, &r.object.transport)?;
    let written = runtime()?.block_on(interruptible(async {
        // Listed on the runtime (the listings are tasks of their own).
        let listed = match selection {
            Some(selection) => {
                let client = Arc::clone(&client);
                list_selected(client, &target.bucket, selection, Filters::new(), 4)
            }
            None => one_level(Arc::clone(&client), &target),
        };
        cat_listed(client, &target, r, listed).await
    }))??;
    if written == 0 {
        // As s5cmd ("no object found") and `cp` of a wildcard here: a script that expected
        // bytes does not go on as if it had them.
        return Err(Failure::input(format!(
            "no object matches {}",
            r.object.target
        )));
    }
    Ok(())
}

/// One object (at `--version-id` when given), as `cat` always did.
fn cat_one(r: &ReadArgs) -> Result<(), Failure> {
    let a = &r.object;
    let src = object(&a.target)?;
    let client = client(&a.connection, &a.transport)?;
    runtime()?.block_on(interruptible(async {
        let mut stdout = tokio::io::stdout();
        let key = ObjectKey::new(&src.key, r.version_id.as_deref())
            .with_customer_key(r.sse_c.sse_c_key.as_ref());
        let written = download_to_writer(
            client,
            &src.bucket,
            key,
            &mut stdout,
            TransferOptions::default(),
        )
        .await;
        named(&src, written.map(drop))
    }))?
}

/// A failed read named by its object (S3's own message does not say which it could not read);
/// a failed write (a closed pipe) said as one.
fn named(src: &S3Uri, result: Result<(), TransferError>) -> Result<(), Failure> {
    match result {
        Err(TransferError::Io(e)) => Err(Failure::from_write(&e)),
        other => other.map_err(|e| failed(format!("{src}: {e}"))),
    }
}

/// The objects directly under `target`'s prefix (a bucket's top level for none), a page at a
/// time, "directories" and folder markers left out, as s5cmd's `cat s3://b/prefix/` takes them.
fn one_level(
    client: Arc<S3Client>,
    target: &S3Uri,
) -> mpsc::Receiver<Result<Vec<Object>, TransferError>> {
    let (tx, rx) = mpsc::channel(4);
    let (bucket, prefix) = (target.bucket.clone(), target.key.clone());
    tokio::spawn(async move {
        let mut token = None;
        loop {
            let page = client
                .list_objects_v2(&bucket, &prefix, Some("/"), token.as_deref())
                .await;
            let (objects, next) = match page {
                Ok(p) => (p.objects, p.continuation),
                Err(e) => {
                    let _ = tx.send(Err(e.into())).await;
                    return;
                }
            };
            let objects = objects.into_iter().filter(|o| !o.key.ends_with('/'));
            if tx.send(Ok(objects.collect())).await.is_err() || next.is_none() {
                return;
            }
            token = next;
        }
    });
    rx
}

/// Writes every listed object in turn; returns how many. A small object is fetched ahead (a
/// task each, up to the budget), a large one streamed when its turn comes.
async fn cat_listed(
    client: Arc<S3Client>,
    target: &S3Uri,
    r: &ReadArgs,
    mut listed: mpsc::Receiver<Result<Vec<Object>, TransferError>>,
) -> Result<usize, Failure> {
    let (next_tx, mut next_rx) = mpsc::channel::<Result<Next, TransferError>>(AHEAD_OBJECTS);
    let budget = Arc::new(Semaphore::new(AHEAD_UNITS as usize));
    let (fetcher, bucket) = (Arc::clone(&client), target.bucket.clone());
    let customer_key = r.sse_c.sse_c_key.clone();
    // The fetcher: lists, and starts each small object's GET once the budget has room.
    tokio::spawn(async move {
        while let Some(page) = listed.recv().await {
            let objects = match page {
                Ok(objects) => objects,
                Err(e) => {
                    let _ = next_tx.send(Err(e)).await;
                    return;
                }
            };
            for o in objects {
                let next = match o.size <= WHOLE {
                    false => Next::Stream(o.key),
                    true => {
                        let units = (o.size.div_ceil(UNIT) as u32).clamp(1, AHEAD_UNITS);
                        let Ok(permit) = Arc::clone(&budget).acquire_many_owned(units).await else {
                            return;
                        };
                        let (client, bucket, key) = (Arc::clone(&fetcher), bucket.clone(), o.key);
                        let customer_key = customer_key.clone();
                        let get = tokio::spawn({
                            let key = key.clone();
                            async move {
                                let object =
                                    ObjectKey::from(&key).with_customer_key(customer_key.as_ref());
                                download_to_memory(
                                    client,
                                    &bucket,
                                    object,
                                    TransferOptions::default(),
                                )
                                .await
                            }
                        });
                        Next::Whole(key, get, permit)
                    }
                };
                if next_tx.send(Ok(next)).await.is_err() {
                    return;
                }
            }
        }
    });
    let mut stdout = tokio::io::stdout();
    let mut written = 0;
    while let Some(next) = next_rx.recv().await {
        let src = |key: &str| S3Uri {
            bucket: target.bucket.clone(),
            key: key.to_owned(),
        };
        match next.map_err(failed)? {
            Next::Whole(key, get, permit) => {
                let bytes = get
                    .await
                    .map_err(|e| failed(format!("{}: {e}", src(&key))))?;
                let bytes = bytes.map_err(|e| failed(format!("{}: {e}", src(&key))))?;
                stdout
                    .write_all(&bytes)
                    .await
                    .map_err(|e| Failure::from_write(&e))?;
                drop(permit);
            }
            Next::Stream(key) => {
                let object = ObjectKey::from(&key).with_customer_key(r.sse_c.sse_c_key.as_ref());
                let client = Arc::clone(&client);
                let streamed = download_to_writer(
                    client,
                    &target.bucket,
                    object,
                    &mut stdout,
                    TransferOptions::default(),
                )
                .await;
                named(&src(&key), streamed.map(drop))?;
            }
        }
        written += 1;
    }
    stdout.flush().await.map_err(|e| Failure::from_write(&e))?;
    Ok(written)
}
