//! Web identity: STS `AssumeRoleWithWebIdentity` with an OIDC token from a file (EKS, GitHub
//! Actions). The token file is read at every fetch, since its issuer rotates it.

use std::path::Path;
use std::time::Duration;

use hyper::Method;
use slipstream_sign::encode::encode_query;
use slipstream_sign::Credentials;

use super::json::expiry;
use super::Expiring;
use crate::transport::{request, Http};
use crate::ClientError;

/// Assumes `role_arn` with the token in `token_file`.
pub(super) async fn fetch(
    http: &Http,
    token_file: &Path,
    role_arn: &str,
    session_name: &str,
    sts_endpoint: &str,
) -> Result<Expiring, ClientError> {
    let token = std::fs::read_to_string(token_file)
        .map_err(|e| ClientError::Request(format!("{}: {e}", token_file.display())))?;
    // A form in the body, as botocore sends it: the token stays out of the URL, which errors
    // name and proxies log.
    let form = format!(
        "Action=AssumeRoleWithWebIdentity&RoleArn={}&RoleSessionName={}&Version=2011-06-15&WebIdentityToken={}",
        encode_query(role_arn),
        encode_query(session_name),
        encode_query(token.trim())
    );
    let url = format!("{}/", sts_endpoint.trim_end_matches('/'));
    let headers = [(
        "content-type",
        "application/x-www-form-urlencoded; charset=utf-8".to_owned(),
    )];
    let timeout = Duration::from_secs(30);
    let body = request(http, Method::POST, &url, &headers, form.into(), timeout).await?;
    sts_credentials(&body)
}

/// `AssumeRoleWithWebIdentityResponse/…/Credentials`.
fn sts_credentials(body: &[u8]) -> Result<Expiring, ClientError> {
    let (mut id, mut secret, mut token, mut expiration) = (None, None, None, None);
    crate::xml::walk(body, |path, text| {
        let field = match path.rsplit_once('/') {
            Some((parent, name)) if parent.ends_with("/Credentials") => name,
            _ => return,
        };
        match field {
            "AccessKeyId" => id = text,
            "SecretAccessKey" => secret = text,
            "SessionToken" => token = text,
            "Expiration" => expiration = text,
            _ => {}
        }
    })?;
    let (Some(id), Some(secret), Some(token)) = (id, secret, token) else {
        return Err(ClientError::Response(
            "STS answered without AccessKeyId, SecretAccessKey and SessionToken".into(),
        ));
    };
    let credentials = Credentials::new(id, secret, Some(token))
        .map_err(|e| ClientError::Response(e.to_string()))?;
    let expires = expiration.map(|e| expiry(&e)).transpose()?;
    Ok(Expiring {
        credentials,
        expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_sts_answer() {
        let x = sts_credentials(b"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA2</AccessKeyId><SecretAccessKey>s2</SecretAccessKey><SessionToken>t2</SessionToken><Expiration>2026-11-22T12:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>").unwrap();
        assert_eq!(x.credentials.access_key_id(), "ASIA2");
        assert!(sts_credentials(b"<Error/>").is_err());
    }
}
