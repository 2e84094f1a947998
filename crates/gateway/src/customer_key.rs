//! SSE-C keys on plain-HTTP client connections: S3 refuses a request that carries a customer
//! key (for its object or a copy's source) unless it came over TLS, and so does the edge, before
//! anything reaches the origin (which the edge reaches over TLS, so it would not know). The
//! tests are made inside the header walks the request path already does (pass-through's
//! hop-by-hop scan, the verifier's header list): a separate pair of header-map lookups cost
//! 2-3 us a request on this path though 85 ns alone (docs/BENCHMARKS.md).

use hyper::StatusCode;

use crate::proxy::Answer;

const KEY: &str = "x-amz-server-side-encryption-customer-key";
const SOURCE_KEY: &str = "x-amz-copy-source-server-side-encryption-customer-key";

/// Whether a header or query parameter name is one that carries a customer key, in any case;
/// the length is compared first, so other names cost one comparison.
pub(crate) fn names_key(name: &str) -> bool {
    match name.len() {
        41 => name.eq_ignore_ascii_case(KEY),
        53 => name.eq_ignore_ascii_case(SOURCE_KEY),
        _ => false,
    }
}

/// Whether a query names a customer key (as a presigned URL may carry one): for a request the
/// edge does not otherwise split the query of (pass-through, a POST upload).
pub(crate) fn query_names_key(query: &str) -> bool {
    slipstream_sign::canonical::split_query(query).any(|(name, _)| names_key(name))
}

/// S3's answer to an SSE-C key sent over plain HTTP, in its own words.
pub(crate) fn insecure() -> Answer {
    (
        StatusCode::BAD_REQUEST,
        "InvalidRequest",
        "Requests specifying Server Side Encryption with Customer provided keys must be made \
         over a secure connection."
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_key_headers_and_query_names_are_found_and_nothing_else() {
        assert_eq!((KEY.len(), SOURCE_KEY.len()), (41, 53));
        assert!(names_key(KEY) && names_key(SOURCE_KEY));
        for other in [
            "x-amz-server-side-encryption-customer-algorithm",
            "x-amz-server-side-encryption-customer-key-md5",
            "x-amz-server-side-encryption-customer-kez",
            "host",
        ] {
            assert!(!names_key(other), "{other}");
        }
        assert!(query_names_key(
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Server-Side-Encryption-Customer-Key=abc"
        ));
        assert!(!query_names_key(
            "x-amz-server-side-encryption-customer-key-MD5=abc"
        ));
        assert!(!query_names_key("prefix=customer-key"));
        assert!(query_names_key(
            "a=1&x-amz-copy-source-server-side-encryption-customer-key=k"
        ));
        assert!(!query_names_key(""));
    }
}
