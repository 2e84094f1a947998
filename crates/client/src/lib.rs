//! Everything that reads the outside world to talk to S3.
//!
//! - [`config`]: the AWS CLI's configuration chain: credentials from the environment and the
//!   shared files, region, endpoint and addressing style.
//! - [`S3Client`]: signed S3 operations over a pool of kept-alive connections, with retries
//!   (full-jitter backoff) and S3's error codes kept.
//!
//! - [`credentials`]: web identity (STS), container (ECS), instance metadata (IMDSv2), SSO
//!   (the token `aws sso login` cached, refreshed through SSO OIDC) and `credential_process`
//!   credentials, cached and refreshed before they expire. Logging in to SSO needs a browser
//!   and is left to the AWS CLI.
//!
//! - [`tls`]: TLS configurations (roots, versions) for the pool and for hand-made connections.
//!
//! - [`checksum`]: the CRCs S3 keeps with objects and parts.
#![forbid(unsafe_code)]

mod activity;
pub mod checksum;
pub mod config;
mod congestion;
pub mod credentials;
mod dns;
mod error;
mod http;
mod ini;
mod ops;
mod process;
mod sso;
pub mod tls;
mod warm;
pub mod xml;

pub use activity::Activity;
pub use checksum::{Checksum, ChecksumAlgorithm};
pub use config::{resolve, ConfigError, Env, Overrides, Resolved};
pub use credentials::{CredentialSource, Expiring, ProvideCredentials};
pub use error::ClientError;
pub use http::{ClientOptions, S3Client};
pub use ops::{CompletedPart, ObjectInfo};
