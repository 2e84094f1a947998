//! `Client.list` and `Client.list_async`: the objects under a prefix as dicts, from a listing
//! that goes on in the background ([`LIST_AHEAD`] pages ahead of the caller). The blocking
//! iterator waits with the GIL released; the async one answers at once from a page already
//! fetched, and only the first object of each page costs a trip through the runtime.

use std::collections::VecDeque;
use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use slipstream_client::xml::{ListPage, Object};
use slipstream_client::Version;
use slipstream_s3::pattern::Filters;
use slipstream_transfer::{list_selected, Selection, TransferError};
use tokio::sync::mpsc::Receiver;

use crate::client::Client;

/// Pages of a listing fetched ahead of the caller.
const LIST_AHEAD: usize = 2;

/// The listing's pages as they arrive, and the objects of the current one not yet handed out.
struct Pages {
    rx: Receiver<Result<Vec<Object>, TransferError>>,
    buffered: VecDeque<Object>,
}

impl Pages {
    /// Starts listing `prefix` on `client`'s runtime.
    fn start(client: &Client, bucket: &str, prefix: &str) -> Self {
        let _inside = client.runtime.enter();
        let rx = list_selected(
            Arc::clone(&client.inner),
            bucket,
            Selection::Prefix(prefix.to_owned()),
            Filters::new(),
            LIST_AHEAD,
        );
        Self {
            rx,
            buffered: VecDeque::new(),
        }
    }

    /// The next object; `None` at the end. Empty pages are passed over.
    async fn next(&mut self) -> Result<Option<Object>, TransferError> {
        while self.buffered.is_empty() {
            match self.rx.recv().await {
                None => return Ok(None),
                Some(page) => self.buffered.extend(page?),
            }
        }
        Ok(self.buffered.pop_front())
    }
}

/// What `Client.list` returns.
#[pyclass(frozen, module = "slipstream")]
pub struct ObjectIterator {
    client: Py<Client>,
    pages: std::sync::Mutex<Pages>,
}

impl ObjectIterator {
    pub(crate) fn new(client: &Bound<'_, Client>, bucket: &str, prefix: &str) -> Self {
        Self {
            pages: std::sync::Mutex::new(Pages::start(client.get(), bucket, prefix)),
            client: client.clone().unbind(),
        }
    }
}

#[pymethods]
impl ObjectIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut pages = self
            .pages
            .lock()
            .map_err(|_| PyRuntimeError::new_err("a listing's iterator was poisoned"))?;
        let next = self.client.get().wait(py, pages.next())?;
        next.map(|o| object_dict(py, o)).transpose()
    }
}

/// What `Client.list_async` returns: `async for o in client.list_async(bucket, prefix)`.
#[pyclass(frozen, module = "slipstream")]
pub struct AsyncObjectIterator {
    client: Py<Client>,
    pages: Arc<tokio::sync::Mutex<Pages>>,
}

impl AsyncObjectIterator {
    pub(crate) fn new(client: &Bound<'_, Client>, bucket: &str, prefix: &str) -> Self {
        Self {
            pages: Arc::new(tokio::sync::Mutex::new(Pages::start(
                client.get(),
                bucket,
                prefix,
            ))),
            client: client.clone().unbind(),
        }
    }
}

#[pymethods]
impl AsyncObjectIterator {
    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // Free, and the page already here: no trip through the runtime.
        if let Ok(mut pages) = self.pages.try_lock() {
            if let Some(o) = pages.buffered.pop_front() {
                let d = object_dict(py, o).map(|d| d.into_any().unbind());
                return crate::aio::ready(py, d);
            }
        }
        let pages = Arc::clone(&self.pages);
        let work = async move { pages.lock().await.next().await };
        crate::aio::spawn(
            py,
            &self.client.get().runtime,
            work,
            |py, next| match next {
                Some(o) => object_dict(py, o).map(|d| d.into_any().unbind()),
                None => crate::aio::stop_iteration(),
            },
        )
    }
}

/// One level of a listing as boto3's `list_objects_v2` answers it with a `Delimiter`:
/// `CommonPrefixes` (`[{"Prefix": ...}]`) and `Contents` (the objects as `list` yields them).
pub(crate) fn level_dict(py: Python<'_>, level: ListPage) -> PyResult<Bound<'_, PyDict>> {
    let prefixes = level
        .prefixes
        .into_iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("Prefix", p)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    let objects = level
        .objects
        .into_iter()
        .map(|o| object_dict(py, o))
        .collect::<PyResult<Vec<_>>>()?;
    let d = PyDict::new(py);
    d.set_item("CommonPrefixes", prefixes)?;
    d.set_item("Contents", objects)?;
    Ok(d)
}

/// Every version under a prefix as boto3's `list_object_versions` answers (its pages joined):
/// `Versions` (`Key`, `VersionId`, `IsLatest`, `LastModified`, `Size`, `ETag`, `StorageClass`)
/// and `DeleteMarkers` (`Key`, `VersionId`, `IsLatest`, `LastModified`), each newest first
/// for a key.
pub(crate) fn versions_dict(py: Python<'_>, all: Vec<Version>) -> PyResult<Bound<'_, PyDict>> {
    let (versions, markers) = (PyList::empty(py), PyList::empty(py));
    for v in all {
        let d = PyDict::new(py);
        d.set_item("Key", v.key)?;
        d.set_item("VersionId", v.version_id)?;
        d.set_item("IsLatest", v.is_latest)?;
        d.set_item("LastModified", v.last_modified)?;
        if v.delete_marker {
            markers.append(d)?;
            continue;
        }
        d.set_item("Size", v.size)?;
        d.set_item("ETag", v.etag)?;
        if !v.storage_class.is_empty() {
            d.set_item("StorageClass", v.storage_class)?;
        }
        versions.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("Versions", versions)?;
    d.set_item("DeleteMarkers", markers)?;
    Ok(d)
}

/// One listed object as boto3's `list_objects_v2` names its fields.
fn object_dict(py: Python<'_>, o: Object) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("Key", o.key)?;
    d.set_item("Size", o.size)?;
    d.set_item("ETag", o.etag)?;
    d.set_item("LastModified", o.last_modified)?;
    if !o.storage_class.is_empty() {
        d.set_item("StorageClass", o.storage_class)?;
    }
    Ok(d)
}
