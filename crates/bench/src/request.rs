//! The measured requests: S3 operations as signed HTTP requests for one bucket.
//!
//! Signed the way the client signs (SigV4 headers, UNSIGNED-PAYLOAD), just before each request,
//! so the cost of signing (about 2 µs) is inside every measured latency, as in any real client.

use std::time::SystemTime;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Request;
use slipstream_sign::encode::{encode_path_into, encode_query};
use slipstream_sign::{PayloadHash, Signer, SigningTime, UrlBase};

/// The kinds of operation a run measures; each gets its own percentiles.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// PutObject.
    Put,
    /// GetObject, the whole body read.
    Get,
    /// HeadObject.
    Head,
    /// DeleteObject.
    Delete,
    /// ListObjectsV2, one page of up to 1,000 keys.
    List,
    /// A presigned GET URL (CPU only, no request).
    Presign,
}

impl OpKind {
    /// The lowercase name used in tables, JSON and `--mix`.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Put => "put",
            OpKind::Get => "get",
            OpKind::Head => "head",
            OpKind::Delete => "delete",
            OpKind::List => "list",
            OpKind::Presign => "presign",
        }
    }
}

/// One request to make.
#[derive(Clone, Debug)]
pub struct Op {
    /// What it is.
    pub kind: OpKind,
    /// The object key, or the prefix for a list.
    pub key: String,
}

/// Builds signed requests for one bucket.
pub struct Requests {
    signer: Signer,
    base: UrlBase,
    payload: Bytes,
}

impl Requests {
    /// Requests to `base` signed by `signer`; PUT bodies are `payload` (shared, never copied).
    pub fn new(signer: Signer, base: UrlBase, payload: Bytes) -> Self {
        Self {
            signer,
            base,
            payload,
        }
    }

    /// The signed HTTP request for `op`.
    pub fn build(&self, op: &Op) -> Result<Request<Full<Bytes>>, String> {
        let mut path = self.base.path_prefix.clone();
        let mut query = String::new();
        let (method, body) = match op.kind {
            OpKind::Put => ("PUT", self.payload.clone()),
            OpKind::Get => ("GET", Bytes::new()),
            OpKind::Head => ("HEAD", Bytes::new()),
            OpKind::Delete => ("DELETE", Bytes::new()),
            OpKind::List => {
                query = format!("list-type=2&max-keys=1000&prefix={}", encode_query(&op.key));
                ("GET", Bytes::new())
            }
            OpKind::Presign => return Err("a presign is not a request".into()),
        };
        if op.kind == OpKind::List {
            // Path style: `/bucket`; virtual-hosted: `/`.
            if path.len() > 1 {
                path.pop();
            }
        } else {
            encode_path_into(&mut path, &op.key);
        }
        let now = SigningTime::from_system_time(SystemTime::now()).map_err(|e| e.to_string())?;
        let headers = [("host", self.base.host.as_str())];
        let req = slipstream_sign::Request {
            method,
            path: &path,
            query: &query,
            headers: &headers,
        };
        let sig = self
            .signer
            .sign_headers(&req, &PayloadHash::Unsigned, now)
            .map_err(|e| e.to_string())?;
        let uri = if query.is_empty() {
            path
        } else {
            format!("{path}?{query}")
        };
        let mut builder = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", &self.base.host)
            .header("content-length", body.len());
        for (n, v) in &sig.headers {
            builder = builder.header(*n, v.as_str());
        }
        builder.body(Full::new(body)).map_err(|e| e.to_string())
    }
}
