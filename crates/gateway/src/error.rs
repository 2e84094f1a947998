//! What stops a gateway from starting.

use std::fmt;

/// Why a gateway cannot start (or reload its certificates). Each is the operator's to fix.
#[derive(Debug)]
#[non_exhaustive]
pub enum GatewayError {
    /// A setting is wrong (an origin that is not a URL, no listener...): says which.
    Settings(String),
    /// A certificate or key file is missing, unreadable or does not match.
    Tls(String),
    /// A listener could not be bound (in use, not permitted).
    Bind(String),
    /// The access log cannot be opened or written.
    Log(String),
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GatewayError::Settings(m)
            | GatewayError::Tls(m)
            | GatewayError::Bind(m)
            | GatewayError::Log(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for GatewayError {}
