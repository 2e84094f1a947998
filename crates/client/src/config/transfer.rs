//! The AWS CLI's transfer settings in the profile's `s3` section (`multipart_chunksize`,
//! `multipart_threshold`, `max_concurrent_requests`), read so that a profile tuned for
//! `aws s3 cp` tunes this CLI's transfers the same way instead of being silently ignored.
//! Values are read and checked as the AWS CLI reads them (`8MB`, `8MiB` or bytes; a positive
//! whole number), here in the chain, so that a bad one fails before any request.
//! `max_bandwidth` is read beside them (`endpoint.rs`): it configures the client itself.

use super::files::Profile;
use super::ConfigError;
use crate::parse_size;

/// What the profile asks of transfers; `None` where it says nothing (a flag of the caller's
/// own beats each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransferSettings {
    /// `s3.multipart_chunksize`: bytes per part.
    pub multipart_chunksize: Option<u64>,
    /// `s3.multipart_threshold`: uploads of this size or more go in parts.
    pub multipart_threshold: Option<u64>,
    /// `s3.max_concurrent_requests`: requests in flight at once.
    pub max_concurrent_requests: Option<u64>,
}

pub(super) fn settings(profile: &Profile<'_>) -> Result<TransferSettings, ConfigError> {
    let read = |name: &str, parse: fn(&str) -> Option<u64>, hint: &str| {
        let Some(value) = profile.setting(&format!("s3.{name}")) else {
            return Ok(None);
        };
        match parse(value.trim()) {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(ConfigError::Invalid(format!(
                "s3.{name} = {value:?} in {}: give a positive whole number{hint}",
                profile.config_file,
            ))),
        }
    };
    Ok(TransferSettings {
        multipart_chunksize: read("multipart_chunksize", parse_size, BYTES)?,
        multipart_threshold: read("multipart_threshold", parse_size, BYTES)?,
        max_concurrent_requests: read("max_concurrent_requests", parse_count, "")?,
    })
}

const BYTES: &str = " of bytes, or one with KB, MB, GB or TB (8MB, 16MiB)";

fn parse_count(text: &str) -> Option<u64> {
    text.parse().ok()
}
