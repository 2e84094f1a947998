//! The packet delayer of `scripts/wan`: a long link between two network namespaces.
//!
//! This kernel has no `netem`, so the delay is done here, in user space: two TUN devices (the
//! script moves one into each namespace), and every IP packet read from one is written to the
//! other after the one-way delay. TCP in the namespaces then sees a real round trip: its window
//! growth, handshakes and losses are the kernel's own, not a proxy's. The rate limit is `tbf` on
//! each device, set by the script; this program only delays and (optionally) drops.
//!
//! Usage: `slipstream-wan DEV_A DEV_B ONE_WAY_DELAY_US [LOSS_PERCENT]`. It prints `ready` once
//! both devices exist and forwards until killed.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The largest packet a TUN device hands over without GSO (its MTU is set by the script).
const MAX_PACKET: usize = 65_536;

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("slipstream-wan: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let [a, b, delay, rest @ ..] = args.as_slice() else {
        return Err("usage: slipstream-wan DEV_A DEV_B ONE_WAY_DELAY_US [LOSS_PERCENT]".into());
    };
    let delay = Duration::from_micros(
        delay
            .parse()
            .map_err(|_| format!("delay {delay:?} is not a number of microseconds"))?,
    );
    let loss = match rest.first() {
        None => 0.0,
        Some(p) => match p.parse::<f64>() {
            Ok(p) if (0.0..100.0).contains(&p) => p / 100.0,
            _ => return Err(format!("loss {p:?} is not a percentage below 100")),
        },
    };
    let (a_in, a_out) = open(a)?;
    let (b_in, b_out) = open(b)?;
    println!("ready");
    let forwards = [
        thread::spawn(move || forward(a_in, b_out, delay, loss)),
        thread::spawn(move || forward(b_in, a_out, delay, loss)),
    ];
    for f in forwards {
        f.join()
            .map_err(|_| "a forwarding thread panicked".to_string())??;
    }
    Ok(())
}

/// A new TUN device (layer 3, no packet-information header), left unconfigured: addresses and
/// the `up` state belong to the namespace it is moved into.
fn open(name: &str) -> Result<(impl Read + Send, impl Write + Send), String> {
    let mut config = tun::Configuration::default();
    config.tun_name(name).layer(tun::Layer::L3);
    config.platform_config(|p| {
        p.ensure_root_privileges(false);
    });
    let device =
        tun::create(&config).map_err(|e| format!("cannot create TUN device {name}: {e}"))?;
    Ok(device.split())
}

/// Moves packets from `input` to `output`, each written `delay` after it was read. A reader
/// thread stamps packets and a writer thread waits for each one's time: the delay is the same
/// for all, so arrival order is departure order and one FIFO suffices.
fn forward(
    mut input: impl Read + Send + 'static,
    mut output: impl Write,
    delay: Duration,
    loss: f64,
) -> Result<(), String> {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let reader = thread::spawn(move || -> Result<(), String> {
        let mut buf = vec![0u8; MAX_PACKET];
        loop {
            let n = input.read(&mut buf).map_err(|e| format!("read: {e}"))?;
            let due = Instant::now() + delay;
            if loss > 0.0 && fastrand::f64() < loss {
                continue;
            }
            if tx.send((due, buf[..n].to_vec())).is_err() {
                return Ok(());
            }
        }
    });
    for (due, packet) in rx {
        let now = Instant::now();
        if due > now {
            thread::sleep(due - now);
        }
        // A full device queue drops the packet, as a router would; TCP recovers.
        let _ = output.write(&packet);
    }
    reader
        .join()
        .map_err(|_| "a reader thread panicked".to_string())?
}
