//! Presigned S3 URLs at close to the cost of one SHA-256 and one HMAC each.
//!
//! For a fixed bucket, method, expiry, signing second and set of extra parameters, everything in
//! the canonical request except the key is the same. A [`Template`] holds those constant parts,
//! and an HMAC state that has already absorbed the key and the constant start of the string to
//! sign. Signing a key then costs: encode the key once (straight into the output URL), hash the
//! canonical request, one HMAC over 69 bytes, two hex encodings. No allocation but the URL.
//!
//! The bytes are those of botocore's `generate_presigned_url` with `signature_version="s3v4"`:
//! the caller's query parameters first in the order given, then the `X-Amz-*` parameters, then
//! `X-Amz-Signature`. Where the URL points is decided by `slipstream-s3`, which builds the [`UrlBase`].

use std::fmt;
use std::sync::{Arc, Mutex};

use hmac::Mac;
use sha2::{Digest, Sha256};

use crate::algorithm::Algorithm;
use crate::canonical::canonical_headers;
use crate::encode::{encode_path_into, encode_query, encoded_path_len, hex32};
use crate::key::HmacSha256;
use crate::signer::check_expiry;
use crate::string_to_sign::string_to_sign_prefix;
use crate::v4a::EcdsaKey;
use crate::{Credentials, Error, Signer, SigningTime};

/// Where a bucket's objects live: decided once per bucket by `slipstream-s3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlBase {
    /// `scheme://authority` as it starts the URL: `https://bucket.s3.amazonaws.com`.
    pub origin: String,
    /// The `Host` header the server will see (the authority, without a default port).
    pub host: String,
    /// The URI-encoded path before the key, starting and ending with `/`: `/` or `/bucket/`.
    pub path_prefix: String,
}

/// What a presigned URL allows, apart from the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresignOptions {
    /// HTTP method, uppercase: `GET`, `PUT`, `HEAD`, `DELETE`, `POST`.
    pub method: String,
    /// Lifetime in seconds, 1..=604800.
    pub expires_in: u64,
    /// Signed query parameters, not encoded, in the order they should appear:
    /// `response-content-type`, `versionId`, `uploadId`, `partNumber`, ...
    pub query: Vec<(String, String)>,
    /// Signed headers the client must send with exactly these values (e.g. `content-type` on a PUT).
    pub headers: Vec<(String, String)>,
}

impl PresignOptions {
    /// `method` for one hour, no extra parameters.
    pub fn new(method: &str) -> Self {
        Self {
            method: method.to_owned(),
            expires_in: 3600,
            query: Vec::new(),
            headers: Vec::new(),
        }
    }

    /// `GET` for one hour.
    pub fn get() -> Self {
        Self::new("GET")
    }
}

/// Presigns URLs for one bucket (one [`UrlBase`]), set of credentials, and region (SigV4) or
/// region set (SigV4A).
///
/// Cheap to share between threads (`&self` everywhere). Holds the signing key (SigV4: cached per
/// day; SigV4A: derived once) and the template of the last plain request, so one-off calls are
/// fast too.
pub struct Presigner {
    base: UrlBase,
    pub(crate) credentials: Credentials,
    pub(crate) algorithm: Algorithm,
    last: Mutex<Option<(TemplateId, Arc<Template>)>>,
}

/// What makes two plain (no extra parameter) templates equal.
#[derive(Clone)]
struct TemplateId {
    method: String,
    expires_in: u64,
    time: SigningTime,
}

impl Presigner {
    /// A SigV4 presigner for S3 in `region`.
    pub fn new(base: UrlBase, region: &str, credentials: Credentials) -> Result<Self, Error> {
        Self::with_algorithm(base, Algorithm::v4(region, "s3")?, credentials)
    }

    /// A SigV4A presigner for S3, valid in `region_set` (`us-east-1,us-west-2`, `us-*` or `*`).
    /// Derives the ECDSA key now (about 50 µs), once for the presigner's life.
    pub fn new_v4a(
        base: UrlBase,
        region_set: &str,
        credentials: Credentials,
    ) -> Result<Self, Error> {
        let algorithm = Algorithm::v4a(&credentials, region_set, "s3")?;
        Self::with_algorithm(base, algorithm, credentials)
    }

