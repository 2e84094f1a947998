//! SSE-C on the command line, as the AWS CLI spells it: `--sse-c [AES256]` with
//! `--sse-c-key KEY` for the objects a command writes or reads, and `--sse-c-copy-source
//! [AES256]` with `--sse-c-copy-source-key KEY` for the source of an S3-to-S3 copy. A key is
//! its 32 bytes as typed, or `fileb://PATH` for a binary key in a file. A key is a secret: a
//! rejected one is not echoed (clap's own message for a bad value quotes it), and
//! [`CustomerKey`]'s `Debug` shows only its MD5.

use std::ffi::OsStr;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use slipstream_client::CustomerKey;

/// Reads `--sse-c-key` and `--sse-c-copy-source-key`.
#[derive(Clone, Copy, Debug)]
pub struct KeyParser;

impl TypedValueParser for KeyParser {
    type Value = CustomerKey;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<CustomerKey, clap::Error> {
        let flag = arg.and_then(clap::Arg::get_long).unwrap_or("sse-c-key");
        key_of(value).map_err(|why| {
            clap::Error::raw(ErrorKind::ValueValidation, format!("--{flag}: {why}\n")).with_cmd(cmd)
        })
    }
}

/// The key a flag's value names: the bytes of the value (any bytes: a key need not be text),
/// or of the file after `fileb://`.
fn key_of(value: &OsStr) -> Result<CustomerKey, String> {
    let bytes = value.as_encoded_bytes();
    let bytes = match bytes.strip_prefix(b"fileb://") {
        Some(path) => {
            let path = std::path::Path::new(OsStr::new(
                std::str::from_utf8(path)
                    .map_err(|_| "the path after fileb:// is not UTF-8".to_owned())?,
            ));
            std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?
        }
        None => bytes.to_vec(),
    };
    CustomerKey::from_bytes(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn parse(value: &str) -> Result<CustomerKey, String> {
        let cmd = Command::new("t");
        let arg = Arg::new("sse_c_key").long("sse-c-key");
        KeyParser
            .parse_ref(&cmd, Some(&arg), OsStr::new(value))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_key_is_its_bytes_as_typed_or_a_files_and_a_bad_one_is_not_echoed() {
        let key = parse("0123456789abcdef0123456789abcdef").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.bin");
        std::fs::write(&path, b"0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!(parse(&format!("fileb://{}", path.display())).unwrap(), key);
        let refused = parse("hunter2-is-my-key").unwrap_err();
        assert!(
            refused.contains("--sse-c-key") && refused.contains("32 bytes"),
            "{refused}"
        );
        assert!(!refused.contains("hunter2"), "{refused}");
        let missing = parse("fileb:///nonexistent/key").unwrap_err();
        assert!(missing.contains("/nonexistent/key"), "{missing}");
    }
}
