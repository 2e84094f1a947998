//! `sync`: a directory to a prefix, a prefix to a directory, or a prefix to a prefix on the
//! server, moving what is missing or differs (the AWS CLI's rules: see
//! `slipstream_transfer::differs`) and with --delete removing what the source lacks.

use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use slipstream_client::S3Client;
use slipstream_s3::pattern::Filters;
use slipstream_transfer::{sync, Compare, Links, Place, Progress, SyncOptions, Synced};

use crate::actions::{failures, left_out, Printer};
use crate::args::{Headers, Tuning};
use crate::flags::{Connection, Transport};
use crate::location::Location;
use crate::objects::{failed, interruptible, runtime, s3, transfer_client};
use crate::progress::Bar;
use crate::Failure;

pub const SYNC_EXAMPLES: &str = "\
Examples:
  slipstream sync ./site s3://my-bucket/site/
  slipstream sync s3://my-bucket/data/ ./data --delete
  slipstream sync s3://my-bucket/2026/ s3://backup/2026/          (on the server)
  slipstream sync ./photos s3://my-bucket/photos/ --exclude '*' --include '*.jpg' --dryrun
  slipstream sync 's3://my-bucket/logs/2026-*/*.gz' ./logs/ --delete   (a wildcard source)
  slipstream sync s3://src/data/ s3://dst/data/ --source-endpoint-url https://other.example

A file or object moves when the destination lacks it or its size differs; with equal sizes,
uploads and copies move a source newer than the destination, downloads a local file newer
than the object (a download sets the file's time to the object's), as the AWS CLI decides.
--size-only compares sizes alone; --exact-timestamps makes downloads move any time
difference. --delete removes destination entries the source lacks (not those the filters
leave out). A wildcard source takes the objects it matches (`*` crosses `/`), named relative
to its literal part up to the last `/`, and bounds both sides as a filter does: --delete
removes only destination names it matches. With --source-endpoint-url, --source-profile or --source-region the source
prefix is another service or account: it is listed and read with its own client and the
bytes stream through this machine. Both sides are listed in key order and merged as the
pages arrive, so the first copy starts before the listings end. Exit codes: 0 in sync, 1 something failed (objects S3
refused to delete are printed), 2 flags or configuration.";

/// `slipstream sync`.
#[derive(Args, Debug)]
pub struct SyncArgs {
    /// A directory, s3://bucket/prefix, or a wildcard (`s3://b/logs/*.gz`, a quoted local
    /// `'logs/*.csv'`: what it matches, names relative to its literal part up to the last
    /// `/`).
    #[arg(value_parser = Location::parser())]
    pub source: Location,
    /// A directory (made if missing) or s3://bucket/prefix.
    #[arg(value_parser = Location::parser())]
    pub destination: Location,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
    #[command(flatten)]
    pub tuning: Tuning,
    #[command(flatten)]
    pub headers: Headers,
    #[command(flatten)]
    pub source_service: crate::args::SourceService,
    #[command(flatten)]
    pub filters: crate::args::Filters,
    /// Delete destination files or objects the source does not have.
    #[arg(long)]
    pub delete: bool,
    /// Take the paths literally: `*`, `?` and `[` are characters of the keys and file names,
    /// not wildcards.
    #[arg(long)]
    pub raw: bool,
    /// Compare sizes only, never times.
    #[arg(long, conflicts_with = "exact_timestamps")]
    pub size_only: bool,
    /// From S3 to a directory: move same-sized objects whose times differ at all (by default
    /// only a local file newer than the object is replaced).
    #[arg(long)]
    pub exact_timestamps: bool,
    /// Print what would be copied or deleted, and change nothing (also --dry-run, s5cmd's
    /// spelling).
    #[arg(long, visible_alias = "dry-run")]
    pub dryrun: bool,
    /// Leave a directory's symbolic links out (by default they are followed, as the AWS CLI's
    /// sync follows them).
    #[arg(long, overrides_with = "follow_symlinks")]
    pub no_follow_symlinks: bool,
    /// Follow symbolic links (the default; the last of the two flags wins, as in the AWS CLI).
    #[arg(long, overrides_with = "no_follow_symlinks")]
    pub follow_symlinks: bool,
    /// Downloads whose file names differ only by case, which a case-insensitive file system
    /// (macOS's, Windows') writes to one file: ignore (the default, as the AWS CLI's), warn,
    /// skip the later, or error.
    #[arg(long, value_enum, default_value = "ignore", value_name = "WHAT")]
    pub case_conflict: crate::args::CaseConflictArg,
    /// One JSON object per line instead of the AWS CLI's lines.
    #[arg(long)]
    pub json: bool,
    /// Draw no progress bar, and still print a line per action (the AWS CLI's --no-progress;
    /// no bar is drawn where standard error is not a terminal either).
    #[arg(long)]
    pub no_progress: bool,
    /// Print nothing but errors (also --only-show-errors, the AWS CLI's name for it).
    #[arg(long, short, visible_alias = "only-show-errors")]
    pub quiet: bool,
}

/// `slipstream sync`.
pub fn run(a: &SyncArgs, filters: Filters) -> Result<(), Failure> {
    let sides = sides(a, filters)?;
    let (client, profile) = transfer_client(&a.connection, &a.transport)?;
    let tuning = a.tuning.with_profile(&profile);
    let (progress, bar) = Bar::start(!a.quiet && !a.json && !a.dryrun && !a.no_progress, &client);
    let source = crate::copying::source_client(&a.source_service, &a.connection, &a.transport)?;
    let printer = Arc::new(Printer::new(a.json, a.quiet, a.dryrun));
    runtime()?.block_on(interruptible(async {
        let synced = synced(
            a,
            client,
            sides,
            (&tuning, progress, source),
            None,
            &printer,
        );
        let done = synced.await;
        drop(bar);
        report(a, done?, &printer, a.quiet)
    }))?
}

