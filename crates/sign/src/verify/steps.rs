//! The steps of [`Verifier::verify`], in the order it takes them: read the claims, check the
//! time, the scope and the headers, rebuild the string to sign, check the signature.

use std::sync::OnceLock;

use hmac::Mac;
use subtle::ConstantTimeEq;

use super::parse::{self, signed_names, AmzDate, Claims};
use super::{Algorithm, Incoming, KeySource, Verifier, VerifyError, UNSIGNED_OK_PRESIGNED};
use crate::canonical::{build_canonical_request, canonical_uri, push_canonical_headers};
use crate::string_to_sign::string_to_sign;
use crate::v4a::{EcdsaKey, ALGORITHM_V4A};
use crate::{Credentials, PayloadHash, SessionTokenMode, SigningKey, SigningTime, ALGORITHM};

/// The signing time as the request states it.
pub(super) struct Time {
    /// `X-Amz-Date`, as sent, and the signing time it names.
    pub amz_date: AmzDate,
    /// Presigned URLs: when they stop being valid.
    pub expires_at: Option<SigningTime>,
}

/// The error for a malformed auth field, named for where the fields were.
fn malformed(presigned: bool, why: String) -> VerifyError {
    if presigned {
        VerifyError::AuthorizationQueryParametersError(why)
    } else {
        VerifyError::AuthorizationHeaderMalformed(why)
    }
}

/// What the signature claims, from the `Authorization` header or the presigned query (exactly
/// one of them), and whether it was presigned.
pub(super) fn claims(
    req: &Incoming<'_>,
    pairs: &[(&str, &str)],
) -> Result<(Claims, bool), VerifyError> {
    let authorization = single_header(req.headers, "authorization")?;
    let presigned = parse::has_query_auth(pairs);
    let claims = match (authorization, presigned) {
        (Some(_), true) => {
            return Err(VerifyError::InvalidRequest(
                "only one auth mechanism allowed: Authorization header or presigned URL".into(),
            ))
        }
        (None, false) => return Err(VerifyError::Missing),
        (Some(value), false) => parse::authorization_header(value)?,
        (None, true) => parse::query_auth(pairs)?,
    };
    Ok((claims, presigned))
}

