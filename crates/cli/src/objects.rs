//! `cp`, `ls`, `rm`, `head`, `mb`: the commands that move and inspect objects.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use slipstream_client::{resolve, ChecksumAlgorithm, ClientOptions, Env, S3Client};
use slipstream_s3::S3Uri;
use slipstream_transfer::{
    download_prefix, download_to_file, download_to_writer, upload_directory, upload_file,
    upload_from_reader, TransferError, TransferOptions, CLEANUP_WAIT, MIN_PART_SIZE,
};

use crate::args::{CpArgs, ObjectArgs};
use crate::flags::{Connection, Transport};
use crate::progress::Bar;
use crate::Failure;

fn client(c: &Connection, t: &Transport) -> Result<Arc<S3Client>, Failure> {
    let resolved =
        resolve(&Env::from_process(), &c.overrides()).map_err(|e| Failure::usage(e.to_string()))?;
    let options = ClientOptions {
        tcp_congestion: t.tcp_congestion.clone(),
        ..ClientOptions::default()
    };
    let client = S3Client::new(&resolved, options).map_err(|e| Failure::usage(e.to_string()))?;
    Ok(Arc::new(client))
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::input(format!("cannot start the I/O runtime: {e}")))
}

/// A transfer or request that failed (S3, the network, a local file, the data): exit 1, by
/// README's table; flags and configuration fail earlier, with exit 2.
fn failed(e: impl std::fmt::Display) -> Failure {
    Failure::input(e.to_string())
}

fn s3(target: &str) -> Result<S3Uri, Failure> {
    S3Uri::parse(target).map_err(|e| Failure::usage(e.to_string()))
}

/// `slipstream cp`.
pub fn cp(a: &CpArgs) -> Result<(), Failure> {
    if a.part_size < MIN_PART_SIZE {
        return Err(Failure::usage(
            "--part-size must be at least 5MiB (S3's minimum part)",
        ));
    }
    let client = client(&a.connection, &a.transport)?;
    let (progress, bar) = Bar::start(!a.quiet && !a.json, &client);
    let opts = TransferOptions {
        part_size: a.part_size,
        concurrency: usize::from(a.concurrency),
        multipart_threshold: a.part_size,
        progress,
        checksum: a.checksum_algorithm,
        stall_timeout: a.stall_timeout,
    };
    let rt = runtime()?;
    let started = Instant::now();
    let Moved {
        what,
        bytes,
        parts,
        objects,
        checksum,
    } = rt.block_on(interruptible(copy(a, client, opts)))??;
    drop(bar);
    let seconds = started.elapsed().as_secs_f64();
    let mb_per_s = bytes as f64 / 1e6 / seconds.max(1e-9);
    if a.json {
        // With data on standard output, the summary goes to standard error.
        let line = format!(
            "{{\"operation\":\"{what}\",\"bytes\":{bytes},\"seconds\":{seconds:.3},\"mb_per_s\":{mb_per_s:.1},\"parts\":{},\"objects\":{},\"checksum\":{}}}",
            parts.unwrap_or(0),
            objects.unwrap_or(1),
            checksum.map_or("null".into(), |c| format!("\"{c}\""))
        );
        if a.destination == "-" {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    } else if !a.quiet {
        eprintln!(
            "{what}: {} -> {} ({bytes} bytes in {seconds:.2} s, {mb_per_s:.1} MB/s)",
            a.source, a.destination
        );
    }
    Ok(())
}

/// What one `cp` moved, for its summary line.
struct Moved {
    what: &'static str,
    bytes: u64,
    parts: Option<usize>,
    objects: Option<usize>,
    /// What checked the data: the object's whole checksum on a download (none if it has
    /// none), the algorithm S3 checked every part with on an upload.
    checksum: Option<ChecksumAlgorithm>,
}

/// The transfer `cp` asked for, chosen by which side is `s3://` (or `-`).
async fn copy(a: &CpArgs, client: Arc<S3Client>, opts: TransferOptions) -> Result<Moved, Failure> {
    let (src_s3, dst_s3) = (
        a.source.starts_with("s3://"),
        a.destination.starts_with("s3://"),
    );
    let sent = Some(opts.checksum);
    let moved = |what, bytes, parts, checksum| Moved {
        what,
        bytes,
        parts,
        objects: None,
        checksum,
    };
    Ok(match (src_s3, dst_s3) {
        _ if a.recursive => {
            let (what, many) = cp_recursive(a, src_s3, dst_s3, client, opts).await?;
            Moved {
                objects: Some(many.objects),
                ..moved(what, many.bytes, None, None)
            }
        }
        (true, false) if a.destination == "-" => {
            let src = object(&a.source)?;
            let mut stdout = tokio::io::stdout();
            let done = download_to_writer(client, &src.bucket, &src.key, &mut stdout, opts)
                .await
                .map_err(failed)?;
            moved("download", done.size, None, done.checksum_verified)
        }
        (false, true) if a.source == "-" => {
            let dst = object(&a.destination)?;
            let mut stdin = tokio::io::stdin();
            let done = upload_from_reader(client, &mut stdin, &dst.bucket, &dst.key, opts)
                .await
                .map_err(failed)?;
            moved("upload", done.size, Some(done.parts), sent)
        }
        (true, false) => {
            let src = object(&a.source)?;
            let dest = local_destination(Path::new(&a.destination), &src.key);
            let done = download_to_file(client, &src.bucket, &src.key, &dest, opts)
                .await
                .map_err(failed)?;
            moved("download", done.size, None, done.checksum_verified)
        }
        (false, true) => {
            let dst = s3(&a.destination)?;
            let path = Path::new(&a.source);
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| Failure::usage(format!("{} is not a file", a.source)))?;
            let key = if dst.key.is_empty() || dst.key.ends_with('/') {
                format!("{}{name}", dst.key)
            } else {
                dst.key.clone()
            };
            let done = upload_file(client, path, &dst.bucket, &key, opts)
                .await
                .map_err(failed)?;
            moved("upload", done.size, Some(done.parts), sent)
        }
        (true, true) => {
            let (src, dst) = (object(&a.source)?, object(&a.destination)?);
            let done = copy_through(client, &src, &dst, opts)
                .await
                .map_err(failed)?;
            moved("copy", done.size, Some(done.parts), sent)
        }
        (false, false) => return Err(Failure::usage("one side must be s3://bucket/key")),
    })
}

