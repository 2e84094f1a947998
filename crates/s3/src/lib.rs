//! The S3 wire model: which names are valid, where a bucket lives, how `s3://` URIs read,
//! S3's XML answers ([`xml`], [`delete`], [`copy`], [`versions`], [`versioning`]), and the IAM actions and resources a request needs
//! ([`operation`], what the verifying edge authorizes), and the head of a POST upload's form
//! ([`post_form`]).
//!
//! Pure: no I/O, no async. It decides the URL base of a bucket ([`resolve`]) with the choices
//! botocore makes, so URLs presigned by `slipstream-sign` are byte-identical to boto3's.
//! Signing itself is in `slipstream-sign`; sending requests is in `slipstream-client`.
#![forbid(unsafe_code)]

mod aws_hosts;
mod bucket;
pub mod copy;
pub mod delete;
mod endpoint;
mod error;
pub mod operation;
pub mod pattern;
pub mod post_form;
pub mod time;
mod uri;
pub mod versioning;
pub mod versions;
pub mod xml;

pub use aws_hosts::Variants;
pub use bucket::{check_bucket, is_valid_host_label, is_virtual_hostable};
pub use endpoint::{resolve, resolve_service, split_port, AddressingStyle, Endpoint};
pub use error::Error;
pub use uri::S3Uri;
