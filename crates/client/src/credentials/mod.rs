//! Where credentials come from beyond the environment and the shared files: web identity (STS
//! `AssumeRoleWithWebIdentity`, as on EKS), the ECS container endpoint, EC2 instance metadata
//! (IMDSv2), an SSO profile, a profile's `credential_process`, and the caller's own provider,
//! one file each; `json.rs` holds what their answers share. These credentials expire, so the
//! client's `CredentialCache` (`cache.rs`) keeps the current ones and fetches new ones five
//! minutes before they expire, once, however many requests are waiting.
//!
//! This layer sits on the transport (`transport.rs`: plain requests over the pool) and under the
//! S3 client, which signs with what it returns. Which source applies is decided by the
//! configuration chain (`config/`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use slipstream_sign::Credentials;

use crate::transport::Http;
use crate::ClientError;

mod cache;
mod container;
mod imds;
mod json;
mod process;
pub(crate) mod sso;
mod web_identity;

pub use cache::{request_signer, RefreshingSigner};
pub(crate) use cache::{CredentialCache, Scope};

/// Metadata endpoints are local: give up fast when not on EC2/ECS (as the AWS CLI does).
const METADATA_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

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
    /// None: requests go unsigned, as the AWS CLI's `--no-sign-request` and botocore's
    /// `UNSIGNED` send them, for public buckets (open datasets), which refuse nothing for
    /// want of a signature but may refuse one made with credentials they do not know.
    Anonymous,
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
            CredentialSource::Anonymous => f.write_str("Anonymous"),
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
            CredentialSource::Anonymous => "--no-sign-request",
        }
    }

    /// Fetches credentials now, from synchronous code (the CLI's `presign`): a runtime and a
    /// connection of its own, for this one call, trusting `ca_bundle` and through `proxies` as
    /// a client's own fetches would (an SSO portal or STS behind a corporate proxy).
    pub fn fetch_blocking(
        &self,
        ca_bundle: Option<&std::path::Path>,
        proxies: Option<&crate::Proxies>,
    ) -> Result<Expiring, ClientError> {
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
            let options = crate::ClientOptions::default();
            let http = crate::transport::http_client(&options, ca_bundle, proxies)?;
            self.fetch(&http).await
        })
    }

    /// Fetches credentials now, over `http` (the client's pool, through its proxies; the
    /// container endpoint always directly); an error names the source.
    pub(crate) async fn fetch(&self, http: &Http) -> Result<Expiring, ClientError> {
        let fetched = match self {
            CredentialSource::Static(c) => Ok(Expiring {
                credentials: c.clone(),
                expires: None,
            }),
            CredentialSource::WebIdentity {
                token_file,
                role_arn,
                session_name,
                sts_endpoint,
            } => web_identity::fetch(http, token_file, role_arn, session_name, sts_endpoint).await,
            CredentialSource::Container {
                url,
                token,
                token_file,
            } => {
                // Direct, whatever the proxies say, as botocore fetches it: the endpoint is the
                // task's own (169.254.170.2, localhost), which a proxy outside cannot reach.
                let direct =
                    crate::transport::http_client(&crate::ClientOptions::default(), None, None)?;
                container::fetch(&direct, url, token.as_deref(), token_file.as_deref()).await
            }
            CredentialSource::InstanceMetadata { endpoint } => imds::fetch(http, endpoint).await,
            CredentialSource::Sso {
                token_file,
                portal,
                account_id,
                role_name,
                login,
                oidc,
            } => {
                let role = sso::Role {
                    portal,
                    account_id,
                    role_name,
                };
                sso::fetch(http, token_file, &role, login, oidc.as_deref()).await
            }
            CredentialSource::Process { command } => {
                let command = command.clone();
                blocking(move || process::run(&command)).await
            }
            CredentialSource::Provider(provider) => {
                let provider = Arc::clone(provider);
                blocking(move || provider.credentials()).await
            }
            CredentialSource::Anonymous => return Err(unsigned()),
        };
        fetched.map_err(|e| {
            ClientError::Credentials(format!("no credentials from {}: {e}", self.describe()))
        })
    }
}

/// What asking [`CredentialSource::Anonymous`] for credentials says (a presigned URL, the
/// gateway's origin signer: what cannot go unsigned).
pub(crate) fn unsigned() -> ClientError {
    ClientError::Credentials(
        "no credentials: requests go unsigned (--no-sign-request), and this needs a signature"
            .into(),
    )
}

/// Runs `f` where blocking is allowed, off the runtime's I/O threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ClientError> + Send + 'static,
) -> Result<T, ClientError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ClientError::Credentials(format!("the credential fetch stopped: {e}")))?
}
