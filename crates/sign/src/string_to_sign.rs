//! The credential scope and the string to sign.

use std::convert::Infallible;

use sha2::{Digest, Sha256};

use crate::encode::hex_into;
use crate::Error;

/// The SigV4 algorithm name.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// `date/region/service/aws4_request`. Region and service must be non-empty and free of `/`
/// and whitespace, or the scope would not parse back on the server.
pub fn scope(date_stamp: &str, region: &str, service: &str) -> Result<String, Error> {
    let mut out = String::new();
    push_scope(&mut out, date_stamp, region, service)?;
    Ok(out)
}

/// Appends [`scope`] to `out` (the verifier writes it straight into its string to sign).
pub(crate) fn push_scope(
    out: &mut String,
    date_stamp: &str,
    region: &str,
    service: &str,
) -> Result<(), Error> {
    for (what, v) in [("region", region), ("service", service)] {
        if v.is_empty() || !v.bytes().all(|b| b.is_ascii_graphic() && b != b'/') {
            return Err(Error::InvalidScope(format!(
                "the {what} {v:?} must be non-empty, printable and without '/'"
            )));
        }
    }
    out.reserve(date_stamp.len() + region.len() + service.len() + 15);
    for part in [date_stamp, "/", region, "/", service, "/aws4_request"] {
        out.push_str(part);
    }
    Ok(())
}

/// The SigV4A scope, `date/service/aws4_request`: no region, the region set is signed instead.
pub fn scope_v4a(date_stamp: &str, service: &str) -> String {
    let mut out = String::new();
    push_scope_v4a(&mut out, date_stamp, service);
    out
}

/// Appends [`scope_v4a`] to `out`.
pub(crate) fn push_scope_v4a(out: &mut String, date_stamp: &str, service: &str) {
    out.reserve(date_stamp.len() + service.len() + 14);
    for part in [date_stamp, "/", service, "/aws4_request"] {
        out.push_str(part);
    }
}

/// The part of the string to sign that is the same for every request of one second and scope:
/// `ALGORITHM\nAMZDATE\nSCOPE\n`. Keeping it apart lets the presigner absorb it into HMAC state once.
pub fn string_to_sign_prefix(algorithm: &str, amz_date: &str, scope: &str) -> String {
    let Ok(s) = prefix_with(algorithm, amz_date, scope.len(), |s| {
        s.push_str(scope);
        Ok::<(), Infallible>(())
    });
    s
}

/// `ALGORITHM\nAMZDATE\nSCOPE\nhex(sha256(canonical_request))`.
pub fn string_to_sign(
    algorithm: &str,
    amz_date: &str,
    scope: &str,
    canonical_request: &str,
) -> String {
    with_hash(
        string_to_sign_prefix(algorithm, amz_date, scope),
        canonical_request,
    )
}

/// [`string_to_sign`] with the scope written in place by `scope` (about `scope_len` bytes), so
/// a verifier builds it without a string of its own.
pub(crate) fn string_to_sign_with<E>(
    algorithm: &str,
    amz_date: &str,
    scope_len: usize,
    scope: impl FnOnce(&mut String) -> Result<(), E>,
    canonical_request: &str,
) -> Result<String, E> {
    Ok(with_hash(
        prefix_with(algorithm, amz_date, scope_len, scope)?,
        canonical_request,
    ))
}

/// `ALGORITHM\nAMZDATE\nSCOPE\n`, sized for the hash too: one allocation.
fn prefix_with<E>(
    algorithm: &str,
    amz_date: &str,
    scope_len: usize,
    scope: impl FnOnce(&mut String) -> Result<(), E>,
) -> Result<String, E> {
    let mut s = String::with_capacity(algorithm.len() + amz_date.len() + scope_len + 3 + 64);
    for part in [algorithm, "\n", amz_date, "\n"] {
        s.push_str(part);
    }
    scope(&mut s)?;
    s.push('\n');
    Ok(s)
}

/// `prefix` followed by the hex SHA-256 of the canonical request.
fn with_hash(mut prefix: String, canonical_request: &str) -> String {
    hex_into(&mut prefix, &Sha256::digest(canonical_request.as_bytes()));
    prefix
}
