//! Verify mode: the edge authenticates every request itself, authorizes it against the key's
//! policy, and only then signs it for the origin with its own credentials.
//!
//! Order, each step refusing with S3's error before anything reaches the origin:
//! 1. the signature ([`Verifier`], the same canonicalization code the client crate signs
//!    with), at the edge's region, from keys whose secrets the verifier never sees;
//! 2. the session token, if the key has one;
//! 3. the operation (`operation.rs`) against the policy (`policy.rs`), every action it takes;
//! 4. the body, by how it was signed: a pinned SHA-256 is checked before the last byte goes
//!    upstream (small bodies are held and checked before the request is sent at all);
//!    aws-chunked bodies are verified chunk by chunk and re-framed (`reframe.rs`);
//!    `UNSIGNED-PAYLOAD` streams;
//! 5. the upstream request: the client's `Authorization`, `X-Amz-Security-Token` and query
//!    auth removed, `Host` the origin's, the path and the rest of the query byte for byte as
//!    verified, signed with SigV4 for the origin's region.
//!
//! Keys come from a TOML file (`keys.rs`), reloaded when it changes and on SIGHUP (a file that
//! does not load leaves the keys in use), or from an authority (`authority.rs`) through a cache
//! (`cache.rs`): the request's access key id is looked up before the signature is checked, and
//! the verifier is then given that one key and nothing else.

mod authority;
mod cache;
mod create_bucket;
mod keys;
mod pinned;
mod policy;
mod post;
mod reframe;

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use bytes::Bytes;
use http_body::Body as _;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, CONTENT_LENGTH, HOST};
use hyper::http::request::Parts;
use hyper::{Request, StatusCode};
use sha2::{Digest, Sha256};
use slipstream_client::RefreshingSigner;
use slipstream_s3::operation::{operation, Check, OperationError};
use slipstream_sign::encode::{cut, fields};
use slipstream_sign::verify::{presign_param, ChunkedBody, Verified, Verifier, VerifyError};
use slipstream_sign::{PayloadHash, SigningTime};
use tokio::sync::oneshot;

use keys::Key;
pub(crate) use keys::Keys;
use policy::Policy;

use crate::body::Upload;
use crate::pool::UpBody;
pub(crate) use reframe::FailureSlot;
use reframe::Reframed;
use slipstream_sign::verify::{Reframer, Trailer};

use crate::proxy::{Admitted, Answer};

/// Bodies with a signed SHA-256 up to this size are read whole and checked before the request
/// goes upstream (larger ones stream and are checked before their last byte).
pub(crate) const HOLD_LIMIT: u64 = 1 << 20;
/// The largest `POST ?delete` body read (S3's 1,000 keys of up to 1,024 bytes fit).
const DELETE_LIMIT: usize = 2 << 20;

/// Request headers the edge replaces with its own, or that belong to the client's signature.
const CLIENT_AUTH_HEADERS: [&str; 7] = [
    "authorization",
    "x-amz-security-token",
    "x-amz-date",
    "x-amz-content-sha256",
    "x-amz-region-set",
    "x-amz-decoded-content-length",
    "x-amz-trailer",
];

/// Where the keys come from.
enum Store {
    File {
        keys: RwLock<Arc<Keys>>,
        path: PathBuf,
    },
    Authority {
        cache: Arc<cache::Cache>,
        authority: Arc<authority::Authority>,
    },
}

/// The keys one request is verified with: the whole file, or the one key the authority
/// described for the access key id the request names (any other id is unknown, so a request
/// cannot be verified with a key it did not name).
enum Held {
    File(Arc<Keys>),
    One(String, Option<Arc<Key>>),
}

impl Held {
    fn get(&self, access_key_id: &str) -> Option<&Key> {
        match self {
            Self::File(keys) => keys.get(access_key_id),
            Self::One(id, key) => key.as_deref().filter(|_| id == access_key_id),
        }
    }
}

impl slipstream_sign::verify::KeySource for Held {
    fn signing_key(
        &self,
        access_key_id: &str,
        date_stamp: &str,
        region: &str,
        service: &str,
    ) -> Option<slipstream_sign::SigningKey> {
        match self {
            Self::File(keys) => keys.signing_key(access_key_id, date_stamp, region, service),
            Self::One(..) => self
                .get(access_key_id)?
                .signing_key(date_stamp, region, service),
        }
    }

    fn public_key(&self, access_key_id: &str) -> Option<Vec<u8>> {
        match self {
            Self::File(keys) => keys.public_key(access_key_id),
            Self::One(..) => self.get(access_key_id)?.public_key(),
        }
    }
}