/// The two sides of a sync and its filters (a wildcard or glob source bounds them), checked.
pub(crate) fn sides(
    a: &SyncArgs,
    mut filters: Filters,
) -> Result<(Place, Place, Filters), Failure> {
    let from = place(&a.source, a.raw, Some(&mut filters))?;
    let to = place(&a.destination, a.raw, None)?;
    if let Place::Local(dir) = &from {
        if !dir.is_dir() {
            return Err(Failure::usage(format!(
                "{} is not a directory: sync copies directories and prefixes (cp copies one file)",
                a.source
            )));
        }
    }
    if matches!((&from, &to), (Place::Local(_), Place::Local(_))) {
        return Err(Failure::usage(
            "sync needs an s3:// source or destination (or both)",
        ));
    }
    Ok((from, to, filters))
}

/// Runs a sync on `client` (the command's own, or `run`'s shared one), with the transfer
/// settings of `tuning`, a progress counter, the source's own client if any, and `run`'s
/// budget of parts in flight; each action printed by `printer` as it completes.
pub(crate) async fn synced(
    a: &SyncArgs,
    client: Arc<S3Client>,
    (from, to, filters): (Place, Place, Filters),
    (tuning, progress, source): (&Tuning, Option<Arc<Progress>>, Option<Arc<S3Client>>),
    shared_parts: Option<Arc<tokio::sync::Semaphore>>,
    printer: &Arc<Printer>,
) -> Result<Done, Failure> {
    let sides = (
        matches!(from, Place::S3 { .. }),
        matches!(to, Place::S3 { .. }),
    );
    let mut opts = tuning.transfer_options(progress, &a.headers, sides)?;
    opts.shared_parts = shared_parts;
    let p = Arc::clone(printer);
    let options = SyncOptions {
        compare: if a.size_only {
            Compare::SizeOnly
        } else if a.exact_timestamps {
            Compare::ExactTimestamps
        } else {
            Compare::SizeAndTime
        },
        delete: a.delete,
        dryrun: a.dryrun,
        objects: tuning.objects(),
        filters,
        copy: tuning.copy_settings(&a.headers),
        source,
        on_action: Some(Arc::new(move |action| {
            p.done(action.word, &action.from, action.to.as_deref());
        })),
        links: Links::follow(a.follow_symlinks || !a.no_follow_symlinks),
        on_failure: Some(printer.failures(match (&from, &to) {
            (Place::Local(_), _) => "upload",
            (_, Place::Local(_)) => "download",
            _ => "copy",
        })),
        case_conflict: a.case_conflict.into(),
        on_case_conflict: Some(crate::actions::case_conflicts()),
    };
    let started = Instant::now();
    let done = sync(client, &from, &to, &options, opts)
        .await
        .map_err(failed)?;
    Ok(Done {
        synced: done,
        to,
        started,
    })
}

/// What a sync did, to report.
pub(crate) struct Done {
    synced: Synced,
    to: Place,
    started: Instant,
}

/// Prints what S3 refused to delete and (unless `quiet`) the summary line; the exit code.
pub(crate) fn report(a: &SyncArgs, d: Done, printer: &Printer, quiet: bool) -> Result<(), Failure> {
    let done = d.synced;
    for f in &done.failed {
        let uri = format!("s3://{}/{}", bucket_of(&d.to), f.key);
        printer.failed("delete", &uri, &format!("{}: {}", f.code, f.message));
    }
    printer.finish()?;
    if !quiet {
        let seconds = d.started.elapsed().as_secs_f64();
        let would = if a.dryrun { " (dry run)" } else { "" };
        if done.moved.objects == 0 && done.deleted == 0 && done.failed.is_empty() {
            eprintln!(
                "sync: nothing to do, {} already in sync{would} ({seconds:.2} s)",
                done.unchanged
            );
        } else {
            eprintln!(
                "sync: {} copied ({} bytes), {} deleted, {} unchanged{would} in {seconds:.2} s",
                done.moved.objects, done.moved.bytes, done.deleted, done.unchanged
            );
        }
    }
    if !done.failed.is_empty() {
        return Err(Failure::input(format!(
            "{} object(s) could not be deleted (see above)",
            done.failed.len()
        )));
    }
    failures(done.moved.failed, done.moved.objects)?;
    left_out(&done.moved.not_files)
}

/// A side of the sync: `s3://bucket/prefix` (a `/` added), or a local directory; a source's
/// wildcard or glob bounds `filters` (see `Place::s3_source`, `glob_root`), an S3
/// destination's wildcard is refused.
fn place(side: &Location, raw: bool, filters: Option<&mut Filters>) -> Result<Place, Failure> {
    if side.is_s3() {
        let uri = s3(side.url()?)?;
        return Place::s3_side(&uri.bucket, &uri.key, raw, filters)
            .map_err(|e| Failure::usage(e.to_string()));
    }
    if side.is_stdio() {
        return Err(Failure::usage(
            "sync copies directories and prefixes, not standard input or output",
        ));
    }
    // A local source may be a glob (`'logs/*.csv'`), walked as s5cmd walks one.
    if let (Some(filters), false) = (filters, raw) {
        let glob = slipstream_transfer::glob_root(side.path(), filters);
        if let Some(dir) = glob.map_err(|e| Failure::usage(e.to_string()))? {
            return Ok(Place::Local(dir));
        }
    }
    Ok(Place::Local(side.path().to_path_buf()))
}

fn bucket_of(place: &Place) -> &str {
    match place {
        Place::S3 { bucket, .. } => bucket,
        Place::Local(_) => "",
    }
}
