//! `cp` and `mv` of many objects (`--recursive`, or a wildcard source): a prefix or a
//! wildcard's matches to a directory, a directory to a prefix, objects to a prefix on the
//! server; `--dryrun`; and, for `mv`, deleting each source once its copy completed (in
//! `DeleteObjects` batches, while the copies go on).

use std::sync::Arc;

use slipstream_client::xml::Object;
use slipstream_client::S3Client;
use slipstream_transfer::{
    copy_listed, copy_listed_through, delete_listed, download_prefix, last_name, list_selected,
    list_spread, upload_directory, walk_files, ManyOptions, Selection, Spread, TransferError,
    TransferOptions,
};

use crate::copying::{in_place, source_client, Plan};
use crate::objects::{failed, s3};
use crate::Failure;

/// `cp --recursive` or a wildcard source: a prefix (or matches) to a directory, a directory to
/// a prefix, or objects to a prefix on the server.
pub(crate) async fn cp_many(
    plan: &Plan<'_>,
    src_s3: bool,
    dst_s3: bool,
    client: Arc<S3Client>,
    opts: TransferOptions,
) -> Result<(&'static str, slipstream_transfer::Many), Failure> {
    let a = plan.a;
    let moving = plan.moving;
    let action = move |base: &'static str| if moving { "move" } else { base };
    match (src_s3, dst_s3) {
        (true, false) => {
            let src = s3(a.source.url()?)?;
            let selection = Selection::parse_as(&src.key, a.recursive, a.raw)
                .map_err(|e| Failure::usage(e.to_string()))?;
            let dir = a.destination.path();
            let mut many = ManyOptions::new(a.tuning.objects());
            many.overwrite = a.overwrite();
            many.flatten = a.flatten;
            many.on_failure = Some(plan.printer.failures(action("download")));
            many.case_conflict = a.case_conflict.into();
            many.on_case_conflict = Some(crate::actions::case_conflicts());
            many.filters = plan.filters.clone();
            let deleting = plan.moving.then(|| mv_deleter(&client, &src.bucket));
            let (p, bucket, tx) = (
                Arc::clone(&plan.printer),
                src.bucket.clone(),
                deleting.as_ref().map(|d| d.0.clone()),
            );
            many.on_object = Some(Arc::new(move |key, path, _| {
                p.done(
                    action("download"),
                    &format!("s3://{bucket}/{key}"),
                    Some(path),
                );
                send_deleted(&tx, key);
            }));
            if a.dryrun {
                let to = |rel: &str| dir.join(rel).display().to_string();
                return dry_run(plan, &client, &src.bucket, selection, ("download", to)).await;
            }
            let result = download_prefix(
                Arc::clone(&client),
                &src.bucket,
                selection,
                dir,
                &many,
                opts,
            )
            .await;
            drop(many);
            finish_deletes(deleting, result.map(|m| ("download", m))).await
        }
        (false, true) => {
            let dst = s3(a.destination.url()?)?;
            // A glob (`'logs/*.csv'`) walks its directory, bounded by it.
            let mut filters = plan.filters.clone();
            let glob = crate::copying::local_glob(a, &mut filters)?;
            let dir = glob.as_deref().unwrap_or(a.source.path());
            if !dir.is_dir() {
                return Err(Failure::usage(format!("{} is not a directory", a.source)));
            }
            let mut prefix = dst.key.clone();
            if !prefix.is_empty() && !prefix.ends_with('/') {
                prefix.push('/');
            }
            let mut many = ManyOptions::new(a.tuning.objects());
            many.overwrite = a.overwrite();
            many.flatten = a.flatten;
            many.on_failure = Some(plan.printer.failures(action("upload")));
            many.filters = filters.clone();
            many.links =
                slipstream_transfer::Links::follow(a.follow_symlinks || !a.no_follow_symlinks);
            let (p, bucket) = (Arc::clone(&plan.printer), dst.bucket.clone());
            let removal_failed = Arc::new(std::sync::Mutex::new(None));
            let r = Arc::clone(&removal_failed);
            let (root, below, flatten) = (dir.to_path_buf(), prefix.clone(), a.flatten);
            many.on_object = Some(Arc::new(move |path, key, _| {
                p.done(
                    action("upload"),
                    path,
                    Some(&format!("s3://{bucket}/{key}")),
                );
                if moving {
                    // The file as the walk found it, its directory's bytes kept (`path` is
                    // text for the line printed: a directory named in Latin-1 would not match).
                    // Flattened, the key no longer says where the file was: its path as text
                    // then (exact for UTF-8 names; another fails to be removed, and says so).
                    let file = match flatten {
                        true => std::path::PathBuf::from(path),
                        false => root.join(key.strip_prefix(below.as_str()).unwrap_or(key)),
                    };
                    if let Err(e) = std::fs::remove_file(file) {
                        if let Ok(mut r) = r.lock() {
                            r.get_or_insert(format!(
                                "uploaded, but {path} could not be removed: {e}"
                            ));
                        }
                    }
                }
            }));
            if a.dryrun {
                let walked = walk_files(dir, &filters, many.links).map_err(failed)?;
                let objects = walked.files.len();
                for (path, rel) in walked.files {
                    let rel = if a.flatten { last_name(&rel) } else { &rel };
                    plan.printer.done(
                        action("upload"),
                        &path.display().to_string(),
                        Some(&format!("s3://{}/{prefix}{rel}", dst.bucket)),
                    );
                }
                let left_out = slipstream_transfer::Many {
                    objects,
                    not_files: walked.not_files,
                    ..Default::default()
                };
                return Ok(("upload", left_out));
            }
            let done = upload_directory(client, dir, &dst.bucket, &prefix, &many, opts)
                .await
                .map_err(failed)?;
            if let Some(why) = removal_failed.lock().ok().and_then(|mut r| r.take()) {
                return Err(failed(why));
            }
            Ok(("upload", done))
        }
        (true, true) => {
            let (src, dst) = (s3(a.source.url()?)?, s3(a.destination.url()?)?);
            // Another service or account: listed, read and (for mv) deleted with its own
            // client, the bytes through this machine.
            let reader = source_client(&a.source_service, &a.connection, &a.transport)?;
            let lister = reader.clone().unwrap_or_else(|| Arc::clone(&client));
            let selection = Selection::parse_as(&src.key, a.recursive, a.raw)
                .map_err(|e| Failure::usage(e.to_string()))?;
            let mut prefix = dst.key.clone();
            if !prefix.is_empty() && !prefix.ends_with('/') {
                prefix.push('/');
            }
            let same = reader.is_none() && src.bucket == dst.bucket;
            if same && a.flatten && prefix.starts_with(selection.base()) {
                return Err(Failure::usage(format!(
                    "--flatten onto s3://{}/{}, the source or inside it, would copy objects over \
                     its own objects",
                    dst.bucket, prefix
                )));
            }
            if same && prefix == selection.base() {
                // Every object onto itself: what the copies write are the keys listed.
                in_place(plan, &format!("s3://{}/{}", dst.bucket, prefix))?;
            } else if same && prefix.starts_with(selection.base()) {
                return Err(Failure::usage(format!(
                    concat!(
                        "s3://{}/{} is the source or inside it: ",
                        "the copy would list its own copies"
                    ),
                    dst.bucket, prefix
                )));
            }
            if a.dryrun {
                let (bucket, prefix) = (dst.bucket.clone(), prefix.clone());
                let to = move |rel: &str| format!("s3://{bucket}/{prefix}{rel}");
                return dry_run(plan, &lister, &src.bucket, selection, ("copy", to)).await;
            }
            let mut many = ManyOptions::new(a.tuning.objects());
            many.overwrite = a.overwrite();
            many.flatten = a.flatten;
            many.on_failure = Some(plan.printer.failures(action("copy")));
            let deleting = plan.moving.then(|| mv_deleter(&lister, &src.bucket));
            let (p, sb, db, tx) = (
                Arc::clone(&plan.printer),
                src.bucket.clone(),
                dst.bucket.clone(),
                deleting.as_ref().map(|d| d.0.clone()),
            );
            many.on_object = Some(Arc::new(move |from, to, _| {
                p.done(
                    action("copy"),
                    &format!("s3://{sb}/{from}"),
                    Some(&format!("s3://{db}/{to}")),
                );
                send_deleted(&tx, from);
            }));
            let listed = list_spread(
                Arc::clone(&lister),
                &src.bucket,
                selection.clone(),
                plan.filters.clone(),
                4,
                Spread::WhenFar,
            );
            let (from, to) = (
                (src.bucket.as_str(), &selection),
                (dst.bucket.as_str(), prefix.as_str()),
            );
            let result = match &reader {
                Some(reader) => {
                    copy_listed_through(reader, &client, from, listed, to, &many, opts).await
                }
                None => {
                    let settings = a.tuning.copy_settings(&a.headers);
                    copy_listed(&client, from, listed, to, &many, &settings).await
                }
            };
            drop(many);
            finish_deletes(deleting, result.map(|m| ("copy", m))).await
        }
        (false, false) => Err(Failure::usage(concat!(
            "--recursive copies between a local directory and s3://bucket/prefix/, ",
            "or between two prefixes"
        ))),
    }
}

