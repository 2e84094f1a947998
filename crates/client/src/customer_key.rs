//! SSE-C: objects S3 encrypts with a key the caller keeps (the AWS CLI's `--sse-c-key`, boto3's
//! `SSECustomerKey`). S3 stores only a salted hash of the key, so every request that writes or
//! reads such an object carries the key again, as three headers: the algorithm (`AES256`, the
//! only one), the key in base64, and the key's MD5 in base64 (S3 checks it to catch a key
//! mangled on the way). The same three go under `x-amz-copy-source-` names for the source of a
//! server-side copy.
//!
//! The key is a secret: [`CustomerKey`]'s `Debug` names only its MD5 (which S3 echoes in its
//! answers anyway), and S3 refuses the headers over plain HTTP.

use std::borrow::Cow;
use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use md5::{Digest, Md5};

/// The one algorithm S3 offers for customer keys.
pub const SSE_C_ALGORITHM: &str = "AES256";

/// A 256-bit customer key, with the header values every request of its object sends.
#[derive(Clone, PartialEq, Eq)]
pub struct CustomerKey {
    /// The key in base64.
    key: String,
    /// The key's MD5 in base64.
    md5: String,
}

impl CustomerKey {
    /// A key of exactly 32 bytes, as given (the AWS CLI's `--sse-c-key`, boto3's
    /// `SSECustomerKey`): not base64, which is how the key is sent.
    pub fn from_bytes(key: &[u8]) -> Result<Self, String> {
        if key.len() != 32 {
            return Err(format!(
                "an SSE-C key is 32 bytes (AES-256), this one is {} bytes; the key is given as \
                 is, not in base64 (fileb://PATH reads it from a file)",
                key.len()
            ));
        }
        Ok(Self {
            key: STANDARD.encode(key),
            md5: STANDARD.encode(Md5::digest(key)),
        })
    }

    /// A key already in base64 with its MD5 in base64, as boto3 takes them when the caller
    /// gives `SSECustomerKeyMD5` too (it then sends both as given). Checked here: a key that is
    /// not 32 bytes or an MD5 that is not the key's would only be refused by the server.
    pub fn from_base64(key: &str, md5: &str) -> Result<Self, String> {
        let raw = STANDARD
            .decode(key)
            .map_err(|_| "SSECustomerKey is not base64 (with SSECustomerKeyMD5 given, the key is taken in base64, as boto3 takes it)".to_owned())?;
        let checked = Self::from_bytes(&raw)?;
        if checked.md5 != md5 {
            return Err(
                "SSECustomerKeyMD5 is not the MD5 of SSECustomerKey (both in base64)".into(),
            );
        }
        Ok(checked)
    }

    /// The key's MD5 in base64, as S3 echoes it (`x-amz-server-side-encryption-customer-key-MD5`).
    pub fn md5(&self) -> &str {
        &self.md5
    }

    /// The headers of a request that writes or reads the object.
    pub fn headers(&self) -> [(Cow<'static, str>, String); 3] {
        self.named("x-amz-server-side-encryption-customer-")
    }

    /// The headers of a request for an object encrypted with `key`, if any: none without one.
    pub fn headers_of(key: Option<&CustomerKey>) -> Vec<(Cow<'static, str>, String)> {
        key.map(|k| k.headers().to_vec()).unwrap_or_default()
    }

    /// The headers that open the source of a server-side copy.
    pub fn copy_source_headers(&self) -> [(Cow<'static, str>, String); 3] {
        self.named("x-amz-copy-source-server-side-encryption-customer-")
    }

    fn named(&self, prefix: &str) -> [(Cow<'static, str>, String); 3] {
        [
            (format!("{prefix}algorithm").into(), SSE_C_ALGORITHM.into()),
            (format!("{prefix}key").into(), self.key.clone()),
            (format!("{prefix}key-md5").into(), self.md5.clone()),
        ]
    }
}

/// Only the MD5: the key itself never reaches a log.
impl fmt::Debug for CustomerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomerKey(md5={})", self.md5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

    #[test]
    fn the_headers_are_the_key_and_its_md5_in_base64_as_botocore_sends_them() {
        let key = CustomerKey::from_bytes(KEY).unwrap();
        let headers = key.headers();
        assert_eq!(headers[0].1, "AES256");
        assert_eq!(headers[1].1, "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=");
        // base64(md5(KEY)), as botocore's sse_md5 handler computes it.
        assert_eq!(headers[2].1, "hRasmdxgYDKV3nvbahU1MA==");
        assert_eq!(
            headers[2].0,
            "x-amz-server-side-encryption-customer-key-md5"
        );
        let copy = key.copy_source_headers();
        assert_eq!(
            copy[1].0,
            "x-amz-copy-source-server-side-encryption-customer-key"
        );
    }

    #[test]
    fn a_key_of_another_size_or_a_wrong_md5_is_refused_before_any_request() {
        let short = CustomerKey::from_bytes(b"too short").unwrap_err();
        assert!(
            short.contains("32 bytes") && short.contains("9 bytes"),
            "{short}"
        );
        let key = CustomerKey::from_bytes(KEY).unwrap();
        let b64 = STANDARD.encode(KEY);
        assert_eq!(CustomerKey::from_base64(&b64, key.md5()).unwrap(), key);
        assert!(CustomerKey::from_base64(&b64, "AAAA")
            .unwrap_err()
            .contains("MD5"));
        assert!(CustomerKey::from_base64("not base64!", key.md5()).is_err());
    }

    #[test]
    fn debug_output_names_the_md5_and_never_the_key() {
        let key = CustomerKey::from_bytes(KEY).unwrap();
        let shown = format!("{key:?}");
        assert!(
            !shown.contains("MDEyMzQ1") && !shown.contains("0123456789"),
            "{shown}"
        );
        assert!(shown.contains(key.md5()));
    }
}
