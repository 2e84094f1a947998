//! `sync`: make a destination (a directory or an S3 prefix) hold what a source holds, moving
//! only what is missing or differs, as the AWS CLI decides it (size, then modification time),
//! and with `delete` removing what the source lacks.
//!
//! Both sides are read as listings sorted by name (S3 lists in UTF-8 byte order; a directory's
//! walk is sorted the same way) and merged as they arrive, so the first copy starts with the
//! first page of the listings, and memory holds a page of each side, not a million entries. A
//! listing that is not in order is an error, never a guess: with `delete` a misordered merge
//! would delete what the source has.

use std::path::PathBuf;
use std::sync::Arc;

use slipstream_client::xml::Object;
use slipstream_client::{DeleteError, ObjectKey, S3Client};
use slipstream_s3::pattern::{Filters, Pattern};
use tokio::sync::mpsc;

use crate::copy::{copy_object, CopySettings, CopySource};
use crate::download::{download_listed, Listed};
use crate::error::at;
use crate::flight::Flight;
use crate::many::{
    far_away, local_path, objects_in_flight, open_ahead, reported, with_part_budget, ObjectFailed,
    FAR_OBJECTS,
};
use crate::ranges::worth_cutting;
use crate::select::Selection;
use crate::sides::{entries, local_entries, next_step, Cursor, Step};
use crate::through::copy_listed_object;
use crate::walk::Links;
use crate::{upload_file, Many, TransferError, TransferOptions};

/// One side of a sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A local directory.
    Local(PathBuf),
    /// Every object below `prefix` (empty, or ending in `/`) in `bucket`.
    S3 {
        /// The bucket.
        bucket: String,
        /// The prefix, empty or ending in `/`.
        prefix: String,
    },
}

impl Place {
    /// `key` of `bucket` read as a sync reads it: a directory of keys (a `/` added, as the AWS
    /// CLI adds it, so `s3://b/dir` does not take `dir2/`).
    pub fn s3(bucket: &str, key: &str) -> Self {
        let mut prefix = key.to_owned();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        Place::S3 {
            bucket: bucket.to_owned(),
            prefix,
        }
    }

    /// `key` of `bucket` as one side of a sync: its source when `source` holds the sync's
    /// filters ([`Place::s3_source`]), else its destination ([`Place::s3_destination`]).
    pub fn s3_side(
        bucket: &str,
        key: &str,
        raw: bool,
        source: Option<&mut Filters>,
    ) -> Result<Self, TransferError> {
        match source {
            Some(filters) => Place::s3_source(bucket, key, raw, filters),
            None => Place::s3_destination(bucket, key, raw),
        }
    }

    /// `key` of `bucket` as a sync's source. A wildcard (unless `raw`: s5cmd's `sync
    /// 's3://b/logs/*.gz' dir/`) is the directory of its literal part, and the rest of the
    /// pattern, relative to it, goes to `filters` as [`Filters::within`]: both sides' names
    /// outside it are neither copied nor deleted, as an excluded name is left alone (where
    /// s5cmd's `--delete` removes every destination file the pattern does not match). Any
    /// other key as [`Place::s3`] reads it.
    pub fn s3_source(
        bucket: &str,
        key: &str,
        raw: bool,
        filters: &mut Filters,
    ) -> Result<Self, TransferError> {
        let Selection::Pattern(pattern) = Selection::parse_as(key, true, raw)? else {
            return Ok(Place::s3(bucket, key));
        };
        let (directory, rest) = pattern.split_directory();
        filters
            .within(rest)
            .map_err(|e| TransferError::Invalid(e.to_string()))?;
        Ok(Place::s3(bucket, directory))
    }

    /// `key` of `bucket` as a sync's destination: a prefix, never a wildcard (unless `raw`
    /// takes `*`, `?` and `[` as characters of the keys).
    pub fn s3_destination(bucket: &str, key: &str, raw: bool) -> Result<Self, TransferError> {
        if !raw && Pattern::has_wildcard(key) {
            return Err(TransferError::Invalid(format!(
                "s3://{bucket}/{key}: a sync's destination is a prefix, not a wildcard \
                 (--raw takes *, ? and [ as characters of the keys)"
            )));
        }
        Ok(Place::s3(bucket, key))
    }

    /// How the entry `name` is shown: its path, or its `s3://` URI.
    pub fn show(&self, name: &str) -> String {
        match self {
            Place::Local(dir) => dir.join(name).display().to_string(),
            Place::S3 { bucket, prefix } => format!("s3://{bucket}/{prefix}{name}"),
        }
    }
}

