//! What can go wrong talking to S3, keeping S3's own error code and message.

use std::fmt;

/// An S3 operation's failure.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// S3 answered with an error: its HTTP status, code (`NoSuchKey`, `SlowDown`...) and message.
    S3 {
        /// HTTP status.
        status: u16,
        /// S3's error code; empty when the body had none (HEAD responses have no body).
        code: String,
        /// S3's message.
        message: String,
    },
    /// The connection failed, was reset or timed out; retried before it reaches the caller.
    Network(String),
    /// The request could not be built or signed (a bad key, bucket or credential): the caller's input.
    Request(String),
    /// S3's answer did not parse as the operation's XML, or lacked a required part.
    Response(String),
    /// A local file failed.
    Io(std::io::Error),
    /// No credentials could be had from the configured source (says which, and why).
    Credentials(String),
    /// The server's TLS certificate was refused (unknown issuer, wrong name, expired): trying
    /// again would not help; `--ca-bundle` might.
    Tls(String),
}

impl ClientError {
    /// Whether trying again may help: 500, 502, 503 (`SlowDown`), 504, throttling, network errors.
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::S3 { status, code, .. } => {
                matches!(status, 500 | 502 | 503 | 504)
                    || matches!(
                        code.as_str(),
                        "SlowDown" | "RequestTimeout" | "InternalError" | "ThrottlingException"
                    )
            }
            ClientError::Network(_) => true,
            _ => false,
        }
    }

    /// The S3 error code, if S3 sent one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::S3 { code, .. } if !code.is_empty() => Some(code),
            _ => None,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::S3 {
                status,
                code,
                message,
            } => match (code.is_empty(), message.is_empty()) {
                (true, true) => write!(f, "S3 answered HTTP {status}"),
                (true, false) => write!(f, "S3 answered HTTP {status}: {message}"),
                (false, true) => write!(f, "{code} (HTTP {status})"),
                (false, false) => write!(f, "{code}: {message} (HTTP {status})"),
            },
            ClientError::Network(why) => write!(f, "network error: {why}"),
            ClientError::Request(why) => write!(f, "invalid request: {why}"),
            ClientError::Response(why) => write!(f, "unexpected response: {why}"),
            ClientError::Io(e) => write!(f, "{e}"),
            ClientError::Credentials(why) => f.write_str(why),
            ClientError::Tls(why) => write!(
                f,
                "TLS certificate refused: {why} (a private CA needs --ca-bundle or AWS_CA_BUNDLE)"
            ),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// The wire model's errors: a bad bucket, endpoint or URI is the caller's request; an answer
/// that does not parse is the server's response.
impl From<slipstream_s3::Error> for ClientError {
    fn from(e: slipstream_s3::Error) -> Self {
        match e {
            slipstream_s3::Error::Response(why) => ClientError::Response(why),
            other => ClientError::Request(other.to_string()),
        }
    }
}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> Self {
        ClientError::Io(e)
    }
}

/// An error with its causes: hyper's top-level messages alone ("client error (Connect)",
/// "connection closed before message completed") do not say what happened.
pub fn describe(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}
