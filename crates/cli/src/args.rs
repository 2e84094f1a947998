//! Flags, defined once with their help text. Parsed flags are turned into library values in the
//! command modules, not here.

use clap::{Args, Parser, Subcommand};
use slipstream_client::{ChecksumAlgorithm, CustomerKey};

use crate::customer_keys::KeyParser;
use crate::flags::{parse_size, parse_timeout, Connection, Transport};
use crate::location::Location;

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
    /// Copy files to S3, objects to files, or objects to objects (on the server): parallel
    /// parts over pooled connections.
    #[command(after_help = CP_EXAMPLES)]
    Cp(CpArgs),
    /// Move: copy as `cp` does, then delete each source once its copy is complete and checked.
    #[command(after_help = MV_EXAMPLES)]
    Mv(CpArgs),
    /// Upload standard input to s3://bucket/key, as s5cmd's pipe: `cp - s3://bucket/key`,
    /// with every cp flag (`pipe --help` shows them).
    #[command(disable_help_flag = true)]
    Pipe(PipeArgs),
    /// Make a directory or prefix hold what another holds: copy what is missing or differs,
    /// --delete what the source lacks.
    #[command(after_help = crate::syncing::SYNC_EXAMPLES)]
    Sync(crate::syncing::SyncArgs),
    /// Run many cp, mv, rm and sync commands, one per line of a file or standard input, over
    /// one connection pool (as s5cmd's run).
    #[command(after_help = crate::run::RUN_EXAMPLES)]
    Run(crate::run::RunArgs),
    /// List objects (and "directories" unless --recursive) under s3://bucket[/prefix], a
    /// wildcard's matches, or (without a target) the buckets.
    Ls(crate::listing::LsArgs),
    /// Delete objects: one, every one under a prefix (--recursive), or those a wildcard matches,
    /// in batches of 1,000.
    #[command(after_help = crate::remove::RM_EXAMPLES)]
    Rm(crate::remove::RmArgs),
    /// Remove a bucket (--force deletes its objects first).
    Rb(crate::remove::RbArgs),
    /// Objects and bytes under a prefix or wildcard, in total or per "directory" (--group).
    #[command(after_help = crate::usage::DU_EXAMPLES)]
    Du(crate::usage::DuArgs),
    /// Write an object (or one version of it) to standard output; or, as s5cmd's cat, every
    /// object a wildcard matches, or directly under s3://bucket/prefix/, one after another
    Cat(crate::cat::CatArgs),
    /// Show an object's size, ETag, date, storage class, content headers, metadata and checksum
    /// as JSON; of s3://bucket, that the bucket exists and may be used.
    Head(ReadArgs),
    /// Make a bucket.
    Mb(MbArgs),
    /// Show a bucket's versioning, or set it with --set Enabled|Suspended (as s5cmd's
    /// bucket-version).
    BucketVersion(crate::bucket_version::BucketVersionArgs),
    /// Measure latency (percentiles, time to first byte) and throughput of S3 requests.
    #[command(after_help = crate::bench_args::BENCH_EXAMPLES)]
    Bench(crate::bench_args::BenchArgs),
    /// Run the edge: terminate TLS near users, forward S3 requests over warm connections.
    #[command(after_help = crate::gateway::GATEWAY_EXAMPLES)]
    Gateway(crate::gateway::GatewayArgs),
    /// Hold the access keys a fleet of verifying edges asks about; manage them.
    #[command(after_help = crate::authority::AUTHORITY_EXAMPLES)]
    Authority(crate::authority::AuthorityArgs),
}