/// A file or an object as a sync compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name relative to its side (`/`-separated).
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// Nanoseconds since the epoch (a file's modification time, an object's `LastModified`);
    /// `None` when S3 sent a time that does not read.
    pub modified: Option<i64>,
    /// The object's ETag (empty for files): copies are pinned to it.
    pub etag: String,
}

/// Which way a sync moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// A directory to S3.
    Upload,
    /// S3 to a directory.
    Download,
    /// S3 to S3, on the server.
    Copy,
}

impl Direction {
    /// The AWS CLI's word for the action.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Upload => "upload",
            Direction::Download => "download",
            Direction::Copy => "copy",
        }
    }
}

/// How an entry present on both sides is judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compare {
    /// Sizes, then times (the AWS CLI's default).
    #[default]
    SizeAndTime,
    /// Sizes only (`--size-only`).
    SizeOnly,
    /// Sizes, then for downloads times that must be equal (`--exact-timestamps`).
    ExactTimestamps,
}

/// Whether `src` must replace `dst`, as the AWS CLI's sync strategies decide: a different size
/// always; otherwise for uploads and copies a source newer than the destination (an object's
/// `LastModified` is when it was written, after the file it came from), for downloads a local
/// file newer than the object (a download sets the file's time to the object's), or with
/// [`Compare::ExactTimestamps`] any difference. A time that did not read counts as different.
pub fn differs(direction: Direction, compare: Compare, src: &Entry, dst: &Entry) -> bool {
    if src.size != dst.size {
        return true;
    }
    let (Some(s), Some(d)) = (src.modified, dst.modified) else {
        return compare != Compare::SizeOnly;
    };
    match (compare, direction) {
        (Compare::SizeOnly, _) => false,
        (Compare::ExactTimestamps, Direction::Download) => s != d,
        (_, Direction::Download) => d > s,
        (_, Direction::Upload | Direction::Copy) => d < s,
    }
}

/// What a sync does about one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// Moves the source's entry to the destination (missing there, or different).
    Transfer,
    /// Deletes the destination's entry (the source lacks it; `delete` only).
    Delete,
}

/// One action a sync took (or, in a dry run, would take).
#[derive(Clone, Debug)]
pub struct Action {
    /// What was done.
    pub act: Act,
    /// The word for it: upload, download, copy or delete.
    pub word: &'static str,
    /// The source's path or URI (the deleted entry for a delete).
    pub from: String,
    /// Where it went (none for a delete).
    pub to: Option<String>,
    /// Bytes moved (0 for a delete).
    pub size: u64,
}

/// Called as each action completes (in a dry run, as it is planned).
pub type ActionDone = Arc<dyn Fn(&Action) + Send + Sync>;

/// How a sync runs.
#[derive(Clone, Default)]
pub struct SyncOptions {
    /// How entries on both sides are judged.
    pub compare: Compare,
    /// Deletes what the source lacks from the destination (after filters: an excluded name is
    /// neither copied nor deleted, as in the AWS CLI).
    pub delete: bool,
    /// Plans and reports, moves nothing.
    pub dryrun: bool,
    /// Objects in flight; `None`: chosen by the path (see `many.rs`).
    pub objects: Option<usize>,
    /// Names (relative to each side) to take or leave.
    pub filters: Filters,
    /// How server-side copies run (S3 to S3).
    pub copy: CopySettings,
    /// S3 to S3 only: the source's own client, when it is another service or account. Its
    /// listing and reads go through it, and the bytes through this machine (`through.rs`).
    pub source: Option<Arc<S3Client>>,
    /// Called for every action.
    pub on_action: Option<ActionDone>,
    /// What a local side's symbolic links are (default: followed, as the AWS CLI's sync).
    pub links: Links,
    /// Go on past an entry whose transfer fails on its own, handing its error to this (see
    /// [`crate::ManyOptions::on_failure`]); counted in `moved.failed`. `None`: the first
    /// error ends the sync.
    pub on_failure: Option<ObjectFailed>,
    /// To a local directory: what to do about an object whose file name differs only by case
    /// from another's (see [`crate::ManyOptions::case_conflict`]).
    pub case_conflict: crate::CaseConflict,
    /// See `case_conflict`.
    pub on_case_conflict: Option<crate::CaseConflictSeen>,
}