/// Checks a policy document as the edge loads it.
pub(crate) fn check_policy(document: &serde_json::Value) -> Result<(), String> {
    Policy::parse(document)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// What verify mode needs, shared by every request.
pub(crate) struct Verify {
    verifier: Verifier,
    store: Store,
    signer: RefreshingSigner,
    /// The `Host` the origin is addressed by.
    origin_host: String,
    /// The region clients sign for at the edge.
    region: String,
    /// The region the edge signs for at the origin.
    origin_region: String,
    /// `.DOMAIN` for each virtual-host domain.
    host_suffixes: Vec<String>,
}

impl Verify {
    /// Loads the keys file, or readies the authority's client and cache; `origin_host` is the
    /// origin's `Host`.
    pub(crate) fn new(
        settings: &crate::VerifySettings,
        signer: RefreshingSigner,
        origin_host: String,
        metrics: Arc<crate::metrics::Metrics>,
    ) -> Result<Self, String> {
        let region = settings.region.as_str();
        let store = match &settings.keys {
            crate::KeySettings::File(path) => Store::File {
                keys: RwLock::new(Arc::new(Keys::load(path)?)),
                path: path.clone(),
            },
            crate::KeySettings::Authority(a) => {
                let authority = Arc::new(authority::Authority::new(
                    &a.url,
                    a.token.clone(),
                    a.ca_bundle.as_deref(),
                    region,
                )?);
                let times = cache::CacheTimes {
                    soft: a.soft_ttl,
                    hard: a.hard_ttl,
                    negative: a.negative_ttl,
                    disconnected: a.disconnected,
                };
                let fetcher = Arc::new(authority::Fetcher(Arc::clone(&authority)));
                let cache = Arc::new(cache::Cache::new(fetcher, times, metrics));
                Store::Authority { cache, authority }
            }
        };
        Ok(Self {
            verifier: Verifier::s3(region),
            store,
            signer,
            origin_host,
            region: region.to_owned(),
            origin_region: settings.origin_region.clone(),
            host_suffixes: settings
                .virtual_host_domains
                .iter()
                .map(|d| format!(".{}", d.to_ascii_lowercase()))
                .collect(),
        })
    }

    /// Reads the keys file again; on error the keys in use stay. Says how many keys loaded.
    /// With an authority there is nothing to reload (its change stream does that).
    pub(crate) fn reload(&self) -> Result<String, String> {
        let Store::File { keys, path } = &self.store else {
            return Ok(String::new());
        };
        let fresh = Keys::load(path)?;
        let done = format!("{} keys loaded from {}", fresh.len(), path.display());
        match keys.write() {
            Ok(mut k) => *k = Arc::new(fresh),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(fresh),
        }
        Ok(done)
    }

    /// `location`, a URL under `origin` (`scheme://authority`, which the edge addresses path
    /// style), as the client addressed the edge: its `scheme://host`, and for a
    /// virtual-hosted client the bucket moved from the path back into the host. `None` for
    /// any other URL (a `success_action_redirect` target, say), which stays as it is.
    pub(crate) fn client_location(
        &self,
        location: &str,
        origin: &str,
        scheme: &str,
        client_host: &str,
    ) -> Option<String> {
        client_location(&self.host_suffixes, location, origin, scheme, client_host)
    }

    /// The keys file, when keys come from one.
    pub(crate) fn keys_file(&self) -> Option<&std::path::Path> {
        match &self.store {
            Store::File { path, .. } => Some(path),
            Store::Authority { .. } => None,
        }
    }

    /// Follows the authority's change stream until the edge stops (nothing with a keys file).
    pub(crate) fn follow_authority(&self) -> Option<impl std::future::Future<Output = ()>> {
        match &self.store {
            Store::File { .. } => None,
            Store::Authority { cache, authority } => {
                Some(Arc::clone(authority).follow(Arc::clone(cache)))
            }
        }
    }

    /// The keys this request is verified with. With an authority: the entry for the access
    /// key id the request names (from memory, or fetched), or a refusal when the authority
    /// cannot be reached and nothing usable is held (fail closed).
    async fn held(&self, header_list: &[(&str, &str)], target: &str) -> Result<Held, Answer> {
        let id = match &self.store {
            Store::File { .. } => String::new(),
            Store::Authority { .. } => {
                claimed_access_key_id(header_list, target).unwrap_or_default()
            }
        };
        self.held_for(id).await
    }

    /// The keys for a request that names access key `id` (unused with a keys file).
    async fn held_for(&self, id: String) -> Result<Held, Answer> {
        match &self.store {
            Store::File { keys, .. } => Ok(Held::File(match keys.read() {
                Ok(k) => Arc::clone(&k),
                Err(poisoned) => Arc::clone(&poisoned.into_inner()),
            })),
            Store::Authority { cache, .. } => {
                if !crate::authority_wire::plausible_access_key_id(&id) {
                    return Ok(Held::One(id, None));
                }
                match cache.get(&id).await {
                    Ok(key) => Ok(Held::One(id, key)),
                    Err(_) => Err((
                        StatusCode::SERVICE_UNAVAILABLE,
                        "ServiceUnavailable",
                        "Please reduce your request rate.".into(),
                    )),
                }
            }
        }
    }

    /// Verifies, authorizes and signs `parts`; the body is wrapped to be checked on its way.
    pub(crate) async fn admit(
        &self,
        parts: Parts,
        body: Incoming,
        client_host: &str,
        counted: Arc<AtomicU64>,
        tls: bool,
    ) -> Result<Admitted, Answer> {
        if post::is_post_upload(&parts) {
            let names_key = || {
                let query = parts.uri.query().unwrap_or("");
                parts
                    .headers
                    .keys()
                    .any(|n| crate::customer_key::names_key(n.as_str()))
                    || crate::customer_key::query_names_key(query)
            };
            if !tls && names_key() {
                return Err(crate::customer_key::insecure());
            }
            return self.admit_post(parts, body, client_host, counted).await;
        }
        let now = SigningTime::from_system_time(SystemTime::now())
            .map_err(|e| internal(e.to_string()))?;
        let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let mut header_list: Vec<(&str, &str)> = Vec::with_capacity(parts.headers.len() + 1);
        let mut customer_key = false;
        for (name, value) in &parts.headers {
            let value = value.to_str().map_err(|_| {
                refuse(VerifyError::InvalidRequest(format!(
                    "the header {name} is not visible ASCII"
                )))
            })?;
            customer_key |= crate::customer_key::names_key(name.as_str());
            header_list.push((name.as_str(), value));
        }
        // The query is split once, for this check, the verifier, and the operation and token
        // below. Sized for a presigned URL's eight parameters and a few more: collecting the
        // filtered split alone would allocate and then grow.
        let (path, query) = cut(target, b'?').unwrap_or((target, ""));
        let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(12);
        pairs.extend(slipstream_sign::canonical::split_query(query));
        // Before the keys are asked for: a key sent in the clear is refused whoever signed it.
        if !tls
            && (customer_key
                || pairs
                    .iter()
                    .any(|(name, _)| crate::customer_key::names_key(name)))
        {
            return Err(crate::customer_key::insecure());
        }
        if !parts.headers.contains_key(HOST) && !client_host.is_empty() {
            header_list.push(("host", client_host)); // HTTP/2's :authority, as signed
        }
        let keys = self.held(&header_list, target).await?;
        let incoming = slipstream_sign::verify::Incoming {
            method: parts.method.as_str(),
            target,
            headers: &header_list,
            body_sha256: None,
        };
        let verified = self
            .verifier
            .verify_split(&incoming, (path, &pairs), &keys, now)
            .map_err(refuse)?;
        let key = keys
            .get(verified.access_key_id())
            .ok_or_else(|| refuse(VerifyError::InvalidAccessKeyId))?;
        let host = header_list
            .iter()
            .find(|(n, _)| *n == "host")
            .map_or("", |(_, v)| *v);
        let host_bucket = host_bucket(&self.host_suffixes, host);
        if let Some(b) = host_bucket {
            if !dns_bucket(b) {
                return Err((
                    StatusCode::BAD_REQUEST,
                    "InvalidBucketName",
                    format!("{b:?} is not a bucket name a host can carry"),
                ));
            }
        }
        let token = session_token(&header_list, &pairs);
        key.check_token(token.as_deref(), now.unix())
            .map_err(|(code, message)| (StatusCode::FORBIDDEN, code, message.to_owned()))?;
        let op = operation(
            parts.method.as_str(),
            host_bucket,
            path,
            &pairs,
            &header_list,
        )
        .map_err(|e| match e {
            OperationError::InvalidUri(m) => (StatusCode::BAD_REQUEST, "InvalidURI", m),
            OperationError::Unknown(m) => (StatusCode::FORBIDDEN, "AccessDenied", m),
        })?;
        authorize(&key.policy, &op.checks)?;

        let upstream_query = strip_query_auth(query);
        let path_and_query = upstream_target(host_bucket, path, &upstream_query);
        let upstream_path = cut(&path_and_query, b'?').map_or(path_and_query.as_str(), |(p, _)| p);
        let mut headers = upstream_headers(&parts.headers);

        let (body, payload, body_done, failure) = if op.batch_delete {
            let data =
                read_whole(body, &verified, &keys, &header_list, DELETE_LIMIT, &counted).await?;
            let bucket = op.bucket.as_deref().unwrap_or_default();
            let mut checks = Vec::new();
            for key in delete_keys(&data)? {
                checks.push(Check {
                    action: "s3:DeleteObject",
                    resource: format!("arn:aws:s3:::{bucket}/{key}"),
                });
            }
            authorize(&key.policy, &checks)?;
            whole(&mut headers, data)
        } else if op.create_bucket && !body.is_end_stream() {
            let limit = create_bucket::CREATE_BUCKET_LIMIT;
            let data = read_whole(body, &verified, &keys, &header_list, limit, &counted).await?;
            let data =
                create_bucket::for_origin(data, &self.region, &self.origin_region, &mut headers)?;
            whole(&mut headers, data)
        } else if body.is_end_stream() {
            verified.check_empty_body().map_err(refuse)?;
            // `Empty` is a zero-sized body: boxing it allocates nothing (GET and HEAD).
            let empty = Empty::new().map_err(|never| match never {}).boxed();
            (empty, PayloadHash::of(b""), None, None)
        } else {
            self.stream(body, verified, &keys, &header_list, &mut headers, counted)
                .await?
        };

        let signer = self.origin_signer().await?;
        let mut to_sign: Vec<(&str, &str)> = Vec::with_capacity(headers.len() + 1);
        to_sign.push(("host", &self.origin_host));
        for (name, value) in &headers {
            let n = name.as_str();
            if n.starts_with("x-amz-") || n == "content-md5" {
                if let Ok(v) = value.to_str() {
                    to_sign.push((n, v));
                }
            }
        }
        let signature = signer
            .sign_headers(
                &slipstream_sign::Request {
                    method: parts.method.as_str(),
                    path: upstream_path,
                    query: &upstream_query,
                    headers: &to_sign,
                },
                &payload,
                now,
            )
            .map_err(|e| internal(format!("cannot sign for the origin: {e}")))?;
        for (name, value) in signature.headers {
            // The signer's strings become the values without a copy (checked all the same).
            let value = HeaderValue::from_maybe_shared(Bytes::from(value))
                .map_err(|e| internal(e.to_string()))?;
            headers.insert(HeaderName::from_static(name), value);
        }
        let safe = matches!(parts.method.as_str(), "GET" | "HEAD") && body_done.is_none();
        let mut request = Request::new(body);
        *request.method_mut() = parts.method;
        *request.headers_mut() = headers;
        Ok(Admitted {
            request,
            path_and_query,
            host: self.origin_host.clone(),
            safe,
            body_done,
            gate: None,
            failure,
        })
    }

    /// The signer of the edge's origin credentials (refreshed when due), or 503.
    async fn origin_signer(&self) -> Result<Arc<slipstream_sign::Signer>, Answer> {
        self.signer.signer().await.map_err(|e| {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                format!("the edge has no credentials for the origin: {e}"),
            )
        })
    }

    /// The body of a request that has one, by how it was signed: the upstream body, the
    /// payload hash to sign, when it ends, and where a failure on the way is left. `verified`
    /// is shared (an `Arc`) only by the body that checks it as it streams: most requests
    /// (GET, HEAD, small bodies) need no second owner.
    async fn stream(
        &self,
        body: Incoming,
        verified: Verified,
        keys: &Held,
        header_list: &[(&str, &str)],
        headers: &mut hyper::HeaderMap,
        counted: Arc<AtomicU64>,
    ) -> Result<
        (
            UpBody,
            PayloadHash,
            Option<oneshot::Receiver<()>>,
            Option<FailureSlot>,
        ),
        Answer,
    > {
        let failure: FailureSlot = Arc::new(Mutex::new(None));
        let (done_tx, done_rx) = oneshot::channel();
        let length = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        match &verified.payload {
            PayloadHash::Sha256(_) if length.is_some_and(|l| l <= HOLD_LIMIT) => {
                let limit = HOLD_LIMIT as usize;
                let data = read_whole(body, &verified, keys, header_list, limit, &counted).await?;
                Ok((full(data), verified.payload, None, None))
            }
            PayloadHash::Sha256(_) => {
                let payload = verified.payload.clone();
                let pinned = pinned::Pinned::new(
                    body,
                    Arc::new(verified),
                    Arc::clone(&failure),
                    counted,
                    done_tx,
                );
                Ok((pinned.boxed(), payload, Some(done_rx), Some(failure)))
            }
            PayloadHash::Unsigned => Ok((
                Upload::new(body, counted, done_tx).boxed(),
                PayloadHash::Unsigned,
                Some(done_rx),
                None,
            )),
            _ => {
                let chunked = ChunkedBody::new(&verified, keys, header_list).map_err(refuse)?;
                let client_trailer = header_list
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("x-amz-trailer"))
                    .map(|(_, v)| *v);
                // A checksum sent as a header moves into the trailer (S3 takes one checksum).
                let checksum_header = headers
                    .iter()
                    .find(|(n, _)| {
                        let n = n.as_str();
                        n.starts_with("x-amz-checksum-")
                            && n != "x-amz-checksum-algorithm"
                            && n != "x-amz-checksum-type"
                    })
                    .map(|(n, v)| (n.clone(), v.to_str().unwrap_or_default().to_owned()));
                let trailer = match (client_trailer, checksum_header) {
                    (None, Some((name, value))) => {
                        headers.remove(&name);
                        Trailer::Header {
                            name: name.as_str().to_owned(),
                            value,
                        }
                    }
                    (client, _) => reframe::trailer_for(client).map_err(refuse)?,
                };
                let decoded = header_list
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("x-amz-decoded-content-length"))
                    .and_then(|(_, v)| v.parse::<u64>().ok())
                    .unwrap_or(0);
                set_reframed(headers, decoded, &trailer)?;
                let reframed = Reframed::new(
                    body,
                    Reframer::new(chunked, trailer),
                    Arc::clone(&failure),
                    counted,
                    done_tx,
                );
                Ok((
                    reframed.boxed(),
                    PayloadHash::StreamingUnsignedTrailer,
                    Some(done_rx),
                    Some(failure),
                ))
            }
        }
    }
}

