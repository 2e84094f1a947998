//! Presigned POST: the form a browser submits to upload straight to S3.
//!
//! The server hands the browser a policy (a JSON document: an expiry and the conditions the
//! form's fields must meet) and a signature over its base64 text; the browser posts the
//! fields and the file as `multipart/form-data` to the bucket's URL. Only the policy is signed,
//! so every field the form sends must be named by a condition (the verifier's side:
//! `verify::post`).
//!
//! The output is byte-identical to botocore's `generate_presigned_post`: the same conditions in
//! the same order, and the policy serialized as Python's `json.dumps` does (`", "` and `": "`
//! separators, non-ASCII escaped as UTF-16 units like `\u00fc`), since the base64 of those exact bytes is what
//! is signed. SigV4 only: botocore has no SigV4A POST, and S3 documents none.

use std::fmt;

use base64::Engine;
use hmac::Mac;

use crate::algorithm::Algorithm;
use crate::encode::hex32;
use crate::signer::check_expiry;
use crate::{Error, Presigner, SigningTime, ALGORITHM};

/// A JSON value in a POST policy's conditions: what botocore accepts and `json.dumps` writes.
/// Numbers are integers (`content-length-range`); a fraction has no place in a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// `[...]`: `["starts-with", "$key", "uploads/"]`, `["content-length-range", 0, 1048576]`.
    List(Vec<PolicyValue>),
    /// `{...}` in the order given: `{"acl": "public-read"}`.
    Map(Vec<(String, PolicyValue)>),
}

impl PolicyValue {
    /// `{name: value}`, the exact-match form of a condition.
    pub fn eq(name: &str, value: &str) -> Self {
        PolicyValue::Map(vec![(name.to_owned(), PolicyValue::Str(value.to_owned()))])
    }

    /// `["starts-with", "$name", prefix]`.
    pub fn starts_with(name: &str, prefix: &str) -> Self {
        PolicyValue::List(vec![
            PolicyValue::Str("starts-with".into()),
            PolicyValue::Str(format!("${name}")),
            PolicyValue::Str(prefix.to_owned()),
        ])
    }

    /// `["content-length-range", min, max]`.
    pub fn content_length_range(min: i64, max: i64) -> Self {
        PolicyValue::List(vec![
            PolicyValue::Str("content-length-range".into()),
            PolicyValue::Int(min),
            PolicyValue::Int(max),
        ])
    }

