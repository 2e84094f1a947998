//! Verifying SigV4 and SigV4A signatures, sans-IO: the gateway's side of `slipstream-sign`.
//!
//! The verifier rebuilds the canonical request with the same code the signer uses, so the two
//! cannot drift. It never needs a raw secret: a [`KeySource`] hands it the derived SigV4 key for
//! one (date, region, service), or the SigV4A public key. Comparisons are constant-time, and an
//! unknown access key costs the same work as a wrong signature, so timing reveals neither.
//!
//! [`ChunkedBody`] verifies aws-chunked bodies chunk by chunk after [`Verifier::verify`] accepted the request.

mod chunked;
mod error;
mod parse;

use std::fmt;
use std::sync::OnceLock;

use hmac::Mac;
use subtle::ConstantTimeEq;

pub use chunked::{ChunkedBody, MAX_CHUNK};
pub use error::VerifyError;
pub use parse::Algorithm;

use crate::canonical::{
    canonical_headers, canonical_query_pairs, canonical_request, canonical_uri, split_query,
    PathEncoding,
};
use crate::string_to_sign::{scope, scope_v4a, string_to_sign};
use crate::v4a::{EcdsaKey, ALGORITHM_V4A};
use crate::{
    Credentials, KeyCache, PayloadHash, SessionTokenMode, SigningKey, SigningTime, ALGORITHM,
};

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
    entries: Vec<CredentialEntry>,
}

/// One credential with its derived keys: SigV4 per day (cached), SigV4A once, on first use.
#[derive(Debug)]
struct CredentialEntry {
    credentials: Credentials,
    v4: KeyCache,
    v4a_public: OnceLock<Option<Vec<u8>>>,
}

impl CredentialKeys {
    /// Keys for these credentials.
    pub fn new(credentials: impl IntoIterator<Item = Credentials>) -> Self {
        let entries = credentials
            .into_iter()
            .map(|credentials| CredentialEntry {
                credentials,
                v4: KeyCache::default(),
                v4a_public: OnceLock::new(),
            })
            .collect();
        Self { entries }
    }

    fn find(&self, access_key_id: &str) -> Option<&CredentialEntry> {
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
        let e = self.find(access_key_id)?;
        // `YYYYMMDD` as midnight of that day, built on the stack.
        let mut buf = *b"00000000T000000Z";
        buf.get_mut(..8)?.copy_from_slice(
            date_stamp
                .as_bytes()
                .get(..8)
                .filter(|_| date_stamp.len() == 8)?,
        );
        let day = SigningTime::parse_amz(std::str::from_utf8(&buf).ok()?).ok()?;
        Some(e.v4.key(&e.credentials, day, region, service))
    }

    fn public_key(&self, access_key_id: &str) -> Option<Vec<u8>> {
        let e = self.find(access_key_id)?;
        e.v4a_public
            .get_or_init(|| {
                EcdsaKey::derive(&e.credentials)
                    .ok()
                    .map(|k| k.public_key().to_vec())
            })
            .clone()
    }
}

/// What a valid signature established. Its `Debug` leaves out the seed signature.
#[derive(Clone, PartialEq, Eq)]
pub struct Verified {
    /// Who signed.
    pub access_key_id: String,
    /// SigV4 or SigV4A.
    pub algorithm: Algorithm,
    /// Header auth (`false`) or a presigned URL (`true`).
    pub presigned: bool,
    /// How the body is covered: check a hash with [`Verified::check_body`].
    pub payload: PayloadHash,
    /// The signed headers, lowercase and sorted.
    pub signed_headers: Vec<String>,
    /// The scope's date, `YYYYMMDD`.
    pub date_stamp: String,
    /// SigV4: the scope's region; SigV4A: the signed region set.
    pub region: String,
    /// The scope's service.
    pub service: String,
    /// The signing time.
    pub signed_at: SigningTime,
    /// Presigned URLs: when they stop being valid.
    pub expires_at: Option<SigningTime>,
    /// The request's signature: the seed of an aws-chunked body's chain.
    pub seed_signature: String,
}

