//! Verifying SigV4 and SigV4A signatures, sans-IO: the gateway's side of `slipstream-sign`.
//!
//! The verifier rebuilds the canonical request with the same code the signer uses, so the two
//! cannot drift. It never needs a raw secret: a [`KeySource`] hands it the derived SigV4 key for
//! one (date, region, service), or the SigV4A public key. Comparisons are constant-time, and an
//! unknown access key costs the same work as a wrong signature, so timing reveals neither.
//!
//! [`ChunkedBody`] verifies aws-chunked bodies chunk by chunk after [`Verifier::verify`] accepted the request;
//! [`Reframer`] writes what it verified again as an unsigned-trailer body for a proxy to forward.
//! [`Verifier::verify_post`] verifies browser form uploads (presigned POST): the policy's
//! signature, expiry and conditions ([`PostUpload`]).

mod chunked;
mod error;
mod parse;
mod post;
mod reframe;
mod steps;

use std::fmt;
use std::sync::OnceLock;

use subtle::ConstantTimeEq;

pub use chunked::{ChunkedBody, MAX_CHUNK};
pub use error::VerifyError;
pub use parse::{presign_param, Algorithm, PRESIGN_PARAMS};
pub use post::{PostUpload, VerifiedPost};
pub use reframe::{encoded_len, Reframer, Trailer, TrailerChecksum, REFRAMED_CHUNK};

use crate::canonical::{split_query, PathEncoding};
use crate::v4a::EcdsaKey;
use crate::{Credentials, KeyCache, PayloadHash, SessionTokenMode, SigningKey, SigningTime};

/// Where the verifier gets keys. Implementations look up their own store; neither method is
/// handed or returns a secret.
pub trait KeySource {
    /// The SigV4 signing key of `access_key_id` for one day, region and service; `None` if unknown.
    fn signing_key(
        &self,
        access_key_id: &str,
        date_stamp: &str,
        region: &str,
        service: &str,
    ) -> Option<SigningKey>;
    /// The SigV4A public key (uncompressed P-256 point) of `access_key_id`; `None` if unknown.
    fn public_key(&self, access_key_id: &str) -> Option<Vec<u8>>;
}

/// A [`KeySource`] over credentials held in memory (the CLI's `verify-url`, tests). It derives keys
/// from the secrets; a gateway would rather hold derived keys only.
#[derive(Debug, Default)]
pub struct CredentialKeys {
    entries: Vec<DerivedKeys>,
}

impl CredentialKeys {
    /// Keys for these credentials.
    pub fn new(credentials: impl IntoIterator<Item = Credentials>) -> Self {
        let entries = credentials.into_iter().map(DerivedKeys::new).collect();
        Self { entries }
    }

    fn find(&self, access_key_id: &str) -> Option<&DerivedKeys> {
        self.entries
            .iter()
            .find(|e| e.credentials.access_key_id() == access_key_id)
    }
}

impl KeySource for CredentialKeys {
    fn signing_key(
        &self,
        access_key_id: &str,
        date_stamp: &str,
        region: &str,
        service: &str,
    ) -> Option<SigningKey> {
        self.find(access_key_id)?
            .signing_key(date_stamp, region, service)
    }

    fn public_key(&self, access_key_id: &str) -> Option<Vec<u8>> {
        self.find(access_key_id)?.public_key()
    }
}

/// One credential's verifying keys, derived from its secret on first use and kept: the SigV4
/// key of the last day asked for, and the SigV4A public key. What a [`KeySource`] that holds
/// secrets keeps per access key (its `Debug` is the credentials', redacted).
#[derive(Debug)]
pub struct DerivedKeys {
    credentials: Credentials,
    v4: KeyCache,
    v4a_public: OnceLock<Option<Vec<u8>>>,
}

impl DerivedKeys {
    /// Keys of `credentials`, derived when first asked for.
    pub fn new(credentials: Credentials) -> Self {
        Self {
            credentials,
            v4: KeyCache::default(),
            v4a_public: OnceLock::new(),
        }
    }

    /// The SigV4 key for `date_stamp` (`YYYYMMDD`), region and service; `None` if the date is
    /// not one.
    pub fn signing_key(&self, date_stamp: &str, region: &str, service: &str) -> Option<SigningKey> {
        // `YYYYMMDD` as midnight of that day, built on the stack.
        let mut buf = *b"00000000T000000Z";
        buf.get_mut(..8)?.copy_from_slice(
            date_stamp
                .as_bytes()
                .get(..8)
                .filter(|_| date_stamp.len() == 8)?,
        );
        let day = SigningTime::parse_amz(std::str::from_utf8(&buf).ok()?).ok()?;
        Some(self.v4.key(&self.credentials, day, region, service))
    }

