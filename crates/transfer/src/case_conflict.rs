//! The AWS CLI's `--case-conflict`: a download of many objects onto a case-insensitive file
//! system (macOS's, Windows') where two keys differ only by case (`a.txt`, `A.txt`) writes both
//! to one file, the later over the earlier. Asked to, a download of a prefix (`cp`/`mv
//! --recursive`) or a sync to a directory looks for that and warns, skips the later object, or
//! fails.
//!
//! A destination conflicts when another object of the same command already took its name in
//! another case, or when a file exists there under another case (seen as: the path exists, but
//! its directory has no entry of exactly that name, which only a case-insensitive file system
//! shows). The AWS CLI counts only downloads still under way against each other; here every
//! object the command took counts, so the outcome does not hang on timing (and a case-sensitive
//! file system, where both files can be, still hears of it when it asks).

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::TransferError;

/// What to do about a destination whose name differs only by case from another's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaseConflict {
    /// Download it anyway, saying nothing (the AWS CLI's default).
    #[default]
    Ignore,
    /// Download it, and say so ([`CaseConflictSeen`]).
    Warn,
    /// Leave it, and say so.
    Skip,
    /// Fail the command (before any byte of a prefix's download moves).
    Error,
}

/// Told of each conflict found under `Warn` or `Skip`: the source (`s3://b/k`), the
/// destination, and which of the two was done.
pub type CaseConflictSeen = Arc<dyn Fn(&str, &Path, CaseConflict) + Send + Sync>;

/// The names a command took, to find conflicts among them.
pub(crate) struct Claims {
    mode: CaseConflict,
    seen: Option<CaseConflictSeen>,
    /// Destinations taken, lowercased.
    taken: Mutex<HashSet<String>>,
    /// Each directory's entries, as read once (`None`: unreadable).
    entries: Mutex<HashMap<PathBuf, Option<HashSet<OsString>>>>,
}

impl Claims {
    pub(crate) fn new(mode: CaseConflict, seen: Option<CaseConflictSeen>) -> Self {
        Self {
            mode,
            seen,
            taken: Mutex::new(HashSet::new()),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Whether conflicts are looked for at all (not under `Ignore`).
    pub(crate) fn watching(&self) -> bool {
        self.mode != CaseConflict::Ignore
    }

    /// Notes that `dest` is the command's (a file a sync leaves as it is, or downloads over),
    /// so another object named like it in another case conflicts with it.
    pub(crate) fn take(&self, dest: &Path) {
        if self.watching() {
            if let Ok(mut taken) = self.taken.lock() {
                taken.insert(lowered(dest));
            }
        }
    }

    /// Whether the object `source` names (`s3://b/k`, made only when a conflict is reported)
    /// is to be downloaded to `dest`: `Ok(false)` to leave it (`Skip`), an error under
    /// `Error`, the conflict reported under `Warn` and `Skip`; always `Ok(true)` under `Ignore`.
    pub(crate) fn admit(
        &self,
        source: impl FnOnce() -> String,
        dest: &Path,
    ) -> Result<bool, TransferError> {
        if self.mode == CaseConflict::Ignore {
            return Ok(true);
        }
        let taken_before = match self.taken.lock() {
            Ok(mut taken) => !taken.insert(lowered(dest)),
            Err(_) => false,
        };
        if !taken_before && !self.there_in_another_case(dest) {
            return Ok(true);
        }
        let source = source();
        if self.mode == CaseConflict::Error {
            return Err(TransferError::Invalid(format!(
                "Failed to download {source} -> {}: a file whose name differs only by case \
                 either exists or is being downloaded (--case-conflict error)",
                dest.display()
            )));
        }
        if let Some(seen) = &self.seen {
            seen(&source, dest, self.mode);
        }
        Ok(self.mode == CaseConflict::Warn)
    }

    /// Whether `dest` exists but its directory has no entry of exactly its name.
    fn there_in_another_case(&self, dest: &Path) -> bool {
        let (Some(dir), Some(name)) = (dest.parent(), dest.file_name()) else {
            return false;
        };
        if std::fs::symlink_metadata(dest).is_err() {
            return false;
        }
        let Ok(mut entries) = self.entries.lock() else {
            return false;
        };
        let names = entries.entry(dir.to_path_buf()).or_insert_with(|| {
            std::fs::read_dir(dir)
                .ok()
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
        });
        names.as_ref().is_some_and(|names| !names.contains(name))
    }
}

fn lowered(path: &Path) -> String {
    path.to_string_lossy().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_of_two_names_differing_by_case_conflicts_and_each_mode_acts() {
        let dir = tempfile::tempdir().unwrap();
        let (upper, lower) = (dir.path().join("A.txt"), dir.path().join("a.txt"));
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&heard);
        let seen: CaseConflictSeen =
            Arc::new(move |s, d, m| h.lock().unwrap().push((s.to_owned(), d.to_path_buf(), m)));
        let claims = |mode| Claims::new(mode, Some(Arc::clone(&seen)));
        let ignore = claims(CaseConflict::Ignore);
        assert!(ignore.admit(|| "s3://b/A.txt".into(), &upper).unwrap());
        assert!(ignore.admit(|| "s3://b/a.txt".into(), &lower).unwrap());
        let warn = claims(CaseConflict::Warn);
        assert!(warn.admit(|| "s3://b/A.txt".into(), &upper).unwrap());
        assert!(
            warn.admit(|| "s3://b/a.txt".into(), &lower).unwrap(),
            "downloaded anyway"
        );
        let skip = claims(CaseConflict::Skip);
        assert!(skip.admit(|| "s3://b/A.txt".into(), &upper).unwrap());
        assert!(
            !skip.admit(|| "s3://b/a.txt".into(), &lower).unwrap(),
            "left"
        );
        let error = claims(CaseConflict::Error);
        assert!(error.admit(|| "s3://b/A.txt".into(), &upper).unwrap());
        let e = error
            .admit(|| "s3://b/a.txt".into(), &lower)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("s3://b/a.txt") && e.contains("differs only by case"),
            "{e}"
        );
        assert_eq!(
            *heard.lock().unwrap(),
            [
                ("s3://b/a.txt".into(), lower.clone(), CaseConflict::Warn),
                ("s3://b/a.txt".into(), lower.clone(), CaseConflict::Skip),
            ]
        );
        // A file the command keeps (a sync's unchanged one) counts as taken.
        let kept = claims(CaseConflict::Skip);
        kept.take(&upper);
        assert!(!kept.admit(|| "s3://b/a.txt".into(), &lower).unwrap());
    }

    #[test]
    fn a_file_there_under_its_exact_name_is_no_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Report.csv");
        std::fs::write(&path, b"x").unwrap();
        let claims = Claims::new(CaseConflict::Error, None);
        assert!(claims.admit(|| "s3://b/Report.csv".into(), &path).unwrap());
        assert!(!claims.there_in_another_case(&dir.path().join("missing")));
    }
}
