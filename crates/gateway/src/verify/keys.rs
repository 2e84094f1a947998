//! The keys a verifying edge accepts, from a TOML file (`--keys keys.toml`): one machine, no
//! authority. Each key has its secret, an optional session token with its expiry, and a policy.
//!
//! ```toml
//! [[keys]]
//! access_key_id = "AKIDREADER"
//! secret_access_key = "..."
//! policy = { Statement = [{ Effect = "Allow", Action = ["s3:GetObject", "s3:ListBucket"], Resource = ["arn:aws:s3:::public", "arn:aws:s3:::public/*"] }] }
//!
//! [[keys]]
//! access_key_id = "AKIDADMIN"
//! secret_access_key = "..."
//! disabled = false
//! policy = '{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}'
//! ```
//!
//! The policy is a TOML table or a JSON string; a key without one is refused at load (rather
//! than silently allowed or denied everything). The verifier never sees a secret: it is asked
//! for the per-day SigV4 key or the SigV4A public key ([`KeySource`]), derived here once and
//! cached.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use sha2::Digest;
use slipstream_sign::verify::{DerivedKeys, KeySource};
use slipstream_sign::{Credentials, SigningKey, SigningTime};

use super::policy::Policy;
use crate::authority_wire::KeyAnswer;

/// What the edge knows of one access key: from the keys file or from the authority.
pub(crate) struct Key {
    material: Material,
    /// Session credentials: SHA-256 of the token, and when it stops being valid (unix seconds).
    session: Option<([u8; 32], Option<i64>)>,
    pub(crate) policy: Arc<Policy>,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("session", &self.session.is_some())
            .finish_non_exhaustive()
    }
}

/// What signatures are checked with.
enum Material {
    /// The keys file's secret, from which keys are derived as asked.
    Secret(Box<DerivedKeys>),
    /// The authority's per-day SigV4 keys (by date stamp, for one region and S3) and the SigV4A
    /// public key: no secret.
    Given {
        region: String,
        signing_keys: HashMap<String, SigningKey>,
        public_key: Vec<u8>,
    },
}

/// The accepted keys, by access key id. Disabled keys are left out: they are unknown.
#[derive(Default)]
pub(crate) struct Keys {
    by_id: HashMap<String, Key>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("count", &self.by_id.len())
            .finish_non_exhaustive()
    }
}

impl Keys {
    /// Reads a keys file; the error says which key and what to fix.
    pub(crate) fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the keys file {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("the keys file {}: {e}", path.display()))
    }

    /// Parses a keys file's text.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        let mut by_id = HashMap::new();
        let mut seen = HashSet::new();
        for (name, value) in &doc {
            if name != "keys" {
                return Err(format!(
                    "unknown setting {name:?} (expected [[keys]] entries)"
                ));
            }
            let list = value
                .as_array()
                .ok_or("keys must be a list of [[keys]] tables")?;
            for (i, entry) in list.iter().enumerate() {
                let (id, key) =
                    entry_of(entry).map_err(|e| format!("[[keys]] number {}: {e}", i + 1))?;
                if !seen.insert(id.clone()) {
                    return Err(format!("the access key {id} appears twice"));
                }
                if let Some(key) = key {
                    by_id.insert(id, key);
                }
            }
        }
        Ok(Self { by_id })
    }

    /// The key, if known and enabled.
    pub(crate) fn get(&self, access_key_id: &str) -> Option<&Key> {
        self.by_id.get(access_key_id)
    }

    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }
}

