//! The derived signing key, and a cache so it is derived once a day rather than per request.
//!
//! Deriving the key is four HMACs, more work than signing a URL. It depends only on
//! (secret, date, region, service), so a signer keeps the key of the current day.

use std::fmt;
use std::sync::Mutex;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroize;

use crate::{Credentials, SigningTime};

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
///
/// It also carries the HMAC state already keyed with it: keying costs two SHA-256 blocks, a
/// tenth of verifying a URL, and a key is used for a whole day.
#[derive(Clone)]
pub struct SigningKey {
    bytes: [u8; 32],
    mac: HmacSha256,
}

impl SigningKey {
    /// Derives the key for one day, region and service.
    pub fn derive(secret_access_key: &str, date_stamp: &str, region: &str, service: &str) -> Self {
        let mut k_secret = Vec::with_capacity(4 + secret_access_key.len());
        k_secret.extend_from_slice(b"AWS4");
        k_secret.extend_from_slice(secret_access_key.as_bytes());
        let k_date = hmac(&k_secret, date_stamp.as_bytes());
        k_secret.zeroize();
        let k_region = hmac(&k_date, region.as_bytes());
        let k_service = hmac(&k_region, service.as_bytes());
        Self::from_bytes(hmac(&k_service, b"aws4_request"))
    }

    /// A key derived elsewhere (a gateway that is handed derived keys, never secrets).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self {
            mac: keyed(&bytes),
            bytes,
        }
    }

    /// The raw key bytes, for a verifier that is handed keys rather than secrets.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.bytes
    }

    /// An HMAC state keyed with this key, to be cloned per message.
    pub(crate) fn mac(&self) -> HmacSha256 {
        self.mac.clone()
    }
}

impl Drop for SigningKey {
    fn drop(&mut self) {
        // The keyed HMAC state cannot be wiped through its API; the raw key is.
        self.bytes.zeroize();
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningKey(<redacted>)")
    }
}

/// An HMAC-SHA256 state for `key`.
pub(crate) fn keyed(key: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length (long ones are hashed), so this cannot fail.
    #[allow(clippy::expect_used)]
    HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length")
}

/// One HMAC-SHA256.
pub(crate) fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut m = keyed(key);
    m.update(msg);
    m.finalize().into_bytes().into()
}

/// The key of the most recent day asked for, for one (credentials, region, service).
///
/// A `Mutex` is enough: it is taken once per template or header signature, not per URL.
#[derive(Default)]
pub struct KeyCache {
    slot: Mutex<Option<(i64, SigningKey)>>,
}

impl KeyCache {
    /// The key for `time`'s day, derived only when the day changes.
    pub fn key(
        &self,
        credentials: &Credentials,
        time: SigningTime,
        region: &str,
        service: &str,
    ) -> SigningKey {
        let day = time.day();
        let mut slot = self
            .slot
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match &*slot {
            Some((d, key)) if *d == day => key.clone(),
            _ => {
                let key = SigningKey::derive(
                    credentials.secret_access_key(),
                    &time.date_stamp(),
                    region,
                    service,
                );
                *slot = Some((day, key.clone()));
                key
            }
        }
    }
}

impl fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyCache(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::hex;

    #[test]
    fn derives_the_documented_key() {
        // The example in AWS's "Examples of how to derive a signing key for Signature Version 4".
        let k = SigningKey::derive(
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "20120215",
            "us-east-1",
            "iam",
        );
        assert_eq!(
            hex(k.as_bytes()),
            "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
        );
    }

    #[test]
    fn cache_rederives_only_when_the_day_changes() {
        let c = Credentials::new("AKID", "secret", None).unwrap();
        let cache = KeyCache::default();
        let t = SigningTime::parse_amz("20150830T000000Z").unwrap();
        let a = cache.key(&c, t, "us-east-1", "s3");
        let b = cache.key(&c, t.plus(86_399), "us-east-1", "s3");
        let next = cache.key(&c, t.plus(86_400), "us-east-1", "s3");
        assert_eq!(a.as_bytes(), b.as_bytes());
        assert_ne!(a.as_bytes(), next.as_bytes());
        assert_eq!(
            next.as_bytes(),
            SigningKey::derive("secret", "20150831", "us-east-1", "s3").as_bytes()
        );
    }
}
