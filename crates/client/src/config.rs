//! Credentials, region, endpoint and addressing style, found the way the AWS CLI finds them.
//!
//! Order, first match wins:
//! - credentials: an explicit `--profile`'s files; else `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`
//!   (+ `AWS_SESSION_TOKEN`); else the profile named by `AWS_PROFILE` (or `default`) in
//!   `~/.aws/credentials` (`AWS_SHARED_CREDENTIALS_FILE`), then in `~/.aws/config` (`AWS_CONFIG_FILE`).
//!   Within a profile: an SSO session (`sso_session`, or the legacy `sso_start_url` form: role
//!   credentials from the IAM Identity Center portal for the token `aws sso login` cached), then
//!   keys in the credentials file, then `credential_process`, then keys in the config file.
//!   Without any: web identity, the container endpoint, instance metadata.
//! - region: `--region`, `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, then
//!   `us-east-1` (what the AWS CLI uses for S3 when nothing is set).
//! - endpoint: `--endpoint-url`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's
//!   `s3.endpoint_url` or `endpoint_url`.
//! - addressing: the flag, else the profile's `s3.addressing_style`.
//!
//! The environment is passed in as [`Env`] so tests do not touch the process environment.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

use slipstream_s3::{AddressingStyle, Endpoint};
use slipstream_sign::Credentials;

use crate::credentials::CredentialSource;
use crate::ini;

/// The variables and home directory the chain reads. Its `Debug` names the variables and shows
/// their values except those that hold secrets (`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// any other `*SECRET*` or `*TOKEN` variable), which print as `<redacted>`.
#[derive(Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
    home: Option<PathBuf>,
}

impl Env {
    /// The process environment.
    pub fn from_process() -> Self {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| k.starts_with("AWS_"))
            .collect();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Self { vars, home }
    }

    /// A given set of variables and home directory (tests).
    pub fn new(vars: &[(&str, &str)], home: Option<PathBuf>) -> Self {
        Self {
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            home,
        }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn file(&self, var: &str, default: &str) -> Option<PathBuf> {
        match self.var(var) {
            Some(p) => Some(PathBuf::from(p)),
            None => self.home.as_ref().map(|h| h.join(".aws").join(default)),
        }
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        let vars = names.into_iter().map(|name| {
            let value = if holds_secret(name) {
                "<redacted>"
            } else {
                self.vars[name].as_str()
            };
            (name, value)
        });
        f.debug_struct("Env")
            .field("vars", &DebugMap(vars.collect()))
            .field("home", &self.home)
            .finish()
    }
}

/// Whether an `AWS_*` variable holds a secret: a key, a token (not a token's file name), a
/// password. Unknown names containing these words are redacted too.
fn holds_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    name.contains("SECRET")
        || name.contains("PASSWORD")
        || (name.contains("TOKEN") && !name.ends_with("_FILE"))
}

/// A list of pairs shown as a map.
struct DebugMap<'a>(Vec<(&'a String, &'a str)>);

impl fmt::Debug for DebugMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