impl std::fmt::Debug for SyncOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncOptions")
            .field("compare", &self.compare)
            .field("delete", &self.delete)
            .field("dryrun", &self.dryrun)
            .field("objects", &self.objects)
            .field("filters", &self.filters)
            .field("source", &self.source.is_some())
            .field("links", &self.links)
            .finish_non_exhaustive()
    }
}

/// What a sync did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Synced {
    /// Entries moved (or, in a dry run, to move) and their bytes.
    pub moved: Many,
    /// Destination entries deleted (or to delete).
    pub deleted: usize,
    /// Entries on both sides left as they were.
    pub unchanged: usize,
    /// Destination objects S3 refused to delete, with its reasons.
    pub failed: Vec<DeleteError>,
}

/// Makes `to` hold what `from` holds (see the module's comment). Directory to S3, S3 to
/// directory (created if missing), or S3 to S3 on the server; a local source must be a
/// directory. Stops at the first transfer error once the transfers in flight ended (unless
/// `options.on_failure` takes the errors of single entries); objects S3
/// refuses to delete are listed in [`Synced::failed`].
pub async fn sync(
    client: Arc<S3Client>,
    from: &Place,
    to: &Place,
    options: &SyncOptions,
    opts: TransferOptions,
) -> Result<Synced, TransferError> {
    let (direction, bucket) = match (from, to) {
        (Place::Local(dir), Place::S3 { bucket, .. }) => {
            if !dir.is_dir() {
                return Err(TransferError::Invalid(format!(
                    "{} is not a directory",
                    dir.display()
                )));
            }
            (Direction::Upload, bucket)
        }
        (Place::S3 { bucket, .. }, Place::Local(_)) => (Direction::Download, bucket),
        (
            Place::S3 {
                bucket: sb,
                prefix: sp,
            },
            Place::S3 { bucket, prefix },
        ) => {
            let one_service = options.source.is_none();
            if one_service
                && sb == bucket
                && (prefix.starts_with(sp.as_str()) || sp.starts_with(prefix.as_str()))
            {
                return Err(TransferError::Invalid(format!(
                    "s3://{bucket}/{prefix} and s3://{sb}/{sp} overlap: one would list the other's copies"
                )));
            }
            (Direction::Copy, bucket)
        }
        (Place::Local(_), Place::Local(_)) => {
            return Err(TransferError::Invalid(
                "sync copies between a directory and s3://bucket/prefix/, or between two prefixes"
                    .into(),
            ))
        }
    };
    if options.source.is_some() && direction != Direction::Copy {
        return Err(TransferError::Invalid(
            "a source of its own (another service or account) needs s3:// on both sides".into(),
        ));
    }
    let reader = options
        .source
        .clone()
        .unwrap_or_else(|| Arc::clone(&client));
    // The local side (if any) is walked first: its names cut the S3 side's listing into
    // ranges fetched side by side.
    let (local, not_files) = match (from, to) {
        (Place::Local(dir), _) | (_, Place::Local(dir)) => {
            let (dir, filters, links) = (dir.clone(), options.filters.clone(), options.links);
            tokio::task::spawn_blocking(move || local_entries(&dir, &filters, links))
                .await
                .map_err(|e| TransferError::Io(std::io::Error::other(e)))??
        }
        _ => Default::default(),
    };
    let local = Arc::new(local);
    // The listings start before HeadBucket: their first pages are on the way while it
    // measures the path (a round trip saved on a long link).
    let mut source = Cursor::new(entries(&reader, from, &options.filters, &local, None), from);
    let mut destination = Cursor::new(entries(&client, to, &options.filters, &local, None), to);
    // Far away, a long S3 listing is mostly TCP slow start: it starts over in ranges cut at
    // the local side's names, side by side (`ranges.rs`), and the objects' connections start
    // opening, both as soon as HeadBucket says "far" (before its answer). Nearby the server's
    // CPU is the limit, and one listing costs it least.
    let here = far_away(&client, bucket, || {
        open_ahead(
            &client,
            bucket,
            options.objects.unwrap_or(FAR_OBJECTS),
            usize::MAX,
        );
        if worth_cutting(local.len()) {
            match direction {
                Direction::Upload => {
                    destination = Cursor::new(
                        entries(&client, to, &options.filters, &local, Some(&local)),
                        to,
                    );
                }
                Direction::Download => {
                    source = Cursor::new(
                        entries(&reader, from, &options.filters, &local, Some(&local)),
                        from,
                    );
                }
                Direction::Copy => {}
            }
        }
    });
    // From another service, each object waits on both paths: the farther decides.
    let other = match (&options.source, from) {
        (Some(reader), Place::S3 { bucket: sb, .. }) => Some((reader, sb)),
        _ => None,
    };
    let there = async {
        match other {
            Some((reader, sb)) => objects_in_flight(reader, sb, options.objects, usize::MAX).await,
            None => Ok(0),
        }
    };
    let (here, there) = tokio::try_join!(here, there)?;
    let objects = options.objects.unwrap_or(here.objects().max(there));
    open_ahead(&client, bucket, objects, usize::MAX);
    if let Some((reader, sb)) = other {
        open_ahead(reader, sb, objects, usize::MAX);
    }
    let mut run = Run {
        client: Arc::clone(&client),
        direction,
        from: Arc::new(from.clone()),
        to: Arc::new(to.clone()),
        options: options.clone(),
        opts: with_part_budget(opts),
        done: Synced::default(),
        deleter: None,
    };
    // Only files written (a download's) can differ only by case on a case-insensitive disk.
    let claims = crate::case_conflict::Claims::new(
        match to {
            Place::Local(_) => options.case_conflict,
            _ => crate::CaseConflict::Ignore,
        },
        options.on_case_conflict.clone(),
    );
    let mut flight = Flight::new(objects);
    let (mut moved, mut deleted) = (Many::default(), 0);
    let mut settle = |done: Option<(Act, u64)>| match done {
        Some((Act::Transfer, size)) => {
            moved.objects += 1;
            moved.bytes += size;
        }
        Some((Act::Delete, _)) => deleted += 1,
        None => moved.failed += 1,
    };
    loop {
        let step = match next_step(&mut source, &mut destination).await {
            Ok(Some(step)) => step,
            Ok(None) => break,
            Err(e) => {
                flight.fail(e);
                break;
            }
        };
        let task = match step {
            Step::Both(src, dst) => {
                if let Some(file) = claims
                    .watching()
                    .then(|| local_file(to, &src.name))
                    .flatten()
                {
                    claims.take(&file);
                }
                if !differs(direction, options.compare, &src, &dst) {
                    run.done.unchanged += 1;
                    continue;
                }
                run.transfer(src)
            }
            Step::New(src) => match claims
                .watching()
                .then(|| local_file(to, &src.name))
                .flatten()
            {
                Some(file) => match claims.admit(|| from.show(&src.name), &file) {
                    Ok(true) => run.transfer(src),
                    Ok(false) => continue,
                    Err(e) => {
                        flight.fail(e);
                        break;
                    }
                },
                None => run.transfer(src),
            },
            Step::Extra(dst) if options.delete => match run.delete(dst).await {
                Ok(task) => task,
                Err(e) => {
                    flight.fail(e);
                    break;
                }
            },
            Step::Extra(_) => continue,
        };
        let Some(task) = task else { continue };
        if !flight.start(task, &mut settle).await {
            break;
        }
    }
    let moved_result = flight.finish(&mut settle).await;
    let deletes_result = run.finish_deletes().await;
    moved_result?;
    deletes_result?;
    let mut done = run.done;
    done.moved.objects += moved.objects;
    done.moved.bytes += moved.bytes;
    done.moved.failed += moved.failed;
    done.deleted += deleted;
    // Only a source's: a FIFO in the destination directory is not the sync's to touch.
    if matches!(from, Place::Local(_)) {
        done.moved.not_files = not_files;
    }
    Ok(done)
}

