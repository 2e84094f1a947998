//! The authority's store: access keys (secrets sealed under the master key, the session
//! token's SHA-256 and expiry, the policy, enabled or not) and a change log whose revision
//! numbers the edges follow. SQLite in WAL mode: the management commands write the same file
//! the server reads, and the server notices their changes by the revision.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::seal::{random_text, MasterKey};
use crate::AuthorityError;

/// Changes kept; an edge that has seen none of them is told to resync.
const KEEP_CHANGES: i64 = 10_000;
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS keys (
    access_key_id TEXT PRIMARY KEY,
    sealed_secret BLOB NOT NULL,
    session_sha256 BLOB,
    expires INTEGER,
    enabled INTEGER NOT NULL,
    policy TEXT NOT NULL,
    created INTEGER NOT NULL,
    revision INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS changes (
    revision INTEGER PRIMARY KEY AUTOINCREMENT,
    access_key_id TEXT NOT NULL
);
";

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

/// The SQLite store.
pub struct Store {
    connection: Mutex<Connection>,
    master: MasterKey,
    /// Changes kept ([`KEEP_CHANGES`]; fewer in tests).
    keep_changes: i64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

fn db(e: rusqlite::Error) -> AuthorityError {
    AuthorityError::Store(e.to_string())
}

impl Store {
    /// Opens (or creates) the database at `path`, in WAL mode.
    pub fn open(path: &Path, master: MasterKey) -> Result<Self, AuthorityError> {
        let connection = Connection::open(path).map_err(|e| {
            AuthorityError::Settings(format!("cannot open the database {}: {e}", path.display()))
        })?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(db)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(db)?;
        connection.execute_batch(SCHEMA).map_err(db)?;
        Ok(Self {
            connection: Mutex::new(connection),
            master,
            keep_changes: KEEP_CHANGES,
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        match self.connection.lock() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Records a change of `access_key_id` and returns its revision (inside `tx`).
    fn changed(
        &self,
        tx: &rusqlite::Transaction<'_>,
        access_key_id: &str,
    ) -> Result<i64, AuthorityError> {
        tx.execute(
            "INSERT INTO changes (access_key_id) VALUES (?1)",
            params![access_key_id],
        )
        .map_err(db)?;
        let revision = tx.last_insert_rowid();
        tx.execute(
            "DELETE FROM changes WHERE revision <= ?1",
            params![revision - self.keep_changes],
        )
        .map_err(db)?;
        Ok(revision)
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
        let token_hash = token
            .as_ref()
            .map(|t| Sha256::digest(t.as_bytes()).to_vec());
        let sealed = self.master.seal(&id, &secret)?;
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let exists: Option<i64> = tx
            .query_row(
                "SELECT 1 FROM keys WHERE access_key_id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(db)?;
        if exists.is_some() {
            return Err(AuthorityError::Input(format!("the access key {id} exists")));
        }
        let revision = self.changed(&tx, &id)?;
        tx.execute(
            "INSERT INTO keys (access_key_id, sealed_secret, session_sha256, expires, enabled, policy, created, revision)
             VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7)",
            params![id, sealed, token_hash, new.session_expires, new.policy.to_string(), now, revision],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(Created {
            access_key_id: id,
            secret_access_key: secret,
            session_token: token,
            expires: new.session_expires,
        })
    }

    /// Every key, by id.
    pub fn list(&self) -> Result<Vec<KeyInfo>, AuthorityError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT access_key_id, enabled, created, session_sha256 IS NOT NULL, expires, revision, policy
                 FROM keys ORDER BY access_key_id",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, bool>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, bool>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, String>(6)?,
                ))
            })
            .map_err(db)?;
        let mut out = Vec::new();
        for row in rows {
            let (access_key_id, enabled, created, session, expires, revision, policy) =
                row.map_err(db)?;
            out.push(KeyInfo {
                access_key_id,
                enabled,
                created,
                session,
                expires,
                revision: u64::try_from(revision).unwrap_or_default(),
                policy: serde_json::from_str(&policy).unwrap_or(Value::Null),
            });
        }
        Ok(out)
    }

    /// Runs `sql` (with the id as `?1` and `value` as `?2`) on one key and records the change;
    /// an error if there is no such key.
    fn update(
        &self,
        id: &str,
        sql: &str,
        value: rusqlite::types::Value,
    ) -> Result<u64, AuthorityError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let n = tx.execute(sql, params![id, value]).map_err(db)?;
        if n == 0 {
            return Err(AuthorityError::Input(format!("no access key {id}")));
        }
        let revision = self.changed(&tx, id)?;
        tx.execute(
            "UPDATE keys SET revision = ?2 WHERE access_key_id = ?1",
            params![id, revision],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(u64::try_from(revision).unwrap_or_default())
    }

    /// Enables or disables a key; edges refuse a disabled key as unknown.
    pub fn set_enabled(&self, id: &str, enabled: bool) -> Result<u64, AuthorityError> {
        self.update(
            id,
            "UPDATE keys SET enabled = ?2 WHERE access_key_id = ?1",
            rusqlite::types::Value::Integer(i64::from(enabled)),
        )
    }

    /// Replaces a key's policy (checked as the edges will load it).
    pub fn set_policy(&self, id: &str, policy: &Value) -> Result<u64, AuthorityError> {
        slipstream_gateway::check_policy(policy).map_err(AuthorityError::Input)?;
        self.update(
            id,
            "UPDATE keys SET policy = ?2 WHERE access_key_id = ?1",
            rusqlite::types::Value::Text(policy.to_string()),
        )
    }

    /// Deletes a key.
    pub fn delete(&self, id: &str) -> Result<u64, AuthorityError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let n = tx
            .execute("DELETE FROM keys WHERE access_key_id = ?1", params![id])
            .map_err(db)?;
        if n == 0 {
            return Err(AuthorityError::Input(format!("no access key {id}")));
        }
        let revision = self.changed(&tx, id)?;
        tx.commit().map_err(db)?;
        Ok(u64::try_from(revision).unwrap_or_default())
    }

    /// An enabled key with its secret opened; `None` if unknown or disabled.
    pub(crate) fn get(&self, id: &str) -> Result<Option<Stored>, AuthorityError> {
        type Row = (Vec<u8>, Option<Vec<u8>>, Option<i64>, String, i64);
        let row: Option<Row> = self
            .conn()
            .query_row(
                "SELECT sealed_secret, session_sha256, expires, policy, revision FROM keys
                 WHERE access_key_id = ?1 AND enabled = 1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()
            .map_err(db)?;
        let Some((sealed, session, expires, policy, revision)) = row else {
            return Ok(None);
        };
        let session_sha256 = match session {
            None => None,
            Some(h) => Some(
                <[u8; 32]>::try_from(h.as_slice())
                    .map_err(|_| AuthorityError::Store(format!("{id}: a malformed token hash")))?,
            ),
        };
        Ok(Some(Stored {
            secret: self.master.open(id, &sealed)?,
            session_sha256,
            expires,
            policy: serde_json::from_str(&policy)
                .map_err(|e| AuthorityError::Store(format!("{id}: the stored policy: {e}")))?,
            revision: u64::try_from(revision).unwrap_or_default(),
        }))
    }

    /// The latest revision (0 for a new store).
    pub(crate) fn revision(&self) -> Result<u64, AuthorityError> {
        let r: i64 = self
            .conn()
            .query_row("SELECT COALESCE(MAX(revision), 0) FROM changes", [], |r| {
                r.get(0)
            })
            .map_err(db)?;
        Ok(u64::try_from(r).unwrap_or_default())
    }

    /// What changed after `after`.
    pub(crate) fn since(&self, after: u64) -> Result<Since, AuthorityError> {
        let conn = self.conn();
        let (oldest, latest): (Option<i64>, Option<i64>) = conn
            .query_row(
                "SELECT MIN(revision), MAX(revision) FROM changes",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(db)?;
        let latest = u64::try_from(latest.unwrap_or(0)).unwrap_or_default();
        let oldest = u64::try_from(oldest.unwrap_or(0)).unwrap_or_default();
        if after > latest || (oldest > 0 && after + 1 < oldest) {
            return Ok(Since::Resync(latest));
        }
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let mut stmt = conn
            .prepare("SELECT DISTINCT access_key_id FROM changes WHERE revision > ?1")
            .map_err(db)?;
        let ids = stmt
            .query_map(params![after], |r| r.get::<_, String>(0))
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        Ok(Since::Changed(latest, ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let master = dir.path().join("master.key");
        MasterKey::create(&master).unwrap();
        let store =
            Store::open(&dir.path().join("a.db"), MasterKey::load(&master).unwrap()).unwrap();
        (dir, store)
    }

    fn all() -> Value {
        json!({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})
    }

    #[test]
    fn keys_are_created_listed_changed_and_logged() {
        let (_dir, store) = store();
        assert_eq!(store.revision().unwrap(), 0);
        let a = store
            .create(
                NewKey {
                    policy: all(),
                    ..Default::default()
                },
                1_000,
            )
            .unwrap();
        assert!(a.access_key_id.starts_with("SLIP") && a.access_key_id.len() == 20);
        assert_eq!(a.secret_access_key.len(), 40);
        let b = store
            .create(
                NewKey {
                    access_key_id: Some("AKIDIMPORTED0001".into()),
                    secret_access_key: Some("imported-secret-0123".into()),
                    policy: all(),
                    session_expires: Some(5_000),
                },
                1_000,
            )
            .unwrap();
        assert_eq!(b.session_token.as_ref().map(String::len), Some(64));
        assert_eq!(
            store.get("AKIDIMPORTED0001").unwrap().unwrap().secret,
            "imported-secret-0123"
        );
        assert_eq!(store.list().unwrap().len(), 2);
        assert_eq!(store.revision().unwrap(), 2);

        store.set_enabled(&a.access_key_id, false).unwrap();
        assert!(
            store.get(&a.access_key_id).unwrap().is_none(),
            "disabled: unknown"
        );
        let deny = json!({"Statement": [{"Effect": "Deny", "Action": "s3:*", "Resource": "*"}]});
        store.set_policy("AKIDIMPORTED0001", &deny).unwrap();
        match store.since(2).unwrap() {
            Since::Changed(4, ids) => assert_eq!(ids.len(), 2),
            _ => panic!("two changes after revision 2"),
        }
        assert!(matches!(store.since(4).unwrap(), Since::Changed(4, ids) if ids.is_empty()));
        assert!(
            matches!(store.since(9).unwrap(), Since::Resync(4)),
            "a store behind the edge"
        );
        store.delete("AKIDIMPORTED0001").unwrap();
        assert!(store.get("AKIDIMPORTED0001").unwrap().is_none());
    }

    #[test]
    fn mistakes_are_refused_and_change_nothing() {
        let (_dir, store) = store();
        let condition = json!({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Condition": {}}]});
        let err = store
            .create(
                NewKey {
                    policy: condition,
                    ..Default::default()
                },
                0,
            )
            .unwrap_err();
        assert!(err.to_string().contains("Condition"), "{err}");
        let short = NewKey {
            access_key_id: Some("SHORT".into()),
            policy: all(),
            ..Default::default()
        };
        assert!(store.create(short, 0).is_err());
        assert!(store.set_enabled("AKIDNOSUCHKEY000", false).is_err());
        assert!(store.delete("AKIDNOSUCHKEY000").is_err());
        let past = NewKey {
            policy: all(),
            session_expires: Some(10),
            ..Default::default()
        };
        assert!(store.create(past, 20).is_err());
        assert_eq!(store.revision().unwrap(), 0);
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn the_log_keeps_the_latest_changes_and_older_edges_resync() {
        let (_dir, mut store) = store();
        store.keep_changes = 10;
        let a = store
            .create(
                NewKey {
                    policy: all(),
                    ..Default::default()
                },
                0,
            )
            .unwrap();
        for i in 0..15 {
            store.set_enabled(&a.access_key_id, i % 2 == 0).unwrap();
        }
        assert!(matches!(store.since(1).unwrap(), Since::Resync(_)));
        let latest = store.revision().unwrap();
        assert!(
            matches!(store.since(latest - 3).unwrap(), Since::Changed(l, ids) if l == latest && ids.len() == 1)
        );
    }
}
