//! Why a request was refused, in S3's own terms.

use std::fmt;

/// A refused request. Each variant maps to the error code and HTTP status S3 returns, so a
/// gateway can answer exactly as S3 would. Every variant is the client's doing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// No signature at all (neither `Authorization` nor `X-Amz-Signature`).
    Missing,
    /// The access key is not known to the key source.
    InvalidAccessKeyId,
    /// The signature is well-formed but wrong. Carries what the verifier computed, which is what
    /// a client needs to find its mistake (S3 returns the same two texts).
    SignatureDoesNotMatch {
        /// The canonical request the verifier built.
        canonical_request: String,
        /// The string it signed.
        string_to_sign: String,
    },
    /// The `Authorization` header cannot be parsed, or its scope is wrong for this server.
    AuthorizationHeaderMalformed(String),
    /// A presigned URL's `X-Amz-*` parameters cannot be parsed or are out of range.
    AuthorizationQueryParametersError(String),
    /// Header auth more than 15 minutes away from the server's clock.
    RequestTimeTooSkewed,
    /// Refused for a reason S3 reports as access denied: expired, not yet valid, region not in the set.
    AccessDenied(String),
    /// The body's SHA-256 differs from `x-amz-content-sha256`.
    XAmzContentSha256Mismatch,
    /// A request S3 rejects as invalid: two auth mechanisms, duplicate headers, unsupported algorithm.
    InvalidRequest(String),
    /// A POST form's field is missing or malformed (S3 names the argument in its message).
    InvalidArgument(String),
    /// A POST form's policy cannot be read: not base64, not JSON, an unknown condition.
    InvalidPolicyDocument(String),
    /// A POST upload larger than its policy's `content-length-range`.
    EntityTooLarge {
        /// The file's size.
        size: u64,
        /// The policy's largest.
        max: u64,
    },
    /// A POST upload smaller than its policy's `content-length-range`.
    EntityTooSmall {
        /// The file's size.
        size: u64,
        /// The policy's smallest.
        min: u64,
    },
}

impl VerifyError {
    /// S3's error code.
    pub fn s3_code(&self) -> &'static str {
        match self {
            VerifyError::Missing => "AccessDenied",
            VerifyError::InvalidAccessKeyId => "InvalidAccessKeyId",
            VerifyError::SignatureDoesNotMatch { .. } => "SignatureDoesNotMatch",
            VerifyError::AuthorizationHeaderMalformed(_) => "AuthorizationHeaderMalformed",
            VerifyError::AuthorizationQueryParametersError(_) => {
                "AuthorizationQueryParametersError"
            }
            VerifyError::RequestTimeTooSkewed => "RequestTimeTooSkewed",
            VerifyError::AccessDenied(_) => "AccessDenied",
            VerifyError::XAmzContentSha256Mismatch => "XAmzContentSHA256Mismatch",
            VerifyError::InvalidRequest(_) => "InvalidRequest",
            VerifyError::InvalidArgument(_) => "InvalidArgument",
            VerifyError::InvalidPolicyDocument(_) => "InvalidPolicyDocument",
            VerifyError::EntityTooLarge { .. } => "EntityTooLarge",
            VerifyError::EntityTooSmall { .. } => "EntityTooSmall",
        }
    }

    /// The HTTP status S3 answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            VerifyError::AuthorizationHeaderMalformed(_)
            | VerifyError::AuthorizationQueryParametersError(_)
            | VerifyError::XAmzContentSha256Mismatch
            | VerifyError::InvalidRequest(_)
            | VerifyError::InvalidArgument(_)
            | VerifyError::InvalidPolicyDocument(_)
            | VerifyError::EntityTooLarge { .. }
            | VerifyError::EntityTooSmall { .. } => 400,
            _ => 403,
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Missing => f.write_str("the request is not signed"),
            VerifyError::InvalidAccessKeyId => f.write_str("the access key id is not known"),
            VerifyError::SignatureDoesNotMatch { .. } => {
                f.write_str("the signature does not match: the request was changed, or signed with another secret or differently")
            }
            VerifyError::AuthorizationHeaderMalformed(why) => write!(f, "malformed Authorization header: {why}"),
            VerifyError::AuthorizationQueryParametersError(why) => write!(f, "malformed presigned URL: {why}"),
            VerifyError::RequestTimeTooSkewed => f.write_str("the request time is more than 15 minutes from the server's"),
            VerifyError::AccessDenied(why) => f.write_str(why),
            VerifyError::XAmzContentSha256Mismatch => f.write_str("the body does not match x-amz-content-sha256"),
            VerifyError::InvalidRequest(why) | VerifyError::InvalidArgument(why) => f.write_str(why),
            VerifyError::InvalidPolicyDocument(why) => write!(f, "invalid POST policy: {why}"),
            VerifyError::EntityTooLarge { size, max } => write!(f, "the upload of {size} bytes is larger than the policy's {max}"),
            VerifyError::EntityTooSmall { size, min } => write!(f, "the upload of {size} bytes is smaller than the policy's {min}"),
        }
    }
}

impl std::error::Error for VerifyError {}
