//! `cp` and `mv` of one object (a file, standard input or output, or an object copied on the
//! server or, between two services, through this machine), their summary line, and where the
//! many-object forms go (`copy_many.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use slipstream_client::{ChecksumAlgorithm, ObjectKey, S3Client};
use slipstream_s3::pattern::{Filters, Pattern};
use slipstream_s3::S3Uri;
use slipstream_transfer::{
    copy_object, copy_through, download_to_file, download_to_writer, glob_root, upload_file,
    upload_from_reader, CopySource, MetadataDirective, Stat, TransferError, TransferOptions,
    MAX_PARTS,
};

use crate::actions::{failures, left_out, Printer};
use crate::args::CpArgs;
use crate::copy_many::cp_many;
use crate::location::Location;
use crate::made_dirs::MadeDirs;
use crate::objects::{client_for, failed, interruptible, object, runtime, s3, transfer_client};
use crate::progress::Bar;
use crate::Failure;

/// `slipstream cp`.
pub fn cp(a: &CpArgs, filters: Filters) -> Result<(), Failure> {
    transfer(a, filters, false)
}

/// `slipstream mv`: `cp`, then each source deleted once its copy is complete and checked.
pub fn mv(a: &CpArgs, filters: Filters) -> Result<(), Failure> {
    transfer(a, filters, true)
}

/// What `cp` and `mv` were asked, read once.
pub(crate) struct Plan<'a> {
    pub(crate) a: &'a CpArgs,
    pub(crate) filters: Filters,
    pub(crate) moving: bool,
    /// The source reads as many objects: --recursive, or a wildcard in an s3:// source.
    pub(crate) many: bool,
    pub(crate) printer: Arc<Printer>,
}

impl Plan<'_> {
    /// One object's transfer failed: an error of S3's names both ends, as the AWS CLI's
    /// `download failed: s3://b/k to dir/k: ...` does, since S3's message ("The specified key
    /// does not exist") does not say which object, and a `run` file or script has many. A
    /// file's error names its file already.
    fn failed<'a>(
        &self,
        what: &'a str,
        from: &'a dyn std::fmt::Display,
        to: &'a dyn std::fmt::Display,
    ) -> impl FnOnce(TransferError) -> Failure + 'a {
        let what = if self.moving { "move" } else { what };
        move |e| match e.lacks_object_name() {
            true => failed(format!("{what} failed: {from} to {to}: {e}")),
            false => failed(e),
        }
    }
}

/// Whether the source reads as many objects (--recursive, or a wildcard in an s3:// source),
/// with the flags that need one or the other checked: filters without many objects are
/// refused, and so is `--version-id` but on one s3:// object and for `cp` (`mv` would delete
/// that version for good: copy it, then `rm --version-id`).
pub(crate) fn reads_many(a: &CpArgs, filters: &Filters, moving: bool) -> Result<bool, Failure> {
    let many = a.recursive || by_pattern(a)?;
    if !filters.is_empty() && !many {
        return Err(Failure::usage(
            "--include and --exclude apply to --recursive or wildcard sources",
        ));
    }
    match (&a.version_id, moving) {
        (None, _) => {}
        (Some(_), true) => {
            return Err(Failure::usage(
                "mv takes no --version-id: it would delete that version for good; cp it, then rm --version-id",
            ))
        }
        (Some(_), false) if !a.source.is_s3() || many => {
            return Err(Failure::usage(
                "--version-id names a version of one s3:// source object (no --recursive, no wildcard)",
            ))
        }
        (Some(_), false) => {}
    }
    Ok(many)
}

/// The one s3:// source object `cp` names, at `--version-id` when given.
/// with its SSE-C key (the copy source's when the destination is S3 too).
fn source_key<'a>(a: &'a CpArgs, src: &'a S3Uri) -> ObjectKey<'a> {
    ObjectKey::new(&src.key, a.version_id.as_deref())
        .with_customer_key(a.headers.reading_key(a.destination.is_s3()))
}

/// Whether the s3:// source has a wildcard that is one (not taken literally under --raw).
pub(crate) fn has_wildcard(a: &CpArgs) -> bool {
    !a.raw && a.source.is_s3() && a.source.url().is_ok_and(Pattern::has_wildcard)
}