    /// A presigner with the credentials and the region (or SigV4A region set) of `signer`, an
    /// S3 request signer: a client presigns with what it signs its own requests with, and a
    /// SigV4A key is not derived twice.
    pub fn for_signer(base: UrlBase, signer: &Signer) -> Result<Self, Error> {
        if signer.service() != "s3" {
            return Err(Error::InvalidScope(format!(
                "a presigned URL is for S3, and this signer signs for {:?}",
                signer.service()
            )));
        }
        let algorithm = signer.algorithm().sibling();
        Self::with_algorithm(base, algorithm, signer.credentials().clone())
    }

    fn with_algorithm(
        base: UrlBase,
        algorithm: Algorithm,
        credentials: Credentials,
    ) -> Result<Self, Error> {
        if !base.path_prefix.starts_with('/') || !base.path_prefix.ends_with('/') {
            return Err(Error::InvalidScope(format!(
                "path prefix {:?} must start and end with '/'",
                base.path_prefix
            )));
        }
        Ok(Self {
            base,
            credentials,
            algorithm,
            last: Mutex::new(None),
        })
    }

    /// Where the URLs point.
    pub fn base(&self) -> &UrlBase {
        &self.base
    }

    /// The precomputed parts for `opts` at `time`; sign any number of keys with it.
    pub fn template(&self, opts: &PresignOptions, time: SigningTime) -> Result<Template, Error> {
        check_expiry(opts.expires_in)?;
        if opts.method.is_empty() || !opts.method.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(Error::InvalidHeader(format!(
                "method {:?} must be uppercase letters",
                opts.method
            )));
        }
        let amz_date = time.amz_date();
        let scope = self.algorithm.scope(time, "s3")?;

        let mut headers: Vec<(&str, &str)> = vec![("host", &self.base.host)];
        headers.extend(
            opts.headers
                .iter()
                .filter(|(n, _)| !n.eq_ignore_ascii_case("host"))
                .map(|(n, v)| (n.as_str(), v.as_str())),
        );
        let (canonical_headers, signed) = canonical_headers(&headers)?;

        // Caller parameters first, in their order; then the auth parameters (botocore's layout).
        let mut pairs: Vec<(String, String)> = opts
            .query
            .iter()
            .map(|(k, v)| (encode_query(k), encode_query(v)))
            .collect();
        pairs.push(("X-Amz-Algorithm".into(), self.algorithm.name().into()));
        pairs.push((
            "X-Amz-Credential".into(),
            encode_query(&format!("{}/{scope}", self.credentials.access_key_id())),
        ));
        pairs.push(("X-Amz-Date".into(), amz_date.clone()));
        pairs.push(("X-Amz-Expires".into(), opts.expires_in.to_string()));
        pairs.push(("X-Amz-SignedHeaders".into(), encode_query(&signed)));
        if let Some(set) = self.algorithm.region_set() {
            pairs.push(("X-Amz-Region-Set".into(), encode_query(set)));
        }
        if let Some(token) = self.credentials.session_token() {
            pairs.push(("X-Amz-Security-Token".into(), encode_query(token)));
        }
        let join = |ps: &[(String, String)]| {
            ps.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("&")
        };
        let url_query = join(&pairs);
        let mut sorted = pairs.clone();
        sorted.sort_unstable();

        let mut cr_prefix = Sha256::new();
        cr_prefix.update(opts.method.as_bytes());
        cr_prefix.update(b"\n");
        cr_prefix.update(self.base.path_prefix.as_bytes());
        let cr_suffix = format!(
            "\n{}\n{canonical_headers}\n{signed}\nUNSIGNED-PAYLOAD",
            join(&sorted)
        );

        let sts_prefix = string_to_sign_prefix(self.algorithm.name(), &amz_date, &scope);
        let signer = match &self.algorithm {
            Algorithm::V4 { region, keys } => {
                let mut mac = keys.key(&self.credentials, time, region, "s3").mac();
                mac.update(sts_prefix.as_bytes());
                TemplateSigner::V4(mac)
            }
            Algorithm::V4a { key, .. } => TemplateSigner::V4a {
                key: Arc::clone(key),
                sts_prefix,
            },
        };

