//! Where requests go and how often they are tried: the region, a custom endpoint, the
//! addressing style, the certificates to trust, the proxies on the way and the attempts per
//! request, each from the command line, the environment or the profile, in the AWS CLI's order.

use std::path::PathBuf;

use slipstream_s3::{AddressingStyle, Endpoint};

use crate::proxy::Proxies;

use super::files::Profile;
use super::{ConfigError, Env, Overrides};

/// `--region`, `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else `us-east-1`
/// (what the AWS CLI uses for S3 when nothing is set).
pub(super) fn region(cli: &Overrides, env: &Env, profile: &Profile<'_>) -> String {
    cli.region
        .clone()
        .or_else(|| env.var("AWS_REGION").map(str::to_owned))
        .or_else(|| env.var("AWS_DEFAULT_REGION").map(str::to_owned))
        .or_else(|| profile.setting("region").map(str::to_owned))
        .unwrap_or_else(|| "us-east-1".to_owned())
}

/// `--endpoint-url`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's
/// `s3.endpoint_url` or `endpoint_url`; `None` for AWS itself.
pub(super) fn endpoint(
    cli: &Overrides,
    env: &Env,
    profile: &Profile<'_>,
) -> Result<Option<Endpoint>, ConfigError> {
    let url = cli
        .endpoint_url
        .clone()
        .or_else(|| env.var("AWS_ENDPOINT_URL_S3").map(str::to_owned))
        .or_else(|| env.var("AWS_ENDPOINT_URL").map(str::to_owned))
        .or_else(|| {
            profile
                .setting("s3.endpoint_url")
                .or_else(|| profile.setting("endpoint_url"))
                .map(str::to_owned)
        });
    url.map(|u| Endpoint::parse(&u))
        .transpose()
        .map_err(|e| ConfigError::Invalid(e.to_string()))
}

/// The flag, else the profile's `s3.addressing_style`, else auto.
pub(super) fn addressing(
    cli: &Overrides,
    profile: &Profile<'_>,
) -> Result<AddressingStyle, ConfigError> {
    if let Some(a) = cli.addressing {
        return Ok(a);
    }
    match profile.setting("s3.addressing_style") {
        None | Some("auto") => Ok(AddressingStyle::Auto),
        Some("virtual") => Ok(AddressingStyle::Virtual),
        Some("path") => Ok(AddressingStyle::Path),
        Some(other) => Err(ConfigError::Invalid(format!(
            "s3.addressing_style {other:?} in {} must be auto, virtual or path",
            profile.config_file
        ))),
    }
}

/// `--region-set`, `AWS_SIGV4A_SIGNING_REGION_SET`, the profile's `sigv4a_signing_region_set`
/// (botocore reads the same two), checked here so that a bad set fails before any request.
pub(super) fn region_set(
    cli: &Overrides,
    env: &Env,
    profile: &Profile<'_>,
) -> Result<Option<String>, ConfigError> {
    let set = cli
        .region_set
        .clone()
        .or_else(|| env.var("AWS_SIGV4A_SIGNING_REGION_SET").map(str::to_owned))
        .or_else(|| {
            profile
                .setting("sigv4a_signing_region_set")
                .map(str::to_owned)
        });
    if let Some(set) = &set {
        slipstream_sign::check_region_set(set).map_err(|e| ConfigError::Invalid(e.to_string()))?;
    }
    Ok(set)
}

/// `--ca-bundle`, `AWS_CA_BUNDLE`, the profile's `ca_bundle`.
pub(super) fn ca_bundle(cli: &Overrides, env: &Env, profile: &Profile<'_>) -> Option<PathBuf> {
    cli.ca_bundle
        .clone()
        .or_else(|| env.var("AWS_CA_BUNDLE").map(PathBuf::from))
        .or_else(|| profile.setting("ca_bundle").map(PathBuf::from))
}

/// The proxies the environment names, as botocore reads them (Python's urllib): `https_proxy`
/// for `https` endpoints, `http_proxy` for `http` ones, `no_proxy` for the hosts that go direct;
/// each in lower case first, then upper case (a lower-case one set empty turns the proxy off).
/// `HTTP_PROXY` is not read when `REQUEST_METHOD` is set (a CGI program, whose
/// environment a request's `Proxy:` header can set). Overridden as a whole by `cli.proxies`.
/// A URL that cannot be used fails the client made with it (`S3Client::new`), not the chain:
/// presigning connects nowhere.
pub(super) fn proxies(cli: &Overrides, env: &Env) -> Option<Proxies> {
    if let Some(given) = &cli.proxies {
        return Some(given.clone());
    }
    let either = |name: &str| match env.raw(&name.to_ascii_lowercase()) {
        Some(lower) => Some(lower),
        None if name == "HTTP_PROXY" && env.raw("REQUEST_METHOD").is_some() => None,
        None => env.raw(name),
    };
    Proxies::from_settings(
        either("HTTP_PROXY"),
        either("HTTPS_PROXY"),
        either("NO_PROXY"),
    )
}

/// `AWS_MAX_ATTEMPTS`, else the profile's `max_attempts`: attempts per request, the first
/// included, as botocore and the AWS CLI read them; a value that is not a whole number of at
/// least 1 is refused, as botocore refuses it.
pub(super) fn max_attempts(env: &Env, profile: &Profile<'_>) -> Result<Option<u32>, ConfigError> {
    let (name, value) = match env.var("AWS_MAX_ATTEMPTS") {
        Some(v) => ("AWS_MAX_ATTEMPTS", v),
        None => match profile.setting("max_attempts") {
            Some(v) => ("the profile's max_attempts", v),
            None => return Ok(None),
        },
    };
    match value.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(ConfigError::Invalid(format!(
            "{name} = {value:?}: give a whole number of attempts, at least 1 (the first included)"
        ))),
    }
}

/// The profile's `s3.max_bandwidth` (the AWS CLI's transfer setting: `50MB/s`, or bytes per
/// second), checked here so that a bad value fails before any request.
pub(super) fn max_bandwidth(
    profile: &Profile<'_>,
) -> Result<Option<crate::Bandwidth>, ConfigError> {
    profile
        .setting("s3.max_bandwidth")
        .map(crate::Bandwidth::from_rate)
        .transpose()
        .map_err(|e| {
            ConfigError::Invalid(format!("s3.max_bandwidth in {}: {e}", profile.config_file))
        })
}