/// The client's headers the origin gets: copied one by one, leaving out those the edge
/// replaces (cheaper than cloning the map and removing: the client's auth headers are never
/// copied) and `Expect` (the edge reads the body itself: no wait for the origin's 100), then
/// the hop-by-hop ones; room for the 4 the edge adds (Host and the signature's headers).
fn upstream_headers(client: &hyper::HeaderMap) -> hyper::HeaderMap {
    let mut headers = hyper::HeaderMap::with_capacity(client.len() + 4);
    for (name, value) in client {
        let replaced = CLIENT_AUTH_HEADERS.contains(&name.as_str())
            || name == hyper::header::EXPECT
            || name == HOST;
        if !replaced {
            headers.append(name.clone(), value.clone());
        }
    }
    crate::proxy::strip_hop_by_hop(&mut headers);
    headers
}

/// Every check allowed by `policy`, else `AccessDenied` naming the first one refused. A key
/// with a raw `+` is checked as `+` and as a space too (S3's reading of `+` in a path differs
/// between servers; a policy must allow both).
fn authorize(policy: &Policy, checks: &[Check]) -> Result<(), Answer> {
    for check in checks {
        let twin = check
            .resource
            .contains('+')
            .then(|| check.resource.replace('+', " "));
        let allowed = policy.allows(check.action, &check.resource)
            && twin
                .as_deref()
                .map_or(true, |t| policy.allows(check.action, t));
        if !allowed {
            return Err((
                StatusCode::FORBIDDEN,
                "AccessDenied",
                format!(
                    "Access Denied: the key's policy does not allow {} on {}",
                    check.action, check.resource
                ),
            ));
        }
    }
    Ok(())
}

