//! The directories `cp` makes for a downloaded file, and their removal when the download fails.

use std::path::{Path, PathBuf};

use crate::objects::failed;
use crate::Failure;

/// The directories a download made for its file, removed again (each only while empty) unless
/// kept: a failed `cp s3://b/k new/dir/` leaves no new/dir behind, as the AWS CLI leaves none
/// (it asks S3 before it makes them).
pub(crate) struct MadeDirs {
    deepest: PathBuf,
    /// The highest directory made; `None` when `deepest` was already there.
    top: Option<PathBuf>,
}

impl MadeDirs {
    /// Makes `dir` and whatever is missing above it.
    pub(crate) async fn make(dir: &Path) -> Result<Self, Failure> {
        let top = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .last()
            .map(Path::to_path_buf);
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|e| failed(format!("cannot make the directory {}: {e}", dir.display())))?;
        Ok(Self {
            deepest: dir.to_path_buf(),
            top,
        })
    }

    /// The download is complete: its directories stay.
    pub(crate) fn keep(mut self) {
        self.top = None;
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        let Some(top) = &self.top else { return };
        for dir in self.deepest.ancestors() {
            if std::fs::remove_dir(dir).is_err() || dir == top {
                break;
            }
        }
    }
}
