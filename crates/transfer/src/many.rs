//! Many objects: a prefix (or a wildcard's matches) to a directory and a directory to a
//! prefix, with two knobs: objects in flight, and parts in flight per object
//! (`TransferOptions::concurrency`); `--include`/`--exclude` filters on names relative to the
//! source; a call after each object, which `mv` uses to delete that object's source.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use slipstream_client::{CustomerKey, ObjectKey, S3Client};
use slipstream_s3::pattern::Filters;
use slipstream_s3::time::parse_timestamp;

use crate::cut::{far_network, LONG_PATH};
use crate::download::{download_listed, Listed};
use crate::error::at;
use crate::flat_names::{last_name, FlatNames};
use crate::pool::for_each_part;
use crate::select::Selection;
use crate::walk::{walk_files, Links, Walked};
use crate::TransferError;
use crate::{upload_file, Overwrite, Stat, TransferOptions, MIN_PART_SIZE};

/// What a many-object transfer moved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Many {
    /// Objects moved.
    pub objects: usize,
    /// Bytes moved.
    pub bytes: u64,
    /// Objects left alone because their destination existed (`ManyOptions::overwrite`).
    pub skipped: usize,
    /// Entries below an uploaded directory that are not files (FIFOs, sockets, devices): left
    /// out, as s5cmd and the AWS CLI leave them, and named so the caller can say so.
    pub not_files: Vec<PathBuf>,
    /// Objects that failed while the rest went on (`ManyOptions::on_failure`, which was told
    /// of each).
    pub failed: usize,
}

/// How one object of many ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Moved, with its bytes.
    Moved(u64),
    /// Left alone (`ManyOptions::overwrite`).
    Skipped,
    /// Failed, reported, and the others went on.
    Failed,
}

impl Many {
    /// The total of objects that ended so.
    pub(crate) fn of(ends: &[Ended]) -> Self {
        let mut many = Self::default();
        for end in ends {
            many.settle(*end);
        }
        many
    }

    /// Counts one object.
    pub(crate) fn settle(&mut self, end: Ended) {
        match end {
            Ended::Moved(size) => {
                self.objects += 1;
                self.bytes += size;
            }
            Ended::Skipped => self.skipped += 1,
            Ended::Failed => self.failed += 1,
        }
    }
}

/// Called after each object of a many-object transfer is complete and checked, with its
/// source (a key or a local path), its destination and its size.
pub type ObjectDone = Arc<dyn Fn(&str, &str, u64) + Send + Sync>;

/// Called with an object that failed (its name: `s3://bucket/key`, or `from -> to` for a copy)
/// and why, when a transfer of many goes on past it ([`ManyOptions::on_failure`]).
pub type ObjectFailed = Arc<dyn Fn(&str, &TransferError) + Send + Sync>;

/// Hands an error of one object alone ([`TransferError::Object`]) to `on_failure` when there
/// is one, so the transfer of many goes on (`Ok`); any other error, or any without
/// `on_failure`, is the transfer's.
pub(crate) fn reported(
    e: TransferError,
    on_failure: Option<&ObjectFailed>,
) -> Result<(), TransferError> {
    match (e, on_failure) {
        (TransferError::Object { name, error }, Some(report)) => {
            report(&name, &error);
            Ok(())
        }
        (e, _) => Err(e),
    }
}

