//! `slipstream.Client`: downloads, uploads, listings, server-side copies and batch deletes
//! through the transfer engine, the GIL released.
//!
//! One client owns a tokio runtime and one connection pool; every call blocks the calling
//! Python thread (not the interpreter: the GIL is released) until the transfer ends, so many
//! Python threads can share one client. `put_bytes` hands the `bytes` object's memory to the
//! engine without copying it; `get_bytes` copies once, into the `bytes` it returns.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use pyo3::exceptions::{
    PyIOError, PyMemoryError, PyOSError, PyRuntimeError, PyTimeoutError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};
use slipstream_client::xml::Object;
use slipstream_client::{
    ChecksumAlgorithm, ClientError, ClientOptions, CredentialSource, Expiring, ProvideCredentials,
    Resolved, S3Client,
};
use slipstream_s3::pattern::Filters;
use slipstream_s3::Endpoint;
use slipstream_transfer::{
    copy_object, delete_listed, download_to_file, finish_cleanups_within, list_selected, sync,
    upload_file, CopySettings, CopySource, DeleteReport, MemoryDownload, Selection, SyncOptions,
    TransferError, TransferOptions, CLEANUP_WAIT,
};

use crate::{addressing_style, Credentials};

// An S3 error, keeping S3's code and status as `S3Error.code` and `S3Error.status`.
pyo3::create_exception!(
    slipstream,
    S3Error,
    PyOSError,
    "S3 refused a request; `code` (e.g. 'NoSuchKey') and `status` say how."
);

fn to_py(e: ClientError) -> PyErr {
    match e {
        ClientError::S3 {
            status, ref code, ..
        } => {
            let err = S3Error::new_err(e.to_string());
            Python::attach(|py| {
                let value = err.value(py);
                let _ = value.setattr("status", status);
                let _ = value.setattr("code", code.as_str());
            });
            err
        }
        ClientError::Request(_) => PyValueError::new_err(e.to_string()),
        // FileNotFoundError, PermissionError... as Python's own file functions raise.
        ClientError::Io(io) => io.into(),
        other => PyIOError::new_err(other.to_string()),
    }
}

/// An error as the Python exception that says who caused it.
trait Raise {
    fn raise(self) -> PyErr;
}

impl Raise for ClientError {
    fn raise(self) -> PyErr {
        to_py(self)
    }
}

impl Raise for TransferError {
    fn raise(self) -> PyErr {
        match self {
            TransferError::Client(e) => to_py(e),
            TransferError::Io(io) => io.into(),
            TransferError::Stalled { .. } => PyTimeoutError::new_err(self.to_string()),
            TransferError::Invalid(_) => PyValueError::new_err(self.to_string()),
            other => PyIOError::new_err(other.to_string()),
        }
    }
}

/// A Python callable that returns `(Credentials, expires_at)`, `expires_at` in Unix seconds or
/// `None` for credentials that do not expire. The engine calls it (taking the GIL, on a
/// blocking thread) at the first request and again five minutes before `expires_at`, so a long
/// transfer keeps going across a refresh.
struct Callback(Py<PyAny>);

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Callback(<a Python callable>)")
    }
}

impl ProvideCredentials for Callback {
    fn credentials(&self) -> Result<Expiring, ClientError> {
        // The engine adds which source failed.
        let failed = ClientError::Credentials;
        Python::attach(|py| {
            let out = self
                .0
                .call0(py)
                .map_err(|e| failed(format!("the credentials callable raised {e}")))?;
            let (credentials, expires): (PyRef<'_, Credentials>, Option<f64>) =
                out.extract(py).map_err(|_| {
                    failed(
                        "the credentials callable must return (Credentials, expires_at or None)"
                            .into(),
                    )
                })?;
            let expires = match expires {
                Some(t) if t.is_finite() && t >= 0.0 => {
                    Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(t))
                }
                Some(t) => return Err(failed(format!("expires_at {t} is not a Unix time"))),
                None => None,
            };
            Ok(Expiring {
                credentials: credentials.inner.clone(),
                expires,
            })
        })
    }
}

