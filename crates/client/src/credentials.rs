//! Where credentials come from beyond the environment and the shared files: web identity (STS
//! `AssumeRoleWithWebIdentity`, as on EKS), the ECS container endpoint, EC2 instance metadata
//! (IMDSv2), a profile's `credential_process`, and the caller's own provider. These credentials
//! expire, so [`CredentialCache`] keeps the current ones and fetches new ones five minutes before
//! they expire, once, however many requests are waiting.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::{Method, Request};
use slipstream_sign::encode::encode_query;
use slipstream_sign::{Credentials, Settings, Signer, SigningTime};

use crate::activity::Sending;
use crate::ClientError;

pub(crate) use crate::http::Http;

/// Refresh this long before expiry, so no request is signed with credentials about to lapse.
const REFRESH_BEFORE: Duration = Duration::from_secs(5 * 60);
/// Metadata endpoints are local: give up fast when not on EC2/ECS (as the AWS CLI does).
const METADATA_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a client's credentials come from. Its `Debug` shows where, never a secret: static
/// credentials print their own redacted form and the container token prints as `<redacted>`.
#[derive(Clone)]
#[non_exhaustive]
pub enum CredentialSource {
    /// Fixed credentials: environment variables, shared files, or given by the caller.
    Static(Credentials),
    /// STS `AssumeRoleWithWebIdentity` with the token in `token_file` (re-read at each refresh).
    WebIdentity {
        /// The OIDC token's file (`AWS_WEB_IDENTITY_TOKEN_FILE`).
        token_file: PathBuf,
        /// The role to assume (`AWS_ROLE_ARN`).
        role_arn: String,
        /// `AWS_ROLE_SESSION_NAME`, or a generated one.
        session_name: String,
        /// The STS endpoint, `https://sts.REGION.amazonaws.com` unless overridden.
        sts_endpoint: String,
    },
    /// The ECS (or any container) credential endpoint.
    Container {
        /// `http://169.254.170.2` + `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`, or the full URI.
        url: String,
        /// `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
        token: Option<String>,
        /// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (re-read at each refresh).
        token_file: Option<PathBuf>,
    },
    /// EC2 instance metadata, IMDSv2 (session token first).
    InstanceMetadata {
        /// `http://169.254.169.254` unless `AWS_EC2_METADATA_SERVICE_ENDPOINT` says otherwise.
        endpoint: String,
    },
    /// An IAM Identity Center (SSO) profile: the portal's role credentials for the token that
    /// `aws sso login` cached (re-read at each refresh, so a new login is picked up).
    Sso {
        /// The cached token: `~/.aws/sso/cache/SHA1.json`.
        token_file: PathBuf,
        /// `https://portal.sso.REGION.amazonaws.com` unless `AWS_ENDPOINT_URL_SSO` says otherwise.
        portal: String,
        /// `sso_account_id`.
        account_id: String,
        /// `sso_role_name`.
        role_name: String,
        /// The command that logs in again, for the error when the token has expired.
        login: String,
        /// For an `sso-session`: the SSO OIDC endpoint that refreshes the token
        /// (`https://oidc.REGION.amazonaws.com`, or `AWS_ENDPOINT_URL_SSO_OIDC`). Legacy
        /// profiles cannot refresh.
        oidc: Option<String>,
    },
    /// A profile's `credential_process`: a command that prints the credentials as JSON.
    Process {
        /// The command line, split as a POSIX shell would (no shell runs it, as in botocore).
        command: String,
    },
    /// The caller's own code, asked again before the credentials it gave expire (Python's
    /// `Client.from_boto3` hands botocore's refreshing credentials over this way).
    Provider(Arc<dyn ProvideCredentials>),
}

