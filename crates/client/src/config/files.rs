//! The shared files: `~/.aws/credentials` and `~/.aws/config` (or where `AWS_SHARED_CREDENTIALS_FILE`
//! and `AWS_CONFIG_FILE` say), their profiles' sections, and the keys a section holds.

use std::collections::HashMap;
use std::path::PathBuf;

use slipstream_sign::Credentials;

use super::{ConfigError, Env};
use crate::ini;

/// A section of a shared file: its settings by name.
pub(super) type Section = HashMap<String, String>;

pub(super) struct Files {
    pub credentials: ini::Sections,
    pub config: ini::Sections,
    pub credentials_path: Option<PathBuf>,
    pub config_path: Option<PathBuf>,
}

impl Files {
    pub fn load(env: &Env) -> Result<Self, ConfigError> {
        let read = |p: &Option<PathBuf>| -> Result<ini::Sections, ConfigError> {
            match p {
                None => Ok(ini::Sections::new()),
                Some(p) => match std::fs::read_to_string(p) {
                    Ok(text) => Ok(ini::parse(&text)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ini::Sections::new()),
                    Err(e) => Err(ConfigError::Unreadable(p.clone(), e)),
                },
            }
        };
        let credentials_path = env.file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
        let config_path = env.file("AWS_CONFIG_FILE", "config");
        Ok(Self {
            credentials: read(&credentials_path)?,
            config: read(&config_path)?,
            credentials_path,
            config_path,
        })
    }

    /// The profile's section in the credentials file (`[name]`).
    pub fn credentials_section(&self, profile: &str) -> Option<&HashMap<String, String>> {
        self.credentials.get(profile)
    }

    /// The profile's section in the config file (`[profile name]`, or `[default]`).
    pub fn config_section(&self, profile: &str) -> Option<&HashMap<String, String>> {
        let named = self.config.get(&format!("profile {profile}"));
        if profile == "default" {
            named.or_else(|| self.config.get("default"))
        } else {
            named
        }
    }
}

pub(super) fn credentials_from(
    section: &HashMap<String, String>,
    what: &str,
) -> Result<Option<Credentials>, ConfigError> {
    let id = section.get("aws_access_key_id");
    let secret = section.get("aws_secret_access_key");
    match (id, secret) {
        (None, None) => Ok(None),
        (Some(id), Some(secret)) => {
            let token = section
                .get("aws_session_token")
                .cloned()
                .filter(|t| !t.is_empty());
            Credentials::new(id.as_str(), secret.as_str(), token)
                .map(Some)
                .map_err(|e| ConfigError::Invalid(format!("{what}: {e}")))
        }
        _ => Err(ConfigError::Invalid(format!(
            "{what} has only one of aws_access_key_id and aws_secret_access_key"
        ))),
    }
}

/// The profile in use: its name, whether it was asked for (`--profile`), and its sections.
pub(super) struct Profile<'a> {
    pub name: String,
    pub explicit: bool,
    pub credentials: Option<&'a Section>,
    pub config: Option<&'a Section>,
    /// The files' names, for messages.
    pub credentials_file: String,
    pub config_file: String,
}

impl<'a> Profile<'a> {
    /// `--profile`, else `AWS_PROFILE`, else `default`; an explicit profile that neither file
    /// has is an error.
    pub fn select(env: &Env, asked: Option<&str>, files: &'a Files) -> Result<Self, ConfigError> {
        let explicit = asked.is_some();
        let name = asked
            .map(str::to_owned)
            .or_else(|| env.var("AWS_PROFILE").map(str::to_owned))
            .unwrap_or_else(|| "default".into());
        let credentials = files.credentials_section(&name);
        let config = files.config_section(&name);
        if (explicit || env.var("AWS_PROFILE").is_some())
            && credentials.is_none()
            && config.is_none()
        {
            return Err(ConfigError::NoSuchProfile(name));
        }
        let shown = |p: &Option<PathBuf>, default: &str| {
            p.as_ref()
                .map_or(default.into(), |p| p.display().to_string())
        };
        Ok(Self {
            name,
            explicit,
            credentials,
            config,
            credentials_file: shown(&files.credentials_path, "~/.aws/credentials"),
            config_file: shown(&files.config_path, "~/.aws/config"),
        })
    }

    /// A non-empty setting of the profile in the config file.
    pub fn setting(&self, key: &str) -> Option<&'a str> {
        self.config
            .and_then(|s| s.get(key))
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}