/// Whether the source names its objects or files by a pattern: an S3 wildcard or a local glob.
fn by_pattern(a: &CpArgs) -> Result<bool, Failure> {
    Ok(has_wildcard(a) || local_glob(a, &mut Filters::new())?.is_some())
}

/// The directory to walk when the local source is a glob (`'logs/*.csv'`, s5cmd's; not under
/// --raw), its pattern added to `filters`; see `slipstream_transfer::glob_root`.
pub(crate) fn local_glob(a: &CpArgs, filters: &mut Filters) -> Result<Option<PathBuf>, Failure> {
    if a.raw || a.source.is_s3() || a.source.is_stdio() {
        return Ok(None);
    }
    glob_root(a.source.path(), filters).map_err(|e| Failure::usage(e.to_string()))
}

fn transfer(a: &CpArgs, filters: Filters, moving: bool) -> Result<(), Failure> {
    let many = reads_many(a, &filters, moving)?;
    let (client, profile) = transfer_client(&a.connection, &a.transport)?;
    let a = &CpArgs {
        tuning: a.tuning.with_profile(&profile),
        ..a.clone()
    };
    let (progress, bar) = Bar::start(!a.quiet && !a.json && !a.dryrun && !a.no_progress, &client);
    let sides = (a.source.is_s3(), a.destination.is_s3());
    let opts = a.tuning.transfer_options(progress, &a.headers, sides)?;
    let plan = Plan {
        a,
        filters,
        moving,
        many,
        // Per-object lines for many objects (the summary says the rest), as the AWS CLI prints.
        printer: Arc::new(Printer::new(false, a.quiet || a.json || !many, a.dryrun)),
    };
    let rt = runtime()?;
    let started = Instant::now();
    let moved = rt.block_on(interruptible(copy(&plan, client, opts)))??;
    let what = moved.action(moving);
    let to = moved.destination(&a.destination);
    let Moved {
        bytes,
        parts,
        objects,
        checksum,
        skipped,
        failed,
        not_files,
        ..
    } = moved;
    drop(bar);
    plan.printer.finish()?;
    if a.dryrun {
        return left_out(&not_files);
    }
    let seconds = started.elapsed().as_secs_f64();
    let mb_per_s = bytes as f64 / 1e6 / seconds.max(1e-9);
    if a.json {
        // With data on standard output, the summary goes to standard error.
        let line = format!(
            "{{\"operation\":\"{what}\",\"bytes\":{bytes},\"seconds\":{seconds:.3},\"mb_per_s\":{mb_per_s:.1},\"parts\":{},\"objects\":{},\"skipped\":{skipped},\"checksum\":{}}}",
            parts.unwrap_or(0),
            objects.unwrap_or(1),
            checksum.map_or("null".into(), |c| format!("\"{c}\""))
        );
        if a.destination.is_stdio() {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    } else if a.source.is_stdio() || a.destination.is_stdio() {
        // Data through a pipe: nothing else printed, as the AWS CLI prints nothing there.
    } else if !a.quiet && what == "skip" {
        let why = kept_because(&a.overwrite());
        eprintln!("skip: {} -> {to}: {why}", a.source);
    } else if !a.quiet {
        let kept = match skipped {
            0 => String::new(),
            n => format!("; {n} skipped: {}", kept_because(&a.overwrite())),
        };
        eprintln!(
            "{what}: {} -> {to} ({bytes} bytes in {seconds:.2} s, {mb_per_s:.1} MB/s{kept})",
            a.source
        );
    }
    failures(failed, objects.unwrap_or(0))?;
    left_out(&not_files)
}

/// Why a copy left a destination alone, in the words of the flag that did.
fn kept_because(o: &slipstream_transfer::Overwrite) -> &'static str {
    match (o.if_size_differ, o.if_source_newer) {
        (true, true) => {
            "the destination has the same size and is as new (--if-size-differ --if-source-newer)"
        }
        (true, false) => "the destination has the same size (--if-size-differ)",
        (false, true) => "the destination is as new (--if-source-newer)",
        (false, false) => "the destination exists (--no-clobber)",
    }
}

