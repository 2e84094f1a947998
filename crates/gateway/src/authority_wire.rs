//! What an authority and its edges say to each other, as JSON over HTTP/2 with a bearer token.
//!
//! An edge asks for one access key at a time and receives only what verifying needs: per-day
//! SigV4 signing keys for its region, the SigV4A public key, the session token's SHA-256 and
//! expiry, the policy. Never the secret: a per-day key signs for one day, one region and S3 only,
//! and a public key signs nothing. The edge follows a change stream (revisions) to drop what it
//! holds the moment a key is disabled, deleted or given another policy.
//!
//! - `GET /v1/keys/{access_key_id}?region=R`: 200 [`KeyAnswer`]; 404 [`Refusal`] for a key that
//!   is unknown or disabled (one answer for both: an edge treats them alike).
//! - `GET /v1/changes?after=N&wait=S`: [`Changes`] after revision `N`, waiting up to `S`
//!   seconds (at most 30) for one; without `after`, the current revision at once.
//! - 401 [`Refusal`] without the edge's token.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Days before today an answer carries signing keys for: presigned URLs live up to 7 days.
pub const DAYS_BACK: i64 = 7;
/// Days after today: a client whose clock is ahead signs for tomorrow around midnight.
pub const DAYS_AHEAD: i64 = 1;
/// The longest a change request waits for a change, in seconds.
pub const MAX_WAIT_SECONDS: u64 = 30;

/// One access key, as an edge needs it.
#[derive(Serialize, Deserialize)]
pub struct KeyAnswer {
    /// The access key id asked for.
    pub access_key_id: String,
    /// The revision of the key's last change.
    pub revision: u64,
    /// The region the signing keys are for (the edge's).
    pub region: String,
    /// SigV4 signing keys (hex) for S3 in `region`, by date stamp (`YYYYMMDD`), from
    /// [`DAYS_BACK`] days before the authority's today to [`DAYS_AHEAD`] after.
    pub signing_keys: BTreeMap<String, String>,
    /// The SigV4A public key: the uncompressed P-256 point, hex.
    pub sigv4a_public_key: String,
    /// Session credentials: what the request's token must hash to, and until when.
    pub session: Option<SessionAnswer>,
    /// The key's IAM-style policy document.
    pub policy: serde_json::Value,
}

/// A session token as the edge checks it.
#[derive(Serialize, Deserialize)]
pub struct SessionAnswer {
    /// SHA-256 of the token, hex.
    pub token_sha256: String,
    /// When the session credentials stop working (unix seconds); `None`: never.
    pub expires: Option<i64>,
}

/// What changed since a revision.
#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub struct Changes {
    /// The revision the edge has seen once it applied this answer.
    pub revision: u64,
    /// Access keys changed after the revision asked for (each once).
    pub changed: Vec<String>,
    /// The changes asked for are no longer kept (or the authority's store was replaced): drop
    /// everything held and fetch again.
    pub resync: bool,
}

/// Why the authority refused (401, 404, 400, 503).
#[derive(Serialize, Deserialize, Debug)]
pub struct Refusal {
    /// `NoSuchKey`, `Unauthorized`, `BadRequest`, `Unavailable`.
    pub error: String,
    /// A sentence for the operator.
    pub message: String,
}

impl std::fmt::Debug for KeyAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyAnswer")
            .field("access_key_id", &self.access_key_id)
            .field("revision", &self.revision)
            .field("region", &self.region)
            .field("days", &self.signing_keys.len())
            .finish_non_exhaustive()
    }
}

/// Whether `id` can be an access key id: 16 to 128 ASCII letters and digits. Anything else is
/// unknown without asking the authority (a request cannot make the edge ask for arbitrary text).
pub fn plausible_access_key_id(id: &str) -> bool {
    (16..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric())
}