/// Objects in flight when the transfer chooses, and `HeadBucket` came back within
/// [`LOCAL_ANSWER`] (the same machine or its LAN): the server, not the link, is the limit
/// there, and a few objects keep it busy (more only add contention: docs/BENCHMARKS.md, "Many
/// small objects over loopback").
pub const NEAR_OBJECTS: usize = 4;
/// Objects in flight when the transfer chooses, and `HeadBucket` took [`LOCAL_ANSWER`] or
/// more but less than 20 ms: a server a few milliseconds away, as S3 is from its own region.
/// There each object waits a round trip or more, and 4 in flight left 2,000 x 16 KiB at a
/// quarter of s5cmd's speed over a 10 ms link, where 64 were 1.5x it (docs/BENCHMARKS.md,
/// "A server 10 ms away").
pub const MID_OBJECTS: usize = 64;
/// The longest `HeadBucket` of a server counted as local: loopback and a LAN answer in well
/// under a millisecond.
pub const LOCAL_ANSWER: Duration = Duration::from_millis(2);
/// Objects in flight when the transfer chooses, over a long path: each small object costs
/// round trips, so as many as s5cmd's workers (docs/BENCHMARKS.md, "Many small objects over a
/// long link").
pub const FAR_OBJECTS: usize = 256;
/// Objects in flight for an upload of many files over a long path, when the transfer chooses.
/// An upload's request carries its body: a small object is a fresh connection's handshake, a
/// body in one or two flights and the answer, so each waits longer than a download's and more
/// in flight keep the link as busy (1,000 x 16 KiB over the 100 ms link: 1.15 s at 256, 0.87 s
/// at 512, noisy run to run but lower in 7 of 8 paired rounds; 10,000: 8.63 / 8.21 s;
/// docs/BENCHMARKS.md, "Uploads over a long path: 512 objects in flight"). Downloads stay at
/// [`FAR_OBJECTS`]: 10,000 took 9.92 s at 512, 8.26 s at 256.
pub const FAR_UPLOAD_OBJECTS: usize = 512;

/// Objects in flight for downloads from a nearby server when the objects are large
/// ([`LARGE_OBJECT`] on average): each is one long GET, not a few microseconds of the server's
/// CPU, so 4 leave the link idle between them (1,000 objects of 1 MiB on loopback: 4 in
/// flight 1.9-2.5 s, 16 1.07 s, s5cmd 1.2-1.3 s; docs/BENCHMARKS.md).
pub const NEAR_LARGE_OBJECTS: usize = 16;
/// The mean size from which a download's objects count as large.
pub const LARGE_OBJECT: u64 = 256 << 10;

/// `chosen`, or the objects in flight for how far the server is: how long one `HeadBucket` of
/// `bucket` takes (a request the server answers without work, unlike a listing page, whose
/// 1,000 keys took versitygw over 20 ms on loopback): under 2 ms, 2 to 20 ms, or more
/// (`far_away`); with many, their connections start opening (at most `count`, the objects
/// there are to move).
pub async fn objects_in_flight(
    client: &S3Client,
    bucket: &str,
    chosen: Option<usize>,
    count: usize,
) -> Result<usize, TransferError> {
    in_flight_for(client, bucket, chosen, count, FAR_OBJECTS).await
}

/// [`objects_in_flight`] for an upload of `count` files: [`FAR_UPLOAD_OBJECTS`] over a long
/// path unless they are `large` ([`LARGE_OBJECT`] on average), whose bodies keep the link busy
/// without more in flight and hold a slice of memory each (1,000 x 1 MiB over the 100 ms
/// link: 19.8 s and 206 MiB at 512, 18.2 s and 128 MiB at 256).
pub async fn upload_objects_in_flight(
    client: &S3Client,
    bucket: &str,
    chosen: Option<usize>,
    count: usize,
    large: bool,
) -> Result<usize, TransferError> {
    let far = if large {
        FAR_OBJECTS
    } else {
        FAR_UPLOAD_OBJECTS
    };
    in_flight_for(client, bucket, chosen, count, far).await
}

/// `chosen`, or the objects in flight for how far the server is, `far` over a long path.
async fn in_flight_for(
    client: &S3Client,
    bucket: &str,
    chosen: Option<usize>,
    count: usize,
    far: usize,
) -> Result<usize, TransferError> {
    let objects = match chosen {
        Some(n) => n,
        None => match far_away(client, bucket, || open_ahead(client, bucket, far, count)).await? {
            Distance::Far => far,
            near => near.objects(),
        },
    };
    open_ahead(client, bucket, objects, count);
    Ok(objects)
}

