//! Many objects: a prefix to a directory and a directory to a prefix, with two knobs: objects
//! in flight, and parts in flight per object (`TransferOptions::concurrency`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use slipstream_client::S3Client;

use crate::pool::for_each_part;
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

/// Downloads every object under `prefix` into `dir` (sub-directories for `/`), `objects` at a
/// time. "Directory" markers (keys ending in `/`) are skipped. Stops at the first error; files
/// already complete stay, none is left half-written.
pub async fn download_prefix(
    client: Arc<S3Client>,
    bucket: &str,
    prefix: &str,
    dir: &Path,
    objects: usize,
    opts: TransferOptions,
) -> Result<Many, TransferError> {
    let listed: Vec<_> = client
        .list_all(bucket, prefix)
        .await?
        .into_iter()
        .filter(|o| !o.key.ends_with('/'))
        .collect();
    // Check every name before moving a byte.
    let jobs: Vec<(String, PathBuf)> = listed
        .iter()
        .map(|o| Ok((o.key.clone(), local_path(dir, prefix, &o.key)?)))
        .collect::<Result<_, TransferError>>()?;
    let bytes = listed.iter().map(|o| o.size).sum();
    if let Some(p) = &opts.progress {
        p.fix_total(bytes);
    }
    let (bucket, jobs) = (bucket.to_owned(), Arc::new(jobs));
    let sizes = for_each_part(jobs.len(), objects, move |i| {
        let (client, bucket, jobs, opts) = (
            Arc::clone(&client),
            bucket.clone(),
            Arc::clone(&jobs),
            opts.clone(),
        );
        async move {
            let (key, path) = &jobs[i];
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            download_to_file(client, &bucket, key, path, opts)
                .await
                .map(|d| d.size)
        }
    })
    .await?;
    Ok(Many::of(&sizes))
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

/// Uploads every regular file below `dir` to `prefix` + its relative path, `objects` at a time.
pub async fn upload_directory(
    client: Arc<S3Client>,
    dir: &Path,
    bucket: &str,
    prefix: &str,
    objects: usize,
    opts: TransferOptions,
) -> Result<Many, TransferError> {
    let files = walk(dir)?;
    let mut bytes = 0;
    for (path, _) in &files {
        bytes += std::fs::metadata(path)?.len();
    }
    if let Some(p) = &opts.progress {
        p.fix_total(bytes);
    }
    let (bucket, prefix, files) = (bucket.to_owned(), prefix.to_owned(), Arc::new(files));
    let sizes = for_each_part(files.len(), objects, move |i| {
        let (client, bucket, files, opts) = (
            Arc::clone(&client),
            bucket.clone(),
            Arc::clone(&files),
            opts.clone(),
        );
        let key = format!("{prefix}{}", files[i].1);
        async move {
            upload_file(client, &files[i].0, &bucket, &key, opts)
                .await
                .map(|u| u.size)
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
