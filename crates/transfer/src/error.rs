//! Why a transfer failed, by cause.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use slipstream_client::{ChecksumAlgorithm, ClientError};

/// A transfer's failure. Whatever the cause, a download left no file under the destination's
/// name and a multipart upload was aborted.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransferError {
    /// S3 or the network: a request failed after its retries (S3's code and status kept).
    Client(ClientError),
    /// The object was replaced during the download: its ETag is no longer the one every part
    /// was pinned to, so the parts would not be one object.
    Changed {
        /// The object's key.
        key: String,
        /// The ETag the download started with.
        etag: String,
    },
    /// The data does not match the object's whole-object checksum: damaged in transit or at
    /// rest (every part arrived, with the right lengths).
    ChecksumMismatch {
        /// The checksum the object has.
        algorithm: ChecksumAlgorithm,
        /// What the bytes that arrived give (base64, as S3 shows it).
        computed: String,
        /// What the object has.
        expected: String,
    },
    /// The server's answer does not fit what was asked: more bytes than the range, a first
    /// answer of the wrong length, a missing `Content-Length`.
    BadResponse(String),
    /// The network or the server: no byte moved, in either direction, on any of the client's
    /// connections for `idle` (the server froze, or the path to it went dark), retries
    /// included. `sending` is what the server stopped doing: sending data (a download) or
    /// taking it (an upload).
    Stalled {
        /// How long nothing moved.
        idle: Duration,
        /// A download (the server stopped sending) rather than an upload.
        sending: bool,
    },
    /// This machine: a stream could not be read or written (standard output, a closed pipe),
    /// or a transfer task failed. A named file's failure is [`TransferError::File`].
    Io(std::io::Error),
    /// This machine: a local file or directory the transfer read, wrote or made failed. The
    /// path is kept so a message can say which of many files it was (`dir/a.csv: Permission
    /// denied`), as Python's own file errors do.
    File {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The caller's: what was asked cannot be done (an object too large for memory, a buffer
    /// of the wrong size, a stream past 10,000 parts, a key that would leave the directory).
    Invalid(String),
    /// One object of a transfer of many failed: `name` says which (`s3://bucket/key`, or `from
    /// -> to` for a copy), as the AWS CLI's `download failed: s3://b/k` and s5cmd's `ERROR "cp
    /// s3://b/k ..."` do; S3's errors and bad data do not say it themselves.
    Object {
        /// The object, or the copy's two ends.
        name: String,
        /// Why it failed.
        error: Box<TransferError>,
    },
}

impl TransferError {
    /// Whether fetching the same part again may help (the client already retried each request;
    /// this is for a body that broke off or stalled after its headers arrived).
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            TransferError::Client(e) => e.is_retryable(),
            TransferError::Object { error, .. } => error.is_retryable(),
            _ => false,
        }
    }

    /// This error naming the object `name()` it was about, in a transfer of many. Errors that
    /// name their file or key already, or that concern no one object (a stall: nothing moved
    /// on any connection), are kept as they are.
    pub(crate) fn of_object(self, name: impl FnOnce() -> String) -> Self {
        match self.lacks_object_name() {
            true => TransferError::Object {
                name: name(),
                error: Box::new(self),
            },
            false => self,
        }
    }

    /// Whether this error's message leaves out which object it is about: S3's errors ("The
    /// specified key does not exist") and bad data do; a file's error names its file, and a
    /// stall concerns no one object. A caller that knows the object names it then.
    pub fn lacks_object_name(&self) -> bool {
        matches!(
            self,
            TransferError::Client(_)
                | TransferError::ChecksumMismatch { .. }
                | TransferError::BadResponse(_)
        )
    }

    /// This error with the local file or directory it was about: a bare file system error
    /// becomes [`TransferError::File`] naming `path`; any other error is kept as it is.
    pub(crate) fn about(self, path: &Path) -> Self {
        match self {
            TransferError::Io(error) => at(path)(error),
            other => other,
        }
    }

    /// S3's error code, if S3 sent one.
    pub fn code(&self) -> Option<&str> {
        match self {
            TransferError::Client(e) => e.code(),
            TransferError::Object { error, .. } => error.code(),
            _ => None,
        }
    }
}

/// `map_err` for a file system call on `path`: its error as a [`TransferError::File`] naming it.
pub(crate) fn at(path: &Path) -> impl FnOnce(std::io::Error) -> TransferError + '_ {
    move |error| TransferError::File {
        path: path.to_owned(),
        error,
    }
}

impl fmt::Display for TransferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransferError::Client(e) => e.fmt(f),
            TransferError::Changed { key, etag } => write!(
                f,
                "{key} changed during the download (its ETag is no longer {etag})"
            ),
            TransferError::ChecksumMismatch {
                algorithm,
                computed,
                expected,
            } => write!(
                f,
                "the downloaded data's {algorithm} ({computed}) does not match the object's ({expected})"
            ),
            TransferError::BadResponse(why) => write!(f, "unexpected response: {why}"),
            TransferError::Stalled { idle, sending } => write!(
                f,
                "the server stopped {}: nothing moved on any connection for {}s",
                if *sending { "sending" } else { "taking data" },
                idle.as_secs_f64()
            ),
            TransferError::Io(e) => e.fmt(f),
            TransferError::File { path, error } => write!(f, "{}: {error}", path.display()),
            TransferError::Invalid(why) => f.write_str(why),
            TransferError::Object { name, error } => write!(f, "{name}: {error}"),
        }
    }
}

impl std::error::Error for TransferError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TransferError::Client(e) => Some(e),
            TransferError::Io(e) | TransferError::File { error: e, .. } => Some(e),
            TransferError::Object { error, .. } => Some(&**error),
            _ => None,
        }
    }
}

impl From<ClientError> for TransferError {
    fn from(e: ClientError) -> Self {
        match e {
            // A local file the client read or wrote is this machine's, not S3's.
            ClientError::Io(io) => TransferError::Io(io),
            other => TransferError::Client(other),
        }
    }
}

impl From<std::io::Error> for TransferError {
    fn from(e: std::io::Error) -> Self {
        TransferError::Io(e)
    }
}

impl From<tokio::task::JoinError> for TransferError {
    fn from(e: tokio::task::JoinError) -> Self {
        TransferError::Io(std::io::Error::other(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_objects_error_in_a_transfer_of_many_names_it_and_keeps_s3s_code() {
        let refused = TransferError::from(ClientError::S3 {
            status: 403,
            code: "AccessDenied".into(),
            message: "Access Denied.".into(),
        });
        let named = refused.of_object(|| "s3://b/logs/a.gz".into());
        assert!(
            named.to_string().starts_with("s3://b/logs/a.gz: "),
            "{named}"
        );
        assert!(named.to_string().contains("Access Denied."), "{named}");
        assert_eq!(named.code(), Some("AccessDenied"));
        // A file's error names its file already; a stall concerns no one object.
        let file = TransferError::File {
            path: "dir/a".into(),
            error: std::io::Error::other("full"),
        };
        assert_eq!(file.of_object(|| "x".into()).to_string(), "dir/a: full");
        let stalled = TransferError::Stalled {
            idle: Duration::from_secs(120),
            sending: true,
        };
        assert!(!stalled
            .of_object(|| "x".into())
            .to_string()
            .starts_with("x:"));
    }
}
