//! `slipstream bench`: flags to [`slipstream_bench::Settings`], and the reports written out.

use std::path::Path;
use std::time::Duration;

use slipstream_bench::{
    compare, html, BenchError, ConnectionMode, Report, Settings, TlsVersion, Workload,
};
use slipstream_client::{resolve, Env};

use crate::bench_args::{BenchArgs, BenchCommand, CompareArgs, ConnectionArg, RunArgs, TlsArg};
use crate::Failure;

/// Runs a workload or a comparison.
pub fn run(a: BenchArgs) -> Result<(), Failure> {
    let (workload, r) = match a.command {
        BenchCommand::Compare(c) => return compare_reports(&c),
        BenchCommand::Put(r) => (Workload::Put, r),
        BenchCommand::Get(r) => (Workload::Get, r),
        BenchCommand::Head(r) => (Workload::Head, r),
        BenchCommand::Delete(r) => (Workload::Delete, r),
        BenchCommand::List(r) => (Workload::List, r),
        BenchCommand::Mixed(r) => {
            let mix = slipstream_bench::Mix::parse(&r.mix).map_err(Failure::usage)?;
            (Workload::Mixed(mix), r)
        }
        BenchCommand::PutHead(r) => (Workload::PutHead, r),
        BenchCommand::Presign(r) => (Workload::Presign, r),
        BenchCommand::Outposts(mut r) => {
            // The experiment: 5 workers x 10,000 objects of 4 KiB, each PUT then HEAD.
            r.concurrency = r.concurrency.or(Some(5));
            r.count = r.count.or(if r.duration.is_none() {
                Some(50_000)
            } else {
                None
            });
            (Workload::PutHead, r)
        }
    };
    let settings = settings(workload, &r)?;
    let resolved = resolve(&Env::from_process(), &r.connection.overrides())
        .map_err(|e| Failure::usage(e.to_string()))?;
    let credentials = crate::credentials_now(&resolved)?;
    let report = if settings.workload == Workload::Presign {
        let base = resolved
            .url_base(&settings.bucket)
            .map_err(|e| Failure::usage(e.to_string()))?;
        let presigner = slipstream_sign::Presigner::new(base, &resolved.region, credentials)
            .map_err(|e| Failure::usage(e.to_string()))?;
        slipstream_bench::presign::run(&settings, presigner).map_err(failed)?
    } else {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::input(format!("cannot start the I/O runtime: {e}")))?;
        rt.block_on(slipstream_bench::run::run(settings, &resolved, credentials))
            .map_err(failed)?
    };
    if !r.quiet {
        let to_stdout = r.json.as_deref() == Some(Path::new("-"));
        let table = report.table();
        if to_stdout {
            eprint!("{table}");
        } else {
            print!("{table}");
        }
    }
    if let Some(path) = &r.json {
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| Failure::input(format!("cannot encode the report: {e}")))?;
        write_out(path, &(json + "\n"))?;
    }
    if let Some(path) = &r.html {
        write_out(path, &html::report(&report))?;
    }
    if report.ops == 0 && report.errors > 0 {
        return Err(Failure::input(
            "every request failed (see the errors above)",
        ));
    }
    Ok(())
}

fn settings(workload: Workload, r: &RunArgs) -> Result<Settings, Failure> {
    let presign = workload == Workload::Presign;
    let bucket = match (&r.bucket, presign) {
        (Some(b), _) => b.clone(),
        (None, true) => "example-bucket".into(),
        (None, false) => return Err(Failure::usage(
            "--bucket is required: the run creates its objects there (and the bucket if missing)",
        )),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let concurrency = r
        .concurrency
        .map_or(if presign { cores } else { 8 }, usize::from);
    let count = match (r.count, r.duration) {
        (None, None) => Some(1000),
        (c, _) => c,
    };
    if r.rate.is_some_and(|x| !(x > 0.0 && x.is_finite())) {
        return Err(Failure::usage(
            "--rate must be a positive number of operations per second",
        ));
    }
    if r.objects == 0 {
        return Err(Failure::usage("--objects must be at least 1"));
    }
    let size = r.size.unwrap_or(4096);
    if size > 5 << 30 {
        return Err(Failure::usage("--size is at most 5GiB (a single PUT)"));
    }
    Ok(Settings {
        workload,
        bucket,
        size,
        count,
        duration: r.duration,
        concurrency,
        warmup: r.warmup.unwrap_or(concurrency as u64),
        idle: r.idle,
        rate: r.rate,
        objects: r.objects,
        prefixes: r.prefixes,
        prefix: r.prefix.clone(),
        connection: match r.connections {
            ConnectionArg::Pooled => ConnectionMode::Pooled,
            ConnectionArg::Fresh => ConnectionMode::Fresh,
        },
        tls: match r.tls {
            TlsArg::Auto => TlsVersion::Auto,
            TlsArg::V13 => TlsVersion::V13,
            TlsArg::V12 => TlsVersion::V12,
        },
        cleanup: !r.keep,
        timeout: Duration::from_secs(r.timeout.max(1)),
        progress: !r.quiet,
    })
}

fn compare_reports(c: &CompareArgs) -> Result<(), Failure> {
    let read = |p: &Path| -> Result<Report, Failure> {
        let text = std::fs::read_to_string(p)
            .map_err(|e| Failure::usage(format!("cannot read {}: {e}", p.display())))?;
        let report: Report = serde_json::from_str(&text).map_err(|e| {
            Failure::usage(format!("{} is not a bench --json report: {e}", p.display()))
        })?;
        if report.schema != slipstream_bench::report::SCHEMA {
            return Err(Failure::usage(format!(
                "{} has schema {}, this slipstream reads {}",
                p.display(),
                report.schema,
                slipstream_bench::report::SCHEMA
            )));
        }
        Ok(report)
    };
    let (a, b) = (read(&c.a)?, read(&c.b)?);
    let (an, bn) = (c.a.display().to_string(), c.b.display().to_string());
    print!("{}", compare::table(&a, &b, &an, &bn));
    if let Some(path) = &c.html {
        write_out(path, &compare::html(&a, &b, &an, &bn))?;
    }
    Ok(())
}

/// Writes a report to `path` (`-`: standard output).
fn write_out(path: &Path, text: &str) -> Result<(), Failure> {
    if path == Path::new("-") {
        use std::io::Write;
        return std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| Failure::from_write(&e));
    }
    std::fs::write(path, text)
        .map_err(|e| Failure::input(format!("cannot write {}: {e}", path.display())))
}

/// The exit code follows from who caused the error: flags and configuration exit 2, the
/// server, the network and this machine 1.
fn failed(e: BenchError) -> Failure {
    match e {
        BenchError::Settings(_) | BenchError::Config(_) => Failure::usage(e.to_string()),
        _ => Failure::input(e.to_string()),
    }
}
