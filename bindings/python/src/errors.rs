//! Errors as the Python exceptions that say who caused them: S3's refusals as `S3Error` (an
//! `OSError` with S3's `code` and `status`), bad arguments as `ValueError`, local files as
//! Python's own `OSError` subclasses, a stalled transfer as `TimeoutError`.

use pyo3::exceptions::{PyIOError, PyOSError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use slipstream_client::ClientError;
use slipstream_transfer::TransferError;

// An S3 error, keeping S3's code and status as `S3Error.code` and `S3Error.status`.
pyo3::create_exception!(
    slipstream,
    S3Error,
    PyOSError,
    "S3 refused a request; `code` (e.g. 'NoSuchKey') and `status` say how."
);

pub(crate) fn to_py(e: ClientError) -> PyErr {
    about(e, None)
}

/// [`to_py`], the message starting with the object it was about (in a transfer of many).
fn about(e: ClientError, object: Option<&str>) -> PyErr {
    let text = match object {
        Some(name) => format!("{name}: {e}"),
        None => e.to_string(),
    };
    match e {
        ClientError::S3 {
            status, ref code, ..
        } => {
            let err = S3Error::new_err(text);
            Python::attach(|py| {
                let value = err.value(py);
                let _ = value.setattr("status", status);
                let _ = value.setattr("code", code.as_str());
            });
            err
        }
        ClientError::Request(_) => PyValueError::new_err(text),
        // FileNotFoundError, PermissionError... as Python's own file functions raise.
        ClientError::Io(io) => io.into(),
        _ => PyIOError::new_err(text),
    }
}

/// An error as the Python exception that says who caused it.
pub(crate) trait Raise {
    fn raise(self) -> PyErr;
}

/// Already a Python exception (work that made Python objects on the way).
impl Raise for PyErr {
    fn raise(self) -> PyErr {
        self
    }
}

impl Raise for ClientError {
    fn raise(self) -> PyErr {
        to_py(self)
    }
}

impl Raise for TransferError {
    fn raise(self) -> PyErr {
        match self {
            TransferError::Client(e) => to_py(e),
            TransferError::Io(io) => io.into(),
            TransferError::File { path, error } => at_path(error, &path),
            TransferError::Stalled { .. } => PyTimeoutError::new_err(self.to_string()),
            TransferError::Invalid(_) => PyValueError::new_err(self.to_string()),
            TransferError::Object { name, error } => match *error {
                TransferError::Client(e) => about(e, Some(&name)),
                other => PyIOError::new_err(format!("{name}: {other}")),
            },
            other => PyIOError::new_err(other.to_string()),
        }
    }
}

/// A local file's error as Python's own file functions raise it,
/// `FileNotFoundError(2, 'No such file or directory', path)`, whose message names the file
/// (`[Errno 2] No such file or directory: 'path'`), as boto3's does.
fn at_path(io: std::io::Error, path: &std::path::Path) -> PyErr {
    match io.raw_os_error() {
        Some(errno) => {
            let text = io.to_string();
            let strerror = text
                .strip_suffix(&format!(" (os error {errno})"))
                .unwrap_or(&text)
                .to_owned();
            // OSError(errno, ...) is made the matching subclass by Python itself.
            PyOSError::new_err((errno, strerror, path.display().to_string()))
        }
        None => PyOSError::new_err(format!("{}: {io}", path.display())),
    }
}
