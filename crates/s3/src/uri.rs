//! `s3://bucket/key` URIs, as the AWS CLI and s5cmd take them.

use crate::{check_bucket, Error};

/// A parsed `s3://bucket[/key]`. The key is everything after the first `/`, verbatim: S3 keys
/// may contain `//`, `?`, `#` and spaces, so no URL parsing is applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Uri {
    /// The bucket.
    pub bucket: String,
    /// The key; empty for `s3://bucket` and `s3://bucket/`.
    pub key: String,
}

impl S3Uri {
    /// Parses `s3://bucket/key`.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let rest = s
            .strip_prefix("s3://")
            .ok_or_else(|| Error::InvalidUri(format!("{s:?} does not start with s3://")))?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        check_bucket(bucket)?;
        Ok(Self {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        })
    }
}

/// `s3://bucket/key` again, as [`S3Uri::parse`] reads it: what messages print for an object.
impl std::fmt::Display for S3Uri {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_verbatim() {
        let u = S3Uri::parse("s3://b/a//b?c#d e").unwrap();
        assert_eq!((u.bucket.as_str(), u.key.as_str()), ("b", "a//b?c#d e"));
        assert_eq!(S3Uri::parse("s3://b").unwrap().key, "");
        assert!(S3Uri::parse("https://b/k").is_err());
        assert!(S3Uri::parse("s3:///k").is_err());
    }

    #[test]
    fn prints_as_it_parses() {
        for text in ["s3://b/a//b?c#d e", "s3://b/"] {
            assert_eq!(S3Uri::parse(text).unwrap().to_string(), text);
        }
    }
}