/// What the command line said; `None` means "look further down the chain".
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--profile`.
    pub profile: Option<String>,
    /// `--region`.
    pub region: Option<String>,
    /// `--endpoint-url`.
    pub endpoint_url: Option<String>,
    /// `--addressing-style` / `--path-style`.
    pub addressing: Option<AddressingStyle>,
    /// `--ca-bundle`.
    pub ca_bundle: Option<PathBuf>,
}

/// The outcome of the chain.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// Where the credentials come from (static ones: their `Debug` is redacted).
    pub credentials: CredentialSource,
    /// Region for the credential scope and AWS host names.
    pub region: String,
    /// A custom endpoint, if any.
    pub endpoint: Option<Endpoint>,
    /// Virtual-hosted or path-style.
    pub addressing: AddressingStyle,
    /// Where the credentials came from, for `--debug`-style messages (never the values).
    pub credential_source: String,
    /// Certificates to trust instead of the usual roots (`--ca-bundle`, `AWS_CA_BUNDLE`, the
    /// profile's `ca_bundle`).
    pub ca_bundle: Option<PathBuf>,
}

/// Why the chain found nothing usable.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// Caller's setup: no source had credentials. Lists what was tried.
    NoCredentials(Vec<String>),
    /// Caller's setup: an explicit profile does not exist.
    NoSuchProfile(String),
    /// Caller's setup: a value that exists but is wrong (half a key pair, bad style, bad endpoint).
    Invalid(String),
    /// Environment: a file exists but could not be read.
    Unreadable(PathBuf, std::io::Error),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NoCredentials(tried) => write!(
                f,
                "no AWS credentials found (looked in: {}); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run `aws configure`",
                tried.join(", ")
            ),
            ConfigError::NoSuchProfile(p) => write!(f, "the profile {p:?} is not in ~/.aws/credentials or ~/.aws/config"),
            ConfigError::Invalid(why) => f.write_str(why),
            ConfigError::Unreadable(p, e) => write!(f, "cannot read {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for ConfigError {}

struct Files {
    credentials: ini::Sections,
    config: ini::Sections,
    credentials_path: Option<PathBuf>,
    config_path: Option<PathBuf>,
}

impl Files {
    fn load(env: &Env) -> Result<Self, ConfigError> {
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
    fn credentials_section(&self, profile: &str) -> Option<&HashMap<String, String>> {
        self.credentials.get(profile)
    }

    /// The profile's section in the config file (`[profile name]`, or `[default]`).
    fn config_section(&self, profile: &str) -> Option<&HashMap<String, String>> {
        let named = self.config.get(&format!("profile {profile}"));
        if profile == "default" {
            named.or_else(|| self.config.get("default"))
        } else {
            named
        }
    }
}

fn credentials_from(
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

/// An SSO profile's source: `sso_account_id` and `sso_role_name`, with `sso_session` naming an
/// `[sso-session NAME]` section that holds `sso_start_url` and `sso_region` (or, in the legacy
/// form, those two in the profile itself). `None` when the profile has no SSO settings.
fn sso_source(
    env: &Env,
    files: &Files,
    section: Option<&HashMap<String, String>>,
    profile: &str,
    config_file: &str,
) -> Result<Option<CredentialSource>, ConfigError> {
    let Some(section) = section else {
        return Ok(None);
    };
    let get = |s: &HashMap<String, String>, k: &str| s.get(k).filter(|v| !v.is_empty()).cloned();
    let (session, legacy_url) = (get(section, "sso_session"), get(section, "sso_start_url"));
    if session.is_none() && legacy_url.is_none() {
        return Ok(None);
    }
    let what = format!("profile {profile:?} in {config_file}");
    let needed = |s: &HashMap<String, String>, k: &str, place: &str| {
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
    profile: Option<&HashMap<String, String>>,
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

/// Runs the chain.
pub fn resolve(env: &Env, cli: &Overrides) -> Result<Resolved, ConfigError> {
    let files = Files::load(env)?;
    let explicit = cli.profile.is_some();
    let profile = cli
        .profile
        .clone()
        .or_else(|| env.var("AWS_PROFILE").map(str::to_owned))
        .unwrap_or_else(|| "default".into());
    let creds_section = files.credentials_section(&profile);
    let config_section = files.config_section(&profile);
    if (explicit || env.var("AWS_PROFILE").is_some())
        && creds_section.is_none()
        && config_section.is_none()
    {
        return Err(ConfigError::NoSuchProfile(profile));
    }

    let from_env = || -> Result<Option<Credentials>, ConfigError> {
        match (
            env.var("AWS_ACCESS_KEY_ID"),
            env.var("AWS_SECRET_ACCESS_KEY"),
        ) {
            (None, None) => Ok(None),
            (Some(id), Some(secret)) => {
                Credentials::new(id, secret, env.var("AWS_SESSION_TOKEN").map(str::to_owned))
                    .map(Some)
                    .map_err(|e| {
                        ConfigError::Invalid(format!(
                            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY: {e}"
                        ))
                    })
            }
            _ => Err(ConfigError::Invalid(
                "only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set".into(),
            )),
        }
    };
    let credentials_file = files
        .credentials_path
        .as_ref()
        .map_or("~/.aws/credentials".into(), |p| p.display().to_string());
    let config_file = files
        .config_path
        .as_ref()
        .map_or("~/.aws/config".into(), |p| p.display().to_string());
    // botocore's order: an SSO profile, keys in the credentials file, the profile's
    // credential_process (from either file), keys in the config file.
    let from_files = || -> Result<Option<(CredentialSource, String)>, ConfigError> {
        if let Some(source) = sso_source(env, &files, config_section, &profile, &config_file)? {
            let what = format!("the SSO session of profile {profile:?}");
            return Ok(Some((source, what)));
        }
        let keys = |section: Option<&HashMap<String, String>>, file: &str| {
            let what = format!("profile {profile:?} in {file}");
            Ok::<_, ConfigError>(match section {
                Some(s) => credentials_from(s, &what)?.map(|c| (CredentialSource::Static(c), what)),
                None => None,
            })
        };
        if let Some(found) = keys(creds_section, &credentials_file)? {
            return Ok(Some(found));
        }
        let process = [creds_section, config_section]
            .into_iter()
            .flatten()
            .find_map(|s| s.get("credential_process").filter(|c| !c.trim().is_empty()));
        if let Some(command) = process {
            let what = format!("credential_process of profile {profile:?}");
            let command = command.clone();
            return Ok(Some((CredentialSource::Process { command }, what)));
        }
        keys(config_section, &config_file)
    };
    let found = if explicit {
        from_files()?
    } else {
        match from_env()? {
            Some(c) => Some((
                CredentialSource::Static(c),
                "environment variables".to_owned(),
            )),
            None => from_files()?,
        }
    };

    let setting = |key: &str| {
        config_section
            .and_then(|s| s.get(key))
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    let region = cli
        .region
        .clone()
        .or_else(|| env.var("AWS_REGION").map(str::to_owned))
        .or_else(|| env.var("AWS_DEFAULT_REGION").map(str::to_owned))
        .or_else(|| setting("region").map(str::to_owned))
        .unwrap_or_else(|| "us-east-1".to_owned());
    let endpoint_url = cli
        .endpoint_url
        .clone()
        .or_else(|| env.var("AWS_ENDPOINT_URL_S3").map(str::to_owned))
        .or_else(|| env.var("AWS_ENDPOINT_URL").map(str::to_owned))
        .or_else(|| {
            setting("s3.endpoint_url")
                .or_else(|| setting("endpoint_url"))
                .map(str::to_owned)
        });
    let endpoint = endpoint_url
        .map(|u| Endpoint::parse(&u))
        .transpose()
        .map_err(|e| ConfigError::Invalid(e.to_string()))?;
    let addressing = match cli.addressing {
        Some(a) => a,
        None => match setting("s3.addressing_style") {
            None | Some("auto") => AddressingStyle::Auto,
            Some("virtual") => AddressingStyle::Virtual,
            Some("path") => AddressingStyle::Path,
            Some(other) => {
                return Err(ConfigError::Invalid(format!(
                    "s3.addressing_style {other:?} in {config_file} must be auto, virtual or path"
                )))
            }
        },
    };
    let (credentials, credential_source) = match found {
        Some(found) => found,
        None => match remote_source(env, config_section, &region)? {
            Some(source) => {
                let what = source.describe().to_owned();
                (source, what)
            }
            None => {
                let mut tried = Vec::new();
                if !explicit {
                    tried.push("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY".to_owned());
                }
                tried.push(format!("profile {profile:?} in {credentials_file}"));
                tried.push(format!("profile {profile:?} in {config_file}"));
                tried.push("web identity, container and instance metadata (AWS_EC2_METADATA_DISABLED is set)".to_owned());
                return Err(ConfigError::NoCredentials(tried));
            }
        },
    };
    let ca_bundle = cli
        .ca_bundle
        .clone()
        .or_else(|| env.var("AWS_CA_BUNDLE").map(PathBuf::from))
        .or_else(|| setting("ca_bundle").map(PathBuf::from));
    Ok(Resolved {
        credentials,
        region,
        endpoint,
        addressing,
        credential_source,
        ca_bundle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(credentials: &str, config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".aws")).unwrap();
        std::fs::write(dir.path().join(".aws/credentials"), credentials).unwrap();
        std::fs::write(dir.path().join(".aws/config"), config).unwrap();
        dir
    }

    const CREDS: &str = "[default]\naws_access_key_id = DEFAULTKEY\naws_secret_access_key = defaultsecret\n[dev]\naws_access_key_id = DEVKEY\naws_secret_access_key = devsecret\naws_session_token = devtoken\n";
    const CONFIG: &str = "[default]\nregion = eu-west-1\n[profile dev]\nregion = ap-south-1\nendpoint_url = http://127.0.0.1:9000\ns3 =\n  addressing_style = virtual\n[profile onlyconfig]\naws_access_key_id = CFGKEY\naws_secret_access_key = cfgsecret\n";

    #[test]
    fn environment_beats_files_and_explicit_profile_beats_environment() {
        let h = home(CREDS, CONFIG);
        let vars = [
            ("AWS_ACCESS_KEY_ID", "ENVKEY"),
            ("AWS_SECRET_ACCESS_KEY", "envsecret"),
            ("AWS_REGION", "us-west-2"),
        ];
        let env = Env::new(&vars, Some(h.path().into()));
        let r = resolve(&env, &Overrides::default()).unwrap();
        assert_eq!(
            (
                r.credentials.as_static().unwrap().access_key_id(),
                r.region.as_str()
            ),
            ("ENVKEY", "us-west-2")
        );
        assert_eq!(r.credential_source, "environment variables");

        let r = resolve(
            &env,
            &Overrides {
                profile: Some("dev".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r.credentials.as_static().unwrap().access_key_id(), "DEVKEY");
        assert_eq!(
            r.credentials.as_static().unwrap().session_token(),
            Some("devtoken")
        );
        assert_eq!(
            r.region, "us-west-2",
            "AWS_REGION still beats the profile's region"
        );
        assert_eq!(r.addressing, AddressingStyle::Virtual);
        assert!(r.endpoint.is_some());
    }

    #[test]
    fn profile_files_and_region_chain() {
        let h = home(CREDS, CONFIG);
        let r = resolve(&Env::new(&[], Some(h.path().into())), &Overrides::default()).unwrap();
        assert_eq!(
            (
                r.credentials.as_static().unwrap().access_key_id(),
                r.region.as_str()
            ),
            ("DEFAULTKEY", "eu-west-1")
        );
        let env = Env::new(&[("AWS_PROFILE", "onlyconfig")], Some(h.path().into()));
        let r = resolve(
            &env,
            &Overrides {
                region: Some("sa-east-1".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            (
                r.credentials.as_static().unwrap().access_key_id(),
                r.region.as_str()
            ),
            ("CFGKEY", "sa-east-1")
        );
        let env = Env::new(
            &[("AWS_DEFAULT_REGION", "ca-central-1")],
            Some(h.path().into()),
        );
        assert_eq!(
            resolve(&env, &Overrides::default()).unwrap().region,
            "ca-central-1"
        );
    }

    #[test]
    fn sso_profiles_in_both_forms_and_their_mistakes() {
        let config = "[profile new]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Reader\n\
            [sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-central-1\n\
            [profile old]\nsso_start_url = https://old.awsapps.com/start\nsso_region = us-east-2\nsso_account_id = 2\nsso_role_name = R\n\
            [profile broken]\nsso_session = nowhere\nsso_account_id = 1\nsso_role_name = R\n\
            [profile norole]\nsso_session = corp\nsso_account_id = 1\n";
        // SSO comes before the credentials file, as in botocore.
        let h = home(
            "[new]\naws_access_key_id = K\naws_secret_access_key = s\n",
            config,
        );
        let at = |profile: &str, vars: &[(&str, &str)]| {
            let mut vars = vars.to_vec();
            vars.push(("AWS_PROFILE", profile));
            resolve(
                &Env::new(&vars, Some(h.path().into())),
                &Overrides::default(),
            )
        };
        let cache = h.path().join(".aws/sso/cache");
        match at("new", &[]).unwrap().credentials {
            CredentialSource::Sso {
                token_file,
                portal,
                account_id,
                role_name,
                login,
                oidc,
            } => {
                assert_eq!(
                    oidc.as_deref(),
                    Some("https://oidc.eu-central-1.amazonaws.com")
                );
                // Named by the SHA-1 of the session's name (Python's hashlib agrees).
                let name = "ee0bfd2552fbd840c02cc48b6e823320543c450f.json";
                assert_eq!(token_file, cache.join(name));
                assert_eq!(portal, "https://portal.sso.eu-central-1.amazonaws.com");
                assert_eq!(
                    (account_id.as_str(), role_name.as_str()),
                    ("111122223333", "Reader")
                );
                assert_eq!(login, "aws sso login --profile new");
            }
            other => panic!("{other:?}"),
        }
        // The legacy form: the cache is named by the start URL; the portal can be overridden.
        match at("old", &[("AWS_ENDPOINT_URL_SSO", "http://127.0.0.1:9")])
            .unwrap()
            .credentials
        {
            CredentialSource::Sso {
                token_file,
                portal,
                oidc,
                ..
            } => {
                assert_eq!(oidc, None, "legacy profiles cannot refresh");
                let name = "33d5ca4bf3b1a62edb96b47f7c203034a43ac435.json";
                assert_eq!(token_file, cache.join(name));
                assert_eq!(portal, "http://127.0.0.1:9");
            }
            other => panic!("{other:?}"),
        }
        let err = at("broken", &[]).unwrap_err().to_string();
        assert!(err.contains("[sso-session nowhere]"), "{err}");
        let err = at("norole", &[]).unwrap_err().to_string();
        assert!(err.contains("sso_role_name"), "{err}");
    }

    #[test]
    fn credential_process_sits_between_the_two_files_keys() {
        let proc_cfg = "[profile p]\ncredential_process = helper --profile 'my p'\naws_access_key_id = CFG\naws_secret_access_key = s\n";
        let source = |creds: &str| {
            let h = home(creds, proc_cfg);
            let env = Env::new(&[("AWS_PROFILE", "p")], Some(h.path().into()));
            resolve(&env, &Overrides::default()).unwrap()
        };
        // The config file's keys lose to the process...
        let r = source("");
        assert!(
            matches!(&r.credentials, CredentialSource::Process { command } if command == "helper --profile 'my p'"),
            "{:?}",
            r.credentials
        );
        assert!(r.credential_source.contains("credential_process"));
        // ...which loses to keys in the credentials file.
        let r = source("[p]\naws_access_key_id = CREDKEY\naws_secret_access_key = s\n");
        assert_eq!(
            r.credentials.as_static().unwrap().access_key_id(),
            "CREDKEY"
        );
        // A process in the credentials file counts too; the environment still wins.
        let h = home("[default]\ncredential_process = other\n", "");
        let r = resolve(&Env::new(&[], Some(h.path().into())), &Overrides::default()).unwrap();
        assert!(matches!(r.credentials, CredentialSource::Process { .. }));
        let env = Env::new(
            &[("AWS_ACCESS_KEY_ID", "E"), ("AWS_SECRET_ACCESS_KEY", "s")],
            Some(h.path().into()),
        );
        let r = resolve(&env, &Overrides::default()).unwrap();
        assert_eq!(r.credentials.as_static().unwrap().access_key_id(), "E");
    }

    #[test]
    fn missing_and_half_credentials_are_clear_errors() {
        let h = home("", "");
        let off = [("AWS_EC2_METADATA_DISABLED", "true")];
        let e = resolve(
            &Env::new(&off, Some(h.path().into())),
            &Overrides::default(),
        )
        .unwrap_err();
        assert!(matches!(e, ConfigError::NoCredentials(_)));
        assert!(e.to_string().contains("AWS_ACCESS_KEY_ID"), "{e}");
        let e = resolve(
            &Env::new(&[("AWS_ACCESS_KEY_ID", "A")], Some(h.path().into())),
            &Overrides::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("only one"), "{e}");
        let e = resolve(
            &Env::new(&[], Some(h.path().into())),
            &Overrides {
                profile: Some("nope".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(e, ConfigError::NoSuchProfile(_)));
        let h = home("[default]\naws_access_key_id = A\n", "");
        assert!(resolve(&Env::new(&[], Some(h.path().into())), &Overrides::default()).is_err());
    }

    #[test]
    fn no_home_and_no_env_still_explains() {
        let off = [("AWS_EC2_METADATA_DISABLED", "TRUE")];
        let e = resolve(&Env::new(&off, None), &Overrides::default()).unwrap_err();
        assert!(matches!(e, ConfigError::NoCredentials(_)), "{e}");
        assert!(e.to_string().contains("instance metadata"), "{e}");
    }

    #[test]
    fn remote_sources_follow_static_ones_in_the_cli_order() {
        let source = |vars: &[(&str, &str)]| {
            resolve(&Env::new(vars, None), &Overrides::default())
                .unwrap()
                .credentials
        };
        assert!(matches!(
            source(&[]),
            CredentialSource::InstanceMetadata { endpoint } if endpoint == "http://169.254.169.254"
        ));
        assert!(matches!(
            source(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9")]),
            CredentialSource::InstanceMetadata { endpoint } if endpoint == "http://127.0.0.1:9"
        ));
        assert!(matches!(
            source(&[("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/creds/x")]),
            CredentialSource::Container { url, .. } if url == "http://169.254.170.2/v2/creds/x"
        ));
        let web = source(&[
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ("AWS_REGION", "eu-west-3"),
            ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/ignored"),
        ]);
        assert!(matches!(
            web,
            CredentialSource::WebIdentity { sts_endpoint, .. } if sts_endpoint == "https://sts.eu-west-3.amazonaws.com"
        ));
        // Static credentials win over every remote source.
        let s = source(&[
            ("AWS_ACCESS_KEY_ID", "A"),
            ("AWS_SECRET_ACCESS_KEY", "S"),
            ("AWS_ROLE_ARN", "x"),
        ]);
        assert_eq!(s.as_static().unwrap().access_key_id(), "A");
    }

    #[test]
    fn debug_of_resolved_has_no_secret() {
        let env = Env::new(
            &[
                ("AWS_ACCESS_KEY_ID", "ENVKEY"),
                ("AWS_SECRET_ACCESS_KEY", "envsecret"),
                ("AWS_SESSION_TOKEN", "tok"),
            ],
            None,
        );
        let r = resolve(&env, &Overrides::default()).unwrap();
        let d = format!("{r:?}");
        assert!(!d.contains("envsecret") && !d.contains("tok\""), "{d}");
    }
}
