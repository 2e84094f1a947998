//! The PostgreSQL backend, for several authority replicas on one database. Every write takes
//! one transaction-scoped advisory lock, so revisions commit in the order they are numbered (an
//! edge that has seen revision N can never miss an N-1 committed later), and sends
//! `NOTIFY slipstream_changes` with the revision: every replica listening learns of a change
//! made through any other within a round trip, and tells its edges.
//!
//! tokio-postgres's connection runs on a thread of its own (a current-thread runtime), so the
//! store keeps the blocking interface SQLite has: the server calls it on blocking threads, the
//! management commands outside any runtime, and dropping it never needs a runtime.
//!
//! Reads share the connection: each blocking thread sends its query while others are still
//! waiting for theirs, and tokio-postgres pipelines them, so a replica's key answers are not
//! one database round trip at a time (with the connection held for each query, and the query
//! prepared each time, 8 or 32 edges asking at once got 2,070-2,444 answers/s from a database
//! on the same machine, and a far one would give one answer per two round trips:
//! docs/BENCHMARKS.md, "The authority under load"). Writes, which are transactions, hold it
//! alone; `authority serve` makes none.

use std::sync::mpsc;
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls, Socket, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{Backend, Change, ChangeWaiter, Log, Row, Woken};
use crate::AuthorityError;