/// [`objects_in_flight`] for a copy between two services (`source` and `dest`, each a client
/// and a bucket): both paths measured side by side and the farther deciding, since each object
/// waits on both (a far source copied to a near destination needs as many objects in flight
/// as the reverse); the connections that many need start opening on both sides.
pub(crate) async fn objects_in_flight_between(
    source: (&S3Client, &str),
    dest: (&S3Client, &str),
    chosen: Option<usize>,
) -> Result<usize, TransferError> {
    let (here, there) = tokio::try_join!(
        objects_in_flight(dest.0, dest.1, chosen, usize::MAX),
        objects_in_flight(source.0, source.1, chosen, usize::MAX),
    )?;
    let objects = here.max(there);
    open_ahead(dest.0, dest.1, objects, usize::MAX);
    open_ahead(source.0, source.1, objects, usize::MAX);
    Ok(objects)
}

/// How far `bucket`'s server is. Far: one `HeadBucket` takes [`LONG_PATH`] or more. That is
/// known once it is unanswered after `LONG_PATH` and no TCP connection to the server has
/// connected within `LONG_PATH` either (on a new connection the answer is two round trips
/// away, three over TLS; the TLS handshake does not count, as it waits on the server's CPU:
/// `S3Client::quickest_connect`): `when_far` runs then, and the caller starts what a far
/// server needs (opening its objects' connections, listing in ranges). A server that connects
/// quickly but answers slowly is either busy (a loaded one on this machine: versitygw after a
/// 1 GiB upload took over 20 ms for one `HeadBucket`, and 256 objects in flight then cost 3x
/// the memory and more time) or behind a proxy with a far origin; a second `HeadBucket` on the
/// connection now warm tells them apart, and only a second slow answer makes it far.
///
/// Nor is anything judged from a window in which this process could not run: its timer then
/// fires late ([`ON_TIME`]), and a connect or an answer it timed took as long as the wait,
/// whatever the network (at the start of a copy between two servers on this machine's two
/// cores, the source busy with the first listing page, timers fired 10-37 ms late and the
/// first connect timed 30-55 ms on loopback). Such a window asks again on the connection then
/// warm, up to [`MOST_ASKS`] times (on a far network that starts a far server's connections a
/// round trip later, only when the process was held up). The first answer is always awaited:
/// a missing bucket fails here, before any work. An answer within `LONG_PATH` is
/// [`Distance::Local`] under [`LOCAL_ANSWER`], else [`Distance::Mid`].
pub(crate) async fn far_away(
    client: &S3Client,
    bucket: &str,
    when_far: impl FnOnce(),
) -> Result<Distance, TransferError> {
    let mut asks = 0;
    loop {
        asks += 1;
        // After the first ask the connection is warm: the answer's time alone judges.
        let warm = asks > 1;
        let asked = Instant::now();
        let head = client.head_bucket(bucket);
        tokio::pin!(head);
        if let Ok(answer) = tokio::time::timeout(LONG_PATH, &mut head).await {
            answer?;
            return Ok(if asked.elapsed() < LOCAL_ANSWER {
                Distance::Local
            } else {
                Distance::Mid
            });
        }
        let starved = asks < MOST_ASKS && asked.elapsed() >= LONG_PATH + ON_TIME;
        let near_network = far_network(client, bucket) == Some(false);
        if !starved && (warm || !near_network) {
            when_far();
            head.await?;
            return Ok(Distance::Far);
        }
        head.await?;
    }
}

/// How late a timer fires on a process that runs when it should (tokio's timers have a grain
/// of a millisecond). Later, something kept the process from running.
const ON_TIME: Duration = Duration::from_millis(5);

/// The most `HeadBucket`s [`far_away`] asks: the last decides even if it was not on time.
const MOST_ASKS: usize = 3;

/// How far a server is, by how long one `HeadBucket` took ([`far_away`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Distance {
    /// Under [`LOCAL_ANSWER`].
    Local,
    /// From [`LOCAL_ANSWER`] to `LONG_PATH`.
    Mid,
    /// `LONG_PATH` or more, twice if the network itself is near.
    Far,
}

impl Distance {
    /// Objects in flight at this distance when the caller does not choose.
    pub(crate) fn objects(self) -> usize {
        match self {
            Distance::Local => NEAR_OBJECTS,
            Distance::Mid => MID_OBJECTS,
            Distance::Far => FAR_OBJECTS,
        }
    }
}

