//! `slipstream.Client`: downloads, uploads, listings, server-side copies and batch deletes
//! through the transfer engine, the GIL released.
//!
//! One client owns a tokio runtime and one connection pool; every call blocks the calling
//! Python thread (not the interpreter: the GIL is released) until the transfer ends, so many
//! Python threads can share one client, and every call has a `*_async` twin for asyncio
//! (`aio.rs`). What each call does is in `calls.rs`, once for both forms. `put_bytes` hands the `bytes` object's memory to the
//! engine without copying it; `get_bytes` copies once, into the `bytes` it returns.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use slipstream_client::{
    resolve_with, ChecksumAlgorithm, ClientError, ClientOptions, ConfigError, CredentialSource,
    Env, Expiring, ObjectKey, Overrides, ProvideCredentials, Proxies, Resolved, S3Client,
    VariantChoices,
};
use slipstream_transfer::{
    finish_cleanups_within, ObjectHeaders, Progress, TransferOptions, CLEANUP_WAIT,
};

use crate::aio;
use crate::buckets::{tag_pairs, versioning_dict, versioning_status};
use crate::calls::{
    body, bucket_list, copy_headers, customer_key, deletions, head_dict, memory_size,
    object_headers, refused, SyncArgs, Whole,
};
use crate::errors::{to_py, Raise};
use crate::fresh_bytes::FreshBytes;
use crate::listing::{level_dict, versions_dict, AsyncObjectIterator, ObjectIterator};
use crate::progress::Reporter;
use crate::{addressing_style, Credentials};

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
        crate::exit::attach(|py| {
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
        .unwrap_or_else(|| Err(failed("Python is exiting".into())))
    }
}

/// A timeout given in seconds (boto3's `Config(connect_timeout=, read_timeout=)`): more than 0.
fn seconds(name: &str, given: Option<f64>) -> PyResult<Option<Duration>> {
    given
        .map(|s| {
            Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    PyValueError::new_err(format!("{name} must be a number of seconds > 0"))
                })
        })
        .transpose()
}

/// `credentials=` as given: a `Credentials`, or a callable returning `(Credentials, expires_at)`.
fn own_credentials(given: &Bound<'_, PyAny>) -> PyResult<CredentialSource> {
    if let Ok(fixed) = given.cast::<Credentials>() {
        Ok(CredentialSource::Static(fixed.get().inner.clone()))
    } else if given.is_callable() {
        Ok(CredentialSource::Provider(Arc::new(Callback(
            given.clone().unbind(),
        ))))
    } else {
        Err(PyValueError::new_err(
            "credentials must be a Credentials or a callable returning (Credentials, expires_at)",
        ))
    }
}

/// What the caller gave, and what it left out found where boto3 and the AWS CLI look: the
/// environment (`AWS_REGION`, `AWS_ENDPOINT_URL_S3`, `AWS_PROFILE`, ...) and the profile.
#[allow(clippy::too_many_arguments)] // each is one of the caller's keyword arguments
pub(crate) fn settings_chain(
    region: Option<String>,
    credentials: Option<CredentialSource>,
    endpoint_url: Option<&str>,
    addressing: &str,
    variants: VariantChoices,
    ca_bundle: Option<PathBuf>,
    profile: Option<String>,
    unsigned: bool,
) -> PyResult<Resolved> {
    let overrides = Overrides {
        profile,
        region,
        endpoint_url: endpoint_url.map(str::to_owned),
        addressing: match addressing {
            "auto" => None, // the profile's `s3.addressing_style`, else auto
            style => Some(addressing_style(style)?),
        },
        ca_bundle,
        region_set: None,
        no_sign_request: unsigned,
        proxies: None,
        variants,
    };
    let own = credentials.map(|c| (c, "Python".to_owned()));
    resolve_with(&Env::from_process(), &overrides, own).map_err(config_error)
}

/// `proxies=` as boto3's `Config(proxies=...)` takes it: `{"https": "http://proxy:3128",
/// "http": ...}`, keyed by the endpoint's scheme; `None` or `{}` leaves it to `https_proxy`,
/// `http_proxy` and `no_proxy`. A key or URL that cannot be used is a `ValueError`.
fn given_proxies(proxies: Option<HashMap<String, String>>) -> PyResult<Option<Proxies>> {
    let Some(proxies) = proxies.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if let Some(other) = proxies
        .keys()
        .find(|k| !matches!(k.as_str(), "http" | "https"))
    {
        return Err(PyValueError::new_err(format!(
            "proxies: {other:?} is not a scheme; give {{\"https\": URL, \"http\": URL}}"
        )));
    }
    let (http, https) = (proxies.get("http"), proxies.get("https"));
    Proxies::new(http.map(String::as_str), https.map(String::as_str), None)
        .map_err(|e| PyValueError::new_err(format!("proxies: {e}")))
}