/// The session token the request carries: the header, or the presigned URL's parameter.
fn session_token(headers: &[(&str, &str)], pairs: &[(&str, &str)]) -> Option<String> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("x-amz-security-token"))
        .map(|(_, v)| (*v).to_owned())
        .or_else(|| {
            pairs
                .iter()
                .find(|(k, _)| *k == "X-Amz-Security-Token")
                .map(|(_, v)| {
                    String::from_utf8_lossy(&slipstream_sign::encode::percent_decode(v))
                        .into_owned()
                })
        })
}

/// The query without the presigned URL's auth parameters, the rest byte for byte in order.
fn strip_query_auth(query: &str) -> String {
    // Allocated at the first pair kept: a presigned GET usually keeps none.
    let mut kept = String::new();
    for pair in fields(query, b'&').filter(|p| !p.is_empty()) {
        let name = cut(pair, b'=').map_or(pair, |(n, _)| n);
        // The verifier's auth parameters, and the token it leaves to the caller.
        if presign_param(name).is_some() || name == "X-Amz-Security-Token" {
            continue;
        }
        if kept.is_empty() {
            kept.reserve(query.len());
        } else {
            kept.push('&');
        }
        kept.push_str(pair);
    }
    kept
}

/// The origin's request target, in one allocation: virtual-hosted requests go to the origin
/// path style (the bucket leads the path), then the query if any.
fn upstream_target(host_bucket: Option<&str>, path: &str, query: &str) -> String {
    let bucket = host_bucket.unwrap_or_default();
    let mut target = String::with_capacity(bucket.len() + path.len() + query.len() + 2);
    if let Some(b) = host_bucket {
        target.push('/');
        target.push_str(b);
    }
    if host_bucket.is_none() || path != "/" {
        target.push_str(path);
    }
    if !query.is_empty() {
        target.push('?');
        target.push_str(query);
    }
    target
}

