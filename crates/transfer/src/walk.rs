//! The files of a local directory tree, as uploads and syncs see them: regular files, named by
//! their `/`-separated path below the root, with symbolic links followed by default as the AWS
//! CLI and s5cmd follow them (a link to a file is that file; a link to a directory, its tree).
//! Skipping them silently, as this walk once did, left linked files out of an upload without a
//! word. For the same reason the entries that are no files at all (FIFOs, sockets, devices) are
//! left out but named, so the caller can say so, as s5cmd and the AWS CLI do.

use std::path::{Path, PathBuf};

use slipstream_s3::pattern::{Filters, Pattern};

use crate::error::at;
use crate::TransferError;

/// What a walk does with a symbolic link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Links {
    /// Read what it points to (`--follow-symlinks`, the AWS CLI's and s5cmd's default). A link
    /// to nothing is an error, before anything moves; a link back to a directory the walk is
    /// already inside is left out (everything under it is already listed under that
    /// directory's own name).
    #[default]
    Follow,
    /// Leave links out (`--no-follow-symlinks`).
    Skip,
}

impl Links {
    /// `Follow` when `yes` (a `--no-follow-symlinks` flag or a `follow_symlinks` keyword read).
    pub fn follow(yes: bool) -> Self {
        if yes {
            Links::Follow
        } else {
            Links::Skip
        }
    }
}

/// What a walk found below a directory.
#[derive(Debug, Default)]
pub struct Walked {
    /// Every regular file, with its path relative to the directory in `/` form (what the
    /// filters see, and what an upload appends to its prefix), sorted by it.
    pub files: Vec<(PathBuf, String)>,
    /// The entries that are neither files nor directories (FIFOs, sockets, devices), which
    /// nothing can upload: left out, and named here to be reported.
    pub not_files: Vec<PathBuf>,
}

/// What is below `dir` that `filters` take (an excluded FIFO is not reported either). Under
/// a local glob (`Filters::within_paths`) the entries it rules out are not read at all: not
/// followed, not descended into.
pub fn walk_files(dir: &Path, filters: &Filters, links: Links) -> Result<Walked, TransferError> {
    let mut walked = walk(dir, links, filters)?;
    walked.files.retain(|(_, rel)| filters.takes(rel));
    walked
        .not_files
        .retain(|(_, rel)| rel.as_ref().map_or(true, |rel| filters.takes(rel)));
    Ok(Walked {
        files: walked.files,
        not_files: walked.not_files.into_iter().map(|(p, _)| p).collect(),
    })
}

/// A local source given as a glob (`logs/2026-*/*.csv`, quoted so the shell left it, as
/// s5cmd takes it) that names no file itself: the directory to walk (its literal part up to
/// the last `/`; `.` when it has none), the rest bounding `filters` (`within_paths`), names
/// relative to that directory. `None`, `filters` untouched, for a path that exists (a file
/// named `a*b` is that file), has no wildcard, or is not UTF-8.
pub fn glob_root(path: &Path, filters: &mut Filters) -> Result<Option<PathBuf>, TransferError> {
    let Some(text) = path.to_str() else {
        return Ok(None);
    };
    if !Pattern::has_wildcard(text) || path.symlink_metadata().is_ok() {
        return Ok(None);
    }
    let invalid = |e: slipstream_s3::Error| TransferError::Invalid(e.to_string());
    let pattern = Pattern::new(text).map_err(invalid)?;
    let (directory, rest) = pattern.split_directory();
    filters.within_paths(rest).map_err(invalid)?;
    Ok(Some(PathBuf::from(match directory {
        "" => ".",
        d => d,
    })))
}

/// A walk's findings before the filters: the names of entries that are not files are kept
/// when they are UTF-8 (a filter may leave one out), else `None` (reported whatever the filters).
#[derive(Debug)]
struct Found {
    files: Vec<(PathBuf, String)>,
    not_files: Vec<(PathBuf, Option<String>)>,
}

/// A directory to read, and where the walk came through to reach it: the real (canonical)
/// path of it and of each directory above it, to tell a link that leads back up.
struct Pending {
    path: PathBuf,
    real: Vec<PathBuf>,
}

/// Every entry below `dir` (see [`walk_files`]).
/// Whether `path` (followed through links) exists as something other than a file or a
/// directory: a character or block device, a FIFO, a socket. Named in a walk and left out;
/// named alone, read or written as a stream, in order (`upload_file`, `download_to_file`).
pub(crate) fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

