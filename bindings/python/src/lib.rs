//! The `slipstream._slipstream` extension module: Python types over `slipstream-sign`
//! (`Credentials`, `Presigner`) and `slipstream-transfer` (`Client`, in `client.rs`).
//!
//! This layer only converts and maps errors: caller mistakes become `ValueError` (or `TypeError`
//! for wrong types, which PyO3 raises while extracting arguments), S3's refusals `S3Error`, a
//! stalled transfer `TimeoutError`, never a panic or a `SystemError`. The GIL is released
//! around batch work (`presign_many`) and transfers, which wait in short steps so that Python's
//! signal handlers (Ctrl-C) run; a single presign takes well under a microsecond, less than
//! releasing and taking back the GIL would cost.
//!
//! `unsafe` is denied everywhere but in arrow_ffi.rs, which reads and writes Arrow's C structs,
//! and fresh_bytes.rs, which fills a new `bytes` object in place.
#![deny(unsafe_code)]

mod aio;
mod arrow;
mod arrow_ffi;
mod async_reader;
mod buckets;
mod calls;
mod client;
mod debug_log;
mod errors;
mod exit;
mod fileobj;
mod fresh_bytes;
mod held;
mod listing;
mod object_stream;
mod one_thread;
mod options;
mod pipeline;
mod post;
mod presigners;
mod progress;
mod reader;
mod runtime;
mod stop;
mod sync;
mod writer;

use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PyString, PyTuple};
use slipstream_client::CredentialSource;
use slipstream_s3::{AddressingStyle, Endpoint};
use slipstream_sign::UrlBatch;

use options::{signing_time, Extras};

/// An access key pair and optional session token.
#[pyclass(frozen, module = "slipstream")]
pub struct Credentials {
    inner: slipstream_sign::Credentials,
}

#[pymethods]
impl Credentials {
    #[new]
    #[pyo3(signature = (access_key_id, secret_access_key, session_token = None))]
    fn new(
        access_key_id: String,
        secret_access_key: String,
        session_token: Option<String>,
    ) -> PyResult<Self> {
        let inner =
            slipstream_sign::Credentials::new(access_key_id, secret_access_key, session_token)
                .map_err(value_error)?;
        Ok(Self { inner })
    }

    #[getter]
    fn access_key_id(&self) -> &str {
        self.inner.access_key_id()
    }

    /// Pickling (Spark broadcasts, multiprocessing): the pickle holds the secret in clear, as
    /// the arguments that made it did. `repr` stays redacted.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let args = (
            self.inner.access_key_id(),
            self.inner.secret_access_key(),
            self.inner.session_token(),
        );
        PyTuple::new(
            py,
            [
                py.get_type::<Self>().into_any(),
                args.into_pyobject(py)?.into_any(),
            ],
        )
    }

    fn __repr__(&self) -> String {
        let token = if self.inner.session_token().is_some() {
            "'<redacted>'"
        } else {
            "None"
        };
        format!("Credentials(access_key_id='{}', secret_access_key='<redacted>', session_token={token})", self.inner.access_key_id())
    }
}

/// Presigns URLs for one bucket; thread-safe. Subclassed in Python to add `from_boto3`.
#[pyclass(frozen, subclass, module = "slipstream")]
pub struct Presigner {
    inner: slipstream_sign::Presigner,
    bucket: String,
    region: String,
    /// What made it, for pickling.
    made: Made,
    /// Output buffers reused by `presign_many` when no other thread holds them.
    buffers: Mutex<Vec<UrlBatch>>,
}

