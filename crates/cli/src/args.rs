//! Flags, defined once with their help text. Parsed flags are turned into library values in the
//! command modules, not here.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Slipstream: the fast path to S3.
#[derive(Parser, Debug)]
#[command(name = "slipstream", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Presign S3 URLs (SigV4), one per key, in input order.
    #[command(after_help = PRESIGN_EXAMPLES)]
    Presign(PresignArgs),
    /// Check a presigned URL: valid now, or why not (with what was signed).
    #[command(name = "verify-url", after_help = VERIFY_EXAMPLES)]
    VerifyUrl(VerifyUrlArgs),
}

const VERIFY_EXAMPLES: &str = "\
Examples:
  slipstream verify-url 'https://my-bucket.s3.amazonaws.com/k?X-Amz-Algorithm=...'
  slipstream verify-url --method PUT \"$(slipstream presign --method PUT s3://my-bucket/k)\"

The URL is checked with the credentials the AWS CLI would use (the URL's access key must be
theirs), at the current time (or --at). When the signature does not match, the canonical
request and string to sign are printed: compare them with what your signer built.
Exit codes: 0 valid, 1 invalid, 2 flags or configuration.";

#[derive(Args, Debug)]
pub struct VerifyUrlArgs {
    /// The presigned URL.
    pub url: String,
    /// The HTTP method the URL will be used with.
    #[arg(long, default_value = "GET", value_parser = ["GET", "PUT", "HEAD", "DELETE", "POST"], ignore_case = true)]
    pub method: String,
    /// Header the request will carry, NAME:VALUE (repeatable), e.g. content-type:image/png.
    #[arg(long = "header", value_name = "NAME:VALUE")]
    pub headers: Vec<String>,
    /// Check at this time, YYYYMMDDTHHMMSSZ (default: now).
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    #[command(flatten)]
    pub connection: Connection,
}

const PRESIGN_EXAMPLES: &str = "\
Examples:
  slipstream presign s3://my-bucket/reports/2026.pdf
  slipstream presign --bucket my-bucket --expires-in 600 a.txt b.txt
  find . -type f | sed 's|^./||' | slipstream presign --bucket my-bucket > urls.txt
  slipstream presign --method PUT --content-type image/png s3://my-bucket/up/cat.png
  slipstream presign --endpoint-url http://127.0.0.1:7070 --bucket b --at 20260101T000000Z k
  slipstream presign --region-set '*' s3://my-bucket/k          (SigV4A)

Keys are read from the arguments, or one per line from standard input when there are none
(or the only argument is -). A line is a key of --bucket, or s3://bucket/key. Keys are signed
exactly as given: nothing is normalized. Exit codes: 0 ok, 1 a key could not be signed
(URLs before it were written), 2 flags or configuration.";

/// How the bucket appears in the URL.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Addressing {
    /// Virtual-hosted where the bucket name allows it, as boto3 does.
    Auto,
    /// Always `bucket.host` where the name allows it.
    Virtual,
    /// Always `host/bucket`.
    Path,
}

/// Options shared by every command that talks to S3.
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// Named profile from ~/.aws/credentials and ~/.aws/config (else AWS_PROFILE, else default).
    #[arg(long)]
    pub profile: Option<String>,
    /// Region (else AWS_REGION, AWS_DEFAULT_REGION, the profile's region, us-east-1).
    #[arg(long)]
    pub region: Option<String>,
    /// Custom S3 endpoint such as http://127.0.0.1:7070 (else AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL).
    #[arg(long, value_name = "URL")]
    pub endpoint_url: Option<String>,
    /// Bucket addressing style (else the profile's s3.addressing_style, else auto).
    #[arg(long, value_enum)]
    pub addressing_style: Option<Addressing>,
    /// Same as --addressing-style path.
    #[arg(long, conflicts_with = "addressing_style")]
    pub path_style: bool,
}

#[derive(Args, Debug)]
pub struct PresignArgs {
    /// Keys of --bucket, or s3://bucket/key URIs; none or - reads lines from standard input.
    pub keys: Vec<String>,
    /// Bucket for keys given without s3://.
    #[arg(long, short)]
    pub bucket: Option<String>,
    #[command(flatten)]
    pub connection: Connection,
    /// HTTP method the URL allows.
    #[arg(long, default_value = "GET", value_parser = ["GET", "PUT", "HEAD", "DELETE", "POST"], ignore_case = true)]
    pub method: String,
    /// Lifetime in seconds, 1 to 604800 (7 days).
    #[arg(long, default_value_t = 3600, value_name = "SECONDS")]
    pub expires_in: u64,
    /// Fixed signing time YYYYMMDDTHHMMSSZ, for reproducible output (default: now).
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Object version (versionId).
    #[arg(long)]
    pub version_id: Option<String>,
    /// Content-Type the uploader must send (signed; for PUT).
    #[arg(long)]
    pub content_type: Option<String>,
    /// Override Cache-Control of the response.
    #[arg(long)]
    pub response_cache_control: Option<String>,
    /// Override Content-Disposition of the response, e.g. 'attachment; filename="a.pdf"'.
    #[arg(long)]
    pub response_content_disposition: Option<String>,
    /// Override Content-Encoding of the response.
    #[arg(long)]
    pub response_content_encoding: Option<String>,
    /// Override Content-Language of the response.
    #[arg(long)]
    pub response_content_language: Option<String>,
    /// Override Content-Type of the response.
    #[arg(long)]
    pub response_content_type: Option<String>,
    /// Override Expires of the response.
    #[arg(long)]
    pub response_expires: Option<String>,
    /// Any other signed query parameter, NAME=VALUE (repeatable), e.g. uploadId=... partNumber=3.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Threads that sign (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Sign with SigV4A (ECDSA P-256): one URL valid in a set of regions, as multi-region access
    /// points need.
    #[arg(long)]
    pub sigv4a: bool,
    /// SigV4A region set, e.g. us-east-1,us-west-2 or * (implies --sigv4a; default: the region).
    #[arg(long, value_name = "REGIONS")]
    pub region_set: Option<String>,
}
