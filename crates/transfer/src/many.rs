//! Many objects: a prefix (or a wildcard's matches) to a directory and a directory to a
//! prefix, with two knobs: objects in flight, and parts in flight per object
//! (`TransferOptions::concurrency`); `--include`/`--exclude` filters on names relative to the
//! source; a call after each object, which `mv` uses to delete that object's source.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use slipstream_client::S3Client;
use slipstream_s3::pattern::Filters;

use crate::pool::for_each_part;
use crate::select::Selection;
use crate::TransferError;
use crate::{download_to_file, upload_file, TransferOptions};

/// What a many-object transfer moved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Many {
    /// Objects moved.
    pub objects: usize,
    /// Bytes moved.
    pub bytes: u64,
}

impl Many {
    /// The total of objects of these sizes.
    fn of(sizes: &[u64]) -> Self {
        Self {
            objects: sizes.len(),
            bytes: sizes.iter().sum(),
        }
    }
}

/// Called after each object of a many-object transfer is complete and checked, with its
/// source (a key or a local path), its destination and its size.
pub type ObjectDone = Arc<dyn Fn(&str, &str, u64) + Send + Sync>;

/// Which objects a many-object transfer takes and how many move at once.
#[derive(Clone)]
pub struct ManyOptions {
    /// Objects in flight at once.
    pub objects: usize,
    /// Names (relative to the source) to take or leave.
    pub filters: Filters,
    /// Called as each object completes.
    pub on_object: Option<ObjectDone>,
}

impl std::fmt::Debug for ManyOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManyOptions")
            .field("objects", &self.objects)
            .field("filters", &self.filters)
            .finish_non_exhaustive()
    }
}

impl ManyOptions {
    /// `objects` at a time, every name, nobody called.
    pub fn new(objects: usize) -> Self {
        Self {
            objects,
            filters: Filters::new(),
            on_object: None,
        }
    }

    pub(crate) fn report(&self, source: &str, destination: &str, size: u64) {
        if let Some(f) = &self.on_object {
            f(source, destination, size);
        }
    }
}

/// Where `key` (below `prefix`) goes under `dir`; an error for keys that would leave `dir` or
/// map ambiguously (`..`, `.`, empty segments), rather than writing somewhere unexpected.
fn local_path(dir: &Path, prefix: &str, key: &str) -> Result<PathBuf, TransferError> {
    let rest = key.strip_prefix(prefix).unwrap_or(key);
    let mut path = dir.to_path_buf();
    for segment in rest.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(TransferError::Invalid(format!(
                "the key {key:?} cannot be a file name below {}: it has an empty, . or .. segment",
                dir.display()
            )));
        }
        path.push(segment);
    }
    Ok(path)
}

/// Downloads every object `selection` and the filters take into `dir` (sub-directories for
/// `/`, names relative to the selection's base), `many.objects` at a time. "Directory" markers
/// (keys ending in `/`) are skipped. The whole listing comes first, so every name is checked
/// before a byte moves. Stops at the first error; files already complete stay, none is left
/// half-written.
pub async fn download_prefix(
    client: Arc<S3Client>,
    bucket: &str,
    selection: Selection,
    dir: &Path,
    many: &ManyOptions,
    opts: TransferOptions,
) -> Result<Many, TransferError> {
    let prefix = selection.base();
    let mut pages = crate::select::list_selected(
        Arc::clone(&client),
        bucket,
        selection,
        many.filters.clone(),
        4,
    );
    let mut listed = Vec::new();
    while let Some(page) = pages.recv().await {
        listed.extend(page?);
    }
    // Check every name before moving a byte.
    let jobs: Vec<(String, PathBuf)> = listed
        .iter()
        .map(|o| Ok((o.key.clone(), local_path(dir, &prefix, &o.key)?)))
        .collect::<Result<_, TransferError>>()?;
    let bytes = listed.iter().map(|o| o.size).sum();
    if let Some(p) = &opts.progress {
        p.fix_total(bytes);
    }
    let (bucket, jobs) = (bucket.to_owned(), Arc::new(jobs));
    let each = many.clone();
    let sizes = for_each_part(jobs.len(), many.objects, move |i| {
        let (client, bucket, jobs, opts, each) = (
            Arc::clone(&client),
            bucket.clone(),
            Arc::clone(&jobs),
            opts.clone(),
            each.clone(),
        );
        async move {
            let (key, path) = &jobs[i];
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            let size = download_to_file(client, &bucket, key, path, opts)
                .await?
                .size;
            each.report(key, &path.display().to_string(), size);
            Ok(size)
        }
    })
    .await?;
    Ok(Many::of(&sizes))
}

/// Every regular file below `dir` that `filters` take, with its path relative to `dir` in
/// `/` form (what the filters see, and what an upload appends to its prefix), sorted by it.
pub fn walk_files(dir: &Path, filters: &Filters) -> Result<Vec<(PathBuf, String)>, TransferError> {
    let mut files = walk(dir)?;
    files.retain(|(_, rel)| filters.takes(rel));
    Ok(files)
}

/// Every regular file below `dir`, with its path relative to `dir` in `/` form.
fn walk(dir: &Path) -> Result<Vec<(PathBuf, String)>, TransferError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let rel = path
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
                    .join("/");
                out.push((path, rel));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// Uploads every regular file below `dir` that the filters take (on its path relative to
/// `dir`, `/`-separated) to `prefix` + that path, `many.objects` at a time.
pub async fn upload_directory(
    client: Arc<S3Client>,
    dir: &Path,
    bucket: &str,
    prefix: &str,
    many: &ManyOptions,
    opts: TransferOptions,
) -> Result<Many, TransferError> {
    let files = walk_files(dir, &many.filters)?;
    let mut bytes = 0;
    for (path, _) in &files {
        bytes += std::fs::metadata(path)?.len();
    }
    if let Some(p) = &opts.progress {
        p.fix_total(bytes);
    }
    let (bucket, prefix, files) = (bucket.to_owned(), prefix.to_owned(), Arc::new(files));
    let each = many.clone();
    let sizes = for_each_part(files.len(), many.objects, move |i| {
        let (client, bucket, files, opts, each) = (
            Arc::clone(&client),
            bucket.clone(),
            Arc::clone(&files),
            opts.clone(),
            each.clone(),
        );
        let key = format!("{prefix}{}", files[i].1);
        async move {
            let path = &files[i].0;
            let size = upload_file(client, path, &bucket, &key, opts).await?.size;
            each.report(&path.display().to_string(), &key, size);
            Ok(size)
        }
    })
    .await?;
    Ok(Many::of(&sizes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_below_the_directory_or_are_refused() {
        let d = Path::new("/tmp/x");
        assert_eq!(
            local_path(d, "p/", "p/a/b.txt").unwrap(),
            Path::new("/tmp/x/a/b.txt")
        );
        assert_eq!(local_path(d, "", "ü b").unwrap(), Path::new("/tmp/x/ü b"));
        for bad in ["p/../etc/passwd", "p/a//b", "p/./a", "p/a/.."] {
            assert!(local_path(d, "p/", bad).is_err(), "{bad}");
        }
    }
}
