//! The asyncio side of `Client`: every call's `*_async` twin returns a coroutine (so that
//! `asyncio.create_task` and `gather` take it, as they take obstore's) awaiting an
//! `asyncio.Future` of the running event loop. The work starts at the call, not at the first
//! await; a call made before any loop runs (`asyncio.run(client.head_async(...))`) starts at
//! its first await instead, in the loop awaiting it. The work runs on the client's tokio runtime,
//! and its outcome reaches the loop through `loop.call_soon_threadsafe`: no Python thread
//! waits for it, and the event loop keeps running other coroutines meanwhile.
//!
//! Cancelling the future (`task.cancel()`, `asyncio.wait_for`'s timeout, Ctrl-C under
//! `asyncio.run`) aborts the tokio task, which drops the transfer: a download's temporary file
//! is removed and an open multipart upload's abort starts, as when a blocking call is
//! interrupted. This module does not convert results: each call passes its own conversion.

use std::future::Future;

use pyo3::exceptions::{PyRuntimeError, PyStopAsyncIteration};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use tokio::task::AbortHandle;

use crate::errors::Raise;

/// What a finished call hands to Python: its value, or the exception to raise.
pub(crate) type Outcome = PyResult<Py<PyAny>>;

/// Starts `work` on `runtime` and returns the coroutine the caller awaits; `convert` turns the
/// result into a Python object (with the GIL, on a runtime thread). Called where no event loop
/// runs yet (`asyncio.run(client.get_bytes_async(...))` makes the coroutine before the loop
/// starts), the work starts when the coroutine is first awaited, in the loop awaiting it.
pub(crate) fn spawn<'py, T, E, F, C>(
    py: Python<'py>,
    runtime: &tokio::runtime::Runtime,
    work: F,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, E>> + Send + 'static,
    T: Send + 'static,
    E: Raise + Send + 'static,
    C: FnOnce(Python<'_>, T) -> Outcome + Send + 'static,
{
    if running_loop(py).is_ok() {
        return start(py, runtime.handle(), work, convert);
    }
    let handle = runtime.handle().clone();
    let begin: Begin = Box::new(move |py| Ok(start(py, &handle, work, convert)?.unbind()));
    let deferred = Deferred(std::sync::Mutex::new(Some(begin)));
    coroutines(py)?.1.bind(py).call1((deferred,))
}

/// [`spawn`] in the running loop: the work starts now.
fn start<'py, T, E, F, C>(
    py: Python<'py>,
    runtime: &tokio::runtime::Handle,
    work: F,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, E>> + Send + 'static,
    T: Send + 'static,
    E: Raise + Send + 'static,
    C: FnOnce(Python<'_>, T) -> Outcome + Send + 'static,
{
    let (future, resolver) = pending(py)?;
    let task = runtime.spawn(async move {
        let done = work.await;
        // Python exiting: the result is dropped, and the resolver with it (unsent).
        crate::exit::attach(|py| {
            let outcome = done.map_err(Raise::raise).and_then(|v| convert(py, v));
            resolver.send(py, outcome);
        });
    });
    future.call_method1("add_done_callback", (Canceller(task.abort_handle()),))?;
    coroutines(py)?.0.bind(py).call1((future,))
}

/// `awaiting(f)`, the coroutine around a future, and `later(begin)`, the coroutine that
/// starts its work when first awaited (`begin()` is `awaiting`'s coroutine then); made once.
fn coroutines(py: Python<'_>) -> PyResult<&(Py<PyAny>, Py<PyAny>)> {
    static COROUTINES: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();
    COROUTINES.get_or_try_init(py, || {
        let module = PyModule::from_code(
            py,
            c"async def awaiting(f):\n    return await f\n\n\
              async def later(begin):\n    return await begin()\n",
            c"slipstream/_aio.py",
            c"slipstream._aio",
        )?;
        let awaiting = module.getattr("awaiting")?.unbind();
        Ok((awaiting, module.getattr("later")?.unbind()))
    })
}

/// What starts a deferred call's work, given the GIL in the loop that awaits it.
type Begin = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// A call made where no loop ran: its work, started once, when its coroutine is awaited.
#[pyclass(frozen, module = "slipstream")]
struct Deferred(std::sync::Mutex<Option<Begin>>);

#[pymethods]
impl Deferred {
    fn __call__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let begin = self.0.lock().ok().and_then(|mut b| b.take());
        let begin =
            begin.ok_or_else(|| PyRuntimeError::new_err("this call was started already"))?;
        begin(py)
    }
}

/// A future of the running loop that already holds `value`: for answers that need no I/O (the
/// next object of a page already fetched), at no cost of a thread hop.
pub(crate) fn ready<'py>(py: Python<'py>, value: Outcome) -> PyResult<Bound<'py, PyAny>> {
    let future = running_loop(py)?.call_method0("create_future")?;
    match value {
        Ok(v) => future.call_method1("set_result", (v,))?,
        Err(e) => future.call_method1("set_exception", (e.into_value(py),))?,
    };
    Ok(future)
}

