//! `rm` and `rb`: deleting objects (one, a prefix, a wildcard's matches, in `DeleteObjects`
//! batches of 1,000 while the listing goes on) and buckets.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use clap::Args;
use slipstream_client::{ObjectKey, S3Client};
use slipstream_s3::pattern::Filters;
use slipstream_s3::S3Uri;
use slipstream_transfer::{
    delete_all, delete_listed, list_selected, list_spread, DeleteReport, Selection, Spread,
};

use crate::actions::Printer;
use crate::flags::{Connection, Transport};
use crate::objects::{client, failed, interruptible, runtime, s3};
use crate::Failure;

pub const RM_EXAMPLES: &str = "\
Examples:
  slipstream rm s3://my-bucket/old.csv
  slipstream rm --recursive s3://my-bucket/tmp/
  slipstream rm 's3://my-bucket/logs/2025-*/*.gz'            (quote wildcards from the shell)
  slipstream rm --recursive s3://my-bucket/ --exclude '*' --include '*.tmp' --dryrun
  slipstream rm --version-id 3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY s3://my-bucket/old.csv
  slipstream rm --all-versions --recursive s3://my-bucket/tmp/    (versions and markers, for good)

Objects are listed a page at a time and deleted in batches of up to 1,000 (DeleteObjects),
--batches of them in flight, while the listing goes on. Keys S3 refuses to delete inside a
successful answer are printed as failures. Exit codes: 0 every object deleted, 1 some could
not be (or a wildcard matched nothing), 2 flags or configuration.";

/// `slipstream rm`.
#[derive(Args, Debug)]
pub struct RmArgs {
    /// s3://bucket/key, s3://bucket/prefix/ with --recursive, or a wildcard (* ? [...]).
    #[arg(required = true)]
    pub targets: Vec<String>,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
    /// Every object under the prefix (the whole bucket for s3://bucket/).
    #[arg(long, short)]
    pub recursive: bool,
    #[command(flatten)]
    pub filters: crate::args::Filters,
    /// Print what would be deleted, and delete nothing (also --dry-run, s5cmd's spelling).
    #[arg(long, visible_alias = "dry-run")]
    pub dryrun: bool,
    /// Take the targets literally: `*`, `?` and `[` are characters of the key, not wildcards.
    #[arg(long)]
    pub raw: bool,
    /// Delete this version of the one object named, for good (without it, a versioned bucket
    /// keeps the object's versions behind a new delete marker).
    #[arg(long, value_name = "ID", conflicts_with = "all_versions")]
    pub version_id: Option<String>,
    /// Delete every version and delete marker of what the targets name, for good (as s5cmd's
    /// --all-versions): one key's, a prefix's with --recursive, a wildcard's matches. Empties a
    /// versioned bucket, which `rb` can then remove.
    #[arg(long)]
    pub all_versions: bool,
    /// DeleteObjects requests (of up to 1,000 keys) in flight at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub batches: u16,
    /// One JSON object per line instead of the AWS CLI's lines.
    #[arg(long)]
    pub json: bool,
    /// Print nothing but errors (also --only-show-errors, the AWS CLI's name for it).
    #[arg(long, short, visible_alias = "only-show-errors")]
    pub quiet: bool,
}

/// `slipstream rb`.
#[derive(Args, Debug)]
pub struct RbArgs {
    /// s3://bucket
    pub target: String,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
    /// Delete every object first (S3 refuses to remove a bucket that holds any).
    #[arg(long)]
    pub force: bool,
}

/// `slipstream rm`.
pub fn rm(a: &RmArgs, filters: Filters) -> Result<(), Failure> {
    checked_targets(a, &filters)?;
    let client = client(&a.connection, &a.transport)?;
    let printer = Arc::new(Printer::new(a.json, a.quiet, a.dryrun));
    let failures =
        runtime()?.block_on(interruptible(remove_targets(a, &client, filters, &printer)))??;
    printer.finish()?;
    if failures > 0 {
        return Err(Failure::input(format!(
            "{failures} object(s) could not be deleted (see above)"
        )));
    }
    Ok(())
}

/// Removes what every target names, one target after another (each in batches); returns how
/// many objects could not be deleted. Shared by `rm` and the `rm` lines of `run`.
pub(crate) async fn remove_targets(
    a: &RmArgs,
    client: &Arc<S3Client>,
    filters: Filters,
    printer: &Arc<Printer>,
) -> Result<usize, Failure> {
    let mut failures = 0;
    for target in &checked_targets(a, &filters)? {
        failures += remove(a, client, target, filters.clone(), printer).await?;
    }
    Ok(failures)
}

/// The targets, refused before anything is deleted when one would empty a bucket without
/// --recursive or the filters have nothing to apply to.
fn checked_targets(a: &RmArgs, filters: &Filters) -> Result<Vec<S3Uri>, Failure> {
    let targets = a
        .targets
        .iter()
        .map(|t| s3(t))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(t) = targets.iter().find(|t| t.key.is_empty() && !a.recursive) {
        return Err(Failure::usage(format!(
            "rm s3://{}/ would delete the whole bucket: add --recursive if that is what you mean",
            t.bucket
        )));
    }
    let wildcard = |t: &S3Uri| !a.raw && has_wildcard(t);
    if !filters.is_empty() && !a.recursive && !targets.iter().any(wildcard) {
        return Err(Failure::usage(
            "--include and --exclude apply to --recursive or wildcard targets",
        ));
    }
    if a.version_id.is_some() && (a.recursive || targets.len() != 1 || targets.iter().any(wildcard))
    {
        return Err(Failure::usage(
            "--version-id names a version of one object: one s3://bucket/key, no --recursive, no wildcard",
        ));
    }
    Ok(targets)
}

