//! SIGTERM and SIGHUP during a transfer: cancel it, clean up, then end the process by that
//! signal, as it would have ended without the client.
//!
//! Python leaves both at the default action (end the process at once), which would leave a
//! download's temporary file and an upload's open multipart upload behind. So, the first time a
//! transfer runs, and only for the signals the program has not given a handler of its own, a
//! handler is added (signal-hook) that, while no transfer is in flight, does exactly what the
//! default does, and while one is, raises a flag the transfer's wait loop polls every 100 ms.
//! Swapping Python handlers in and out around every call cost 38 µs a call (`signal.signal` is
//! a system call and more); this costs two atomic operations.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// The signals handled: what `timeout`, `kill`, systemd and Kubernetes send, and a closed
/// terminal.
const SIGNALS: [i32; 2] = [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP];

/// The process's watch over transfers in flight.
pub(crate) struct Watch {
    /// The signal that arrived during a transfer; 0 for none.
    stopped: Arc<AtomicUsize>,
    /// True while no transfer is in flight: the handler then runs the default action.
    idle: Arc<AtomicBool>,
    in_flight: AtomicUsize,
}

/// A transfer in flight, for as long as it lives.
pub(crate) struct Busy<'a>(&'a Watch);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.store(true, Ordering::SeqCst);
        }
    }
}

impl Watch {
    /// Marks a transfer as in flight until the guard is dropped.
    pub(crate) fn enter(&self) -> Busy<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.idle.store(false, Ordering::SeqCst);
        Busy(self)
    }

    /// The stop signal that arrived during a transfer, if any.
    pub(crate) fn stopped(&self) -> Option<i32> {
        match self.stopped.load(Ordering::SeqCst) {
            0 => None,
            n => i32::try_from(n).ok(),
        }
    }

    /// Ends the process by `signal` once no other transfer is in flight (each cancels itself
    /// within 100 ms and cleans up), or after `limit`. Returns only if the default action
    /// could not be run.
    pub(crate) fn end_by(&self, signal: i32, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = signal_hook::low_level::emulate_default_handler(signal);
    }
}

/// The watch, set up on first use; `None` where no signal could be watched (the program has
/// handlers of its own for both, or the platform has no such signals).
pub(crate) fn watch(py: Python<'_>) -> Option<&'static Watch> {
    static WATCH: OnceLock<Option<Watch>> = OnceLock::new();
    WATCH
        .get_or_init(|| {
            let watch = Watch {
                stopped: Arc::new(AtomicUsize::new(0)),
                idle: Arc::new(AtomicBool::new(true)),
                in_flight: AtomicUsize::new(0),
            };
            let mut any = false;
            for signal in SIGNALS {
                if !python_default(py, signal) {
                    continue;
                }
                let stop = signal_hook::flag::register_usize(
                    signal,
                    Arc::clone(&watch.stopped),
                    usize::try_from(signal).unwrap_or(1),
                );
                let default = signal_hook::flag::register_conditional_default(
                    signal,
                    Arc::clone(&watch.idle),
                );
                any |= stop.is_ok() && default.is_ok();
            }
            any.then_some(watch)
        })
        .as_ref()
}

/// Whether Python leaves `signal` at its default action (no handler of the program's own).
fn python_default(py: Python<'_>, signal: i32) -> bool {
    let check = || -> PyResult<bool> {
        let module = py.import("signal")?;
        let current = module.getattr("getsignal")?.call1((signal,))?;
        current.eq(module.getattr("SIG_DFL")?)
    };
    check().unwrap_or(false)
}