/// What one `cp` moved, for its summary line.
pub(crate) struct Moved {
    what: &'static str,
    bytes: u64,
    parts: Option<usize>,
    objects: Option<usize>,
    /// What checked the data: the object's whole checksum on a download (none if it has
    /// none), the algorithm S3 checked every part with on an upload.
    checksum: Option<ChecksumAlgorithm>,
    /// Objects --no-clobber, --if-size-differ or --if-source-newer left alone.
    skipped: usize,
    /// Objects that failed while the others moved (each named as it failed).
    failed: usize,
    /// Entries of an uploaded directory that are not files, left out.
    not_files: Vec<PathBuf>,
    /// One object's destination as resolved (`s3://b/` and `dir/` given, `s3://b/f.txt` and
    /// `dir/f.txt` written), for the line saying where it went, as the AWS CLI prints it.
    to: Option<String>,
}

impl Moved {
    /// Nothing moved: --no-clobber (or a condition) left the destination.
    fn skip(to: String) -> Self {
        Self {
            what: "skip",
            bytes: 0,
            parts: None,
            objects: Some(0),
            checksum: None,
            skipped: 1,
            failed: 0,
            not_files: Vec::new(),
            to: Some(to),
        }
    }
}

impl Moved {
    /// The word for what happened, as the AWS CLI prints it.
    pub(crate) fn action(&self, moving: bool) -> &'static str {
        match (moving, self.what) {
            (true, "download" | "upload" | "copy") => "move",
            (_, w) => w,
        }
    }

    /// Exit 1 if objects failed while the others moved.
    pub(crate) fn failures(&self) -> Result<(), Failure> {
        failures(self.failed, self.objects.unwrap_or(0))
    }

    /// Entries of an uploaded directory that were left out: not files.
    pub(crate) fn not_files(&self) -> &[PathBuf] {
        &self.not_files
    }

    /// Where one object went, or the destination as `given` for many.
    pub(crate) fn destination(&self, given: &Location) -> String {
        self.to.clone().unwrap_or_else(|| given.to_string())
    }
}

