//! The top layer: signed S3 requests, retried, with S3's errors.
//!
//! One [`S3Client`] holds one connection pool (`transport.rs`) and the signer of the current
//! credentials (`credentials/`). Every request is signed just before each attempt, so a retry
//! after a long backoff still carries a fresh date. The operations themselves are in `ops.rs`.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use slipstream_s3::{AddressingStyle, Endpoint, Variants};
use slipstream_sign::{
    encode::{encode_path_into, encode_query_into},
    PayloadHash, Presigner, Signer, SigningTime, UrlBase,
};

use crate::activity::{Activity, Sending};
use crate::connect_time::ConnectTimes;
use crate::credentials::CredentialCache;
use crate::transport::{connection_error, pools, Connector, Http};
use crate::{xml, ClientError, ClientOptions, Payload, Resolved};

/// A request before signing: bucket-relative, so addressing is applied in one place.
pub(crate) struct Call<'a> {
    pub method: Method,
    pub bucket: &'a str,
    /// `None` for bucket-level operations.
    pub key: Option<&'a str>,
    /// Already encoded, without `?`.
    pub query: String,
    /// Headers to send and sign (lowercase names), besides `host` and the signer's own. Most
    /// names are constants; a copy's `x-amz-meta-*` come from the source object.
    pub headers: Vec<(Cow<'static, str>, String)>,
    pub body: Payload,
    /// A listing page: sent over the listings' own connections (`transport::Pools`).
    pub listing: bool,
    /// A request of the service itself, naming no bucket (`ListBuckets`): `bucket` is unused.
    pub service: bool,
}

impl<'a> Call<'a> {
    /// A bodiless request without query or extra headers (fill those in with `..`).
    pub(crate) fn new(method: Method, bucket: &'a str, key: Option<&'a str>) -> Self {
        Self {
            method,
            bucket,
            key,
            query: String::new(),
            headers: Vec::new(),
            body: Payload::Bytes(Bytes::new()),
            listing: false,
            service: false,
        }
    }

    /// A bucket-level request with an XML `body` and its CRC32C, the checksum S3 requires
    /// (in place of `Content-MD5`) of some requests: `DeleteObjects`, `PutBucketVersioning`.
    pub(crate) fn checksummed(method: Method, bucket: &'a str, query: &str, body: String) -> Self {
        let body = Bytes::from(body);
        let algorithm = crate::ChecksumAlgorithm::Crc32c;
        Self {
            query: query.to_owned(),
            headers: vec![(algorithm.header().into(), algorithm.base64_of(&body))],
            body: body.into(),
            ..Self::new(method, bucket, None)
        }
    }

    /// A bodiless request to one object (at its version, when the key names one).
    pub(crate) fn of(method: Method, bucket: &'a str, key: crate::ObjectKey<'a>) -> Self {
        Self {
            query: key.query(),
            ..Self::new(method, bucket, Some(key.key))
        }
    }
}

