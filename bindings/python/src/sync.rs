//! `Client.sync`'s arguments and answer: `s3://bucket/prefix` or a directory for each side,
//! filters as `[("exclude", "*.log"), ("include", ...)]` (a list, because their order decides,
//! as on the AWS CLI's command line), and the actions taken as dicts.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use slipstream_s3::pattern::{Filters, Rule};
use slipstream_s3::S3Uri;
use slipstream_transfer::{Action, Compare, Place, Synced};

/// A side of a sync: `s3://bucket/prefix`, or a local directory; a source's wildcard bounds
/// `filters`, a destination's is refused (`Place::s3_side`).
pub(crate) fn place(text: &str, raw: bool, filters: Option<&mut Filters>) -> PyResult<Place> {
    if text.starts_with("s3://") {
        let uri = S3Uri::parse(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
        return Place::s3_side(&uri.bucket, &uri.key, raw, filters)
            .map_err(|e| PyValueError::new_err(e.to_string()));
    }
    Ok(Place::Local(PathBuf::from(text)))
}

/// `[("include" | "exclude", pattern), ...]` in order: the last match decides.
pub(crate) fn filters(rules: Vec<(String, String)>) -> PyResult<Filters> {
    let mut filters = Filters::new();
    for (rule, pattern) in rules {
        let rule = match rule.as_str() {
            "include" => Rule::Include,
            "exclude" => Rule::Exclude,
            other => {
                return Err(PyValueError::new_err(format!(
                    "a filter is (\"include\" or \"exclude\", pattern), not {other:?}"
                )))
            }
        };
        filters
            .push(rule, &pattern)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    Ok(filters)
}

/// How equal-sized entries are judged.
pub(crate) fn compare(size_only: bool, exact_timestamps: bool) -> PyResult<Compare> {
    match (size_only, exact_timestamps) {
        (true, true) => Err(PyValueError::new_err(
            "size_only and exact_timestamps exclude each other",
        )),
        (true, false) => Ok(Compare::SizeOnly),
        (false, true) => Ok(Compare::ExactTimestamps),
        (false, false) => Ok(Compare::SizeAndTime),
    }
}

/// The actions a sync took, gathered as they complete.
pub(crate) type Taken = Arc<Mutex<Vec<Action>>>;

/// The answer: counts, the actions (`{"action", "source", "destination"?}`), the keys S3
/// refused to delete (`{"Key", "Code", "Message"}`) and the source directory's entries left
/// out for not being files (`not_files`: FIFOs, sockets, devices, as paths).
pub(crate) fn answer<'py>(
    py: Python<'py>,
    done: &Synced,
    taken: &Taken,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("copied", done.moved.objects)?;
    d.set_item("bytes", done.moved.bytes)?;
    d.set_item("deleted", done.deleted)?;
    d.set_item("unchanged", done.unchanged)?;
    let actions = taken
        .lock()
        .map(|a| a.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|a| {
            let item = PyDict::new(py);
            item.set_item("action", a.word)?;
            item.set_item("source", a.from)?;
            if let Some(to) = a.to {
                item.set_item("destination", to)?;
            }
            Ok(item)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("actions", actions)?;
    let failed = crate::calls::refused(py, &done.failed)?;
    d.set_item("failed", failed)?;
    // As str (the file system's encoding, undecodable bytes escaped as os.fsdecode does).
    let not_files: Vec<_> = done.moved.not_files.iter().map(|p| p.as_os_str()).collect();
    d.set_item("not_files", not_files)?;
    Ok(d)
}
