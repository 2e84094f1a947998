//! Everything that reads the outside world to talk to S3.
//!
//! Today: the AWS CLI's configuration chain ([`config`]): credentials from the environment and the
//! shared files, region, endpoint and addressing style. The connection pool, retries and the
//! remaining credential sources (web identity, ECS, IMDS) belong here too (issue 5).
#![forbid(unsafe_code)]

pub mod config;
mod ini;

pub use config::{resolve, ConfigError, Env, Overrides, Resolved};