/// The file entry `name` is at when the destination is a directory (for `case_conflict.rs`;
/// a name that would leave the directory is refused later, where it is written).
fn local_file(to: &Place, name: &str) -> Option<PathBuf> {
    match to {
        Place::Local(dir) => local_path(dir, "", name).ok(),
        Place::S3 { .. } => None,
    }
}

/// An entry's transfer or delete: what it did, or `None` for a transfer that failed and was
/// reported (`SyncOptions::on_failure`).
type Task = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Option<(Act, u64)>, TransferError>> + Send>,
>;

type Deleter = (
    mpsc::Sender<Result<Vec<Object>, TransferError>>,
    tokio::task::JoinHandle<Result<crate::Deleted, TransferError>>,
);

/// A sync under way: what every action needs.
struct Run {
    client: Arc<S3Client>,
    direction: Direction,
    from: Arc<Place>,
    to: Arc<Place>,
    options: SyncOptions,
    opts: TransferOptions,
    /// Counts kept outside the tasks: unchanged entries, and what a dry run plans.
    done: Synced,
    /// `DeleteObjects` batches for an S3 destination, started with the first delete.
    deleter: Option<Deleter>,
}

impl Run {
    fn report(options: &SyncOptions, action: &Action) {
        if let Some(f) = &options.on_action {
            f(action);
        }
    }