        Ok(Template {
            url_prefix: format!("{}{}", self.base.origin, self.base.path_prefix),
            url_suffix: format!("?{url_query}&X-Amz-Signature="),
            cr_prefix,
            cr_suffix,
            signer,
        })
    }

    /// One presigned URL. Plain requests (no extra parameters) reuse the last template when the
    /// method, expiry and second are the same, so this stays within a few percent of
    /// [`Template::sign_into`]; with extra parameters it builds a template each call.
    pub fn presign(
        &self,
        key: &str,
        opts: &PresignOptions,
        time: SigningTime,
    ) -> Result<String, Error> {
        if !opts.query.is_empty() || !opts.headers.is_empty() {
            return self.template(opts, time)?.sign(key);
        }
        // Compared field by field: building a `TemplateId` to compare would clone the method on
        // every call, and this is the per-call hot path.
        let cached = {
            let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            last.as_ref()
                .filter(|(i, _)| {
                    i.method == opts.method && i.expires_in == opts.expires_in && i.time == time
                })
                .map(|(_, t)| Arc::clone(t))
        };
        let template = match cached {
            Some(t) => t,
            None => {
                let t = Arc::new(self.template(opts, time)?);
                let id = TemplateId {
                    method: opts.method.clone(),
                    expires_in: opts.expires_in,
                    time,
                };
                *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some((id, Arc::clone(&t)));
                t
            }
        };
        template.sign(key)
    }

    /// Presigns every key on up to `threads` threads (all cores when `None`) into a new
    /// [`UrlBatch`]: one buffer per thread instead of one allocation per URL. Fails on the first
    /// invalid key. To presign batch after batch, keep one `UrlBatch` and use
    /// [`Presigner::presign_batch_into`].
    pub fn presign_batch<K: AsRef<str> + Sync>(
        &self,
        keys: &[K],
        opts: &PresignOptions,
        time: SigningTime,
        threads: Option<usize>,
    ) -> Result<UrlBatch, Error> {
        let mut batch = UrlBatch::default();
        self.presign_batch_into(keys, opts, time, threads, &mut batch)?;
        Ok(batch)
    }

    /// Like [`Presigner::presign_batch`], refilling `out` and reusing its buffers.
    ///
    /// Reuse is what makes the batch scale with cores: output written into fresh memory costs a
    /// page fault per 4 KiB, and two threads faulting in one process serialize in the kernel
    /// (see docs/BENCHMARKS.md: fresh buffers lose about a quarter of the two-thread rate).
    /// On error `out` is left empty.
    pub fn presign_batch_into<K: AsRef<str> + Sync>(
        &self,
        keys: &[K],
        opts: &PresignOptions,
        time: SigningTime,
        threads: Option<usize>,
        out: &mut UrlBatch,
    ) -> Result<(), Error> {
        let template = self.template(opts, time)?;
        let threads = crate::batch::thread_count(keys.len(), threads);
        out.chunks.resize_with(threads, UrlChunk::default);
        out.len = 0;
        let results = crate::batch::zip_chunks(keys, &mut out.chunks, |piece, part| {
            part.clear();
            for k in piece {
                template.sign_into(k.as_ref(), &mut part.text)?;
                part.ends.push(part.text.len());
            }
            Ok(())
        });
        if let Some(e) = results.into_iter().find_map(Result::err) {
            out.chunks.iter_mut().for_each(UrlChunk::clear);
            return Err(e);
        }
        out.len = keys.len();
        Ok(())
    }

    /// Presigns every key on up to `threads` threads (all cores when `None`), URLs in input order,
    /// one `String` each. [`Presigner::presign_batch`] is faster when the URLs are only read.
    /// Fails on the first invalid key.
    pub fn presign_many<K: AsRef<str> + Sync>(
        &self,
        keys: &[K],
        opts: &PresignOptions,
        time: SigningTime,
        threads: Option<usize>,
    ) -> Result<Vec<String>, Error> {
        let template = self.template(opts, time)?;
        let parts = crate::batch::map_chunks(keys, threads, |chunk| {
            chunk
                .iter()
                .map(|k| template.sign(k.as_ref()))
                .collect::<Result<Vec<_>, _>>()
        });
        let mut out = Vec::with_capacity(keys.len());
        for part in parts {
            out.extend(part?);
        }
        Ok(out)
    }
}

