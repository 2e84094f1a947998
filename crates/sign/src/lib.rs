//! SigV4 (`AWS4-HMAC-SHA256`) signing for S3: presigned URLs, `Authorization` headers and
//! aws-chunked bodies.
//!
//! This crate does no I/O, starts no runtime and never reads the clock: callers pass the
//! [`SigningTime`] and get bytes back. That keeps it testable against fixed vectors and usable
//! from any runtime, the CLI, the Python package and (later) the gateway's verifier.
//!
//! - [`Presigner`] and [`Template`]: many S3 URLs per second, byte-identical to botocore.
//! - [`Signer`]: any request, header or query form, S3 or other services ([`Settings`]).
//! - [`ChunkSigner`] and the `chunk` functions: streaming uploads.
//!
//! Not here: where a bucket lives (virtual-hosted or path-style hosts) is `slipstream-s3`'s job,
//! and reading credentials from the environment or files is the CLI's.
#![forbid(unsafe_code)]

mod algorithm;
pub mod batch;
pub mod canonical;
pub mod chunk;
mod credentials;
pub mod encode;
mod error;
mod key;
mod payload;
mod presign;
mod signer;
pub mod string_to_sign;
mod time;
pub mod v4a;
pub mod verify;

pub use canonical::{PathEncoding, Request};
pub use chunk::ChunkSigner;
pub use credentials::Credentials;
pub use error::Error;
pub use key::{KeyCache, SigningKey};
pub use payload::{PayloadHash, EMPTY_SHA256};
pub use presign::{PresignOptions, Presigner, Template, UrlBase, UrlBatch};
pub use signer::{
    check_expiry, HeaderSignature, QuerySignature, SessionTokenMode, Settings, Signer, MAX_EXPIRES,
};
pub use string_to_sign::ALGORITHM;
pub use time::SigningTime;
