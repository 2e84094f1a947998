//! `slipstream authority`: create a master key, serve edges, manage access keys. Management
//! commands open the store themselves (SQLite: the same file the server reads, which notices
//! the change within 200 ms; PostgreSQL: every replica is told by NOTIFY) and the servers tell
//! the edges.

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use slipstream_authority::{
    AuthorityError, Database, MasterKey, NewKey, ServeSettings, Server, Store,
};
use slipstream_gateway::CertFiles;

use crate::flags::parse_duration;
use crate::Failure;

pub const AUTHORITY_EXAMPLES: &str = "\
Examples:
  slipstream authority master-key master.key
  slipstream authority key create --database authority.db --master-key-file master.key \\
      --policy '{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"s3:Get*\", \"Resource\": \"arn:aws:s3:::photos/*\"}]}'
  slipstream authority key create ... --policy @admin.json --session-duration 12h
  slipstream authority key disable SLIPABCDEFGH23456789 --database authority.db --master-key-file master.key
  slipstream authority serve --database authority.db --master-key-file master.key \\
      --edge-token-file edge-tokens --listen 0.0.0.0:9470 --tls-cert auth.pem --tls-key auth-key.pem
  slipstream gateway --mode verify --authority https://auth.example:9470 --authority-token-file edge-token ...

The secrets are sealed under the master key (AES-256-GCM); keep that file apart from the
database. Edges are told per-day signing keys, the SigV4A public key, the session token's hash
and the policy, never a secret, and drop what changed within a second of a change.";

/// `slipstream authority`.
#[derive(Args, Debug)]
pub struct AuthorityArgs {
    #[command(subcommand)]
    command: AuthorityCommand,
}

#[derive(Subcommand, Debug)]
enum AuthorityCommand {
    /// Write a new random master key to FILE (readable by its owner only; never overwritten).
    MasterKey {
        /// The file to create.
        file: PathBuf,
    },
    /// Answer edges: per-day keys, public keys, policies and the change stream.
    Serve(ServeArgs),
    /// Create, list, disable, enable, delete access keys, or set their policy.
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
}

/// Where the keys are kept.
#[derive(Args, Debug)]
struct StoreArgs {
    /// The SQLite file (created if missing), or a PostgreSQL URL for several replicas
    /// (postgres://USER:PASSWORD@HOST:5432/DB?sslmode=require); the tables are created if
    /// missing. Also read from SLIPSTREAM_AUTHORITY_DATABASE, which keeps a password out of
    /// the process list.
    #[arg(
        long,
        value_name = "PATH|URL",
        env = "SLIPSTREAM_AUTHORITY_DATABASE",
        hide_env_values = true
    )]
    database: String,
    /// The PEM certificates PostgreSQL's TLS certificate is checked against (without it: the
    /// Mozilla roots). TLS is used as the URL's sslmode says: prefer (the default), require
    /// (verify-full and verify-ca mean the same here: the name is always checked) or disable.
    #[arg(long, value_name = "FILE")]
    database_ca_bundle: Option<PathBuf>,
    /// The master key file secrets are sealed under.
    #[arg(long, value_name = "FILE")]
    master_key_file: PathBuf,
}

#[derive(Args, Debug)]
struct ServeArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Address to listen on (repeatable) [default: 127.0.0.1:9470].
    #[arg(long, value_name = "ADDR")]
    listen: Vec<SocketAddr>,
    /// TLS certificate chain (PEM); without it the authority speaks plain HTTP.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// The edges' tokens, one per line (an edge sends one as `Authorization: Bearer`).
    #[arg(long, value_name = "FILE")]
    edge_token_file: PathBuf,
}

