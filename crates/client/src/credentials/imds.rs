//! EC2 instance metadata, IMDSv2: a session token first, then the instance role's credentials.

use hyper::Method;

use super::json::json_credentials;
use super::{Expiring, METADATA_TIMEOUT};
use crate::transport::{get, Http};
use crate::ClientError;

/// The credentials of the instance's role, from the metadata service at `endpoint`.
pub(super) async fn fetch(http: &Http, endpoint: &str) -> Result<Expiring, ClientError> {
    let base = endpoint.trim_end_matches('/');
    let session = get(
        http,
        Method::PUT,
        &format!("{base}/latest/api/token"),
        &[("x-aws-ec2-metadata-token-ttl-seconds", "21600".into())],
        METADATA_TIMEOUT,
    )
    .await?;
    let session = String::from_utf8_lossy(&session).trim().to_owned();
    let auth = [("x-aws-ec2-metadata-token", session)];
    let roles_url = format!("{base}/latest/meta-data/iam/security-credentials/");
    let roles = get(http, Method::GET, &roles_url, &auth, METADATA_TIMEOUT).await?;
    let role = String::from_utf8_lossy(&roles)
        .lines()
        .next()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ClientError::Response("the instance has no IAM role".into()))?;
    let url = format!("{roles_url}{role}");
    let body = get(http, Method::GET, &url, &auth, METADATA_TIMEOUT).await?;
    json_credentials(&body)
}
