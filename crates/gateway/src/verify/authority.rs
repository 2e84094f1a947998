//! The edge's side of the authority (`slipstream authority serve`): one HTTP/2 connection,
//! dialled with the client crate's connector (TLS with `--authority-ca-bundle`), on which key
//! fetches and the change stream share streams. The bearer token is read from its file at
//! start-up and never logged.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::client::conn::http2;
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use slipstream_client::{ClientOptions, Dialer};

use super::cache::{Cache, Fetch, Fetched, Fetching};
use super::keys::Key;
use crate::authority_wire::{
    plausible_access_key_id, Changes, KeyAnswer, Refusal, MAX_WAIT_SECONDS,
};

/// A fetch that takes longer fails (the request is refused, or served stale).
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest answer read from the authority.
const MAX_ANSWER: usize = 1 << 20;
/// How long a change request waits at the authority.
const CHANGE_WAIT: u64 = 25;

/// Talks to the authority.
pub(crate) struct Authority {
    base: Uri,
    token: String,
    region: String,
    dialer: Dialer,
    connection: tokio::sync::Mutex<Option<http2::SendRequest<Empty<Bytes>>>>,
    /// The last failure reported on stderr, so an outage is reported once, not per request.
    reported: Mutex<Option<String>>,
}

impl Authority {
    /// `url` is the authority's base (`https://authority.example:9470`), `token` the edge's.
    pub(crate) fn new(
        url: &str,
        token: String,
        ca_bundle: Option<&std::path::Path>,
        region: &str,
    ) -> Result<Self, String> {
        let base: Uri = url
            .trim_end_matches('/')
            .parse()
            .map_err(|e| format!("--authority {url:?} is not a URL: {e}"))?;
        if !matches!(base.scheme_str(), Some("http" | "https"))
            || base.host().is_none()
            || !matches!(base.path(), "" | "/")
        {
            return Err(format!(
                "--authority {url:?} must be an http:// or https:// URL with a host and no path"
            ));
        }
        let options = ClientOptions {
            connect_timeout: FETCH_TIMEOUT,
            ..ClientOptions::default()
        };
        let dialer = Dialer::new(&options, ca_bundle, true)
            .map_err(|e| format!("--authority-ca-bundle: {e}"))?;
        Ok(Self {
            base,
            token,
            region: region.to_owned(),
            dialer,
            connection: tokio::sync::Mutex::new(None),
            reported: Mutex::new(None),
        })
    }

    /// The open connection, or a new one.
    async fn sender(&self) -> Result<http2::SendRequest<Empty<Bytes>>, String> {
        let mut held = self.connection.lock().await;
        if let Some(s) = held.as_ref().filter(|s| !s.is_closed()) {
            return Ok(s.clone());
        }
        let dialled = self
            .dialer
            .dial(&self.base)
            .await
            .map_err(|e| format!("cannot connect to the authority {}: {e}", self.base))?;
        if self.base.scheme_str() == Some("https") && !dialled.h2 {
            return Err(format!(
                "the authority {} did not offer HTTP/2 in TLS",
                self.base
            ));
        }
        if let Err(e) = dialled.tcp().set_nodelay(true) {
            return Err(format!("TCP_NODELAY: {e}"));
        }
        let mut builder = http2::Builder::new(TokioExecutor::new());
        builder
            .timer(TokioTimer::new())
            .keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(FETCH_TIMEOUT)
            .keep_alive_while_idle(true);
        let (send, conn) = builder
            .handshake(dialled.stream)
            .await
            .map_err(|e| format!("HTTP/2 handshake with the authority {}: {e}", self.base))?;
        tokio::spawn(conn);
        *held = Some(send.clone());
        Ok(send)
    }

