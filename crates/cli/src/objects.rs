//! The plumbing every object command shares (the client from the AWS chain, the runtime,
//! errors as exit codes, stopping on signals), and the small commands: `cat`, `head`, `mb`.
//! `ls` is in `listing.rs`, `cp` and `mv` in `copying.rs` and `copy_many.rs`, `rm` and `rb`
//! in `remove.rs`.

use std::sync::Arc;

use slipstream_client::{resolve, ClientOptions, Env, S3Client};
use slipstream_s3::S3Uri;
use slipstream_transfer::{download_to_writer, TransferError, TransferOptions, CLEANUP_WAIT};

use crate::args::ObjectArgs;
use crate::flags::{Connection, Transport};
use crate::Failure;

pub(crate) fn client(c: &Connection, t: &Transport) -> Result<Arc<S3Client>, Failure> {
    client_for(&c.overrides(), t)
}

pub(crate) fn client_for(
    overrides: &slipstream_client::Overrides,
    t: &Transport,
) -> Result<Arc<S3Client>, Failure> {
    let resolved =
        resolve(&Env::from_process(), overrides).map_err(|e| Failure::usage(e.to_string()))?;
    let options = ClientOptions {
        tcp_congestion: t.tcp_congestion.clone(),
        ..ClientOptions::default()
    };
    let client = S3Client::new(&resolved, options).map_err(|e| Failure::usage(e.to_string()))?;
    Ok(Arc::new(client))
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    slipstream_transfer::io_runtime()
        .map_err(|e| Failure::input(format!("cannot start the I/O runtime: {e}")))
}

/// A transfer or request that failed (S3, the network, a local file, the data): exit 1, by
/// README's table; flags and configuration fail earlier, with exit 2.
pub(crate) fn failed(e: impl std::fmt::Display) -> Failure {
    Failure::input(e.to_string())
}

pub(crate) fn s3(target: &str) -> Result<S3Uri, Failure> {
    S3Uri::parse(target).map_err(|e| Failure::usage(e.to_string()))
}
/// `s3://bucket/key` naming an object (not a prefix).
pub(crate) fn object(target: &str) -> Result<S3Uri, Failure> {
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
pub(crate) async fn interruptible<T>(
    work: impl std::future::Future<Output = T>,
) -> Result<T, Failure> {
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
/// `slipstream cat`: the object's bytes, in order, on standard output.
pub fn cat(a: &ObjectArgs) -> Result<(), Failure> {
    let src = object(&a.target)?;
    let client = client(&a.connection, &a.transport)?;
    let opts = TransferOptions::default();
    runtime()?.block_on(interruptible(async {
        let mut stdout = tokio::io::stdout();
        match download_to_writer(client, &src.bucket, &src.key, &mut stdout, opts).await {
            Err(TransferError::Io(e)) => Err(Failure::from_write(&e)),
            other => other.map(drop).map_err(failed),
        }
    }))?
}

/// `slipstream head`: one JSON object.
pub fn head(a: &ObjectArgs) -> Result<(), Failure> {
    let target = object(&a.target)?;
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
    if !target.key.is_empty() {
        return Err(Failure::usage("mb takes s3://bucket, without a key"));
    }
    let client = client(&a.connection, &a.transport)?;
    runtime()?
        .block_on(client.create_bucket(&target.bucket))
        .map_err(failed)
}
