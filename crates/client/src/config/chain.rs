//! Which credentials: the environment, the shared files (an SSO session, keys,
//! `credential_process`), then the remote sources (web identity, the container endpoint,
//! instance metadata), in the AWS CLI's order. The first that applies wins.

use std::path::PathBuf;

use slipstream_sign::Credentials;

use super::files::{credentials_from, Files, Profile, Section};
use super::{ConfigError, Env};
use crate::credentials::CredentialSource;

/// Where the credentials come from, and how to name that place in messages.
pub(super) type Found = (CredentialSource, String);

/// Credentials from the environment (unless a profile was asked for) or the profile's files;
/// `None` when neither has any.
pub(super) fn local(
    env: &Env,
    files: &Files,
    profile: &Profile<'_>,
) -> Result<Option<Found>, ConfigError> {
    if !profile.explicit {
        if let Some(c) = from_env(env)? {
            return Ok(Some((
                CredentialSource::Static(c),
                "environment variables".to_owned(),
            )));
        }
    }
    from_files(env, files, profile)
}

/// After the environment and the files: the remote sources, or an error that lists every
/// place looked in.
pub(super) fn remote(env: &Env, profile: &Profile<'_>, region: &str) -> Result<Found, ConfigError> {
    if let Some(source) = remote_source(env, profile.config, region)? {
        let what = source.describe().to_owned();
        return Ok((source, what));
    }
    let mut tried = Vec::new();
    if !profile.explicit {
        tried.push("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY".to_owned());
    }
    tried.push(format!(
        "profile {:?} in {}",
        profile.name, profile.credentials_file
    ));
    tried.push(format!(
        "profile {:?} in {}",
        profile.name, profile.config_file
    ));
    tried.push(
        "web identity, container and instance metadata (AWS_EC2_METADATA_DISABLED is set)"
            .to_owned(),
    );
    Err(ConfigError::NoCredentials(tried))
}

/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
fn from_env(env: &Env) -> Result<Option<Credentials>, ConfigError> {
    match (
        env.var("AWS_ACCESS_KEY_ID"),
        env.var("AWS_SECRET_ACCESS_KEY"),
    ) {
        (None, None) => Ok(None),
        (Some(id), Some(secret)) => {
            Credentials::new(id, secret, env.var("AWS_SESSION_TOKEN").map(str::to_owned))
                .map(Some)
                .map_err(|e| {
                    ConfigError::Invalid(format!("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY: {e}"))
                })
        }
        _ => Err(ConfigError::Invalid(
            "only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set".into(),
        )),
    }
}

/// botocore's order within a profile: an SSO session, keys in the credentials file, the
/// profile's `credential_process` (from either file), keys in the config file.
fn from_files(
    env: &Env,
    files: &Files,
    profile: &Profile<'_>,
) -> Result<Option<Found>, ConfigError> {
    let name = &profile.name;
    if let Some(source) = sso_source(env, files, profile.config, name, &profile.config_file)? {
        let what = format!("the SSO session of profile {name:?}");
        return Ok(Some((source, what)));
    }
    let keys = |section: Option<&Section>, file: &str| {
        let what = format!("profile {name:?} in {file}");
        Ok::<_, ConfigError>(match section {
            Some(s) => credentials_from(s, &what)?.map(|c| (CredentialSource::Static(c), what)),
            None => None,
        })
    };
    if let Some(found) = keys(profile.credentials, &profile.credentials_file)? {
        return Ok(Some(found));
    }
    let process = [profile.credentials, profile.config]
        .into_iter()
        .flatten()
        .find_map(|s| s.get("credential_process").filter(|c| !c.trim().is_empty()));
    if let Some(command) = process {
        let what = format!("credential_process of profile {name:?}");
        let command = command.clone();
        return Ok(Some((CredentialSource::Process { command }, what)));
    }
    keys(profile.config, &profile.config_file)
}