/// Starts opening the connections `objects` in flight will use (up to `count`), when they are
/// more than a nearby server's few.
pub(crate) fn open_ahead(client: &S3Client, bucket: &str, objects: usize, count: usize) {
    if objects > NEAR_OBJECTS {
        client.preconnect(bucket, objects.min(count).saturating_sub(1));
    }
}

/// `opts` with a shared budget of parts in flight (twice one object's `concurrency`) unless it
/// has one: however many objects move, memory for multipart parts stays at
/// `2 x concurrency x part_size`; and one of as many bytes for the whole bodies a copy
/// between services holds (`shared_bodies`, in KiB), unless it has one.
pub(crate) fn with_part_budget(opts: TransferOptions) -> TransferOptions {
    let budget = opts.concurrency.max(1).saturating_mul(2);
    let kib = (budget as u64).saturating_mul(opts.part_size.max(MIN_PART_SIZE)) >> 10;
    let kib = usize::try_from(kib).unwrap_or(usize::MAX);
    let kib = kib.min(tokio::sync::Semaphore::MAX_PERMITS);
    TransferOptions {
        shared_parts: opts
            .shared_parts
            .clone()
            .or_else(|| Some(Arc::new(tokio::sync::Semaphore::new(budget)))),
        shared_bodies: opts
            .shared_bodies
            .clone()
            .or_else(|| Some(Arc::new(tokio::sync::Semaphore::new(kib)))),
        ..opts
    }
}

/// Which objects a many-object transfer takes and how many move at once.
#[derive(Clone)]
pub struct ManyOptions {
    /// Objects in flight at once; `None`: chosen by the first answer's latency
    /// ([`NEAR_OBJECTS`] or [`FAR_OBJECTS`]).
    pub objects: Option<usize>,
    /// Names (relative to the source) to take or leave.
    pub filters: Filters,
    /// Called as each object completes.
    pub on_object: Option<ObjectDone>,
    /// Which destinations that exist to leave alone (s5cmd's `--no-clobber`,
    /// `--if-size-differ`, `--if-source-newer`: a file's `stat`, or one `HeadObject` each, only
    /// when one is set); `on_object` is not called for them.
    pub overwrite: Overwrite,
    /// What an upload of a directory does with symbolic links in it (default: follows them).
    pub links: Links,
    /// Go on past an object that fails on its own (S3 refused it, its data was bad: a
    /// [`TransferError::Object`]), handing its error to this, as the AWS CLI and s5cmd carry
    /// on and report each; the others still move and [`Many::failed`] counts it. `None`: the
    /// first error ends the transfer. An error not of one object (a stall, the listing, the
    /// local disk) ends it either way.
    pub on_failure: Option<ObjectFailed>,
    /// A download of a prefix: what to do about an object whose local name differs only by
    /// case from another's (the AWS CLI's `--case-conflict`; see `case_conflict.rs`), told to
    /// `on_case_conflict` under `Warn` and `Skip`.
    pub case_conflict: crate::CaseConflict,
    /// See `case_conflict`.
    pub on_case_conflict: Option<crate::CaseConflictSeen>,
    /// Every object under its last name alone, in one directory or prefix (s5cmd's
    /// `--flatten`; see `flat_names.rs`).
    pub flatten: bool,
}

impl std::fmt::Debug for ManyOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManyOptions")
            .field("objects", &self.objects)
            .field("filters", &self.filters)
            .field("overwrite", &self.overwrite)
            .field("links", &self.links)
            .field("flatten", &self.flatten)
            .finish_non_exhaustive()
    }
}

impl ManyOptions {
    /// `objects` at a time (`None`: chosen by the path), every name, nobody called.
    pub fn new(objects: Option<usize>) -> Self {
        Self {
            objects,
            filters: Filters::new(),
            on_object: None,
            overwrite: Overwrite::default(),
            links: Links::Follow,
            on_failure: None,
            case_conflict: crate::CaseConflict::Ignore,
            on_case_conflict: None,
            flatten: false,
        }
    }

