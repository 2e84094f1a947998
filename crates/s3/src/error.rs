//! The one error type of this crate.

use std::fmt;

/// Why a bucket, endpoint or URI was refused (the caller's input), or an S3 answer could not be
/// read (the server's).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Caller: a bucket name S3 can never accept.
    InvalidBucket(String),
    /// Caller: an endpoint URL that is not `http(s)://host[:port][/path]`.
    InvalidEndpoint(String),
    /// Caller: a region that cannot be part of a host name.
    InvalidRegion(String),
    /// Caller: endpoint settings AWS has no endpoint for (Transfer Acceleration with FIPS or
    /// a custom endpoint, FIPS in China, ...): the message says which setting to change.
    UnsupportedEndpoint(String),
    /// Caller: text that is not `s3://bucket/key`.
    InvalidUri(String),
    /// Caller: a key this request cannot carry (a control character in an XML body).
    InvalidKey(String),
    /// Caller: a wildcard pattern that does not compile (an unclosed `[`).
    InvalidPattern(String),
    /// Server: an XML answer that does not parse, or lacks a part the operation needs.
    Response(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidBucket(b) => write!(
                f,
                "invalid bucket name {b:?}: use 1 to 255 letters, digits, '.', '-' or '_' (3 to 63 lowercase ones for new buckets)"
            ),
            Error::InvalidEndpoint(why) => write!(f, "invalid endpoint URL: {why}"),
            Error::InvalidRegion(r) => write!(f, "invalid region {r:?}: expected a name such as us-east-1"),
            Error::UnsupportedEndpoint(why) => f.write_str(why),
            Error::InvalidUri(why) => write!(f, "invalid S3 URI: {why}"),
            Error::InvalidKey(why) => write!(f, "invalid key: {why}"),
            Error::InvalidPattern(why) => write!(f, "invalid pattern: {why}"),
            Error::Response(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Error {}
