//! Everything that reads the outside world to talk to S3, in three layers, each using only the
//! ones below it:
//!
//! 1. the transport (`transport.rs`): a pool of kept-alive connections (TCP_NODELAY, spread over
//!    DNS answers, opened ahead of need, under a chosen congestion control, [`tls`]) and plain
//!    requests over it, with an [`Activity`] clock of when bytes last moved;
//! 2. [`credentials`]: web identity (STS), container (ECS), instance metadata (IMDSv2), SSO (the
//!    token `aws sso login` cached, refreshed through SSO OIDC), `credential_process` and the
//!    caller's own provider, one file each, cached and refreshed before they expire. Logging in
//!    to SSO needs a browser and is left to the AWS CLI;
//! 3. [`S3Client`] (`client.rs`, operations in `ops.rs`): signed S3 requests with retries
//!    (full-jitter backoff) and S3's error codes kept, [`checksum`]s, S3's [`xml`].
//!
//! Beside them, [`config`]: the AWS CLI's configuration chain (credentials from the environment
//! and the shared files, region, endpoint, addressing style), which picks the credential source.
#![forbid(unsafe_code)]

mod activity;
mod bandwidth;
mod bucket_filter;
mod bucket_versioning;
pub mod checksum;
mod client;
pub mod config;
mod congestion;
mod connect_time;
mod copy;
pub mod credentials;
mod customer_key;
mod delete;
pub mod dial;
mod dns;
mod error;
mod ini;
mod key;
mod no_proxy;
mod object;
mod ops;
mod options;
mod payload;
mod proxy;
mod read_ahead;
mod runtime_thread;
mod size;
pub mod tls;
mod trace;
mod transport;
mod warm;

pub use activity::Activity;
pub use bandwidth::Bandwidth;
pub use bucket_filter::BucketFilter;
pub use checksum::{Checksum, ChecksumAlgorithm};
pub use client::S3Client;
pub use config::{
    resolve, resolve_with, ConfigError, Env, Overrides, Resolved, TransferSettings, VariantChoices,
};
pub use copy::{copy_source, CopyOptions};
pub use credentials::{
    request_signer, CredentialSource, Expiring, ProvideCredentials, RefreshingSigner,
};
pub use customer_key::{CustomerKey, SSE_C_ALGORITHM};
pub use dial::{Dialed, Dialer};
pub use error::{describe, ClientError};
pub use key::{ObjectKey, ObjectKeyBuf};
pub use object::ObjectStream;
pub use ops::{CompletedPart, ListFrom, MultipartUpload, ObjectInfo};
pub use options::ClientOptions;
pub use payload::{FileRange, Payload};
pub use proxy::Proxies;
pub use runtime_thread::spawn_runtime_thread;
pub use size::parse_size;
pub use slipstream_s3::copy::Copied;
pub use slipstream_s3::delete::{DeleteError, MAX_DELETE_KEYS};
pub use slipstream_s3::versioning::{Versioning, VersioningStatus};
pub use slipstream_s3::versions::{Version, VersionMarker, VersionPage};
/// S3's XML, read sans-IO by `slipstream-s3` (listings, errors, upload IDs).
pub use slipstream_s3::xml;
pub use trace::{Attempt, Trace};