/// `--dryrun` of a many-object copy from S3: the listing, with where each object would go,
/// each line saying what the copy would do as the AWS CLI words it (`download`, `copy`, or
/// `move` for either).
async fn dry_run(
    plan: &Plan<'_>,
    client: &Arc<S3Client>,
    bucket: &str,
    selection: Selection,
    (what, destination): (&'static str, impl Fn(&str) -> String),
) -> Result<(&'static str, slipstream_transfer::Many), Failure> {
    let action = if plan.moving { "move" } else { what };
    let mut would = slipstream_transfer::Many::default();
    let mut listed = list_selected(
        Arc::clone(client),
        bucket,
        selection.clone(),
        plan.filters.clone(),
        4,
    );
    while let Some(page) = listed.recv().await {
        for o in page.map_err(failed)? {
            let relative = selection.relative(&o.key);
            let to = match plan.a.flatten {
                true => destination(last_name(relative)),
                false => destination(relative),
            };
            plan.printer
                .done(action, &format!("s3://{bucket}/{}", o.key), Some(&to));
            would.objects += 1;
            would.bytes += o.size;
        }
    }
    Ok((action, would))
}

/// Where `mv` sends the keys whose copies completed, and the task deleting them in batches.
type Deleter = (
    tokio::sync::mpsc::Sender<Result<Vec<Object>, TransferError>>,
    tokio::task::JoinHandle<Result<slipstream_transfer::Deleted, TransferError>>,
);

/// Starts deleting, in `DeleteObjects` batches, the source keys `mv` sends as their copies
/// complete.
fn mv_deleter(client: &Arc<S3Client>, bucket: &str) -> Deleter {
    let (tx, rx) = tokio::sync::mpsc::channel(1024);
    let (client, bucket) = (Arc::clone(client), bucket.to_owned());
    let task = tokio::spawn(async move {
        let quiet: slipstream_transfer::DeleteReport = Arc::new(|_| {});
        delete_listed(client, &bucket, rx, 8, quiet).await
    });
    (tx, task)
}

/// Queues `key`'s source for deletion (from a transfer task: never blocks it; a full queue
/// waits on its own task).
fn send_deleted(
    tx: &Option<tokio::sync::mpsc::Sender<Result<Vec<Object>, TransferError>>>,
    key: &str,
) {
    if let Some(tx) = tx {
        let (tx, key) = (tx.clone(), key.to_owned());
        tokio::spawn(async move {
            let object = Object {
                key,
                ..Object::default()
            };
            let _ = tx.send(Ok(vec![object])).await;
        });
    }
}

/// Waits for `mv`'s deletes once the copies ended: a copy error stands (the sources not yet
/// copied were never queued), and a source that could not be deleted is an error naming it.
async fn finish_deletes(
    deleting: Option<Deleter>,
    result: Result<(&'static str, slipstream_transfer::Many), TransferError>,
) -> Result<(&'static str, slipstream_transfer::Many), Failure> {
    let Some((tx, task)) = deleting else {
        return result.map_err(failed);
    };
    drop(tx);
    let deleted = task.await.map_err(failed)?;
    let moved = result.map_err(failed)?;
    let deleted = deleted.map_err(|e| {
        failed(format!(
            "copied, but the sources could not all be deleted: {e}"
        ))
    })?;
    if let Some(f) = deleted.failed.first() {
        return Err(failed(format!(
            "copied, but {} source(s) could not be deleted, e.g. {}: {}: {}",
            deleted.failed.len(),
            f.key,
            f.code,
            f.message
        )));
    }
    Ok(moved)
}