/// An S3 client: signed operations over a connection pool. Cheap to share (`Arc` it).
pub struct S3Client {
    http: Http,
    /// The pool's connector, for [`S3Client::preconnect`].
    warm: Connector,
    /// Listing pages' own pool (see `transport::Pools`).
    listing: Http,
    /// How long both pools' TCP connects took.
    connect_times: ConnectTimes,
    credentials: CredentialCache,
    /// The pool credentials are fetched over: `http` itself, or one of their own when `http`
    /// checks no certificate.
    credential_http: Http,
    region: String,
    endpoint: Option<Endpoint>,
    addressing: AddressingStyle,
    /// FIPS, dual-stack, acceleration: which of AWS's hosts (none for a custom endpoint).
    variants: Variants,
    options: ClientOptions,
    /// The proxies on the way (`proxy.rs`): a request sent to a forwarding proxy carries its
    /// credentials.
    proxies: Option<crate::Proxies>,
    activity: Arc<Activity>,
    /// Learned: this server's answers to a range that covers a whole object carry the object's
    /// checksum (versitygw's do; AWS S3 sends none on ranged answers), so a download of a small
    /// object needs no HeadObject beside its GET (`slipstream_transfer`'s `source::start`).
    whole_range_checksums: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for S3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Client")
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl S3Client {
    /// A client for the configuration the AWS chain resolved.
    pub fn new(config: &Resolved, options: ClientOptions) -> Result<Self, ClientError> {
        let scope = crate::credentials::Scope {
            region: config.region.clone(),
            region_set: config.region_set.clone(),
        };
        if let Some(why) = config.proxies.as_ref().and_then(|p| p.unusable()) {
            return Err(ClientError::Request(why.to_owned()));
        }
        let credentials = CredentialCache::new(config.credentials.clone(), scope)?;
        let pools = pools(
            &options,
            config.ca_bundle.as_deref(),
            config.proxies.as_ref(),
        )?;
        // Credentials (an SSO token sent to its portal, STS's answers) are never fetched over
        // connections that check no certificate: the unchecked ones are for the S3 server only.
        let credential_http = if options.skip_certificate_check {
            let checked = ClientOptions {
                skip_certificate_check: false,
                ..options.clone()
            };
            crate::transport::http_client(
                &checked,
                config.ca_bundle.as_deref(),
                config.proxies.as_ref(),
            )?
        } else {
            pools.http.clone()
        };
        Ok(Self {
            http: pools.http,
            warm: pools.warm,
            listing: pools.listing,
            connect_times: pools.connect_times,
            credentials,
            credential_http,
            region: config.region.clone(),
            endpoint: config.endpoint.clone(),
            addressing: config.addressing,
            variants: config.variants,
            options,
            proxies: config.proxies.clone(),
            activity: Arc::new(Activity::new()),
            whole_range_checksums: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Whether this server has been seen to send an object's checksum on a ranged answer that
    /// covered the whole object (see [`S3Client::get_first`]).
    pub fn whole_range_checksums(&self) -> bool {
        self.whole_range_checksums
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records that this server sends checksums on whole-object ranged answers.
    pub fn learn_whole_range_checksums(&self) {
        self.whole_range_checksums
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Starts opening connections to `bucket`'s endpoint in the background so that `n` are
    /// there for a transfer about to need them (parts after `CreateMultipartUpload`, objects
    /// after a listing): they connect and handshake while the first request is on its way,
    /// which saves them a round trip (two with TLS) before their first byte. Unused ones are
    /// closed after 10 s. Connections this client dialled to that endpoint since it was last
    /// idle for the idle timeout count against `n`: its pool likely has them to reuse.
    pub fn preconnect(&self, bucket: &str, n: usize) {
        let Ok((base, _)) = self.target(bucket, None) else {
            return;
        };
        if let Ok(uri) = base.origin.parse() {
            self.warm.open(&uri, n, self.options.idle_timeout);
        }
    }

    /// The shortest time a TCP connection to `bucket`'s endpoint has taken this client to
    /// connect (its DNS lookup included, its TLS handshake not), if one has (for requests or
    /// for listings), known as soon as TCP connects: the network's part of a first answer, which
    /// a busy server does not lengthen as it does the answer (or the TLS handshake).
    pub fn quickest_connect(&self, bucket: &str) -> Option<Duration> {
        let (base, _) = self.target(bucket, None).ok()?;
        self.connect_times.quickest(&base.origin.parse().ok()?)
    }

    /// Where `bucket` lives, and the path of `key` (or of the bucket itself).
    fn target(&self, bucket: &str, key: Option<&str>) -> Result<(UrlBase, String), ClientError> {
        let base = slipstream_s3::resolve(
            bucket,
            &self.region,
            self.endpoint.as_ref(),
            self.addressing,
            self.variants,
        )?;
        let mut path = base.path_prefix.clone();
        match key {
            // The path would name the bucket: a delete of "" would delete the bucket, a get
            // would list it. S3 has no object without a name (botocore: min length 1).
            Some("") => {
                return Err(ClientError::Request(
                    "the object key is empty: S3 keys need at least one character".into(),
                ))
            }
            Some(k) => encode_path_into(&mut path, k),
            // Path style: `/bucket`; virtual-hosted: `/`.
            None if path.len() > 1 => {
                path.pop();
            }
            None => {}
        }
        Ok((base, path))
    }

    /// Where `call` goes: the URL base and the path.
    fn target_of(&self, call: &Call<'_>) -> Result<(UrlBase, String), ClientError> {
        if call.service {
            let base = slipstream_s3::resolve_service(
                &self.region,
                self.endpoint.as_ref(),
                self.variants,
            )?;
            let path = base.path_prefix.clone();
            Ok((base, path))
        } else {
            self.target(call.bucket, call.key)
        }
    }

    /// Sends `call`, retrying what may succeed on another attempt; returns the response of a
    /// 2xx (or 304/206) answer, and S3's error otherwise.
    pub(crate) async fn send(&self, call: &Call<'_>) -> Result<Response<Incoming>, ClientError> {
        let target = self.target_of(call)?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = self.options.trace.as_ref().map(|_| Instant::now());
            let result = self.attempt(call, &target).await;
            let retry_in = match &result {
                Err(e) if e.is_retryable() && attempt < self.options.max_attempts => {
                    Some(self.backoff(attempt))
                }
                _ => None,
            };
            if let Some(started) = started {
                let outcome = result.as_ref().map(|r| r.status().as_u16());
                self.report(call, &target, attempt, started, outcome, retry_in);
            }
            match retry_in {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return result,
            }
        }
    }

    /// Tells [`ClientOptions::trace`] how an attempt ended.
    fn report(
        &self,
        call: &Call<'_>,
        (base, path): &(UrlBase, String),
        number: u32,
        started: Instant,
        outcome: Result<u16, &ClientError>,
        retry_in: Option<Duration>,
    ) {
        let Some(trace) = &self.options.trace else {
            return;
        };
        let mut url = format!("{}{path}", base.origin);
        if !call.query.is_empty() {
            url.push('?');
            url.push_str(&call.query);
        }
        (trace.0)(&crate::trace::Attempt {
            method: call.method.as_str(),
            url: &url,
            number,
            of: self.options.max_attempts,
            took: started.elapsed(),
            outcome,
            retry_in,
        });
    }

    /// Sends `call` and reads its whole answer with `read`. An S3 error inside a 200 (which
    /// `CopyObject`, `UploadPartCopy` and `DeleteObjects` may send once their work went wrong,
    /// e.g. `InternalError`, `SlowDown`) is an error, retried as [`S3Client::send`] retries
    /// the others.
    pub(crate) async fn send_and_read<T>(
        &self,
        call: &Call<'_>,
        read: impl Fn(&[u8]) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = self.options.trace.as_ref().map(|_| Instant::now());
            let r = self.send(call).await?;
            let body = crate::ops::body_bytes(r.into_body()).await?;
            let e = match xml::error(&body) {
                None => return read(&body),
                Some((code, message)) => ClientError::S3 {
                    status: 200,
                    code,
                    message,
                },
            };
            let retry_in = (e.is_retryable() && attempt < self.options.max_attempts)
                .then(|| self.backoff(attempt));
            if let Some(started) = started {
                let target = self.target_of(call)?;
                self.report(call, &target, attempt, started, Err(&e), retry_in);
            }
            match retry_in {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return Err(e),
            }
        }
    }

    /// The wait before attempt `attempt + 1`. Full jitter: uniform between 0 and
    /// `base * 2^(attempt-1)`, capped at 10 s, so clients that failed together do not retry together.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let cap = Duration::from_secs(10);
        let ceiling = self
            .options
            .backoff_base
            .saturating_mul(1 << attempt.saturating_sub(1).min(16))
            .min(cap);
        ceiling.mul_f64(fastrand::f64())
    }

    /// How long a response body may bring nothing before it is abandoned (and fetched again).
    pub fn read_timeout(&self) -> Duration {
        self.options.read_timeout
    }

    /// The region requests are signed for (and buckets are made in).
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The signer of the client's current credentials (fetched first when they are due), which
    /// its requests are signed with; an error for a client that sends them unsigned.
    pub async fn signer(&self) -> Result<Arc<Signer>, ClientError> {
        self.credentials.signer(&self.credential_http).await
    }

    /// [`S3Client::signer`] without waiting: `None` when a fetch is due or under way, and for
    /// a client that sends its requests unsigned.
    pub fn signer_now(&self) -> Option<Arc<Signer>> {
        self.credentials.signer_now()
    }

    /// The endpoint requests go to, when not AWS's for the region.
    pub fn endpoint(&self) -> Option<&Endpoint> {
        self.endpoint.as_ref()
    }

    /// Virtual-hosted or path-style addressing, as configured.
    pub fn addressing(&self) -> AddressingStyle {
        self.addressing
    }

    /// Which of AWS's endpoints requests go to (FIPS, dual-stack, acceleration), as configured.
    pub fn variants(&self) -> Variants {
        self.variants
    }

    /// Whether this client sends its requests unsigned (it has no credentials).
    pub fn unsigned(&self) -> bool {
        self.credentials.unsigned()
    }

    /// A presigner of URLs to `bucket`'s objects, at the address this client sends requests to
    /// (its endpoint and addressing style), signed as `signer` (one of [`S3Client::signer`]'s)
    /// signs: the URLs a user of this client hands out reach what it reaches.
    pub fn presigner(&self, bucket: &str, signer: &Signer) -> Result<Presigner, ClientError> {
        let (base, _) = self.target(bucket, None)?;
        Presigner::for_signer(base, signer).map_err(|e| ClientError::Request(e.to_string()))
    }

    /// The URL of `bucket/key` with `query` (names and values in the order given, encoded),
    /// unsigned: what a client without credentials hands out for a public object, as botocore's
    /// `generate_presigned_url` does under `signature_version=UNSIGNED`.
    pub fn object_url(
        &self,
        bucket: &str,
        key: &str,
        query: &[(&str, &str)],
    ) -> Result<String, ClientError> {
        let (base, path) = self.target(bucket, Some(key))?;
        let mut url = base.origin;
        url.push_str(&path);
        for (i, (name, value)) in query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            encode_query_into(&mut url, name);
            url.push('=');
            encode_query_into(&mut url, value);
        }
        Ok(url)
    }

    /// The most keys a listing page asks for ([`ClientOptions::list_page_size`]).
    pub(crate) fn list_page_size(&self) -> Option<usize> {
        self.options.list_page_size
    }

    /// When this client last moved a byte: request bodies note it as the connections take
    /// them, responses as they arrive, and readers of response bodies note each frame.
    pub fn activity(&self) -> &Arc<Activity> {
        &self.activity
    }

    /// Attempts per request: also the budget of a transfer step retried as a whole (a part whose
    /// body stalled or broke after its headers arrived).
    pub fn max_attempts(&self) -> u32 {
        self.options.max_attempts
    }

    /// One signed attempt of `call` at `(base, path)`.
    async fn attempt(
        &self,
        call: &Call<'_>,
        (base, path): &(UrlBase, String),
    ) -> Result<Response<Incoming>, ClientError> {
        let mut signed: Vec<(&str, &str)> = vec![("host", &base.host)];
        signed.extend(call.headers.iter().map(|(n, v)| (n.as_ref(), v.as_str())));
        let payer = self.options.request_payer.then_some(REQUEST_PAYER);
        signed.extend(payer);
        let now = SigningTime::from_system_time(SystemTime::now())
            .map_err(|e| ClientError::Request(e.to_string()))?;
        let req = slipstream_sign::Request {
            method: call.method.as_str(),
            path,
            query: &call.query,
            headers: &signed,
        };
        // The body is covered by its CRC32C header where it matters, not by SHA-256: hashing
        // every part twice would cost more CPU than the transfer itself.
        let sig = match self.credentials.unsigned() {
            true => None,
            false => {
                let signer = self.credentials.signer(&self.credential_http).await?;
                let signed = signer.sign_headers(&req, &PayloadHash::Unsigned, now);
                Some(signed.map_err(|e| ClientError::Request(e.to_string()))?)
            }
        };
        let uri = if call.query.is_empty() {
            format!("{}{path}", base.origin)
        } else {
            format!("{}{path}?{}", base.origin, call.query)
        };
        let mut builder = Request::builder()
            .method(call.method.clone())
            .uri(&uri)
            .header("host", &base.host)
            .header("content-length", call.body.len());
        for (n, v) in call.headers.iter().map(|(n, v)| (n.as_ref(), v.as_str())) {
            builder = builder.header(n, v);
        }
        if let Some((n, v)) = payer {
            builder = builder.header(n, v);
        }
        for (n, v) in sig.iter().flat_map(|s| &s.headers) {
            builder = builder.header(*n, v.as_str());
        }
        // Unsigned: a proxy may drop it.
        if let Some(auth) = self
            .proxies
            .as_ref()
            .and_then(|p| p.forward_auth(&base.origin))
        {
            builder = builder.header(hyper::header::PROXY_AUTHORIZATION, auth);
        }
        // The response timeout runs from the last byte of the body the connection took.
        let sent = Arc::new(Activity::new());
        let body = Sending::new(
            call.body.clone(),
            vec![Arc::clone(&self.activity), Arc::clone(&sent)],
        );
        let request = builder
            .body(body)
            .map_err(|e| ClientError::Request(e.to_string()))?;
        let timeout = self.options.response_timeout;
        let pool = if call.listing {
            &self.listing
        } else {
            &self.http
        };
        let response = sent
            .until_idle(timeout, pool.request(request))
            .await
            .ok_or_else(|| {
                ClientError::Network(format!(
                    "no response within {}s of the request's last byte",
                    timeout.as_secs_f64()
                ))
            })?
            .map_err(|e| connection_error(&base.origin, &e))?;
        self.activity.touch();
        let status = response.status();
        if status.is_success() || status == hyper::StatusCode::NOT_MODIFIED {
            return Ok(response);
        }
        match error_of(response).await {
            // Say why a refusal may be: the bucket lets nobody in without credentials.
            ClientError::S3 {
                status: 403,
                code,
                message,
            } if sig.is_none() => Err(ClientError::S3 {
                status: 403,
                code,
                message: format!(
                    "{message} (the request went unsigned, --no-sign-request: this bucket does \
                     not let anonymous requests do that)"
                ),
            }),
            refused => Err(refused),
        }
    }
}

/// What every request of a client with [`ClientOptions::request_payer`] carries, signed.
const REQUEST_PAYER: (&str, &str) = ("x-amz-request-payer", "requester");

/// S3's error from a non-2xx response: the XML body's code and message, or the status alone.
async fn error_of(response: Response<Incoming>) -> ClientError {
    let status = response.status();
    // A version that is a delete marker has no data: S3 answers a read of it 405 (a read of
    // the key whose current version is one, 404), and says why only in this header.
    let marker = response
        .headers()
        .get("x-amz-delete-marker")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
    let body = Limited::new(response.into_body(), 64 * 1024)
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let (code, message) = xml::error(&body).unwrap_or_else(|| {
        let code = match status.as_u16() {
            404 => "NotFound",
            403 => "Forbidden",
            405 => "MethodNotAllowed",
            412 => "PreconditionFailed",
            _ => "",
        };
        (code.into(), status.canonical_reason().unwrap_or("").into())
    });
    let message = match (marker, status.as_u16()) {
        (true, 405) => format!("{message} (that version is a delete marker: it has no data)"),
        (true, _) => format!(
            "{message} (it was deleted: its current version is a delete marker, and its earlier \
             versions remain)"
        ),
        (false, _) => message,
    };
    ClientError::S3 {
        status: status.as_u16(),
        code,
        message,
    }
}
