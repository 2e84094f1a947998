//! `slipstream gateway`'s verify-mode settings: where the keys come from (`--keys FILE` or
//! `--authority URL` with its token and cache times), the edge's region, and the gateway's own
//! credentials for the origin.

use std::path::PathBuf;
use std::time::Duration;

use slipstream_gateway::{AuthoritySettings, KeySettings, VerifySettings};

use crate::flags::parse_timeout;
use crate::gateway::{GatewayArgs, Mode};
use crate::Failure;

/// The verify-mode settings of the --config file.
pub(crate) struct FileKeys {
    pub(crate) mode: Option<Mode>,
    pub(crate) keys: Option<PathBuf>,
    pub(crate) authority: Option<String>,
    pub(crate) authority_token_file: Option<PathBuf>,
    pub(crate) authority_ca_bundle: Option<PathBuf>,
    pub(crate) key_cache_soft_ttl: Option<String>,
    pub(crate) key_cache_hard_ttl: Option<String>,
    pub(crate) key_cache_negative_ttl: Option<String>,
    pub(crate) key_cache_disconnected: Option<String>,
    pub(crate) region: Option<String>,
    pub(crate) origin_region: Option<String>,
    pub(crate) origin_profile: Option<String>,
    pub(crate) virtual_host_domains: Option<Vec<String>>,
}

/// Verify mode's settings (`None`: pass-through); flags win over the file.
pub(crate) fn verify_settings(
    args: &GatewayArgs,
    file: FileKeys,
) -> Result<Option<VerifySettings>, Failure> {
    let keys = args.keys.clone().or(file.keys);
    let authority = args.authority.clone().or(file.authority);
    let token_file = args
        .authority_token_file
        .clone()
        .or(file.authority_token_file);
    let ca_bundle = args
        .authority_ca_bundle
        .clone()
        .or(file.authority_ca_bundle);
    let region = args.region.clone().or(file.region);
    let origin_region = args.origin_region.clone().or(file.origin_region);
    let origin_profile = args.origin_profile.clone().or(file.origin_profile);
    let domains = if args.virtual_host_domain.is_empty() {
        file.virtual_host_domains.unwrap_or_default()
    } else {
        args.virtual_host_domain.clone()
    };
    let duration = |flag: Option<Duration>, key: &str, value: Option<String>| match (flag, value) {
        (Some(d), _) => Ok(Some(d)),
        (None, Some(v)) => parse_timeout(&v)
            .map(Some)
            .map_err(|e| Failure::usage(format!("--config: {key}: {e}"))),
        (None, None) => Ok(None),
    };
    let soft = duration(
        args.key_cache_soft_ttl,
        "key-cache-soft-ttl",
        file.key_cache_soft_ttl,
    )?;
    let hard = duration(
        args.key_cache_hard_ttl,
        "key-cache-hard-ttl",
        file.key_cache_hard_ttl,
    )?;
    let negative = duration(
        args.key_cache_negative_ttl,
        "key-cache-negative-ttl",
        file.key_cache_negative_ttl,
    )?;
    let disconnected = duration(
        args.key_cache_disconnected,
        "key-cache-disconnected",
        file.key_cache_disconnected,
    )?;
    let cache_flags = token_file.is_some()
        || ca_bundle.is_some()
        || soft.is_some()
        || hard.is_some()
        || negative.is_some()
        || disconnected.is_some();
    if args.mode.or(file.mode).unwrap_or(Mode::PassThrough) == Mode::PassThrough {
        if keys.is_some()
            || authority.is_some()
            || cache_flags
            || region.is_some()
            || origin_region.is_some()
            || origin_profile.is_some()
            || !domains.is_empty()
        {
            return Err(Failure::usage(
                "--keys, --authority (and its --authority-*/--key-cache-* settings), --region, --origin-region, --origin-profile and --virtual-host-domain are for --mode verify",
            ));
        }
        return Ok(None);
    }
    let keys = match (keys, authority) {
        (Some(_), Some(_)) => {
            return Err(Failure::usage(
                "give --keys FILE (one machine) or --authority URL (a fleet), not both",
            ))
        }
        (None, None) => {
            return Err(Failure::usage(
                "--mode verify needs --keys FILE (access keys, secrets and policies; see docs/GATEWAY.md) or --authority URL with --authority-token-file",
            ))
        }
        (Some(file), None) => {
            if cache_flags {
                return Err(Failure::usage(
                    "--authority-token-file, --authority-ca-bundle and --key-cache-* go with --authority, not --keys",
                ));
            }
            KeySettings::File(file)
        }
        (None, Some(url)) => {
            let token_file = token_file.ok_or_else(|| {
                Failure::usage("--authority needs --authority-token-file FILE (the edge's token)")
            })?;
            let token = std::fs::read_to_string(&token_file)
                .map_err(|e| {
                    Failure::usage(format!(
                        "cannot read --authority-token-file {}: {e}",
                        token_file.display()
                    ))
                })?
                .trim()
                .to_owned();
            if token.is_empty() {
                return Err(Failure::usage(format!(
                    "--authority-token-file {} is empty",
                    token_file.display()
                )));
            }
            let mut a = AuthoritySettings::new(url, token);
            a.ca_bundle = ca_bundle;
            a.soft_ttl = soft.unwrap_or(a.soft_ttl);
            a.hard_ttl = hard.unwrap_or(a.hard_ttl);
            a.negative_ttl = negative.unwrap_or(a.negative_ttl);
            a.disconnected = disconnected.unwrap_or(a.disconnected);
            if a.soft_ttl > a.hard_ttl {
                return Err(Failure::usage(format!(
                    "--key-cache-soft-ttl ({:?}) is longer than --key-cache-hard-ttl ({:?})",
                    a.soft_ttl, a.hard_ttl
                )));
            }
            KeySettings::Authority(a)
        }
    };
    let overrides = slipstream_client::Overrides {
        profile: origin_profile,
        region: origin_region,
        ..Default::default()
    };
    let resolved = slipstream_client::resolve(&slipstream_client::Env::from_process(), &overrides)
        .map_err(|e| Failure::usage(format!("the gateway's origin credentials: {e}")))?;
    let mut virtual_host_domains = Vec::new();
    for d in domains {
        let d = d.trim_start_matches('.').to_ascii_lowercase();
        let label_ok =
            |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !d.split('.').all(label_ok) {
            return Err(Failure::usage(format!(
                "--virtual-host-domain {d:?}: give a DNS name such as s3.edge.example.com"
            )));
        }
        virtual_host_domains.push(d);
    }
    Ok(Some(VerifySettings {
        keys,
        virtual_host_domains,
        region: region.unwrap_or_else(|| "us-east-1".into()),
        origin_credentials: resolved.credentials,
        origin_region: resolved.region,
    }))
}