impl Key {
    /// The key as the authority describes it; the error names what is malformed.
    pub(crate) fn from_answer(answer: KeyAnswer) -> Result<Self, String> {
        let bad = |what: &str| {
            format!(
                "the authority's answer for {}: {what}",
                answer.access_key_id
            )
        };
        let mut signing_keys = HashMap::with_capacity(answer.signing_keys.len());
        for (date, hex) in &answer.signing_keys {
            let bytes: [u8; 32] = slipstream_sign::encode::unhex(hex)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| bad("a signing key is not 32 bytes of hex"))?;
            signing_keys.insert(date.clone(), SigningKey::from_bytes(bytes));
        }
        let public_key = slipstream_sign::encode::unhex(&answer.sigv4a_public_key)
            .ok_or_else(|| bad("the public key is not hex"))?;
        let session = match &answer.session {
            None => None,
            Some(s) => {
                let hash: [u8; 32] = slipstream_sign::encode::unhex(&s.token_sha256)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| bad("the token hash is not 32 bytes of hex"))?;
                Some((hash, s.expires))
            }
        };
        let policy = Policy::parse(&answer.policy).map_err(|e| bad(&format!("policy: {e}")))?;
        Ok(Self {
            material: Material::Given {
                region: answer.region,
                signing_keys,
                public_key,
            },
            session,
            policy: Arc::new(policy),
        })
    }

    pub(crate) fn signing_key(
        &self,
        date_stamp: &str,
        region: &str,
        service: &str,
    ) -> Option<SigningKey> {
        match &self.material {
            Material::Secret(keys) => keys.signing_key(date_stamp, region, service),
            Material::Given {
                region: ours,
                signing_keys,
                ..
            } => (region == ours && service == "s3")
                .then(|| signing_keys.get(date_stamp).cloned())
                .flatten(),
        }
    }

    pub(crate) fn public_key(&self) -> Option<Vec<u8>> {
        match &self.material {
            Material::Secret(keys) => keys.public_key(),
            Material::Given { public_key, .. } => Some(public_key.clone()),
        }
    }

    /// Checks the request's session token (`None`: it sent none) against the key's, at `now`
    /// (unix seconds): S3's `InvalidToken` or `ExpiredToken` code and message when refused.
    pub(crate) fn check_token(
        &self,
        sent: Option<&str>,
        now: i64,
    ) -> Result<(), (&'static str, &'static str)> {
        use sha2::{Digest, Sha256};
        use subtle::ConstantTimeEq;
        match (&self.session, sent) {
            (None, None) => Ok(()),
            (None, Some(_)) | (Some(_), None) => Err((
                "InvalidToken",
                "The provided token is malformed or otherwise invalid.",
            )),
            (Some((hash, expires)), Some(sent)) => {
                let sent: [u8; 32] = Sha256::digest(sent.as_bytes()).into();
                if !bool::from(hash.ct_eq(&sent)) {
                    return Err((
                        "InvalidToken",
                        "The provided token is malformed or otherwise invalid.",
                    ));
                }
                if expires.is_some_and(|e| now >= e) {
                    return Err(("ExpiredToken", "The provided token has expired."));
                }
                Ok(())
            }
        }
    }

    /// A key allowed everything, from a made-up secret (the cache's tests).
    #[cfg(test)]
    pub(crate) fn for_tests(access_key_id: &str) -> Self {
        let all = serde_json::json!({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]});
        Self {
            material: Material::Secret(Box::new(DerivedKeys::new(
                Credentials::new(access_key_id, "secret", None).unwrap_or_else(|_| unreachable!()),
            ))),
            session: None,
            policy: Arc::new(Policy::parse(&all).unwrap_or_else(|_| unreachable!())),
        }
    }
}

/// One `[[keys]]` table: its id, and the key unless it is disabled.
fn entry_of(entry: &toml::Value) -> Result<(String, Option<Key>), String> {
    let table = entry.as_table().ok_or("a key is a table")?;
    let text = |name: &str| -> Result<Option<String>, String> {
        match table.get(name) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{name} must be a string")),
        }
    };
    for name in table.keys() {
        let known = [
            "access_key_id",
            "secret_access_key",
            "session_token",
            "expires",
            "disabled",
            "policy",
        ];
        if !known.contains(&name.as_str()) {
            return Err(format!(
                "unknown setting {name:?} (known: {})",
                known.join(", ")
            ));
        }
    }
    let id = text("access_key_id")?.ok_or("access_key_id is missing")?;
    let secret =
        text("secret_access_key")?.ok_or_else(|| format!("{id}: secret_access_key is missing"))?;
    let token = text("session_token")?;
    let expires = match table.get("expires") {
        None => None,
        Some(toml::Value::Datetime(d)) => Some(unix_seconds(&d.to_string())?),
        Some(toml::Value::String(s)) => Some(unix_seconds(s)?),
        Some(_) => {
            return Err(format!(
                "{id}: expires must be a date-time (2026-12-01T00:00:00Z)"
            ))
        }
    };
    if expires.is_some() && token.is_none() {
        return Err(format!(
            "{id}: expires applies to session credentials: add session_token"
        ));
    }
    let disabled = match table.get("disabled") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => return Err(format!("{id}: disabled must be true or false")),
    };
    let policy = match table.get("policy") {
        None => {
            return Err(format!(
                "{id}: policy is missing (to allow everything: policy = {{ Statement = [{{ Effect = \"Allow\", Action = \"s3:*\", Resource = \"*\" }}] }})"
            ))
        }
        Some(toml::Value::String(json)) => {
            serde_json::from_str::<Value>(json).map_err(|e| format!("{id}: policy is not JSON: {e}"))?
        }
        Some(v) => serde_json::to_value(v).map_err(|e| format!("{id}: policy: {e}"))?,
    };
    let policy = Policy::parse(&policy).map_err(|e| format!("{id}: policy: {e}"))?;
    let credentials =
        Credentials::new(&id, &secret, token.clone()).map_err(|e| format!("{id}: {e}"))?;
    let key = (!disabled).then(|| Key {
        material: Material::Secret(Box::new(DerivedKeys::new(credentials))),
        session: token.map(|t| (sha2::Sha256::digest(t.as_bytes()).into(), expires)),
        policy: Arc::new(policy),
    });
    Ok((id, key))
}

