//! The credential scope and the string to sign.

use sha2::{Digest, Sha256};

use crate::encode::hex_into;
use crate::Error;

/// The SigV4 algorithm name.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// `date/region/service/aws4_request`. Region and service must be non-empty and free of `/`
/// and whitespace, or the scope would not parse back on the server.
pub fn scope(date_stamp: &str, region: &str, service: &str) -> Result<String, Error> {
    for (what, v) in [("region", region), ("service", service)] {
        if v.is_empty() || !v.bytes().all(|b| b.is_ascii_graphic() && b != b'/') {
            return Err(Error::InvalidScope(format!(
                "the {what} {v:?} must be non-empty, printable and without '/'"
            )));
        }
    }
    Ok([date_stamp, region, service, "aws4_request"].join("/"))
}

/// The SigV4A scope, `date/service/aws4_request`: no region, the region set is signed instead.
pub fn scope_v4a(date_stamp: &str, service: &str) -> String {
    [date_stamp, service, "aws4_request"].join("/")
}

/// The part of the string to sign that is the same for every request of one second and scope:
/// `ALGORITHM\nAMZDATE\nSCOPE\n`. Keeping it apart lets the presigner absorb it into HMAC state once.
pub fn string_to_sign_prefix(algorithm: &str, amz_date: &str, scope: &str) -> String {
    let mut s = String::with_capacity(algorithm.len() + amz_date.len() + scope.len() + 3 + 64);
    for part in [algorithm, "\n", amz_date, "\n", scope, "\n"] {
        s.push_str(part);
    }
    s
}

/// `ALGORITHM\nAMZDATE\nSCOPE\nhex(sha256(canonical_request))`.
pub fn string_to_sign(
    algorithm: &str,
    amz_date: &str,
    scope: &str,
    canonical_request: &str,
) -> String {
    // The prefix is sized for the hash too: one allocation.
    let mut s = string_to_sign_prefix(algorithm, amz_date, scope);
    hex_into(&mut s, &Sha256::digest(canonical_request.as_bytes()));
    s
}
