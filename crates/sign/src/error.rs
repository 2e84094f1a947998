//! The one error type of this crate.

use std::fmt;

/// Why a signature could not be produced. Every variant is the caller's input: signing itself
/// cannot fail once its inputs are valid.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Caller: an expiry outside 1..=604800 seconds (S3 rejects longer presigned URLs).
    InvalidExpiry(u64),
    /// Caller: a time outside what SigV4 can express, or text that is not a time.
    InvalidTime(String),
    /// Caller: an empty object key (S3 keys have at least one byte).
    EmptyKey,
    /// Caller: an object key whose bytes are not UTF-8 (keys read from Arrow buffers are
    /// checked; S3 keys are UTF-8 text).
    KeyNotUtf8,
    /// Caller: a header name or value that HTTP cannot carry (control characters, empty name).
    InvalidHeader(String),
    /// Caller: a credential field that is empty or not printable ASCII.
    InvalidCredentials(&'static str),
    /// Caller: a region or service that cannot appear in a credential scope.
    InvalidScope(String),
    /// Library: the cryptographic backend failed (it does not for valid inputs).
    Crypto(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidExpiry(s) => write!(
                f,
                "expiry of {s} s is out of range: S3 accepts 1 to 604800 s (7 days)"
            ),
            Error::InvalidTime(why) => write!(f, "invalid signing time: {why}"),
            Error::EmptyKey => {
                f.write_str("the object key is empty: S3 keys need at least one character")
            }
            Error::KeyNotUtf8 => {
                f.write_str("the object key is not valid UTF-8: S3 keys are UTF-8 text")
            }
            Error::InvalidHeader(why) => write!(f, "invalid header: {why}"),
            Error::InvalidCredentials(why) => write!(f, "invalid credentials: {why}"),
            Error::InvalidScope(why) => write!(f, "invalid credential scope: {why}"),
            Error::Crypto(why) => write!(f, "cryptographic failure: {why}"),
        }
    }
}

impl std::error::Error for Error {}
