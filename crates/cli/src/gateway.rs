//! `slipstream gateway`: its flags, its TOML file (`--config`; flags win), and running it until
//! SIGTERM or Ctrl-C (drained), with SIGHUP reloading the certificates.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::Deserialize;
use slipstream_gateway::{CertFiles, Gateway, KeySettings, Settings};

use crate::flags::{parse_duration, parse_size, parse_timeout};
use crate::Failure;

pub const GATEWAY_EXAMPLES: &str = "\
Examples:
  slipstream gateway --listen 127.0.0.1:8443 --tls-cert edge.pem --tls-key edge-key.pem \\
      --origin https://s3.example.com:9000 --metrics-listen 127.0.0.1:9464
  slipstream gateway --config edge.toml --upstream-min-idle 32
  slipstream gateway --listen 0.0.0.0:8080 --origin http://10.0.0.5:7070   (plain HTTP, behind a balancer)

The gateway forwards S3 requests unchanged (the origin authenticates them; it must accept the
gateway's host name, which clients sign) over connections to the origin it keeps open and warm.
Several --tls-cert/--tls-key pairs are chosen by SNI; SIGHUP re-reads them. SIGTERM or Ctrl-C
stop accepting and let requests in flight finish (--drain-timeout). /metrics and /healthz are
served on --metrics-listen only. Exit codes: 0 stopped, 2 flags, files or listeners.";

/// `slipstream gateway`. Every flag can also be set in the --config file, under the same name.
#[derive(Args, Debug, Default)]
pub struct GatewayArgs {
    /// A TOML file with these settings (keys named as the flags, e.g. `origin = "https://..."`,
    /// `listen = ["127.0.0.1:8443"]`, `[[tls]] cert = "a.pem" key = "a-key.pem"`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Accept clients here (repeat for several).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Vec<SocketAddr>,
    /// A PEM certificate chain to serve (repeat, paired in order with --tls-key). Without one
    /// the listeners speak plain HTTP.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Vec<PathBuf>,
    /// The PEM private key of the --tls-cert in the same position.
    #[arg(long, value_name = "FILE")]
    pub tls_key: Vec<PathBuf>,
    /// The origin, `http[s]://host[:port]`.
    #[arg(long, value_name = "URL")]
    pub origin: Option<String>,
    /// Trust only these PEM certificates for the origin's TLS (else the Mozilla roots).
    #[arg(long, value_name = "FILE")]
    pub origin_ca_bundle: Option<PathBuf>,
    /// Serve /metrics (Prometheus) and /healthz here.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<SocketAddr>,
    /// Idle upstream connections kept open and ready [default: the most requests in flight at
    /// once over the last minute, at least 4].
    #[arg(long, value_name = "N")]
    pub upstream_min_idle: Option<usize>,
    /// Keep-alive request on an idle upstream connection after this long; 0 for none [default: 15s].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub upstream_keepalive: Option<Duration>,
    /// The most idle upstream connections kept [default: 256].
    #[arg(long, value_name = "N")]
    pub upstream_max_idle: Option<usize>,
    /// Do not offer HTTP/2 to the origin.
    #[arg(long)]
    pub no_upstream_h2: bool,
    /// Give up dialling the origin after this long (answered 503) [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub connect_timeout: Option<Duration>,
    /// Give up on the origin's answer this long after a request's last byte (answered 504)
    /// [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub origin_timeout: Option<Duration>,
    /// A client's TLS handshake must end within this long [default: 10s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub handshake_timeout: Option<Duration>,
    /// A client must send a request's headers within this long; idle HTTP/1.1 connections are
    /// closed after it [default: 30s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub header_timeout: Option<Duration>,
    /// The largest request head accepted (431 beyond) [default: 64KiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_header_bytes: Option<u64>,
    /// The most client connections open at once; more are closed on accept [default: 10000].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// On SIGTERM, requests in flight get this long to finish [default: 30s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub drain_timeout: Option<Duration>,
    /// Threads serving connections, each with its own share of them and of the upstream pool
    /// [default: one per core] (docs/GATEWAY.md).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Write the access log (JSON lines) to this file, or - for standard output.
    #[arg(long, value_name = "FILE")]
    pub access_log: Option<PathBuf>,
    /// `pass-through` (the origin authenticates) or `verify` (the edge authenticates and
    /// authorizes every request with --keys, and signs it for the origin) [default: pass-through].
    #[arg(long, value_name = "MODE")]
    pub mode: Option<Mode>,
    /// Verify mode: the keys file (TOML: access keys, secrets, policies; see docs/GATEWAY.md),
    /// reloaded when it changes and on SIGHUP.
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
    /// Verify mode: the authority's URL (`slipstream authority serve`), instead of --keys: the
    /// edge caches what it says of each key (per-day keys, public keys, policies; no secret).
    #[arg(long, value_name = "URL")]
    pub authority: Option<String>,
    /// With --authority: the file holding the edge's bearer token for it.
    #[arg(long, value_name = "FILE")]
    pub authority_token_file: Option<PathBuf>,
    /// With --authority: certificates (PEM) to trust for it instead of the Mozilla roots.
    #[arg(long, value_name = "FILE")]
    pub authority_ca_bundle: Option<PathBuf>,
    /// With --authority: keys cached for less than this are used without asking; older ones
    /// are used while one background refresh runs (jittered ±25%) [default: 5m; 0: never
    /// used without asking].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub key_cache_soft_ttl: Option<Duration>,
    /// With --authority: keys cached for longer are fetched before answering; if the authority
    /// cannot be reached the request is refused [default: 10m; 0 with a soft TTL of 0: every
    /// request asks the authority, concurrent ones sharing one answer].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub key_cache_hard_ttl: Option<Duration>,
    /// With --authority: an unknown access key is not asked about again for this long [default: 30s].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub key_cache_negative_ttl: Option<Duration>,
    /// With --authority: keep using cached keys for this long past the hard TTL while the
    /// authority cannot be reached (S3 on Outposts: 12h) [default: 0s, off].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub key_cache_disconnected: Option<Duration>,
    /// Verify mode: the region clients sign for [default: us-east-1].
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// Verify mode: the region the origin checks signatures for [default: the profile's, else
    /// AWS_REGION, else us-east-1].
    #[arg(long, value_name = "REGION")]
    pub origin_region: Option<String>,
    /// Verify mode: the profile of the gateway's own credentials for the origin (else the AWS
    /// chain: AWS_ACCESS_KEY_ID..., AWS_PROFILE, the shared files, instance roles).
    #[arg(long, value_name = "NAME")]
    pub origin_profile: Option<String>,
    /// Verify mode: clients may address a bucket as BUCKET.DOMAIN (virtual-hosted style, as
    /// boto3 does for an endpoint with a DNS name); repeatable. Requests to other hosts are
    /// path style. The origin is sent path-style requests either way.
    #[arg(long, value_name = "DOMAIN")]
    pub virtual_host_domain: Vec<String>,
}

/// How the gateway treats requests.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Forwarded as they came; the origin authenticates.
    PassThrough,
    /// Authenticated and authorized at the edge, then signed for the origin.
    Verify,
}

