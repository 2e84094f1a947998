//! A bucket's versioning state: `GetBucketVersioning`'s answer read, `PutBucketVersioning`'s body
//! written. A bucket that was never versioned answers an empty `<VersioningConfiguration/>`:
//! no status at all, which is neither `Enabled` nor `Suspended` (once enabled, a bucket can
//! only be suspended, never unversioned again).

use std::fmt;
use std::str::FromStr;

use crate::xml::walk;
use crate::Error;

/// What a bucket can be set to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersioningStatus {
    /// Every write keeps the version it replaces.
    Enabled,
    /// Writes replace the `null` version again; versions already kept stay.
    Suspended,
}

impl VersioningStatus {
    /// S3's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            VersioningStatus::Enabled => "Enabled",
            VersioningStatus::Suspended => "Suspended",
        }
    }
}

impl fmt::Display for VersioningStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for VersioningStatus {
    type Err = String;

    /// `Enabled` or `Suspended`, in any case (s5cmd takes `enabled` too).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "enabled" => Ok(VersioningStatus::Enabled),
            "suspended" => Ok(VersioningStatus::Suspended),
            _ => Err(format!(
                "versioning is Enabled or Suspended, not {s:?} (a versioned bucket cannot be unversioned again)"
            )),
        }
    }
}

/// What `GetBucketVersioning` says: the status (`None`: never versioned) and, for a bucket
/// configured with MFA delete, that setting (`Enabled`, `Disabled`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Versioning {
    /// `Enabled`, `Suspended`, or `None` for a bucket never versioned.
    pub status: Option<String>,
    /// `MfaDelete`, when the bucket was ever configured with it.
    pub mfa_delete: Option<String>,
}

/// `GetBucketVersioning`'s answer.
pub fn versioning(body: &[u8]) -> Result<Versioning, Error> {
    let mut found = Versioning::default();
    let mut root = false;
    walk(body, |path, text| match (path, text) {
        ("VersioningConfiguration", None) => root = true,
        ("VersioningConfiguration/Status", Some(t)) => found.status = Some(t),
        ("VersioningConfiguration/MfaDelete", Some(t)) => found.mfa_delete = Some(t),
        _ => {}
    })?;
    match root {
        true => Ok(found),
        false => Err(Error::Response(
            "GetBucketVersioning's answer is not a VersioningConfiguration".into(),
        )),
    }
}

/// `PutBucketVersioning`'s body setting `status`.
pub fn versioning_body(status: VersioningStatus) -> String {
    format!(
        "<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
         <Status>{status}</Status></VersioningConfiguration>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_s3_writes_them() {
        let never = br#"<?xml version="1.0" encoding="UTF-8"?>
<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>"#;
        assert_eq!(versioning(never).unwrap(), Versioning::default());
        let on = br#"<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>"#;
        assert_eq!(
            versioning(on).unwrap(),
            Versioning {
                status: Some("Enabled".into()),
                mfa_delete: Some("Disabled".into()),
            }
        );
        assert!(versioning(b"<ListBucketResult/>").is_err());
        assert!(versioning(b"not xml <").is_err());
    }

    #[test]
    fn statuses_parse_in_any_case_and_write_s3_s_word() {
        assert_eq!("enabled".parse(), Ok(VersioningStatus::Enabled));
        assert_eq!("SUSPENDED".parse(), Ok(VersioningStatus::Suspended));
        let refused = "Disabled".parse::<VersioningStatus>().unwrap_err();
        assert!(refused.contains("Enabled or Suspended"), "{refused}");
        let body = versioning_body(VersioningStatus::Suspended);
        assert_eq!(
            versioning(body.as_bytes()).unwrap().status.as_deref(),
            Some("Suspended")
        );
    }
}
