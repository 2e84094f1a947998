//! The same tests for both backends: SQLite always, PostgreSQL when `scripts/with-postgres.sh`
//! gave a cluster (`SLIPSTREAM_TEST_POSTGRES`; `make test` does), each test in a database of
//! its own, over TLS checked against the cluster's CA. Under `CI=true` a missing cluster fails
//! rather than passing on SQLite alone.

use super::*;
use serde_json::json;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn master(dir: &tempfile::TempDir) -> MasterKey {
    let path = dir.path().join("master.key");
    if !path.exists() {
        MasterKey::create(&path).unwrap();
    }
    MasterKey::load(&path).unwrap()
}

/// A new, empty PostgreSQL database, as a `Database` (TLS required), or `None` without a
/// cluster.
fn postgres_database() -> Option<Database> {
    let Ok(url) = std::env::var("SLIPSTREAM_TEST_POSTGRES") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI needs SLIPSTREAM_TEST_POSTGRES (run under scripts/with-postgres.sh)"
        );
        eprintln!("no SLIPSTREAM_TEST_POSTGRES: the PostgreSQL half of the store tests is skipped");
        return None;
    };
    let name = format!(
        "t_{}",
        random_text(b"abcdefghijklmnopqrstuvwxyz", 12).unwrap()
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
    });
    let (base, _) = url.rsplit_once('/').unwrap();
    Some(Database::Postgres {
        url: format!("{base}/{name}?sslmode=require"),
        ca_bundle: std::env::var_os("SLIPSTREAM_TEST_POSTGRES_CA").map(PathBuf::from),
    })
}

/// One empty store per backend (the folder holds the master key and the SQLite file).
fn stores() -> Vec<(tempfile::TempDir, Store)> {
    let mut out = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Database::Sqlite(dir.path().join("a.db"));
    out.push((Store::open(&sqlite, master(&dir)).unwrap(), dir));
    if let Some(database) = postgres_database() {
        let dir = tempfile::tempdir().unwrap();
        out.push((Store::open(&database, master(&dir)).unwrap(), dir));
    }
    out.into_iter().map(|(s, d)| (d, s)).collect()
}

fn all() -> Value {
    json!({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})
}

