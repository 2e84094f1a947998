//! The authority's store: access keys (secrets sealed under the master key, the session
//! token's SHA-256 and expiry, the policy, enabled or not) and a change log whose revision
//! numbers the edges follow. Two backends keep the same rows: SQLite (`sqlite.rs`, one file,
//! the default) and PostgreSQL (`postgres.rs`, for several replicas). This file holds what
//! does not depend on the backend: checking input, sealing and opening secrets, reading the
//! log.

use std::path::PathBuf;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::seal::{random_text, MasterKey};
use crate::AuthorityError;

mod postgres;
mod sqlite;

/// Changes kept; an edge that has seen none of them is told to resync.
const KEEP_CHANGES: i64 = 10_000;
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Where the keys are kept: `--database`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file (created if missing).
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://` or `postgresql://`), and the CA bundle its TLS
    /// certificate is checked against (the Mozilla roots without one).
    Postgres {
        /// The URL, password included if it has one: never shown.
        url: String,
        /// `--database-ca-bundle`.
        ca_bundle: Option<PathBuf>,
    },
}

impl Database {
    /// A `postgres://` or `postgresql://` URL means PostgreSQL; anything else is a SQLite file.
    pub fn parse(database: &str, ca_bundle: Option<PathBuf>) -> Self {
        if database.starts_with("postgres://") || database.starts_with("postgresql://") {
            Self::Postgres {
                url: database.to_owned(),
                ca_bundle,
            }
        } else {
            Self::Sqlite(PathBuf::from(database))
        }
    }

    /// How to name it in messages (a PostgreSQL URL without its user and password).
    pub fn shown(&self) -> String {
        match self {
            Self::Sqlite(path) => path.display().to_string(),
            Self::Postgres { url, .. } => {
                let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
                let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                let rest = rest.split_once('?').map_or(rest, |(before, _)| before);
                format!("{scheme}://{rest}")
            }
        }
    }
}

/// A key to create.
#[derive(Default)]
pub struct NewKey {
    /// The id to give it (16 to 128 letters and digits); `None`: a random `SLIP...` id.
    pub access_key_id: Option<String>,
    /// The secret to give it (importing a key); `None`: 40 random characters.
    pub secret_access_key: Option<String>,
    /// Its policy (checked as the edges will load it).
    pub policy: Value,
    /// Session credentials: a token is made, and the key stops working at this time (unix
    /// seconds). `None`: a long-term key.
    pub session_expires: Option<i64>,
}

/// A key just created: the only time its secret and token are shown.
pub struct Created {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// The session token of session credentials.
    pub session_token: Option<String>,
    /// When session credentials expire (unix seconds).
    pub expires: Option<i64>,
}

