//! The SQLite backend: one file in WAL mode. The management commands write the same file the
//! server reads, so the server learns of their changes by reading the revision
//! ([`Poll`] waits [`POLL`] between reads).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use super::{Backend, Change, ChangeWaiter, Log, Row, Woken};
use crate::AuthorityError;

/// How often the server reads the revision (a change made by `slipstream authority key ...`
/// reaches the edges within this plus one round trip).
const POLL: Duration = Duration::from_millis(200);

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

const COLUMNS: &str =
    "access_key_id, sealed_secret, session_sha256, expires, enabled, policy, created, revision";

pub(super) struct Sqlite {
    connection: Mutex<Connection>,
}

fn db(e: rusqlite::Error) -> AuthorityError {
    AuthorityError::Store(format!("SQLite: {e}"))
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        access_key_id: r.get(0)?,
        sealed_secret: r.get(1)?,
        session_sha256: r.get(2)?,
        expires: r.get(3)?,
        enabled: r.get(4)?,
        policy: r.get(5)?,
        created: r.get(6)?,
        revision: r.get(7)?,
    })
}

impl Sqlite {
    /// Opens (or creates) the database at `path`, in WAL mode.
    pub(super) fn open(path: &Path) -> Result<Self, AuthorityError> {
        let connection = Connection::open(path).map_err(|e| {
            AuthorityError::Settings(format!("cannot open the database {}: {e}", path.display()))
        })?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(db)?;
        connection
            .busy_timeout(Duration::from_secs(5))
            .map_err(db)?;
        connection.execute_batch(SCHEMA).map_err(db)?;
        Ok(Self {
            connection: Mutex::new(connection),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        match self.connection.lock() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

/// Logs a change of `id` and returns its revision, dropping all but the last `keep` changes.
fn log(tx: &rusqlite::Transaction<'_>, id: &str, keep: i64) -> Result<i64, AuthorityError> {
    tx.execute(
        "INSERT INTO changes (access_key_id) VALUES (?1)",
        params![id],
    )
    .map_err(db)?;
    let revision = tx.last_insert_rowid();
    tx.execute(
        "DELETE FROM changes WHERE revision <= ?1",
        params![revision - keep],
    )
    .map_err(db)?;
    Ok(revision)
}

impl Backend for Sqlite {
    fn insert(&self, new: &Row, keep: i64) -> Result<Option<i64>, AuthorityError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let exists: Option<i64> = tx
            .query_row(
                "SELECT 1 FROM keys WHERE access_key_id = ?1",
                params![new.access_key_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(db)?;
        if exists.is_some() {
            return Ok(None);
        }
        let revision = log(&tx, &new.access_key_id, keep)?;
        tx.execute(
            &format!("INSERT INTO keys ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
            params![
                new.access_key_id,
                new.sealed_secret,
                new.session_sha256,
                new.expires,
                new.enabled,
                new.policy,
                new.created,
                revision
            ],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(Some(revision))
    }

    fn change(
        &self,
        id: &str,
        change: Change<'_>,
        keep: i64,
    ) -> Result<Option<i64>, AuthorityError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let n = match change {
            Change::Enabled(on) => tx.execute(
                "UPDATE keys SET enabled = ?2 WHERE access_key_id = ?1",
                params![id, on],
            ),
            Change::Policy(policy) => tx.execute(
                "UPDATE keys SET policy = ?2 WHERE access_key_id = ?1",
                params![id, policy],
            ),
            Change::Delete => tx.execute("DELETE FROM keys WHERE access_key_id = ?1", params![id]),
        }
        .map_err(db)?;
        if n == 0 {
            return Ok(None);
        }
        let revision = log(&tx, id, keep)?;
        tx.execute(
            "UPDATE keys SET revision = ?2 WHERE access_key_id = ?1",
            params![id, revision],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(Some(revision))
    }

    fn rows(&self) -> Result<Vec<Row>, AuthorityError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM keys ORDER BY access_key_id"
            ))
            .map_err(db)?;
        let rows = stmt
            .query_map([], row)
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        Ok(rows)
    }

    fn row(&self, id: &str) -> Result<Option<Row>, AuthorityError> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM keys WHERE access_key_id = ?1"),
                params![id],
                row,
            )
            .optional()
            .map_err(db)
    }

    fn log(&self, after: i64) -> Result<Log, AuthorityError> {
        let conn = self.conn();
        let (oldest, latest): (Option<i64>, Option<i64>) = conn
            .query_row(
                "SELECT MIN(revision), MAX(revision) FROM changes",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(db)?;
        let mut stmt = conn
            .prepare("SELECT DISTINCT access_key_id FROM changes WHERE revision > ?1")
            .map_err(db)?;
        let ids = stmt
            .query_map(params![after], |r| r.get::<_, String>(0))
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        Ok(Log {
            oldest: oldest.unwrap_or(0),
            latest: latest.unwrap_or(0),
            ids,
        })
    }

    fn revision(&self) -> Result<i64, AuthorityError> {
        self.conn()
            .query_row("SELECT COALESCE(MAX(revision), 0) FROM changes", [], |r| {
                r.get(0)
            })
            .map_err(db)
    }

    fn waiter(&self) -> Box<dyn ChangeWaiter> {
        Box::new(Poll)
    }
}

/// Another process's change shows only in the file: read the revision every [`POLL`].
struct Poll;

impl ChangeWaiter for Poll {
    fn wait(&mut self) -> Woken {
        std::thread::sleep(POLL);
        Woken::Polled
    }
}
