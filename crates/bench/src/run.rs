//! Running a workload against a server: set-up, warm-up, the measured phase, clean-up.
//!
//! Each worker is one task with its own connection (pooled mode: kept for the run; fresh mode:
//! a new one per request), so concurrency is exactly the number of requests in flight. Closed
//! loop: a worker starts its next request when the previous one ends. Open loop (`--rate`):
//! request `n` is due at `start + n / rate` whatever happened before, and its latency counts
//! from then, so a server that falls behind shows its queueing delay instead of hiding it
//! (coordinated omission).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use slipstream_client::{ClientError, ClientOptions, Resolved, S3Client};
use slipstream_sign::Credentials;
use tokio::task::JoinSet;

use crate::conn::{ConnectError, Target};
use crate::error::BenchError;
use crate::record::{Recorder, Sample};
use crate::report::Report;
use crate::request::{Op, OpKind, Requests};
use crate::settings::{ConnectionMode, Settings};
use crate::workload::{Keys, Planner, Workload};

/// Everything the workers share.
struct Shared {
    requests: Requests,
    target: Target,
    next: AtomicU64,
    settings: Settings,
}

/// One worker's state between phases.
struct Worker {
    conn: Option<crate::conn::Conn>,
    planner: Planner,
}

/// Where a phase stops.
#[derive(Clone, Copy)]
struct Phase {
    first: u64,
    end: Option<u64>,
    deadline: Option<Instant>,
    start: Instant,
}

/// Runs `settings` against the server `config` points at, signing with `credentials`.
pub async fn run(
    settings: Settings,
    config: &Resolved,
    credentials: Credentials,
) -> Result<Report, BenchError> {
    let s = &settings;
    if s.workload == Workload::Delete && s.count.is_none() {
        return Err(BenchError::Settings(
            "delete needs --count (each object is deleted once)".into(),
        ));
    }
    // SigV4A where a region set is configured, as the client signs: what it costs a client,
    // and an edge verifying it.
    let signer = slipstream_client::request_signer(
        credentials,
        &config.region,
        config.region_set.as_deref(),
    )
    .map_err(|e| BenchError::Config(e.to_string()))?;
    let base = config
        .url_base(&s.bucket)
        .map_err(|e| BenchError::Config(e.to_string()))?;
    let target = Target::new(
        &base.origin,
        config.ca_bundle.as_deref(),
        s.tls,
        s.connection == ConnectionMode::Pooled,
    )
    .await
    .map_err(BenchError::Config)?;
    let payload = random_payload(s.size);
    let keys = Keys {
        root: s.prefix.clone().unwrap_or_else(|| {
            format!(
                "slipstream-bench/{}-{:08x}/",
                std::process::id(),
                fastrand::u32(..)
            )
        }),
        prefixes: s.prefixes.max(1),
    };
    // Set-up goes where the measured requests go: straight to the server, whatever proxies
    // the environment names.
    let direct = slipstream_client::Resolved {
        proxies: None,
        ..config.clone()
    };
    let client = Arc::new(
        S3Client::new(&direct, ClientOptions::default())
            .map_err(|e| BenchError::Config(e.to_string()))?,
    );
    ensure_bucket(&client, &s.bucket).await?;
    let fixtures = s
        .workload
        .fixtures(s.objects, s.warmup + s.count.unwrap_or(0));
    upload_fixtures(&client, &s.bucket, &keys, fixtures, &payload).await?;

    let shared = Arc::new(Shared {
        requests: Requests::new(signer, base.clone(), payload),
        target,
        next: AtomicU64::new(0),
        settings: settings.clone(),
    });
    let mut workers: Vec<Worker> = (0..s.concurrency)
        .map(|w| Worker {
            conn: None,
            planner: Planner::new(s.workload.clone(), keys.clone(), fixtures, w as u64 + 1),
        })
        .collect();
    if s.warmup > 0 {
        if s.connection == ConnectionMode::Pooled {
            // Every worker opens its connection before the warm-up's operations, which come
            // from a shared counter: under load the workers that started first could take
            // them all, and another worker's handshake would then land in the measured phase.
            workers = connect_all(&shared, workers).await;
        }
        let phase = Phase {
            first: 0,
            end: Some(s.warmup),
            deadline: None,
            start: Instant::now(),
        };
        workers = run_phase(&shared, workers, phase, None).await;
    }
    shared.next.store(s.warmup, Ordering::Relaxed);
    if let Some(idle) = s.idle {
        tokio::time::sleep(idle).await;
    }
    let start = Instant::now();
    let phase = Phase {
        first: s.warmup,
        end: s.count.map(|c| s.warmup + c),
        deadline: s.duration.map(|d| start + d),
        start,
    };
    let recorder = Arc::new(Recorder::new(start));
    let progress = (s.progress && std::io::stderr().is_terminal())
        .then(|| tokio::spawn(crate::progress::live(Arc::clone(&recorder), start)));
    drop(run_phase(&shared, workers, phase, Some(Arc::clone(&recorder))).await);
    let elapsed = start.elapsed();
    if let Some(p) = progress {
        p.abort();
        eprintln!();
    }
    let report = Report::new(&settings, &base.origin, elapsed, recorder.totals());
    if s.cleanup {
        cleanup(&client, &s.bucket, &keys.root).await?;
    }
    Ok(report)
}

