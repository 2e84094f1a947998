//! Access keys, held so that secrets never reach logs.

use std::fmt;
use zeroize::Zeroizing;

use crate::Error;

/// An access key pair and an optional session token.
///
/// `Debug` prints the access key id only; the secret and the token are wiped from memory on drop.
#[derive(Clone)]
pub struct Credentials {
    access_key_id: String,
    secret_access_key: Zeroizing<String>,
    session_token: Option<Zeroizing<String>>,
}

impl Credentials {
    /// Checks that each part is non-empty printable ASCII: anything else cannot be sent in a URL
    /// or header unchanged, and would only fail later as an opaque 403.
    pub fn new(
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Result<Self, Error> {
        let access_key_id = access_key_id.into();
        let secret = Zeroizing::new(secret_access_key.into());
        let printable = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic());
        if !printable(&access_key_id) {
            return Err(Error::InvalidCredentials(
                "the access key id is empty or has characters other than printable ASCII",
            ));
        }
        if !printable(&secret) {
            return Err(Error::InvalidCredentials(
                "the secret access key is empty or has characters other than printable ASCII",
            ));
        }
        let session_token = match session_token {
            Some(t) if !printable(&t) => {
                return Err(Error::InvalidCredentials(
                    "the session token is empty or has characters other than printable ASCII",
                ))
            }
            other => other.map(Zeroizing::new),
        };
        Ok(Self {
            access_key_id,
            secret_access_key: secret,
            session_token,
        })
    }

    /// The public half, as it appears in `X-Amz-Credential`.
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// The secret; only key derivation should need it.
    pub fn secret_access_key(&self) -> &str {
        &self.secret_access_key
    }

    /// The session token of temporary credentials.
    pub fn session_token(&self) -> Option<&str> {
        self.session_token.as_deref().map(String::as_str)
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_secrets() {
        let c = Credentials::new("AKID", "SECRETVALUE", Some("TOKENVALUE".into())).unwrap();
        let d = format!("{c:?}");
        assert!(d.contains("AKID"));
        assert!(
            !d.contains("SECRETVALUE") && !d.contains("TOKENVALUE"),
            "{d}"
        );
    }

    #[test]
    fn rejects_empty_and_unprintable_parts() {
        assert!(Credentials::new("", "s", None).is_err());
        assert!(Credentials::new("a", "", None).is_err());
        assert!(Credentials::new("a", "s e", None).is_err());
        assert!(Credentials::new("a", "s", Some(String::new())).is_err());
        assert!(Credentials::new("a\n", "s", None).is_err());
    }
}