impl Verified {
    /// For a body whose hash was signed: errors unless `body_sha256` (raw) is that hash.
    pub fn check_body(&self, body_sha256: &[u8; 32]) -> Result<(), VerifyError> {
        match &self.payload {
            PayloadHash::Sha256(hex)
                if crate::encode::hex(body_sha256)
                    .as_bytes()
                    .ct_eq(hex.as_bytes())
                    .into() =>
            {
                Ok(())
            }
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
            .field("access_key_id", &self.access_key_id)
            .field("algorithm", &self.algorithm)
            .field("presigned", &self.presigned)
            .field("payload", &self.payload)
            .field("signed_headers", &self.signed_headers)
            .field("date_stamp", &self.date_stamp)
            .field("region", &self.region)
            .field("service", &self.service)
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

    /// Verifies `req` at time `now`.
    pub fn verify(
        &self,
        req: &Incoming<'_>,
        keys: &impl KeySource,
        now: SigningTime,
    ) -> Result<Verified, VerifyError> {
        let (path, query) = req.target.split_once('?').unwrap_or((req.target, ""));
        let authorization = single_header(req.headers, "authorization")?;
        let header_date = single_header(req.headers, "x-amz-date")?;
        // The query is split once; detection, claims and the canonical query all use the pairs.
        let pairs: Vec<(&str, &str)> = split_query(query).collect();
        let presigned = parse::has_query_auth(&pairs);
        let mut claims = match (authorization, presigned) {
            (Some(_), true) => {
                return Err(VerifyError::InvalidRequest(
                    "only one auth mechanism allowed: Authorization header or presigned URL".into(),
                ))
            }
            (None, false) => return Err(VerifyError::Missing),
            (Some(value), false) => parse::authorization_header(value)?,
            (None, true) => parse::query_auth(&pairs)?,
        };
        let malformed = |why: String| {
            if presigned {
                VerifyError::AuthorizationQueryParametersError(why)
            } else {
                VerifyError::AuthorizationHeaderMalformed(why)
            }
        };

        // Time: the signing date, its agreement with the scope, and the validity window.
        // Fields of `claims` are taken, not cloned: `Verified` owns them in the end anyway.
        let amz_date = if presigned {
            claims.amz_date.take()
        } else {
            header_date.map(str::to_owned)
        }
        .ok_or_else(|| malformed("X-Amz-Date is missing".into()))?;
        let signed_at = SigningTime::parse_amz(&amz_date)
            .map_err(|_| malformed(format!("X-Amz-Date {amz_date:?} is not YYYYMMDDTHHMMSSZ")))?;
        if amz_date.get(..8) != Some(claims.date_stamp.as_str()) {
            return Err(malformed(format!(
                "the credential date {} is not the date of X-Amz-Date {amz_date}",
                claims.date_stamp
            )));
        }
        let expires_at = claims
            .expires
            .map(|e| signed_at.plus(i64::try_from(e).unwrap_or(i64::MAX)));
        match expires_at {
            None if (now.unix() - signed_at.unix()).abs() > self.max_skew => {
                return Err(VerifyError::RequestTimeTooSkewed)
            }
            Some(_) if signed_at.unix() - now.unix() > self.max_skew => {
                return Err(VerifyError::AccessDenied(
                    "the URL is dated in the future: it is not valid yet".into(),
                ))
            }
            Some(end) if now > end => {
                return Err(VerifyError::AccessDenied("Request has expired".into()))
            }
            _ => {}
        }

        // Scope: this server's region (or one in the signed set), service and algorithm's fields.
        if claims.service != self.service {
            return Err(malformed(format!(
                "the service {:?} is wrong; expecting {:?}",
                claims.service, self.service
            )));
        }
        let region = match claims.algorithm {
            Algorithm::V4 => {
                let r = claims.region.take().unwrap_or_default();
                if r != self.region {
                    return Err(malformed(format!(
                        "the region {r:?} is wrong; expecting {:?}",
                        self.region
                    )));
                }
                r
            }
            Algorithm::V4a => {
                let set = if presigned {
                    claims.region_set.take()
                } else {
                    single_header(req.headers, "x-amz-region-set")?.map(str::to_owned)
                }
                .ok_or_else(|| malformed("a SigV4A request needs a region set".into()))?;
                if !presigned
                    && !claims
                        .signed_headers
                        .iter()
                        .any(|h| h == "x-amz-region-set")
                {
                    return Err(malformed("x-amz-region-set must be signed".into()));
                }
                if !region_set_contains(&set, &self.region) {
                    return Err(VerifyError::AccessDenied(format!(
                        "the signed region set {set:?} does not include {}",
                        self.region
                    )));
                }
                set
            }
        };

        // Headers: header auth signs x-amz-date; every x-amz-* header present must be signed.
        if !presigned && !claims.signed_headers.iter().any(|h| h == "x-amz-date") {
            return Err(malformed("x-amz-date must be signed".into()));
        }
        for (name, _) in req.headers {
            let is_amz = name.len() > 6 && name.as_bytes()[..6].eq_ignore_ascii_case(b"x-amz-");
            if !is_amz
                || claims
                    .signed_headers
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(name))
            {
                continue;
            }
            let exempt = (presigned
                && UNSIGNED_OK_PRESIGNED
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(name)))
                || (self.token == SessionTokenMode::AddedAfterSigning
                    && name.eq_ignore_ascii_case("x-amz-security-token"));
            if !exempt {
                let lower = name.to_ascii_lowercase();
                return Err(VerifyError::AccessDenied(format!(
                    "the header {lower} is present but not signed"
                )));
            }
        }
        let mut signed_values: Vec<(&str, &str)> = Vec::with_capacity(claims.signed_headers.len());
        for name in &claims.signed_headers {
            let before = signed_values.len();
            signed_values.extend(
                req.headers
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| (name.as_str(), *v)),
            );
            if signed_values.len() == before {
                return Err(malformed(format!(
                    "the signed header {name} is not in the request"
                )));
            }
        }
        let (canonical_hdrs, signed_list) =
            canonical_headers(&signed_values).map_err(|e| malformed(e.to_string()))?;