impl fmt::Debug for Presigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Presigner")
            .field("base", &self.base)
            .field("algorithm", &self.algorithm)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// URLs from [`Presigner::presign_batch`], in input order, stored in one buffer per thread.
#[derive(Clone, Default)]
pub struct UrlBatch {
    len: usize,
    chunks: Vec<UrlChunk>,
}

#[derive(Clone, Default)]
struct UrlChunk {
    text: String,
    /// End offset of each URL in `text`.
    ends: Vec<usize>,
}

impl UrlChunk {
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }
}

impl UrlBatch {
    /// How many URLs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The URLs in input order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.chunks.iter().flat_map(|c| {
            let mut start = 0;
            c.ends.iter().map(move |&end| {
                let url = &c.text[start..end];
                start = end;
                url
            })
        })
    }

    /// The URLs as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

impl fmt::Debug for UrlBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UrlBatch")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// The constant parts of every URL for one bucket, method, expiry, second and parameter set.
#[derive(Clone)]
pub struct Template {
    /// `origin + path_prefix`.
    url_prefix: String,
    /// `?query&X-Amz-Signature=`.
    url_suffix: String,
    /// SHA-256 state after `METHOD\nPATH_PREFIX`.
    cr_prefix: Sha256,
    /// `\nQUERY\nHEADERS\n\nSIGNED\nUNSIGNED-PAYLOAD`.
    cr_suffix: String,
    /// Turns the canonical request's hash into the signature.
    signer: TemplateSigner,
}

/// The signing step of a template.
#[derive(Clone)]
enum TemplateSigner {
    /// HMAC state keyed with the day's key, after `ALGORITHM\nDATE\nSCOPE\n`.
    V4(HmacSha256),
    /// The credential's ECDSA key and `ALGORITHM\nDATE\nSCOPE\n`.
    V4a {
        key: Arc<EcdsaKey>,
        sts_prefix: String,
    },
}

impl Template {
    /// Appends the presigned URL for `key` to `out`.
    pub fn sign_into(&self, key: &str, out: &mut String) -> Result<(), Error> {
        if key.is_empty() {
            return Err(Error::EmptyKey);
        }
        let original = out.len();
        out.reserve(self.url_prefix.len() + key.len() * 3 + self.url_suffix.len() + 64);
        out.push_str(&self.url_prefix);
        let start = out.len();
        encode_path_into(out, key);

        let mut h = self.cr_prefix.clone();
        h.update(&out.as_bytes()[start..]);
        h.update(self.cr_suffix.as_bytes());
        let hash = hex32(&h.finalize().into());

        match &self.signer {
            TemplateSigner::V4(mac) => {
                let mut mac = mac.clone();
                mac.update(&hash);
                let sig = hex32(&mac.finalize().into_bytes().into());
                out.push_str(&self.url_suffix);
                // `hex32` writes only ASCII hex digits.
                out.extend(sig.iter().map(|&b| char::from(b)));
            }
            TemplateSigner::V4a { key, sts_prefix } => {
                let mut sts = Vec::with_capacity(sts_prefix.len() + 64);
                sts.extend_from_slice(sts_prefix.as_bytes());
                sts.extend_from_slice(&hash);
                out.push_str(&self.url_suffix);
                if let Err(e) = key.sign_into(&sts, out) {
                    // Leave `out` as it was: no half-built URL.
                    out.truncate(original);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// The length of [`Template::sign_into`]'s URL for `key`, known before signing when the
    /// signature has a fixed size: SigV4's is 64 hex digits, SigV4A's DER signature varies
    /// (`None`). Lets a column of URLs be sized once and written in place by every core.
    pub fn url_len(&self, key: &str) -> Option<usize> {
        match self.signer {
            TemplateSigner::V4(_) => {
                Some(self.url_prefix.len() + encoded_path_len(key) + self.url_suffix.len() + 64)
            }
            TemplateSigner::V4a { .. } => None,
        }
    }

    /// The presigned URL for `key`.
    pub fn sign(&self, key: &str) -> Result<String, Error> {
        let mut out = String::new();
        self.sign_into(key, &mut out)?;
        Ok(out)
    }
}

impl fmt::Debug for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Template")
            .field("url_prefix", &self.url_prefix)
            .finish_non_exhaustive()
    }
}