const CP_EXAMPLES: &str = "\
Examples:
  slipstream cp ./big.iso s3://my-bucket/isos/big.iso
  slipstream cp s3://my-bucket/isos/big.iso ./big.iso --concurrency 32 --part-size 16MiB
  slipstream cp s3://my-bucket/k ./k --endpoint-url http://127.0.0.1:7070 --json
  slipstream cp s3://my-bucket/k - | sha256sum                  (stdout, in order)
  tar c dir | slipstream cp - s3://my-bucket/dir.tar             (stdin, multipart)
  slipstream cp --recursive ./photos s3://my-bucket/photos/ --objects 8
  slipstream cp s3://my-bucket/a.iso s3://other-bucket/a.iso        (on the server)
  slipstream cp --recursive s3://my-bucket/2026/ s3://backup/2026/ --exclude '*.tmp'
  slipstream cp 's3://my-bucket/logs/2026-*/*.gz' ./logs/          (wildcards, as s5cmd)
  slipstream cp s3://a/k s3://b/k --source-endpoint-url https://other.example  (through here)
  tar c /srv | slipstream cp - s3://my-bucket/srv.tar --max-bandwidth 50MB/s   (a cap)

Downloads are written to a hidden temporary file next to the destination and renamed only once
every part arrived and the size (and the object's whole checksum, CRC64NVME, CRC32C or CRC32,
when it has one) matched. Uploads of --part-size or more use a multipart upload, aborted if
anything fails; S3 checks every part's checksum (--checksum-algorithm). A server that stops
answering fails the transfer after --stall-timeout without a byte moving. Ctrl-C, SIGTERM and
SIGHUP remove a download's temporary file and abort an open multipart upload.

