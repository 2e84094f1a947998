//! `slipstream authority serve`: answers edges over HTTP/2 (or HTTP/1.1), with TLS when given
//! certificates, for holders of an edge token only ([`slipstream_gateway::authority_wire`] has
//! the protocol).
//! Store calls run on blocking threads: SQLite waits for a management command's write lock,
//! and PostgreSQL's client blocks on its connection's own runtime.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use sha2::{Digest, Sha256};
use slipstream_gateway::authority_wire::{
    plausible_access_key_id, Changes, Refusal, MAX_WAIT_SECONDS,
};
use slipstream_gateway::CertFiles;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::answer::{answer, plausible_region};
use crate::store::{Since, Store};
use crate::AuthorityError;

/// What `serve` needs.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// Addresses to listen on.
    pub listen: Vec<SocketAddr>,
    /// Certificates; none: plain HTTP (h2c or HTTP/1.1).
    pub tls: Vec<CertFiles>,
    /// The edges' bearer tokens (several: one per edge, or old and new while rotating).
    pub edge_tokens: Vec<String>,
}

struct State {
    store: Arc<Store>,
    /// SHA-256 of each edge token (compared in constant time, whatever their lengths).
    tokens: Vec<[u8; 32]>,
    revision: watch::Sender<u64>,
    key_answers: AtomicU64,
    unknown_answers: AtomicU64,
    change_answers: AtomicU64,
    unauthorized: AtomicU64,
}

/// A bound authority, ready to run.
pub struct Server {
    state: Arc<State>,
    listeners: Vec<TcpListener>,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listen", &self.local_addrs())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Binds the listeners and loads the certificates.
    pub async fn bind(store: Arc<Store>, settings: ServeSettings) -> Result<Self, AuthorityError> {
        if settings.edge_tokens.is_empty() {
            return Err(AuthorityError::Settings(
                "no edge token: give --edge-token-file FILE (one token per line)".into(),
            ));
        }
        let tls = if settings.tls.is_empty() {
            None
        } else {
            let config = slipstream_gateway::tls_server_config(&settings.tls)
                .map_err(|e| AuthorityError::Settings(e.to_string()))?;
            Some(tokio_rustls::TlsAcceptor::from(config))
        };
        let mut listeners = Vec::new();
        for addr in &settings.listen {
            listeners.push(
                TcpListener::bind(addr).await.map_err(|e| {
                    AuthorityError::Settings(format!("cannot listen on {addr}: {e}"))
                })?,
            );
        }
        let revision = blocking(&store, |s| s.revision()).await?;
        let state = Arc::new(State {
            tokens: settings
                .edge_tokens
                .iter()
                .map(|t| Sha256::digest(t.as_bytes()).into())
                .collect(),
            store,
            revision: watch::Sender::new(revision),
            key_answers: AtomicU64::new(0),
            unknown_answers: AtomicU64::new(0),
            change_answers: AtomicU64::new(0),
            unauthorized: AtomicU64::new(0),
        });
        Ok(Self {
            state,
            listeners,
            tls,
        })
    }

    /// The addresses listened on.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// Serves until the process ends.
    pub async fn run(self) -> Result<(), AuthorityError> {
        let state = Arc::clone(&self.state);
        std::thread::Builder::new()
            .name("slipstream-authority-revision".into())
            .spawn(move || watch_revision(state))
            .map_err(|e| AuthorityError::Store(format!("cannot start a thread: {e}")))?;
        let mut tasks = Vec::new();
        for listener in self.listeners {
            let state = Arc::clone(&self.state);
            let tls = self.tls.clone();
            tasks.push(tokio::spawn(accept(listener, state, tls)));
        }
        for t in tasks {
            let _ = t.await;
        }
        Ok(())
    }
}

async fn accept(listener: TcpListener, state: Arc<State>, tls: Option<tokio_rustls::TlsAcceptor>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(&state);
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = Arc::clone(&state);
                async move { Ok::<_, Infallible>(handle(&state, req).await) }
            });
            let builder = auto::Builder::new(TokioExecutor::new());
            match tls {
                Some(acceptor) => {
                    let Ok(Ok(stream)) =
                        tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream))
                            .await
                    else {
                        return;
                    };
                    let _ = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
                None => {
                    let _ = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
            }
        });
    }
}

/// Reads the store's revision whenever its waiter returns (a NOTIFY from a PostgreSQL replica,
/// or SQLite's poll) and wakes waiting change requests. A thread of its own: the waiter blocks.
fn watch_revision(state: Arc<State>) {
    let mut waiter = state.store.waiter();
    // Said once when reading starts failing and once when it works again, not every poll.
    let mut failing = false;
    loop {
        waiter.wait();
        match state.store.revision() {
            Ok(r) => {
                if std::mem::take(&mut failing) {
                    eprintln!("slipstream authority: the store answers again (revision {r})");
                }
                state.revision.send_if_modified(|held| {
                    let changed = *held != r;
                    *held = r;
                    changed
                });
            }
            Err(e) if !failing => {
                failing = true;
                eprintln!("slipstream authority: reading the revision: {e}");
            }
            Err(_) => {}
        }
    }
}

/// Runs a store call on a blocking thread.
async fn blocking<T: Send + 'static>(
    store: &Arc<Store>,
    call: impl FnOnce(&Store) -> Result<T, AuthorityError> + Send + 'static,
) -> Result<T, AuthorityError> {
    let store = Arc::clone(store);
    tokio::task::spawn_blocking(move || call(&store))
        .await
        .map_err(|e| AuthorityError::Store(e.to_string()))?
}

