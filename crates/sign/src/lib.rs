//! SigV4 (`AWS4-HMAC-SHA256`) and SigV4A (`AWS4-ECDSA-P256-SHA256`) signing for S3: presigned
//! URLs, `Authorization` headers and aws-chunked bodies, and the verifier of all of them.
//!
//! This crate does no I/O, starts no runtime and never reads the clock: callers pass the
//! [`SigningTime`] and get bytes back. That keeps it testable against fixed vectors and usable
//! from any runtime: the client, the CLI, the Python package and the gateway.
//!
//! - [`Presigner`] and [`Template`]: many S3 URLs per second, byte-identical to botocore;
//!   [`batch`] over every core, [`mod@column`] into Arrow's large string layout.
//! - [`Presigner::presign_post`]: browser form uploads ([`PostForm`]), as botocore's.
//! - [`Signer`]: any request, header or query form, S3 or other services ([`Settings`]), with
//!   either algorithm (`Signer::new_v4a`, [`v4a`]).
//! - [`ChunkSigner`] and the `chunk` functions: streaming uploads.
//! - [`verify`]: the other side, from derived keys or public keys only (never a secret).
//!
//! Not here: where a bucket lives (virtual-hosted or path-style hosts) is `slipstream-s3`'s job,
//! and reading credentials from the environment or files is `slipstream-client`'s.
#![forbid(unsafe_code)]

mod algorithm;
pub mod batch;
pub mod canonical;
pub mod chunk;
pub mod column;
mod credentials;
pub mod encode;
mod error;
mod key;
mod payload;
mod post;
mod presign;
mod signer;
pub mod string_to_sign;
mod time;
pub mod v4a;
pub mod verify;

pub use algorithm::check_region_set;
pub use canonical::{PathEncoding, Request};
pub use chunk::ChunkSigner;
pub use credentials::Credentials;
pub use error::Error;
pub use key::{KeyCache, SigningKey};
pub use payload::{PayloadHash, EMPTY_SHA256};
pub use post::{PolicyValue, PostForm};
pub use presign::{PresignOptions, Presigner, Template, UrlBase, UrlBatch};
pub use signer::{
    check_expiry, HeaderSignature, QuerySignature, SessionTokenMode, Settings, Signer, MAX_EXPIRES,
};
pub use string_to_sign::ALGORITHM;
pub use time::SigningTime;
