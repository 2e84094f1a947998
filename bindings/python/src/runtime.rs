//! The tokio runtime a `Client` owns, shut down without the GIL.
//!
//! Why: Python drops a `Client` holding the GIL, and dropping a runtime waits for its worker
//! threads to drop their tasks. A task of an async call still in flight completes or fails its
//! Python future as it is dropped (`aio.rs`), which takes the GIL: held by the dropping thread,
//! it never comes, and the process hangs (seen as a hung test after an async test's client went
//! out of scope). So the runtime is dropped with the GIL released.

use std::ops::Deref;

use pyo3::Python;

/// A runtime that releases the GIL while it shuts down.
pub(crate) struct IoRuntime(Option<tokio::runtime::Runtime>);

impl IoRuntime {
    pub(crate) fn new(runtime: tokio::runtime::Runtime) -> Self {
        Self(Some(runtime))
    }
}

impl Deref for IoRuntime {
    type Target = tokio::runtime::Runtime;

    fn deref(&self) -> &Self::Target {
        match &self.0 {
            Some(runtime) => runtime,
            None => unreachable!("the runtime is taken only when it is dropped"),
        }
    }
}

impl Drop for IoRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            Python::attach(|py| py.detach(move || drop(runtime)));
        }
    }
}