/// Runs every worker until the phase ends; returns them (with their connections) for the next.
/// Each worker with a connection of its own (one that fails to open is left to the worker's
/// first operation, which reports the error).
async fn connect_all(shared: &Arc<Shared>, workers: Vec<Worker>) -> Vec<Worker> {
    let mut tasks = JoinSet::new();
    for mut w in workers {
        let shared = Arc::clone(shared);
        tasks.spawn(async move {
            if w.conn.is_none() {
                w.conn = shared.target.connect().await.ok().map(|(c, _)| c);
            }
            w
        });
    }
    let mut out = Vec::new();
    while let Some(done) = tasks.join_next().await {
        if let Ok(w) = done {
            out.push(w);
        }
    }
    out
}

async fn run_phase(
    shared: &Arc<Shared>,
    workers: Vec<Worker>,
    phase: Phase,
    recorder: Option<Arc<Recorder>>,
) -> Vec<Worker> {
    let mut tasks = JoinSet::new();
    for mut w in workers {
        let shared = Arc::clone(shared);
        let recorder = recorder.clone();
        tasks.spawn(async move {
            w.work(&shared, phase, recorder.as_deref()).await;
            w
        });
    }
    let mut out = Vec::new();
    while let Some(done) = tasks.join_next().await {
        if let Ok(w) = done {
            out.push(w);
        }
    }
    out
}

impl Worker {
    async fn work(&mut self, shared: &Shared, phase: Phase, recorder: Option<&Recorder>) {
        let s = &shared.settings;
        loop {
            let i = shared.next.fetch_add(1, Ordering::Relaxed);
            if phase.end.is_some_and(|end| i >= end) {
                return;
            }
            let due = s
                .rate
                .filter(|_| recorder.is_some())
                .map(|r| phase.start + Duration::from_secs_f64((i - phase.first) as f64 / r));
            if let (Some(due), Some(deadline)) = (due, phase.deadline) {
                if due >= deadline {
                    return;
                }
            }
            if phase.deadline.is_some_and(|d| Instant::now() >= d) {
                return;
            }
            if let Some(due) = due {
                tokio::time::sleep_until(due.into()).await;
            }
            for (n, op) in self.planner.ops(i).into_iter().enumerate() {
                let start = due.filter(|_| n == 0).unwrap_or_else(Instant::now);
                let result = tokio::time::timeout(s.timeout, self.execute(shared, &op, start))
                    .await
                    .unwrap_or_else(|_| Err(format!("timeout after {:?}", s.timeout)));
                let end = Instant::now();
                if result.is_err() || s.connection == ConnectionMode::Fresh {
                    self.conn = None;
                }
                match (result, recorder) {
                    (Ok(sample), Some(r)) => r.ok(op.kind, &sample, end),
                    (Err(e), Some(r)) => r.error(op.kind, e, end),
                    _ => {}
                }
            }
        }
    }