/// The transfer `cp` asked for, chosen by which side is `s3://` (or `-`).
pub(crate) async fn copy(
    plan: &Plan<'_>,
    client: Arc<S3Client>,
    opts: TransferOptions,
) -> Result<Moved, Failure> {
    let a = plan.a;
    let (src_s3, dst_s3) = (a.source.is_s3(), a.destination.is_s3());
    let sent = Some(opts.checksum);
    let moved = |what, bytes, parts, checksum, to: Option<&dyn std::fmt::Display>| Moved {
        what,
        bytes,
        parts,
        objects: None,
        checksum,
        skipped: 0,
        failed: 0,
        not_files: Vec::new(),
        to: to.map(|t| t.to_string()),
    };
    let stdio = a.source.is_stdio() || a.destination.is_stdio();
    if plan.moving && stdio {
        return Err(Failure::usage(
            "mv moves files and objects, not standard input or output",
        ));
    }
    if a.overwrite().compares() && stdio {
        return Err(Failure::usage(
            "--if-size-differ and --if-source-newer compare files and objects, not standard input or output",
        ));
    }
    if plan.many {
        let (what, many) = cp_many(plan, src_s3, dst_s3, client, opts).await?;
        // As s5cmd (and `rm` here): a wildcard that matches nothing is an error, so a script
        // that expected files does not go on as if it had them; an empty --recursive prefix
        // is not (the AWS CLI copies nothing and exits 0).
        if by_pattern(a)? && many.objects + many.skipped + many.failed == 0 {
            let what = if src_s3 { "object" } else { "file" };
            return Err(Failure::input(format!("no {what} matches {}", a.source)));
        }
        return Ok(Moved {
            objects: Some(many.objects),
            skipped: many.skipped,
            failed: many.failed,
            not_files: many.not_files,
            ..moved(what, many.bytes, None, None, None)
        });
    }
    // --dryrun: the line the copy would print, with the word and the destination it resolves.
    let dry = |what, to: &dyn std::fmt::Display| {
        let action = if plan.moving { "move" } else { what };
        let from = a.source.to_string();
        Printer::new(false, false, true).done(action, &from, Some(&to.to_string()));
        moved(what, 0, None, None, None)
    };
    Ok(match (src_s3, dst_s3) {
        (true, false) if a.destination.is_stdio() => {
            let src = object(a.source.url()?)?;
            if a.dryrun {
                return Ok(dry("download", &"-"));
            }
            let mut stdout = tokio::io::stdout();
            let key = source_key(a, &src);
            let done = download_to_writer(client, &src.bucket, key, &mut stdout, opts)
                .await
                .map_err(plan.failed("download", &src, &"-"))?;
            moved("download", done.size, None, done.checksum_verified, None)
        }
        (false, true) if a.source.is_stdio() => {
            let dst = object(a.destination.url()?)?;
            if a.dryrun {
                return Ok(dry("upload", &dst));
            }
            if kept_object(plan, &client, Stat::UNKNOWN, &dst).await? {
                return Ok(Moved::skip(dst.to_string()));
            }
            let mut stdin = tokio::io::stdin();
            // The AWS CLI's --expected-size: parts long enough for the whole stream in 10,000
            // (without it the parts grow as the stream goes on, which also fits).
            let opts = TransferOptions {
                part_size: opts
                    .part_size
                    .max(a.expected_size.unwrap_or(0).div_ceil(MAX_PARTS)),
                ..opts
            };
            let done = upload_from_reader(client, &mut stdin, &dst.bucket, &dst.key, opts)
                .await
                .map_err(plan.failed("upload", &"-", &dst))?;
            moved("upload", done.size, Some(done.parts), sent, Some(&dst))
        }
        (true, false) => {
            let src = object(a.source.url()?)?;
            let dest = local_destination(a.destination.path(), &src.key);
            if a.dryrun {
                return Ok(dry("download", &dest.display()));
            }
            if let Some(source) = source_stat(plan, &client, &src).await? {
                let kept = a.overwrite().keeps_file(source, &dest).await;
                if kept.map_err(failed)? {
                    return Ok(Moved::skip(dest.display().to_string()));
                }
            }
            // As the AWS CLI and s5cmd do: `cp s3://b/k new/dir/k` makes new/dir.
            let made = match dest.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(parent) => Some(MadeDirs::make(parent).await?),
                None => None,
            };
            let key = source_key(a, &src);
            let done = download_to_file(Arc::clone(&client), &src.bucket, key, &dest, opts)
                .await
                .map_err(plan.failed("download", &src, &dest.display()))?;
            if let Some(m) = made {
                m.keep();
            }
            remove_source(plan, &client, &src).await?;
            let to = dest.display();
            moved(
                "download",
                done.size,
                None,
                done.checksum_verified,
                Some(&to),
            )
        }
        (false, true) => {
            let dst = s3(a.destination.url()?)?;
            let path = a.source.path();
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => {
                    return Err(Failure::usage(format!(
                        "{} is a directory: cp --recursive copies a directory",
                        a.source
                    )))
                }
                Ok(_) => {}
                Err(e) => return Err(failed(format!("cannot read {}: {e}", a.source))),
            }
            let name = path
                .file_name()
                .ok_or_else(|| Failure::usage(format!("{} is not a file", a.source)))?;
            // A name in a legacy encoding can still go to a key that is given, as with the
            // AWS CLI; only a key made from the name must be UTF-8.
            let key = match name.to_str() {
                Some(name) => join_key(&dst.key, name),
                None if takes_name(&dst.key) => {
                    return Err(Failure::usage(format!(
                        "the name of {} is not valid UTF-8, as S3 keys must be: give the key (s3://{}/{}KEY)",
                        a.source, dst.bucket, dst.key
                    )))
                }
                None => dst.key.clone(),
            };
            let target = S3Uri {
                bucket: dst.bucket.clone(),
                key,
            };
            if a.dryrun {
                return Ok(dry("upload", &target));
            }
            let source = match a.overwrite().compares() {
                true => Stat::of_file(path).await.map_err(failed)?,
                false => None,
            };
            let source = source.unwrap_or(Stat::UNKNOWN);
            if kept_object(plan, &client, source, &target).await? {
                return Ok(Moved::skip(target.to_string()));
            }
            let done = upload_file(client, path, &target.bucket, &target.key, opts)
                .await
                .map_err(plan.failed("upload", &a.source, &target))?;
            if plan.moving {
                std::fs::remove_file(path).map_err(|e| {
                    failed(format!(
                        "uploaded, but {} could not be removed: {e}",
                        a.source
                    ))
                })?;
            }
            moved("upload", done.size, Some(done.parts), sent, Some(&target))
        }
        (true, true) => {
            let src = object(a.source.url()?)?;
            let dst = s3(a.destination.url()?)?;
            let key = join_key(&dst.key, src.key.rsplit('/').next().unwrap_or(&src.key));
            let dst = S3Uri {
                bucket: dst.bucket,
                key,
            };
            // Another service or account: read through this machine, never "in place".
            let elsewhere = source_client(&a.source_service, &a.connection, &a.transport)?;
            // An older version copied onto its key is a restore, not a copy in place.
            if elsewhere.is_none() && src == dst && a.version_id.is_none() {
                // Before the dry run, which would otherwise show a copy the run refuses.
                in_place(plan, &a.source)?;
            }
            if a.dryrun {
                return Ok(dry("copy", &dst));
            }
            let reads = elsewhere.as_ref().unwrap_or(&client);
            if let Some(source) = source_stat(plan, reads, &src).await? {
                if kept_object(plan, &client, source, &dst).await? {
                    return Ok(Moved::skip(dst.to_string()));
                }
            }
            if let Some(source) = elsewhere {
                let done = copy_through(
                    Arc::clone(&source),
                    client,
                    (&src.bucket, source_key(a, &src)),
                    (&dst.bucket, &dst.key),
                    opts,
                )
                .await
                .map_err(plan.failed("copy", &src, &dst))?;
                remove_source(plan, &source, &src).await?;
                return Ok(moved("copy", done.size, Some(done.parts), sent, Some(&dst)));
            }
            let from = CopySource {
                bucket: src.bucket.clone(),
                key: src.key.clone(),
                version_id: a.version_id.clone(),
                listed: None,
                customer_key: a.headers.sse_c_copy_source_key.clone(),
            };
            let done = copy_object(
                &client,
                &from,
                (&dst.bucket, &dst.key),
                &a.tuning.copy_settings(&a.headers),
            )
            .await
            .map_err(plan.failed("copy", &src, &dst))?;
            remove_source(plan, &client, &src).await?;
            moved("copy", done.size, Some(done.parts), None, Some(&dst))
        }
        (false, false) => return Err(Failure::usage("one side must be s3://bucket/key")),
    })
}

