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
//! - SigV4A: `--region-set`, `AWS_SIGV4A_SIGNING_REGION_SET`, the profile's
//!   `sigv4a_signing_region_set` (botocore's names); none signs with SigV4.
//! - proxies: given in code, else `https_proxy`, `http_proxy` and `no_proxy` (either case), as
//!   botocore reads them (`proxy.rs`).
//! - attempts per request: `AWS_MAX_ATTEMPTS`, the profile's `max_attempts` (the first attempt
//!   counted, as botocore counts it); none leaves the client's own.
//! - bandwidth: the profile's `s3.max_bandwidth`, as the AWS CLI's transfer commands read it;
//!   its other transfer settings (`transfer.rs`) for the caller's transfers.
//! - AWS endpoint variants (`variants.rs`): FIPS (`AWS_USE_FIPS_ENDPOINT`, `use_fips_endpoint`,
//!   or a `fips-` region), dual-stack, Transfer Acceleration, us-east-1's regional host.
//!
//! One file per idea: the environment ([`Env`], `env.rs`, passed in so that tests do not touch
//! the process environment), the shared files and the profile in use (`files.rs`), the
//! credential chain (`chain.rs`), and where requests go (`endpoint.rs`: region, endpoint,
//! addressing, CA bundle). [`resolve`] runs them in that order.

use std::fmt;
use std::path::PathBuf;

use slipstream_s3::{AddressingStyle, Endpoint, Variants};

use crate::credentials::CredentialSource;
use crate::proxy::Proxies;

mod chain;
mod endpoint;
mod env;
mod files;
mod transfer;
mod variants;

pub use env::Env;
use files::{Files, Profile};
pub use transfer::TransferSettings;
pub use variants::VariantChoices;

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
    /// `--region-set`: sign with SigV4A for these regions.
    pub region_set: Option<String>,
    /// `--no-sign-request`: no credentials are looked for, and requests go unsigned.
    pub no_sign_request: bool,
    /// Proxies given in code (the Python `Client`'s `proxies=`), instead of the environment's.
    pub proxies: Option<Proxies>,
    /// FIPS, dual-stack, acceleration or us-east-1's regional host, given in code.
    pub variants: VariantChoices,
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
    /// Which of AWS's endpoints (FIPS, dual-stack, acceleration); none applies to a custom one.
    pub variants: Variants,
    /// Where the credentials came from, for `--debug`-style messages (never the values).
    pub credential_source: String,
    /// Certificates to trust instead of the usual roots (`--ca-bundle`, `AWS_CA_BUNDLE`, the
    /// profile's `ca_bundle`).
    pub ca_bundle: Option<PathBuf>,
    /// The SigV4A region set (`us-east-1,us-west-2`, `*`) requests are signed for; `None` signs
    /// with SigV4. A multi-Region access point, or an edge that verifies SigV4A, needs it.
    pub region_set: Option<String>,
    /// The HTTP proxies connections go through (`https_proxy`, `http_proxy`, `no_proxy`).
    pub proxies: Option<Proxies>,
    /// Attempts per request, the first included (`AWS_MAX_ATTEMPTS`, the profile's
    /// `max_attempts`), for the caller's `ClientOptions::max_attempts`; `None`: not set.
    pub max_attempts: Option<u32>,
    /// The profile's `s3.max_bandwidth`, for the caller's `ClientOptions::max_bandwidth` (a
    /// flag or argument of its own beats it).
    pub max_bandwidth: Option<crate::Bandwidth>,
    /// The AWS CLI's transfer settings in the profile's `s3` section, for the caller's part
    /// size, multipart threshold and requests in flight (flags of its own beat them).
    pub transfer: TransferSettings,
}

impl Resolved {
    /// Where requests go, for a debug line: the credentials' source (never their values), the
    /// region and the endpoint.
    pub fn described(&self) -> String {
        let endpoint = self
            .endpoint
            .as_ref()
            .map_or_else(|| "AWS's for the region".to_owned(), ToString::to_string);
        format!(
            "credentials from {}; region {}; endpoint {endpoint}",
            self.credential_source, self.region
        )
    }