    /// The task that moves `src` to the destination; in a dry run none, the action reported
    /// at once (so a dry run's lines come in name order).
    fn transfer(&mut self, src: Entry) -> Option<Task> {
        let action = Action {
            act: Act::Transfer,
            word: self.direction.word(),
            from: self.from.show(&src.name),
            to: Some(self.to.show(&src.name)),
            size: src.size,
        };
        if self.options.dryrun {
            Run::report(&self.options, &action);
            self.done.moved.objects += 1;
            self.done.moved.bytes += src.size;
            return None;
        }
        let (client, from, to) = (
            Arc::clone(&self.client),
            Arc::clone(&self.from),
            Arc::clone(&self.to),
        );
        let (options, opts) = (self.options.clone(), self.opts.clone());
        Some(Box::pin(async move {
            let moved = move_entry(client, (&from, &to), &src, &options, opts).await;
            let named = || match &action.to {
                Some(to) => format!("{} -> {to}", action.from),
                None => action.from.clone(),
            };
            match moved {
                Ok(()) => {
                    Run::report(&options, &action);
                    Ok(Some((Act::Transfer, src.size)))
                }
                Err(e) => reported(e.of_object(named), options.on_failure.as_ref()).map(|()| None),
            }
        }))
    }

    /// The task that deletes `dst` from a local destination; for an S3 destination none,
    /// `dst` queued for a `DeleteObjects` batch (reported as its batch answers).
    async fn delete(&mut self, dst: Entry) -> Result<Option<Task>, TransferError> {
        let action = Action {
            act: Act::Delete,
            word: "delete",
            from: self.to.show(&dst.name),
            to: None,
            size: 0,
        };
        if self.options.dryrun {
            Run::report(&self.options, &action);
            self.done.deleted += 1;
            return Ok(None);
        }
        let key = match &*self.to {
            Place::Local(dir) => {
                let path = local_path(dir, "", &dst.name)?;
                let options = self.options.clone();
                return Ok(Some(Box::pin(async move {
                    tokio::fs::remove_file(&path).await.map_err(at(&path))?;
                    Run::report(&options, &action);
                    Ok(Some((Act::Delete, 0)))
                })));
            }
            Place::S3 { prefix, .. } => format!("{prefix}{}", dst.name),
        };
        let tx = match &self.deleter {
            Some((tx, _)) => tx.clone(),
            None => self.start_deleter(),
        };
        let object = Object {
            key,
            ..Object::default()
        };
        // A send fails only if the deleting task ended early: its error comes from
        // `finish_deletes`.
        let _ = tx.send(Ok(vec![object])).await;
        Ok(None)
    }

    /// Starts the task deleting an S3 destination's extra objects in `DeleteObjects`
    /// batches, several in flight, each key reported as its batch answers.
    fn start_deleter(&mut self) -> mpsc::Sender<Result<Vec<Object>, TransferError>> {
        let Place::S3 { bucket, .. } = &*self.to else {
            unreachable!("only an S3 destination has objects to delete in batches")
        };
        let (tx, rx) = mpsc::channel(8);
        let (client, bucket, options) = (
            Arc::clone(&self.client),
            bucket.clone(),
            self.options.clone(),
        );
        let shown = bucket.clone();
        let report: crate::DeleteReport = Arc::new(move |key| {
            if let Ok(key) = key {
                let action = Action {
                    act: Act::Delete,
                    word: "delete",
                    from: format!("s3://{shown}/{key}"),
                    to: None,
                    size: 0,
                };
                Run::report(&options, &action);
            }
        });
        let task =
            tokio::spawn(async move { crate::delete_listed(client, &bucket, rx, 8, report).await });
        self.deleter = Some((tx.clone(), task));
        tx
    }

