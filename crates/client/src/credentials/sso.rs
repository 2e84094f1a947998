//! IAM Identity Center (SSO) profiles: the role credentials the SSO portal hands out for the
//! access token that `aws sso login` left in `~/.aws/sso/cache`.
//!
//! The token is refreshed through SSO OIDC before it expires, as botocore does, when the cache
//! holds a refresh token (an `sso-session` login); logging in needs a browser and is left to
//! the AWS CLI: a missing or expired token is an error that says to run `aws sso login`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hyper::Method;
use sha1::{Digest, Sha1};
use slipstream_sign::encode::encode_query;
use slipstream_sign::{Credentials, SigningTime};

use super::json::expiry;
use super::Expiring;
use crate::transport::{get, request, Http};
use crate::ClientError;

/// The role whose credentials the portal hands out.
pub(super) struct Role<'a> {
    /// `https://portal.sso.REGION.amazonaws.com`, or `AWS_ENDPOINT_URL_SSO`.
    pub portal: &'a str,
    /// `sso_account_id`.
    pub account_id: &'a str,
    /// `sso_role_name`.
    pub role_name: &'a str,
}

/// The role's credentials for the token cached at `token_file` (refreshed through `oidc` when
/// it is about to expire); `login` is the command to suggest when no token works.
pub(super) async fn fetch(
    http: &Http,
    token_file: &Path,
    role: &Role<'_>,
    login: &str,
    oidc: Option<&str>,
) -> Result<Expiring, ClientError> {
    let token = access_token(http, token_file, oidc, login).await?;
    let url = format!(
        "{}/federation/credentials?account_id={}&role_name={}",
        role.portal.trim_end_matches('/'),
        encode_query(role.account_id),
        encode_query(role.role_name)
    );
    let auth = [("x-amz-sso_bearer_token", token)];
    let body = get(http, Method::GET, &url, &auth, Duration::from_secs(30)).await?;
    role_credentials(&body)
}

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

/// Refresh a token this long before it expires (botocore's window).
const REFRESH_WINDOW: Duration = Duration::from_secs(15 * 60);

/// The cached token: the file's JSON (rewritten whole after a refresh, so the AWS CLI's own
/// fields survive), the access token and its expiry.
struct Cached {
    json: serde_json::Map<String, serde_json::Value>,
    token: String,
    expires: SystemTime,
}

/// The access token for the portal: the cached one, refreshed through SSO OIDC (`oidc`, for an
/// `sso-session`) when it expires within 15 minutes and the cache holds a refresh token and a
/// client registration, as botocore does; the refreshed token is written back for the AWS CLI
/// and the next run. A failed refresh falls back to the cached token while it lasts. `login`
/// is the command to suggest when nothing works.
async fn access_token(
    http: &Http,
    path: &Path,
    oidc: Option<&str>,
    login: &str,
) -> Result<String, ClientError> {
    let cached = read_cache(path, login)?;
    let now = SystemTime::now();
    if cached.expires > now + REFRESH_WINDOW {
        return Ok(cached.token);
    }
    if let (Some(oidc), Some(body)) = (oidc, refresh_request(&cached.json, now)) {
        let url = format!("{}/token", oidc.trim_end_matches('/'));
        let headers = [("content-type", "application/json".to_owned())];
        let timeout = Duration::from_secs(30);
        let answer = request(http, Method::POST, &url, &headers, body.into(), timeout).await;
        if let Ok((json, token)) = answer.and_then(|a| refreshed(cached.json.clone(), &a, now)) {
            // The new token works whether or not it can be saved.
            let _ = write_cache(path, &json);
            return Ok(token);
        }
    }
    if cached.expires > now {
        return Ok(cached.token);
    }
    Err(ClientError::Credentials(format!(
        "the SSO session has expired: run `{login}`"
    )))
}

fn read_cache(path: &Path, login: &str) -> Result<Cached, ClientError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ClientError::Credentials(format!(
            "no SSO token at {} ({e}): run `{login}`",
            path.display()
        ))
    })?;
    let not_a_token = || {
        ClientError::Credentials(format!(
            "{} holds no accessToken and expiresAt: run `{login}`",
            path.display()
        ))
    };
    let json = match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => return Err(not_a_token()),
    };
    let field = |k: &str| json.get(k).and_then(|x| x.as_str());
    let (Some(token), Some(expires)) = (field("accessToken"), field("expiresAt")) else {
        return Err(not_a_token());
    };
    let (token, expires) = (token.to_owned(), expiry(expires)?);
    Ok(Cached {
        json,
        token,
        expires,
    })
}

/// The `CreateToken` body that refreshes the cached token, if the cache has what it takes (a
/// refresh token and a client registration that has not expired).
fn refresh_request(
    json: &serde_json::Map<String, serde_json::Value>,
    now: SystemTime,
) -> Option<String> {
    let field = |k: &str| json.get(k).and_then(|x| x.as_str());
    let registered_until = field("registrationExpiresAt").and_then(|t| expiry(t).ok());
    if registered_until.is_some_and(|t| t <= now) {
        return None;
    }
    let body = serde_json::json!({
        "grantType": "refresh_token",
        "clientId": field("clientId")?,
        "clientSecret": field("clientSecret")?,
        "refreshToken": field("refreshToken")?,
    });
    Some(body.to_string())
}

