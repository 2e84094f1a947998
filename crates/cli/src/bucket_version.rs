//! `slipstream bucket-version`: a bucket's versioning shown, or set (`--set Enabled|Suspended`),
//! as s5cmd's command of that name prints it, so that `ls --all-versions`, `cp --version-id`
//! and `rm --all-versions` need no other tool to turn versioning on.

use std::io::Write;

use clap::Args;
use slipstream_client::{ClientError, VersioningStatus};

use crate::flags::{Connection, Transport};
use crate::objects::{client, failed, runtime, s3};
use crate::Failure;

/// `slipstream bucket-version`.
#[derive(Args, Debug)]
pub struct BucketVersionArgs {
    /// s3://bucket
    pub target: String,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
    /// Turn versioning on (Enabled) or suspend it (Suspended); any case. A bucket once
    /// versioned cannot be unversioned again, only suspended.
    #[arg(long, value_name = "STATUS")]
    pub set: Option<VersioningStatus>,
    /// One JSON object, as s5cmd's --json: {"bucket":..,"status":..} ("" when never
    /// versioned), with "mfa_delete" when the bucket has that setting.
    #[arg(long)]
    pub json: bool,
}

/// `slipstream bucket-version`.
pub fn bucket_version(a: &BucketVersionArgs) -> Result<(), Failure> {
    let target = s3(&a.target)?;
    if !target.key.is_empty() {
        return Err(Failure::usage(
            "bucket-version takes s3://bucket, without a key",
        ));
    }
    let client = client(&a.connection, &a.transport)?;
    let bucket = target.bucket.as_str();
    let rt = runtime()?;
    // S3's "The specified bucket does not exist" does not say which.
    let failed = |e: ClientError| failed(format!("s3://{bucket}: {e}"));
    let (status, mfa_delete, set) = match a.set {
        Some(status) => {
            let put = client.put_bucket_versioning(bucket, status);
            rt.block_on(put).map_err(failed)?;
            (status.to_string(), None, true)
        }
        None => {
            let got = rt.block_on(client.get_bucket_versioning(bucket));
            let got = got.map_err(failed)?;
            (got.status.unwrap_or_default(), got.mfa_delete, false)
        }
    };
    let line = match (a.json, set, status.as_str()) {
        (true, _, _) => {
            let mut o = serde_json::json!({ "bucket": bucket, "status": status });
            if let Some(mfa) = mfa_delete {
                o["mfa_delete"] = mfa.into();
            }
            o.to_string()
        }
        (false, true, _) => format!("Bucket versioning for {bucket:?} is set to {status:?}"),
        (false, false, "") => format!("{bucket:?} is an unversioned bucket"),
        (false, false, _) => format!("Bucket versioning for {bucket:?} is {status:?}"),
    };
    writeln!(std::io::stdout(), "{line}").map_err(|e| Failure::from_write(&e))
}