/// `cp --recursive`: a prefix to a directory or a directory to a prefix.
async fn cp_recursive(
    a: &CpArgs,
    src_s3: bool,
    dst_s3: bool,
    client: Arc<S3Client>,
    opts: TransferOptions,
) -> Result<(&'static str, slipstream_transfer::Many), Failure> {
    let objects = usize::from(a.objects);
    match (src_s3, dst_s3) {
        (true, false) => {
            let src = s3(&a.source)?;
            let dir = Path::new(&a.destination);
            download_prefix(client, &src.bucket, &src.key, dir, objects, opts)
                .await
                .map(|m| ("download", m))
                .map_err(failed)
        }
        (false, true) => {
            let dst = s3(&a.destination)?;
            let dir = Path::new(&a.source);
            if !dir.is_dir() {
                return Err(Failure::usage(format!("{} is not a directory", a.source)));
            }
            let mut prefix = dst.key.clone();
            if !prefix.is_empty() && !prefix.ends_with('/') {
                prefix.push('/');
            }
            upload_directory(client, dir, &dst.bucket, &prefix, objects, opts)
                .await
                .map(|m| ("upload", m))
                .map_err(failed)
        }
        _ => Err(Failure::usage(
            "--recursive copies between a local directory and s3://bucket/prefix/",
        )),
    }
}

/// S3 to S3 through this machine: the download streams into the upload through a pipe of one
/// part, so memory stays at about twice `concurrency x part_size`.
async fn copy_through(
    client: Arc<S3Client>,
    src: &S3Uri,
    dst: &S3Uri,
    opts: TransferOptions,
) -> Result<slipstream_transfer::Uploaded, TransferError> {
    // The bar follows the download side; the upload side trails it by at most the pipe.
    let up_opts = TransferOptions {
        progress: None,
        ..opts.clone()
    };
    let (mut writer, reader) = tokio::io::duplex(opts.part_size.min(64 << 20) as usize);
    let failed = Arc::new(AtomicBool::new(false));
    let mut reader = FailableReader {
        inner: reader,
        failed: Arc::clone(&failed),
    };
    let down = async {
        let r = download_to_writer(
            Arc::clone(&client),
            &src.bucket,
            &src.key,
            &mut writer,
            opts,
        )
        .await;
        // Set before the writer closes, so the upload sees the failure, not a clean end.
        failed.store(r.is_err(), Ordering::SeqCst);
        drop(writer);
        r
    };
    let up = upload_from_reader(
        Arc::clone(&client),
        &mut reader,
        &dst.bucket,
        &dst.key,
        up_opts,
    );
    let (down, up) = tokio::join!(down, up);
    down?;
    up
}

/// The upload side of [`copy_through`]: an end of input after a failed download is an error,
/// so a truncated object is never completed.
struct FailableReader {
    inner: tokio::io::DuplexStream,
    failed: Arc<AtomicBool>,
}

impl tokio::io::AsyncRead for FailableReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = polled {
            if buf.filled().len() == before && self.failed.load(Ordering::SeqCst) {
                return std::task::Poll::Ready(Err(std::io::Error::other(
                    "the download side of the copy failed",
                )));
            }
        }
        polled
    }
}

