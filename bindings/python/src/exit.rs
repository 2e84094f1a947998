//! Python's exit and the threads Python did not start (the runtime's workers and blocking
//! threads), which take the GIL to hand results to asyncio, call file objects and credential
//! callables.
//!
//! Why: once `Py_FinalizeEx` has begun, CPython ends any other thread that asks for the GIL
//! (3.11 unwinds it with `pthread_exit`; later versions hang it). A script that ended right
//! after an awaited call could reach that point while a worker was still in the call's last
//! step (`call_soon_threadsafe`, pure Python, which may give the GIL up halfway): the worker
//! was unwound holding PyO3's guard, and the process died with "Fatal Python error:
//! PyGILState_Release" and SIGABRT, about one exit in five in the test that shows it
//! (bindings/python/tests/test_client_async.py). `atexit` callbacks run before finalization
//! begins, so [`quiesce`] (registered when the module loads) stops new steps from starting on
//! other threads and waits, with the GIL released, for those under way to end.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::OnceLock;
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Set by [`quiesce`]: from then on only the exiting thread may take the GIL through
/// [`attach`].
static EXITING: AtomicBool = AtomicBool::new(false);
/// Threads inside [`attach`] (waiting for the GIL or holding it).
static INSIDE: AtomicUsize = AtomicUsize::new(0);
/// The thread that ran `atexit`, which goes on to finalize.
static EXITER: OnceLock<ThreadId> = OnceLock::new();
/// How long [`quiesce`] waits for steps under way: a file object's `write` that never
/// returns must not keep the process from exiting.
const WAIT: Duration = Duration::from_secs(5);

/// `Python::attach(f)` for a thread Python did not start; `None`, and `f` not run, once
/// Python is exiting (the caller fails its work or drops its result: no one is left to
/// receive it).
pub(crate) fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    // Counted before `EXITING` is read, and `quiesce` sets it before reading the count
    // (both sequentially consistent): either this thread sees the flag, or quiesce sees it
    // inside and waits.
    INSIDE.fetch_add(1, SeqCst);
    let _leave = Leave;
    if EXITING.load(SeqCst) && EXITER.get() != Some(&thread::current().id()) {
        return None;
    }
    Some(Python::attach(f))
}

/// `attach`'s count, taken back however it returns.
struct Leave;

impl Drop for Leave {
    fn drop(&mut self) {
        INSIDE.fetch_sub(1, SeqCst);
    }
}

/// The `atexit` callback: no new step on other threads, then the GIL released until those
/// under way have ended (at most [`WAIT`]).
#[pyfunction]
pub(crate) fn quiesce(py: Python<'_>) {
    let _ = EXITER.set(thread::current().id());
    EXITING.store(true, SeqCst);
    py.detach(|| {
        let deadline = Instant::now() + WAIT;
        while INSIDE.load(SeqCst) > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
    });
}