/// The chain's refusal: a shared file that cannot be read is an `OSError` naming it; the rest
/// (no credentials anywhere, a profile that is not there, a bad setting) is the caller's set-up,
/// a `ValueError` that says what to set.
fn config_error(e: ConfigError) -> PyErr {
    match e {
        e @ ConfigError::Unreadable(..) => pyo3::exceptions::PyOSError::new_err(e.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// How often a waiting transfer lets Python run its signal handlers: Ctrl-C feels immediate, and
/// the GIL is taken ten times a second at most.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Moves objects between S3 and files or memory; thread-safe.
#[pyclass(frozen, subclass, module = "slipstream")]
pub struct Client {
    pub(crate) inner: Arc<S3Client>,
    /// Dropped without the GIL (`runtime.rs`).
    pub(crate) runtime: crate::runtime::IoRuntime,
    pub(crate) opts: TransferOptions,
    /// What `presigner` hands out, one per bucket (`presigners.rs`).
    presigners: crate::presigners::Presigners,
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (*, region = None, credentials = None, endpoint_url = None, addressing = "auto", part_size = 8 << 20, concurrency = 16, ca_bundle = None, checksum_algorithm = "CRC32C", tcp_congestion = None, stall_timeout = 120.0, signature = "v4", region_set = None, profile = None, request_payer = false, proxies = None, use_fips_endpoint = None, use_dualstack_endpoint = None, use_accelerate_endpoint = None, us_east_1_regional_endpoint = None, max_attempts = None, connect_timeout = None, read_timeout = None, max_bandwidth = None, verify = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        region: Option<String>,
        credentials: Option<&Bound<'_, PyAny>>,
        endpoint_url: Option<&str>,
        addressing: &str,
        part_size: u64,
        concurrency: usize,
        ca_bundle: Option<PathBuf>,
        checksum_algorithm: &str,
        tcp_congestion: Option<String>,
        stall_timeout: Option<f64>,
        signature: &str,
        region_set: Option<&str>,
        profile: Option<String>,
        request_payer: bool,
        proxies: Option<HashMap<String, String>>,
        use_fips_endpoint: Option<bool>,
        use_dualstack_endpoint: Option<bool>,
        use_accelerate_endpoint: Option<bool>,
        us_east_1_regional_endpoint: Option<&str>,
        max_attempts: Option<u32>,
        connect_timeout: Option<f64>,
        read_timeout: Option<f64>,
        max_bandwidth: Option<u64>,
        verify: bool,
    ) -> PyResult<Self> {
        if max_attempts == Some(0) {
            return Err(PyValueError::new_err(
                "max_attempts counts the first attempt: give at least 1",
            ));
        }
        if !verify {
            // As urllib3 warns for boto3's verify=False.
            PyErr::warn(
                py,
                &py.get_type::<pyo3::exceptions::PyUserWarning>(),
                c"verify=False: the server's certificate is not checked, so anyone on the path can read and change what is sent (ca_bundle= trusts a certificate safely)",
                1,
            )?;
        }
        let connect_timeout = seconds("connect_timeout", connect_timeout)?;
        let read_timeout = seconds("read_timeout", read_timeout)?;
        let variants = crate::variant_choices(
            use_fips_endpoint,
            use_dualstack_endpoint,
            use_accelerate_endpoint,
            us_east_1_regional_endpoint,
        )?;
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
        let own = credentials.map(own_credentials).transpose()?;
        // botocore's `signature_version=UNSIGNED`: no credentials looked for, none sent.
        let unsigned = match signature {
            "v4" | "v4a" => false,
            "unsigned" if own.is_none() && region_set.is_none() => true,
            "unsigned" => return Err(PyValueError::new_err(
                "signature='unsigned' sends requests without credentials: leave out credentials and region_set",
            )),
            other => return Err(PyValueError::new_err(format!(
                "signature must be 'v4', 'v4a' or 'unsigned', not {other:?}"
            ))),
        };
        let mut config = settings_chain(
            region,
            own,
            endpoint_url,
            addressing,
            variants,
            ca_bundle,
            profile,
            unsigned,
        )?;
        if let Some(given) = given_proxies(proxies)? {
            config.proxies = Some(given);
        }
        if !unsigned {
            config.region_set = crate::sigv4a_region_set(signature, region_set, &config)?;
        }
        let defaults = ClientOptions::default();
        let options = ClientOptions {
            tcp_congestion,
            request_payer,
            max_attempts: max_attempts
                .or(config.max_attempts)
                .unwrap_or(defaults.max_attempts),
            max_bandwidth: max_bandwidth
                .map(slipstream_client::Bandwidth::new)
                .transpose()
                .map_err(|e| PyValueError::new_err(format!("max_bandwidth: {e}")))?
                .or(config.max_bandwidth.clone()),
            skip_certificate_check: !verify,
            ..defaults
        }
        .with_timeouts(connect_timeout, read_timeout);
        let options = ClientOptions {
            trace: crate::debug_log::trace(py, &config, options.max_attempts)?,
            ..options
        };
        let inner = S3Client::new(&config, options).map_err(to_py)?;
        let runtime = slipstream_transfer::io_runtime()
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the I/O runtime: {e}")))?;
        Ok(Self {
            inner: Arc::new(inner),
            runtime: crate::runtime::IoRuntime::new(runtime),
            opts: TransferOptions {
                part_size,
                concurrency,
                multipart_threshold: part_size,
                progress: None,
                checksum,
                stall_timeout,
                shared_parts: None,
                shared_bodies: None,
                headers: Default::default(),
                source_customer_key: None,
                // As boto3's download_file: the file has the time of its download (sync
                // gives it the object's, as the AWS CLI's does).
                keep_modified_time: false,
                warn: Some(crate::debug_log::warnings(py)?),
            },
            presigners: Default::default(),
        })
    }

    /// The native half of `Client.open`: `bucket/key` (or `version_id` of it; or `range`, start
    /// and end exclusive, of either) being read, its first part already here (a missing object
    /// raises now).
    #[pyo3(signature = (bucket, key, *, version_id = None, range = None, sse_customer_key = None))]
    fn _open(
        slf: &Bound<'_, Self>,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
        range: Option<(u64, u64)>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<crate::reader::ObjectReader> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let key = ObjectKey::new(key, version_id).with_customer_key(sse.as_ref());
        crate::reader::ObjectReader::open(slf.py(), slf, bucket, key, range)
    }

    /// The native half of `Client.open(bucket, key, "wb")`: the upload started, its bytes to
    /// come from the writes. `checksum_algorithm` and `extra_args` as for `upload`.
    #[pyo3(signature = (bucket, key, *, checksum_algorithm = None, extra_args = None))]
    fn _open_writer(
        slf: &Bound<'_, Self>,
        bucket: &str,
        key: &str,
        checksum_algorithm: Option<&str>,
        extra_args: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<crate::writer::ObjectWriter> {
        let headers = object_headers(extra_args)?;
        crate::writer::ObjectWriter::open(slf, (bucket, key), checksum_algorithm, headers)
    }

    /// `open`, awaited: an `AsyncObjectReader` once the object's (or range's) first part is
    /// here (a missing object raises at the `await`).
    #[pyo3(signature = (bucket, key, *, version_id = None, range = None, sse_customer_key = None))]
    fn open_async<'py>(
        slf: &Bound<'py, Self>,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
        range: Option<(u64, u64)>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let key = ObjectKey::new(key, version_id).with_customer_key(sse.as_ref());
        crate::async_reader::AsyncObjectReader::open(slf, bucket, key, range)
    }

    /// The plain URL of `bucket/key` with `params` (`(name, value)` pairs, in order): what an
    /// unsigned client's `generate_presigned_url` gives, as botocore's does.
    fn _object_url(
        &self,
        bucket: &str,
        key: &str,
        params: Vec<(String, String)>,
    ) -> PyResult<String> {
        let query: Vec<(&str, &str)> = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.inner.object_url(bucket, key, &query).map_err(to_py)
    }

    /// Whether this client sends its requests unsigned (`signature="unsigned"`).
    #[getter]
    fn _unsigned(&self) -> bool {
        self.inner.unsigned()
    }

    /// The native presigner of `bucket` for the client's current credentials (the Python
    /// `Client.presigner` and `generate_presigned_url` ask for it at every call, so they follow
    /// refreshed credentials).
    fn _presigner(&self, py: Python<'_>, bucket: &str) -> PyResult<Py<crate::Presigner>> {
        self.presigners.get(py, self, bucket)
    }

    /// Downloads `bucket/key` to `path` (parts in parallel); returns the size. The file appears
    /// only when complete and checked. `callback` (boto3's `Callback`) is called with the bytes
    /// moved since its last call (`progress.rs`). `version_id`: that version of the object
    /// (boto3's `ExtraArgs={"VersionId": ...}`), not the current one.
    #[pyo3(signature = (bucket, key, path, *, version_id = None, callback = None, sse_customer_key = None))]
    #[allow(clippy::too_many_arguments)]
    fn download(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        path: PathBuf,
        version_id: Option<&str>,
        callback: Option<Bound<'_, PyAny>>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let reporter = Reporter::new(callback)?;
        let progress = Reporter::progress(&reporter);
        let work = self.download_work(
            bucket,
            ObjectKey::new(key, version_id).with_customer_key(sse.as_ref()),
            path,
            progress,
        );
        self.wait_reporting(py, work, reporter)
    }

    /// `download`, awaited.
    #[pyo3(signature = (bucket, key, path, *, version_id = None, sse_customer_key = None))]
    fn download_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        path: PathBuf,
        version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let work = self.download_work(
            bucket,
            ObjectKey::new(key, version_id).with_customer_key(sse.as_ref()),
            path,
            None,
        );
        aio::spawn(py, &self.runtime, work, to_object)
    }

    /// Uploads the file at `path` to `bucket/key` (multipart when large), every part with its
    /// checksum (`checksum_algorithm`, else the client's); returns the size. `extra_args` as
    /// boto3's `ExtraArgs`: the content headers, `Metadata`, `StorageClass`, `ACL`, encryption,
    /// `Tagging`, `WebsiteRedirectLocation` (`calls::object_headers`). `callback` as for
    /// `download`.
    #[pyo3(signature = (path, bucket, key, *, checksum_algorithm = None, extra_args = None, callback = None))]
    #[allow(clippy::too_many_arguments)]
    fn upload(
        &self,
        py: Python<'_>,
        path: PathBuf,
        bucket: &str,
        key: &str,
        checksum_algorithm: Option<&str>,
        extra_args: Option<&Bound<'_, PyDict>>,
        callback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let headers = object_headers(extra_args)?;
        let reporter = Reporter::new(callback)?;
        let progress = Reporter::progress(&reporter);
        let work = self.upload_work(path, (bucket, key), checksum_algorithm, headers, progress)?;
        self.wait_reporting(py, work, reporter)
    }

    /// `upload`, awaited.
    #[pyo3(signature = (path, bucket, key, *, checksum_algorithm = None, extra_args = None))]
    fn upload_async<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        bucket: &str,
        key: &str,
        checksum_algorithm: Option<&str>,
        extra_args: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let headers = object_headers(extra_args)?;
        let work = self.upload_work(path, (bucket, key), checksum_algorithm, headers, None)?;
        aio::spawn(py, &self.runtime, work, to_object)
    }

    /// Streams `bucket/key` into `fileobj` (anything with `write(bytes)`: a file opened
    /// `"wb"`, `io.BytesIO`, a `gzip.GzipFile`), parts fetched in parallel and written in
    /// order, memory bounded by the window of parts; returns the size. As boto3's
    /// `download_fileobj`: the file object is neither flushed nor closed, and on an error what
    /// was written is not the object (its checksum is compared at the end). `callback` as for
    /// `download`.
    #[pyo3(signature = (bucket, key, fileobj, *, version_id = None, callback = None, sse_customer_key = None))]
    #[allow(clippy::too_many_arguments)]
    fn download_fileobj(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        fileobj: &Bound<'_, PyAny>,
        version_id: Option<&str>,
        callback: Option<Bound<'_, PyAny>>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let reporter = Reporter::new(callback)?;
        let progress = Reporter::progress(&reporter);
        let key = ObjectKey::new(key, version_id).with_customer_key(sse.as_ref());
        let work = self.download_fileobj_work(bucket, key, fileobj, progress)?;
        self.wait_reporting(py, work, reporter)
    }

    /// `download_fileobj`, awaited (the file object is written from the runtime's threads,
    /// the GIL taken for each part).
    #[pyo3(signature = (bucket, key, fileobj, *, version_id = None, sse_customer_key = None))]
    fn download_fileobj_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        fileobj: &Bound<'py, PyAny>,
        version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let key = ObjectKey::new(key, version_id).with_customer_key(sse.as_ref());
        let work = self.download_fileobj_work(bucket, key, fileobj, None)?;
        aio::spawn(py, &self.runtime, work, to_object)
    }

    /// Uploads what `fileobj.read()` yields until it returns `b""` (a file opened `"rb"`,
    /// `io.BytesIO`, a pipe) to `bucket/key`: one `PutObject` when it ends within the first
    /// part, else a multipart upload sending parts while the next is read; returns the size.
    /// An exception from `read` is raised as it was and no object is made (a multipart upload
    /// is aborted). `checksum_algorithm`, `extra_args` and `callback` as for `upload`.
    #[pyo3(signature = (fileobj, bucket, key, *, checksum_algorithm = None, extra_args = None, callback = None))]
    #[allow(clippy::too_many_arguments)]
    fn upload_fileobj(
        &self,
        py: Python<'_>,
        fileobj: &Bound<'_, PyAny>,
        bucket: &str,
        key: &str,
        checksum_algorithm: Option<&str>,
        extra_args: Option<&Bound<'_, PyDict>>,
        callback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let reporter = Reporter::new(callback)?;
        let names = (bucket, key);
        let (checksum, progress) = (checksum_algorithm, Reporter::progress(&reporter));
        let headers = object_headers(extra_args)?;
        let work = self.upload_fileobj_work(fileobj, names, checksum, headers, progress)?;
        self.wait_reporting(py, work, reporter)
    }

    /// `upload_fileobj`, awaited (the file object is read from the runtime's threads).
    #[pyo3(signature = (fileobj, bucket, key, *, checksum_algorithm = None, extra_args = None))]
    fn upload_fileobj_async<'py>(
        &self,
        py: Python<'py>,
        fileobj: &Bound<'py, PyAny>,
        bucket: &str,
        key: &str,
        checksum_algorithm: Option<&str>,
        extra_args: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let headers = object_headers(extra_args)?;
        let work =
            self.upload_fileobj_work(fileobj, (bucket, key), checksum_algorithm, headers, None)?;
        aio::spawn(py, &self.runtime, work, to_object)
    }

    /// The object's bytes, or `range=(start, end)` of them (end exclusive), parts in parallel;
    /// of the version `version_id` when given.
    #[pyo3(signature = (bucket, key, range = None, *, version_id = None, sse_customer_key = None))]
    fn get_bytes<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        range: Option<(u64, u64)>,
        version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        // The object (or its range) goes straight into the `bytes` Python will own: its size
        // first, then the parts fill it with the GIL released (no second buffer, no copy).
        let start = self.memory_start(
            bucket,
            ObjectKey::new(key, version_id).with_customer_key(sse.as_ref()),
            range,
        );
        let download = self.wait(py, start)?;
        let mut bytes = FreshBytes::new(py, memory_size(&download, key)?)?;
        self.wait(py, download.read_into(bytes.buffer()))?;
        Ok(bytes.into_bytes(py))
    }

    /// `get_bytes`, awaited. From 1 MiB the object (or its range) goes straight into the
    /// `bytes` returned, as in the blocking form; a smaller one is copied once.
    #[pyo3(signature = (bucket, key, range = None, *, version_id = None, sse_customer_key = None))]
    fn get_bytes_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        range: Option<(u64, u64)>,
        version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let to_bytes = |py: Python<'_>, w: Whole| Ok(w.into_bytes(py).into_any().unbind());
        let work = self.memory_work(
            bucket,
            ObjectKey::new(key, version_id).with_customer_key(sse.as_ref()),
            range,
        );
        aio::spawn(py, &self.runtime, work, to_bytes)
    }

    /// Stores `data` as `bucket/key` with its checksum (`checksum_algorithm`, else the
    /// client's): one request below the client's part size, a parallel multipart upload of
    /// slices of it from there (as `upload`); returns the ETag. A `bytes` is sent from Python's
    /// own buffer, not copied; other bodies as `calls::body` takes them.
    #[pyo3(signature = (bucket, key, data, *, checksum_algorithm = None, extra_args = None))]
    fn put_bytes(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        data: &Bound<'_, PyAny>,
        checksum_algorithm: Option<&str>,
        extra_args: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let headers = object_headers(extra_args)?;
        self.wait(
            py,
            self.put_work((bucket, key), body(data)?, checksum_algorithm, headers)?,
        )
    }

    /// `put_bytes`, awaited.
    #[pyo3(signature = (bucket, key, data, *, checksum_algorithm = None, extra_args = None))]
    fn put_bytes_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        data: &Bound<'_, PyAny>,
        checksum_algorithm: Option<&str>,
        extra_args: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let headers = object_headers(extra_args)?;
        let work = self.put_work((bucket, key), body(data)?, checksum_algorithm, headers)?;
        aio::spawn(py, &self.runtime, work, to_object)
    }

    /// `HeadObject`, as boto3's `head_object` names the fields (see `calls::head_dict`).
    #[pyo3(signature = (bucket, key, *, version_id = None, sse_customer_key = None))]
    fn head<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        let info = self.wait(
            py,
            self.head_work(
                bucket,
                ObjectKey::new(key, version_id).with_customer_key(sse.as_ref()),
            ),
        )?;
        head_dict(py, &info)
    }

    /// `head`, awaited.
    #[pyo3(signature = (bucket, key, *, version_id = None, sse_customer_key = None))]
    fn head_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sse = customer_key(sse_customer_key.as_ref())?;
        aio::spawn(
            py,
            &self.runtime,
            self.head_work(
                bucket,
                ObjectKey::new(key, version_id).with_customer_key(sse.as_ref()),
            ),
            |py, info| Ok(head_dict(py, &info)?.into_any().unbind()),
        )
    }

    /// The objects under `prefix`, in key order, as dicts (`Key`, `Size`, `ETag`,
    /// `LastModified`): an iterator whose next pages are fetched while the caller works
    /// through the current one.
    #[pyo3(signature = (bucket, prefix = ""))]
    fn list(slf: &Bound<'_, Self>, bucket: &str, prefix: &str) -> ObjectIterator {
        ObjectIterator::new(slf, bucket, prefix)
    }

    /// `list`, as an async iterator: `async for o in client.list_async(bucket, prefix)`.
    #[pyo3(signature = (bucket, prefix = ""))]
    fn list_async(slf: &Bound<'_, Self>, bucket: &str, prefix: &str) -> AsyncObjectIterator {
        AsyncObjectIterator::new(slf, bucket, prefix)
    }

    /// One level below `prefix`, as the CLI's `ls` shows it (obstore's `list_with_delimiter`,
    /// in boto3's names): `{"CommonPrefixes": [{"Prefix": "logs/2026/"}...], "Contents":
    /// [objects directly under prefix]}`, every page followed. A folder view: `prefix` usually
    /// ends in `delimiter`.
    #[pyo3(signature = (bucket, prefix = "", delimiter = "/"))]
    fn list_with_delimiter<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        prefix: &str,
        delimiter: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let level = self.wait(py, self.list_level_work(bucket, prefix, delimiter)?)?;
        level_dict(py, level)
    }

    /// `list_with_delimiter`, awaited.
    #[pyo3(signature = (bucket, prefix = "", delimiter = "/"))]
    fn list_with_delimiter_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        prefix: &str,
        delimiter: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let work = self.list_level_work(bucket, prefix, delimiter)?;
        aio::spawn(py, &self.runtime, work, |py, level| {
            Ok(level_dict(py, level)?.into_any().unbind())
        })
    }

    /// Every version and delete marker under `prefix`, as boto3's `list_object_versions`
    /// answers with its pages joined: `{"Versions": [...], "DeleteMarkers": [...]}`.
    #[pyo3(signature = (bucket, prefix = ""))]
    fn list_versions<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        prefix: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let all = self.wait(py, self.versions_work(bucket, prefix))?;
        versions_dict(py, all)
    }

    /// `list_versions`, awaited.
    #[pyo3(signature = (bucket, prefix = ""))]
    fn list_versions_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        prefix: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        aio::spawn(
            py,
            &self.runtime,
            self.versions_work(bucket, prefix),
            |py, all| Ok(versions_dict(py, all)?.into_any().unbind()),
        )
    }

    /// `ListBuckets`: the buckets these credentials own, as boto3's `Buckets` list of dicts
    /// (`Name`, `CreationDate`, and `BucketRegion` where the server says it), every page of the
    /// answer followed; `prefix` and `bucket_region` choose among them as boto3's `Prefix` and
    /// `BucketRegion` do.
    #[pyo3(signature = (*, prefix = None, bucket_region = None))]
    fn list_buckets<'py>(
        &self,
        py: Python<'py>,
        prefix: Option<String>,
        bucket_region: Option<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let buckets = self.wait(py, self.list_buckets_work(prefix, bucket_region))?;
        bucket_list(py, &buckets)
    }

    /// `list_buckets`, awaited.
    #[pyo3(signature = (*, prefix = None, bucket_region = None))]
    fn list_buckets_async<'py>(
        &self,
        py: Python<'py>,
        prefix: Option<String>,
        bucket_region: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        aio::spawn(
            py,
            &self.runtime,
            self.list_buckets_work(prefix, bucket_region),
            |py, buckets| Ok(bucket_list(py, &buckets)?.into_any().unbind()),
        )
    }

    /// `DeleteObject` (S3 answers the same whether the key existed or not). In a versioned
    /// bucket it leaves a delete marker; with `version_id` it removes that version for good.
    #[pyo3(signature = (bucket, key, *, version_id = None))]
    fn delete(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
    ) -> PyResult<()> {
        self.wait(
            py,
            self.delete_work(bucket, ObjectKey::new(key, version_id)),
        )
    }

    /// `delete`, awaited.
    #[pyo3(signature = (bucket, key, *, version_id = None))]
    fn delete_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        aio::spawn(
            py,
            &self.runtime,
            self.delete_work(bucket, ObjectKey::new(key, version_id)),
            |py, ()| Ok(py.None()),
        )
    }

    /// `CreateBucket` (the CLI's `mb`), in the client's region, tagged with `tags` from the
    /// start (the AWS CLI's `mb --tags`).
    #[pyo3(signature = (bucket, *, tags = None))]
    fn create_bucket(
        &self,
        py: Python<'_>,
        bucket: &str,
        tags: Option<Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let work = self.create_bucket_work(bucket, tag_pairs(tags.as_ref())?);
        self.wait(py, work)
    }

    /// `create_bucket`, awaited.
    #[pyo3(signature = (bucket, *, tags = None))]
    fn create_bucket_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        tags: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let work = self.create_bucket_work(bucket, tag_pairs(tags.as_ref())?);
        aio::spawn(py, &self.runtime, work, |py, ()| Ok(py.None()))
    }

    /// `GetBucketVersioning` (the CLI's `bucket-version`), as boto3 answers it: `{"Status":
    /// "Enabled"}`, `{"Status": "Suspended"}`, `{}` for a bucket never versioned.
    fn get_bucket_versioning<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let got = self.wait(py, self.get_versioning_work(bucket))?;
        versioning_dict(py, &got)
    }

    /// `get_bucket_versioning`, awaited.
    fn get_bucket_versioning_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        aio::spawn(
            py,
            &self.runtime,
            self.get_versioning_work(bucket),
            |py, v| Ok(versioning_dict(py, &v)?.into_any().unbind()),
        )
    }

    /// `PutBucketVersioning` (`bucket-version --set`): `status` `"Enabled"` or `"Suspended"`.
    fn put_bucket_versioning(&self, py: Python<'_>, bucket: &str, status: &str) -> PyResult<()> {
        let work = self.put_versioning_work(bucket, versioning_status(status)?);
        self.wait(py, work)
    }

    /// `put_bucket_versioning`, awaited.
    fn put_bucket_versioning_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        status: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let work = self.put_versioning_work(bucket, versioning_status(status)?);
        aio::spawn(py, &self.runtime, work, |py, ()| Ok(py.None()))
    }

    /// `DeleteBucket` (the CLI's `rb`); `force` deletes every object first (`rb --force`).
    #[pyo3(signature = (bucket, *, force = false))]
    fn delete_bucket(&self, py: Python<'_>, bucket: &str, force: bool) -> PyResult<()> {
        self.wait(py, self.delete_bucket_work(bucket, force))
    }

    /// `delete_bucket`, awaited.
    #[pyo3(signature = (bucket, *, force = false))]
    fn delete_bucket_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        force: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let work = self.delete_bucket_work(bucket, force);
        aio::spawn(py, &self.runtime, work, |py, ()| Ok(py.None()))
    }

    /// Deletes `keys` in `DeleteObjects` batches of 1,000, 8 in flight; returns the keys S3
    /// refused, as `[{"Key", "Code", "Message"}]` (empty when all were deleted). An item may
    /// also name a version, removed for good: `(key, version_id)`, or boto3's dict (the
    /// entries of `list_versions`); its refusal then carries `"VersionId"`.
    fn delete_many<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let done = self.wait(py, self.delete_many_work(bucket, deletions(keys)?))?;
        refused(py, &done.failed)
    }

    /// `delete_many`, awaited.
    fn delete_many_async<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let work = self.delete_many_work(bucket, deletions(keys)?);
        aio::spawn(py, &self.runtime, work, |py, done| {
            Ok(refused(py, &done.failed)?.into_any().unbind())
        })
    }

    /// Copies `src_bucket/src_key` to `bucket/key` on the server (one `CopyObject` up to
    /// 5 GiB, which keeps metadata and checksum; parallel `UploadPartCopy` above, metadata
    /// carried and the result checked); returns the size. `src_version_id`: copy that version
    /// of the source (onto its own key, it becomes the current version again). `extra_args`:
    /// boto3's `ExtraArgs` of a copy (`ContentType`, `Metadata`, `StorageClass`, `ACL`,
    /// `Tagging`... and `MetadataDirective`).
    #[pyo3(signature = (src_bucket, src_key, bucket, key, *, src_version_id = None, sse_customer_key = None, src_sse_customer_key = None, extra_args = None))]
    #[allow(clippy::too_many_arguments)]
    fn copy(
        &self,
        py: Python<'_>,
        src_bucket: &str,
        src_key: &str,
        bucket: &str,
        key: &str,
        src_version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
        src_sse_customer_key: Option<Bound<'_, PyAny>>,
        extra_args: Option<Bound<'_, PyDict>>,
    ) -> PyResult<u64> {
        let headers = copy_headers(extra_args.as_ref(), sse_customer_key.as_ref())?;
        let src_sse = customer_key(src_sse_customer_key.as_ref())?;
        let source = ObjectKey::new(src_key, src_version_id).with_customer_key(src_sse.as_ref());
        self.wait(
            py,
            self.copy_work((src_bucket, source), (bucket, key), headers),
        )
    }

    /// `copy`, awaited.
    #[pyo3(signature = (src_bucket, src_key, bucket, key, *, src_version_id = None, sse_customer_key = None, src_sse_customer_key = None, extra_args = None))]
    #[allow(clippy::too_many_arguments)]
    fn copy_async<'py>(
        &self,
        py: Python<'py>,
        src_bucket: &str,
        src_key: &str,
        bucket: &str,
        key: &str,
        src_version_id: Option<&str>,
        sse_customer_key: Option<Bound<'_, PyAny>>,
        src_sse_customer_key: Option<Bound<'_, PyAny>>,
        extra_args: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let headers = copy_headers(extra_args.as_ref(), sse_customer_key.as_ref())?;
        let src_sse = customer_key(src_sse_customer_key.as_ref())?;
        let source = ObjectKey::new(src_key, src_version_id).with_customer_key(src_sse.as_ref());
        let work = self.copy_work((src_bucket, source), (bucket, key), headers);
        aio::spawn(py, &self.runtime, work, to_object)
    }

    /// Makes `destination` hold what `source` holds (a directory and `s3://bucket/prefix`,
    /// either way, or two prefixes on the server), moving what is missing or differs by the AWS
    /// CLI's rules and with `delete` removing what the source lacks. `filters`:
    /// `[("exclude", "*.log"), ("include", "keep.log")]`, the last match deciding. A source
    /// `s3://b/logs/*.gz` takes what the wildcard matches and bounds both sides with it (`raw`
    /// takes `*`, `?`, `[` literally). Returns
    /// `{"copied", "bytes", "deleted", "unchanged", "actions", "failed", "not_files"}`.
    /// `callback` as for `download`, with the bytes of every object moved.
    #[pyo3(signature = (source, destination, *, delete = false, size_only = false, exact_timestamps = false, dryrun = false, filters = Vec::new(), objects = None, follow_symlinks = true, raw = false, callback = None))]
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
        follow_symlinks: bool,
        raw: bool,
        callback: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let reporter = Reporter::new(callback)?;
        let args = SyncArgs {
            delete,
            size_only,
            exact_timestamps,
            dryrun,
            filters,
            objects,
            follow_symlinks,
            raw,
            progress: Reporter::progress(&reporter),
        };
        let (work, taken) = self.sync_work(source, destination, args)?;
        let done = self.wait_reporting(py, work, reporter)?;
        crate::sync::answer(py, &done, &taken)
    }

    /// `sync`, awaited.
    #[pyo3(signature = (source, destination, *, delete = false, size_only = false, exact_timestamps = false, dryrun = false, filters = Vec::new(), objects = None, follow_symlinks = true, raw = false))]
    #[allow(clippy::too_many_arguments)]
    fn sync_async<'py>(
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
        follow_symlinks: bool,
        raw: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = SyncArgs {
            delete,
            size_only,
            exact_timestamps,
            dryrun,
            filters,
            objects,
            follow_symlinks,
            raw,
            progress: None,
        };
        let (work, taken) = self.sync_work(source, destination, args)?;
        aio::spawn(py, &self.runtime, work, move |py, done| {
            Ok(crate::sync::answer(py, &done, &taken)?.into_any().unbind())
        })
    }

    fn __repr__(&self) -> String {
        format!("Client({:?})", self.inner)
    }
}

