//! What an edge is told about a key: derived from the secret here, so that the secret itself
//! never leaves the authority.

use std::collections::BTreeMap;

use slipstream_gateway::authority_wire::{KeyAnswer, SessionAnswer, DAYS_AHEAD, DAYS_BACK};
use slipstream_sign::encode::hex;
use slipstream_sign::verify::DerivedKeys;
use slipstream_sign::{Credentials, SigningKey, SigningTime};

use crate::store::Stored;
use crate::AuthorityError;

/// The answer for `access_key_id` in `region` at `now` (unix seconds): signing keys for S3 in
/// that region from [`DAYS_BACK`] days ago to [`DAYS_AHEAD`] ahead, the SigV4A public key, the
/// token's hash, the policy.
pub(crate) fn answer(
    access_key_id: &str,
    stored: &Stored,
    region: &str,
    now: i64,
) -> Result<KeyAnswer, AuthorityError> {
    let mut signing_keys = BTreeMap::new();
    for day in -DAYS_BACK..=DAYS_AHEAD {
        let date = SigningTime::from_unix(now + day * 86_400)
            .map_err(|e| AuthorityError::Store(e.to_string()))?
            .date_stamp();
        let key = SigningKey::derive(&stored.secret, &date, region, "s3");
        signing_keys.insert(date, hex(key.as_bytes()));
    }
    let credentials = Credentials::new(access_key_id, &stored.secret, None)
        .map_err(|e| AuthorityError::Store(format!("{access_key_id}: {e}")))?;
    let public_key = DerivedKeys::new(credentials)
        .public_key()
        .ok_or_else(|| AuthorityError::Store(format!("{access_key_id}: no SigV4A key")))?;
    Ok(KeyAnswer {
        access_key_id: access_key_id.to_owned(),
        revision: stored.revision,
        region: region.to_owned(),
        signing_keys,
        sigv4a_public_key: hex(&public_key),
        session: stored.session_sha256.map(|h| SessionAnswer {
            token_sha256: hex(&h),
            expires: stored.expires,
        }),
        policy: stored.policy.clone(),
    })
}

/// Whether `region` can be a region name (letters, digits and dashes, at most 64).
pub(crate) fn plausible_region(region: &str) -> bool {
    !region.is_empty()
        && region.len() <= 64
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_carries_derived_keys_and_no_secret() {
        let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
        let stored = Stored {
            secret: secret.into(),
            session_sha256: Some([7; 32]),
            expires: Some(1_800_000_000),
            policy: serde_json::json!({"Statement": []}),
            revision: 3,
        };
        // 2015-08-30T12:36:00Z, the test suite's time.
        let a = answer("AKIDEXAMPLE", &stored, "us-east-1", 1_440_938_160).unwrap();
        assert_eq!(a.signing_keys.len(), 9);
        // The suite's documented signing key for 20150830/us-east-1/service is for "service";
        // ours is for s3: derive it the long way and compare.
        assert_eq!(
            a.signing_keys["20150830"],
            hex(SigningKey::derive(secret, "20150830", "us-east-1", "s3").as_bytes())
        );
        assert!(a.signing_keys.contains_key("20150823") && a.signing_keys.contains_key("20150831"));
        assert_eq!(
            a.sigv4a_public_key,
            "04b6618f6a65740a99e650b33b6b4b5bd0d43b176d721a3edfea7e7d2d56d936b1865ed22a7eadc9c5cb9d2cbaca1b3699139fedc5043dc6661864218330c8e518"
        );
        let text = serde_json::to_string(&a).unwrap();
        assert!(!text.contains(secret) && !text.contains("wJalr"));
    }
}