/// `2026-12-01T00:00:00Z` as unix seconds (UTC only: an offset would be a guess).
fn unix_seconds(text: &str) -> Result<i64, String> {
    let bad = || format!("expires {text:?} is not a UTC date-time like 2026-12-01T00:00:00Z");
    let compact: String = text
        .strip_suffix('Z')
        .ok_or_else(bad)?
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    let time = SigningTime::parse_amz(&format!("{compact}Z")).map_err(|_| bad())?;
    Ok(time.unix())
}

impl KeySource for Keys {
    fn signing_key(
        &self,
        access_key_id: &str,
        date_stamp: &str,
        region: &str,
        service: &str,
    ) -> Option<SigningKey> {
        self.by_id
            .get(access_key_id)?
            .signing_key(date_stamp, region, service)
    }

    fn public_key(&self, access_key_id: &str) -> Option<Vec<u8>> {
        self.by_id.get(access_key_id)?.public_key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &str =
        r#"policy = { Statement = [{ Effect = "Allow", Action = "s3:*", Resource = "*" }] }"#;

    #[test]
    fn a_keys_file_loads_with_table_and_json_policies() {
        let text = format!(
            "[[keys]]\naccess_key_id = \"A\"\nsecret_access_key = \"s\"\n{ALL}\n\
             [[keys]]\naccess_key_id = \"B\"\nsecret_access_key = \"t\"\n\
             policy = '{{\"Statement\": {{\"Effect\": \"Allow\", \"Action\": \"s3:Get*\", \"Resource\": \"*\"}}}}'\n\
             [[keys]]\naccess_key_id = \"C\"\nsecret_access_key = \"u\"\ndisabled = true\n{ALL}\n"
        );
        let keys = Keys::parse(&text).unwrap();
        assert_eq!(keys.len(), 2);
        assert!(keys
            .get("A")
            .unwrap()
            .policy
            .allows("s3:PutObject", "arn:aws:s3:::b/k"));
        assert!(!keys
            .get("B")
            .unwrap()
            .policy
            .allows("s3:PutObject", "arn:aws:s3:::b/k"));
        assert!(keys.get("C").is_none(), "a disabled key is unknown");
        assert!(keys
            .signing_key("A", "20261124", "us-east-1", "s3")
            .is_some());
        assert!(keys
            .signing_key("C", "20261124", "us-east-1", "s3")
            .is_none());
        assert!(keys.public_key("A").is_some());
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (
                "[[keys]]\naccess_key_id = \"A\"\nsecret_access_key = \"s\"\n",
                "policy is missing",
            ),
            (
                "[[keys]]\nsecret_access_key = \"s\"\n",
                "access_key_id is missing",
            ),
            (
                "[[keys]]\naccess_key_id = \"A\"\nsecret = \"s\"\n",
                "unknown setting \"secret\"",
            ),
            ("[keys]\naccess_key_id = \"A\"\n", "list of [[keys]]"),
            ("other = 1\n", "unknown setting \"other\""),
        ];
        for (text, wanted) in cases {
            let err = Keys::parse(text).unwrap_err();
            assert!(err.contains(wanted), "{err:?} lacks {wanted:?}");
        }
        let twice = format!(
            "[[keys]]\naccess_key_id = \"A\"\nsecret_access_key = \"s\"\n{ALL}\n[[keys]]\naccess_key_id = \"A\"\nsecret_access_key = \"s\"\n{ALL}\n"
        );
        assert!(Keys::parse(&twice).unwrap_err().contains("twice"));
        let condition = "[[keys]]\naccess_key_id = \"A\"\nsecret_access_key = \"s\"\n\
            policy = { Statement = [{ Effect = \"Allow\", Action = \"s3:*\", Resource = \"*\", Condition = {} }] }\n";
        assert!(Keys::parse(condition).unwrap_err().contains("Condition"));
    }

    #[test]
    fn session_tokens_must_match_and_be_current() {
        let text = format!(
            "[[keys]]\naccess_key_id = \"A\"\nsecret_access_key = \"s\"\nsession_token = \"tok\"\n\
             expires = 2026-12-01T00:00:00Z\n{ALL}\n[[keys]]\naccess_key_id = \"B\"\nsecret_access_key = \"s\"\n{ALL}\n"
        );
        let keys = Keys::parse(&text).unwrap();
        let a = keys.get("A").unwrap();
        let before = unix_seconds("2026-11-30T23:59:59Z").unwrap();
        assert!(a.check_token(Some("tok"), before).is_ok());
        assert_eq!(
            a.check_token(Some("tok"), before + 1).unwrap_err().0,
            "ExpiredToken"
        );
        assert_eq!(
            a.check_token(Some("tox"), before).unwrap_err().0,
            "InvalidToken"
        );
        assert_eq!(a.check_token(None, before).unwrap_err().0, "InvalidToken");
        let b = keys.get("B").unwrap();
        assert!(b.check_token(None, before).is_ok());
        assert_eq!(
            b.check_token(Some("tok"), before).unwrap_err().0,
            "InvalidToken"
        );
    }
}