impl Verifier {
    /// Time: the signing date, its agreement with the scope, and the validity window. Fields
    /// of `claims` are taken, not cloned: `Verified` owns them in the end anyway.
    pub(super) fn check_time(
        &self,
        claims: &mut Claims,
        req: &Incoming<'_>,
        presigned: bool,
        now: SigningTime,
    ) -> Result<Time, VerifyError> {
        let malformed = |why| malformed(presigned, why);
        let amz_date = match presigned {
            true => claims.amz_date.take(),
            false => single_header(req.headers, "x-amz-date")?
                .map(|v| AmzDate::parse(v, malformed))
                .transpose()?,
        }
        .ok_or_else(|| malformed("X-Amz-Date is missing".into()))?;
        let (amz, signed_at) = (amz_date.as_str(), amz_date.signed_at);
        let date = claims.credential.date();
        if amz.get(..8) != Some(date) {
            return Err(malformed(format!(
                "the credential date {date} is not the date of X-Amz-Date {amz}"
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
        Ok(Time {
            amz_date,
            expires_at,
        })
    }

    /// Scope: this server's region (or one in the signed set) and service; returns the signed
    /// region set (SigV4A; SigV4's region is the credential's).
    pub(super) fn check_scope(
        &self,
        claims: &mut Claims,
        req: &Incoming<'_>,
        presigned: bool,
    ) -> Result<Option<String>, VerifyError> {
        let malformed = |why| malformed(presigned, why);
        let service = claims.credential.service();
        if service != self.service {
            return Err(malformed(format!(
                "the service {service:?} is wrong; expecting {:?}",
                self.service
            )));
        }
        match claims.algorithm {
            Algorithm::V4 => {
                let r = claims.credential.region();
                if r != self.region {
                    return Err(malformed(format!(
                        "the region {r:?} is wrong; expecting {:?}",
                        self.region
                    )));
                }
                Ok(None)
            }
            Algorithm::V4a => {
                let set = if presigned {
                    claims.region_set.take()
                } else {
                    single_header(req.headers, "x-amz-region-set")?.map(str::to_owned)
                }
                .ok_or_else(|| malformed("a SigV4A request needs a region set".into()))?;
                if !presigned
                    && !signed_names(&claims.signed_headers).any(|h| h == "x-amz-region-set")
                {
                    return Err(malformed("x-amz-region-set must be signed".into()));
                }
                if !region_set_contains(&set, &self.region) {
                    return Err(VerifyError::AccessDenied(format!(
                        "the signed region set {set:?} does not include {}",
                        self.region
                    )));
                }
                Ok(Some(set))
            }
        }
    }

    /// Headers: header auth signs x-amz-date; every x-amz-* header present must be signed, and
    /// every signed one present. Returns the signed headers' values, in the signed order.
    pub(super) fn check_headers<'r>(
        &self,
        claims: &'r Claims,
        req: &Incoming<'r>,
        presigned: bool,
    ) -> Result<Vec<(&'r str, &'r str)>, VerifyError> {
        if !presigned && !signed_names(&claims.signed_headers).any(|h| h == "x-amz-date") {
            return Err(malformed(presigned, "x-amz-date must be signed".into()));
        }
        for (name, _) in req.headers {
            let is_amz = name.len() > 6 && name.as_bytes()[..6].eq_ignore_ascii_case(b"x-amz-");
            if !is_amz || signed_names(&claims.signed_headers).any(|h| h.eq_ignore_ascii_case(name))
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
        let count = signed_names(&claims.signed_headers).count();
        let mut signed_values: Vec<(&str, &str)> = Vec::with_capacity(count);
        for name in signed_names(&claims.signed_headers) {
            let before = signed_values.len();
            signed_values.extend(
                req.headers
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| (name, *v)),
            );
            if signed_values.len() == before {
                return Err(malformed(
                    presigned,
                    format!("the signed header {name} is not in the request"),
                ));
            }
        }
        Ok(signed_values)
    }

    /// The canonical request and the string to sign, rebuilt with the signer's own code.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn string_to_sign(
        &self,
        req: &Incoming<'_>,
        (path, pairs): (&str, &[(&str, &str)]),
        claims: &Claims,
        presigned: bool,
        signed_values: &[(&str, &str)],
        payload: &PayloadHash,
        amz_date: &str,
    ) -> Result<(String, String), VerifyError> {
        // The canonical request and the string to sign are each built in one string (this
        // runs per request at the edge); they are kept for the error that shows them.
        let token_unsigned = self.token == SessionTokenMode::AddedAfterSigning;
        let signed_pairs = pairs.iter().copied().filter(|(k, _)| {
            *k != "X-Amz-Signature" && (!token_unsigned || *k != "X-Amz-Security-Token")
        });
        let query_len = pairs.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
        let (cr, _) = build_canonical_request(
            req.method,
            &canonical_uri(path, self.path),
            (signed_pairs, query_len),
            &[],
            |out| push_canonical_headers(out, signed_values),
            payload.as_str(),
        )
        .map_err(|e| malformed(presigned, e.to_string()))?;
        let algorithm = match claims.algorithm {
            Algorithm::V4 => ALGORITHM,
            Algorithm::V4a => ALGORITHM_V4A,
        };
        // The scope as sent: its date, region and service were checked against this verifier's.
        let sts = string_to_sign(algorithm, amz_date, claims.credential.scope(), &cr);
        Ok((cr, sts))
    }
}

/// How the body is covered: `x-amz-content-sha256`, else the hash the caller computed, else
/// (presigned URLs only) unsigned.
pub(super) fn payload(req: &Incoming<'_>, presigned: bool) -> Result<PayloadHash, VerifyError> {
    match (
        single_header(req.headers, "x-amz-content-sha256")?,
        req.body_sha256,
    ) {
        (Some(v), _) => PayloadHash::parse(v).ok_or_else(|| {
            VerifyError::InvalidRequest(format!(
                "x-amz-content-sha256 {v:?} is not a hash or a known mode"
            ))
        }),
        (None, Some(hash)) => PayloadHash::parse(hash).ok_or_else(|| {
            VerifyError::InvalidRequest("the body hash is not 64 hex digits".into())
        }),
        (None, None) if presigned => Ok(PayloadHash::Unsigned),
        (None, None) => Err(VerifyError::InvalidRequest(
            "Missing required header for this request: x-amz-content-sha256".into(),
        )),
    }
}

/// The signature, compared in constant time (SigV4) or verified with the public key (SigV4A).
/// An unknown key is checked against a stand-in key, so it costs the same work.
pub(super) fn check_signature(
    keys: &impl KeySource,
    claims: &Claims,
    canonical_request: String,
    string_to_sign: String,
) -> Result<(), VerifyError> {
    let (known, valid) = match claims.algorithm {
        Algorithm::V4 => {
            let c = &claims.credential;
            let key = keys.signing_key(c.access_key_id(), c.date(), c.region(), c.service());
            let known = key.is_some();
            let key = key.unwrap_or_else(|| stand_in_signing_key().clone());
            let mut mac = key.mac();
            mac.update(string_to_sign.as_bytes());
            let expected = crate::encode::hex32(&mac.finalize().into_bytes().into());
            (
                known,
                bool::from(expected[..].ct_eq(claims.signature.as_bytes())),
            )
        }
        Algorithm::V4a => {
            let public = keys.public_key(claims.credential.access_key_id());
            let known = public.is_some();
            let public = public.unwrap_or_else(|| stand_in_public_key().to_vec());
            (
                known,
                crate::v4a::verify(&public, string_to_sign.as_bytes(), &claims.signature),
            )
        }
    };
    if !known {
        return Err(VerifyError::InvalidAccessKeyId);
    }
    if !valid {
        return Err(VerifyError::SignatureDoesNotMatch {
            canonical_request,
            string_to_sign,
        });
    }
    Ok(())
}

/// The value of header `name`; two of them is an error (S3 refuses duplicate auth headers).
pub(super) fn single_header<'a>(
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
