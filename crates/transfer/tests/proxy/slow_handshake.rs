//! A TCP relay whose server is slow to start talking: on each connection the server's first
//! bytes (a TLS ServerHello) are held for a while, then everything is relayed as it comes.
//! That is a busy TLS server on a near network: TCP connects at once (the kernel answers it),
//! the handshake waits on the server's CPU. It relays bytes without reading them, so it sits
//! in front of the TLS server too.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

pub struct Relay {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    stop: Arc<AtomicBool>,
    /// Connections accepted so far.
    pub connections: Arc<AtomicUsize>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(&self.addr);
    }
}

/// Starts a relay on 127.0.0.1 to `upstream` (`host:port`) that holds each connection's first
/// bytes from the server for `delay`.
pub fn start(upstream: &str, delay: Duration) -> Relay {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let upstream = upstream.to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let connections = Arc::new(AtomicUsize::new(0));
    let (stop2, connections2) = (Arc::clone(&stop), Arc::clone(&connections));
    thread::spawn(move || {
        for conn in listener.incoming() {
            if stop2.load(Ordering::SeqCst) {
                return;
            }
            let Ok(client) = conn else { continue };
            connections2.fetch_add(1, Ordering::SeqCst);
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let _ = (client.set_nodelay(true), server.set_nodelay(true));
            let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
                continue;
            };
            thread::spawn(move || pipe(client, server, Duration::ZERO));
            thread::spawn(move || pipe(s2, c2, delay));
        }
    });
    Relay {
        addr,
        stop,
        connections,
    }
}

/// Copies `from` to `to` until either ends, holding the first bytes for `delay`.
fn pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let mut buf = vec![0u8; 64 << 10];
    let mut first = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if first {
            thread::sleep(delay);
            first = false;
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = (to.shutdown(Shutdown::Write), from.shutdown(Shutdown::Read));
}