#[pymethods]
impl Presigner {
    #[new]
    #[pyo3(signature = (bucket, *, region = None, credentials = None, endpoint_url = None, addressing = "auto", signature = "v4", region_set = None, profile = None, use_fips_endpoint = None, use_dualstack_endpoint = None, use_accelerate_endpoint = None, us_east_1_regional_endpoint = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        bucket: String,
        region: Option<String>,
        credentials: Option<&Credentials>,
        endpoint_url: Option<&str>,
        addressing: &str,
        signature: &str,
        region_set: Option<&str>,
        profile: Option<String>,
        use_fips_endpoint: Option<bool>,
        use_dualstack_endpoint: Option<bool>,
        use_accelerate_endpoint: Option<bool>,
        us_east_1_regional_endpoint: Option<&str>,
    ) -> PyResult<Self> {
        let variants = variant_choices(
            use_fips_endpoint,
            use_dualstack_endpoint,
            use_accelerate_endpoint,
            us_east_1_regional_endpoint,
        )?;
        let found = client::settings_chain(
            region,
            credentials.map(|c| CredentialSource::Static(c.inner.clone())),
            endpoint_url,
            addressing,
            variants,
            None,
            profile,
            false,
        )?;
        // A presigner signs with fixed keys: credentials that are refreshed cannot be followed.
        let creds = found.credentials.as_static().cloned().ok_or_else(|| {
            PyValueError::new_err(format!(
                "the credentials found ({}) are refreshed, which a Presigner's fixed keys cannot \
                 follow: use Presigner.from_boto3(boto3.client(\"s3\"), bucket), or pass credentials=",
                found.credential_source
            ))
        })?;
        let region_set = sigv4a_region_set(signature, region_set, &found)?;
        let base = found.url_base(&bucket).map_err(value_error)?;
        let region = found.region;
        let inner = match &region_set {
            None => slipstream_sign::Presigner::new(base, &region, creds.clone()),
            Some(set) => slipstream_sign::Presigner::new_v4a(base, set, creds.clone()),
        }
        .map_err(value_error)?;
        // What the chain found, so that an unpickled copy needs no environment.
        let made = Made {
            credentials: creds,
            endpoint_url: found.endpoint.as_ref().map(Endpoint::to_string),
            addressing: found.addressing.as_str().to_owned(),
            variants: found.variants,
            signature: signature.to_owned(),
            region_set,
        };
        Ok(Self::from_parts(inner, &bucket, &region, made))
    }

    /// Pickling, so that a Spark broadcast or a process pool can carry a presigner: made again
    /// from its arguments (of its own class, also a subclass). The pickle holds the secret in
    /// clear, as those arguments did.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.get();
        let m = &this.made;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("region", &this.region)?;
        let credentials = Credentials {
            inner: m.credentials.clone(),
        };
        kwargs.set_item("credentials", Bound::new(py, credentials)?)?;
        kwargs.set_item("endpoint_url", &m.endpoint_url)?;
        kwargs.set_item("addressing", &m.addressing)?;
        // All four, so that an unpickled copy does not read them from its own environment.
        kwargs.set_item("use_fips_endpoint", m.variants.fips)?;
        kwargs.set_item("use_dualstack_endpoint", m.variants.dualstack)?;
        kwargs.set_item("use_accelerate_endpoint", m.variants.accelerate)?;
        let regional = if m.variants.regional_us_east_1 {
            "regional"
        } else {
            "legacy"
        };
        kwargs.set_item("us_east_1_regional_endpoint", regional)?;
        kwargs.set_item("signature", &m.signature)?;
        kwargs.set_item("region_set", &m.region_set)?;
        let partial = py
            .import("functools")?
            .getattr("partial")?
            .call((slf.get_type(),), Some(&kwargs))?;
        PyTuple::new(py, [partial, PyTuple::new(py, [&this.bucket])?.into_any()])
    }

    #[getter]
    fn bucket(&self) -> &str {
        &self.bucket
    }

    #[getter]
    fn region(&self) -> &str {
        &self.region
    }

    /// A presigned URL for `method` on `key`.
    #[pyo3(signature = (method, key, *, expires_in = 3600, at = None, version_id = None, response_content_type = None,
        response_content_disposition = None, response_cache_control = None, response_content_language = None,
        response_content_encoding = None, response_expires = None, headers = None, params = None))]
    #[allow(clippy::too_many_arguments)]
    fn presign(
        &self,
        method: &str,
        key: &str,
        expires_in: i64,
        at: Option<&Bound<'_, PyAny>>,
        version_id: Option<String>,
        response_content_type: Option<String>,
        response_content_disposition: Option<String>,
        response_cache_control: Option<String>,
        response_content_language: Option<String>,
        response_content_encoding: Option<String>,
        response_expires: Option<String>,
        headers: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let extras = Extras {
            version_id,
            response_content_type,
            response_content_disposition,
            response_cache_control,
            response_content_language,
            response_content_encoding,
            response_expires,
            headers,
            params,
            content_type: None,
        };
        self.sign_one(method, key, expires_in, at, extras)
    }

    /// A presigned GET URL; the same keywords as `presign`.
    #[pyo3(signature = (key, *, expires_in = 3600, at = None, version_id = None, response_content_type = None,
        response_content_disposition = None, response_cache_control = None, response_content_language = None,
        response_content_encoding = None, response_expires = None, headers = None, params = None))]
    #[allow(clippy::too_many_arguments)]
    fn presign_get(
        &self,
        key: &str,
        expires_in: i64,
        at: Option<&Bound<'_, PyAny>>,
        version_id: Option<String>,
        response_content_type: Option<String>,
        response_content_disposition: Option<String>,
        response_cache_control: Option<String>,
        response_content_language: Option<String>,
        response_content_encoding: Option<String>,
        response_expires: Option<String>,
        headers: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        self.presign(
            "GET",
            key,
            expires_in,
            at,
            version_id,
            response_content_type,
            response_content_disposition,
            response_cache_control,
            response_content_language,
            response_content_encoding,
            response_expires,
            headers,
            params,
        )
    }

    /// A presigned PUT URL; `content_type` is signed, so the uploader must send exactly it.
    #[pyo3(signature = (key, *, content_type = None, expires_in = 3600, at = None, headers = None, params = None))]
    fn presign_put(
        &self,
        key: &str,
        content_type: Option<String>,
        expires_in: i64,
        at: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let extras = Extras {
            headers,
            params,
            content_type,
            ..Extras::default()
        };
        self.sign_one("PUT", key, expires_in, at, extras)
    }

    /// One URL per key, in order, signed on every core with the GIL released.
    #[pyo3(signature = (keys, *, method = "GET", expires_in = 3600, at = None, threads = None))]
    fn presign_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        method: &str,
        expires_in: i64,
        at: Option<&Bound<'py, PyAny>>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        if keys.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "keys must be an iterable of str, not a single str",
            ));
        }
        // Borrowed views of the Python strings: no second copy into Rust `String`s.
        let keys: Vec<PyBackedStr> = keys
            .try_iter()?
            .map(|k| k?.extract::<PyBackedStr>())
            .collect::<PyResult<_>>()?;
        if let Some(i) = keys.iter().position(|k| k.is_empty()) {
            return Err(PyValueError::new_err(format!(
                "keys[{i}] is empty: S3 keys need at least one character"
            )));
        }
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let opts = options::build(method, expires_in, Extras::default())?;
        let time = signing_time(at)?;
        let job = pipeline::Job {
            presigner: &self.inner,
            opts: &opts,
            time,
            threads: slipstream_sign::batch::thread_count(keys.len(), threads),
        };
        // Another thread's call may hold the shared buffers: then this call uses fresh ones.
        let mut shared = self.buffers.try_lock().ok();
        let mut local = Vec::new();
        let buffers = shared.as_deref_mut().unwrap_or(&mut local);
        pipeline::presign_to_list(py, &job, &keys, buffers)
    }

    /// A presigned POST (a browser form upload) for `key`: boto3's `{"url": ..., "fields":
    /// {...}}`, byte-identical to `generate_presigned_post`. A key ending in `${filename}`
    /// lets the browser's file name complete it.
    #[pyo3(signature = (key, *, fields = None, conditions = None, expires_in = 3600, at = None))]
    fn presign_post<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        fields: Option<&Bound<'py, PyAny>>,
        conditions: Option<&Bound<'py, PyAny>>,
        expires_in: i64,
        at: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let expires_in = options::expiry(expires_in)?;
        let (fields, conditions) = (post::fields(fields)?, post::conditions(conditions)?);
        let time = signing_time(at)?;
        let form = self
            .inner
            .presign_post(&self.bucket, key, &fields, &conditions, expires_in, time)
            .map_err(value_error)?;
        post::answer(py, form)
    }

    /// One URL per key of an Arrow string column, signed on every core with the GIL released
    /// and returned in Arrow buffers: no Python object per key or URL. Nulls stay null.
    #[pyo3(signature = (keys, *, method = "GET", expires_in = 3600, at = None, threads = None))]
    fn presign_arrow(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        method: &str,
        expires_in: i64,
        at: Option<&Bound<'_, PyAny>>,
        threads: Option<usize>,
    ) -> PyResult<arrow::UrlArray> {
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let opts = options::build(method, expires_in, Extras::default())?;
        let time = signing_time(at)?;
        let template = self.inner.template(&opts, time).map_err(value_error)?;
        arrow::presign(py, &template, keys, threads)
    }

    fn __repr__(&self) -> String {
        format!(
            "Presigner(bucket='{}', region='{}', url_base='{}')",
            self.bucket,
            self.region,
            self.inner.base().origin
        )
    }
}

