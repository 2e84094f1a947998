//! The signer of a client's current credentials, fetched again before they expire.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use slipstream_sign::{Credentials, Settings, Signer};

use super::CredentialSource;
use crate::transport::Http;
use crate::ClientError;

/// Refresh this long before expiry, so no request is signed with credentials about to lapse.
const REFRESH_BEFORE: Duration = Duration::from_secs(5 * 60);

/// The current signer of a client. Fixed credentials give one signer for the client's life (no
/// lock on the request path); others are fetched on first use and again before they expire.
pub(crate) enum CredentialCache {
    Fixed(Arc<Signer>),
    /// No credentials: the client sends its requests unsigned ([`CredentialSource::Anonymous`]).
    Unsigned,
    Refreshing {
        /// Boxed: the SSO variant is large, and fixed credentials are the common case.
        source: Box<CredentialSource>,
        scope: Scope,
        current: tokio::sync::Mutex<Option<(Arc<Signer>, Option<SystemTime>)>>,
    },
}

/// Where requests are signed for: a region (SigV4), or a region set (SigV4A).
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    pub(crate) region: String,
    pub(crate) region_set: Option<String>,
}

/// The signer of S3 requests for `region` (SigV4), or for `region_set` when there is one
/// (SigV4A: the ECDSA key derived now, once per set of credentials; each request then costs one
/// ECDSA signature, 15-18 us, instead of an HMAC). The client's, and `slipstream bench`'s.
pub fn request_signer(
    credentials: Credentials,
    region: &str,
    region_set: Option<&str>,
) -> Result<Signer, slipstream_sign::Error> {
    match region_set {
        None => Signer::new(credentials, region, "s3", Settings::S3),
        Some(set) => Signer::new_v4a(credentials, set, "s3", Settings::S3),
    }
}

fn s3_signer(credentials: Credentials, scope: &Scope) -> Result<Arc<Signer>, ClientError> {
    request_signer(credentials, &scope.region, scope.region_set.as_deref())
        .map(Arc::new)
        .map_err(|e| ClientError::Request(e.to_string()))
}

impl CredentialCache {
    /// For fixed credentials, fails now rather than at the first request on a region the signer
    /// cannot use.
    pub(crate) fn new(source: CredentialSource, scope: Scope) -> Result<Self, ClientError> {
        Ok(match source {
            CredentialSource::Static(c) => CredentialCache::Fixed(s3_signer(c, &scope)?),
            CredentialSource::Anonymous => CredentialCache::Unsigned,
            source => CredentialCache::Refreshing {
                source: Box::new(source),
                scope,
                current: tokio::sync::Mutex::new(None),
            },
        })
    }

    /// Whether requests go unsigned (no credentials at all).
    pub(crate) fn unsigned(&self) -> bool {
        matches!(self, CredentialCache::Unsigned)
    }

    /// A signer with valid credentials: the fixed one, the cached one, or one with freshly
    /// fetched credentials (the lock makes concurrent callers wait for one fetch instead of each
    /// fetching).
    pub(crate) async fn signer(&self, http: &Http) -> Result<Arc<Signer>, ClientError> {
        let (source, scope, current) = match self {
            CredentialCache::Fixed(signer) => return Ok(Arc::clone(signer)),
            CredentialCache::Unsigned => return Err(super::unsigned()),
            CredentialCache::Refreshing {
                source,
                scope,
                current,
            } => (source, scope, current),
        };
        let mut current = current.lock().await;
        if let Some(signer) = fresh(&current) {
            return Ok(signer);
        }
        let fetched = source.fetch(http).await?;
        let signer = s3_signer(fetched.credentials, scope)?;
        *current = Some((Arc::clone(&signer), fetched.expires));
        Ok(signer)
    }

    /// The signer now, without waiting: `None` when a fetch is due or under way (then
    /// [`CredentialCache::signer`] waits for it) and for unsigned requests.
    pub(crate) fn signer_now(&self) -> Option<Arc<Signer>> {
        match self {
            CredentialCache::Fixed(signer) => Some(Arc::clone(signer)),
            CredentialCache::Unsigned => None,
            CredentialCache::Refreshing { current, .. } => fresh(&*current.try_lock().ok()?),
        }
    }
}

/// The cached signer while its credentials are more than [`REFRESH_BEFORE`] from expiry.
fn fresh(current: &Option<(Arc<Signer>, Option<SystemTime>)>) -> Option<Arc<Signer>> {
    let (signer, expires) = current.as_ref()?;
    let fresh = match expires {
        None => true,
        Some(e) => e
            .duration_since(SystemTime::now())
            .is_ok_and(|left| left > REFRESH_BEFORE),
    };
    fresh.then(|| Arc::clone(signer))
}

/// The signer of a set of credentials that may expire, for code that builds and sends its own
/// requests: the gateway signs what it forwards with its origin credentials. Refreshes as the
/// S3 client does (five minutes before expiry, one fetch however many callers wait), over a
/// small pool of its own for the credential endpoints.
pub struct RefreshingSigner {
    cache: CredentialCache,
    http: Http,
}

impl std::fmt::Debug for RefreshingSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefreshingSigner").finish_non_exhaustive()
    }
}

impl RefreshingSigner {
    /// Signs for `region` (SigV4, service `s3`) with the credentials `source` gives.
    pub fn new(source: CredentialSource, region: &str) -> Result<Self, ClientError> {
        let scope = Scope {
            region: region.to_owned(),
            region_set: None,
        };
        let cache = CredentialCache::new(source, scope)?;
        let http = crate::transport::http_client(&crate::ClientOptions::default(), None, None)?;
        Ok(Self { cache, http })
    }

    /// A signer with valid credentials (fetched first if they are due).
    pub async fn signer(&self) -> Result<Arc<Signer>, ClientError> {
        self.cache.signer(&self.http).await
    }
}