fn json(status: StatusCode, body: &impl serde::Serialize) -> Response<Full<Bytes>> {
    let text = serde_json::to_vec(body).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn refusal(status: StatusCode, error: &str, message: impl Into<String>) -> Response<Full<Bytes>> {
    json(
        status,
        &Refusal {
            error: error.into(),
            message: message.into(),
        },
    )
}

fn authorized(state: &State, req: &Request<Incoming>) -> bool {
    use subtle::ConstantTimeEq;
    let Some(token) = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let sent: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    state
        .tokens
        .iter()
        .fold(false, |ok, t| ok | bool::from(t.ct_eq(&sent)))
}

fn query_value<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
}

async fn handle(state: &Arc<State>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    if req.method() != hyper::Method::GET {
        return refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "BadRequest",
            "only GET is served",
        );
    }
    match path.as_str() {
        "/healthz" => return Response::new(Full::new(Bytes::from_static(b"ok\n"))),
        "/metrics" => return Response::new(Full::new(Bytes::from(metrics(state)))),
        _ => {}
    }
    if !authorized(state, &req) {
        state.unauthorized.fetch_add(1, Ordering::Relaxed);
        return refusal(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "an edge token is needed (Authorization: Bearer ...)",
        );
    }
    let outcome = if let Some(id) = path.strip_prefix("/v1/keys/") {
        key(state, id, &query).await
    } else if path == "/v1/changes" {
        changes(state, &query).await
    } else {
        Ok(refusal(
            StatusCode::NOT_FOUND,
            "BadRequest",
            "no such endpoint",
        ))
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("slipstream authority: {e}");
        refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "Unavailable",
            "the store failed; see the authority's log",
        )
    })
}

async fn key(
    state: &Arc<State>,
    id: &str,
    query: &str,
) -> Result<Response<Full<Bytes>>, AuthorityError> {
    let Some(region) = query_value(query, "region").filter(|r| plausible_region(r)) else {
        return Ok(refusal(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "give ?region=REGION",
        ));
    };
    let unknown = || {
        refusal(
            StatusCode::NOT_FOUND,
            "NoSuchKey",
            "unknown or disabled access key",
        )
    };
    if !plausible_access_key_id(id) {
        state.unknown_answers.fetch_add(1, Ordering::Relaxed);
        return Ok(unknown());
    }
    let owned = id.to_owned();
    let Some(stored) = blocking(&state.store, move |s| s.get(&owned)).await? else {
        state.unknown_answers.fetch_add(1, Ordering::Relaxed);
        return Ok(unknown());
    };
    let now = slipstream_sign::SigningTime::from_system_time(SystemTime::now())
        .map_err(|e| AuthorityError::Store(e.to_string()))?
        .unix();
    let answer = answer(id, &stored, region, now)?;
    state.key_answers.fetch_add(1, Ordering::Relaxed);
    Ok(json(StatusCode::OK, &answer))
}

async fn changes(state: &Arc<State>, query: &str) -> Result<Response<Full<Bytes>>, AuthorityError> {
    state.change_answers.fetch_add(1, Ordering::Relaxed);
    let mut revision = state.revision.subscribe();
    let Some(after) = query_value(query, "after") else {
        let current = blocking(&state.store, |s| s.revision()).await?;
        return Ok(json(
            StatusCode::OK,
            &Changes {
                revision: current,
                changed: Vec::new(),
                resync: false,
            },
        ));
    };
    let Ok(after) = after.parse::<u64>() else {
        return Ok(refusal(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "after must be a revision number",
        ));
    };
    let wait = query_value(query, "wait")
        .and_then(|w| w.parse::<u64>().ok())
        .unwrap_or(0)
        .min(MAX_WAIT_SECONDS);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    loop {
        revision.borrow_and_update();
        let since = blocking(&state.store, move |s| s.since(after)).await?;
        let answer = match since {
            Since::Resync(r) => Changes {
                revision: r,
                changed: Vec::new(),
                resync: true,
            },
            Since::Changed(r, ids) => Changes {
                revision: r,
                changed: ids,
                resync: false,
            },
        };
        if answer.resync || !answer.changed.is_empty() {
            return Ok(json(StatusCode::OK, &answer));
        }
        if tokio::time::timeout_at(deadline, revision.changed())
            .await
            .is_err()
        {
            return Ok(json(StatusCode::OK, &answer));
        }
    }
}

fn metrics(state: &State) -> String {
    let counters = [
        ("key_answers", "Keys described to edges", &state.key_answers),
        (
            "unknown_answers",
            "Edges told a key is unknown or disabled",
            &state.unknown_answers,
        ),
        (
            "change_requests",
            "Change-stream requests",
            &state.change_answers,
        ),
        (
            "unauthorized",
            "Requests without a valid edge token",
            &state.unauthorized,
        ),
    ];
    let mut out = String::new();
    for (name, help, value) in counters {
        out.push_str(&format!(
            "# HELP authority_{name} {help}.\n# TYPE authority_{name} counter\nauthority_{name}_total {}\n",
            value.load(Ordering::Relaxed)
        ));
    }
    out.push_str(&format!(
        "# HELP authority_revision The store's latest revision.\n# TYPE authority_revision gauge\nauthority_revision {}\n",
        *state.revision.borrow()
    ));
    out
}
