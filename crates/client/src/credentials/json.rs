//! What the credential sources' answers share: credentials in a JSON object (the container
//! endpoint, instance metadata, a `credential_process`) and RFC 3339 expiry times.

use std::time::{Duration, SystemTime};

use slipstream_sign::{Credentials, SigningTime};

use super::Expiring;
use crate::ClientError;

pub(super) fn expiry(text: &str) -> Result<SystemTime, ClientError> {
    // `2026-11-22T12:00:00Z`, sometimes with fractional seconds (dropped: refreshes come early).
    let whole = match (text.get(..19), text.find('.')) {
        (Some(head), Some(19)) => format!("{head}Z"),
        _ => text.to_owned(),
    };
    let t = SigningTime::parse_rfc3339(&whole)
        .map_err(|_| ClientError::Response(format!("the expiration {text:?} is not a date")))?;
    let secs = u64::try_from(t.unix())
        .map_err(|_| ClientError::Response(format!("the expiration {text:?} is before 1970")))?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// `{"AccessKeyId", "SecretAccessKey", "Token", "Expiration"}` (ECS and IMDS).
pub(super) fn json_credentials(body: &[u8]) -> Result<Expiring, ClientError> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ClientError::Response(format!("the credentials are not JSON: {e}")))?;
    credentials_in(&v, "Token")
}

/// The credentials in a JSON object; the session token is `token_field` (`Token` from
/// ECS/IMDS, `SessionToken` from a `credential_process`).
pub(super) fn credentials_in(
    v: &serde_json::Value,
    token_field: &str,
) -> Result<Expiring, ClientError> {
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let (Some(id), Some(secret)) = (field("AccessKeyId"), field("SecretAccessKey")) else {
        return Err(ClientError::Response(
            "the credentials lack AccessKeyId or SecretAccessKey".into(),
        ));
    };
    let token = field(token_field).filter(|t| !t.is_empty());
    let credentials =
        Credentials::new(id, secret, token).map_err(|e| ClientError::Response(e.to_string()))?;
    let expires = field("Expiration").map(|e| expiry(&e)).transpose()?;
    Ok(Expiring {
        credentials,
        expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_container_and_metadata_answer() {
        let j = json_credentials(br#"{"Code":"Success","AccessKeyId":"ASIA1","SecretAccessKey":"s","Token":"t","Expiration":"2026-11-22T12:00:00Z"}"#).unwrap();
        assert_eq!(j.credentials.access_key_id(), "ASIA1");
        assert_eq!(j.credentials.session_token(), Some("t"));
        assert!(j.expires.is_some());
        assert!(json_credentials(b"{}").is_err());
        assert!(json_credentials(b"not json").is_err());
    }
}
