//! The flags of `slipstream bench`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::flags::{parse_duration, parse_size, Connection};

pub const BENCH_EXAMPLES: &str = "\
Examples:
  slipstream bench get --bucket b --size 4KiB --count 2000 --concurrency 1 --json out.json
  slipstream bench put --bucket b --size 1MiB --duration 30s --concurrency 16 --html put.html
  slipstream bench head --bucket b --connections fresh --endpoint-url https://s3.example:9000
  slipstream bench mixed --bucket b --mix get=60,put=30,delete=10 --rate 500 --duration 1m
  slipstream bench outposts --bucket b            (5 workers x 10,000 PUT then HEAD, 4 KiB)
  slipstream bench presign --count 1000000 --concurrency 2
  slipstream bench compare before.json after.json --html compare.html

Each run creates its objects under slipstream-bench/RUN-ID/ in the bucket (creating the bucket
if needed) and deletes them at the end (--keep to leave them). Latency counts from the start
of a request (its scheduled time with --rate) to its last byte; time to first byte to the first
response byte on the socket. The JSON schema is in docs/bench-json.md.";

/// `slipstream bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: BenchCommand,
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// PUT new objects of --size.
    Put(RunArgs),
    /// GET (whole body) objects uploaded before the run (--objects of them).
    Get(RunArgs),
    /// HEAD objects uploaded before the run.
    Head(RunArgs),
    /// DELETE objects uploaded before the run, each once (needs --count).
    Delete(RunArgs),
    /// LIST one page (up to 1,000 keys) of a prefix holding --objects objects.
    List(RunArgs),
    /// A weighted mix of GET, HEAD, PUT and DELETE (--mix).
    Mixed(RunArgs),
    /// PUT an object then HEAD it; --count pairs.
    #[command(name = "put-head")]
    PutHead(RunArgs),
    /// The AWS Outposts experiment: put-head, 4 KiB, 5 workers x 10,000 (flags still apply).
    Outposts(RunArgs),
    /// Presign GET URLs: CPU only, no server.
    Presign(RunArgs),
    /// Compare two --json reports: each percentile of A and B and their ratio.
    Compare(CompareArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The bucket to use (created if missing). Presign: any name (default example-bucket).
    #[arg(long, short)]
    pub bucket: Option<String>,
    #[command(flatten)]
    pub connection: Connection,
    /// Object size (suffixes KiB, MiB, GiB) [default: 4KiB].
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Operations to measure [default: 1000; outposts: 50000].
    #[arg(long, conflicts_with = "duration", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Measure for this long instead (30s, 2m, 500ms).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// Requests in flight (workers; presign: threads) [default: 8; outposts: 5; presign: cores].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub concurrency: Option<u16>,
    /// Unrecorded operations first, spread over the workers [default: one per worker].
    #[arg(long)]
    pub warmup: Option<u64>,
    /// Stay quiet this long after the set-up and warm-up, then measure (2m, 25s): traffic that
    /// returns after proxies' and servers' idle timeouts have closed their connections.
    #[arg(long, value_parser = parse_duration)]
    pub idle: Option<std::time::Duration>,
    /// Open loop: start this many operations per second in total, late or not.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Objects uploaded before get, head, list and mixed runs.
    #[arg(long, default_value_t = 100)]
    pub objects: u64,
    /// Sub-prefixes to spread keys over.
    #[arg(long, default_value_t = 1)]
    pub prefixes: u64,
    /// Root of the run's keys instead of slipstream-bench/RUN-ID/ (end it with /).
    #[arg(long)]
    pub prefix: Option<String>,
    /// Mixed workload weights.
    #[arg(long, default_value = "get=45,head=30,put=15,delete=10")]
    pub mix: String,
    /// Keep connections (pooled) or open one per request (fresh, TLS handshake included).
    #[arg(long, value_enum, default_value_t = ConnectionArg::Pooled)]
    pub connections: ConnectionArg,
    /// TLS versions for https:// endpoints.
    #[arg(long, value_enum, default_value_t = TlsArg::Auto)]
    pub tls: TlsArg,
    /// A request not finished after this many seconds is an error.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Write the JSON report here (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the HTML report (self-contained, with plots) here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Leave the run's objects in the bucket.
    #[arg(long)]
    pub keep: bool,
    /// No live line and no table (errors and reports only).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline report (JSON of `bench --json`).
    pub a: PathBuf,
    /// The report compared with it.
    pub b: PathBuf,
    /// Also write an HTML page with both runs in one plot.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ConnectionArg {
    Pooled,
    Fresh,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TlsArg {
    Auto,
    #[value(name = "1.3")]
    V13,
    #[value(name = "1.2")]
    V12,
}
