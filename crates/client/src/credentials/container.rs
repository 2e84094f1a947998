//! The ECS (or any container) credential endpoint, with its authorization token given directly
//! or in a file (re-read at every fetch: the agent rotates it).

use std::path::Path;

use hyper::Method;

use super::json::json_credentials;
use super::{Expiring, METADATA_TIMEOUT};
use crate::transport::{get, Http};
use crate::ClientError;

/// The credentials at `url`.
pub(super) async fn fetch(
    http: &Http,
    url: &str,
    token: Option<&str>,
    token_file: Option<&Path>,
) -> Result<Expiring, ClientError> {
    let token = match (token_file, token) {
        (Some(f), _) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| ClientError::Request(format!("{}: {e}", f.display())))?,
        ),
        (None, t) => t.map(str::to_owned),
    };
    let headers: Vec<(&str, String)> = token
        .map(|t| ("authorization", t.trim().to_owned()))
        .into_iter()
        .collect();
    let body = get(http, Method::GET, url, &headers, METADATA_TIMEOUT).await?;
    json_credentials(&body)
}