    /// The name an object or file goes under, given its name relative to the source: that
    /// name, or with `flatten` its last segment.
    pub fn destination_name<'k>(&self, relative: &'k str) -> &'k str {
        match self.flatten {
            true => last_name(relative),
            false => relative,
        }
    }

    /// The names a flattened copy gives out (`None` when it keeps the structure).
    pub(crate) fn flat_names(&self) -> Option<Arc<FlatNames>> {
        self.flatten.then(Default::default)
    }

    /// Whether a listed object's copy from `from` (`s3://bucket/key`) to `to` on the server
    /// `client` reaches is left undone: its flattened name already taken by another source
    /// (an error naming both), or a destination that exists and `overwrite` keeps. The
    /// listing's time is read, and the destination headed, only when a condition asks.
    pub(crate) async fn leaves_copy(
        &self,
        flat: Option<&FlatNames>,
        (from, size, modified): (&str, u64, &str),
        (client, to): (&S3Client, (&str, &str)),
        made_key: Option<&CustomerKey>,
    ) -> Result<bool, TransferError> {
        let destination = || format!("s3://{}/{}", to.0, to.1);
        if let Some(flat) = flat {
            flat.claim(&destination(), from)?;
        }
        if !self.overwrite.asks() {
            return Ok(false);
        }
        let listed = Stat::listed(size, modified);
        let kept = self.overwrite.keeps_object(listed, client, to, made_key);
        kept.await
            .map_err(|e| e.of_object(|| format!("{from} -> {}", destination())))
    }

    /// How one object's work ended: an error of that object alone goes to `on_failure` when
    /// there is one (see [`ManyOptions::on_failure`]); any other ends the transfer.
    pub(crate) fn ended(
        &self,
        result: Result<Option<u64>, TransferError>,
    ) -> Result<Ended, TransferError> {
        match result {
            Ok(Some(size)) => Ok(Ended::Moved(size)),
            Ok(None) => Ok(Ended::Skipped),
            Err(e) => reported(e, self.on_failure.as_ref()).map(|()| Ended::Failed),
        }
    }

    pub(crate) fn report(&self, source: &str, destination: &str, size: u64) {
        if let Some(f) = &self.on_object {
            f(source, destination, size);
        }
    }
}

/// Where `key` (below `prefix`) goes under `dir`; an error for keys that would leave `dir` or
/// map ambiguously (`..`, `.`, empty segments), rather than writing somewhere unexpected.
pub(crate) fn local_path(dir: &Path, prefix: &str, key: &str) -> Result<PathBuf, TransferError> {
    let rest = key.strip_prefix(prefix).unwrap_or(key);
    let mut path = dir.to_path_buf();
    for segment in rest.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(TransferError::Invalid(format!(
                "the key {key:?} cannot be a file name below {}: it has an empty, . or .. segment",
                dir.display()
            )));
        }
        path.push(segment);
    }
    Ok(path)
}