    /// One request, timed phase by phase; `Err` says what failed, briefly (errors are counted
    /// by this text).
    async fn execute(
        &mut self,
        shared: &Shared,
        op: &Op,
        start: Instant,
    ) -> Result<Sample, String> {
        let mut sample = Sample::default();
        let conn = match &mut self.conn {
            Some(c) => c,
            none => {
                let (c, setup) = shared.target.connect().await.map_err(|e| match e {
                    ConnectError::Connect(e) => format!("connect: {e}"),
                    ConnectError::Tls(e) => format!("tls: {e}"),
                })?;
                sample.connect = Some(setup.connect);
                sample.tls = setup.tls;
                none.insert(c)
            }
        };
        let request = shared.requests.build(op)?;
        conn.arm();
        let handed = Instant::now();
        conn.sender
            .ready()
            .await
            .map_err(|e| format!("connection closed: {e}"))?;
        let response = conn
            .sender
            .send_request(request)
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let status = response.status();
        let mut body = response.into_body();
        let mut received = 0u64;
        let mut error_body = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("response body: {e}"))?;
            if let Some(data) = frame.data_ref() {
                received += data.len() as u64;
                if !status.is_success() && error_body.len() < 64 * 1024 {
                    error_body.extend_from_slice(data);
                }
            }
        }
        let end = Instant::now();
        if !status.is_success() {
            let code = slipstream_client::xml::error(&error_body)
                .map(|(code, _)| format!(" {code}"))
                .unwrap_or_default();
            return Err(format!("HTTP {}{code}", status.as_u16()));
        }
        let (written, first) = conn.marks();
        let first = first.unwrap_or(end);
        sample.latency = end - start;
        sample.ttfb = first.saturating_duration_since(start);
        sample.send = written.map(|w| w.saturating_duration_since(handed));
        sample.wait = written.map(|w| first.saturating_duration_since(w));
        sample.body = end - first;
        sample.bytes = match op.kind {
            OpKind::Put => shared.settings.size,
            OpKind::Get => received,
            _ => 0,
        };
        Ok(sample)
    }
}

/// Bytes that do not compress, so no layer can cheat.
fn random_payload(size: u64) -> Bytes {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let mut v = vec![0u8; size as usize];
    rng.fill(&mut v);
    Bytes::from(v)
}

async fn ensure_bucket(client: &S3Client, bucket: &str) -> Result<(), BenchError> {
    match client.create_bucket(bucket).await {
        Ok(()) => Ok(()),
        Err(ClientError::S3 { code, .. })
            if code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" =>
        {
            Ok(())
        }
        Err(e) => Err(BenchError::server(format!("cannot create bucket {bucket}"))(e)),
    }
}

/// Uploads `n` objects of the payload, 16 at a time (with the client's retries).
async fn upload_fixtures(
    client: &Arc<S3Client>,
    bucket: &str,
    keys: &Keys,
    n: u64,
    payload: &Bytes,
) -> Result<(), BenchError> {
    each((0..n).collect(), 16, |i| {
        let (client, key, payload, bucket) = (
            Arc::clone(client),
            keys.fixture(i),
            payload.clone(),
            bucket.to_owned(),
        );
        async move {
            client
                .put_object(&bucket, &key, payload, Default::default())
                .await
                .map(drop)
                .map_err(BenchError::server("uploading the objects to read"))
        }
    })
    .await
}

/// Deletes every object under `root`, 16 at a time.
async fn cleanup(client: &Arc<S3Client>, bucket: &str, root: &str) -> Result<(), BenchError> {
    let objects = client
        .list_all(bucket, root)
        .await
        .map_err(BenchError::server(format!("listing {root} for clean-up")))?;
    each(objects, 16, |o| {
        let (client, bucket) = (Arc::clone(client), bucket.to_owned());
        async move {
            client
                .delete_object(&bucket, &o.key)
                .await
                .map_err(BenchError::server(format!("clean-up of {}", o.key)))
        }
    })
    .await
}

/// Runs `job` on every item, `width` at a time; stops at the first error.
async fn each<T, F, Fut>(items: Vec<T>, width: usize, job: F) -> Result<(), BenchError>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<(), BenchError>> + Send + 'static,
{
    let mut tasks = JoinSet::new();
    for item in items {
        if tasks.len() >= width {
            if let Some(r) = tasks.join_next().await {
                r.map_err(|e| BenchError::Local(e.to_string()))??;
            }
        }
        tasks.spawn(job(item));
    }
    while let Some(r) = tasks.join_next().await {
        r.map_err(|e| BenchError::Local(e.to_string()))??;
    }
    Ok(())
}