/// The notification channel.
const CHANNEL: &str = "slipstream_changes";
/// The advisory lock every write takes (any constant the database's other users do not take).
const WRITE_LOCK: i64 = 0x736c_6970_7374_726d;
/// How long a listener waits for a notification before the server reads the revision anyway:
/// the safety net for a notification lost with a connection.
const LISTEN_WAIT: Duration = Duration::from_secs(1);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS keys (
    access_key_id TEXT PRIMARY KEY,
    sealed_secret BYTEA NOT NULL,
    session_sha256 BYTEA,
    expires BIGINT,
    enabled BOOLEAN NOT NULL,
    policy TEXT NOT NULL,
    created BIGINT NOT NULL,
    revision BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS changes (
    revision BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    access_key_id TEXT NOT NULL
);
";

const COLUMNS: &str =
    "access_key_id, sealed_secret, session_sha256, expires, enabled, policy, created, revision";

/// Where to connect, and how.
#[derive(Clone)]
struct Target {
    config: Config,
    /// `None`: `sslmode=disable`.
    tls: Option<MakeRustlsConnect>,
    /// What to call the database in messages: host, port and name, never the password.
    shown: String,
}

/// An open connection: the client, and the runtime its connection runs on.
struct Open {
    client: Client,
    runtime: Handle,
    /// The statement of every key answer, prepared once on this connection: a query given by
    /// its text is prepared first each time, a second round trip.
    row: OnceLock<Statement>,
}

pub(super) struct Postgres {
    target: Target,
    /// Shared by reads, held alone by writes and to reconnect.
    open: RwLock<Option<Open>>,
}

fn db(e: tokio_postgres::Error) -> AuthorityError {
    AuthorityError::Store(format!("PostgreSQL: {}", slipstream_client::describe(&e)))
}

fn row(r: &tokio_postgres::Row) -> Row {
    Row {
        access_key_id: r.get(0),
        sealed_secret: r.get(1),
        session_sha256: r.get(2),
        expires: r.get(3),
        enabled: r.get(4),
        policy: r.get(5),
        created: r.get(6),
        revision: r.get(7),
    }
}

/// `host:port/dbname` of a parsed URL, for messages.
fn shown(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let name = config.get_dbname().or(config.get_user()).unwrap_or("");
    format!("postgres://{host}:{port}/{name}")
}

impl Postgres {
    /// Connects to `url` (a `postgres://` URL or key=value string; `sslmode` disable, prefer
    /// (the default) or require; TLS always checks the server's certificate and name against
    /// `ca_bundle`, or the Mozilla roots without one) and creates the tables if missing.
    pub(super) fn open(
        url: &str,
        ca_bundle: Option<&std::path::Path>,
    ) -> Result<Self, AuthorityError> {
        // libpq's names for "require, and check the certificate": what rustls always does.
        let url = url
            .replace("sslmode=verify-full", "sslmode=require")
            .replace("sslmode=verify-ca", "sslmode=require");
        let mut config: Config = url.parse().map_err(|e| {
            AuthorityError::Settings(format!(
                "--database: not a PostgreSQL URL ({e}); for example postgres://authority@db.example:5432/authority?sslmode=require"
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let tls = match config.get_ssl_mode() {
            tokio_postgres::config::SslMode::Disable => None,
            _ => {
                let tls = slipstream_client::tls::client_config(
                    ca_bundle,
                    slipstream_client::tls::DEFAULT_VERSIONS,
                )
                .map_err(|e| AuthorityError::Settings(e.to_string()))?;
                Some(MakeRustlsConnect::new(tls))
            }
        };
        let target = Target {
            shown: shown(&config),
            config,
            tls,
        };
        let open = connect(&target, None).map_err(|e| {
            // Unlike libpq, prefer and require check the certificate too: say how to proceed.
            let hint = if e.contains("certificate") {
                " (the server's TLS certificate is checked whatever sslmode says: give \
                 --database-ca-bundle with its CA, or sslmode=disable on a network you trust)"
            } else {
                ""
            };
            AuthorityError::Settings(format!(
                "cannot connect to the database {}: {e}{hint}",
                target.shown
            ))
        })?;
        let store = Self {
            target,
            open: RwLock::new(Some(open)),
        };
        store.write(|client, runtime| {
            runtime.block_on(async move {
                let tx = client.transaction().await?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
                    .await?;
                tx.batch_execute(SCHEMA).await?;
                tx.commit().await
            })
        })?;
        Ok(store)
    }

    fn shared(&self) -> RwLockReadGuard<'_, Option<Open>> {
        match self.open.read() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn alone(&self) -> RwLockWriteGuard<'_, Option<Open>> {
        match self.open.write() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The connection held alone, a new one first if the last was lost.
    fn open_alone(&self) -> Result<RwLockWriteGuard<'_, Option<Open>>, AuthorityError> {
        let mut held = self.alone();
        if held.as_ref().map_or(true, |o| o.client.is_closed()) {
            *held = None;
            *held = Some(connect(&self.target, None).map_err(|e| {
                AuthorityError::Store(format!(
                    "cannot connect to the database {}: {e}",
                    self.target.shown
                ))
            })?);
        }
        Ok(held)
    }

    /// Runs the read `call` on the connection beside other reads (with the runtime that drives
    /// it, to block on), reconnecting first if the last was lost.
    fn read<T>(
        &self,
        call: impl FnOnce(&Open) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, AuthorityError> {
        if self
            .shared()
            .as_ref()
            .map_or(true, |o| o.client.is_closed())
        {
            drop(self.open_alone()?);
        }
        let held = self.shared();
        let Some(open) = held.as_ref() else {
            return Err(AuthorityError::Store("no database connection".into()));
        };
        call(open).map_err(db)
    }

    /// Runs `call` (a transaction) with the connection held alone.
    fn write<T>(
        &self,
        call: impl FnOnce(&mut Client, &Handle) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, AuthorityError> {
        let mut held = self.open_alone()?;
        let Some(open) = held.as_mut() else {
            return Err(AuthorityError::Store("no database connection".into()));
        };
        call(&mut open.client, &open.runtime).map_err(db)
    }
}

/// Opens a connection on a thread of its own, which drives it until the client is dropped or
/// the connection fails; notifications go to `notify` when given.
fn connect(target: &Target, notify: Option<mpsc::Sender<()>>) -> Result<Open, String> {
    let (tx, rx) = mpsc::channel();
    let target = target.clone();
    slipstream_client::spawn_runtime_thread("slipstream-postgres".into(), move |runtime| {
        runtime.block_on(async move {
            match target.tls {
                Some(tls) => run_connection(&target.config, tls, tx, notify).await,
                None => run_connection(&target.config, NoTls, tx, notify).await,
            }
        });
    })
    .map_err(|e| format!("cannot start the connection's thread: {e}"))?;
    rx.recv()
        .map_err(|_| "the connection's thread ended".to_string())?
}

/// Connects with `tls`, hands the client over `tx`, and drives the connection until it ends.
async fn run_connection<T>(
    config: &Config,
    tls: T,
    tx: mpsc::Sender<Result<Open, String>>,
    notify: Option<mpsc::Sender<()>>,
) where
    T: tokio_postgres::tls::MakeTlsConnect<Socket>,
    T::Stream: Unpin,
{
    match config.connect(tls).await {
        Ok((client, connection)) => {
            let runtime = Handle::current();
            let _ = tx.send(Ok(Open {
                client,
                runtime,
                row: OnceLock::new(),
            }));
            drive(connection, notify).await;
        }
        Err(e) => {
            let _ = tx.send(Err(slipstream_client::describe(&e)));
        }
    }
}

/// Runs a connection until it ends, passing on notifications.
async fn drive<T>(
    mut connection: tokio_postgres::Connection<Socket, T>,
    notify: Option<mpsc::Sender<()>>,
) where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
        if let (AsyncMessage::Notification(_), Some(notify)) = (message, &notify) {
            let _ = notify.send(());
        }
    }
}

/// Logs a change of `id` and returns its revision, dropping all but the last `keep` changes,
/// and notifies the listeners (delivered when the transaction commits).
async fn log(
    tx: &tokio_postgres::Transaction<'_>,
    id: &str,
    keep: i64,
) -> Result<i64, tokio_postgres::Error> {
    let revision: i64 = tx
        .query_one(
            "INSERT INTO changes (access_key_id) VALUES ($1) RETURNING revision",
            &[&id],
        )
        .await?
        .get(0);
    tx.execute(
        "DELETE FROM changes WHERE revision <= $1",
        &[&(revision - keep)],
    )
    .await?;
    tx.execute(
        "SELECT pg_notify($1, $2)",
        &[&CHANNEL, &revision.to_string()],
    )
    .await?;
    Ok(revision)
}

impl Backend for Postgres {
    fn insert(&self, new: &Row, keep: i64) -> Result<Option<i64>, AuthorityError> {
        self.write(|client, runtime| {
            runtime.block_on(async move {
                let tx = client.transaction().await?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
                    .await?;
                let exists = tx
                    .query_opt(
                        "SELECT 1 FROM keys WHERE access_key_id = $1",
                        &[&new.access_key_id],
                    )
                    .await?;
                if exists.is_some() {
                    return Ok(None);
                }
                let revision = log(&tx, &new.access_key_id, keep).await?;
                tx.execute(
                    &format!(
                        "INSERT INTO keys ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
                    ),
                    &[
                        &new.access_key_id,
                        &new.sealed_secret,
                        &new.session_sha256,
                        &new.expires,
                        &new.enabled,
                        &new.policy,
                        &new.created,
                        &revision,
                    ],
                )
                .await?;
                tx.commit().await?;
                Ok(Some(revision))
            })
        })
    }

    fn change(
        &self,
        id: &str,
        change: Change<'_>,
        keep: i64,
    ) -> Result<Option<i64>, AuthorityError> {
        self.write(|client, runtime| {
            runtime.block_on(async move {
                let tx = client.transaction().await?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
                    .await?;
                let n = match change {
                    Change::Enabled(on) => {
                        tx.execute(
                            "UPDATE keys SET enabled = $2 WHERE access_key_id = $1",
                            &[&id, &on],
                        )
                        .await?
                    }
                    Change::Policy(policy) => {
                        tx.execute(
                            "UPDATE keys SET policy = $2 WHERE access_key_id = $1",
                            &[&id, &policy],
                        )
                        .await?
                    }
                    Change::Delete => {
                        tx.execute("DELETE FROM keys WHERE access_key_id = $1", &[&id])
                            .await?
                    }
                };
                if n == 0 {
                    return Ok(None);
                }
                let revision = log(&tx, id, keep).await?;
                tx.execute(
                    "UPDATE keys SET revision = $2 WHERE access_key_id = $1",
                    &[&id, &revision],
                )
                .await?;
                tx.commit().await?;
                Ok(Some(revision))
            })
        })
    }

    fn rows(&self) -> Result<Vec<Row>, AuthorityError> {
        self.read(|open| {
            let client = &open.client;
            open.runtime.block_on(async move {
                let rows = client
                    .query(
                        &format!("SELECT {COLUMNS} FROM keys ORDER BY access_key_id"),
                        &[],
                    )
                    .await?;
                Ok(rows.iter().map(row).collect())
            })
        })
    }

    fn row(&self, id: &str) -> Result<Option<Row>, AuthorityError> {
        self.read(|open| {
            let client = &open.client;
            open.runtime.block_on(async move {
                let statement = match open.row.get() {
                    Some(s) => s.clone(),
                    None => {
                        let sql = format!("SELECT {COLUMNS} FROM keys WHERE access_key_id = $1");
                        let prepared = client.prepare(&sql).await?;
                        open.row.get_or_init(|| prepared).clone()
                    }
                };
                let found = client.query_opt(&statement, &[&id]).await?;
                Ok(found.as_ref().map(row))
            })
        })
    }

    fn log(&self, after: i64) -> Result<Log, AuthorityError> {
        self.read(|open| {
            let client = &open.client;
            open.runtime.block_on(async move {
                let span = client
                    .query_one(
                        "SELECT COALESCE(MIN(revision), 0), COALESCE(MAX(revision), 0) FROM changes",
                        &[],
                    )
                    .await?;
                let ids = client
                    .query(
                        "SELECT DISTINCT access_key_id FROM changes WHERE revision > $1",
                        &[&after],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                Ok(Log {
                    oldest: span.get(0),
                    latest: span.get(1),
                    ids,
                })
            })
        })
    }

    fn revision(&self) -> Result<i64, AuthorityError> {
        self.read(|open| {
            let client = &open.client;
            open.runtime.block_on(async move {
                Ok(client
                    .query_one("SELECT COALESCE(MAX(revision), 0) FROM changes", &[])
                    .await?
                    .get(0))
            })
        })
    }

    fn waiter(&self) -> Box<dyn ChangeWaiter> {
        Box::new(Listen {
            target: self.target.clone(),
            listening: None,
            failing: false,
        })
    }
}

/// A connection that has run `LISTEN`, and where its notifications arrive.
struct Listening {
    _open: Open,
    notified: mpsc::Receiver<()>,
}

/// Waits for `NOTIFY slipstream_changes` from any replica, at most [`LISTEN_WAIT`]; connects
/// (again) when the connection is lost, the server reading the revision meanwhile.
struct Listen {
    target: Target,
    listening: Option<Listening>,
    /// Whether the last attempt to listen failed (said once per outage).
    failing: bool,
}

impl Listen {
    fn listen(&self) -> Result<Listening, String> {
        let (tx, notified) = mpsc::channel();
        let open = connect(&self.target, Some(tx))?;
        let runtime = open.runtime.clone();
        runtime
            .block_on(open.client.batch_execute(&format!("LISTEN {CHANNEL}")))
            .map_err(|e| slipstream_client::describe(&e))?;
        Ok(Listening {
            _open: open,
            notified,
        })
    }
}

impl ChangeWaiter for Listen {
    fn wait(&mut self) -> Woken {
        if self.listening.is_none() {
            match self.listen() {
                Ok(l) => {
                    if std::mem::take(&mut self.failing) {
                        eprintln!(
                            "slipstream authority: listening for changes on {} again",
                            self.target.shown
                        );
                    }
                    self.listening = Some(l);
                }
                Err(e) => {
                    if !std::mem::replace(&mut self.failing, true) {
                        eprintln!(
                            "slipstream authority: cannot listen for changes on {} (reading the revision every second meanwhile): {e}",
                            self.target.shown
                        );
                    }
                    std::thread::sleep(LISTEN_WAIT);
                    return Woken::Polled;
                }
            }
        }
        let Some(listening) = &self.listening else {
            return Woken::Polled;
        };
        match listening.notified.recv_timeout(LISTEN_WAIT) {
            Ok(()) => {
                while listening.notified.try_recv().is_ok() {}
                Woken::Told
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Woken::Polled,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                self.listening = None;
                Woken::Polled
            }
        }
    }
}