    /// The URL base for objects of `bucket` where this configuration sends them: its region,
    /// endpoint, addressing style and endpoint variants (what presigners are made for).
    pub fn url_base(&self, bucket: &str) -> Result<slipstream_sign::UrlBase, slipstream_s3::Error> {
        slipstream_s3::resolve(
            bucket,
            &self.region,
            self.endpoint.as_ref(),
            self.addressing,
            self.variants,
        )
    }
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

/// Runs the chain.
pub fn resolve(env: &Env, cli: &Overrides) -> Result<Resolved, ConfigError> {
    resolve_with(env, cli, None)
}

/// Runs the chain with the caller's own credentials, if it has some (a library given them in
/// code), with the name `credential_source` gives them: region, endpoint and the rest still
/// come from the environment and the profile, as boto3's `client("s3", aws_access_key_id=...)`
/// finds them.
pub fn resolve_with(
    env: &Env,
    cli: &Overrides,
    own: Option<(CredentialSource, String)>,
) -> Result<Resolved, ConfigError> {
    let files = Files::load(env)?;
    let profile = Profile::select(env, cli.profile.as_deref(), &files)?;
    let found = match own {
        Some(own) => Some(own),
        None if cli.no_sign_request => {
            Some((CredentialSource::Anonymous, "--no-sign-request".into()))
        }
        None => chain::local(env, &files, &profile)?,
    };
    let (region, fips_region) = variants::strip_fips(endpoint::region(cli, env, &profile));
    let endpoint = endpoint::endpoint(cli, env, &profile)?;
    let variants = variants::variants(
        cli.variants,
        env,
        &profile,
        fips_region,
        &region,
        endpoint.is_some(),
    )?;
    let addressing = endpoint::addressing(cli, &profile)?;
    let region_set = endpoint::region_set(cli, env, &profile)?;
    let proxies = endpoint::proxies(cli, env);
    let max_attempts = endpoint::max_attempts(env, &profile)?;
    let max_bandwidth = endpoint::max_bandwidth(&profile)?;
    let transfer = transfer::settings(&profile)?;
    let (credentials, credential_source) = match found {
        Some(found) => found,
        None => chain::remote(env, &profile, &region)?,
    };
    Ok(Resolved {
        credentials,
        region,
        endpoint,
        addressing,
        variants,
        credential_source,
        ca_bundle: endpoint::ca_bundle(cli, env, &profile),
        region_set,
        proxies,
        max_attempts,
        max_bandwidth,
        transfer,
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
    fn no_sign_request_looks_for_no_credentials_and_keeps_the_rest_of_the_chain() {
        // Nothing to find: no variables, no files, instance metadata not asked.
        let nowhere = tempfile::tempdir().unwrap();
        let env = Env::new(&[("AWS_REGION", "eu-north-1")], Some(nowhere.path().into()));
        let unsigned = Overrides {
            no_sign_request: true,
            ..Default::default()
        };
        let r = resolve(&env, &unsigned).unwrap();
        assert!(matches!(r.credentials, CredentialSource::Anonymous));
        assert_eq!(
            (r.region.as_str(), r.credential_source.as_str()),
            ("eu-north-1", "--no-sign-request")
        );
        // Credentials the environment has are not used either.
        let h = home(CREDS, CONFIG);
        let r = resolve(&Env::new(&[], Some(h.path().into())), &unsigned).unwrap();
        assert!(matches!(r.credentials, CredentialSource::Anonymous));
        assert_eq!(r.region, "eu-west-1", "the profile still gives the region");
        assert!(format!("{:?}", r.credentials) == "Anonymous");
    }

    #[test]
    fn proxies_come_from_the_environment_lower_case_first_and_code_beats_both() {
        let h = home(CREDS, CONFIG);
        let at = |vars: &[(&str, &str)], cli: &Overrides| {
            let env = Env::new(vars, Some(h.path().into()));
            resolve(&env, cli).map(|r| format!("{:?}", r.proxies))
        };
        let vars = [
            ("HTTPS_PROXY", "http://upper:1"),
            ("https_proxy", "http://ann:pw@lower:2"),
            ("HTTP_PROXY", "http://cgi:3"),
            ("REQUEST_METHOD", "GET"),
            ("NO_PROXY", "internal.example"),
        ];
        let shown = at(&vars, &Overrides::default()).unwrap();
        assert_eq!(
            shown,
            r#"Some(Proxies { http: None, https: Some("http://lower:2"), no_proxy: Some("internal.example"), unusable: None })"#
        );
        let env = format!("{:?}", Env::new(&vars, None));
        assert!(
            env.contains("http://lower:2") && !env.contains("pw"),
            "{env}"
        );
        // Without REQUEST_METHOD, HTTP_PROXY counts; an empty lower-case one turns HTTPS off.
        let shown = at(
            &[
                ("HTTP_PROXY", "cgi:3"),
                ("HTTPS_PROXY", "http://upper:1"),
                ("https_proxy", ""),
            ],
            &Overrides::default(),
        )
        .unwrap();
        assert!(
            shown.contains(r#"http: Some("http://cgi:3"), https: None"#),
            "{shown}"
        );
        assert_eq!(at(&[], &Overrides::default()).unwrap(), "None");
        // A URL that cannot be used is kept for the client to fail on (presigning goes on).
        let shown = at(&[("HTTPS_PROXY", "socks5://p:1")], &Overrides::default()).unwrap();
        assert!(
            shown.contains(r#"unusable: Some("the https proxy socks5://p:1"#),
            "{shown}"
        );
        let given = Overrides {
            proxies: crate::Proxies::new(Some("http://code:4"), None, None).unwrap(),
            ..Default::default()
        };
        let shown = at(&vars, &given).unwrap();
        assert!(
            shown.contains(r#"http: Some("http://code:4"), https: None"#),
            "{shown}"
        );
    }

    #[test]
    fn attempts_come_from_aws_max_attempts_then_the_profile_and_must_be_at_least_one() {
        let h = home(
            CREDS,
            "[default]\nmax_attempts = 7\n[profile dev]\nregion = x\n",
        );
        let at = |vars: &[(&str, &str)], profile: Option<&str>| {
            let env = Env::new(vars, Some(h.path().into()));
            let cli = Overrides {
                profile: profile.map(str::to_owned),
                ..Default::default()
            };
            resolve(&env, &cli).map(|r| r.max_attempts)
        };
        assert_eq!(at(&[], None).unwrap(), Some(7));
        assert_eq!(at(&[("AWS_MAX_ATTEMPTS", "2")], None).unwrap(), Some(2));
        assert_eq!(at(&[], Some("dev")).unwrap(), None);
        for bad in ["0", "-1", "three", "2.5"] {
            let e = at(&[("AWS_MAX_ATTEMPTS", bad)], None)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("AWS_MAX_ATTEMPTS") && e.contains("at least 1"),
                "{e}"
            );
        }
    }

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

    /// A library's own credentials: the chain is not asked for any (none anywhere is no
    /// error), and the region and endpoint still come from the environment and the profile.
    #[test]
    fn own_credentials_skip_the_chain_but_not_the_settings() {
        let h = home("", CONFIG);
        let env = Env::new(
            &[
                ("AWS_PROFILE", "dev"),
                ("AWS_EC2_METADATA_DISABLED", "true"),
            ],
            Some(h.path().into()),
        );
        assert!(matches!(
            resolve(&env, &Overrides::default()),
            Err(ConfigError::NoCredentials(_))
        ));
        let own = slipstream_sign::Credentials::new("OWNKEY", "ownsecret", None).unwrap();
        let r = resolve_with(
            &env,
            &Overrides::default(),
            Some((CredentialSource::Static(own), "code".into())),
        )
        .unwrap();
        assert_eq!(r.credentials.as_static().unwrap().access_key_id(), "OWNKEY");
        assert_eq!(r.credential_source, "code");
        assert_eq!(r.region, "ap-south-1");
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
    fn sigv4a_region_set_from_flag_environment_or_profile_and_checked_early() {
        let h = home(
            CREDS,
            "[default]\nsigv4a_signing_region_set = eu-*\n[profile dev]\nregion = ap-south-1\n",
        );
        let at = |vars: &[(&str, &str)], flag: Option<&str>| {
            resolve(
                &Env::new(vars, Some(h.path().into())),
                &Overrides {
                    region_set: flag.map(str::to_owned),
                    ..Default::default()
                },
            )
            .map(|r| r.region_set)
        };
        assert_eq!(at(&[], None).unwrap().as_deref(), Some("eu-*"));
        let env = [("AWS_SIGV4A_SIGNING_REGION_SET", "us-east-1,us-west-2")];
        assert_eq!(
            at(&env, None).unwrap().as_deref(),
            Some("us-east-1,us-west-2")
        );
        assert_eq!(at(&env, Some("*")).unwrap().as_deref(), Some("*"));
        // A profile without one signs with SigV4.
        assert_eq!(at(&[("AWS_PROFILE", "dev")], None).unwrap(), None);
        // A set no signer could use fails at configuration, before any request.
        let bad = at(&[], Some("us-east-1, us-west-2"))
            .unwrap_err()
            .to_string();
        assert!(bad.contains("region set"), "{bad}");
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
    fn the_aws_clis_transfer_settings_come_from_the_profiles_s3_section() {
        let h = home(
            CREDS,
            "[default]\ns3 =\n  multipart_chunksize = 16MB\n  multipart_threshold = 64MiB\n  max_concurrent_requests = 20\n[profile dev]\nregion = eu-west-1\n",
        );
        let env = |profile: &str| Env::new(&[("AWS_PROFILE", profile)], Some(h.path().into()));
        let r = resolve(&env("default"), &Overrides::default()).unwrap();
        assert_eq!(
            r.transfer,
            TransferSettings {
                multipart_chunksize: Some(16 << 20),
                multipart_threshold: Some(64 << 20),
                max_concurrent_requests: Some(20),
            }
        );
        let r = resolve(&env("dev"), &Overrides::default()).unwrap();
        assert_eq!(r.transfer, TransferSettings::default(), "another profile's");
        // A value the AWS CLI refuses fails the chain, naming the setting and the file.
        for bad in [
            "multipart_chunksize = 8XB",
            "multipart_threshold = 0",
            "max_concurrent_requests = -1",
            "max_concurrent_requests = 10.5",
        ] {
            let h = home(CREDS, &format!("[default]\ns3 =\n  {bad}\n"));
            let e = resolve(&Env::new(&[], Some(h.path().into())), &Overrides::default())
                .unwrap_err()
                .to_string();
            let name = bad.split(' ').next().unwrap();
            assert!(
                e.contains(&format!("s3.{name}")) && e.contains("config"),
                "{e}"
            );
        }
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