impl std::fmt::Debug for CredentialSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CredentialSource::Static(c) => f.debug_tuple("Static").field(c).finish(),
            CredentialSource::WebIdentity {
                token_file,
                role_arn,
                session_name,
                sts_endpoint,
            } => f
                .debug_struct("WebIdentity")
                .field("token_file", token_file)
                .field("role_arn", role_arn)
                .field("session_name", session_name)
                .field("sts_endpoint", sts_endpoint)
                .finish(),
            CredentialSource::Container {
                url,
                token,
                token_file,
            } => f
                .debug_struct("Container")
                .field("url", url)
                .field("token", &token.as_ref().map(|_| "<redacted>"))
                .field("token_file", token_file)
                .finish(),
            CredentialSource::InstanceMetadata { endpoint } => f
                .debug_struct("InstanceMetadata")
                .field("endpoint", endpoint)
                .finish(),
            CredentialSource::Sso {
                token_file,
                portal,
                account_id,
                role_name,
                login,
                oidc,
            } => f
                .debug_struct("Sso")
                .field("token_file", token_file)
                .field("portal", portal)
                .field("account_id", account_id)
                .field("role_name", role_name)
                .field("login", login)
                .field("oidc", oidc)
                .finish(),
            CredentialSource::Process { command } => {
                f.debug_struct("Process").field("command", command).finish()
            }
            CredentialSource::Provider(p) => f.debug_tuple("Provider").field(p).finish(),
        }
    }
}

/// Credentials from the caller's code. `credentials` may block (it runs on a blocking thread)
/// and is called again five minutes before the `expires` it returned.
pub trait ProvideCredentials: Send + Sync + std::fmt::Debug {
    /// The current credentials. Must not return secrets in its error message.
    fn credentials(&self) -> Result<Expiring, ClientError>;
}

/// Credentials and when they stop working.
#[derive(Clone, Debug)]
pub struct Expiring {
    /// The credentials.
    pub credentials: Credentials,
    /// `None` for credentials that do not expire.
    pub expires: Option<SystemTime>,
}

impl CredentialSource {
    /// The credentials, if they are fixed ones.
    pub fn as_static(&self) -> Option<&Credentials> {
        match self {
            CredentialSource::Static(c) => Some(c),
            _ => None,
        }
    }

