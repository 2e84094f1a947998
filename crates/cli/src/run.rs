//! `run`: many `cp`, `mv`, `rm` and `sync` commands, one per line of a file or standard input, in one
//! process over one connection pool, as s5cmd's `run`. A script that moves a million objects
//! as a million `slipstream cp` processes pays a process start, a credential lookup and a TLS
//! handshake per object; here it pays each once.
//!
//! Lines are read and parsed on a thread of their own while earlier lines run, so the file is
//! never held in memory and the first command starts at once. What each line does is
//! `copying::copy`, `remove::remove_targets` and `syncing::synced`, the same code as the
//! commands themselves.

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, CommandFactory, FromArgMatches};
use slipstream_client::{S3Client, TransferSettings};
use slipstream_s3::pattern::Filters;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;

use crate::actions::{left_out, Printer};
use crate::args::{Cli, Command, CpArgs};
use crate::copying::{copy, reads_many, Plan};
use crate::flags::{Connection, Transport};
use crate::objects::{interruptible, runtime, transfer_client};
use crate::remove::{remove_targets, RmArgs};
use crate::syncing::SyncArgs;
use crate::Failure;

/// The most lines a run keeps in flight.
const MAX_WORKERS: usize = 4096;

pub const RUN_EXAMPLES: &str = "\
Examples:
  slipstream run commands.txt
  generate-commands | slipstream run --endpoint-url http://127.0.0.1:7070
  slipstream run commands.txt --workers 64 --quiet

commands.txt, one command per line as it would follow `slipstream` (blank lines and lines
starting with # are skipped; quote with ' or \" as in a shell):
  cp s3://my-bucket/a.csv ./data/a.csv
  cp --content-type text/html ./site/index.html s3://my-bucket/site/
  mv s3://my-bucket/inbox/b.csv s3://my-bucket/done/b.csv
  rm s3://my-bucket/tmp/c.csv
  cp --recursive s3://my-bucket/2026/ ./2026/
  sync ./site/ s3://my-bucket/site/ --delete

Every line shares one connection pool and one budget of multipart parts in flight; --workers
lines run at once (default: 4 from a server within 2 ms, 64 within 20 ms, 256 beyond, chosen by
the first line's bucket), in no fixed order. Connection flags (--endpoint-url, --profile,
--region, --no-sign-request, --request-payer, --page-size...) go before or after `run`, not on
the lines. A line that fails is reported with
its number and the rest go on. Exit codes: 0 every line succeeded, 1 some line failed or could
not be parsed, 2 flags or configuration of `run` itself, 130/143/129 stopped by a signal.";

/// `slipstream run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// A file of commands, one per line; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub transport: Transport,
    /// Lines in flight at once, in no set order (default: the profile's
    /// s3.max_concurrent_requests, else chosen by the first line's server, as --objects is).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=MAX_WORKERS as i64))]
    pub workers: Option<u16>,
    /// Multipart parts in flight across every line (each part holds up to --part-size).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub parts: u16,
    /// Print nothing but errors (also --only-show-errors, the AWS CLI's name for it).
    #[arg(long, short, visible_alias = "only-show-errors")]
    pub quiet: bool,
}