/// How often a waiting transfer lets Python run its signal handlers: Ctrl-C feels immediate, and
/// the GIL is taken ten times a second at most.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Moves objects between S3 and files or memory; thread-safe.
#[pyclass(frozen, subclass, module = "slipstream")]
pub struct Client {
    inner: Arc<S3Client>,
    runtime: tokio::runtime::Runtime,
    opts: TransferOptions,
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (*, region, credentials, endpoint_url = None, addressing = "auto", part_size = 8 << 20, concurrency = 16, ca_bundle = None, checksum_algorithm = "CRC32C", tcp_congestion = None, stall_timeout = 120.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        region: String,
        credentials: &Bound<'_, PyAny>,
        endpoint_url: Option<&str>,
        addressing: &str,
        part_size: u64,
        concurrency: usize,
        ca_bundle: Option<PathBuf>,
        checksum_algorithm: &str,
        tcp_congestion: Option<String>,
        stall_timeout: Option<f64>,
    ) -> PyResult<Self> {
        let stall_timeout = match stall_timeout {
            None => Duration::ZERO,
            Some(s) => Duration::try_from_secs_f64(s).map_err(|_| {
                PyValueError::new_err(
                    "stall_timeout must be a number of seconds >= 0 (0 or None: wait forever)",
                )
            })?,
        };
        let checksum = algorithm(checksum_algorithm)?;
        if part_size < slipstream_transfer::MIN_PART_SIZE {
            return Err(PyValueError::new_err(
                "part_size must be at least 5 MiB (5242880), S3's smallest part",
            ));
        }
        if concurrency == 0 {
            return Err(PyValueError::new_err("concurrency must be at least 1"));
        }
        let endpoint = endpoint_url
            .map(Endpoint::parse)
            .transpose()
            .map_err(crate::value_error)?;
        let credentials = if let Ok(fixed) = credentials.cast::<Credentials>() {
            CredentialSource::Static(fixed.get().inner.clone())
        } else if credentials.is_callable() {
            CredentialSource::Provider(Arc::new(Callback(credentials.clone().unbind())))
        } else {
            return Err(PyValueError::new_err(
                "credentials must be a Credentials or a callable returning (Credentials, expires_at)",
            ));
        };
        let config = Resolved {
            credentials,
            region,
            endpoint,
            addressing: addressing_style(addressing)?,
            credential_source: "Python".into(),
            ca_bundle,
        };
        let options = ClientOptions {
            tcp_congestion,
            ..ClientOptions::default()
        };
        let inner = S3Client::new(&config, options).map_err(to_py)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the I/O runtime: {e}")))?;
        Ok(Self {
            inner: Arc::new(inner),
            runtime,
            opts: TransferOptions {
                part_size,
                concurrency,
                multipart_threshold: part_size,
                progress: None,
                checksum,
                stall_timeout,
                shared_parts: None,
                headers: Default::default(),
            },
        })
    }

    /// Downloads `bucket/key` to `path` (parts in parallel); returns the size. The file appears
    /// only when complete and checked.
    fn download(&self, py: Python<'_>, bucket: &str, key: &str, path: PathBuf) -> PyResult<u64> {
        let (client, opts) = (Arc::clone(&self.inner), self.opts.clone());
        self.wait(py, download_to_file(client, bucket, key, &path, opts))
            .map(|d| d.size)
    }

    /// Uploads the file at `path` to `bucket/key` (multipart when large), every part with its
    /// checksum (`checksum_algorithm`, else the client's); returns the size.
    #[pyo3(signature = (path, bucket, key, *, checksum_algorithm = None))]
    fn upload(
        &self,
        py: Python<'_>,
        path: PathBuf,
        bucket: &str,
        key: &str,
        checksum_algorithm: Option<&str>,
    ) -> PyResult<u64> {
        let client = Arc::clone(&self.inner);
        let opts = TransferOptions {
            checksum: self.checksum(checksum_algorithm)?,
            ..self.opts.clone()
        };
        self.wait(py, upload_file(client, &path, bucket, key, opts))
            .map(|u| u.size)
    }