#[derive(Subcommand, Debug)]
enum KeyCommand {
    /// Create a key and print it (the only time its secret is shown).
    Create {
        #[command(flatten)]
        store: StoreArgs,
        /// The policy: IAM-style JSON, or @FILE.
        #[arg(long, value_name = "JSON|@FILE")]
        policy: String,
        /// The id to give it (16 to 128 letters and digits) [default: a random SLIP... id].
        #[arg(long, value_name = "ID")]
        access_key_id: Option<String>,
        /// Import an existing key: read its secret from standard input.
        #[arg(long)]
        secret_from_stdin: bool,
        /// Session credentials valid for this long (12h, 30m): a session token is made too.
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        session_duration: Option<Duration>,
    },
    /// List the keys (never a secret).
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// One JSON object per key.
        #[arg(long)]
        json: bool,
    },
    /// Disable a key: every edge refuses it within a second.
    Disable {
        /// The access key id.
        access_key_id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Enable a disabled key.
    Enable {
        /// The access key id.
        access_key_id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete a key.
    Delete {
        /// The access key id.
        access_key_id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Replace a key's policy.
    SetPolicy {
        /// The access key id.
        access_key_id: String,
        /// The policy: IAM-style JSON, or @FILE.
        #[arg(long, value_name = "JSON|@FILE")]
        policy: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

fn failure(e: AuthorityError) -> Failure {
    match e {
        AuthorityError::Settings(m) => Failure::usage(m),
        AuthorityError::Input(m) | AuthorityError::Store(m) => Failure::input(m),
    }
}

fn open(store: &StoreArgs) -> Result<Store, Failure> {
    let master = MasterKey::load(&store.master_key_file).map_err(failure)?;
    Store::open(&database(store), master).map_err(failure)
}

fn database(store: &StoreArgs) -> Database {
    Database::parse(&store.database, store.database_ca_bundle.clone())
}

fn now() -> i64 {
    slipstream_sign::SigningTime::from_system_time(std::time::SystemTime::now())
        .map(|t| t.unix())
        .unwrap_or_default()
}

/// Unix seconds as `2026-12-01T00:00:00Z`.
fn iso(unix: i64) -> String {
    match slipstream_sign::SigningTime::from_unix(unix) {
        Ok(t) => t.rfc3339(),
        Err(_) => unix.to_string(),
    }
}

/// A policy given as JSON or `@FILE`.
fn policy(text: &str) -> Result<serde_json::Value, Failure> {
    let json = match text.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("cannot read the policy file {path}: {e}")))?,
        None => text.to_owned(),
    };
    serde_json::from_str(&json).map_err(|e| Failure::usage(format!("the policy is not JSON: {e}")))
}

pub fn run(args: AuthorityArgs) -> Result<(), Failure> {
    match args.command {
        AuthorityCommand::MasterKey { file } => {
            MasterKey::create(&file).map_err(failure)?;
            eprintln!(
                "slipstream authority: wrote a master key to {} (keep it apart from the database)",
                file.display()
            );
            Ok(())
        }
        AuthorityCommand::Serve(a) => serve(a),
        AuthorityCommand::Key { command } => key(command),
    }
}

fn serve(a: ServeArgs) -> Result<(), Failure> {
    let store = Arc::new(open(&a.store)?);
    let tokens = read_tokens(&a.edge_token_file)?;
    let listen = if a.listen.is_empty() {
        vec![SocketAddr::from(([127, 0, 0, 1], 9470))]
    } else {
        a.listen
    };
    let tls = match (a.tls_cert, a.tls_key) {
        (Some(cert), Some(key)) => vec![CertFiles { cert, key }],
        _ => Vec::new(),
    };
    let scheme = if tls.is_empty() { "http" } else { "https" };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        let settings = ServeSettings {
            listen,
            tls,
            edge_tokens: tokens,
        };
        let server = Server::bind(store, settings).await.map_err(failure)?;
        for addr in server.local_addrs() {
            eprintln!(
                "slipstream authority: listening on {scheme}://{addr}, store {}",
                database(&a.store).shown()
            );
        }
        let run = server.run();
        tokio::select! {
            r = run => r.map_err(failure),
            _ = shutdown() => Ok(()),
        }
    })
}

async fn shutdown() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