    /// The SigV4A public key (uncompressed P-256 point), derived once.
    pub fn public_key(&self) -> Option<Vec<u8>> {
        self.v4a_public
            .get_or_init(|| {
                EcdsaKey::derive(&self.credentials)
                    .ok()
                    .map(|k| k.public_key().to_vec())
            })
            .clone()
    }
}

/// What a valid signature established. Its `Debug` leaves out the seed signature.
#[derive(Clone, PartialEq, Eq)]
pub struct Verified {
    /// Who signed, the date, region and service of the scope: read with
    /// [`Verified::access_key_id`] and the like (one string, not one per part).
    credential: parse::Credential,
    /// SigV4A: the signed region set.
    region_set: Option<String>,
    /// SigV4 or SigV4A.
    pub algorithm: Algorithm,
    /// Header auth (`false`) or a presigned URL (`true`).
    pub presigned: bool,
    /// How the body is covered: check a hash with [`Verified::check_body`].
    pub payload: PayloadHash,
    /// The signed headers as signed, `a;b;c`: lowercase and sorted (one string rather than a
    /// string per name: verified per request). [`Verified::signed_header_names`] splits it.
    pub signed_headers: String,
    /// The signing time.
    pub signed_at: SigningTime,
    /// Presigned URLs: when they stop being valid.
    pub expires_at: Option<SigningTime>,
    /// The request's signature: the seed of an aws-chunked body's chain.
    pub seed_signature: String,
}

impl Verified {
    /// Who signed.
    pub fn access_key_id(&self) -> &str {
        self.credential.access_key_id()
    }

    /// The scope's date, `YYYYMMDD`.
    pub fn date_stamp(&self) -> &str {
        self.credential.date()
    }

    /// SigV4: the scope's region; SigV4A: the signed region set.
    pub fn region(&self) -> &str {
        self.region_set
            .as_deref()
            .unwrap_or_else(|| self.credential.region())
    }

    /// The scope's service.
    pub fn service(&self) -> &str {
        self.credential.service()
    }

    /// The names in [`Verified::signed_headers`].
    pub fn signed_header_names(&self) -> impl Iterator<Item = &str> {
        parse::signed_names(&self.signed_headers)
    }

    /// For a body whose hash was signed: errors unless `body_sha256` (raw) is that hash.
    pub fn check_body(&self, body_sha256: &[u8; 32]) -> Result<(), VerifyError> {
        self.check_body_hex(&crate::encode::hex(body_sha256))
    }

    /// For a request without a body: [`Verified::check_body`] of no bytes, without hashing
    /// them.
    pub fn check_empty_body(&self) -> Result<(), VerifyError> {
        self.check_body_hex(crate::EMPTY_SHA256)
    }

    fn check_body_hex(&self, body_hex: &str) -> Result<(), VerifyError> {
        match &self.payload {
            PayloadHash::Sha256(hex) if body_hex.as_bytes().ct_eq(hex.as_bytes()).into() => Ok(()),
            PayloadHash::Sha256(_) => Err(VerifyError::XAmzContentSha256Mismatch),
            _ => Ok(()),
        }
    }
}

/// A request as received: method, the request target exactly as on the wire (path and query),
/// and all headers. Its `Debug` redacts what could be replayed: the values of `Authorization`,
/// `X-Amz-Security-Token` and the query's `X-Amz-Signature`, `X-Amz-Credential` and
/// `X-Amz-Security-Token`.
#[derive(Clone, Copy)]
pub struct Incoming<'a> {
    /// `GET`, `PUT`, ...
    pub method: &'a str,
    /// `/path?query`, undecoded.
    pub target: &'a str,
    /// Every header, any case, repeats allowed.
    pub headers: &'a [(&'a str, &'a str)],
    /// The hex SHA-256 of the body, for services that do not send `x-amz-content-sha256`.
    /// `None` for S3, which always sends it (or presigns with `UNSIGNED-PAYLOAD`).
    pub body_sha256: Option<&'a str>,
}

impl fmt::Debug for Verified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verified")
            .field("access_key_id", &self.access_key_id())
            .field("algorithm", &self.algorithm)
            .field("presigned", &self.presigned)
            .field("payload", &self.payload)
            .field("signed_headers", &self.signed_headers)
            .field("date_stamp", &self.date_stamp())
            .field("region", &self.region())
            .field("service", &self.service())
            .field("signed_at", &self.signed_at)
            .field("expires_at", &self.expires_at)
            .field("seed_signature", &"<redacted>")
            .finish()
    }
}