    /// The object's bytes, or `range=(start, end)` of them (end exclusive).
    #[pyo3(signature = (bucket, key, range = None))]
    fn get_bytes<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        range: Option<(u64, u64)>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (client, opts) = (Arc::clone(&self.inner), self.opts.clone());
        if let Some(r) = range {
            let data = self.wait(py, client.get_bytes(bucket, key, Some(r)))?;
            return Ok(PyBytes::new(py, &data));
        }
        // The whole object goes straight into the `bytes` Python will own: its size first,
        // then the parts fill it with the GIL released (no second buffer, no copy).
        let download = self.wait(py, MemoryDownload::start(client, bucket, key, opts))?;
        let size = usize::try_from(download.size())
            .map_err(|_| PyMemoryError::new_err(format!("{key}: too large for memory")))?;
        PyBytes::new_with(py, size, |buf| {
            self.wait(py, download.read_into(buf)).map(|_| ())
        })
    }

    /// Stores `data` (any `bytes`) as `bucket/key` in one request with its checksum
    /// (`checksum_algorithm`, else the client's); returns the ETag. The bytes are sent from
    /// Python's own buffer, not copied.
    #[pyo3(signature = (bucket, key, data, *, checksum_algorithm = None))]
    fn put_bytes(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        data: PyBackedBytes,
        checksum_algorithm: Option<&str>,
    ) -> PyResult<String> {
        let client = Arc::clone(&self.inner);
        let checksum = self.checksum(checksum_algorithm)?;
        let body = Bytes::from_owner(data);
        self.wait(py, client.put_object(bucket, key, body, checksum))
    }

    /// `HeadObject`, as boto3's `head_object` names the fields: `ContentLength`, `ETag`,
    /// `LastModified` (as sent), `Metadata` (`x-amz-meta-*` without the prefix), the content
    /// headers the object has (`ContentType`...), and its whole-object checksum
    /// (`ChecksumCRC64NVME`...).
    fn head<'py>(&self, py: Python<'py>, bucket: &str, key: &str) -> PyResult<Bound<'py, PyDict>> {
        let client = Arc::clone(&self.inner);
        let info = self.wait(py, client.head_object(bucket, key))?;
        let d = PyDict::new(py);
        d.set_item("ContentLength", info.size)?;
        d.set_item("ETag", &info.etag)?;
        d.set_item("LastModified", &info.last_modified)?;
        let metadata = PyDict::new(py);
        for (name, value) in &info.copied_headers {
            match name.strip_prefix("x-amz-meta-") {
                Some(m) => metadata.set_item(m, value)?,
                None => d.set_item(boto3_name(name), value)?,
            }
        }
        d.set_item("Metadata", metadata)?;
        if let Some(c) = &info.checksum {
            d.set_item(c.algorithm.xml_tag(), &c.value)?;
        }
        Ok(d)
    }

    /// The objects under `prefix`, in key order, as dicts (`Key`, `Size`, `ETag`,
    /// `LastModified`): an iterator whose next pages are fetched while the caller works
    /// through the current one.
    #[pyo3(signature = (bucket, prefix = ""))]
    fn list(slf: &Bound<'_, Self>, bucket: &str, prefix: &str) -> ObjectIterator {
        let this = slf.get();
        let _inside = this.runtime.enter();
        let pages = list_selected(
            Arc::clone(&this.inner),
            bucket,
            Selection::Prefix(prefix.to_owned()),
            Filters::new(),
            LIST_AHEAD,
        );
        ObjectIterator {
            client: slf.clone().unbind(),
            pages: Mutex::new((pages, VecDeque::new())),
        }
    }

    /// `DeleteObject` (S3 answers the same whether the key existed or not).
    fn delete(&self, py: Python<'_>, bucket: &str, key: &str) -> PyResult<()> {
        let client = Arc::clone(&self.inner);
        self.wait(py, client.delete_object(bucket, key))
    }

    /// Deletes `keys` in `DeleteObjects` batches of 1,000, 8 in flight; returns the keys S3
    /// refused, as `[{"Key", "Code", "Message"}]` (empty when all were deleted).
    fn delete_many<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        keys: Vec<String>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let client = Arc::clone(&self.inner);
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let objects = keys
            .into_iter()
            .map(|key| Object {
                key,
                ..Object::default()
            })
            .collect();
        let quiet: DeleteReport = Arc::new(|_| {});
        let bucket = bucket.to_owned();
        let done = self.wait(py, async move {
            // Sent before the batches start: the channel holds it, and ends with the sender.
            let _ = tx.send(Ok(objects)).await;
            drop(tx);
            delete_listed(client, &bucket, rx, 8, quiet).await
        })?;
        done.failed
            .iter()
            .map(|f| {
                let d = PyDict::new(py);
                d.set_item("Key", &f.key)?;
                d.set_item("Code", &f.code)?;
                d.set_item("Message", &f.message)?;
                Ok(d)
            })
            .collect()
    }

    /// Copies `src_bucket/src_key` to `bucket/key` on the server (one `CopyObject` up to
    /// 5 GiB, which keeps metadata and checksum; parallel `UploadPartCopy` above, metadata
    /// carried and the result checked); returns the size.
    fn copy(
        &self,
        py: Python<'_>,
        src_bucket: &str,
        src_key: &str,
        bucket: &str,
        key: &str,
    ) -> PyResult<u64> {
        let client = Arc::clone(&self.inner);
        let source = CopySource {
            bucket: src_bucket.to_owned(),
            key: src_key.to_owned(),
            listed: None,
        };
        let settings = CopySettings {
            concurrency: self.opts.concurrency,
            ..CopySettings::default()
        };
        self.wait(py, async move {
            copy_object(&client, &source, (bucket, key), &settings).await
        })
        .map(|c| c.size)
    }

    /// Makes `destination` hold what `source` holds (a directory and `s3://bucket/prefix`,
    /// either way, or two prefixes on the server), moving what is missing or differs by the AWS
    /// CLI's rules and with `delete` removing what the source lacks. `filters`:
    /// `[("exclude", "*.log"), ("include", "keep.log")]`, the last match deciding. Returns
    /// `{"copied", "bytes", "deleted", "unchanged", "actions", "failed"}`.
    #[pyo3(signature = (source, destination, *, delete = false, size_only = false, exact_timestamps = false, dryrun = false, filters = Vec::new(), objects = None))]
    #[allow(clippy::too_many_arguments)]
    fn sync<'py>(
        &self,
        py: Python<'py>,
        source: &str,
        destination: &str,
        delete: bool,
        size_only: bool,
        exact_timestamps: bool,
        dryrun: bool,
        filters: Vec<(String, String)>,
        objects: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (from, to) = (
            crate::sync::place(source)?,
            crate::sync::place(destination)?,
        );
        let taken: crate::sync::Taken = Arc::default();
        let gather = Arc::clone(&taken);
        let options = SyncOptions {
            compare: crate::sync::compare(size_only, exact_timestamps)?,
            delete,
            dryrun,
            objects,
            filters: crate::sync::filters(filters)?,
            copy: CopySettings {
                concurrency: self.opts.concurrency,
                ..CopySettings::default()
            },
            on_action: Some(Arc::new(move |action| {
                if let Ok(mut t) = gather.lock() {
                    t.push(action.clone());
                }
            })),
        };
        let (client, opts) = (Arc::clone(&self.inner), self.opts.clone());
        let done = self.wait(
            py,
            async move { sync(client, &from, &to, &options, opts).await },
        )?;
        crate::sync::answer(py, &done, &taken)
    }

    fn __repr__(&self) -> String {
        format!("Client({:?})", self.inner)
    }
}

