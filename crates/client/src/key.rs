//! Which object a request names: a key and, in a versioned bucket, one version of it. Reading
//! or deleting an older version is the everyday use of versioning (a file overwritten by
//! mistake, a deleted one behind its delete marker), and every object call takes one. An object
//! encrypted with a customer key (SSE-C) cannot be read without it, so the key travels with
//! the name: reads send it, and a server-side copy sends it for its source.

use std::fmt;

use slipstream_sign::encode::encode_query_into;

use crate::CustomerKey;

/// A key and the version of it a request names; `version_id: None` names the current one. A
/// `&str` or `&String` converts into the current version, so callers that never deal in
/// versions pass keys as before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectKey<'a> {
    /// The key.
    pub key: &'a str,
    /// The version, as S3 named it (`x-amz-version-id`, a listing of versions).
    pub version_id: Option<&'a str>,
    /// The customer key the object is encrypted with (SSE-C), sent with every read of it.
    pub customer_key: Option<&'a CustomerKey>,
}

impl<'a> ObjectKey<'a> {
    /// `key` at `version_id` (`None`: the current version).
    pub fn new(key: &'a str, version_id: Option<&'a str>) -> Self {
        Self {
            key,
            version_id,
            customer_key: None,
        }
    }

    /// The same object, read with `customer_key` (SSE-C) when there is one.
    pub fn with_customer_key(self, customer_key: Option<&'a CustomerKey>) -> Self {
        Self {
            customer_key,
            ..self
        }
    }

    /// The request's `versionId=` query parameter, encoded; empty for the current version.
    pub(crate) fn query(&self) -> String {
        let mut query = String::new();
        if let Some(version) = self.version_id {
            query.push_str("versionId=");
            encode_query_into(&mut query, version);
        }
        query
    }

    /// The same key and version, owned.
    pub fn to_buf(&self) -> ObjectKeyBuf {
        ObjectKeyBuf {
            key: self.key.to_owned(),
            version_id: self.version_id.map(str::to_owned),
            customer_key: self.customer_key.cloned(),
        }
    }
}

/// An [`ObjectKey`] that owns its strings, for work that outlives the caller's borrow (a
/// spawned task, a future handed to Python), as `PathBuf` is to `Path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectKeyBuf {
    key: String,
    version_id: Option<String>,
    customer_key: Option<CustomerKey>,
}

impl ObjectKeyBuf {
    /// The key, version and customer key borrowed again.
    pub fn as_key(&self) -> ObjectKey<'_> {
        ObjectKey::new(&self.key, self.version_id.as_deref())
            .with_customer_key(self.customer_key.as_ref())
    }
}

impl<'a> From<&'a str> for ObjectKey<'a> {
    fn from(key: &'a str) -> Self {
        Self::new(key, None)
    }
}

impl<'a> From<&'a String> for ObjectKey<'a> {
    fn from(key: &'a String) -> Self {
        Self::new(key, None)
    }
}

/// The key, and its version when one is named: what error messages say.
impl fmt::Display for ObjectKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.version_id {
            Some(version) => write!(f, "{} (version {version})", self.key),
            None => f.write_str(self.key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_a_query_parameter_encoded_once() {
        assert_eq!(ObjectKey::from("k").query(), "");
        let versioned = ObjectKey::new("k", Some("3/L4kqtJl+cW=="));
        assert_eq!(versioned.query(), "versionId=3%2FL4kqtJl%2BcW%3D%3D");
        assert_eq!(versioned.to_string(), "k (version 3/L4kqtJl+cW==)");
    }
}