fn read_tokens(path: &Path) -> Result<Vec<String>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::usage(format!(
            "cannot read --edge-token-file {}: {e}",
            path.display()
        ))
    })?;
    let tokens: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    if tokens.is_empty() {
        return Err(Failure::usage(format!(
            "--edge-token-file {} holds no token",
            path.display()
        )));
    }
    if let Some(short) = tokens.iter().find(|t| t.len() < 16) {
        return Err(Failure::usage(format!(
            "--edge-token-file {}: a token of {} characters is too short to be secret (16 or more)",
            path.display(),
            short.len()
        )));
    }
    Ok(tokens)
}

fn key(command: KeyCommand) -> Result<(), Failure> {
    match command {
        KeyCommand::Create {
            store,
            policy: text,
            access_key_id,
            secret_from_stdin,
            session_duration,
        } => {
            let policy = policy(&text)?;
            let secret = if secret_from_stdin {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .map_err(|e| Failure::usage(format!("cannot read the secret: {e}")))?;
                Some(s.trim().to_owned())
            } else {
                None
            };
            let now = now();
            let session_expires = session_duration
                .map(|d| now.saturating_add(i64::try_from(d.as_secs()).unwrap_or(i64::MAX)));
            let created = open(&store)?
                .create(
                    NewKey {
                        access_key_id,
                        secret_access_key: secret,
                        policy,
                        session_expires,
                    },
                    now,
                )
                .map_err(failure)?;
            let mut key = serde_json::json!({
                "AccessKeyId": created.access_key_id,
                "SecretAccessKey": created.secret_access_key,
                "Status": "Active",
                "CreateDate": iso(now),
            });
            if let (Some(token), Some(map)) = (&created.session_token, key.as_object_mut()) {
                map.insert("SessionToken".into(), token.clone().into());
                if let Some(e) = created.expires {
                    map.insert("Expiration".into(), iso(e).into());
                }
            }
            println!("{}", serde_json::json!({ "AccessKey": key }));
            Ok(())
        }
        KeyCommand::List { store, json } => {
            for k in open(&store)?.list().map_err(failure)? {
                if json {
                    println!(
                        "{}",
                        serde_json::json!({
                            "AccessKeyId": k.access_key_id,
                            "Status": if k.enabled { "Active" } else { "Inactive" },
                            "CreateDate": iso(k.created),
                            "Session": k.session,
                            "Expiration": k.expires.map(iso),
                            "Revision": k.revision,
                            "Policy": k.policy,
                        })
                    );
                } else {
                    println!(
                        "{}\t{}\t{}\t{}",
                        k.access_key_id,
                        if k.enabled { "Active" } else { "Inactive" },
                        iso(k.created),
                        k.expires.map_or_else(|| "-".into(), iso)
                    );
                }
            }
            Ok(())
        }
        KeyCommand::Disable {
            access_key_id,
            store,
        } => change(&store, &access_key_id, "disabled", |s| {
            s.set_enabled(&access_key_id, false)
        }),
        KeyCommand::Enable {
            access_key_id,
            store,
        } => change(&store, &access_key_id, "enabled", |s| {
            s.set_enabled(&access_key_id, true)
        }),
        KeyCommand::Delete {
            access_key_id,
            store,
        } => change(&store, &access_key_id, "deleted", |s| {
            s.delete(&access_key_id)
        }),
        KeyCommand::SetPolicy {
            access_key_id,
            policy: text,
            store,
        } => {
            let p = policy(&text)?;
            change(&store, &access_key_id, "given a new policy", |s| {
                s.set_policy(&access_key_id, &p)
            })
        }
    }
}

fn change(
    store: &StoreArgs,
    id: &str,
    done: &str,
    call: impl FnOnce(&Store) -> Result<u64, AuthorityError>,
) -> Result<(), Failure> {
    let revision = call(&open(store)?).map_err(failure)?;
    eprintln!("slipstream authority: {id} {done} (revision {revision})");
    Ok(())
}
