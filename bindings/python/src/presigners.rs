//! The presigners a `Client` hands out (`Client.presigner`, `Client.generate_presigned_url`):
//! URLs signed with the credentials the client signs its own requests with, for the endpoint
//! and addressing style it sends them to.
//!
//! One `Presigner` per bucket is kept for the credentials of the moment, so a call costs a
//! lookup, not a presigner (a SigV4A one derives its ECDSA key: about 50 µs). Credentials that
//! are refreshed give the next call a new presigner, never a URL signed with keys about to lapse.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use slipstream_client::S3Client;
use slipstream_s3::Endpoint;
use slipstream_sign::Signer;

use crate::client::Client;
use crate::errors::to_py;
use crate::{Made, Presigner};

/// Past this many buckets the kept presigners are dropped and made again as asked for: a program
/// that presigns for a few buckets keeps them all, one that walks many holds no more than this.
const MOST_BUCKETS: usize = 256;

/// The presigner of each bucket, with the signer (credentials) it was made for.
#[derive(Default)]
pub(crate) struct Presigners {
    by_bucket: Mutex<HashMap<String, Kept>>,
}

/// A bucket's presigner and the signer whose credentials it signs with.
struct Kept {
    made_for: Arc<Signer>,
    presigner: Py<Presigner>,
}

impl Presigners {
    /// The presigner of `bucket` for `client`'s current credentials, fetched first (the GIL
    /// released) when they are due.
    pub(crate) fn get(
        &self,
        py: Python<'_>,
        client: &Client,
        bucket: &str,
    ) -> PyResult<Py<Presigner>> {
        let s3 = &client.inner;
        let signer =
            match s3.signer_now() {
                Some(signer) => signer,
                None if s3.unsigned() => return Err(PyValueError::new_err(
                    "this client sends its requests unsigned (signature='unsigned'): it has no \
                     credentials to presign with",
                )),
                None => client.wait(py, s3.signer())?,
            };
        if let Some(kept) = self.kept().get(bucket) {
            if Arc::ptr_eq(&kept.made_for, &signer) {
                return Ok(kept.presigner.clone_ref(py));
            }
        }
        // Made with the lock released: making a Python object may run other threads' Python
        // code, which may be waiting for this lock while holding the GIL.
        let presigner = Py::new(py, made(s3, bucket, &signer)?)?;
        let kept = Kept {
            made_for: signer,
            presigner: presigner.clone_ref(py),
        };
        let mut by_bucket = self.kept();
        if by_bucket.len() >= MOST_BUCKETS {
            by_bucket.clear();
        }
        by_bucket.insert(bucket.to_owned(), kept);
        Ok(presigner)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<String, Kept>> {
        self.by_bucket.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A `Presigner` for `bucket` signing as `signer`, with what pickling it needs.
fn made(s3: &S3Client, bucket: &str, signer: &Signer) -> PyResult<Presigner> {
    let inner = s3.presigner(bucket, signer).map_err(to_py)?;
    let region_set = signer.region_set().map(str::to_owned);
    let made = Made {
        credentials: signer.credentials().clone(),
        endpoint_url: s3.endpoint().map(Endpoint::to_string),
        addressing: s3.addressing().as_str().to_owned(),
        variants: s3.variants(),
        signature: if region_set.is_some() { "v4a" } else { "v4" }.to_owned(),
        region_set,
    };
    Ok(Presigner::from_parts(inner, bucket, s3.region(), made))
}
