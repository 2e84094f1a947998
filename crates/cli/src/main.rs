//! The `slipstream` command. It parses flags, calls the library crates and maps errors to exit
//! codes; the work itself is in `slipstream-sign`, `slipstream-s3`, `slipstream-client` and
//! `slipstream-transfer`.
//!
//! Exit codes: 0 success (also when the reader of our output goes away: a broken pipe is not an
//! error), 1 bad input data (a key line that cannot be signed) or a failed transfer, 2 usage or
//! configuration (flags, credentials, region, endpoint), 128 + N a transfer stopped by signal N
//! after cleaning up (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).

mod actions;
mod args;
mod authority;
mod bench;
mod bench_args;
mod bucket_version;
mod cat;
mod copy_many;
mod copying;
mod customer_keys;
mod filters;
mod flag_order;
mod flags;
mod gateway;
mod gateway_keys;
mod grants;
mod listing;
mod location;
mod made_dirs;
mod objects;
mod open_files;
mod presign;
mod presign_post;
mod progress;
mod remove;
mod run;
mod syncing;
mod tuning;
mod usage;
mod verify_url;
mod versions;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

/// mimalloc instead of glibc's allocator: the gateway's request path makes many small,
/// short-lived allocations (headers, canonical strings, the access-log line), and glibc's
/// malloc and free were 5 µs of its CPU per request (docs/BENCHMARKS.md, issue 18).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// Exit 1: input data that cannot be processed.
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            code: 1,
            message: message.into(),
        }
    }

    /// Exit 2: flags or configuration.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
        }
    }

    /// Stopped by signal `number` after cleaning up: exit 128 + `number`, as a shell reports a
    /// process the signal ended.
    pub fn signalled(number: u8, message: impl Into<String>) -> Self {
        Self {
            code: 128 + number,
            message: message.into(),
        }
    }

    /// Not a failure: the reader closed the pipe, stop quietly.
    pub fn broken_pipe() -> Self {
        Self {
            code: 0,
            message: String::new(),
        }
    }

    /// Writing output failed: a broken pipe ends quietly, anything else is an error.
    pub fn from_write(e: &std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Self::broken_pipe()
        } else {
            Self {
                code: 1,
                message: format!("cannot write output: {e}"),
            }
        }
    }
}

/// The credentials to sign with now: fixed ones as they are, others (web identity, container,
/// instance metadata) fetched once. Presigned URLs made with temporary credentials stop working
/// when those credentials expire, as with the AWS CLI.
pub fn credentials_now(
    resolved: &slipstream_client::Resolved,
) -> Result<slipstream_sign::Credentials, Failure> {
    resolved
        .credentials
        .fetch_blocking(resolved.ca_bundle.as_deref(), resolved.proxies.as_ref())
        .map(|e| e.credentials)
        .map_err(|e| {
            Failure::usage(format!(
                "no AWS credentials found in the environment or the shared files, and {e}; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run `aws configure`"
            ))
        })
}

/// `slipstream pipe DEST [FLAGS]`, s5cmd's: parsed again as `slipstream cp - DEST [FLAGS]`, so
/// that it takes every flag `cp` takes, and then run as that `cp` (`--help` shows cp's help).
fn pipe(a: args::PipeArgs) -> Result<(), Failure> {
    let argv = ["slipstream".into(), "cp".into(), "-".into()]
        .into_iter()
        .chain(a.args);
    let matches = args::Cli::command()
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| e.exit());
    let cli = args::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    match cli.command {
        args::Command::Cp(a) if a.destination.is_s3() => {
            filters::ordered(&a.filters, sub).and_then(|f| copying::cp(&a, f))
        }
        _ => Err(Failure::usage(
            "pipe uploads standard input to s3://bucket/key: `slipstream pipe s3://bucket/key`",
        )),
    }
}

fn main() -> ExitCode {
    open_files::raise();
    // Parsed in two steps: the matches keep where each --include/--exclude stood. Options
    // before the command (s5cmd's order) are read as the command's.
    let mut command = args::Cli::command();
    command.build();
    let argv = flag_order::command_first(&command, std::env::args_os().collect());
    let matches = command.get_matches_from(argv);
    let cli = args::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    let result = match cli.command {
        args::Command::Presign(a) => presign::run(&a),
        args::Command::VerifyUrl(a) => verify_url::run(&a),
        args::Command::Cp(a) => filters::ordered(&a.filters, sub).and_then(|f| copying::cp(&a, f)),
        args::Command::Mv(a) => filters::ordered(&a.filters, sub).and_then(|f| copying::mv(&a, f)),
        args::Command::Pipe(a) => pipe(a),
        args::Command::Sync(a) => {
            filters::ordered(&a.filters, sub).and_then(|f| syncing::run(&a, f))
        }
        args::Command::Run(a) => run::run(&a),
        args::Command::Ls(a) => filters::ordered(&a.filters, sub).and_then(|f| listing::ls(&a, f)),
        args::Command::Rm(a) => filters::ordered(&a.filters, sub).and_then(|f| remove::rm(&a, f)),
        args::Command::Rb(a) => remove::rb(&a),
        args::Command::Du(a) => filters::ordered(&a.filters, sub).and_then(|f| usage::du(&a, f)),
        args::Command::Cat(a) => cat::cat(&a),
        args::Command::Head(a) => objects::head(&a),
        args::Command::Mb(a) => objects::mb(&a),
        args::Command::BucketVersion(a) => bucket_version::bucket_version(&a),
        args::Command::Bench(a) => bench::run(a),
        args::Command::Gateway(a) => gateway::run(&a),
        args::Command::Authority(a) => authority::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("slipstream: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}