    /// GET `path_and_query`: the status and body.
    async fn get(
        &self,
        path_and_query: &str,
        timeout: Duration,
    ) -> Result<(StatusCode, Bytes), String> {
        let uri = format!(
            "{}://{}{path_and_query}",
            self.base.scheme_str().unwrap_or("https"),
            self.base.authority().map_or("", |a| a.as_str())
        );
        let request = Request::get(&uri)
            .header("authorization", format!("Bearer {}", self.token))
            .body(Empty::new())
            .map_err(|e| e.to_string())?;
        let exchange = async {
            let mut send = self.sender().await?;
            let response = send
                .send_request(request)
                .await
                .map_err(|e| format!("the authority {}: {e}", self.base))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER)
                .collect()
                .await
                .map_err(|e| format!("the authority's answer: {e}"))?
                .to_bytes();
            Ok::<_, String>((status, body))
        };
        let outcome = tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "the authority {} did not answer within {timeout:?}",
                    self.base
                ))
            });
        self.report(&outcome);
        outcome
    }

    /// Says on stderr when the authority stops or starts answering (once per change).
    fn report(&self, outcome: &Result<(StatusCode, Bytes), String>) {
        let mut last = match self.reported.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        match outcome {
            Err(e) if last.as_deref() != Some(e) => {
                eprintln!("slipstream gateway: {e}");
                *last = Some(e.clone());
            }
            Ok(_) if last.is_some() => {
                eprintln!(
                    "slipstream gateway: the authority {} answers again",
                    self.base
                );
                *last = None;
            }
            _ => {}
        }
    }

    async fn fetch_key(&self, access_key_id: &str) -> Fetched {
        if !plausible_access_key_id(access_key_id) {
            return Ok(None);
        }
        let path = format!("/v1/keys/{access_key_id}?region={}", self.region);
        let (status, body) = self.get(&path, FETCH_TIMEOUT).await?;
        match status {
            StatusCode::OK => {
                let answer: KeyAnswer = serde_json::from_slice(&body)
                    .map_err(|e| format!("the authority's answer is not a key: {e}"))?;
                if answer.access_key_id != access_key_id || answer.region != self.region {
                    return Err("the authority answered for another key or region".into());
                }
                Ok(Some(Arc::new(Key::from_answer(answer)?)))
            }
            // Only the authority's own "no such key": a 404 from anything else (a proxy, a wrong
            // URL) is a failure, not a verdict on the key.
            StatusCode::NOT_FOUND
                if serde_json::from_slice::<Refusal>(&body)
                    .is_ok_and(|r| r.error == "NoSuchKey") =>
            {
                Ok(None)
            }
            other => Err(format!(
                "the authority answered {other}: {}",
                String::from_utf8_lossy(&body)
                    .chars()
                    .take(200)
                    .collect::<String>()
            )),
        }
    }

    /// The changes after `after` (`None`: the current revision).
    async fn changes(&self, after: Option<u64>) -> Result<Changes, String> {
        let path = match after {
            Some(n) => format!("/v1/changes?after={n}&wait={CHANGE_WAIT}"),
            None => "/v1/changes".to_owned(),
        };
        let timeout = Duration::from_secs(MAX_WAIT_SECONDS) + FETCH_TIMEOUT;
        let (status, body) = self.get(&path, timeout).await?;
        if status != StatusCode::OK {
            return Err(format!("the authority's change stream answered {status}"));
        }
        serde_json::from_slice(&body).map_err(|e| format!("the authority's change stream: {e}"))
    }

    /// Follows the change stream for as long as the edge runs, dropping what changed from the
    /// cache. After an outage it asks from the last revision seen: the authority answers the
    /// changes missed, or a resync when it no longer has them.
    pub(crate) async fn follow(self: Arc<Self>, cache: Arc<Cache>) {
        let mut seen: Option<u64> = None;
        let mut pause = Duration::from_millis(250);
        loop {
            match self.changes(seen).await {
                Ok(changes) => {
                    pause = Duration::from_millis(250);
                    if changes.resync {
                        cache.invalidate_all();
                    } else if !changes.changed.is_empty() {
                        cache.invalidate(changes.changed.iter().map(String::as_str));
                    }
                    seen = Some(changes.revision);
                }
                Err(_) => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

/// The fetcher the cache calls.
pub(crate) struct Fetcher(pub(crate) Arc<Authority>);

impl Fetch for Fetcher {
    fn fetch(&self, access_key_id: &str) -> Fetching {
        let authority = Arc::clone(&self.0);
        let id = access_key_id.to_owned();
        Box::pin(async move { authority.fetch_key(&id).await })
    }
}
