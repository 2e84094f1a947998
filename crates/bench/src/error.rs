//! Why a benchmark run could not be made. A request that fails during the measured phase is
//! not one of these: it is counted in the report's errors, with its cause.

use std::fmt;

use slipstream_client::ClientError;

/// A run that could not start, or could not finish its set-up or clean-up.
#[derive(Debug)]
#[non_exhaustive]
pub enum BenchError {
    /// The caller's: settings that do not fit together (`delete` without `--count`, a bad
    /// `--mix`). The CLI exits 2.
    Settings(String),
    /// The caller's configuration: credentials, region or endpoint that cannot sign or address
    /// the bucket.
    Config(String),
    /// The server or the network, while preparing or cleaning up the run (`during` says what).
    Server {
        /// What the run was doing: "creating bucket b", "uploading the objects to read".
        during: String,
        /// The client's error.
        source: ClientError,
    },
    /// This machine: the TLS setup, a worker thread or task that failed.
    Local(String),
}

impl BenchError {
    pub(crate) fn server(during: impl Into<String>) -> impl FnOnce(ClientError) -> Self {
        let during = during.into();
        move |source| BenchError::Server { during, source }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Settings(why) | BenchError::Config(why) | BenchError::Local(why) => {
                f.write_str(why)
            }
            BenchError::Server { during, source } => write!(f, "{during}: {source}"),
        }
    }
}

impl std::error::Error for BenchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BenchError::Server { source, .. } => Some(source),
            _ => None,
        }
    }
}