/// `slipstream run`.
pub fn run(a: &RunArgs) -> Result<(), Failure> {
    let input: Box<dyn BufRead + Send> = match &a.file {
        None => Box::new(std::io::BufReader::new(std::io::stdin())),
        Some(p) if p.as_os_str() == "-" => Box::new(std::io::BufReader::new(std::io::stdin())),
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p)
                .map_err(|e| Failure::usage(format!("cannot read {}: {e}", p.display())))?,
        )),
    };
    let (client, profile) = transfer_client(&a.connection, &a.transport)?;
    let started = Instant::now();
    let tally = runtime()?.block_on(interruptible(run_lines(a, input, client, profile)))??;
    let (ran, failed) = (tally.ran.load(Ordering::Relaxed), tally.failed());
    if !a.quiet {
        eprintln!(
            "run: {ran} line(s), {failed} failed ({:.2} s)",
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(f) = tally.stop.lock().ok().and_then(|mut s| s.take()) {
        return Err(f);
    }
    if failed > 0 {
        return Err(Failure::input(format!(
            "{failed} of {ran} line(s) failed (see above)"
        )));
    }
    Ok(())
}

/// One line of the file, parsed.
enum Job {
    Copy {
        args: Box<CpArgs>,
        filters: Filters,
        moving: bool,
    },
    Remove {
        args: Box<RmArgs>,
        filters: Filters,
    },
    Sync {
        args: Box<SyncArgs>,
        filters: Filters,
    },
}

impl Job {
    /// The bucket the line touches first, to choose the workers by its server's latency.
    fn bucket(&self) -> Option<String> {
        let target = match self {
            Job::Copy { args, .. } if args.source.is_s3() => args.source.url().ok()?,
            Job::Copy { args, .. } => args.destination.url().ok()?,
            Job::Remove { args, .. } => args.targets.first()?.as_str(),
            Job::Sync { args, .. } if args.source.is_s3() => args.source.url().ok()?,
            Job::Sync { args, .. } => args.destination.url().ok()?,
        };
        slipstream_s3::S3Uri::parse(target).ok().map(|u| u.bucket)
    }
}

/// A numbered line and what it parsed to (or why it did not).
struct Line {
    number: usize,
    text: String,
    job: Result<Job, String>,
}

/// How the lines went.
#[derive(Default)]
struct Tally {
    ran: AtomicUsize,
    failed: AtomicUsize,
    /// What stops the whole run: the reader of our output went away, the input failed.
    stop: std::sync::Mutex<Option<Failure>>,
}

impl Tally {
    fn failed(&self) -> usize {
        self.failed.load(Ordering::Relaxed)
    }

    fn fail(&self, number: usize, text: &str, message: &str) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        eprintln!("slipstream: line {number} ({}): {message}", text.trim());
    }
}

async fn run_lines(
    a: &RunArgs,
    input: Box<dyn BufRead + Send>,
    client: Arc<S3Client>,
    profile: TransferSettings,
) -> Result<Arc<Tally>, Failure> {
    let (tx, mut rx) = mpsc::channel::<Line>(1024);
    let connection = a.connection.clone();
    // The profile's s3.max_concurrent_requests stands for --workers, as for each line's flags.
    let workers_wanted = a.workers.map(usize::from).or(profile
        .max_concurrent_requests
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX).min(MAX_WORKERS)));
    let reader = tokio::task::spawn_blocking(move || read_lines(input, &connection, &profile, &tx));
    let tally = Arc::new(Tally::default());
    // Multipart parts of every line share this budget, so memory stays at parts x part size
    // however many lines move large objects at once.
    let parts = Arc::new(Semaphore::new(usize::from(a.parts)));
    let mut workers: Option<Arc<Semaphore>> = None;
    let quiet = a.quiet;
    let mut running = JoinSet::new();
    while let Some(line) = rx.recv().await {
        let job = match line.job {
            Ok(job) => job,
            Err(ref e) => {
                tally.ran.fetch_add(1, Ordering::Relaxed);
                tally.fail(line.number, &line.text, e);
                continue;
            }
        };
        let workers = match &workers {
            Some(w) => Arc::clone(w),
            None => {
                let n = match (workers_wanted, job.bucket()) {
                    (Some(n), _) => n,
                    (None, Some(bucket)) => {
                        slipstream_transfer::objects_in_flight(&client, &bucket, None, usize::MAX)
                            .await
                            .unwrap_or(slipstream_transfer::NEAR_OBJECTS)
                    }
                    (None, None) => slipstream_transfer::NEAR_OBJECTS,
                };
                Arc::clone(workers.insert(Arc::new(Semaphore::new(n))))
            }
        };
        let Ok(place) = workers.acquire_owned().await else {
            break;
        };
        if tally.stop.lock().map_or(true, |s| s.is_some()) {
            break;
        }
        let (client, tally, parts) = (Arc::clone(&client), Arc::clone(&tally), Arc::clone(&parts));
        let Line { number, text, .. } = line;
        running.spawn(async move {
            let result = execute(job, client, parts, quiet).await;
            tally.ran.fetch_add(1, Ordering::Relaxed);
            match result {
                Ok(()) => {}
                // A broken pipe (exit 0) stops the run quietly, as it stops any command.
                Err(f) if f.code == 0 => {
                    if let Ok(mut s) = tally.stop.lock() {
                        s.get_or_insert(f);
                    }
                }
                Err(f) => tally.fail(number, &text, &f.message),
            }
            drop(place);
        });
        while let Some(done) = running.try_join_next() {
            joined(done)?;
        }
    }
    drop(rx);
    while let Some(done) = running.join_next().await {
        joined(done)?;
    }
    match reader.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(e) => return Err(Failure::input(format!("the line reader failed: {e}"))),
    }
    Ok(tally)
}