/// The --config file: the flags' names, durations and sizes as strings ("15s", "64KiB").
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct File {
    listen: Option<Vec<SocketAddr>>,
    tls: Option<Vec<FileCert>>,
    origin: Option<String>,
    origin_ca_bundle: Option<PathBuf>,
    metrics_listen: Option<SocketAddr>,
    upstream_min_idle: Option<usize>,
    upstream_keepalive: Option<String>,
    upstream_max_idle: Option<usize>,
    upstream_h2: Option<bool>,
    connect_timeout: Option<String>,
    origin_timeout: Option<String>,
    handshake_timeout: Option<String>,
    header_timeout: Option<String>,
    max_header_bytes: Option<String>,
    max_connections: Option<usize>,
    drain_timeout: Option<String>,
    threads: Option<usize>,
    access_log: Option<PathBuf>,
    mode: Option<Mode>,
    keys: Option<PathBuf>,
    authority: Option<String>,
    authority_token_file: Option<PathBuf>,
    authority_ca_bundle: Option<PathBuf>,
    key_cache_soft_ttl: Option<String>,
    key_cache_hard_ttl: Option<String>,
    key_cache_negative_ttl: Option<String>,
    key_cache_disconnected: Option<String>,
    region: Option<String>,
    origin_region: Option<String>,
    origin_profile: Option<String>,
    virtual_host_domains: Option<Vec<String>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileCert {
    cert: PathBuf,
    key: PathBuf,
}

pub fn run(args: &GatewayArgs) -> Result<(), Failure> {
    let file = file(args)?;
    let settings = settings_from(args, file)?;
    // This thread accepts, writes the access log, talks to the authority and handles signals;
    // the gateway's worker threads serve the connections.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(serve(settings))
}

/// The threads serving connections, if set: the flag, else the file.
fn threads(args: &GatewayArgs, file: &File) -> Result<Option<usize>, Failure> {
    match args.threads.or(file.threads) {
        Some(0) => Err(Failure::usage(
            "--threads 0: the gateway needs at least one thread",
        )),
        n => Ok(n),
    }
}

async fn serve(settings: Settings) -> Result<(), Failure> {
    use tokio::signal::unix::{signal, SignalKind};
    let scheme = if settings.tls.is_empty() {
        "http"
    } else {
        "https"
    };
    let origin = settings.origin.clone();
    let mode = match &settings.verify {
        Some(v) => match &v.keys {
            KeySettings::File(path) => format!("verifying, keys from {}", path.display()),
            KeySettings::Authority(a) => format!("verifying, keys from the authority {}", a.url),
        },
        None => "pass-through".to_owned(),
    };
    let gateway = Gateway::bind(settings)
        .await
        .map_err(|e| Failure::usage(e.to_string()))?;
    for addr in gateway.local_addrs() {
        eprintln!(
            "slipstream gateway: listening on {scheme}://{addr}, forwarding to {origin} ({mode})"
        );
    }
    if let Some(addr) = gateway.metrics_addr() {
        eprintln!("slipstream gateway: metrics on http://{addr}/metrics");
    }
    let reloader = gateway.reloader();
    let mut hangup = signal(SignalKind::hangup()).map_err(|e| Failure::usage(e.to_string()))?;
    tokio::spawn(async move {
        while hangup.recv().await.is_some() {
            match reloader.reload() {
                Ok(done) if done.is_empty() => {}
                Ok(done) => eprintln!("slipstream gateway: {done}"),
                Err(e) => {
                    eprintln!("slipstream gateway: reload failed, keeping what is in use: {e}")
                }
            }
        }
    });
    let mut term = signal(SignalKind::terminate()).map_err(|e| Failure::usage(e.to_string()))?;
    let mut interrupt =
        signal(SignalKind::interrupt()).map_err(|e| Failure::usage(e.to_string()))?;
    gateway
        .serve(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
            eprintln!(
                "slipstream gateway: stopping: no new connections, finishing requests in flight"
            );
        })
        .await;
    eprintln!("slipstream gateway: stopped");
    Ok(())
}