/// Downloads every object `selection` and the filters take into `dir` (sub-directories for
/// `/`, names relative to the selection's base), `many.objects` at a time. "Directory" markers
/// (keys ending in `/`) are skipped. The whole listing comes first, so every name is checked
/// before a byte moves. Stops at the first error (unless `many.on_failure` takes the errors of
/// single objects); files already complete stay, none is left
/// half-written.
pub async fn download_prefix(
    client: Arc<S3Client>,
    bucket: &str,
    selection: Selection,
    dir: &Path,
    many: &ManyOptions,
    opts: TransferOptions,
) -> Result<Many, TransferError> {
    let prefix = selection.base().to_owned();
    let mut pages = crate::spread::list_spread(
        Arc::clone(&client),
        bucket,
        selection,
        many.filters.clone(),
        4,
        crate::spread::Spread::WhenFar,
    );
    // HeadBucket goes beside the listing, not after it: far away a listing of 1,000 keys
    // takes several round trips (its 300 KB in a new connection's slow start). The objects'
    // connections open once the listing is in: opened during it (the listing keeping its own
    // connection), they gained nothing measurable (docs/BENCHMARKS.md).
    let near_or_chosen = async {
        match many.objects {
            Some(n) => Ok::<_, TransferError>(Some(n)),
            None => Ok(match far_away(&client, bucket, || {}).await? {
                Distance::Local => None,
                far => Some(far.objects()),
            }),
        }
    };
    let all_pages = async {
        let mut listed = Vec::new();
        while let Some(page) = pages.recv().await {
            listed.extend(page?);
        }
        Ok::<_, TransferError>(listed)
    };
    let (objects, listed) = tokio::join!(near_or_chosen, all_pages);
    let (objects, listed) = (objects?, listed?);
    let bytes: u64 = listed.iter().map(|o| o.size).sum();
    let large = bytes / (listed.len().max(1) as u64) >= LARGE_OBJECT;
    let objects = match objects {
        Some(n) => n,
        None if large => NEAR_LARGE_OBJECTS,
        None => NEAR_OBJECTS,
    };
    open_ahead(&client, bucket, objects, listed.len());
    let opts = with_part_budget(opts);
    // Check every name before moving a byte: none may leave the directory, and (when asked)
    // none may differ only by case from another's.
    let claims =
        crate::case_conflict::Claims::new(many.case_conflict, many.on_case_conflict.clone());
    let mut jobs: Vec<(String, PathBuf, Listed)> = Vec::with_capacity(listed.len());
    // Flattened names taken twice: the later object refused (reported now, counted at the end).
    let (flat, mut refused) = (many.flat_names(), Vec::new());
    for o in &listed {
        let path = match &flat {
            Some(_) => {
                let relative = o.key.strip_prefix(prefix.as_str()).unwrap_or(&o.key);
                local_path(dir, "", last_name(relative))?
            }
            None => local_path(dir, &prefix, &o.key)?,
        };
        if let Some(flat) = &flat {
            let (to, from) = (
                path.display().to_string(),
                format!("s3://{bucket}/{}", o.key),
            );
            if let Err(e) = flat.claim(&to, &from) {
                refused.push(many.ended(Err(e))?);
                continue;
            }
        }
        if claims.admit(|| format!("s3://{bucket}/{}", o.key), &path)? {
            let modified = parse_timestamp(&o.last_modified);
            let about = Listed {
                size: o.size,
                modified,
            };
            jobs.push((o.key.clone(), path, about));
        }
    }
    if let Some(p) = &opts.progress {
        p.fix_total(jobs.iter().map(|(_, _, listed)| listed.size).sum());
    }
    let (bucket, jobs) = (bucket.to_owned(), Arc::new(jobs));
    let each = many.clone();
    let sizes = for_each_part(jobs.len(), objects, move |i| {
        let (client, bucket, jobs, opts, each) = (
            Arc::clone(&client),
            bucket.clone(),
            Arc::clone(&jobs),
            opts.clone(),
            each.clone(),
        );
        async move {
            let (key, path, listed) = &jobs[i];
            let moved = async {
                let source = Stat {
                    size: listed.size,
                    modified: listed.modified,
                };
                if each.overwrite.keeps_file(source, path).await? {
                    return Ok(None);
                }
                if let Some(parent) = path.parent() {
                    tokio::fs::create_dir_all(parent)
                        .await
                        .map_err(at(parent))?;
                }
                // The key cloned (when there is one), not the options: they move into the call.
                let read = opts.source_customer_key.clone();
                let object = ObjectKey::from(key).with_customer_key(read.as_ref());
                let size = download_listed(client, &bucket, object, path, Some(*listed), opts)
                    .await
                    .map_err(|e| e.of_object(|| format!("s3://{bucket}/{key}")))?
                    .size;
                each.report(key, &path.display().to_string(), size);
                Ok(Some(size))
            };
            each.ended(moved.await)
        }
    })
    .await?;
    Ok(Many::of(&[sizes, refused].concat()))
}