    /// Waits for the queued `DeleteObjects` batches; refused keys go to `done.failed`.
    async fn finish_deletes(&mut self) -> Result<(), TransferError> {
        let Some((tx, task)) = self.deleter.take() else {
            return Ok(());
        };
        drop(tx);
        let deleted = task.await??;
        self.done.deleted += deleted.deleted;
        self.done.failed.extend(deleted.failed);
        Ok(())
    }
}

/// Moves one entry: an upload, a download (the file's time then set to the object's, so the
/// next sync sees them equal), or a server-side copy pinned to the listed ETag.
async fn move_entry(
    client: Arc<S3Client>,
    (from, to): (&Place, &Place),
    src: &Entry,
    options: &SyncOptions,
    opts: TransferOptions,
) -> Result<(), TransferError> {
    match (from, to) {
        (Place::Local(dir), Place::S3 { bucket, prefix }) => {
            let path = local_path(dir, "", &src.name)?;
            let key = format!("{prefix}{}", src.name);
            upload_file(client, &path, bucket, &key, opts).await?;
        }
        (Place::S3 { bucket, prefix }, Place::Local(dir)) => {
            let path = local_path(dir, "", &src.name)?;
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .map_err(at(parent))?;
            }
            let key = format!("{prefix}{}", src.name);
            let read = opts.source_customer_key.clone();
            let object = ObjectKey::from(&key).with_customer_key(read.as_ref());
            let listed = Listed {
                size: src.size,
                modified: src.modified,
            };
            let opts = TransferOptions {
                keep_modified_time: true,
                ..opts
            };
            download_listed(client, bucket, object, &path, Some(listed), opts).await?;
        }
        (
            Place::S3 {
                bucket: sb,
                prefix: sp,
            },
            Place::S3 { bucket, prefix },
        ) => {
            let (src_key, key) = (format!("{sp}{}", src.name), format!("{prefix}{}", src.name));
            if let Some(reader) = &options.source {
                let reader = Arc::clone(reader);
                let read = opts.source_customer_key.clone();
                let object = ObjectKey::from(&src_key).with_customer_key(read.as_ref());
                let from = (sb.as_str(), object, Some(src.size));
                copy_listed_object(reader, client, from, (bucket, &key), opts).await?;
                return Ok(());
            }
            let source = CopySource {
                bucket: sb.clone(),
                key: src_key,
                version_id: None,
                listed: Some((src.size, src.etag.clone())),
                customer_key: options.copy.source_customer_key.clone(),
            };
            copy_object(&client, &source, (bucket, &key), &options.copy).await?;
        }
        (Place::Local(_), Place::Local(_)) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, size: u64, secs: i64) -> Entry {
        Entry {
            name: name.into(),
            size,
            modified: Some(secs * 1_000_000_000),
            etag: String::new(),
        }
    }

    #[test]
    fn entries_are_judged_as_the_aws_cli_judges_them() {
        use Compare::*;
        use Direction::*;
        let (old, new) = (entry("a", 5, 100), entry("a", 5, 200));
        // A different size always moves.
        for d in [Upload, Download, Copy] {
            for c in [SizeAndTime, SizeOnly, ExactTimestamps] {
                assert!(differs(d, c, &entry("a", 4, 100), &old), "{d:?} {c:?}");
            }
        }
        // Uploads and copies: a source newer than the destination moves, an older one not.
        for d in [Upload, Copy] {
            assert!(differs(d, SizeAndTime, &new, &old));
            assert!(!differs(d, SizeAndTime, &old, &new));
            assert!(!differs(d, SizeAndTime, &old, &old));
            assert!(!differs(d, SizeOnly, &new, &old));
            assert!(differs(d, ExactTimestamps, &new, &old));
            assert!(!differs(d, ExactTimestamps, &old, &new));
        }
        // Downloads: a local file newer than the object moves (the object wins), an older
        // one not; with exact timestamps any difference moves.
        assert!(differs(Download, SizeAndTime, &old, &new));
        assert!(!differs(Download, SizeAndTime, &new, &old));
        assert!(!differs(Download, SizeOnly, &old, &new));
        assert!(differs(Download, ExactTimestamps, &new, &old));
        assert!(differs(Download, ExactTimestamps, &old, &new));
        assert!(!differs(Download, ExactTimestamps, &old, &old));
        // A time that did not read: moved unless only sizes count.
        let unknown = Entry {
            modified: None,
            ..old.clone()
        };
        assert!(differs(Upload, SizeAndTime, &unknown, &old));
        assert!(!differs(Upload, SizeOnly, &unknown, &old));
    }
}
