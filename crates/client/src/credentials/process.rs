//! A profile's `credential_process`: the AWS CLI's way to get credentials from any program
//! (a vault, an SSO helper, a hardware token). The program prints
//! `{"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"}` on stdout.
//!
//! As botocore does, the command line is split like a POSIX shell's (quotes, backslashes) and
//! run without a shell, so `$VARS` and pipes are not interpreted. Its stdout holds secrets and
//! never appears in an error; its stderr is quoted, since that is where such programs explain
//! a failure (an expired login, a locked vault).

use std::process::{Command, Stdio};

use super::json::credentials_in;
use super::Expiring;
use crate::ClientError;

/// How much of the program's stderr an error quotes.
const STDERR_QUOTED: usize = 500;

/// Runs `command` and reads the credentials it prints.
pub(super) fn run(command: &str) -> Result<Expiring, ClientError> {
    let words = shell_words::split(command)
        .map_err(|e| ClientError::Request(format!("credential_process {command:?}: {e}")))?;
    let Some((program, args)) = words.split_first() else {
        return Err(ClientError::Request("credential_process is empty".into()));
    };
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ClientError::Request(format!("cannot run {program:?}: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr: String = stderr.trim().chars().take(STDERR_QUOTED).collect();
        return Err(ClientError::Response(format!(
            "{program:?} failed ({}){}",
            output.status,
            if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            }
        )));
    }
    parse(&output.stdout).map_err(|e| ClientError::Response(format!("{program:?}: {e}")))
}

/// The JSON a credential process prints. Only version 1 exists; a later one may mean fields
/// we would misread, so it is refused.
fn parse(stdout: &[u8]) -> Result<Expiring, String> {
    // Not quoting serde's message: it can echo the (secret) input.
    let v: serde_json::Value =
        serde_json::from_slice(stdout).map_err(|_| "its output is not a JSON object".to_owned())?;
    match v.get("Version").and_then(serde_json::Value::as_u64) {
        Some(1) => {}
        Some(n) => {
            return Err(format!(
                "its output is Version {n}; only Version 1 is known"
            ))
        }
        None => return Err("its output has no \"Version\": 1".into()),
    }
    credentials_in(&v, "SessionToken").map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_version_1_and_refuses_the_rest() {
        let e = parse(br#"{"Version":1,"AccessKeyId":"AKID","SecretAccessKey":"s","SessionToken":"t","Expiration":"2026-11-22T12:00:00Z"}"#).unwrap();
        assert_eq!(e.credentials.access_key_id(), "AKID");
        assert_eq!(e.credentials.session_token(), Some("t"));
        assert!(e.expires.is_some());
        let fixed = parse(br#"{"Version":1,"AccessKeyId":"AKID","SecretAccessKey":"s"}"#).unwrap();
        assert!(fixed.expires.is_none() && fixed.credentials.session_token().is_none());
        assert!(
            parse(br#"{"Version":2,"AccessKeyId":"A","SecretAccessKey":"s"}"#)
                .unwrap_err()
                .contains("Version 2")
        );
        assert!(parse(br#"{"AccessKeyId":"A","SecretAccessKey":"s"}"#).is_err());
        let e = parse(b"AccessKeyId=A SecretAccessKey=topsecret").unwrap_err();
        assert!(!e.contains("topsecret"), "{e}");
    }

    #[test]
    fn runs_the_command_split_like_a_shell() {
        let json = r#"{"Version":1,"AccessKeyId":"FROMPROC","SecretAccessKey":"s"}"#;
        // Quotes group words; no shell runs it, so `$HOME` stays as written.
        let e = run(&format!("printf '%s' '{json}'")).unwrap();
        assert_eq!(e.credentials.access_key_id(), "FROMPROC");
        let literal =
            run(r#"printf %s {\"Version\":1,\"AccessKeyId\":\"$HOME\",\"SecretAccessKey\":\"s\"}"#)
                .unwrap();
        assert_eq!(literal.credentials.access_key_id(), "$HOME");
    }

    #[test]
    fn failures_quote_stderr_but_never_stdout() {
        let e = run("sh -c 'echo SECRET-ON-STDOUT; echo please log in >&2; exit 3'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("please log in") && e.contains('3'), "{e}");
        assert!(!e.contains("SECRET-ON-STDOUT"), "{e}");
        let missing = run("/nonexistent/helper --profile x")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("/nonexistent/helper"), "{missing}");
        assert!(run("   ").is_err());
        assert!(run("unterminated 'quote").is_err());
    }
}