/// A whole (small) body, counted, verified by how it was signed, decoded if aws-chunked.
async fn read_whole(
    body: Incoming,
    verified: &Verified,
    keys: &Held,
    header_list: &[(&str, &str)],
    limit: usize,
    counted: &AtomicU64,
) -> Result<Bytes, Answer> {
    let raw = Limited::new(body, limit)
        .collect()
        .await
        .map_err(|e| client_body(&*e))?
        .to_bytes();
    counted.fetch_add(raw.len() as u64, std::sync::atomic::Ordering::Relaxed);
    match &verified.payload {
        PayloadHash::Sha256(_) => {
            verified
                .check_body(&Sha256::digest(&raw).into())
                .map_err(refuse)?;
            Ok(raw)
        }
        PayloadHash::Unsigned => Ok(raw),
        _ => {
            let mut chunked = ChunkedBody::new(verified, keys, header_list).map_err(refuse)?;
            let mut out = Vec::with_capacity(raw.len());
            chunked.feed(&raw, &mut out).map_err(refuse)?;
            chunked.finish().map_err(refuse)?;
            Ok(Bytes::from(out))
        }
    }
}

/// The access key id a request names (`Credential=ID/...` in `Authorization`, or
/// `X-Amz-Credential`), only to find its key: the verifier parses the request properly.
fn claimed_access_key_id(header_list: &[(&str, &str)], target: &str) -> Option<String> {
    let from_header = header_list
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        .and_then(|(_, v)| {
            let at = v.find("Credential=")? + "Credential=".len();
            v.get(at..)?.split('/').next().map(str::to_owned)
        });
    if from_header.is_some() {
        return from_header;
    }
    let query = target.split_once('?')?.1;
    let value = query
        .split('&')
        .find_map(|p| p.strip_prefix("X-Amz-Credential="))?;
    let end = [value.find('/'), value.find("%2F"), value.find("%2f")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(value.len());
    value.get(..end).map(str::to_owned)
}

/// The keys of a `Delete` request body.
fn delete_keys(body: &[u8]) -> Result<Vec<String>, Answer> {
    let mut keys = Vec::new();
    slipstream_s3::xml::walk(body, |path, text| {
        if let ("Delete/Object/Key", Some(k)) = (path, text) {
            keys.push(k);
        }
    })
    .map_err(|e| (StatusCode::BAD_REQUEST, "MalformedXML", e.to_string()))?;
    if keys.is_empty() {
        return Err((
            StatusCode::BAD_REQUEST,
            "MalformedXML",
            "the Delete body names no keys".into(),
        ));
    }
    Ok(keys)
}

/// A body read whole (and checked) goes upstream as it is now, decoded and hashed for the
/// edge's own signature.
fn whole(
    headers: &mut hyper::HeaderMap,
    data: Bytes,
) -> (
    UpBody,
    PayloadHash,
    Option<oneshot::Receiver<()>>,
    Option<FailureSlot>,
) {
    set_decoded(headers, data.len() as u64);
    let payload = PayloadHash::of(&data);
    (full(data), payload, None, None)
}

/// Headers for a body forwarded decoded (no longer aws-chunked), `len` bytes.
fn set_decoded(headers: &mut hyper::HeaderMap, len: u64) {
    remove_aws_chunked(headers);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
}

/// Headers for a re-framed body: aws-chunked, its decoded and encoded lengths, the trailer.
fn set_reframed(
    headers: &mut hyper::HeaderMap,
    decoded: u64,
    trailer: &Trailer,
) -> Result<(), Answer> {
    remove_aws_chunked(headers);
    let encodings = headers
        .get(hyper::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| format!("aws-chunked,{v}"))
        .unwrap_or_else(|| "aws-chunked".into());
    let value = |s: &str| HeaderValue::from_str(s).map_err(|e| internal(e.to_string()));
    headers.insert(hyper::header::CONTENT_ENCODING, value(&encodings)?);
    headers.insert(
        HeaderName::from_static("x-amz-decoded-content-length"),
        HeaderValue::from(decoded),
    );
    headers.insert(
        HeaderName::from_static("x-amz-trailer"),
        value(trailer.name())?,
    );
    headers.insert(
        CONTENT_LENGTH,
        HeaderValue::from(slipstream_sign::verify::encoded_len(decoded, trailer)),
    );
    Ok(())
}

/// `Content-Encoding` without `aws-chunked` (removed when nothing else is left).
fn remove_aws_chunked(headers: &mut hyper::HeaderMap) {
    let rest: Vec<String> = headers
        .get_all(hyper::header::CONTENT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|e| !e.is_empty() && !e.eq_ignore_ascii_case("aws-chunked"))
        .map(str::to_owned)
        .collect();
    headers.remove(hyper::header::CONTENT_ENCODING);
    if !rest.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&rest.join(",")) {
            headers.insert(hyper::header::CONTENT_ENCODING, v);
        }
    }
    headers.remove(hyper::header::TRANSFER_ENCODING);
}

