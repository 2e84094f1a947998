//! Turning Python keyword arguments into `PresignOptions` and a `SigningTime`.

use std::time::SystemTime;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use slipstream_sign::{PresignOptions, SigningTime};

use crate::value_error;

/// Optional signed parameters and headers of one presign call.
#[derive(Default)]
pub struct Extras<'a, 'py> {
    pub version_id: Option<String>,
    pub response_content_type: Option<String>,
    pub response_content_disposition: Option<String>,
    pub response_cache_control: Option<String>,
    pub response_content_language: Option<String>,
    pub response_content_encoding: Option<String>,
    pub response_expires: Option<String>,
    pub headers: Option<&'a Bound<'py, PyAny>>,
    pub params: Option<&'a Bound<'py, PyAny>>,
    pub content_type: Option<String>,
}

/// `expires_in` as S3 accepts it: 1 to 604800 seconds.
pub fn expiry(expires_in: i64) -> PyResult<u64> {
    u64::try_from(expires_in)
        .ok()
        .filter(|e| slipstream_sign::check_expiry(*e).is_ok())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "expires_in={expires_in} is out of range: S3 accepts 1 to 604800 seconds (7 days)"
            ))
        })
}

/// The options, with query parameters in the order botocore serializes GetObject's
/// (`response-*`, then `versionId`), then `params` in their own order.
pub fn build(method: &str, expires_in: i64, e: Extras<'_, '_>) -> PyResult<PresignOptions> {
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(PyValueError::new_err(format!(
            "method {method:?} must be an HTTP method such as 'GET' or 'PUT'"
        )));
    }
    let expires_in = expiry(expires_in)?;
    let mut query: Vec<(String, String)> = [
        ("response-cache-control", e.response_cache_control),
        (
            "response-content-disposition",
            e.response_content_disposition,
        ),
        ("response-content-encoding", e.response_content_encoding),
        ("response-content-language", e.response_content_language),
        ("response-content-type", e.response_content_type),
        ("response-expires", e.response_expires),
        ("versionId", e.version_id),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
    .collect();
    if let Some(p) = e.params {
        query.extend(pairs(p, "params")?);
    }
    let mut headers = Vec::new();
    if let Some(ct) = e.content_type {
        headers.push(("content-type".to_owned(), ct));
    }
    if let Some(h) = e.headers {
        headers.extend(pairs(h, "headers")?);
    }
    Ok(PresignOptions {
        method: method.to_ascii_uppercase(),
        expires_in,
        query,
        headers,
    })
}

/// `(str, str)` pairs from a mapping, in its order.
fn pairs(mapping: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<(String, String)>> {
    let items = mapping
        .call_method0("items")
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a mapping of str to str")))?;
    items
        .try_iter()?
        .map(|item| {
            let (k, v): (String, Bound<'_, PyAny>) = item?.extract()?;
            // Accept ints (e.g. partNumber=3) as boto3 does; anything else must be str.
            let v = if v.is_instance_of::<PyString>() {
                v.extract::<String>()?
            } else {
                v.str()?.extract::<String>()?
            };
            Ok((k, v))
        })
        .collect()
}

/// `at`: `None` (now), an aware `datetime`, or `YYYYMMDDTHHMMSSZ`.
pub fn signing_time(at: Option<&Bound<'_, PyAny>>) -> PyResult<SigningTime> {
    let Some(at) = at.filter(|a| !a.is_none()) else {
        return SigningTime::from_system_time(SystemTime::now()).map_err(value_error);
    };
    if let Ok(text) = at.extract::<String>() {
        return SigningTime::parse_amz(&text).map_err(value_error);
    }
    // abi3 has no datetime C API: go through the datetime's own methods.
    let tz = at.getattr("tzinfo").map_err(|_| {
        PyTypeError::new_err("at must be a datetime, a YYYYMMDDTHHMMSSZ string, or None")
    })?;
    if tz.is_none() {
        return Err(PyValueError::new_err(
            "at must be timezone-aware, e.g. datetime.now(timezone.utc)",
        ));
    }
    let secs: f64 = at.call_method0("timestamp")?.extract()?;
    SigningTime::from_unix(secs.floor() as i64).map_err(value_error)
}