/// The --config file, or nothing set.
fn file(args: &GatewayArgs) -> Result<File, Failure> {
    let Some(path) = &args.config else {
        return Ok(File::default());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("--config {}: {e}", path.display())))?;
    toml::from_str::<File>(&text)
        .map_err(|e| Failure::usage(format!("--config {}: {e}", path.display())))
}

/// `file`'s settings under the flags'.
fn settings_from(args: &GatewayArgs, file: File) -> Result<Settings, Failure> {
    let threads = threads(args, &file)?;
    let in_file =
        |key: &str, value: &Option<String>, parse: fn(&str) -> Result<Duration, String>| {
            value
                .as_deref()
                .map(|v| parse(v).map_err(|e| Failure::usage(format!("--config: {key}: {e}"))))
                .transpose()
        };
    let origin = args.origin.clone().or(file.origin).ok_or_else(|| {
        Failure::usage(
            "no origin: give --origin https://s3.example.com (or origin = \"...\" in --config)",
        )
    })?;
    let listen = if args.listen.is_empty() {
        file.listen.unwrap_or_default()
    } else {
        args.listen.clone()
    };
    let Some(first) = listen.first() else {
        return Err(Failure::usage(
            "no listener: give --listen 127.0.0.1:8443 (or listen = [\"...\"] in --config)",
        ));
    };
    let mut s = Settings::new(*first, origin);
    s.listen = listen;
    s.tls = tls(args, file.tls)?;
    s.origin_ca_bundle = args.origin_ca_bundle.clone().or(file.origin_ca_bundle);
    s.metrics_listen = args.metrics_listen.or(file.metrics_listen);
    if let Some(n) = threads {
        s.threads = n;
    }
    s.upstream_min_idle = args.upstream_min_idle.or(file.upstream_min_idle);
    if let Some(d) = args.upstream_keepalive.or(in_file(
        "upstream-keepalive",
        &file.upstream_keepalive,
        parse_timeout,
    )?) {
        s.upstream_keepalive = d;
    }
    if let Some(n) = args.upstream_max_idle.or(file.upstream_max_idle) {
        s.upstream_max_idle = n;
    }
    s.upstream_h2 = !args.no_upstream_h2 && file.upstream_h2.unwrap_or(true);
    let durations = [
        (
            args.connect_timeout,
            "connect-timeout",
            &file.connect_timeout,
            &mut s.connect_timeout,
        ),
        (
            args.origin_timeout,
            "origin-timeout",
            &file.origin_timeout,
            &mut s.origin_timeout,
        ),
        (
            args.handshake_timeout,
            "handshake-timeout",
            &file.handshake_timeout,
            &mut s.handshake_timeout,
        ),
        (
            args.header_timeout,
            "header-timeout",
            &file.header_timeout,
            &mut s.header_timeout,
        ),
        (
            args.drain_timeout,
            "drain-timeout",
            &file.drain_timeout,
            &mut s.drain_timeout,
        ),
    ];
    for (flag, key, value, target) in durations {
        if let Some(d) = flag.or(in_file(key, value, parse_duration)?) {
            *target = d;
        }
    }
    let header_bytes = match (args.max_header_bytes, &file.max_header_bytes) {
        (Some(n), _) => Some(n),
        (None, Some(v)) => Some(
            parse_size(v)
                .map_err(|e| Failure::usage(format!("--config: max-header-bytes: {e}")))?,
        ),
        (None, None) => None,
    };
    if let Some(n) = header_bytes {
        s.max_header_bytes = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(n) = args.max_connections.or(file.max_connections) {
        s.max_connections = n;
    }
    s.access_log = args.access_log.clone().or(file.access_log);
    s.verify = crate::gateway_keys::verify_settings(
        args,
        crate::gateway_keys::FileKeys {
            mode: file.mode,
            keys: file.keys,
            authority: file.authority,
            authority_token_file: file.authority_token_file,
            authority_ca_bundle: file.authority_ca_bundle,
            key_cache_soft_ttl: file.key_cache_soft_ttl,
            key_cache_hard_ttl: file.key_cache_hard_ttl,
            key_cache_negative_ttl: file.key_cache_negative_ttl,
            key_cache_disconnected: file.key_cache_disconnected,
            region: file.region,
            origin_region: file.origin_region,
            origin_profile: file.origin_profile,
            virtual_host_domains: file.virtual_host_domains,
        },
    )?;
    Ok(s)
}

/// The certificate pairs: the flags' (in order), else the file's.
fn tls(args: &GatewayArgs, file: Option<Vec<FileCert>>) -> Result<Vec<CertFiles>, Failure> {
    if args.tls_cert.len() != args.tls_key.len() {
        return Err(Failure::usage(format!(
            "{} --tls-cert but {} --tls-key: give one key per certificate, in the same order",
            args.tls_cert.len(),
            args.tls_key.len()
        )));
    }
    if !args.tls_cert.is_empty() {
        return Ok(args
            .tls_cert
            .iter()
            .zip(&args.tls_key)
            .map(|(cert, key)| CertFiles {
                cert: cert.clone(),
                key: key.clone(),
            })
            .collect());
    }
    Ok(file
        .unwrap_or_default()
        .into_iter()
        .map(|c| CertFiles {
            cert: c.cert,
            key: c.key,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn with_file(text: &str) -> (tempfile::NamedTempFile, GatewayArgs) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let args = GatewayArgs {
            config: Some(f.path().to_owned()),
            ..Default::default()
        };
        (f, args)
    }

    #[test]
    fn flags_win_over_the_file() {
        let (_f, mut args) = with_file(
            "origin = \"http://127.0.0.1:7070\"\nlisten = [\"127.0.0.1:8080\"]\nupstream-keepalive = \"10s\"\nmax-header-bytes = \"16KiB\"\n[[tls]]\ncert = \"a.pem\"\nkey = \"a.key\"\n",
        );
        let s = settings_from(&args, file(&args).unwrap()).unwrap();
        assert_eq!(s.origin, "http://127.0.0.1:7070");
        assert_eq!(s.upstream_keepalive, Duration::from_secs(10));
        assert_eq!(s.max_header_bytes, 16 * 1024);
        assert_eq!(s.tls[0].cert, PathBuf::from("a.pem"));
        args.origin = Some("https://o.example".into());
        args.upstream_keepalive = Some(Duration::ZERO);
        args.listen = vec!["127.0.0.1:9".parse().unwrap()];
        let s = settings_from(&args, file(&args).unwrap()).unwrap();
        assert_eq!(s.origin, "https://o.example");
        assert_eq!(s.upstream_keepalive, Duration::ZERO);
        assert_eq!(s.listen, vec!["127.0.0.1:9".parse::<SocketAddr>().unwrap()]);
    }

    #[test]
    fn mistakes_say_what_to_fix() {
        let message = |args: &GatewayArgs| match file(args).and_then(|f| settings_from(args, f)) {
            Err(f) => (f.code, f.message),
            Ok(_) => panic!("accepted"),
        };
        let (_f, args) =
            with_file("origin = \"http://h\"\nlisten = [\"127.0.0.1:1\"]\nlisen = 3\n");
        let (code, m) = message(&args);
        assert_eq!(code, 2);
        assert!(m.contains("unknown field") && m.contains("lisen"), "{m}");
        let (_f, args) = with_file(
            "origin = \"http://h\"\nlisten = [\"127.0.0.1:1\"]\norigin-timeout = \"soon\"\n",
        );
        assert!(message(&args).1.contains("origin-timeout"));
        let args = GatewayArgs {
            origin: Some("http://h".into()),
            ..Default::default()
        };
        assert!(message(&args).1.contains("--listen"));
        let args = GatewayArgs {
            listen: vec!["127.0.0.1:1".parse().unwrap()],
            ..Default::default()
        };
        assert!(message(&args).1.contains("--origin"));
        let args = GatewayArgs {
            listen: vec!["127.0.0.1:1".parse().unwrap()],
            origin: Some("http://h".into()),
            tls_cert: vec!["a.pem".into()],
            ..Default::default()
        };
        assert!(message(&args).1.contains("--tls-key"));
    }

    #[test]
    fn threads_from_the_flag_or_the_file_and_never_zero() {
        let base = "origin = \"http://127.0.0.1:7070\"\nlisten = [\"127.0.0.1:8080\"]\n";
        let settings = |args: &GatewayArgs| file(args).and_then(|f| settings_from(args, f));
        let (_f, mut args) = with_file(&format!("{base}threads = 3\n"));
        assert_eq!(settings(&args).unwrap().threads, 3);
        args.threads = Some(1);
        assert_eq!(settings(&args).unwrap().threads, 1);
        args.threads = Some(0);
        let Err(f) = settings(&args) else {
            panic!("0 threads accepted");
        };
        assert_eq!(f.code, 2);
        assert!(f.message.contains("--threads"), "{}", f.message);
        let (_g, args) = with_file(base);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(settings(&args).unwrap().threads, cores);
    }
}