    /// Appends the value as Python's `json.dumps(value)` writes it.
    pub fn write_json(&self, out: &mut String) {
        match self {
            PolicyValue::Null => out.push_str("null"),
            PolicyValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            PolicyValue::Int(n) => out.push_str(&n.to_string()),
            PolicyValue::Str(s) => write_json_str(out, s),
            PolicyValue::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            PolicyValue::Map(entries) => {
                out.push('{');
                for (i, (name, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_json_str(out, name);
                    out.push_str(": ");
                    value.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// A string as `json.dumps` writes it with `ensure_ascii=True`.
fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// What the browser needs: where to post, and the form fields to send before the file (in
/// this order; `key` may end in `${filename}`, which S3 replaces by the uploaded file's name).
#[derive(Clone, PartialEq, Eq)]
pub struct PostForm {
    /// The bucket's URL: `https://bucket.s3.amazonaws.com/` or `https://host/bucket`.
    pub url: String,
    /// Name and value of each form field.
    pub fields: Vec<(String, String)>,
}

impl fmt::Debug for PostForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<(&str, &str)> = self
            .fields
            .iter()
            .map(|(n, v)| {
                let secret = matches!(n.as_str(), "x-amz-signature" | "x-amz-security-token");
                (n.as_str(), if secret { "<redacted>" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("PostForm")
            .field("url", &self.url)
            .field("fields", &fields)
            .finish()
    }
}

impl Presigner {
    /// A presigned POST for `key` in `bucket` (the one this presigner's URLs point at) at
    /// `time`, valid `expires_in` seconds: the caller's `fields`
    /// (each also needs a condition naming it, as in botocore) and `conditions`, then the
    /// bucket and key conditions and the signature's own fields, as botocore orders them.
    /// A key ending in `${filename}` becomes a `starts-with` condition on what precedes it.
    pub fn presign_post(
        &self,
        bucket: &str,
        key: &str,
        fields: &[(String, String)],
        conditions: &[PolicyValue],
        expires_in: u64,
        time: SigningTime,
    ) -> Result<PostForm, Error> {
        check_expiry(expires_in)?;
        if key.is_empty() {
            return Err(Error::EmptyKey);
        }
        let Algorithm::V4 { region, keys } = &self.algorithm else {
            return Err(Error::InvalidScope(
                "presigned POST is SigV4 only (S3 and botocore have no SigV4A form)".into(),
            ));
        };
        let scope = self.algorithm.scope(time, "s3")?;
        let credential = format!("{}/{scope}", self.credentials.access_key_id());
        let amz_date = time.amz_date();

        let mut conditions = conditions.to_vec();
        conditions.push(PolicyValue::eq("bucket", bucket));
        match key.strip_suffix("${filename}") {
            Some(prefix) => conditions.push(PolicyValue::starts_with("key", prefix)),
            None => conditions.push(PolicyValue::eq("key", key)),
        }
        let mut fields = fields.to_vec();
        set(&mut fields, "key", key);
        let mut signed = vec![
            ("x-amz-algorithm", ALGORITHM),
            ("x-amz-credential", credential.as_str()),
            ("x-amz-date", amz_date.as_str()),
        ];
        if let Some(token) = self.credentials.session_token() {
            signed.push(("x-amz-security-token", token));
        }
        for (name, value) in &signed {
            set(&mut fields, name, value);
            conditions.push(PolicyValue::eq(name, value));
        }

        // The expiration in botocore's `ISO8601` format, `YYYY-MM-DDTHH:MM:SSZ`.
        let mut policy = String::from("{\"expiration\": ");
        let expiration = time.plus(expires_in_secs(expires_in)).rfc3339();
        write_json_str(&mut policy, &expiration);
        policy.push_str(", \"conditions\": ");
        PolicyValue::List(conditions).write_json(&mut policy);
        policy.push('}');
        let policy = base64::engine::general_purpose::STANDARD.encode(policy);

        let mut mac = keys.key(&self.credentials, time, region, "s3").mac();
        mac.update(policy.as_bytes());
        let signature = hex32(&mac.finalize().into_bytes().into());
        set(&mut fields, "policy", &policy);
        // `hex32` writes only ASCII hex digits.
        set(
            &mut fields,
            "x-amz-signature",
            std::str::from_utf8(&signature).unwrap_or_default(),
        );
        Ok(PostForm {
            url: self.post_url(),
            fields,
        })
    }

    /// Where the form is posted: botocore's URL of CreateBucket, the bucket's root without a
    /// trailing `/` in path style.
    fn post_url(&self) -> String {
        let base = self.base();
        let path = match base.path_prefix.as_str() {
            "/" => "/",
            p => p.trim_end_matches('/'),
        };
        format!("{}{path}", base.origin)
    }
}

/// Sets field `name` in place if present (botocore's dict keeps its position), else appends.
fn set(fields: &mut Vec<(String, String)>, name: &str, value: &str) {
    match fields.iter_mut().find(|(n, _)| n == name) {
        Some(field) => field.1 = value.to_owned(),
        None => fields.push((name.to_owned(), value.to_owned())),
    }
}

/// Checked by `check_expiry` to be at most 604800, so it fits.
fn expires_in_secs(expires_in: u64) -> i64 {
    i64::try_from(expires_in).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(v: &PolicyValue) -> String {
        let mut s = String::new();
        v.write_json(&mut s);
        s
    }

    #[test]
    fn json_is_pythons_json_dumps() {
        // Each expected text is what `json.dumps` printed for the same value.
        let cases = [
            (
                PolicyValue::eq("acl", "public-read"),
                r#"{"acl": "public-read"}"#,
            ),
            (
                PolicyValue::content_length_range(0, 10),
                r#"["content-length-range", 0, 10]"#,
            ),
            (
                PolicyValue::Str("ü 😀 \"q\" \\ \n\t\u{1}\u{7f}".into()),
                r#""\u00fc \ud83d\ude00 \"q\" \\ \n\t\u0001\u007f""#,
            ),
            (
                PolicyValue::List(vec![
                    PolicyValue::Null,
                    PolicyValue::Bool(true),
                    PolicyValue::Int(-3),
                ]),
                "[null, true, -3]",
            ),
            (PolicyValue::Map(vec![]), "{}"),
        ];
        for (value, want) in cases {
            assert_eq!(json(&value), want);
        }
    }

    #[test]
    fn the_expiration_is_botocores_format() {
        let t = SigningTime::parse_amz("20260102T030405Z").unwrap();
        assert_eq!(t.rfc3339(), "2026-01-02T03:04:05Z");
        assert_eq!(SigningTime::parse_rfc3339(&t.rfc3339()).unwrap(), t);
    }
}