fn full(data: Bytes) -> UpBody {
    Full::new(data).map_err(|never| match never {}).boxed()
}

/// A [`VerifyError`] as the S3 answer it stands for.
/// Where S3 has one fixed message for a code, that message (clients and conformance suites
/// compare it); else the verifier's reason.
/// [`Verify::client_location`], for the virtual-host `suffixes`.
fn client_location(
    suffixes: &[String],
    location: &str,
    origin: &str,
    scheme: &str,
    client_host: &str,
) -> Option<String> {
    let rest = location.strip_prefix(origin)?;
    let at_path = |r: &str| r.is_empty() || r.starts_with('/') || r.starts_with('?');
    if !at_path(rest) {
        return None;
    }
    let rest = match host_bucket(suffixes, client_host) {
        Some(bucket) => {
            let after = rest.strip_prefix('/')?.strip_prefix(bucket)?;
            if !at_path(after) {
                return None;
            }
            after
        }
        None => rest,
    };
    let slash = if rest.starts_with('/') { "" } else { "/" };
    Some(format!("{scheme}://{client_host}{slash}{rest}"))
}

/// The bucket a virtual-hosted request names in its host (`BUCKET.DOMAIN[:port]`, for one of
/// the `.DOMAIN` suffixes); `None`: path style.
fn host_bucket<'h>(suffixes: &[String], host: &'h str) -> Option<&'h str> {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    suffixes.iter().find_map(|suffix| {
        let cut = name.len().checked_sub(suffix.len())?;
        (cut > 0 && name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(suffix))
            .then(|| &name[..cut])
    })
}