/// A plain answer (a size, an ETag, nothing) as its Python object.
fn to_object<T>(py: Python<'_>, value: T) -> aio::Outcome
where
    T: for<'py> IntoPyObject<'py>,
{
    pyo3::IntoPyObjectExt::into_py_any(value, py)
}

impl Client {
    /// Runs `work` on the client's runtime with the GIL released, in steps of [`SIGNAL_CHECK`]
    /// between which Python runs its signal handlers and the SIGTERM/SIGHUP watch is polled
    /// (`stop.rs`). When a handler raises (Ctrl-C's `KeyboardInterrupt`) or a stop signal
    /// arrived, the work is dropped, which removes a download's temporary file and starts the
    /// abort of an open multipart upload, and the aborts get [`CLEANUP_WAIT`] to finish; then
    /// the exception propagates, or the process ends by the stop signal.
    pub(crate) fn wait<T, E, F>(&self, py: Python<'_>, work: F) -> PyResult<T>
    where
        F: std::future::Future<Output = Result<T, E>> + Send,
        T: Send,
        E: Raise + Send,
    {
        self.wait_reporting(py, work, None)
    }

    /// [`Client::wait`], telling `reporter`'s callback what moved at every step and at the
    /// end; an exception from the callback stops the work as a signal handler's does.
    pub(crate) fn wait_reporting<T, E, F>(
        &self,
        py: Python<'_>,
        work: F,
        mut reporter: Option<Reporter>,
    ) -> PyResult<T>
    where
        F: std::future::Future<Output = Result<T, E>> + Send,
        T: Send,
        E: Raise + Send,
    {
        let mut report = |py| reporter.as_mut().map_or(Ok(()), |r| r.report(py));
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
                let done = done.map_err(Raise::raise)?;
                report(py)?;
                return Ok(done);
            }
            let raised = py.check_signals().and_then(|()| report(py)).err();
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
    pub(crate) fn checksum(&self, name: Option<&str>) -> PyResult<ChecksumAlgorithm> {
        name.map_or(Ok(self.opts.checksum), algorithm)
    }

    /// The client's transfer options, counting into a call's `progress` (its `callback=`).
    pub(crate) fn transfer_options(&self, progress: Option<Arc<Progress>>) -> TransferOptions {
        TransferOptions {
            progress,
            ..self.opts.clone()
        }
    }

    /// [`Client::transfer_options`] of an upload: the call's checksum (else the client's) and
    /// the headers of its `extra_args`.
    pub(crate) fn upload_options(
        &self,
        checksum_algorithm: Option<&str>,
        headers: ObjectHeaders,
        progress: Option<Arc<Progress>>,
    ) -> PyResult<TransferOptions> {
        Ok(TransferOptions {
            checksum: self.checksum(checksum_algorithm)?,
            headers,
            ..self.transfer_options(progress)
        })
    }
}

/// `"CRC64NVME"` and the like, or a `ValueError` that lists the choices.
fn algorithm(name: &str) -> PyResult<ChecksumAlgorithm> {
    name.parse()
        .map_err(|e: slipstream_client::checksum::UnknownAlgorithm| {
            PyValueError::new_err(e.to_string())
        })
}