/// A presigner's constructor arguments besides bucket and region.
struct Made {
    credentials: slipstream_sign::Credentials,
    endpoint_url: Option<String>,
    addressing: String,
    variants: slipstream_s3::Variants,
    signature: String,
    region_set: Option<String>,
}

impl Presigner {
    /// A presigner around `inner`, for `bucket` in `region`; `made` says how to make it again.
    fn from_parts(
        inner: slipstream_sign::Presigner,
        bucket: &str,
        region: &str,
        made: Made,
    ) -> Self {
        Self {
            inner,
            bucket: bucket.to_owned(),
            region: region.to_owned(),
            made,
            buffers: Mutex::new(Vec::new()),
        }
    }

    fn sign_one(
        &self,
        method: &str,
        key: &str,
        expires_in: i64,
        at: Option<&Bound<'_, PyAny>>,
        extras: Extras<'_, '_>,
    ) -> PyResult<String> {
        let opts = options::build(method, expires_in, extras)?;
        let time = signing_time(at)?;
        self.inner.presign(key, &opts, time).map_err(value_error)
    }
}

/// `"auto"`, `"virtual"` or `"path"`.
fn addressing_style(addressing: &str) -> PyResult<AddressingStyle> {
    match addressing {
        "auto" => Ok(AddressingStyle::Auto),
        "virtual" => Ok(AddressingStyle::Virtual),
        "path" => Ok(AddressingStyle::Path),
        other => Err(PyValueError::new_err(format!(
            "addressing must be 'auto', 'virtual' or 'path', not {other:?}"
        ))),
    }
}