/// `s3://bucket/key` naming an object (not a prefix).
fn object(target: &str) -> Result<S3Uri, Failure> {
    let uri = s3(target)?;
    if uri.key.is_empty() || uri.key.ends_with('/') {
        return Err(Failure::usage(format!(
            "{target} must name an object: s3://bucket/key"
        )));
    }
    Ok(uri)
}

/// Runs `work` until it ends or a signal asks the command to stop: Ctrl-C (SIGINT), SIGTERM
/// (`timeout`, `kill`, systemd, Kubernetes) or SIGHUP (the terminal closed). The work is then
/// dropped, which removes a download's temporary file and starts the abort of an open multipart
/// upload; the aborts get [`CLEANUP_WAIT`] to finish, and the command exits with 128 + the
/// signal's number, as a shell reports a process the signal ended.
async fn interruptible<T>(work: impl std::future::Future<Output = T>) -> Result<T, Failure> {
    let (name, number) = tokio::select! {
        out = work => return Ok(out),
        _ = tokio::signal::ctrl_c() => ("Ctrl-C", 2),
        () = signal(Stop::Terminate) => ("SIGTERM", 15),
        () = signal(Stop::HangUp) => ("SIGHUP", 1),
    };
    let message = if slipstream_transfer::finish_cleanups_within(CLEANUP_WAIT).await {
        format!("interrupted ({name}): nothing was left half-written, no upload left open")
    } else {
        format!(
            "interrupted ({name}): nothing was left half-written; the abort of the open multipart upload did not finish within {}s (S3 keeps its parts until a lifecycle rule or `aws s3api abort-multipart-upload` removes them)",
            CLEANUP_WAIT.as_secs()
        )
    };
    Err(Failure::signalled(number, message))
}

/// The signals besides Ctrl-C that stop a transfer.
enum Stop {
    Terminate,
    HangUp,
}

/// Resolves when `which` arrives; never where it cannot be watched.
async fn signal(which: Stop) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let kind = match which {
            Stop::Terminate => SignalKind::terminate(),
            Stop::HangUp => SignalKind::hangup(),
        };
        if let Ok(mut s) = signal(kind) {
            s.recv().await;
            return;
        }
    }
    #[cfg(not(unix))]
    let _ = which;
    std::future::pending::<()>().await;
}

/// A directory destination takes the key's last segment as the file name.
fn local_destination(dest: &Path, key: &str) -> PathBuf {
    if dest.is_dir() {
        dest.join(key.rsplit('/').next().unwrap_or(key))
    } else {
        dest.to_path_buf()
    }
}

/// `slipstream ls`.
pub fn ls(a: &ObjectArgs) -> Result<(), Failure> {
    let target = s3(&a.target)?;
    let client = client(&a.connection, &a.transport)?;
    runtime()?.block_on(async {
        let mut token = None;
        loop {
            let delimiter = if a.recursive { None } else { Some("/") };
            let page = client
                .list_objects_v2(&target.bucket, &target.key, delimiter, token.as_deref())
                .await
                .map_err(failed)?;
            for p in &page.prefixes {
                println!("{:>30} PRE {p}", "");
            }
            for o in &page.objects {
                println!("{:>24} {:>12} {}", o.last_modified, o.size, o.key);
            }
            match page.continuation {
                Some(t) => token = Some(t),
                None => return Ok(()),
            }
        }
    })
}

/// `slipstream rm`.
pub fn rm(a: &ObjectArgs) -> Result<(), Failure> {
    let target = s3(&a.target)?;
    if target.key.is_empty() {
        return Err(Failure::usage("rm needs s3://bucket/key"));
    }
    let client = client(&a.connection, &a.transport)?;
    runtime()?
        .block_on(client.delete_object(&target.bucket, &target.key))
        .map_err(failed)
}

/// `slipstream head`: one JSON object.
pub fn head(a: &ObjectArgs) -> Result<(), Failure> {
    let target = s3(&a.target)?;
    let client = client(&a.connection, &a.transport)?;
    let info = runtime()?
        .block_on(client.head_object(&target.bucket, &target.key))
        .map_err(failed)?;
    let quote = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let (algorithm, value) = match &info.checksum {
        Some(c) => (
            format!("\"{}\"", c.algorithm),
            format!("\"{}\"", quote(&c.value)),
        ),
        None => ("null".into(), "null".into()),
    };
    println!(
        "{{\"size\":{},\"etag\":\"{}\",\"last_modified\":\"{}\",\"checksum_algorithm\":{algorithm},\"checksum\":{value}}}",
        info.size,
        quote(&info.etag),
        quote(&info.last_modified),
    );
    Ok(())
}

/// `slipstream mb`.
pub fn mb(a: &ObjectArgs) -> Result<(), Failure> {
    let target = s3(&a.target)?;
    let client = client(&a.connection, &a.transport)?;
    runtime()?
        .block_on(client.create_bucket(&target.bucket))
        .map_err(failed)
}