/// The cache's JSON updated with `CreateToken`'s answer (`accessToken`, `expiresIn` seconds,
/// perhaps a new `refreshToken`), and the new access token.
fn refreshed(
    mut json: serde_json::Map<String, serde_json::Value>,
    answer: &[u8],
    now: SystemTime,
) -> Result<(serde_json::Map<String, serde_json::Value>, String), ClientError> {
    let v: serde_json::Value = serde_json::from_slice(answer)
        .map_err(|e| ClientError::Response(format!("the SSO OIDC answer is not JSON: {e}")))?;
    let (Some(token), Some(seconds)) = (
        v.get("accessToken").and_then(|x| x.as_str()),
        v.get("expiresIn").and_then(serde_json::Value::as_u64),
    ) else {
        return Err(ClientError::Response(
            "the SSO OIDC answer lacks accessToken or expiresIn".into(),
        ));
    };
    let expires = rfc3339(now + Duration::from_secs(seconds))?;
    json.insert("accessToken".into(), token.into());
    json.insert("expiresAt".into(), expires.into());
    if let Some(r) = v.get("refreshToken").and_then(|x| x.as_str()) {
        json.insert("refreshToken".into(), r.into());
    }
    Ok((json, token.to_owned()))
}

/// Replaces the cache file whole (a temporary file renamed over it), readable by its owner only.
fn write_cache(
    path: &Path,
    json: &serde_json::Map<String, serde_json::Value>,
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(
        serde_json::Value::Object(json.clone())
            .to_string()
            .as_bytes(),
    )?;
    std::fs::rename(&tmp, path)
}

/// `2026-11-22T12:00:00Z`, the form the AWS CLI writes.
fn rfc3339(t: SystemTime) -> Result<String, ClientError> {
    let a = SigningTime::from_system_time(t)
        .map_err(|e| ClientError::Response(e.to_string()))?
        .amz_date(); // 20261122T120000Z
    Ok(format!(
        "{}-{}-{}T{}:{}:{}Z",
        &a[0..4],
        &a[4..6],
        &a[6..8],
        &a[9..11],
        &a[11..13],
        &a[13..15]
    ))
}

/// The portal's `GetRoleCredentials` answer: `{"roleCredentials": {"accessKeyId",
/// "secretAccessKey", "sessionToken", "expiration" (Unix milliseconds)}}`.
fn role_credentials(body: &[u8]) -> Result<Expiring, ClientError> {
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
    fn cache_files_that_hold_no_token_say_to_log_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let login = "aws sso login --profile dev";
        let err = read_cache(&path, login).err().unwrap();
        assert!(err.to_string().contains(login), "{err}");
        std::fs::write(&path, r#"{"accessToken":"tok"}"#).unwrap();
        let err = read_cache(&path, login).err().unwrap();
        assert!(err.to_string().contains(login), "{err}");
        std::fs::write(
            &path,
            r#"{"accessToken":"tok","expiresAt":"2026-11-22T12:00:00Z"}"#,
        )
        .unwrap();
        let c = read_cache(&path, login).unwrap();
        assert_eq!(c.token, "tok");
        assert_eq!(
            c.expires,
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_348_800)
        );
    }

    #[test]
    fn a_refresh_needs_the_registration_and_keeps_the_other_fields() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_348_800);
        let json = |registered: &str| match serde_json::from_str(&format!(
            r#"{{"startUrl":"u","accessToken":"old","expiresAt":"2026-11-22T12:00:00Z","clientId":"c","clientSecret":"cs","refreshToken":"r","registrationExpiresAt":"{registered}"}}"#
        )) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => unreachable!(),
        };
        let body = refresh_request(&json("2027-01-01T00:00:00Z"), now).unwrap();
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["grantType"], "refresh_token");
        assert_eq!(
            (v["clientId"].as_str(), v["refreshToken"].as_str()),
            (Some("c"), Some("r"))
        );
        assert!(refresh_request(&json("2026-01-01T00:00:00Z"), now).is_none());
        let (updated, token) = refreshed(
            json("2027-01-01T00:00:00Z"),
            br#"{"accessToken":"new","expiresIn":3600,"refreshToken":"r2","tokenType":"Bearer"}"#,
            now,
        )
        .unwrap();
        assert_eq!(token, "new");
        assert_eq!(updated["expiresAt"], "2026-11-22T13:00:00Z");
        assert_eq!(
            (
                updated["refreshToken"].as_str(),
                updated["startUrl"].as_str()
            ),
            (Some("r2"), Some("u"))
        );
        assert!(refreshed(json("x"), b"{}", now).is_err());
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