/// The endpoint variants the keyword arguments ask for (botocore's `use_fips_endpoint`,
/// `use_dualstack_endpoint`, `s3.use_accelerate_endpoint`, `s3.us_east_1_regional_endpoint`);
/// `None` leaves each to the environment and the profile.
fn variant_choices(
    fips: Option<bool>,
    dualstack: Option<bool>,
    accelerate: Option<bool>,
    us_east_1: Option<&str>,
) -> PyResult<slipstream_client::VariantChoices> {
    let regional_us_east_1 = match us_east_1 {
        None => None,
        Some("regional") => Some(true),
        Some("legacy") => Some(false),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "us_east_1_regional_endpoint must be 'regional' or 'legacy', not {other:?}"
            )))
        }
    };
    Ok(slipstream_client::VariantChoices {
        fips,
        dualstack,
        accelerate,
        regional_us_east_1,
    })
}

/// The region set that `signature` (`"v4"` or `"v4a"`) and `region_set` ask for, checked:
/// `None` signs with SigV4; SigV4A without a set signs for the one the chain `found` (the
/// profile's or `AWS_SIGV4A_SIGNING_REGION_SET`), else for its region. `Presigner` and `Client`
/// take the two arguments alike.
fn sigv4a_region_set(
    signature: &str,
    region_set: Option<&str>,
    found: &slipstream_client::Resolved,
) -> PyResult<Option<String>> {
    match (signature, region_set) {
        ("v4", None) => Ok(None),
        ("v4", Some(_)) => Err(PyValueError::new_err("region_set is for signature='v4a'")),
        ("v4a", set) => {
            let set = set.or(found.region_set.as_deref()).unwrap_or(&found.region);
            slipstream_sign::check_region_set(set).map_err(value_error)?;
            Ok(Some(set.to_owned()))
        }
        (other, _) => Err(PyValueError::new_err(format!(
            "signature must be 'v4' or 'v4a', not {other:?}"
        ))),
    }
}

/// Every signing and addressing error is the caller's input: `ValueError`, with the message that
/// says what to fix.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

#[pymodule]
fn _slipstream(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Credentials>()?;
    m.add_class::<Presigner>()?;
    m.add_class::<client::Client>()?;
    m.add_class::<arrow::UrlArray>()?;
    m.add_class::<listing::ObjectIterator>()?;
    m.add_class::<listing::AsyncObjectIterator>()?;
    m.add_class::<reader::ObjectReader>()?;
    m.add_class::<async_reader::AsyncObjectReader>()?;
    m.add_class::<writer::ObjectWriter>()?;
    m.add("S3Error", m.py().get_type::<errors::S3Error>())?;
    let quiesce = wrap_pyfunction!(exit::quiesce, m)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (quiesce,))?;
    Ok(())
}