#[test]
fn keys_are_created_listed_changed_and_logged() {
    for (_dir, store) in stores() {
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
}

#[test]
fn mistakes_are_refused_and_change_nothing() {
    for (_dir, store) in stores() {
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
}

#[test]
fn the_log_keeps_the_latest_changes_and_older_edges_resync() {
    for (_dir, mut store) in stores() {
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

#[test]
fn replicas_on_one_postgres_database_tell_each_other() {
    let Some(database) = postgres_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open(&database, master(&dir)).unwrap();
    let b = Store::open(&database, master(&dir)).unwrap();
    let mut waiter = a.waiter();
    // The first wait connects and listens; nothing has changed yet.
    assert_eq!(waiter.wait(), Woken::Polled);
    let key = b
        .create(
            NewKey {
                policy: all(),
                ..Default::default()
            },
            0,
        )
        .unwrap();
    assert_eq!(
        waiter.wait(),
        Woken::Told,
        "b's change is announced to a's waiter"
    );
    assert_eq!(a.revision().unwrap(), 1);
    assert_eq!(
        a.get(&key.access_key_id).unwrap().unwrap().secret,
        key.secret_access_key
    );
    // Writes from both replicas, interleaved: one log, revisions in commit order.
    let (a, b) = (std::sync::Arc::new(a), std::sync::Arc::new(b));
    let writers: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .map(|s| {
            let id = key.access_key_id.clone();
            std::thread::spawn(move || {
                (0..20)
                    .map(|i| s.set_enabled(&id, i % 2 == 0).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut revisions: Vec<u64> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    revisions.sort_unstable();
    assert_eq!(
        revisions,
        (2..=41).collect::<Vec<u64>>(),
        "40 writes, 40 revisions, no gap"
    );
    assert!(
        matches!(b.since(1).unwrap(), Since::Changed(41, ids) if ids == [key.access_key_id.clone()])
    );
}

#[test]
fn a_database_that_cannot_be_reached_is_a_settings_error_without_the_password() {
    let database = Database::parse(
        "postgres://authority:hunter2secret@127.0.0.1:1/authority",
        None,
    );
    assert_eq!(database.shown(), "postgres://127.0.0.1:1/authority");
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(&database, master(&dir)).unwrap_err();
    assert!(matches!(err, AuthorityError::Settings(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("127.0.0.1:1/authority"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    let bad = Store::open(
        &Database::parse("postgres://x@h/db?sslmode=sometimes", None),
        master(&dir),
    );
    assert!(matches!(bad, Err(AuthorityError::Settings(m)) if m.contains("not a PostgreSQL URL")));
}

/// A TCP relay to `upstream` for one connection: it counts the bytes the client sends and,
/// while `held`, keeps the server's bytes from the client, so what a client sends before any
/// answer comes back is seen.
struct Gate {
    addr: String,
    held: Arc<AtomicBool>,
    sent: Arc<AtomicUsize>,
}

fn gate(upstream: &str) -> Gate {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (held, sent) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (held2, sent2, upstream) = (Arc::clone(&held), Arc::clone(&sent), upstream.to_owned());
    std::thread::spawn(move || {
        let (client, _) = listener.accept().unwrap();
        let server = std::net::TcpStream::connect(upstream).unwrap();
        let (mut c_in, mut c_out) = (client.try_clone().unwrap(), client);
        let (mut s_in, mut s_out) = (server.try_clone().unwrap(), server);
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 << 10];
            while let Ok(n @ 1..) = c_in.read(&mut buf) {
                sent2.fetch_add(n, Ordering::SeqCst);
                if s_out.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        });
        let mut buf = [0u8; 16 << 10];
        while let Ok(n @ 1..) = s_in.read(&mut buf) {
            while held2.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            if c_out.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    Gate { addr, held, sent }
}

/// Key answers read the PostgreSQL store side by side on its one connection: each query is
/// sent while others still wait for their answers (tokio-postgres pipelines them), rather
/// than one database round trip at a time (docs/BENCHMARKS.md, "The authority under load").
/// Here the database's answers are held back, and four readers' queries must go out (more
/// than two queries' bytes; one at a time, only the first would).
#[test]
fn key_answers_do_not_wait_for_each_other_on_postgres() {
    let Some(Database::Postgres { url, ca_bundle }) = postgres_database() else {
        return;
    };
    let (user, rest) = url.split_once('@').unwrap();
    let (upstream, path) = rest.split_once('/').unwrap();
    let gate = gate(upstream);
    let database = Database::Postgres {
        url: format!("{user}@{}/{path}", gate.addr),
        ca_bundle,
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&database, master(&dir)).unwrap());
    let id = store
        .create(
            NewKey {
                policy: all(),
                ..Default::default()
            },
            1_000,
        )
        .unwrap()
        .access_key_id;
    // The first read prepares its statement; the next shows what one query sends.
    store.get(&id).unwrap().unwrap();
    let before = gate.sent.load(Ordering::SeqCst);
    store.get(&id).unwrap().unwrap();
    let one = gate.sent.load(Ordering::SeqCst) - before;
    gate.held.store(true, Ordering::SeqCst);
    let start = gate.sent.load(Ordering::SeqCst);
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (store, id) = (Arc::clone(&store), id.clone());
            std::thread::spawn(move || store.get(&id).map(|k| k.is_some()))
        })
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    // Queries sent together share TLS records: four take less than four times one.
    while gate.sent.load(Ordering::SeqCst) <= start + 2 * one
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = gate.sent.load(Ordering::SeqCst) - start;
    gate.held.store(false, Ordering::SeqCst);
    for r in readers {
        assert!(r.join().unwrap().unwrap());
    }
    assert!(
        sent > 2 * one,
        "{sent} bytes sent before any answer; one query is {one}"
    );
}