fn joined(done: Result<(), tokio::task::JoinError>) -> Result<(), Failure> {
    done.map_err(|e| Failure::input(format!("a line's task failed: {e}")))
}

/// Reads and parses lines until the input ends or nobody listens; an unreadable input (not a
/// bad line, which is reported and skipped) is the run's error.
fn read_lines(
    input: Box<dyn BufRead + Send>,
    connection: &Connection,
    profile: &TransferSettings,
    tx: &mpsc::Sender<Line>,
) -> Result<(), Failure> {
    let mut command = Cli::command();
    for (i, text) in input.split(b'\n').enumerate() {
        let bytes = text.map_err(|e| Failure::input(format!("cannot read the commands: {e}")))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let job = match std::str::from_utf8(&bytes) {
            Ok(_) => parse(&mut command, trimmed, connection, profile),
            Err(_) => Err("the line is not valid UTF-8".to_owned()),
        };
        let line = Line {
            number: i + 1,
            text,
            job,
        };
        if tx.blocking_send(line).is_err() {
            break;
        }
    }
    Ok(())
}

/// One line as `slipstream` would read it after its name; the run's connection stands in
/// for the line's, which must not set its own.
fn parse(
    command: &mut clap::Command,
    line: &str,
    connection: &Connection,
    profile: &TransferSettings,
) -> Result<Job, String> {
    let words = shlex::split(line).ok_or("unbalanced quotes or a trailing backslash")?;
    let matches = command
        .try_get_matches_from_mut(std::iter::once("slipstream".to_owned()).chain(words))
        .map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("cannot parse");
            first.trim_start_matches("error: ").to_owned()
        })?;
    let cli = Cli::from_arg_matches(&matches).map_err(|e| e.to_string())?;
    let sub = matches.subcommand().map(|(_, m)| m);
    // Every line runs on the run's one client: its connection and transport flags.
    let own = |c: &Connection, t: &Transport| {
        if c.profile.is_some()
            || c.region.is_some()
            || c.endpoint_url.is_some()
            || c.addressing_style.is_some()
            || c.path_style
            || c.ca_bundle.is_some()
            || c.region_set.is_some()
            || c.no_sign_request
            || t.tcp_congestion.is_some()
            || t.page_size.is_some()
            || t.request_payer.is_some()
            || t.max_bandwidth.is_some()
            || t.cli_connect_timeout.is_some()
            || t.cli_read_timeout.is_some()
            || t.no_verify_ssl
            || t.debug
        {
            Err("connection flags (--endpoint-url, --profile, --region, --request-payer...) belong to `run`, not its lines".to_owned())
        } else {
            Ok(connection.clone())
        }
    };
    let filters = |f| crate::filters::ordered(f, sub).map_err(|e| e.message);
    match cli.command {
        Command::Cp(mut args) | Command::Mv(mut args) => {
            let moving = matches.subcommand_name() == Some("mv");
            args.connection = own(&args.connection, &args.transport)?;
            args.tuning = args.tuning.with_profile(profile);
            if args.source.is_stdio() || args.destination.is_stdio() {
                return Err("a line cannot read standard input or write standard output".into());
            }
            let filters = filters(&args.filters)?;
            Ok(Job::Copy {
                args: Box::new(args),
                filters,
                moving,
            })
        }
        Command::Rm(mut args) => {
            args.connection = own(&args.connection, &args.transport)?;
            let filters = filters(&args.filters)?;
            Ok(Job::Remove {
                args: Box::new(args),
                filters,
            })
        }
        Command::Sync(mut args) => {
            args.connection = own(&args.connection, &args.transport)?;
            if args.source_service.source_endpoint_url.is_some()
                || args.source_service.source_profile.is_some()
                || args.source_service.source_region.is_some()
            {
                return Err("a sync line reads its source with the run's client: no --source-endpoint-url, --source-profile or --source-region".into());
            }
            args.tuning = args.tuning.with_profile(profile);
            let filters = filters(&args.filters)?;
            Ok(Job::Sync {
                args: Box::new(args),
                filters,
            })
        }
        _ => Err("run takes cp, mv, rm and sync lines".into()),
    }
}

