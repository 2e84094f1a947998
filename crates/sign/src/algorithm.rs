//! What differs between SigV4 and SigV4A, in one place: the name, the scope, the region set and
//! how the string to sign becomes a signature. Everything else (canonical request, string to
//! sign, URL layout) is shared.

use std::fmt;
use std::sync::Arc;

use hmac::Mac;

use crate::encode::hex_into;
use crate::key::KeyCache;
use crate::string_to_sign::{scope, scope_v4a, ALGORITHM};
use crate::v4a::{EcdsaKey, ALGORITHM_V4A};
use crate::{Credentials, Error, SigningKey, SigningTime};

/// The signing algorithm of a signer, with its key material.
pub(crate) enum Algorithm {
    /// SigV4: HMAC-SHA256 with a key derived per day for one region.
    V4 { region: String, keys: KeyCache },
    /// SigV4A: ECDSA P-256 with one key per credential, valid in a set of regions.
    V4a {
        region_set: String,
        key: Arc<EcdsaKey>,
    },
}

impl Algorithm {
    /// SigV4 for `region`.
    pub(crate) fn v4(region: &str, service: &str) -> Result<Self, Error> {
        scope("19700101", region, service)?;
        Ok(Algorithm::V4 {
            region: region.to_owned(),
            keys: KeyCache::default(),
        })
    }

    /// SigV4A for `region_set` (`us-east-1,us-west-2`, `us-*` or `*`).
    pub(crate) fn v4a(
        credentials: &Credentials,
        region_set: &str,
        service: &str,
    ) -> Result<Self, Error> {
        check_region_set(region_set)?;
        scope("19700101", "region", service)?;
        Ok(Algorithm::V4a {
            region_set: region_set.to_owned(),
            key: Arc::new(EcdsaKey::derive(credentials)?),
        })
    }

    /// The same algorithm for another signer of the same credentials: SigV4 with a key cache of
    /// its own, SigV4A sharing the derived ECDSA key (deriving it again costs about 50 µs).
    pub(crate) fn sibling(&self) -> Self {
        match self {
            Algorithm::V4 { region, .. } => Algorithm::V4 {
                region: region.clone(),
                keys: KeyCache::default(),
            },
            Algorithm::V4a { region_set, key } => Algorithm::V4a {
                region_set: region_set.clone(),
                key: Arc::clone(key),
            },
        }
    }

    /// `AWS4-HMAC-SHA256` or `AWS4-ECDSA-P256-SHA256`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Algorithm::V4 { .. } => ALGORITHM,
            Algorithm::V4a { .. } => ALGORITHM_V4A,
        }
    }

    /// `date/region/service/aws4_request`, or for SigV4A `date/service/aws4_request`.
    pub(crate) fn scope(&self, time: SigningTime, service: &str) -> Result<String, Error> {
        let date = time.date_stamp_bytes();
        // Digits only: never fails.
        let date = std::str::from_utf8(&date).unwrap_or_default();
        match self {
            Algorithm::V4 { region, .. } => scope(date, region, service),
            Algorithm::V4a { .. } => Ok(scope_v4a(date, service)),
        }
    }

    /// The signed region set of SigV4A.
    pub(crate) fn region_set(&self) -> Option<&str> {
        match self {
            Algorithm::V4 { .. } => None,
            Algorithm::V4a { region_set, .. } => Some(region_set),
        }
    }

    /// The SigV4 key of `time`'s day; `None` for SigV4A.
    pub(crate) fn signing_key(
        &self,
        credentials: &Credentials,
        time: SigningTime,
        service: &str,
    ) -> Option<SigningKey> {
        match self {
            Algorithm::V4 { region, keys } => Some(keys.key(credentials, time, region, service)),
            Algorithm::V4a { .. } => None,
        }
    }

    /// Appends the hex signature of `string_to_sign`.
    pub(crate) fn sign_into(
        &self,
        credentials: &Credentials,
        time: SigningTime,
        service: &str,
        string_to_sign: &str,
        out: &mut String,
    ) -> Result<(), Error> {
        match self {
            Algorithm::V4 { region, keys } => {
                let mut mac = keys.key(credentials, time, region, service).mac();
                mac.update(string_to_sign.as_bytes());
                hex_into(out, &mac.finalize().into_bytes());
                Ok(())
            }
            Algorithm::V4a { key, .. } => key.sign_into(string_to_sign.as_bytes(), out),
        }
    }
}

/// Checks a SigV4A region set: comma-separated regions or patterns (`us-east-1,eu-west-1`,
/// `us-*`, `*`). Public so that configuration can refuse a bad one before any request.
pub fn check_region_set(set: &str) -> Result<(), Error> {
    let ok = !set.is_empty()
        && set.split(',').all(|r| {
            !r.is_empty()
                && r.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'*')
        });
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidScope(format!(
            "region set {set:?} must be comma-separated regions such as us-east-1,us-west-2, or *"
        )))
    }
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Algorithm::V4 { region, .. } => f
                .debug_struct("SigV4")
                .field("region", region)
                .finish_non_exhaustive(),
            Algorithm::V4a { region_set, .. } => f
                .debug_struct("SigV4A")
                .field("region_set", region_set)
                .finish_non_exhaustive(),
        }
    }
}
