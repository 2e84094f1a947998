//! One line per action, as the AWS CLI prints them (`copy: s3://a/k to s3://b/k`,
//! `delete: s3://b/k`, `(dryrun) ...`; failures on standard error as `delete failed: ...`), or
//! one JSON object per line with --json. Shared by the tasks of a many-object command, so a
//! write error (the reader went away) is kept and reported once, not a panic of `println!`.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::Failure;

/// Where a command's action lines go.
#[derive(Debug, Default)]
pub struct Printer {
    json: bool,
    quiet: bool,
    dryrun: bool,
    broken: Mutex<Option<std::io::Error>>,
}

impl Printer {
    /// Lines as JSON, or none but failures (`quiet`), or marked as a dry run.
    pub fn new(json: bool, quiet: bool, dryrun: bool) -> Self {
        Self {
            json,
            quiet,
            dryrun,
            broken: Mutex::new(None),
        }
    }

    /// `action` (copy, move, delete, upload, download) of `from` (to `to`) happened, or would.
    pub fn done(&self, action: &str, from: &str, to: Option<&str>) {
        if self.quiet {
            return;
        }
        let line = if self.json {
            let mut o = serde_json::json!({ "action": action, "source": from });
            if let Some(to) = to {
                o["destination"] = to.into();
            }
            if self.dryrun {
                o["dryrun"] = true.into();
            }
            o.to_string()
        } else {
            let dry = if self.dryrun { "(dryrun) " } else { "" };
            match to {
                Some(to) => format!("{dry}{action}: {from} to {to}"),
                None => format!("{dry}{action}: {from}"),
            }
        };
        self.write(&line);
    }

    /// `action` of `from` failed with `error`: standard error (and a JSON line with --json).
    pub fn failed(&self, action: &str, from: &str, error: &str) {
        if self.json {
            let o = serde_json::json!({ "action": action, "source": from, "error": error });
            self.write(&o.to_string());
        }
        eprintln!("{action} failed: {from}: {error}");
    }

    /// What a transfer of many calls for each object that fails while the others go on:
    /// `download failed: s3://b/k: <why>` on standard error (a JSON line too with --json), as
    /// the AWS CLI and s5cmd print each.
    pub fn failures(self: &Arc<Self>, action: &'static str) -> slipstream_transfer::ObjectFailed {
        let me = Arc::clone(self);
        Arc::new(move |name, error| me.failed(action, name, &error.to_string()))
    }

    /// The first write error, as the command's result (a broken pipe ends it quietly).
    pub fn finish(&self) -> Result<(), Failure> {
        match self.broken.lock().ok().and_then(|mut b| b.take()) {
            Some(e) => Err(Failure::from_write(&e)),
            None => Ok(()),
        }
    }

    fn write(&self, line: &str) {
        let Ok(mut broken) = self.broken.lock() else {
            return;
        };
        if broken.is_some() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, "{line}") {
            *broken = Some(e);
        }
    }
}

/// Exit 1 when objects of a transfer of many failed (each was named as it failed), as the AWS
/// CLI and s5cmd end such a run.
pub fn failures(failed: usize, moved: usize) -> Result<(), Failure> {
    match failed {
        0 => Ok(()),
        n => Err(Failure::input(format!(
            "{n} of {} objects failed (each named above); the others moved",
            n + moved
        ))),
    }
}

/// What a download of many objects prints of each case conflict it warns of or skips, in
/// the AWS CLI's words.
pub fn case_conflicts() -> slipstream_transfer::CaseConflictSeen {
    Arc::new(|source, dest, done| {
        let dest = dest.display();
        match done {
            slipstream_transfer::CaseConflict::Skip => eprintln!(
                "warning: Skipping {source} -> {dest} because a file whose name differs only \
                 by case either exists or is being downloaded."
            ),
            _ => eprintln!(
                "warning: Downloading {source} -> {dest} despite a file whose name differs \
                 only by case either existing or being downloaded. This behavior is not \
                 defined on case-insensitive filesystems and may result in overwriting \
                 existing files."
            ),
        }
    })
}

/// The entries an upload or sync left out because they are not files (FIFOs, sockets,
/// devices): a warning line each, as the AWS CLI prints, and the command's failure (exit 1), as
/// s5cmd fails for them, so a script does not take the copy for complete.
pub fn left_out(not_files: &[std::path::PathBuf]) -> Result<(), Failure> {
    for path in not_files {
        eprintln!(
            "warning: skipping {}: not a regular file (a FIFO, socket or device)",
            path.display()
        );
    }
    match not_files.len() {
        0 => Ok(()),
        n => Err(Failure::input(format!(
            "{n} entr{} left out: not regular files (see above)",
            if n == 1 { "y" } else { "ies" }
        ))),
    }
}