/// Runs one parsed line on the shared client.
/// `quiet`: the run's --quiet, which quiets every line.
async fn execute(
    job: Job,
    client: Arc<S3Client>,
    parts: Arc<Semaphore>,
    quiet: bool,
) -> Result<(), Failure> {
    match job {
        Job::Copy {
            args,
            filters,
            moving,
        } => {
            let a = &*args;
            let many = reads_many(a, &filters, moving)?;
            let printer = Arc::new(Printer::new(a.json, quiet || a.quiet, a.dryrun));
            let plan = Plan {
                a,
                filters,
                moving,
                many,
                printer: Arc::clone(&printer),
            };
            let sides = (a.source.is_s3(), a.destination.is_s3());
            let mut opts = a.tuning.transfer_options(None, &a.headers, sides)?;
            opts.shared_parts = Some(parts);
            let moved = copy(&plan, client, opts).await?;
            if !many && !a.dryrun {
                let to = moved.destination(&a.destination);
                printer.done(moved.action(moving), &a.source.to_string(), Some(&to));
            }
            printer.finish()?;
            moved.failures()?;
            left_out(moved.not_files())
        }
        Job::Sync { args, filters } => {
            let quiet = quiet || args.quiet;
            let printer = Arc::new(Printer::new(args.json, quiet, args.dryrun));
            let sides = crate::syncing::sides(&args, filters)?;
            let how = (&args.tuning, None, None);
            let synced = crate::syncing::synced(&args, client, sides, how, Some(parts), &printer);
            let done = synced.await?;
            crate::syncing::report(&args, done, &printer, quiet)
        }
        Job::Remove { args, filters } => {
            let printer = Arc::new(Printer::new(args.json, quiet || args.quiet, args.dryrun));
            let failures = remove_targets(&args, &client, filters, &printer).await?;
            printer.finish()?;
            if failures > 0 {
                return Err(Failure::input(format!(
                    "{failures} object(s) could not be deleted"
                )));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<Job, String> {
        let connection = Connection {
            profile: None,
            region: Some("eu-west-1".into()),
            endpoint_url: Some("http://127.0.0.1:1".into()),
            addressing_style: None,
            path_style: false,
            ca_bundle: None,
            region_set: None,
            no_sign_request: false,
        };
        parse(
            &mut Cli::command(),
            line,
            &connection,
            &TransferSettings::default(),
        )
    }

    #[test]
    fn lines_parse_as_the_commands_with_the_runs_connection() {
        let Ok(Job::Copy {
            args,
            moving,
            filters,
        }) = parsed("mv --recursive 's3://b/a dir/' ./x --exclude '*' --include '*.gz'")
        else {
            panic!("not a copy");
        };
        assert!(moving && args.recursive);
        assert_eq!(args.source, "s3://b/a dir/".into());
        assert_eq!(args.connection.region.as_deref(), Some("eu-west-1"));
        assert!(filters.takes("x.gz") && !filters.takes("x.txt"));
        let Ok(Job::Remove { args, .. }) = parsed("rm s3://b/k1 s3://b/k2") else {
            panic!("not a remove");
        };
        assert_eq!(args.targets, ["s3://b/k1", "s3://b/k2"]);
        let Ok(Job::Sync { args, filters }) =
            parsed("sync ./d s3://b/d/ --delete --exclude '*.tmp'")
        else {
            panic!("not a sync");
        };
        assert!(args.delete && !filters.takes("x.tmp") && filters.takes("x.csv"));
        assert_eq!(args.connection.region.as_deref(), Some("eu-west-1"));
    }

    #[test]
    fn bad_lines_say_why() {
        for (line, why) in [
            ("cp 's3://b/k ./x", "quotes"),
            ("cp s3://b/k", "required"),
            ("ls s3://b/", "cp, mv, rm and sync"),
            (
                "sync ./a s3://b/a/ --source-region eu-west-2",
                "the run's client",
            ),
            ("cp s3://b/k ./x --endpoint-url http://x", "belong to `run`"),
            ("rm s3://b/k --no-sign-request", "belong to `run`"),
            ("cp s3://b/k ./x --request-payer", "belong to `run`"),
            ("cp s3://b/k ./x --page-size 5", "belong to `run`"),
            ("cp s3://b/k -", "standard output"),
            ("cp --frobnicate s3://b/k ./x", "--frobnicate"),
        ] {
            match parsed(line) {
                Err(e) => assert!(e.contains(why), "{line}: {e}"),
                Ok(_) => panic!("{line} parsed"),
            }
        }
    }
}