Copies between two s3:// locations run on the server: one CopyObject up to 5 GiB (metadata and
checksum kept), UploadPartCopy parts above (content headers and x-amz-meta-* carried over, the
result checked against the source's size and checksum). With --source-endpoint-url,
--source-profile or --source-region the source is another service or account: the bytes then
stream through this machine, a part at a time.
--include/--exclude take fnmatch patterns (* also matches /) on names relative to the source,
in order: the last one that matches decides, as in the AWS CLI. Exit codes: 0 ok, 1 the transfer
failed (or a wildcard matched nothing), 2 flags or configuration, 130/143/129 stopped by
Ctrl-C/SIGTERM/SIGHUP.";

const MV_EXAMPLES: &str = "\
Examples:
  slipstream mv s3://my-bucket/inbox/a.csv s3://my-bucket/done/a.csv
  slipstream mv --recursive s3://my-bucket/inbox/ s3://archive/2026/
  slipstream mv ./report.pdf s3://my-bucket/reports/
  slipstream mv s3://my-bucket/out.bin ./

A source is deleted only after its copy completed and was checked (a download's size and
checksum, an upload S3 accepted with its checksum, a server-side copy's size and checksum);
a failed or interrupted move leaves every source that was not copied where it was.";

/// `slipstream cp`.
#[derive(Args, Debug, Clone)]
pub struct CpArgs {
    /// A local path or s3://bucket/key; a wildcard in either (`s3://b/logs/*.gz`, a quoted
    /// `'logs/*.csv'`) copies its matches, as s5cmd's cp.
    #[arg(value_parser = Location::parser())]
    pub source: Location,
    /// A local path or s3://bucket/key (a key ending in / takes the file's name).
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
    /// Copy every object under a prefix to a directory, or every file below a directory to a prefix.
    #[arg(long, short)]
    pub recursive: bool,
    #[command(flatten)]
    pub filters: Filters,
    /// Print what would be copied (or moved), and copy nothing (also --dry-run, s5cmd's
    /// spelling).
    #[arg(long, visible_alias = "dry-run")]
    pub dryrun: bool,
    /// Take the source literally: `*`, `?` and `[` are characters of the key or path, not
    /// wildcards.
    #[arg(long)]
    pub raw: bool,
    /// With `-` as the source: about how many bytes standard input holds (suffixes KiB, MiB,
    /// GiB, TiB), so that its parts are cut long enough for them in S3's 10,000 (the AWS CLI's
    /// flag; without it parts start at --part-size and grow, which also fits 5 TiB).
    #[arg(long, value_parser = parse_size, value_name = "SIZE")]
    pub expected_size: Option<u64>,
    /// Leave alone every destination that exists (a file, or an object: one HeadObject each,
    /// as s5cmd); with mv its source stays too.
    #[arg(long, short = 'n')]
    pub no_clobber: bool,
    /// Write over a destination that exists only if its size differs from the source's
    /// (s5cmd's flag; one stat or HeadObject per destination). With --if-source-newer: if
    /// either holds.
    #[arg(long, short = 's')]
    pub if_size_differ: bool,
    /// Write over a destination that exists only if the source is newer: a file's
    /// modification time against an object's LastModified, or two objects' (s5cmd's flag).
    #[arg(long, short = 'u')]
    pub if_source_newer: bool,
    /// Many objects or files: each under its last name alone in the destination
    /// (`logs/2026-01/a.gz` to `dir/a.gz`), as s5cmd's --flatten; a second source with a name
    /// already taken is refused, named, and the others go on.
    #[arg(long, short = 'f')]
    pub flatten: bool,
    /// Downloads of many objects (--recursive, a wildcard) whose file names differ only by
    /// case, which a case-insensitive file system (macOS's, Windows') writes to one file:
    /// ignore (the default, as the AWS CLI's), warn, skip the later, or error before any byte.
    #[arg(long, value_enum, default_value = "ignore", value_name = "WHAT")]
    pub case_conflict: CaseConflictArg,
    /// Copy this version of the s3:// source object (as s5cmd's --version-id), not the
    /// current one: an older version, or the data behind a delete marker. Copied onto its own
    /// key, it becomes the current version again.
    #[arg(long, value_name = "ID")]
    pub version_id: Option<String>,
    /// Leave symbolic links out of a directory's upload (by default they are followed, as the
    /// AWS CLI and s5cmd follow them).
    #[arg(long, overrides_with = "follow_symlinks")]
    pub no_follow_symlinks: bool,
    /// Follow symbolic links (the default; the last of the two flags wins, as in the AWS CLI).
    #[arg(long, overrides_with = "no_follow_symlinks")]
    pub follow_symlinks: bool,
    #[command(flatten)]
    pub source_service: SourceService,
    /// Print a JSON summary (bytes, seconds, MB/s) on standard output.
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

impl CpArgs {
    /// Which destinations that exist the copy leaves alone.
    pub fn overwrite(&self) -> slipstream_transfer::Overwrite {
        slipstream_transfer::Overwrite {
            no_clobber: self.no_clobber,
            if_size_differ: self.if_size_differ,
            if_source_newer: self.if_source_newer,
        }
    }
}

/// Where an s3:// source lives when it is not the destination's service or account: then
/// the bytes stream through this machine (a server-side copy cannot read across them).
#[derive(Args, Debug, Clone, Default)]
pub struct SourceService {
    /// Endpoint of the source, when it is another S3 service than the destination's.
    #[arg(long, value_name = "URL")]
    pub source_endpoint_url: Option<String>,
    /// Profile for the source, when its credentials differ from the destination's.
    #[arg(long, value_name = "NAME")]
    pub source_profile: Option<String>,
    /// Region of the source, when it differs from the destination's.
    #[arg(long, value_name = "REGION")]
    pub source_region: Option<String>,
}

/// How objects move: parts, checksums, objects in flight; shared by `cp`, `mv` and `sync`.
#[derive(Args, Debug, Clone)]
pub struct Tuning {
    /// Bytes per part (suffixes KiB, MiB, GiB); S3 needs at least 5MiB (default: the
    /// profile's s3.multipart_chunksize, else 8MiB).
    #[arg(long, value_parser = parse_size, value_name = "SIZE")]
    pub part_size: Option<u64>,
    /// The checksum S3 checks every uploaded part and object with: CRC32C, CRC64NVME (multipart
    /// objects then keep a checksum of the whole object, which later downloads check) or CRC32.
    #[arg(long, default_value = "CRC32C")]
    pub checksum_algorithm: ChecksumAlgorithm,
    /// The AWS CLI's `--checksum-mode ENABLED`, taken so that scripts passing it keep working:
    /// downloads here always check an object's whole-object checksum when it has one.
    #[arg(long, value_name = "MODE", value_parser = ["ENABLED"])]
    pub checksum_mode: Option<String>,
    /// Parts in flight at once (per object with --recursive; default: the profile's
    /// s3.max_concurrent_requests, else 16); downloads from a nearby server (first answer
    /// within 20 ms) and file uploads to a far one (CreateMultipartUpload 20 ms or more) use
    /// half as many, with parts twice as long.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub concurrency: Option<u16>,
    /// With many objects: objects in flight at once (default: the profile's
    /// s3.max_concurrent_requests, else chosen by the first answer, 4 from a server within
    /// 2 ms, 64 within 20 ms, 256 from a farther one, 512 for a directory of small files
    /// uploaded to a farther one).
    /// Multipart parts of all objects share one budget of twice --concurrency.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub objects: Option<u16>,
    /// Uploads of this size or more go in parts: the profile's s3.multipart_threshold, else
    /// the part size (no flag: the AWS CLI has none either).
    #[arg(skip)]
    pub multipart_threshold: Option<u64>,
    /// Fail when no byte has moved on any connection for this long (the server froze or the
    /// path went dark), retries included: 30s, 2m, 1h; 0 waits forever.
    #[arg(long, default_value = "2m", value_parser = parse_timeout, value_name = "DURATION")]
    pub stall_timeout: std::time::Duration,
}

/// What the objects `cp`, `mv` and `sync` write carry besides their bytes.
#[derive(Args, Debug, Clone, Default)]
pub struct Headers {
    /// Content-Type of the objects written (default: guessed from each file's extension, as
    /// the AWS CLI does; a server-side copy keeps the source's).
    #[arg(long, value_name = "TYPE")]
    pub content_type: Option<String>,
    /// Do not guess Content-Type from the extension.
    #[arg(long)]
    pub no_guess_mime_type: bool,
    /// Cache-Control of the objects written.
    #[arg(long, value_name = "VALUE")]
    pub cache_control: Option<String>,
    /// User metadata: KEY=VALUE[,KEY=VALUE...] (sent as x-amz-meta-KEY); on a server-side copy
    /// it replaces the source's metadata.
    #[arg(long, value_name = "KEY=VALUE,...", value_parser = parse_metadata)]
    pub metadata: Option<Metadata>,
    /// Storage class of the objects written (STANDARD, STANDARD_IA, GLACIER_IR...).
    #[arg(long, value_name = "CLASS")]
    pub storage_class: Option<String>,
    /// Content-Disposition of the objects written, e.g. 'attachment; filename="a.pdf"'.
    #[arg(long, value_name = "VALUE")]
    pub content_disposition: Option<String>,
    /// Content-Encoding of the objects written, e.g. gzip.
    #[arg(long, value_name = "VALUE")]
    pub content_encoding: Option<String>,
    /// Content-Language of the objects written, e.g. fr.
    #[arg(long, value_name = "VALUE")]
    pub content_language: Option<String>,
    /// Expires of the objects written: an HTTP date ('Tue, 01 Jan 2030 00:00:00 GMT'), an ISO
    /// 8601 time ('2030-01-01T00:00:00Z') or seconds since 1970, sent as an HTTP date.
    #[arg(long, value_name = "DATE", value_parser = crate::flags::parse_http_date)]
    pub expires: Option<String>,
    /// Where a website bucket redirects requests for the objects written.
    #[arg(long, value_name = "URL")]
    pub website_redirect: Option<String>,
    /// Canned ACL of the objects written.
    #[arg(long, value_name = "ACL", value_parser = ["private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read", "bucket-owner-read", "bucket-owner-full-control"])]
    pub acl: Option<String>,
    /// Grants on the objects written, as the AWS CLI's: PERMISSION=GRANTEE (read, readacl,
    /// writeacl or full; uri=..., id=... or emailaddress=..., several comma-separated), e.g.
    /// `read=uri=http://acs.amazonaws.com/groups/global/AllUsers full=id=CANONICAL_ID`.
    #[arg(long, value_name = "PERMISSION=GRANTEE", num_args = 1.., value_parser = crate::grants::parse_grant)]
    pub grants: Vec<crate::grants::Grant>,
    /// Server-side encryption of the objects written.
    #[arg(long, value_name = "ALGORITHM", value_parser = ["AES256", "aws:kms", "aws:kms:dsse"], conflicts_with = "sse_c")]
    pub sse: Option<String>,
    /// The KMS key of --sse aws:kms (an id, ARN or alias).
    #[arg(long, value_name = "KEY", requires = "sse")]
    pub sse_kms_key_id: Option<String>,
    /// What an S3-to-S3 copy does with the source's content headers and metadata: COPY keeps
    /// them (the header flags above are then not sent), REPLACE replaces them with the flags
    /// given, even none. Default: REPLACE when any header flag is given, else COPY. Uploads
    /// ignore it.
    #[arg(long, value_name = "DIRECTIVE", value_parser = ["COPY", "REPLACE"], ignore_case = true)]
    pub metadata_directive: Option<String>,
    #[command(flatten)]
    pub sse_c: SseC,
    /// The source of an S3-to-S3 copy is encrypted with a key you provide (SSE-C): AES256, the
    /// only algorithm, when no value follows. Needs --sse-c-copy-source-key.
    #[arg(long, value_name = "ALGORITHM", num_args = 0..=1, default_missing_value = "AES256", value_parser = ["AES256"], requires = "sse_c_copy_source_key")]
    pub sse_c_copy_source: Option<String>,
    /// The SSE-C key of the source of an S3-to-S3 copy, given as --sse-c-key is.
    #[arg(long, value_name = "KEY", value_parser = KeyParser, requires = "sse_c_copy_source")]
    pub sse_c_copy_source_key: Option<CustomerKey>,
}

/// SSE-C, as the AWS CLI's `--sse-c` and `--sse-c-key`: see `crate::customer_keys`.
#[derive(Args, Debug, Clone, Default)]
pub struct SseC {
    /// Server-side encryption with a key you provide (SSE-C): AES256, the only algorithm, when
    /// no value follows. Needs --sse-c-key.
    #[arg(long, value_name = "ALGORITHM", num_args = 0..=1, default_missing_value = "AES256", value_parser = ["AES256"], requires = "sse_c_key")]
    pub sse_c: Option<String>,
    /// The SSE-C key: its 32 bytes as typed (not base64), or fileb://PATH for a binary key in
    /// a file. Objects written are encrypted with it, objects read (downloads) opened with it.
    /// S3 takes it over HTTPS only.
    #[arg(long, value_name = "KEY", value_parser = KeyParser, requires = "sse_c")]
    pub sse_c_key: Option<CustomerKey>,
}

/// `--metadata`'s pairs (one flag value: clap would read a bare `Vec` as many values).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata(pub Vec<(String, String)>);

/// `a=1,b=2` as the AWS CLI's shorthand reads it.
fn parse_metadata(text: &str) -> Result<Metadata, String> {
    text.split(',')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
            _ => Err(format!("{pair:?} is not KEY=VALUE")),
        })
        .collect::<Result<_, _>>()
        .map(Metadata)
}

/// `--include` and `--exclude`, whose relative order matters: see `crate::filters`.
#[derive(Args, Debug, Clone, Default)]
pub struct Filters {
    /// Take names matching this pattern even if an earlier --exclude left them out.
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<String>,
    /// Leave out names matching this pattern (unless a later --include takes them).
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
}

/// `slipstream pipe`: what follows it, read again as `cp -` reads it.
#[derive(Args, Debug)]
pub struct PipeArgs {
    /// s3://bucket/key, and any cp flag.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_parser = clap::value_parser!(std::ffi::OsString))]
    pub args: Vec<std::ffi::OsString>,
}

/// Commands that take one `s3://` location.
#[derive(Args, Debug)]
pub struct ObjectArgs {
    /// s3://bucket[/key]
    pub target: String,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
}

/// `--case-conflict`'s values, the AWS CLI's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CaseConflictArg {
    #[default]
    Ignore,
    Warn,
    Skip,
    Error,
}

