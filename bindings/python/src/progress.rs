//! `callback=` of the blocking transfer calls, as boto3's `Callback`: a progress bar's hook
//! (`tqdm.update`), called with the bytes moved since its last call. It runs on the calling
//! thread, between the steps in which `Client::wait` checks for signals (ten times a second
//! while bytes move), and once more at the end, so it never runs on the runtime's threads,
//! never concurrently with itself, and costs the transfer nothing between calls. An exception
//! it raises stops the transfer as Ctrl-C does (no partial file, no open multipart upload).

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use slipstream_transfer::Progress;

/// A callback and the count it was last told.
pub(crate) struct Reporter {
    progress: Arc<Progress>,
    callback: Py<PyAny>,
    reported: u64,
}

impl Reporter {
    /// A reporter for `callback` when one is given; a `TypeError` for one that is not callable.
    pub(crate) fn new(callback: Option<Bound<'_, PyAny>>) -> PyResult<Option<Self>> {
        let Some(callback) = callback.filter(|c| !c.is_none()) else {
            return Ok(None);
        };
        if !callback.is_callable() {
            return Err(PyTypeError::new_err(
                "callback must be callable with the bytes moved since its last call",
            ));
        }
        Ok(Some(Self {
            progress: Arc::new(Progress::new()),
            callback: callback.unbind(),
            reported: 0,
        }))
    }

    /// The counter the transfer adds to (`TransferOptions::progress`).
    pub(crate) fn progress(reporter: &Option<Self>) -> Option<Arc<Progress>> {
        reporter.as_ref().map(|r| Arc::clone(&r.progress))
    }

    /// Calls the callback with what moved since its last call, if anything did.
    pub(crate) fn report(&mut self, py: Python<'_>) -> PyResult<()> {
        let done = self.progress.done();
        if done > self.reported {
            self.callback.call1(py, (done - self.reported,))?;
            self.reported = done;
        }
        Ok(())
    }
}