    /// A short name for messages (never a secret).
    pub fn describe(&self) -> &'static str {
        match self {
            CredentialSource::Static(_) => "static credentials",
            CredentialSource::WebIdentity { .. } => "web identity (STS AssumeRoleWithWebIdentity)",
            CredentialSource::Container { .. } => "the container credential endpoint",
            CredentialSource::InstanceMetadata { .. } => "EC2 instance metadata (IMDSv2)",
            CredentialSource::Sso { .. } => "the profile's SSO session (IAM Identity Center)",
            CredentialSource::Process { .. } => "the profile's credential_process",
            CredentialSource::Provider(_) => "the caller's credential provider",
        }
    }

    /// Fetches credentials now, from synchronous code (the CLI's `presign`): a runtime and a
    /// connection of its own, for this one call.
    pub fn fetch_blocking(&self) -> Result<Expiring, ClientError> {
        if let CredentialSource::Static(c) = self {
            return Ok(Expiring {
                credentials: c.clone(),
                expires: None,
            });
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ClientError::Io)?;
        runtime.block_on(async {
            let http = crate::http::http_client(&crate::ClientOptions::default(), None)?;
            self.fetch(&http).await
        })
    }

    /// Fetches credentials now.
    pub(crate) async fn fetch(&self, http: &Http) -> Result<Expiring, ClientError> {
        let failed = |e: ClientError| {
            ClientError::Credentials(format!("no credentials from {}: {e}", self.describe()))
        };
        match self {
            CredentialSource::Static(c) => Ok(Expiring {
                credentials: c.clone(),
                expires: None,
            }),
            CredentialSource::WebIdentity {
                token_file,
                role_arn,
                session_name,
                sts_endpoint,
            } => {
                let token = std::fs::read_to_string(token_file).map_err(|e| {
                    failed(ClientError::Request(format!(
                        "{}: {e}",
                        token_file.display()
                    )))
                })?;
                let url = format!(
                    "{}/?Action=AssumeRoleWithWebIdentity&RoleArn={}&RoleSessionName={}&Version=2011-06-15&WebIdentityToken={}",
                    sts_endpoint.trim_end_matches('/'),
                    encode_query(role_arn),
                    encode_query(session_name),
                    encode_query(token.trim())
                );
                let body = get(http, Method::GET, &url, &[], Duration::from_secs(30))
                    .await
                    .map_err(failed)?;
                sts_credentials(&body).map_err(failed)
            }
            CredentialSource::Container {
                url,
                token,
                token_file,
            } => {
                let token = match (token_file, token) {
                    (Some(f), _) => Some(std::fs::read_to_string(f).map_err(|e| {
                        failed(ClientError::Request(format!("{}: {e}", f.display())))
                    })?),
                    (None, t) => t.clone(),
                };
                let headers: Vec<(&str, String)> = token
                    .map(|t| ("authorization", t.trim().to_owned()))
                    .into_iter()
                    .collect();
                let body = get(http, Method::GET, url, &headers, METADATA_TIMEOUT)
                    .await
                    .map_err(failed)?;
                json_credentials(&body).map_err(failed)
            }
            CredentialSource::InstanceMetadata { endpoint } => {
                let base = endpoint.trim_end_matches('/');
                let session = get(
                    http,
                    Method::PUT,
                    &format!("{base}/latest/api/token"),
                    &[("x-aws-ec2-metadata-token-ttl-seconds", "21600".into())],
                    METADATA_TIMEOUT,
                )
                .await
                .map_err(failed)?;
                let session = String::from_utf8_lossy(&session).trim().to_owned();
                let auth = [("x-aws-ec2-metadata-token", session)];
                let roles_url = format!("{base}/latest/meta-data/iam/security-credentials/");
                let roles = get(http, Method::GET, &roles_url, &auth, METADATA_TIMEOUT)
                    .await
                    .map_err(failed)?;
                let role = String::from_utf8_lossy(&roles)
                    .lines()
                    .next()
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        failed(ClientError::Response("the instance has no IAM role".into()))
                    })?;
                let body = get(
                    http,
                    Method::GET,
                    &format!("{roles_url}{role}"),
                    &auth,
                    METADATA_TIMEOUT,
                )
                .await
                .map_err(failed)?;
                json_credentials(&body).map_err(failed)
            }
            CredentialSource::Sso {
                token_file,
                portal,
                account_id,
                role_name,
                login,
                oidc,
            } => {
                let token = crate::sso::access_token(http, token_file, oidc.as_deref(), login)
                    .await
                    .map_err(failed)?;
                let url = format!(
                    "{}/federation/credentials?account_id={}&role_name={}",
                    portal.trim_end_matches('/'),
                    encode_query(account_id),
                    encode_query(role_name)
                );
                let auth = [("x-amz-sso_bearer_token", token)];
                let body = get(http, Method::GET, &url, &auth, Duration::from_secs(30))
                    .await
                    .map_err(failed)?;
                crate::sso::role_credentials(&body).map_err(failed)
            }
            CredentialSource::Process { command } => {
                let command = command.clone();
                blocking(move || crate::process::run(&command))
                    .await
                    .map_err(failed)
            }
            CredentialSource::Provider(provider) => {
                let provider = Arc::clone(provider);
                blocking(move || provider.credentials())
                    .await
                    .map_err(failed)
            }
        }
    }
}

/// Runs `f` where blocking is allowed, off the runtime's I/O threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ClientError> + Send + 'static,
) -> Result<T, ClientError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ClientError::Credentials(format!("the credential fetch stopped: {e}")))?
}

/// One request without SigV4 and without a body; the body of a 2xx answer.
async fn get(
    http: &Http,
    method: Method,
    url: &str,
    headers: &[(&str, String)],
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    request(http, method, url, headers, Bytes::new(), timeout).await
}

/// One request without SigV4; the body of a 2xx answer. Error messages name the URL and the
/// status, never the request's headers or body (which may hold tokens).
pub(crate) async fn request(
    http: &Http,
    method: Method,
    url: &str,
    headers: &[(&str, String)],
    body: Bytes,
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    let mut builder = Request::builder().method(method).uri(url);
    for (n, v) in headers {
        builder = builder.header(*n, v.as_str());
    }
    let request = builder
        .body(Sending::from(body))
        .map_err(|e| ClientError::Request(e.to_string()))?;
    let response = tokio::time::timeout(timeout, http.request(request))
        .await
        .map_err(|_| ClientError::Network(format!("{url} did not answer within {timeout:?}")))?
        .map_err(|e| ClientError::Network(format!("{url}: {e}")))?;
    let status = response.status();
    let body = tokio::time::timeout(
        timeout,
        Limited::new(response.into_body(), 1 << 20).collect(),
    )
    .await
    .map_err(|_| ClientError::Network(format!("{url}: the body did not arrive")))?
    .map_err(|e| ClientError::Network(format!("{url}: {e}")))?
    .to_bytes();
    if !status.is_success() {
        let code = crate::xml::error(&body)
            .map(|(c, _)| format!(" ({c})"))
            .unwrap_or_default();
        return Err(ClientError::Response(format!(
            "{url} answered {status}{code}"
        )));
    }
    Ok(body)
}