/// The end of an async iteration, as the outcome of `__anext__`.
pub(crate) fn stop_iteration() -> Outcome {
    Err(PyStopAsyncIteration::new_err(()))
}

fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("asyncio")?.call_method0("get_running_loop")
}

/// A new future of the running loop, and what will complete it.
fn pending(py: Python<'_>) -> PyResult<(Bound<'_, PyAny>, Resolver)> {
    let event_loop = running_loop(py)?;
    let future = event_loop.call_method0("create_future")?;
    let resolver = Resolver {
        event_loop: event_loop.unbind(),
        future: Some(future.clone().unbind()),
    };
    Ok((future, resolver))
}

/// Completes one future from any thread. Dropped unsent (the runtime shut down with the client
/// while the call was in flight), it fails the future rather than leave its awaiter hanging.
struct Resolver {
    event_loop: Py<PyAny>,
    future: Option<Py<PyAny>>,
}

impl Resolver {
    fn send(mut self, py: Python<'_>, outcome: Outcome) {
        if let Some(future) = self.future.take() {
            deliver(py, &self.event_loop, future, outcome);
        }
    }
}

impl Drop for Resolver {
    fn drop(&mut self) {
        if let Some(future) = self.future.take() {
            crate::exit::attach(|py| {
                let stopped = PyRuntimeError::new_err(
                    "the call was stopped: its Client was closed while it ran",
                );
                deliver(py, &self.event_loop, future, Err(stopped));
            });
        }
    }
}

/// Has the loop's thread complete `future` with `outcome`.
fn deliver(py: Python<'_>, event_loop: &Py<PyAny>, future: Py<PyAny>, outcome: Outcome) {
    let (value, failed) = match outcome {
        Ok(v) => (v, false),
        Err(e) => (e.into_value(py).into_any(), true),
    };
    // The loop may be closed already: nobody is left to tell.
    let _ = settle_function(py).and_then(|settle| {
        event_loop.call_method1(py, "call_soon_threadsafe", (settle, future, value, failed))
    });
}

/// `settle` as a Python callable, made once.
fn settle_function(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    static SETTLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    SETTLE.get_or_try_init(py, || Ok(wrap_pyfunction!(settle, py)?.into_any().unbind()))
}

/// Runs on the event loop's thread: sets the future's result or exception, unless it is done
/// already (cancelled by its awaiter while the work finished).
#[pyfunction]
fn settle(future: &Bound<'_, PyAny>, value: Bound<'_, PyAny>, failed: bool) -> PyResult<()> {
    if future.call_method0("done")?.is_truthy()? {
        return Ok(());
    }
    let method = if failed {
        "set_exception"
    } else {
        "set_result"
    };
    future.call_method1(method, (value,))?;
    Ok(())
}

/// The future's done-callback: a cancelled future aborts its work.
#[pyclass(frozen, module = "slipstream")]
struct Canceller(AbortHandle);

#[pymethods]
impl Canceller {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            self.0.abort();
        }
        Ok(())
    }
}