/// A copy onto its own source: `cp` may rewrite what S3 lets a copy in place change (the
/// AWS CLI's `cp s3://b/k s3://b/k --metadata-directive REPLACE --content-type ...`); `mv`
/// never, since it would then delete what it wrote.
pub(crate) fn in_place(plan: &Plan, source: &impl std::fmt::Display) -> Result<(), Failure> {
    if plan.moving {
        return Err(Failure::usage(format!(
            "{source} is both the source and the destination of mv"
        )));
    }
    if !plan.a.headers.object_headers().changes_in_place() {
        return Err(Failure::usage(format!(
            "{source} is both the source and the destination: a copy onto itself must change \
             its content headers or metadata (--metadata-directive REPLACE, --content-type...), \
             its --storage-class, its --sse or its --sse-c"
        )));
    }
    Ok(())
}

/// Whether --no-clobber, --if-size-differ or --if-source-newer leave the object at `target`
/// as it is, against `source` (headed with the key it would be written with).
async fn kept_object(
    plan: &Plan<'_>,
    client: &S3Client,
    source: Stat,
    target: &S3Uri,
) -> Result<bool, Failure> {
    let made_key = plan.a.headers.sse_c.sse_c_key.as_ref();
    let to = (target.bucket.as_str(), target.key.as_str());
    let overwrite = plan.a.overwrite();
    let kept = overwrite.keeps_object(source, client, to, made_key);
    kept.await.map_err(failed)
}

/// The s3:// source's size and time, headed (the version, with its customer key) only when
/// --if-size-differ or --if-source-newer compares them (`UNKNOWN` otherwise); `None` for a
/// missing source, left for the copy itself to report as its own error.
async fn source_stat(
    plan: &Plan<'_>,
    client: &S3Client,
    src: &S3Uri,
) -> Result<Option<Stat>, Failure> {
    if !plan.a.overwrite().compares() {
        return Ok(Some(Stat::UNKNOWN));
    }
    let key = source_key(plan.a, src);
    Stat::of_object(client, &src.bucket, key)
        .await
        .map_err(failed)
}