impl std::fmt::Debug for Created {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Created")
            .field("access_key_id", &self.access_key_id)
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

/// A key as listed (no secret).
#[derive(Debug)]
pub struct KeyInfo {
    /// The access key id.
    pub access_key_id: String,
    /// Whether edges accept it.
    pub enabled: bool,
    /// When it was created (unix seconds).
    pub created: i64,
    /// Whether it is session credentials, and when they expire.
    pub session: bool,
    /// When session credentials expire (unix seconds).
    pub expires: Option<i64>,
    /// The revision of its last change.
    pub revision: u64,
    /// Its policy.
    pub policy: Value,
}

/// What the server reads to answer an edge.
pub(crate) struct Stored {
    pub(crate) secret: String,
    pub(crate) session_sha256: Option<[u8; 32]>,
    pub(crate) expires: Option<i64>,
    pub(crate) policy: Value,
    pub(crate) revision: u64,
}

/// What changed after a revision.
pub(crate) enum Since {
    /// These keys, up to this revision.
    Changed(u64, Vec<String>),
    /// The log no longer reaches back that far (or the store is another one): resync at this
    /// revision.
    Resync(u64),
}

/// A key's row as both backends keep it.
struct Row {
    access_key_id: String,
    sealed_secret: Vec<u8>,
    session_sha256: Option<Vec<u8>>,
    expires: Option<i64>,
    enabled: bool,
    policy: String,
    created: i64,
    revision: i64,
}

/// A change to one key.
enum Change<'a> {
    Enabled(bool),
    Policy(&'a str),
    Delete,
}

/// The change log after a revision.
struct Log {
    /// The oldest revision kept (0: none).
    oldest: i64,
    /// The latest revision (0: none).
    latest: i64,
    /// The keys changed after it.
    ids: Vec<String>,
}

/// What a backend does; every write logs its change in the same transaction, keeping the last
/// `keep` changes.
trait Backend: Send + Sync {
    /// Inserts a key; `None` if the id exists.
    fn insert(&self, row: &Row, keep: i64) -> Result<Option<i64>, AuthorityError>;
    /// Changes a key; `None` if there is no such key.
    fn change(
        &self,
        id: &str,
        change: Change<'_>,
        keep: i64,
    ) -> Result<Option<i64>, AuthorityError>;
    /// Every key, by id.
    fn rows(&self) -> Result<Vec<Row>, AuthorityError>;
    /// One key, enabled or not.
    fn row(&self, id: &str) -> Result<Option<Row>, AuthorityError>;
    /// The change log after `after`.
    fn log(&self, after: i64) -> Result<Log, AuthorityError>;
    /// The latest revision (0 for a new store).
    fn revision(&self) -> Result<i64, AuthorityError>;
    /// What the server waits on between reads of the revision.
    fn waiter(&self) -> Box<dyn ChangeWaiter>;
}

/// Blocks until the store may have changed, or a while has passed: the server then reads the
/// revision and wakes the edges' change requests if it moved.
pub(crate) trait ChangeWaiter: Send {
    /// Returns after a change was announced or after a short while (at most about a second).
    fn wait(&mut self) -> Woken;
}

/// Why a [`ChangeWaiter`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woken {
    /// A change was announced (PostgreSQL's NOTIFY).
    Told,
    /// Time to read the revision anyway.
    Polled,
}

/// The store.
pub struct Store {
    backend: Box<dyn Backend>,
    master: MasterKey,
    /// Changes kept ([`KEEP_CHANGES`]; fewer in tests).
    keep_changes: i64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

fn revision(r: i64) -> u64 {
    u64::try_from(r).unwrap_or_default()
}

impl Store {
    /// Opens (or creates) the store: a SQLite file in WAL mode, or the tables in a PostgreSQL
    /// database.
    pub fn open(database: &Database, master: MasterKey) -> Result<Self, AuthorityError> {
        let backend: Box<dyn Backend> = match database {
            Database::Sqlite(path) => Box::new(sqlite::Sqlite::open(path)?),
            Database::Postgres { url, ca_bundle } => {
                Box::new(postgres::Postgres::open(url, ca_bundle.as_deref())?)
            }
        };
        Ok(Self {
            backend,
            master,
            keep_changes: KEEP_CHANGES,
        })
    }

    /// Creates a key.
    pub fn create(&self, new: NewKey, now: i64) -> Result<Created, AuthorityError> {
        slipstream_gateway::check_policy(&new.policy).map_err(AuthorityError::Input)?;
        let id = match new.access_key_id {
            Some(id) => id,
            None => format!("SLIP{}", random_text(UPPER_ALNUM, 16)?),
        };
        if !slipstream_gateway::authority_wire::plausible_access_key_id(&id) {
            return Err(AuthorityError::Input(format!(
                "the access key id {id:?} must be 16 to 128 letters and digits"
            )));
        }
        let secret = match new.secret_access_key {
            Some(s) if s.len() >= 16 && s.bytes().all(|b| b.is_ascii_graphic()) => s,
            Some(_) => {
                return Err(AuthorityError::Input(
                    "a secret access key must be at least 16 visible ASCII characters".into(),
                ))
            }
            None => random_text(ALNUM, 40)?,
        };
        if new.session_expires.is_some_and(|e| e <= now) {
            return Err(AuthorityError::Input(
                "the session's expiry is in the past".into(),
            ));
        }
        let token = match new.session_expires {
            Some(_) => Some(random_text(ALNUM, 64)?),
            None => None,
        };
        let row = Row {
            sealed_secret: self.master.seal(&id, &secret)?,
            session_sha256: token
                .as_ref()
                .map(|t| Sha256::digest(t.as_bytes()).to_vec()),
            expires: new.session_expires,
            enabled: true,
            policy: new.policy.to_string(),
            created: now,
            revision: 0,
            access_key_id: id,
        };
        if self.backend.insert(&row, self.keep_changes)?.is_none() {
            return Err(AuthorityError::Input(format!(
                "the access key {} exists",
                row.access_key_id
            )));
        }
        Ok(Created {
            access_key_id: row.access_key_id,
            secret_access_key: secret,
            session_token: token,
            expires: new.session_expires,
        })
    }