/// Whether a virtual-hosted bucket name is one S3 allows in a host: 3 to 63 characters, no
/// uppercase, dot-separated DNS labels (dots are allowed here: the client chose the host).
fn dns_bucket(b: &str) -> bool {
    (3..=63).contains(&b.len())
        && !b.bytes().any(|c| c.is_ascii_uppercase())
        && b.split('.').all(slipstream_s3::is_valid_host_label)
}

pub(crate) fn refuse(e: VerifyError) -> Answer {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::FORBIDDEN);
    let message = match &e {
        VerifyError::Missing => "Access Denied.".to_owned(),
        VerifyError::InvalidAccessKeyId => {
            "The AWS access key Id you provided does not exist in our records.".to_owned()
        }
        VerifyError::SignatureDoesNotMatch { .. } => "The request signature we calculated does not match the signature you provided. Check your key and signing method.".to_owned(),
        VerifyError::RequestTimeTooSkewed => {
            "The difference between the request time and the server's time is too large."
                .to_owned()
        }
        VerifyError::XAmzContentSha256Mismatch => {
            "The provided 'x-amz-content-sha256' header does not match what was computed."
                .to_owned()
        }
        VerifyError::AccessDenied(why) if why == "Request has expired" => {
            "Request has expired.".to_owned()
        }
        other => other.to_string(),
    };
    (status, e.s3_code(), message)
}

