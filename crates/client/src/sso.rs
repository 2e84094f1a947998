//! IAM Identity Center (SSO) profiles: the role credentials the SSO portal hands out for the
//! access token that `aws sso login` left in `~/.aws/sso/cache`.
//!
//! This module reads the token and the portal's answer; it does not log in or refresh the
//! token (that needs a browser, or the OIDC refresh token the AWS CLI keeps for itself): an
//! expired or missing token is an error that says to run `aws sso login`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha1::{Digest, Sha1};

use crate::credentials::Expiring;
use crate::ClientError;
use slipstream_sign::Credentials;

/// Where the AWS CLI caches the token of a session: `sso/cache/` under `~/.aws`, named by the
/// SHA-1 (hex) of the `sso-session` name, or of the start URL for a legacy profile without one.
pub(crate) fn token_path(aws_dir: &Path, key: &str) -> PathBuf {
    let hex: String = Sha1::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    aws_dir
        .join("sso")
        .join("cache")
        .join(format!("{hex}.json"))
}

/// The access token in the cache file at `path`, if it is still valid at `now`. `login` is the
/// command to suggest when it is not.
pub(crate) fn cached_token(
    path: &Path,
    now: SystemTime,
    login: &str,
) -> Result<String, ClientError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ClientError::Credentials(format!(
            "no SSO token at {} ({e}): run `{login}`",
            path.display()
        ))
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        ClientError::Credentials(format!(
            "{} is not JSON ({e}): run `{login}`",
            path.display()
        ))
    })?;
    let field = |k: &str| v.get(k).and_then(|x| x.as_str());
    let (Some(token), Some(expires)) = (field("accessToken"), field("expiresAt")) else {
        return Err(ClientError::Credentials(format!(
            "{} has no accessToken or expiresAt: run `{login}`",
            path.display()
        )));
    };
    let expires = crate::credentials::expiry(expires)?;
    if expires <= now {
        return Err(ClientError::Credentials(format!(
            "the SSO session has expired: run `{login}`"
        )));
    }
    Ok(token.to_owned())
}

/// The portal's `GetRoleCredentials` answer: `{"roleCredentials": {"accessKeyId",
/// "secretAccessKey", "sessionToken", "expiration" (Unix milliseconds)}}`.
pub(crate) fn role_credentials(body: &[u8]) -> Result<Expiring, ClientError> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ClientError::Response(format!("the SSO answer is not JSON: {e}")))?;
    let role = v.get("roleCredentials");
    let field = |k: &str| role.and_then(|r| r.get(k)).and_then(|x| x.as_str());
    let (Some(id), Some(secret)) = (field("accessKeyId"), field("secretAccessKey")) else {
        return Err(ClientError::Response(
            "the SSO answer lacks roleCredentials.accessKeyId or secretAccessKey".into(),
        ));
    };
    let token = field("sessionToken").map(str::to_owned);
    let credentials =
        Credentials::new(id, secret, token).map_err(|e| ClientError::Response(e.to_string()))?;
    let expires = role
        .and_then(|r| r.get("expiration"))
        .and_then(serde_json::Value::as_u64)
        .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms));
    Ok(Expiring {
        credentials,
        expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_file_is_named_as_the_aws_cli_names_it() {
        // SHA-1 hex of the session name (checked with Python's hashlib).
        let p = token_path(Path::new("/h/.aws"), "my-sso");
        assert_eq!(
            p,
            Path::new("/h/.aws/sso/cache/0ad374308c5a4e22f723adf10145eafad7c4031c.json")
        );
    }

    #[test]
    fn expired_missing_and_valid_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let login = "aws sso login --profile dev";
        let err = cached_token(&path, SystemTime::now(), login).unwrap_err();
        assert!(err.to_string().contains(login), "{err}");
        std::fs::write(
            &path,
            r#"{"accessToken":"tok","expiresAt":"2026-11-22T12:00:00Z"}"#,
        )
        .unwrap();
        let before = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        assert_eq!(cached_token(&path, before, login).unwrap(), "tok");
        let after = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let err = cached_token(&path, after, login).unwrap_err();
        assert!(err.to_string().contains("expired"), "{err}");
        assert!(
            !err.to_string().contains("tok\""),
            "the token stays out of messages"
        );
    }

    #[test]
    fn role_credentials_with_a_millisecond_expiry() {
        let body = br#"{"roleCredentials":{"accessKeyId":"ASIA1","secretAccessKey":"s","sessionToken":"t","expiration":1795000000000}}"#;
        let e = role_credentials(body).unwrap();
        assert_eq!(e.credentials.access_key_id(), "ASIA1");
        assert_eq!(
            e.expires,
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000))
        );
        assert!(role_credentials(b"{}").is_err());
    }
}
