//! A `cp`, `mv` or `sync` source or destination as given: `s3://bucket/key`, `-`, or a local
//! path. On Unix a path is any bytes, and file names in a legacy encoding (Latin-1 `caf\xe9.txt`)
//! are still found on disks: the AWS CLI copies such a file to a key it is given, so a path is
//! kept as the OS gave it rather than refused by the argument parser ("invalid UTF-8 was
//! detected"). Only what must be UTF-8 is checked, where it must: an `s3://` URL (keys are
//! UTF-8), and a key made from a file's name.

use std::ffi::OsString;
use std::fmt;
use std::path::Path;

use crate::Failure;

/// A command-line location; printed as text, its undecodable bytes as U+FFFD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location(OsString);

impl Location {
    /// For clap (`value_parser = Location::parser()`): every argument is taken as the OS
    /// gave it.
    pub fn parser() -> impl clap::builder::TypedValueParser<Value = Location> {
        use clap::builder::TypedValueParser;
        clap::builder::OsStringValueParser::new().map(Location)
    }

    /// `s3://...`.
    pub fn is_s3(&self) -> bool {
        self.0.as_encoded_bytes().starts_with(b"s3://")
    }

    /// `-`: standard input or output.
    pub fn is_stdio(&self) -> bool {
        self.0 == "-"
    }

    /// The `s3://` URL's text, which must be UTF-8 as S3 keys are.
    pub fn url(&self) -> Result<&str, Failure> {
        self.0
            .to_str()
            .ok_or_else(|| Failure::usage(format!("{self} is not valid UTF-8, as S3 keys must be")))
    }

    /// The local path.
    pub fn path(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.path().display().fmt(f)
    }
}

impl From<&str> for Location {
    fn from(text: &str) -> Self {
        Self(text.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[cfg(unix)]
    #[test]
    fn paths_keep_their_bytes_and_urls_must_be_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let latin1 = Location(OsStr::from_bytes(b"caf\xe9.txt").into());
        assert!(!latin1.is_s3() && !latin1.is_stdio());
        assert_eq!(latin1.path().as_os_str().as_bytes(), b"caf\xe9.txt");
        assert_eq!(latin1.to_string(), "caf\u{fffd}.txt");
        let url = Location(OsStr::from_bytes(b"s3://b/caf\xe9").into());
        assert!(url.is_s3());
        assert!(url.url().is_err());
        assert_eq!(Location::from("s3://b/k").url().ok(), Some("s3://b/k"));
        assert!(Location::from("-").is_stdio());
    }
}