/// Uploads every regular file below `dir` that the filters take (on its path relative to
/// `dir`, `/`-separated) to `prefix` + that path, `many.objects` at a time.
pub async fn upload_directory(
    client: Arc<S3Client>,
    dir: &Path,
    bucket: &str,
    prefix: &str,
    many: &ManyOptions,
    opts: TransferOptions,
) -> Result<Many, TransferError> {
    let Walked {
        mut files,
        not_files,
    } = walk_files(dir, &many.filters, many.links)?;
    // Flattened names taken twice: the later file refused (reported now, counted at the end).
    let mut refused = Vec::new();
    if let Some(flat) = many.flat_names() {
        let mut kept = Vec::with_capacity(files.len());
        for (path, name) in files {
            let to = format!("s3://{bucket}/{prefix}{}", last_name(&name));
            match flat.claim(&to, &path.display().to_string()) {
                Ok(()) => kept.push((path, name)),
                Err(e) => refused.push(many.ended(Err(e))?),
            }
        }
        files = kept;
    }
    let mut bytes = 0;
    for (path, _) in &files {
        bytes += std::fs::metadata(path).map_err(at(path))?.len();
    }
    let large = bytes / (files.len().max(1) as u64) >= LARGE_OBJECT;
    // A missing bucket fails here, before any file is read.
    let objects =
        upload_objects_in_flight(&client, bucket, many.objects, files.len(), large).await?;
    let opts = with_part_budget(opts);
    if let Some(p) = &opts.progress {
        p.fix_total(bytes);
    }
    let (bucket, prefix, files) = (bucket.to_owned(), prefix.to_owned(), Arc::new(files));
    let each = many.clone();
    let sizes = for_each_part(files.len(), objects, move |i| {
        let (client, bucket, files, opts, each) = (
            Arc::clone(&client),
            bucket.clone(),
            Arc::clone(&files),
            opts.clone(),
            each.clone(),
        );
        let key = format!("{prefix}{}", each.destination_name(&files[i].1));
        async move {
            let path = &files[i].0;
            let moved = async {
                let named = || format!("s3://{bucket}/{key}");
                let made_key = opts.headers.customer_key.as_ref();
                // The file is looked at only when a condition needs it.
                let source = match each.overwrite.asks() {
                    true => Stat::of_file(path).await?.unwrap_or(Stat::UNKNOWN),
                    false => Stat::UNKNOWN,
                };
                let to = (bucket.as_str(), key.as_str());
                let kept = each
                    .overwrite
                    .keeps_object(source, &client, to, made_key)
                    .await;
                if kept.map_err(|e| e.of_object(named))? {
                    return Ok(None);
                }
                let size = upload_file(client, path, &bucket, &key, opts)
                    .await
                    .map_err(|e| e.of_object(named))?
                    .size;
                each.report(&path.display().to_string(), &key, size);
                Ok(Some(size))
            };
            each.ended(moved.await)
        }
    })
    .await?;
    Ok(Many {
        not_files,
        ..Many::of(&[sizes, refused].concat())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_of_many_objects_share_one_budget() {
        let opts = with_part_budget(TransferOptions {
            concurrency: 16,
            ..TransferOptions::default()
        });
        let budget = opts.shared_parts.clone().expect("a budget");
        assert_eq!(budget.available_permits(), 32);
        // Whole bodies (copies between services) get as many bytes, in KiB: 32 x 8 MiB.
        let bodies = opts.shared_bodies.clone().expect("a budget of bodies");
        assert_eq!(bodies.available_permits(), 32 * 8 * 1024);
        // Every object's copy of the options holds the same budgets, and ones already set stay.
        let again = with_part_budget(opts.clone());
        assert!(Arc::ptr_eq(
            &budget,
            again.shared_parts.as_ref().expect("kept")
        ));
        assert!(Arc::ptr_eq(
            &bodies,
            again.shared_bodies.as_ref().expect("kept")
        ));
    }

    #[test]
    fn keys_map_below_the_directory_or_are_refused() {
        let d = Path::new("/tmp/x");
        assert_eq!(
            local_path(d, "p/", "p/a/b.txt").unwrap(),
            Path::new("/tmp/x/a/b.txt")
        );
        assert_eq!(local_path(d, "", "ü b").unwrap(), Path::new("/tmp/x/ü b"));
        for bad in ["p/../etc/passwd", "p/a//b", "p/./a", "p/a/.."] {
            assert!(local_path(d, "p/", bad).is_err(), "{bad}");
        }
    }
}