fn walk(dir: &Path, links: Links, filters: &Filters) -> Result<Found, TransferError> {
    let mut out = Vec::new();
    let mut not_files = Vec::new();
    let mut stack = vec![Pending {
        path: dir.to_path_buf(),
        real: vec![std::fs::canonicalize(dir).map_err(at(dir))?],
    }];
    while let Some(Pending { path: d, real }) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(at(&d))? {
            let entry = entry.map_err(at(&d))?;
            let path = entry.path();
            if filters.prunes()
                && !relative(dir, &path).is_ok_and(|rel| filters.may_take_below(&rel))
            {
                continue; // outside the glob (a name that is not UTF-8 never matches one)
            }
            let mut kind = entry.file_type().map_err(at(&path))?;
            let mut here = None;
            if kind.is_symlink() {
                if links == Links::Skip {
                    continue;
                }
                kind = std::fs::metadata(&path)
                    .map_err(|e| broken_link(&path, &e))?
                    .file_type();
                if kind.is_dir() {
                    let target =
                        std::fs::canonicalize(&path).map_err(|e| broken_link(&path, &e))?;
                    if real.contains(&target) {
                        continue; // a loop: its files are listed under their own names
                    }
                    here = Some(target);
                }
            }
            if kind.is_dir() {
                let mut chain = real.clone();
                // A real directory's real path is its parent's plus its name.
                chain.push(here.unwrap_or_else(|| real[real.len() - 1].join(entry.file_name())));
                stack.push(Pending { path, real: chain });
            } else if kind.is_file() {
                let rel = relative(dir, &path)?;
                out.push((path, rel));
            } else {
                let rel = relative(dir, &path).ok();
                not_files.push((path, rel));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    not_files.sort();
    Ok(Found {
        files: out,
        not_files,
    })
}

fn broken_link(path: &Path, e: &std::io::Error) -> TransferError {
    TransferError::Invalid(format!(
        "{} is a symbolic link that cannot be followed ({e}): remove it, or pass --no-follow-symlinks to leave links out",
        path.display()
    ))
}

/// `path` below `dir` as a key suffix: its components joined by `/`, each valid UTF-8.
fn relative(dir: &Path, path: &Path) -> Result<String, TransferError> {
    Ok(path
        .strip_prefix(dir)
        .map_err(|e| TransferError::Io(std::io::Error::other(e)))?
        .components()
        .map(|c| c.as_os_str().to_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            TransferError::Invalid(format!(
                "{} is not valid UTF-8: S3 keys must be",
                path.display()
            ))
        })?
        .join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use slipstream_s3::pattern::Rule;

    fn names(dir: &Path, links: Links) -> Vec<String> {
        walk(dir, links, &Filters::new())
            .unwrap()
            .files
            .into_iter()
            .map(|(_, rel)| rel)
            .collect()
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_once_and_loops_left_out() {
        use std::os::unix::fs::symlink;
        let root = tempfile::tempdir().unwrap();
        let (t, other) = (root.path().join("t"), root.path().join("other"));
        std::fs::create_dir_all(t.join("real")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(t.join("real/f"), b"1").unwrap();
        std::fs::write(other.join("g"), b"2").unwrap();
        symlink("../other", t.join("linkdir")).unwrap();
        symlink("real/f", t.join("linkfile")).unwrap();
        symlink("..", t.join("real/up")).unwrap(); // back to t: a loop
        symlink(&t, other.join("back")).unwrap(); // t -> other -> t: a loop through two
        assert_eq!(
            names(&t, Links::Follow),
            ["linkdir/g", "linkfile", "real/f"]
        );
        assert_eq!(names(&t, Links::Skip), ["real/f"]);
        symlink("nowhere", t.join("broken")).unwrap();
        let e = walk(&t, Links::Follow, &Filters::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("broken") && e.contains("--no-follow-symlinks"),
            "{e}"
        );
        assert_eq!(names(&t, Links::Skip), ["real/f"]);
    }

    #[cfg(unix)]
    #[test]
    fn entries_that_are_not_files_are_named_unless_filtered_out() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("d")).unwrap();
        std::fs::write(t.path().join("d/f"), b"1").unwrap();
        let _a = std::os::unix::net::UnixListener::bind(t.path().join("a.sock")).unwrap();
        let _b = std::os::unix::net::UnixListener::bind(t.path().join("d/b.sock")).unwrap();
        let walked = walk_files(t.path(), &Filters::default(), Links::Follow).unwrap();
        let files: Vec<_> = walked.files.iter().map(|(_, rel)| rel.as_str()).collect();
        assert_eq!(files, ["d/f"]);
        assert_eq!(
            walked.not_files,
            [t.path().join("a.sock"), t.path().join("d/b.sock")]
        );
        let mut filters = Filters::default();
        filters.push(Rule::Exclude, "*.sock").unwrap();
        let walked = walk_files(t.path(), &filters, Links::Follow).unwrap();
        assert!(walked.not_files.is_empty(), "{:?}", walked.not_files);
    }

    #[cfg(unix)]
    #[test]
    fn a_glob_reads_only_what_it_can_match() {
        let t = tempfile::tempdir().unwrap();
        for f in [
            "2026-01/a.gz",
            "2026-01/x/b.gz",
            "2026-02/c.gz/d",
            "2025-12/e.gz",
        ] {
            let path = t.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, b"1").unwrap();
        }
        // A broken link the glob rules out is never followed, so it is no error.
        std::os::unix::fs::symlink("nowhere", t.path().join("2025-12/broken")).unwrap();
        let mut glob = Filters::new();
        glob.within_paths("2026-*/*.gz").unwrap();
        let walked = walk_files(t.path(), &glob, Links::Follow).unwrap();
        let files: Vec<_> = walked.files.iter().map(|(_, rel)| rel.as_str()).collect();
        assert_eq!(files, ["2026-01/a.gz", "2026-02/c.gz/d"]);
        let e = walk_files(t.path(), &Filters::new(), Links::Follow).unwrap_err();
        assert!(e.to_string().contains("broken"), "{e}");
    }
}