    /// Every key, by id.
    pub fn list(&self) -> Result<Vec<KeyInfo>, AuthorityError> {
        Ok(self
            .backend
            .rows()?
            .into_iter()
            .map(|r| KeyInfo {
                enabled: r.enabled,
                created: r.created,
                session: r.session_sha256.is_some(),
                expires: r.expires,
                revision: revision(r.revision),
                policy: serde_json::from_str(&r.policy).unwrap_or(Value::Null),
                access_key_id: r.access_key_id,
            })
            .collect())
    }

    /// Applies `change` to one key; an error if there is no such key.
    fn change(&self, id: &str, change: Change<'_>) -> Result<u64, AuthorityError> {
        match self.backend.change(id, change, self.keep_changes)? {
            Some(r) => Ok(revision(r)),
            None => Err(AuthorityError::Input(format!("no access key {id}"))),
        }
    }

    /// Enables or disables a key; edges refuse a disabled key as unknown.
    pub fn set_enabled(&self, id: &str, enabled: bool) -> Result<u64, AuthorityError> {
        self.change(id, Change::Enabled(enabled))
    }

    /// Replaces a key's policy (checked as the edges will load it).
    pub fn set_policy(&self, id: &str, policy: &Value) -> Result<u64, AuthorityError> {
        slipstream_gateway::check_policy(policy).map_err(AuthorityError::Input)?;
        self.change(id, Change::Policy(&policy.to_string()))
    }

    /// Deletes a key.
    pub fn delete(&self, id: &str) -> Result<u64, AuthorityError> {
        self.change(id, Change::Delete)
    }

    /// An enabled key with its secret opened; `None` if unknown or disabled.
    pub(crate) fn get(&self, id: &str) -> Result<Option<Stored>, AuthorityError> {
        let Some(row) = self.backend.row(id)?.filter(|r| r.enabled) else {
            return Ok(None);
        };
        let session_sha256 = match row.session_sha256 {
            None => None,
            Some(h) => Some(
                <[u8; 32]>::try_from(h.as_slice())
                    .map_err(|_| AuthorityError::Store(format!("{id}: a malformed token hash")))?,
            ),
        };
        Ok(Some(Stored {
            secret: self.master.open(id, &row.sealed_secret)?,
            session_sha256,
            expires: row.expires,
            policy: serde_json::from_str(&row.policy)
                .map_err(|e| AuthorityError::Store(format!("{id}: the stored policy: {e}")))?,
            revision: revision(row.revision),
        }))
    }

    /// The latest revision (0 for a new store).
    pub(crate) fn revision(&self) -> Result<u64, AuthorityError> {
        Ok(revision(self.backend.revision()?))
    }

    /// What changed after `after`.
    pub(crate) fn since(&self, after: u64) -> Result<Since, AuthorityError> {
        let log = self.backend.log(i64::try_from(after).unwrap_or(i64::MAX))?;
        let (oldest, latest) = (revision(log.oldest), revision(log.latest));
        if after > latest || (oldest > 0 && after + 1 < oldest) {
            return Ok(Since::Resync(latest));
        }
        Ok(Since::Changed(latest, log.ids))
    }

    /// What the server waits on between reads of the revision: SQLite's file is polled every
    /// 200 ms; PostgreSQL's replicas are told by NOTIFY (and polled every second besides).
    pub(crate) fn waiter(&self) -> Box<dyn ChangeWaiter> {
        self.backend.waiter()
    }
}

#[cfg(test)]
mod tests;