        let payload = match (
            single_header(req.headers, "x-amz-content-sha256")?,
            req.body_sha256,
        ) {
            (Some(v), _) => PayloadHash::parse(v).ok_or_else(|| {
                VerifyError::InvalidRequest(format!(
                    "x-amz-content-sha256 {v:?} is not a hash or a known mode"
                ))
            })?,
            (None, Some(hash)) => PayloadHash::parse(hash).ok_or_else(|| {
                VerifyError::InvalidRequest("the body hash is not 64 hex digits".into())
            })?,
            (None, None) if presigned => PayloadHash::Unsigned,
            (None, None) => {
                return Err(VerifyError::InvalidRequest(
                    "Missing required header for this request: x-amz-content-sha256".into(),
                ))
            }
        };
        let token_unsigned = self.token == SessionTokenMode::AddedAfterSigning;
        let signed_pairs = pairs.iter().copied().filter(|(k, _)| {
            *k != "X-Amz-Signature" && (!token_unsigned || *k != "X-Amz-Security-Token")
        });
        let cr = canonical_request(
            req.method,
            &canonical_uri(path, self.path),
            &canonical_query_pairs(signed_pairs, &[]),
            &canonical_hdrs,
            &signed_list,
            payload.as_str(),
        );
        let (algorithm_name, scope) = match claims.algorithm {
            Algorithm::V4 => (
                ALGORITHM,
                scope(&claims.date_stamp, &region, &claims.service)
                    .map_err(|e| malformed(e.to_string()))?,
            ),
            Algorithm::V4a => (
                ALGORITHM_V4A,
                scope_v4a(&claims.date_stamp, &claims.service),
            ),
        };
        let sts = string_to_sign(algorithm_name, &amz_date, &scope, &cr);

        // The signature. An unknown key is checked against a stand-in key, so it costs the same.
        let (known, valid) = match claims.algorithm {
            Algorithm::V4 => {
                let key = keys.signing_key(
                    &claims.access_key_id,
                    &claims.date_stamp,
                    &region,
                    &claims.service,
                );
                let known = key.is_some();
                let key = key.unwrap_or_else(|| stand_in_signing_key().clone());
                let mut mac = key.mac();
                mac.update(sts.as_bytes());
                let expected = crate::encode::hex32(&mac.finalize().into_bytes().into());
                (
                    known,
                    bool::from(expected[..].ct_eq(claims.signature.as_bytes())),
                )
            }
            Algorithm::V4a => {
                let public = keys.public_key(&claims.access_key_id);
                let known = public.is_some();
                let public = public.unwrap_or_else(|| stand_in_public_key().to_vec());
                (
                    known,
                    crate::v4a::verify(&public, sts.as_bytes(), &claims.signature),
                )
            }
        };
        if !known {
            return Err(VerifyError::InvalidAccessKeyId);
        }
        if !valid {
            return Err(VerifyError::SignatureDoesNotMatch {
                canonical_request: cr,
                string_to_sign: sts,
            });
        }
        Ok(Verified {
            access_key_id: claims.access_key_id,
            algorithm: claims.algorithm,
            presigned,
            payload,
            signed_headers: claims.signed_headers,
            date_stamp: claims.date_stamp,
            region,
            service: claims.service,
            signed_at,
            expires_at,
            seed_signature: claims.signature,
        })
    }
}

/// The value of header `name`; two of them is an error (S3 refuses duplicate auth headers).
fn single_header<'a>(
    headers: &[(&str, &'a str)],
    name: &str,
) -> Result<Option<&'a str>, VerifyError> {
    let mut found = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v);
    let first = found.next();
    if found.next().is_some() {
        return Err(VerifyError::InvalidRequest(format!(
            "the {name} header appears more than once"
        )));
    }
    Ok(first)
}

/// `us-east-1,eu-*,*`: exact names, `prefix*` patterns, or `*`.
fn region_set_contains(set: &str, region: &str) -> bool {
    set.split(',').any(|r| match r.strip_suffix('*') {
        Some(prefix) => region.starts_with(prefix),
        None => r == region,
    })
}

/// A SigV4 key for unknown access keys, derived once: deriving one per request would make an
/// unknown key cost more work (four HMACs) than a known one, which a caller could time.
fn stand_in_signing_key() -> &'static SigningKey {
    static KEY: OnceLock<SigningKey> = OnceLock::new();
    KEY.get_or_init(|| SigningKey::derive("stand-in", "19700101", "region", "service"))
}

/// A valid public key that signs nothing we accept, for unknown access keys.
fn stand_in_public_key() -> &'static [u8] {
    static KEY: OnceLock<Vec<u8>> = OnceLock::new();
    KEY.get_or_init(|| {
        Credentials::new("STANDIN", "stand-in", None)
            .ok()
            .and_then(|c| EcdsaKey::derive(&c).ok())
            .map(|k| k.public_key().to_vec())
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_sets_match_names_patterns_and_star() {
        assert!(region_set_contains("*", "eu-west-1"));
        assert!(region_set_contains("us-east-1,eu-*", "eu-west-1"));
        assert!(!region_set_contains("us-east-1,us-west-2", "eu-west-1"));
        assert!(!region_set_contains("us-*", "eu-west-1"));
    }
}
