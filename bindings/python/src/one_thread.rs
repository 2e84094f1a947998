//! The lock of a file object's state (the object readers and writer): one thread's at a time.
//!
//! Taken without waiting: a thread that waited here would hold the GIL, which the thread inside
//! (waiting on the network with the GIL released) needs back to finish, so both would hang.

use std::sync::{Mutex, MutexGuard, TryLockError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyResult;

/// `state`, or `RuntimeError(busy)` while another thread holds it. A poisoned lock is taken as
/// it is: every step leaves the state consistent, and a panic is not Python's to see.
pub(crate) fn one_thread<'a, T>(state: &'a Mutex<T>, busy: &str) -> PyResult<MutexGuard<'a, T>> {
    match state.try_lock() {
        Ok(state) => Ok(state),
        Err(TryLockError::Poisoned(e)) => Ok(e.into_inner()),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(busy.to_owned())),
    }
}