impl fmt::Debug for Incoming<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let secret = n.eq_ignore_ascii_case("authorization")
                    || n.eq_ignore_ascii_case("x-amz-security-token");
                (*n, if secret { "<redacted>" } else { *v })
            })
            .collect();
        f.debug_struct("Incoming")
            .field("method", &self.method)
            .field("target", &redact_target(self.target))
            .field("headers", &headers)
            .field("body_sha256", &self.body_sha256)
            .finish()
    }
}

/// `target` with the values of the query parameters that carry a signature or a credential
/// replaced by `<redacted>`.
fn redact_target(target: &str) -> String {
    let Some((path, query)) = target.split_once('?') else {
        return target.to_owned();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| {
            let name = p.split_once('=').map_or(p, |(n, _)| n);
            let secret = [
                "X-Amz-Signature",
                "X-Amz-Credential",
                "X-Amz-Security-Token",
            ]
            .iter()
            .any(|s| name.eq_ignore_ascii_case(s));
            if secret {
                format!("{name}=<redacted>")
            } else {
                p.to_owned()
            }
        })
        .collect();
    format!("{path}?{}", params.join("&"))
}

/// Verifies requests for one region and service.
#[derive(Clone, Debug)]
pub struct Verifier {
    region: String,
    service: String,
    path: PathEncoding,
    /// Allowed distance between the signing time and now, in seconds (S3: 15 minutes).
    max_skew: i64,
    /// Whether the session token is added after signing (never for S3).
    token: SessionTokenMode,
}

/// x-amz-* headers that may be present without being signed: the body hash of a presigned
/// request (a browser cannot put it in the URL's signature).
const UNSIGNED_OK_PRESIGNED: &[&str] = &["x-amz-content-sha256"];

impl Verifier {
    /// A verifier for S3 in `region`.
    pub fn s3(region: &str) -> Self {
        Self::new(region, "s3", PathEncoding::AsSent)
    }

    /// A verifier for any service, with its path rules.
    pub fn new(region: &str, service: &str, path: PathEncoding) -> Self {
        Self {
            region: region.to_owned(),
            service: service.to_owned(),
            path,
            max_skew: 15 * 60,
            token: SessionTokenMode::Signed,
        }
    }

    /// For the few services that add the session token after signing: the token header or
    /// query parameter is then not part of the signature.
    pub fn session_token(mut self, mode: SessionTokenMode) -> Self {
        self.token = mode;
        self
    }

    /// Verifies `req` at time `now`, in the order S3 reports errors: the auth parameters, the
    /// time, the scope, the headers, then the signature (`steps.rs`).
    pub fn verify(
        &self,
        req: &Incoming<'_>,
        keys: &impl KeySource,
        now: SigningTime,
    ) -> Result<Verified, VerifyError> {
        let (path, query) = crate::encode::cut(req.target, b'?').unwrap_or((req.target, ""));
        // The query is split once; detection, claims and the canonical query all use the pairs.
        let pairs: Vec<(&str, &str)> = split_query(query).collect();
        self.verify_split(req, (path, &pairs), keys, now)
    }

    /// [`Verifier::verify`] of a target the caller has already split: its path and its query's
    /// raw pairs from [`split_query`] of the same `req.target` (a gateway needs the pairs too,
    /// and a presigned query's split is about a thousand instructions). What is verified is
    /// `path` and `pairs`, so they must come from the target that is forwarded.
    pub fn verify_split(
        &self,
        req: &Incoming<'_>,
        (path, pairs): (&str, &[(&str, &str)]),
        keys: &impl KeySource,
        now: SigningTime,
    ) -> Result<Verified, VerifyError> {
        let (mut claims, presigned) = steps::claims(req, pairs)?;
        let time = self.check_time(&mut claims, req, presigned, now)?;
        let region_set = self.check_scope(&mut claims, req, presigned)?;
        let signed_values = self.check_headers(&claims, req, presigned)?;
        let payload = steps::payload(req, presigned)?;
        let (cr, sts) = self.string_to_sign(
            req,
            (path, pairs),
            &claims,
            presigned,
            &signed_values,
            &payload,
            time.amz_date.as_str(),
        )?;
        steps::check_signature(keys, &claims, cr, sts)?;
        Ok(Verified {
            credential: claims.credential,
            region_set,
            algorithm: claims.algorithm,
            presigned,
            payload,
            signed_headers: claims.signed_headers,
            signed_at: time.amz_date.signed_at,
            expires_at: time.expires_at,
            seed_signature: claims.signature,
        })
    }
}