pub(crate) fn expiry(text: &str) -> Result<SystemTime, ClientError> {
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
fn json_credentials(body: &[u8]) -> Result<Expiring, ClientError> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ClientError::Response(format!("the credentials are not JSON: {e}")))?;
    credentials_in(&v, "Token")
}

/// The credentials in a JSON object; the session token is `token_field` (`Token` from
/// ECS/IMDS, `SessionToken` from a `credential_process`).
pub(crate) fn credentials_in(
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

/// The current signer of a client. Fixed credentials give one signer for the client's life (no
/// lock on the request path); others are fetched on first use and again before they expire.
pub(crate) enum CredentialCache {
    Fixed(Arc<Signer>),
    Refreshing {
        /// Boxed: the SSO variant is large, and fixed credentials are the common case.
        source: Box<CredentialSource>,
        region: String,
        current: tokio::sync::Mutex<Option<(Arc<Signer>, Option<SystemTime>)>>,
    },
}

fn s3_signer(credentials: Credentials, region: &str) -> Result<Arc<Signer>, ClientError> {
    Signer::new(credentials, region, "s3", Settings::S3)
        .map(Arc::new)
        .map_err(|e| ClientError::Request(e.to_string()))
}

impl CredentialCache {
    /// For fixed credentials, fails now rather than at the first request on a region the signer
    /// cannot use.
    pub(crate) fn new(source: CredentialSource, region: &str) -> Result<Self, ClientError> {
        Ok(match source {
            CredentialSource::Static(c) => CredentialCache::Fixed(s3_signer(c, region)?),
            source => CredentialCache::Refreshing {
                source: Box::new(source),
                region: region.to_owned(),
                current: tokio::sync::Mutex::new(None),
            },
        })
    }

    /// A signer with valid credentials: the fixed one, the cached one, or one with freshly
    /// fetched credentials (the lock makes concurrent callers wait for one fetch instead of each
    /// fetching).
    pub(crate) async fn signer(&self, http: &Http) -> Result<Arc<Signer>, ClientError> {
        let (source, region, current) = match self {
            CredentialCache::Fixed(signer) => return Ok(Arc::clone(signer)),
            CredentialCache::Refreshing {
                source,
                region,
                current,
            } => (source, region, current),
        };
        let mut current = current.lock().await;
        if let Some((signer, expires)) = current.as_ref() {
            let fresh = match expires {
                None => true,
                Some(e) => e
                    .duration_since(SystemTime::now())
                    .is_ok_and(|left| left > REFRESH_BEFORE),
            };
            if fresh {
                return Ok(Arc::clone(signer));
            }
        }
        let fetched = source.fetch(http).await?;
        let signer = s3_signer(fetched.credentials, region)?;
        *current = Some((Arc::clone(&signer), fetched.expires));
        Ok(signer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_answer_forms() {
        let j = json_credentials(br#"{"Code":"Success","AccessKeyId":"ASIA1","SecretAccessKey":"s","Token":"t","Expiration":"2026-11-22T12:00:00Z"}"#).unwrap();
        assert_eq!(j.credentials.access_key_id(), "ASIA1");
        assert_eq!(j.credentials.session_token(), Some("t"));
        assert!(j.expires.is_some());
        assert!(json_credentials(b"{}").is_err());
        assert!(json_credentials(b"not json").is_err());
        let x = sts_credentials(b"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA2</AccessKeyId><SecretAccessKey>s2</SecretAccessKey><SessionToken>t2</SessionToken><Expiration>2026-11-22T12:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>").unwrap();
        assert_eq!(x.credentials.access_key_id(), "ASIA2");
        assert!(sts_credentials(b"<Error/>").is_err());
    }
}