impl From<CaseConflictArg> for slipstream_transfer::CaseConflict {
    fn from(a: CaseConflictArg) -> Self {
        match a {
            CaseConflictArg::Ignore => Self::Ignore,
            CaseConflictArg::Warn => Self::Warn,
            CaseConflictArg::Skip => Self::Skip,
            CaseConflictArg::Error => Self::Error,
        }
    }
}

/// `mb`: a bucket, in the client's region, with tags if given.
#[derive(Args, Debug)]
pub struct MbArgs {
    #[command(flatten)]
    pub bucket: ObjectArgs,
    /// A tag for the bucket, `--tags KEY VALUE` (repeat for more), sent with CreateBucket as
    /// the AWS CLI's flag sends them.
    #[arg(long, num_args = 2, value_names = ["KEY", "VALUE"], action = clap::ArgAction::Append)]
    pub tags: Vec<String>,
}

/// `cat` and `head`: one object, or one version of it.
#[derive(Args, Debug)]
pub struct ReadArgs {
    #[command(flatten)]
    pub object: ObjectArgs,
    /// This version of the object (as s5cmd's --version-id), not the current one: `ls
    /// --all-versions` lists them.
    #[arg(long, value_name = "ID")]
    pub version_id: Option<String>,
    #[command(flatten)]
    pub sse_c: SseC,
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
  slipstream presign --post s3://my-bucket/uploads/'${filename}' --content-type image/png \
      --field acl=private --condition '[\"content-length-range\", 1, 10485760]'

Keys are read from the arguments, or one per line from standard input when there are none
(or the only argument is -). A line is a key of --bucket, or s3://bucket/key. Keys are signed
exactly as given: nothing is normalized. Exit codes: 0 ok, 1 a key could not be signed
(URLs before it were written), 2 flags or configuration.

--post prints a presigned POST for one key instead, as JSON {\"url\": ..., \"fields\": {...}}
(botocore's generate_presigned_post): a browser posts the fields, then the file, as
multipart/form-data to the url. Each --field also becomes a condition of the policy, as does
--content-type (a browser must send exactly it); --condition adds any other, in S3's JSON.";

/// How the bucket appears in the URL.
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
    /// Sign with SigV4A (ECDSA P-256) for the region: one URL valid in a set of regions, as
    /// multi-region access points need (`--region-set` names the set and implies this).
    #[arg(long)]
    pub sigv4a: bool,
    /// Print a presigned POST form (JSON: url and fields) for one key, for browser uploads.
    #[arg(long, conflicts_with_all = ["sigv4a", "region_set", "params", "version_id", "threads"])]
    pub post: bool,
    /// With --post: a form field NAME=VALUE (repeatable), also required by the policy.
    #[arg(long = "field", value_name = "NAME=VALUE", requires = "post")]
    pub fields: Vec<String>,
    /// With --post: a policy condition in JSON (repeatable), e.g.
    /// '["starts-with", "$key", "uploads/"]' or '["content-length-range", 0, 1048576]'.
    #[arg(long = "condition", value_name = "JSON", requires = "post")]
    pub conditions: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_flag_parses_into_its_type() {
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from([
            "slipstream",
            "sync",
            "d",
            "s3://b/p",
            "--metadata",
            "owner=me,team= s3",
            "--cache-control",
            "no-cache",
        ])
        .unwrap();
        let Command::Sync(a) = cli.command else {
            panic!("not sync")
        };
        let pairs = [("owner", "me"), ("team", " s3")].map(|(k, v)| (k.to_owned(), v.to_owned()));
        assert_eq!(a.headers.metadata, Some(Metadata(pairs.to_vec())));
        for bad in ["novalue", "=v", "a=1,"] {
            assert!(
                Cli::try_parse_from(["slipstream", "cp", "a", "s3://b/k", "--metadata", bad])
                    .is_err(),
                "{bad}"
            );
        }
    }
}
