//! Every request attempt on the `slipstream` logger at DEBUG (and a transfer's warnings at
//! WARNING), as botocore logs its own on
//! `botocore.*`: `logging.basicConfig(level=logging.DEBUG)` (or
//! `logging.getLogger("slipstream").setLevel(logging.DEBUG)`) before a `Client` is made shows
//! where its requests go and one record per attempt, the CLI's `--debug` lines. Whether the
//! logger wants DEBUG is asked once, when the client is made: asking per attempt would take the
//! GIL on every request of every client. Only methods and URLs are logged, never a header
//! (slipstream_client's `trace.rs`).

use std::sync::Arc;

use pyo3::prelude::*;
use slipstream_client::{Resolved, Trace};
use slipstream_transfer::Warn;

/// `logging.DEBUG`.
const DEBUG: u8 = 10;

/// The trace for a client of `config`, when the `slipstream` logger wants DEBUG records; the
/// first record says where requests go (the credentials' source, never their values).
pub(crate) fn trace(py: Python<'_>, config: &Resolved, attempts: u32) -> PyResult<Option<Trace>> {
    let logger = py
        .import("logging")?
        .call_method1("getLogger", ("slipstream",))?;
    if !logger
        .call_method1("isEnabledFor", (DEBUG,))?
        .extract::<bool>()?
    {
        return Ok(None);
    }
    let first = format!(
        "{}; up to {attempts} attempts a request",
        config.described()
    );
    logger.call_method1("debug", ("%s", first))?;
    let logger = logger.unbind();
    Ok(Some(Trace(Arc::new(move |attempt| {
        let line = attempt.to_string();
        // A handler's error is the handler's: the request goes on. After Python began to
        // exit, nothing is logged (`exit.rs`).
        let _ = crate::exit::attach(|py| {
            logger
                .bind(py)
                .call_method1("debug", ("%s", line))
                .map(drop)
        });
    }))))
}

/// What a transfer says without failing (a downloaded file the file system would not give its
/// object's time) as a WARNING record of the `slipstream` logger, where Python's `logging`
/// shows warnings by default, as the AWS CLI prints its own.
pub(crate) fn warnings(py: Python<'_>) -> PyResult<Warn> {
    let logger = py
        .import("logging")?
        .call_method1("getLogger", ("slipstream",))?
        .unbind();
    Ok(Warn(Arc::new(move |text| {
        let _ = crate::exit::attach(|py| {
            logger
                .bind(py)
                .call_method1("warning", ("%s", text))
                .map(drop)
        });
    })))
}