/// Pages of a listing fetched ahead of the caller.
const LIST_AHEAD: usize = 2;

/// `content-type` as boto3 names it: `ContentType`.
fn boto3_name(header: &str) -> String {
    header
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// What `Client.list` returns: the objects of a listing that goes on in the background.
#[pyclass(frozen, module = "slipstream")]
pub struct ObjectIterator {
    client: Py<Client>,
    #[allow(clippy::type_complexity)]
    pages: Mutex<(
        tokio::sync::mpsc::Receiver<Result<Vec<Object>, TransferError>>,
        VecDeque<Object>,
    )>,
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
        let (rx, buffered) = &mut *pages;
        if buffered.is_empty() {
            let client = self.client.get();
            match client.wait(py, async { Ok::<_, TransferError>(rx.recv().await) })? {
                None => return Ok(None),
                Some(page) => buffered.extend(page.map_err(Raise::raise)?),
            }
        }
        let Some(o) = buffered.pop_front() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("Key", o.key)?;
        d.set_item("Size", o.size)?;
        d.set_item("ETag", o.etag)?;
        d.set_item("LastModified", o.last_modified)?;
        Ok(Some(d))
    }
}

impl Client {
    /// Runs `work` on the client's runtime with the GIL released, in steps of [`SIGNAL_CHECK`]
    /// between which Python runs its signal handlers and the SIGTERM/SIGHUP watch is polled
    /// (`stop.rs`). When a handler raises (Ctrl-C's `KeyboardInterrupt`) or a stop signal
    /// arrived, the work is dropped, which removes a download's temporary file and starts the
    /// abort of an open multipart upload, and the aborts get [`CLEANUP_WAIT`] to finish; then
    /// the exception propagates, or the process ends by the stop signal.
    fn wait<T, E, F>(&self, py: Python<'_>, work: F) -> PyResult<T>
    where
        F: std::future::Future<Output = Result<T, E>> + Send,
        T: Send,
        E: Raise + Send,
    {
        let watch = crate::stop::watch(py);
        let busy = watch.map(crate::stop::Watch::enter);
        // Boxed so that it can be dropped (cancelled) before the clean-ups are awaited.
        let mut work = Box::pin(work);
        loop {
            let step = py.detach(|| {
                // The timer is made inside the runtime (it needs the runtime's clock).
                self.runtime
                    .block_on(async { tokio::time::timeout(SIGNAL_CHECK, &mut work).await })
            });
            if let Ok(done) = step {
                return done.map_err(Raise::raise);
            }
            let raised = py.check_signals().err();
            let stopped = watch.and_then(crate::stop::Watch::stopped);
            if raised.is_none() && stopped.is_none() {
                continue;
            }
            drop(work);
            py.detach(|| self.runtime.block_on(finish_cleanups_within(CLEANUP_WAIT)));
            drop(busy);
            if let (Some(signal), Some(watch)) = (stopped, watch) {
                py.detach(|| watch.end_by(signal, CLEANUP_WAIT));
            }
            return Err(raised.unwrap_or_else(|| {
                PyRuntimeError::new_err("the transfer was stopped by a signal")
            }));
        }
    }

    /// The algorithm a call names, else the client's.
    fn checksum(&self, name: Option<&str>) -> PyResult<ChecksumAlgorithm> {
        name.map_or(Ok(self.opts.checksum), algorithm)
    }
}

/// `"CRC64NVME"` and the like, or a `ValueError` that lists the choices.
fn algorithm(name: &str) -> PyResult<ChecksumAlgorithm> {
    name.parse()
        .map_err(|e: slipstream_client::checksum::UnknownAlgorithm| {
            PyValueError::new_err(e.to_string())
        })
}
