//! The plumbing every object command shares (the client from the AWS chain, the runtime,
//! errors as exit codes, stopping on signals), and the small commands: `cat`, `head`, `mb`.
//! `ls` is in `listing.rs`, `cp` and `mv` in `copying.rs` and `copy_many.rs`, `rm` and `rb`
//! in `remove.rs`.

use std::sync::Arc;

use slipstream_client::{
    resolve, ClientOptions, Env, ObjectInfo, ObjectKey, S3Client, TransferSettings,
};
use slipstream_s3::S3Uri;
use slipstream_transfer::CLEANUP_WAIT;

use crate::actions::Printer;
use crate::args::{MbArgs, ReadArgs};
use crate::flags::{Connection, Transport};
use crate::Failure;

pub(crate) fn client(c: &Connection, t: &Transport) -> Result<Arc<S3Client>, Failure> {
    client_for(&c.overrides(), t)
}

/// The client, and the profile's transfer settings for the commands that move objects.
pub(crate) fn transfer_client(
    c: &Connection,
    t: &Transport,
) -> Result<(Arc<S3Client>, TransferSettings), Failure> {
    connect(&c.overrides(), t)
}

pub(crate) fn client_for(
    overrides: &slipstream_client::Overrides,
    t: &Transport,
) -> Result<Arc<S3Client>, Failure> {
    Ok(connect(overrides, t)?.0)
}

fn connect(
    overrides: &slipstream_client::Overrides,
    t: &Transport,
) -> Result<(Arc<S3Client>, TransferSettings), Failure> {
    let resolved =
        resolve(&Env::from_process(), overrides).map_err(|e| Failure::usage(e.to_string()))?;
    let defaults = ClientOptions::default();
    let options = ClientOptions {
        tcp_congestion: t.tcp_congestion.clone(),
        list_page_size: t.page_size.map(usize::from),
        request_payer: t.request_payer.is_some(),
        max_attempts: resolved.max_attempts.unwrap_or(defaults.max_attempts),
        max_bandwidth: t.max_bandwidth.clone().or(resolved.max_bandwidth.clone()),
        skip_certificate_check: t.no_verify_ssl,
        trace: t.debug.then(debug_trace),
        ..defaults
    }
    .with_timeouts(t.cli_connect_timeout, t.cli_read_timeout);
    if t.no_verify_ssl {
        eprintln!(
            "slipstream: warning: --no-verify-ssl: the server's certificate is not checked, so \
             anyone on the path can read and change what is sent (--ca-bundle trusts a \
             certificate safely)"
        );
    }
    if t.debug {
        eprintln!(
            "slipstream: debug: {}; addressing {}; up to {} attempts a request",
            resolved.described(),
            format!("{:?}", resolved.addressing).to_lowercase(),
            options.max_attempts,
        );
    }
    let client = S3Client::new(&resolved, options).map_err(|e| Failure::usage(e.to_string()))?;
    Ok((Arc::new(client), resolved.transfer))
}

/// `--debug`'s line per attempt, on standard error.
fn debug_trace() -> slipstream_client::Trace {
    slipstream_client::Trace(Arc::new(|attempt| {
        eprintln!("slipstream: debug: {attempt}")
    }))
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
/// `slipstream head`: one JSON object, of the object (as `s5cmd head` shows it: the key, size,
/// dates, storage class, content headers and metadata, with the whole-object checksum), or of
/// the bucket for `s3://bucket` (`HeadBucket`: it exists and these credentials may use it).
/// A key ending in `/` is headed as the object it names (a "folder" marker is one).
pub fn head(r: &ReadArgs) -> Result<(), Failure> {
    let a = &r.object;
    let target = s3(&a.target)?;
    if target.key.is_empty() && r.version_id.is_some() {
        return Err(Failure::usage(
            "--version-id names a version of an object: s3://bucket/key",
        ));
    }
    let client = client(&a.connection, &a.transport)?;
    let runtime = runtime()?;
    let shown = if target.key.is_empty() {
        runtime
            .block_on(client.head_bucket(&target.bucket))
            .map_err(failed)?;
        serde_json::json!({ "bucket": format!("s3://{}", target.bucket) })
    } else {
        let info = runtime
            .block_on(
                client.head_object(
                    &target.bucket,
                    ObjectKey::new(&target.key, r.version_id.as_deref())
                        .with_customer_key(r.sse_c.sse_c_key.as_ref()),
                ),
            )
            .map_err(failed)?;
        object_json(&target, &info)
    };
    println!("{shown}");
    Ok(())
}

/// An ETag without the quotes HTTP puts around it, as s5cmd prints it (`head`, `ls --json`).
pub(crate) fn unquoted(etag: &str) -> &str {
    etag.strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or(etag)
}

/// What `head` prints of an object. The content headers are named as their headers are, in
/// snake case (`content_type`, `cache_control`); `x-amz-meta-*` go under `metadata` without the
/// prefix, as boto3's `Metadata`. No `x-amz-storage-class` means STANDARD, as S3 documents.
fn object_json(target: &S3Uri, info: &ObjectInfo) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    let mut put = |name: &str, value: serde_json::Value| out.insert(name.to_owned(), value);
    put(
        "key",
        format!("s3://{}/{}", target.bucket, target.key).into(),
    );
    put("size", info.size.into());
    put("etag", unquoted(&info.etag).into());
    put("last_modified", info.last_modified.clone().into());
    let class = info.storage_class.as_deref().unwrap_or("STANDARD");
    put("storage_class", class.into());
    if let Some(version) = &info.version_id {
        put("version_id", version.clone().into());
    }
    let mut metadata = serde_json::Map::new();
    for (name, value) in &info.copied_headers {
        match name.strip_prefix("x-amz-meta-") {
            Some(m) => metadata.insert(m.to_owned(), value.clone().into()),
            None => put(&name.replace('-', "_"), value.clone().into()),
        };
    }
    put("metadata", metadata.into());
    // `server_side_encryption`, `..._customer_key_md5` (SSE-C), `..._aws_kms_key_id`.
    for (name, value) in &info.encryption {
        let name = name.trim_start_matches("x-amz-").replace('-', "_");
        put(&name, value.clone().into());
    }
    let checksum = info.checksum.as_ref();
    put(
        "checksum_algorithm",
        checksum.map(|c| c.algorithm.to_string()).into(),
    );
    put("checksum", checksum.map(|c| c.value.clone()).into());
    out.into()
}

/// `slipstream mb`.
pub fn mb(m: &MbArgs) -> Result<(), Failure> {
    let a = &m.bucket;
    let target = s3(&a.target)?;
    if !target.key.is_empty() {
        return Err(Failure::usage("mb takes s3://bucket, without a key"));
    }
    let tags: Vec<(String, String)> = m
        .tags
        .chunks(2)
        .map(|kv| (kv[0].clone(), kv[1].clone()))
        .collect();
    let client = client(&a.connection, &a.transport)?;
    runtime()?
        .block_on(client.create_bucket_tagged(&target.bucket, &tags))
        .map_err(failed)?;
    // The AWS CLI's line (the bucket's bare name), so a script that reads it reads ours.
    let printer = Printer::new(false, false, false);
    printer.done("make_bucket", &target.bucket, None);
    printer.finish()
}