/// An SSO profile's source: `sso_account_id` and `sso_role_name`, with `sso_session` naming an
/// `[sso-session NAME]` section that holds `sso_start_url` and `sso_region` (or, in the legacy
/// form, those two in the profile itself). `None` when the profile has no SSO settings.
fn sso_source(
    env: &Env,
    files: &Files,
    section: Option<&Section>,
    profile: &str,
    config_file: &str,
) -> Result<Option<CredentialSource>, ConfigError> {
    let Some(section) = section else {
        return Ok(None);
    };
    let get = |s: &Section, k: &str| s.get(k).filter(|v| !v.is_empty()).cloned();
    let (session, legacy_url) = (get(section, "sso_session"), get(section, "sso_start_url"));
    if session.is_none() && legacy_url.is_none() {
        return Ok(None);
    }
    let what = format!("profile {profile:?} in {config_file}");
    let needed = |s: &Section, k: &str, place: &str| {
        get(s, k).ok_or_else(|| ConfigError::Invalid(format!("{place} has no {k}")))
    };
    let (region, cache_key) = match &session {
        Some(name) => {
            let place = format!("[sso-session {name}] in {config_file}");
            let s = files
                .config
                .get(&format!("sso-session {name}"))
                .ok_or_else(|| {
                    ConfigError::Invalid(format!("{what} names {place}, which is missing"))
                })?;
            needed(s, "sso_start_url", &place)?;
            (needed(s, "sso_region", &place)?, name.clone())
        }
        None => (
            needed(section, "sso_region", &what)?,
            legacy_url.unwrap_or_default(),
        ),
    };
    let account_id = needed(section, "sso_account_id", &what)?;
    let role_name = needed(section, "sso_role_name", &what)?;
    let aws_dir = env
        .home
        .as_ref()
        .map(|h| h.join(".aws"))
        .ok_or_else(|| ConfigError::Invalid(format!("{what} uses SSO, but HOME is not set")))?;
    let portal = env.var("AWS_ENDPOINT_URL_SSO").map_or_else(
        || format!("https://portal.sso.{region}.amazonaws.com"),
        str::to_owned,
    );
    Ok(Some(CredentialSource::Sso {
        token_file: crate::credentials::sso::token_path(&aws_dir, &cache_key),
        portal,
        account_id,
        role_name,
        login: format!("aws sso login --profile {profile}"),
        oidc: session.map(|_| {
            env.var("AWS_ENDPOINT_URL_SSO_OIDC").map_or_else(
                || format!("https://oidc.{region}.amazonaws.com"),
                str::to_owned,
            )
        }),
    }))
}

/// The credential sources after the environment and the files, in the AWS CLI's order: web
/// identity (environment, then the profile's `role_arn` and `web_identity_token_file`), the
/// container endpoint, then instance metadata unless `AWS_EC2_METADATA_DISABLED` is `true`.
fn remote_source(
    env: &Env,
    profile: Option<&Section>,
    region: &str,
) -> Result<Option<CredentialSource>, ConfigError> {
    let setting = |k: &str| profile.and_then(|p| p.get(k)).map(String::as_str);
    let token_file = env
        .var("AWS_WEB_IDENTITY_TOKEN_FILE")
        .or_else(|| setting("web_identity_token_file"));
    let role_arn = env.var("AWS_ROLE_ARN").or_else(|| setting("role_arn"));
    if let (Some(token_file), Some(role_arn)) = (token_file, role_arn) {
        let session_name = env
            .var("AWS_ROLE_SESSION_NAME")
            .or_else(|| setting("role_session_name"))
            .map_or_else(
                || format!("slipstream-{}", std::process::id()),
                str::to_owned,
            );
        let sts_endpoint = env.var("AWS_ENDPOINT_URL_STS").map_or_else(
            || format!("https://sts.{region}.amazonaws.com"),
            str::to_owned,
        );
        return Ok(Some(CredentialSource::WebIdentity {
            token_file: PathBuf::from(token_file),
            role_arn: role_arn.to_owned(),
            session_name,
            sts_endpoint,
        }));
    }
    let url = match (
        env.var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
        env.var("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    ) {
        (Some(rel), _) => Some(format!("http://169.254.170.2{rel}")),
        (None, Some(full)) => Some(full.to_owned()),
        (None, None) => None,
    };
    if let Some(url) = url {
        return Ok(Some(CredentialSource::Container {
            url,
            token: env
                .var("AWS_CONTAINER_AUTHORIZATION_TOKEN")
                .map(str::to_owned),
            token_file: env
                .var("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
                .map(PathBuf::from),
        }));
    }
    if env
        .var("AWS_EC2_METADATA_DISABLED")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return Ok(None);
    }
    let endpoint = env
        .var("AWS_EC2_METADATA_SERVICE_ENDPOINT")
        .unwrap_or("http://169.254.169.254")
        .to_owned();
    Ok(Some(CredentialSource::InstanceMetadata { endpoint }))
}
