//! A fault-injecting HTTP/1.1 proxy between the client and versitygw, for tests: it relays
//! requests and responses and, per request, may reset the connection partway through a body,
//! stall it, delay it, flip a bit of it, answer 503 itself, or answer nothing at all.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

pub mod slow_handshake;

/// What to do with one request.
pub enum Action {
    /// Relay it.
    Forward,
    /// Relay the response head and this many body bytes, then drop both connections.
    ResetAfter(usize),
    /// Relay the head and this many body bytes, then send nothing for the duration, then drop.
    StallAfter(usize, Duration),
    /// Answer `503 SlowDown` without asking the server.
    SlowDown,
    /// Take the request and answer nothing for the duration, then drop the connection: a
    /// server that froze (a stopped process keeps its sockets open and sends nothing).
    Hang(Duration),
    /// Relay it after holding it for the duration: a slow answer on a connection made at once
    /// (a busy server, or one behind a proxy whose origin is far).
    Delay(Duration),
    /// Relay it all, with one bit of the body byte at this offset flipped (what TCP's checksum
    /// can miss, or a broken middlebox or server could do).
    Corrupt(usize),
}

/// The request as the proxy saw it.
pub struct Seen {
    /// 0 for the first request through the proxy.
    pub index: usize,
    /// 0 for the first connection the proxy accepted.
    pub connection: usize,
    pub method: String,
    pub target: String,
    /// The `Range` header, if any.
    pub range: Option<String>,
}

pub type Rule = dyn Fn(&Seen) -> Action + Send + Sync;

pub struct Proxy {
    pub endpoint: String,
    stop: Arc<AtomicBool>,
    pub requests: Arc<AtomicUsize>,
    /// Connections accepted so far.
    pub connections: Arc<AtomicUsize>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.endpoint.trim_start_matches("http://"));
    }
}

/// Starts a proxy on 127.0.0.1 in front of `upstream` (`http://host:port`).
pub fn start(upstream: &str, rule: Arc<Rule>) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let upstream = upstream.trim_start_matches("http://").to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicUsize::new(0));
    let connections = Arc::new(AtomicUsize::new(0));
    let (stop2, requests2, connections2) = (
        Arc::clone(&stop),
        Arc::clone(&requests),
        Arc::clone(&connections),
    );
    thread::spawn(move || {
        for conn in listener.incoming() {
            if stop2.load(Ordering::SeqCst) {
                return;
            }
            let Ok(conn) = conn else { continue };
            let connection = connections2.fetch_add(1, Ordering::SeqCst);
            let (upstream, rule, requests) =
                (upstream.clone(), Arc::clone(&rule), Arc::clone(&requests2));
            thread::spawn(move || {
                let _ = serve(conn, connection, &upstream, &*rule, &requests);
            });
        }
    });
    Proxy {
        endpoint,
        stop,
        requests,
        connections,
    }
}

fn read_head(r: &mut impl BufRead) -> std::io::Result<Option<Vec<String>>> {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_end_matches(['\r', '\n']).to_owned();
        if line.is_empty() {
            return Ok(Some(lines));
        }
        lines.push(line);
    }
}

fn header<'a>(head: &'a [String], name: &str) -> Option<&'a str> {
    head.iter().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn serve(
    client: TcpStream,
    connection: usize,
    upstream: &str,
    rule: &Rule,
    count: &AtomicUsize,
) -> std::io::Result<()> {
    client.set_nodelay(true)?;
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    let server = TcpStream::connect(upstream)?;
    server.set_nodelay(true)?;
    let mut from_server = BufReader::new(server.try_clone()?);
    let mut to_server = server;
    loop {
        let Some(head) = read_head(&mut from_client)? else {
            return Ok(());
        };
        let len: usize = header(&head, "content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        from_client.read_exact(&mut body)?;
        let mut parts = head[0].split(' ');
        let seen = Seen {
            index: count.fetch_add(1, Ordering::SeqCst),
            connection,
            method: parts.next().unwrap_or("").to_owned(),
            target: parts.next().unwrap_or("").to_owned(),
            range: header(&head, "range").map(str::to_owned),
        };
        let action = rule(&seen);
        if let Action::SlowDown = action {
            let xml = "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
            // As S3: a HEAD answer has no body, so its error has no code.
            let body = if seen.method == "HEAD" { "" } else { xml };
            write!(to_client, "HTTP/1.1 503 Slow Down\r\nContent-Length: {}\r\nContent-Type: application/xml\r\n\r\n{body}", xml.len())?;
            continue;
        }
        if let Action::Hang(d) = action {
            thread::sleep(d);
            return Ok(());
        }
        if let Action::Delay(d) = action {
            thread::sleep(d);
        }
        for line in &head {
            write!(to_server, "{line}\r\n")?;
        }
        write!(to_server, "\r\n")?;
        to_server.write_all(&body)?;
        let Some(rhead) = read_head(&mut from_server)? else {
            return Ok(());
        };
        for line in &rhead {
            write!(to_client, "{line}\r\n")?;
        }
        write!(to_client, "\r\n")?;
        let status: u16 = rhead[0]
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let no_body = seen.method == "HEAD" || status == 204 || status == 304;
        let mut rest = if no_body {
            0
        } else if let Some(n) =
            header(&rhead, "content-length").and_then(|v| v.parse::<usize>().ok())
        {
            n
        } else if header(&rhead, "transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            relay_chunked(&mut from_server, &mut to_client)?;
            continue;
        } else {
            0
        };
        let limit = match action {
            Action::ResetAfter(n) | Action::StallAfter(n, _) => Some(n),
            _ => None,
        };
        let mut sent = 0usize;
        let mut buf = vec![0; 64 * 1024];
        while rest > 0 {
            let want = rest
                .min(buf.len())
                .min(limit.map_or(usize::MAX, |l| l - sent).max(1));
            let n = from_server.read(&mut buf[..want])?;
            if n == 0 {
                return Ok(());
            }
            if let Action::Corrupt(at) = action {
                if (sent..sent + n).contains(&at) {
                    buf[at - sent] ^= 1;
                }
            }
            to_client.write_all(&buf[..n])?;
            sent += n;
            rest -= n;
            if limit.is_some_and(|l| sent >= l) {
                to_client.flush()?;
                if let Action::StallAfter(_, d) = action {
                    thread::sleep(d);
                }
                let _ = to_client.shutdown(Shutdown::Both);
                let _ = to_server.shutdown(Shutdown::Both);
                return Ok(());
            }
        }
    }
}

fn relay_chunked(from: &mut BufReader<TcpStream>, to: &mut TcpStream) -> std::io::Result<()> {
    loop {
        let mut size_line = String::new();
        from.read_line(&mut size_line)?;
        to.write_all(size_line.as_bytes())?;
        let size = usize::from_str_radix(size_line.trim().split(';').next().unwrap_or("0"), 16)
            .unwrap_or(0);
        let mut chunk = vec![0; size + 2];
        from.read_exact(&mut chunk)?;
        to.write_all(&chunk)?;
        if size == 0 {
            return Ok(());
        }
    }
}