fn internal(message: String) -> Answer {
    (StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message)
}

/// The client's body failed or was too large to hold.
fn client_body(e: &(dyn std::error::Error + 'static)) -> Answer {
    if e.is::<http_body_util::LengthLimitError>() {
        (
            StatusCode::BAD_REQUEST,
            "MaxMessageLengthExceeded",
            "the request body is larger than the edge reads at once".into(),
        )
    } else {
        (
            StatusCode::BAD_REQUEST,
            "IncompleteBody",
            format!("the request body did not arrive whole: {e}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_names_the_bucket_only_under_a_virtual_host_domain() {
        let suffixes = vec![".s3.edge.test".to_owned(), ".localhost".to_owned()];
        for (host, bucket) in [
            ("photos.s3.edge.test", Some("photos")),
            ("photos.s3.edge.test:8443", Some("photos")),
            ("Photos.S3.Edge.Test", Some("Photos")),
            ("my.dotted.bucket.s3.edge.test", Some("my.dotted.bucket")),
            ("b1.localhost:9000", Some("b1")),
            ("s3.edge.test", None),
            (".s3.edge.test", None),
            ("photos.s3.edge.test.evil", None),
            ("photoss3.edge.test", None),
            ("127.0.0.1:8443", None),
            ("[::1]:8443", None),
            ("", None),
        ] {
            assert_eq!(host_bucket(&suffixes, host), bucket, "{host}");
        }
        assert_eq!(host_bucket(&[], "photos.s3.edge.test"), None);
    }

    #[test]
    fn the_origin_gets_path_style_and_the_query_without_its_auth() {
        let query = "uploadId=a%2Bb&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F1&\
                     X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&\
                     X-Amz-Security-Token=t&X-Amz-Signature=00&&partNumber=2&x-id";
        let kept = strip_query_auth(query);
        assert_eq!(kept, "uploadId=a%2Bb&partNumber=2&x-id");
        assert_eq!(strip_query_auth(""), "");
        for (bucket, path, query, target) in [
            (None, "/b/a//k%2F+", "", "/b/a//k%2F+"),
            (None, "/b/k", "tagging", "/b/k?tagging"),
            (Some("photos"), "/", "", "/photos"),
            (Some("photos"), "/", "list-type=2", "/photos?list-type=2"),
            (Some("photos"), "/a/../k", "", "/photos/a/../k"),
        ] {
            assert_eq!(upstream_target(bucket, path, query), target);
        }
    }

    #[test]
    fn an_origin_location_is_given_back_as_the_client_addressed_the_edge() {
        let suffixes = vec![".s3.edge.test".to_owned()];
        let origin = "http://10.0.0.5:9000";
        for (location, host, want) in [
            (
                "http://10.0.0.5:9000/b/k%20x",
                "edge:8443",
                Some("https://edge:8443/b/k%20x"),
            ),
            ("http://10.0.0.5:9000", "edge", Some("https://edge/")),
            (
                "http://10.0.0.5:9000/photos/a/b",
                "photos.s3.edge.test",
                Some("https://photos.s3.edge.test/a/b"),
            ),
            (
                "http://10.0.0.5:9000/photos",
                "photos.s3.edge.test",
                Some("https://photos.s3.edge.test/"),
            ),
            ("http://10.0.0.5:9000/other/k", "photos.s3.edge.test", None),
            ("http://10.0.0.5:90001/b/k", "edge", None),
            ("https://app.example/done?bucket=b", "edge", None),
            ("/b/k", "edge", None),
        ] {
            assert_eq!(
                client_location(&suffixes, location, origin, "https", host).as_deref(),
                want,
                "{location} for {host}"
            );
        }
    }

    #[test]
    fn only_dns_bucket_names_come_from_a_host() {
        for ok in ["abc", "my-bucket.logs", "0aa", &"a".repeat(63)] {
            assert!(dns_bucket(ok), "{ok}");
        }
        for bad in [
            "ab",
            "Photos",
            "-abc",
            "abc-",
            "a_b",
            "ab%2e",
            &"a".repeat(64),
        ] {
            assert!(!dns_bucket(bad), "{bad}");
        }
    }
}