fn has_wildcard(t: &S3Uri) -> bool {
    slipstream_s3::pattern::Pattern::has_wildcard(&t.key)
}

/// Removes what one target names; returns how many objects could not be deleted.
async fn remove(
    a: &RmArgs,
    client: &Arc<S3Client>,
    target: &S3Uri,
    filters: Filters,
    printer: &Arc<Printer>,
) -> Result<usize, Failure> {
    if a.all_versions {
        return crate::versions::remove_all_versions(a, client, target, &filters, printer).await;
    }
    let name = |key: &str| format!("s3://{}/{key}", target.bucket);
    let selection = Selection::parse_as(&target.key, a.recursive, a.raw)
        .map_err(|e| Failure::usage(e.to_string()))?;
    if let Selection::Object(key) = &selection {
        let key = ObjectKey::new(key, a.version_id.as_deref());
        if !a.dryrun {
            client
                .delete_object(&target.bucket, key)
                .await
                .map_err(failed)?;
        }
        printer.done("delete", &name(&key.to_string()), None);
        return Ok(0);
    }
    let wildcard = matches!(selection, Selection::Pattern(_));
    // Deletes take the keys in any order; a dry run prints them in the listing's.
    let listed = if a.dryrun {
        list_selected(Arc::clone(client), &target.bucket, selection, filters, 4)
    } else {
        list_spread(
            Arc::clone(client),
            &target.bucket,
            selection,
            filters,
            4,
            Spread::WhenFar,
        )
    };
    let seen = Arc::new(AtomicUsize::new(0));
    let failures = if a.dryrun {
        let mut listed = listed;
        while let Some(page) = listed.recv().await {
            for o in page.map_err(failed)? {
                seen.fetch_add(1, Ordering::Relaxed);
                printer.done("delete", &name(&o.key), None);
            }
        }
        0
    } else {
        let (p, s, bucket) = (
            Arc::clone(printer),
            Arc::clone(&seen),
            target.bucket.clone(),
        );
        let report: DeleteReport = Arc::new(move |r| {
            s.fetch_add(1, Ordering::Relaxed);
            match r {
                Ok(key) => p.done("delete", &format!("s3://{bucket}/{key}"), None),
                Err(e) => p.failed(
                    "delete",
                    &format!("s3://{bucket}/{}", e.key),
                    &format!("{}: {}", e.code, e.message),
                ),
            }
        });
        let done = delete_listed(
            Arc::clone(client),
            &target.bucket,
            listed,
            usize::from(a.batches),
            report,
        )
        .await
        .map_err(failed)?;
        done.failed.len()
    };
    if wildcard && seen.load(Ordering::Relaxed) == 0 {
        return Err(Failure::input(format!(
            "no object matches s3://{}/{}",
            target.bucket, target.key
        )));
    }
    Ok(failures)
}

/// `slipstream rb`.
pub fn rb(a: &RbArgs) -> Result<(), Failure> {
    let target = s3(&a.target)?;
    if !target.key.is_empty() {
        return Err(Failure::usage("rb takes s3://bucket, without a key"));
    }
    let client = client(&a.connection, &a.transport)?;
    let printer = Arc::new(Printer::new(false, false, false));
    runtime()?.block_on(interruptible(async {
        if a.force {
            let (p, bucket) = (Arc::clone(&printer), target.bucket.clone());
            let report: DeleteReport = Arc::new(move |r| match r {
                Ok(key) => p.done("delete", &format!("s3://{bucket}/{key}"), None),
                Err(e) => p.failed("delete", &format!("s3://{bucket}/{}", e.key), &e.message),
            });
            let done = delete_all(Arc::clone(&client), &target.bucket, report)
                .await
                .map_err(failed)?;
            if !done.failed.is_empty() {
                return Err(Failure::input(format!(
                    "{} object(s) could not be deleted, so s3://{} stays",
                    done.failed.len(),
                    target.bucket
                )));
            }
        }
        client
            .delete_bucket(&target.bucket)
            .await
            .map_err(|e| match (e.code(), a.force) {
                // After --force, what is left is older versions and delete markers.
                (Some("BucketNotEmpty"), true) => Failure::input(format!(
                    "s3://{} still holds versions or delete markers (it is or was versioned): \
                     `rm --all-versions --recursive s3://{}/` removes them all for good",
                    target.bucket, target.bucket
                )),
                (Some("BucketNotEmpty"), false) => Failure::input(format!(
                    "s3://{} is not empty: delete its objects first, or use rb --force",
                    target.bucket
                )),
                _ => failed(e),
            })?;
        // The AWS CLI names the bucket bare here, as it does after make_bucket.
        printer.done("remove_bucket", &target.bucket, None);
        Ok(())
    }))??;
    printer.finish()
}
