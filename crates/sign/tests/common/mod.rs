//! The credentials and date of AWS's published S3 examples, shared by the tests that use them
//! (the examples themselves, the chunked-body tests, the aws-crt-java interop).
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, dead_code)]

use slipstream_sign::{Credentials, SigningTime};

/// `AKIAIOSFODNN7EXAMPLE` and its secret, as in AWS's S3 SigV4 examples.
pub fn creds() -> Credentials {
    Credentials::new(
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        None,
    )
    .unwrap()
}

/// 2013-05-24T00:00:00Z, the examples' date.
pub fn t() -> SigningTime {
    SigningTime::parse_amz("20130524T000000Z").unwrap()
}