/// `mv` of one object: its source goes once the copy is complete and checked.
async fn remove_source(plan: &Plan<'_>, client: &S3Client, src: &S3Uri) -> Result<(), Failure> {
    if !plan.moving {
        return Ok(());
    }
    client
        .delete_object(&src.bucket, &src.key)
        .await
        .map_err(|e| failed(format!("copied, but the source could not be deleted: {e}")))
}

/// `key` as a destination for a source named `name`: a prefix (empty, or ending in `/`) takes
/// the name, as `cp file s3://b/dir/` does.
fn join_key(key: &str, name: &str) -> String {
    if takes_name(key) {
        format!("{key}{name}")
    } else {
        key.to_owned()
    }
}

/// Whether a destination key is a prefix that the source's name completes (`s3://b/dir/`).
fn takes_name(key: &str) -> bool {
    key.is_empty() || key.ends_with('/')
}

/// The source's own client, when --source-endpoint-url, --source-profile or --source-region
/// say it is not the destination's service or account.
pub(crate) fn source_client(
    source: &crate::args::SourceService,
    connection: &crate::flags::Connection,
    transport: &crate::flags::Transport,
) -> Result<Option<Arc<S3Client>>, Failure> {
    let s = source;
    if s.source_endpoint_url.is_none() && s.source_profile.is_none() && s.source_region.is_none() {
        return Ok(None);
    }
    let mut overrides = connection.overrides();
    if s.source_endpoint_url.is_some() {
        overrides.endpoint_url = s.source_endpoint_url.clone();
    }
    if s.source_profile.is_some() {
        overrides.profile = s.source_profile.clone();
    }
    if s.source_region.is_some() {
        overrides.region = s.source_region.clone();
    }
    client_for(&overrides, transport).map(Some)
}

impl crate::args::Headers {
    /// The SSE-C key the objects a command reads are opened with: `--sse-c-copy-source-key`
    /// when the destination is S3 too (a copy), else `--sse-c-key` (a download), as the AWS
    /// CLI takes them.
    pub(crate) fn reading_key(&self, to_s3: bool) -> Option<&slipstream_client::CustomerKey> {
        match to_s3 {
            true => self.sse_c_copy_source_key.as_ref(),
            false => self.sse_c.sse_c_key.as_ref(),
        }
    }

    /// The headers uploads send.
    pub(crate) fn object_headers(&self) -> slipstream_transfer::ObjectHeaders {
        slipstream_transfer::ObjectHeaders {
            content_type: self.content_type.clone(),
            guess_content_type: !self.no_guess_mime_type,
            cache_control: self.cache_control.clone(),
            metadata: self.metadata.clone().unwrap_or_default().0,
            storage_class: self.storage_class.clone(),
            content_disposition: self.content_disposition.clone(),
            content_encoding: self.content_encoding.clone(),
            content_language: self.content_language.clone(),
            expires: self.expires.clone(),
            website_redirect: self.website_redirect.clone(),
            acl: self.acl.clone(),
            // Checked in `Tuning::transfer_options`, which every command calls first.
            grants: crate::grants::grants(&self.grants).unwrap_or_default(),
            server_side_encryption: self.sse.clone(),
            sse_kms_key_id: self.sse_kms_key_id.clone(),
            tagging: None,
            customer_key: self.sse_c.sse_c_key.clone(),
            metadata_directive: self.metadata_directive.as_deref().map(|d| {
                match d.eq_ignore_ascii_case("REPLACE") {
                    true => MetadataDirective::Replace,
                    false => MetadataDirective::Copy,
                }
            }),
        }
    }
}
/// A directory destination (one that exists, or a path ending in `/`) takes the key's last
/// segment as the file name.
fn local_destination(dest: &Path, key: &str) -> PathBuf {
    if dest.is_dir() || dest.as_os_str().to_string_lossy().ends_with('/') {
        dest.join(key.rsplit('/').next().unwrap_or(key))
    } else {
        dest.to_path_buf()
    }
}
