//! Verifying a browser's POST upload (the other side of `Presigner::presign_post`).
//!
//! Only the base64 policy is signed, so the signature alone proves little: the policy must
//! not have expired, every condition must hold for the fields the form sent and the file's
//! size, and every field the form sent must be named by a condition (else a form could carry
//! a field the signer never saw, such as another session's token). The rules are S3's
//! (<https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html>), and
//! versitygw's checks (auth/post_policy.go) agree with them. Reading the multipart body is
//! the caller's: this takes the fields and the file's length.

use base64::Engine;
use hmac::Mac;
use serde_json::Value;
use subtle::ConstantTimeEq;

use super::{KeySource, Verifier, VerifyError};
use crate::{SigningTime, ALGORITHM};

/// A POST upload as received.
#[derive(Clone, Copy, Debug)]
pub struct PostUpload<'a> {
    /// The bucket posted to (from the host or the path).
    pub bucket: &'a str,
    /// Every form field but the file, in any case, with `${filename}` in `key` already
    /// replaced by the file's name.
    pub fields: &'a [(&'a str, &'a str)],
    /// The file's size in bytes; `None` when it is not known yet (a proxy reads the fields
    /// before the file streams through): the length conditions are then left to the caller,
    /// in [`VerifiedPost::content_length_ranges`].
    pub content_length: Option<u64>,
}

/// What a valid POST established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedPost {
    /// Who signed the policy.
    pub access_key_id: String,
    /// The object key to write.
    pub key: String,
    /// When the policy was signed.
    pub signed_at: SigningTime,
    /// When the policy expires.
    pub expires_at: SigningTime,
    /// The policy's `content-length-range` conditions, `(min, max)` inclusive: already checked
    /// when the form's length was given, the caller's to enforce when it was not.
    pub content_length_ranges: Vec<(u64, u64)>,
}

/// Fields a form may send without a condition naming them.
fn exempt(name: &str) -> bool {
    matches!(name, "file" | "policy" | "x-amz-signature") || name.starts_with("x-ignore-")
}

impl Verifier {
    /// Verifies `form` at time `now`: the signature's fields, the signature over the policy,
    /// the policy's expiry, the fields it covers, then each condition in order.
    pub fn verify_post(
        &self,
        form: &PostUpload<'_>,
        keys: &impl KeySource,
        now: SigningTime,
    ) -> Result<VerifiedPost, VerifyError> {
        let fields = Fields::new(form.fields)?;
        if fields.get("policy").is_none() && fields.get("x-amz-signature").is_none() {
            return Err(VerifyError::Missing);
        }
        // The texts of S3's errors for these fields, which clients and suites compare.
        let need = |name: &str| {
            fields.get(name).ok_or_else(|| {
                VerifyError::InvalidArgument(format!(
                    "Bucket POST must contain a field named '{name}'.  If it is specified, please check the order of the fields."
                ))
            })
        };
        let (policy, signature) = (need("policy")?, need("x-amz-signature")?);
        if need("x-amz-algorithm")? != ALGORITHM {
            return Err(VerifyError::InvalidArgument(format!(
                "Only {ALGORITHM} is supported"
            )));
        }
        let credential = need("x-amz-credential")?;
        let amz_date = need("x-amz-date")?;
        let signed_at = SigningTime::parse_amz(amz_date).map_err(|_| {
            VerifyError::InvalidArgument(
                "X-Amz-Date must be formated via ISO8601 Long format".into(),
            )
        })?;
        let (access_key_id, date_stamp) = self.credential_scope(credential, amz_date)?;
        let key = need("key")?;

        let signing_key = keys
            .signing_key(access_key_id, date_stamp, &self.region, &self.service)
            .ok_or(VerifyError::InvalidAccessKeyId)?;
        let mut mac = signing_key.mac();
        mac.update(policy.as_bytes());
        let expected = crate::encode::hex32(&mac.finalize().into_bytes().into());
        if !bool::from(expected[..].ct_eq(signature.as_bytes())) {
            return Err(VerifyError::SignatureDoesNotMatch {
                canonical_request: String::new(),
                string_to_sign: policy.to_owned(),
            });
        }

        let (expires_at, conditions) = parse_policy(policy)?;
        if expires_at.unix() <= now.unix() {
            return Err(denied("Policy expired."));
        }
        for (name, _) in &fields.0 {
            if !exempt(name) && !conditions.iter().any(|c| c.field() == Some(name.as_str())) {
                return Err(denied(&format!("Extra input fields: {name}")));
            }
        }
        if !conditions.iter().any(|c| c.field() == Some("bucket")) {
            return Err(denied(
                "Policy Condition failed: the policy names no bucket",
            ));
        }
        for c in &conditions {
            c.check(form, &fields)?;
        }
        let content_length_ranges = conditions
            .iter()
            .filter_map(|c| match c {
                Condition::Length(min, max) => Some((*min, *max)),
                _ => None,
            })
            .collect();
        Ok(VerifiedPost {
            access_key_id: access_key_id.to_owned(),
            key: key.to_owned(),
            signed_at,
            expires_at,
            content_length_ranges,
        })
    }

    /// The access key and date of `AKID/YYYYMMDD/region/s3/aws4_request` (parsed as the
    /// verifier parses every credential), checked against this verifier's region and service
    /// and the form's date.
    fn credential_scope<'c>(
        &self,
        credential: &'c str,
        amz_date: &str,
    ) -> Result<(&'c str, &'c str), VerifyError> {
        let malformed = |_: String| {
            VerifyError::InvalidArgument(
                "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".".into(),
            )
        };
        let scope = super::parse::scope(credential, super::Algorithm::V4, malformed)?;
        let region = scope.region.unwrap_or_default();
        if region != self.region {
            return Err(VerifyError::InvalidArgument(format!(
                "the region {region:?} is wrong; expecting {:?}",
                self.region
            )));
        }
        if scope.service != self.service {
            return Err(VerifyError::InvalidArgument(format!(
                "incorrect service {:?}. This endpoint belongs to {:?}.",
                scope.service, self.service
            )));
        }
        if amz_date.get(..8) != Some(scope.date) {
            return Err(VerifyError::InvalidArgument(
                "x-amz-credential: its date is not x-amz-date's".into(),
            ));
        }
        Ok((scope.access_key_id, scope.date))
    }
}

fn denied(why: &str) -> VerifyError {
    VerifyError::AccessDenied(format!("Invalid according to Policy: {why}"))
}

fn invalid(why: &str) -> VerifyError {
    VerifyError::InvalidPolicyDocument(why.to_owned())
}

/// The form's fields by lowercase name; a name sent twice is refused (the policy would check
/// one value and the upload could use the other).
struct Fields<'a>(Vec<(String, &'a str)>);

impl<'a> Fields<'a> {
    fn new(raw: &[(&str, &'a str)]) -> Result<Self, VerifyError> {
        let mut fields: Vec<(String, &'a str)> = Vec::with_capacity(raw.len());
        for (name, value) in raw {
            let name = name.to_ascii_lowercase();
            if fields.iter().any(|(n, _)| *n == name) {
                return Err(VerifyError::InvalidRequest(format!(
                    "the POST form sends the field {name} twice"
                )));
            }
            fields.push((name, value));
        }
        Ok(Self(fields))
    }

    fn get(&self, name: &str) -> Option<&'a str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

/// One condition of a policy.
#[derive(Debug)]
enum Condition {
    /// `{"name": "value"}` or `["eq", "$name", "value"]`.
    Eq(String, String),
    /// `["starts-with", "$name", "prefix"]`.
    StartsWith(String, String),
    /// `["content-length-range", min, max]`.
    Length(u64, u64),
}

impl Condition {
    /// The field it names (lowercase); none for a length range.
    fn field(&self) -> Option<&str> {
        match self {
            Condition::Eq(name, _) | Condition::StartsWith(name, _) => Some(name),
            Condition::Length(..) => None,
        }
    }

    fn check(&self, form: &PostUpload<'_>, fields: &Fields<'_>) -> Result<(), VerifyError> {
        let value = |name: &str| match name {
            "bucket" => Some(form.bucket),
            _ => fields.get(name),
        };
        let holds = match self {
            Condition::Eq(name, want) => value(name) == Some(want.as_str()),
            Condition::StartsWith(name, prefix) => value(name).is_some_and(|got| {
                // S3: a content-type of several comma-separated types must match in each.
                if name == "content-type" {
                    got.split(',')
                        .all(|t| t.trim().starts_with(prefix.as_str()))
                } else {
                    got.starts_with(prefix.as_str())
                }
            }),
            Condition::Length(min, max) => {
                let Some(size) = form.content_length else {
                    return Ok(()); // the caller's, from VerifiedPost::content_length_ranges
                };
                if size > *max {
                    return Err(VerifyError::EntityTooLarge { size, max: *max });
                }
                if size < *min {
                    return Err(VerifyError::EntityTooSmall { size, min: *min });
                }
                true
            }
        };
        if holds {
            return Ok(());
        }
        let text = match self {
            Condition::Eq(name, want) => format!("[\"eq\", \"${name}\", {want:?}]"),
            Condition::StartsWith(name, prefix) => {
                format!("[\"starts-with\", \"${name}\", {prefix:?}]")
            }
            Condition::Length(..) => String::new(),
        };
        Err(denied(&format!("Policy Condition failed: {text}")))
    }
}

/// The expiry and conditions of a base64 policy (padded or not).
fn parse_policy(policy: &str) -> Result<(SigningTime, Vec<Condition>), VerifyError> {
    let engines = [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::STANDARD_NO_PAD,
    ];
    let raw = engines
        .iter()
        .find_map(|e| e.decode(policy.trim()).ok())
        .ok_or_else(|| invalid("the policy is not base64"))?;
    let doc: Value = serde_json::from_slice(&raw).map_err(|_| invalid("the policy is not JSON"))?;
    let doc = doc
        .as_object()
        .ok_or_else(|| invalid("the policy is not a JSON object"))?;
    if let Some(other) = doc
        .keys()
        .find(|k| *k != "expiration" && *k != "conditions")
    {
        return Err(invalid(&format!(
            "unexpected field {other:?} in the policy"
        )));
    }
    let expiration = doc
        .get("expiration")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("the policy has no expiration"))?;
    let expires_at = parse_expiration(expiration)
        .ok_or_else(|| invalid(&format!("expiration {expiration:?} is not a UTC time")))?;
    let conditions = doc
        .get("conditions")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("the policy has no list of conditions"))?
        .iter()
        .enumerate()
        .map(|(i, c)| {
            condition(c).ok_or_else(|| invalid(&format!("condition {i} is not one S3 knows: {c}")))
        })
        .collect::<Result<_, _>>()?;
    Ok((expires_at, conditions))
}

/// `2026-01-02T03:04:05Z`, also with fractional seconds (`.000Z`, as AWS's examples write it).
fn parse_expiration(text: &str) -> Option<SigningTime> {
    let whole = match text.split_once('.') {
        Some((secs, fraction)) => {
            let digits = fraction.strip_suffix('Z')?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            format!("{secs}Z")
        }
        None => text.to_owned(),
    };
    SigningTime::parse_rfc3339(&whole).ok()
}

fn condition(c: &Value) -> Option<Condition> {
    if let Some(map) = c.as_object() {
        let (name, value) = map.iter().next().filter(|_| map.len() == 1)?;
        return Some(Condition::Eq(
            name.to_ascii_lowercase(),
            value.as_str()?.to_owned(),
        ));
    }
    let list = c.as_array()?;
    let op = list.first()?.as_str()?.to_ascii_lowercase();
    if op == "content-length-range" {
        let [_, min, max] = list.as_slice() else {
            return None;
        };
        let (min, max) = (number(min)?, number(max)?);
        return (min <= max).then_some(Condition::Length(min, max));
    }
    let [_, name, value] = list.as_slice() else {
        return None;
    };
    let name = name.as_str()?.strip_prefix('$')?.to_ascii_lowercase();
    let value = value.as_str()?.to_owned();
    match op.as_str() {
        "eq" => Some(Condition::Eq(name, value)),
        "starts-with" => Some(Condition::StartsWith(name, value)),
        _ => None,
    }
}

/// A size: a non-negative integer, or a string of one (some SDKs write them quoted).
fn number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::CredentialKeys;
    use crate::{Credentials, PolicyValue, Presigner, UrlBase};

    const AT: &str = "20260102T030405Z";

    fn creds(token: Option<&str>) -> Credentials {
        Credentials::new("AKIDPOST", "post-secret", token.map(str::to_owned)).unwrap()
    }

    fn signed(
        conditions: &[PolicyValue],
        fields: &[(&str, &str)],
        token: Option<&str>,
    ) -> Vec<(String, String)> {
        let base = UrlBase {
            origin: "http://127.0.0.1:7070".into(),
            host: "127.0.0.1:7070".into(),
            path_prefix: "/forms/".into(),
        };
        let p = Presigner::new(base, "us-east-1", creds(token)).unwrap();
        let fields: Vec<(String, String)> = fields
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let form = p
            .presign_post(
                "forms",
                "up/${filename}",
                &fields,
                conditions,
                600,
                SigningTime::parse_amz(AT).unwrap(),
            )
            .unwrap();
        assert_eq!(form.url, "http://127.0.0.1:7070/forms");
        form.fields
    }

    /// Verifies the form with `edit` applied to its fields (the browser's additions), `size`
    /// bytes of file, `after` seconds after signing.
    fn verify(
        fields: &[(String, String)],
        edit: &[(&str, &str)],
        size: u64,
        after: i64,
    ) -> Result<VerifiedPost, VerifyError> {
        let mut sent: Vec<(&str, &str)> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        for (name, value) in edit {
            match sent.iter_mut().find(|(n, _)| n == name) {
                Some(f) => f.1 = value,
                None => sent.push((name, value)),
            }
        }
        let form = PostUpload {
            bucket: "forms",
            fields: &sent,
            content_length: Some(size),
        };
        let keys = CredentialKeys::new([creds(None), creds(Some("tok"))]);
        let now = SigningTime::parse_amz(AT).unwrap().plus(after);
        Verifier::s3("us-east-1").verify_post(&form, &keys, now)
    }

    fn rules() -> Vec<PolicyValue> {
        vec![
            PolicyValue::eq("acl", "private"),
            PolicyValue::starts_with("Content-Type", "image/"),
            PolicyValue::content_length_range(1, 1000),
        ]
    }

    #[test]
    fn a_form_within_its_policy_is_accepted() {
        let fields = signed(&rules(), &[("acl", "private")], None);
        let ok = verify(
            &fields,
            &[
                ("key", "up/cat.png"),
                ("Content-Type", "image/png"),
                ("x-ignore-note", "n"),
            ],
            10,
            599,
        )
        .unwrap();
        assert_eq!(
            (ok.access_key_id.as_str(), ok.key.as_str()),
            ("AKIDPOST", "up/cat.png")
        );
        assert_eq!(ok.expires_at.unix() - ok.signed_at.unix(), 600);
        let with_token = signed(&rules(), &[("acl", "private")], Some("tok"));
        verify(
            &with_token,
            &[("key", "up/a"), ("content-type", "image/gif,image/png")],
            1,
            0,
        )
        .unwrap();
    }

    #[test]
    fn a_length_not_known_yet_is_left_to_the_caller_with_the_ranges() {
        let mut rules = rules();
        rules.push(PolicyValue::content_length_range(5, 2000));
        let fields = signed(&rules, &[("acl", "private")], None);
        let mut sent: Vec<(&str, &str)> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        sent.push(("content-type", "image/png"));
        for (n, v) in sent.iter_mut() {
            if *n == "key" {
                *v = "up/a.png";
            }
        }
        let keys = CredentialKeys::new([creds(None)]);
        let now = SigningTime::parse_amz(AT).unwrap();
        let mut form = PostUpload {
            bucket: "forms",
            fields: &sent,
            content_length: None,
        };
        let ok = Verifier::s3("us-east-1")
            .verify_post(&form, &keys, now)
            .unwrap();
        assert_eq!(ok.content_length_ranges, [(1, 1000), (5, 2000)]);
        // Known, the same ranges are checked here.
        form.content_length = Some(1001);
        assert!(matches!(
            Verifier::s3("us-east-1").verify_post(&form, &keys, now),
            Err(VerifyError::EntityTooLarge {
                size: 1001,
                max: 1000
            })
        ));
        // The other conditions hold either way.
        let bent: Vec<(&str, &str)> = sent
            .iter()
            .map(|&(n, v)| (n, if n == "acl" { "public-read" } else { v }))
            .collect();
        let form = PostUpload {
            fields: &bent,
            content_length: None,
            ..form
        };
        assert!(Verifier::s3("us-east-1")
            .verify_post(&form, &keys, now)
            .is_err());
    }

    #[test]
    fn each_violation_is_refused_with_its_reason() {
        let fields = signed(&rules(), &[("acl", "private")], None);
        let good: &[(&str, &str)] = &[("key", "up/cat.png"), ("content-type", "image/png")];
        let with = |extra: &[(&'static str, &'static str)]| -> Vec<(&str, &str)> {
            good.iter().chain(extra).copied().collect()
        };
        // The form's fields, the file's size, seconds after signing, what the error says.
        type Case<'a> = (Vec<(&'a str, &'a str)>, u64, i64, &'a str);
        let cases: Vec<Case> = vec![
            (with(&[]), 10, 600, "Policy expired"),
            (
                with(&[("acl", "public-read")]),
                10,
                0,
                r#"["eq", "$acl", "private"]"#,
            ),
            (
                with(&[("content-type", "text/html")]),
                10,
                0,
                r#"["starts-with", "$content-type", "image/"]"#,
            ),
            (
                with(&[("content-type", "image/png,text/html")]),
                10,
                0,
                "starts-with",
            ),
            (
                with(&[("key", "elsewhere/cat.png")]),
                10,
                0,
                r#"["starts-with", "$key", "up/"]"#,
            ),
            (
                with(&[("x-amz-meta-owner", "eve")]),
                10,
                0,
                "Extra input fields: x-amz-meta-owner",
            ),
            (
                with(&[("x-amz-security-token", "other")]),
                10,
                0,
                "Extra input fields: x-amz-security-token",
            ),
        ];
        for (edit, size, after, want) in cases {
            let e = verify(&fields, &edit, size, after).unwrap_err();
            assert!(e.to_string().contains(want), "{edit:?}: {e}");
            assert_eq!(e.s3_code(), "AccessDenied", "{edit:?}");
        }
        let e = verify(&fields, good, 1001, 0).unwrap_err();
        assert_eq!((e.s3_code(), e.http_status()), ("EntityTooLarge", 400));
        let e = verify(&fields, good, 0, 0).unwrap_err();
        assert_eq!(e.s3_code(), "EntityTooSmall");
    }

    #[test]
    fn the_signature_binds_the_policy_and_the_scope() {
        let fields = signed(&rules(), &[("acl", "private")], None);
        let good = [("key", "up/x"), ("content-type", "image/png")];
        let other = signed(
            &[PolicyValue::content_length_range(0, 10_000_000)],
            &[],
            None,
        );
        let policy = &other.iter().find(|(n, _)| n == "policy").unwrap().1;
        let e = verify(&fields, &[good[0], good[1], ("policy", policy)], 10, 0).unwrap_err();
        assert_eq!(e.s3_code(), "SignatureDoesNotMatch");
        let e = verify(
            &fields,
            &[
                good[0],
                good[1],
                (
                    "x-amz-credential",
                    "NOBODY/20260102/us-east-1/s3/aws4_request",
                ),
            ],
            10,
            0,
        )
        .unwrap_err();
        assert_eq!(e, VerifyError::InvalidAccessKeyId);
        let e = verify(
            &fields,
            &[
                good[0],
                good[1],
                (
                    "x-amz-credential",
                    "AKIDPOST/20260102/eu-west-1/s3/aws4_request",
                ),
            ],
            10,
            0,
        )
        .unwrap_err();
        assert_eq!(
            e,
            VerifyError::InvalidArgument(
                r#"the region "eu-west-1" is wrong; expecting "us-east-1""#.into()
            )
        );
        let e = verify(
            &fields,
            &[good[0], good[1], ("X-Amz-Date", "20260102T030405Z")],
            10,
            0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        assert_eq!(
            verify(&[], &[("key", "k")], 1, 0).unwrap_err(),
            VerifyError::Missing
        );
    }

    #[test]
    fn policies_s3_would_not_take_are_invalid_documents() {
        for (doc, want) in [
            (
                r#"{"expiration": "2026-01-02T03:14:05.000Z", "conditions": [["content-length-range", 5]]}"#,
                "condition 0",
            ),
            (
                r#"{"expiration": "tomorrow", "conditions": []}"#,
                "not a UTC time",
            ),
            (r#"{"conditions": []}"#, "no expiration"),
            (
                r#"{"expiration": "2026-01-02T03:14:05Z", "conditions": [], "x": 1}"#,
                "unexpected field",
            ),
            ("[]", "not a JSON object"),
        ] {
            let b64 = base64::engine::general_purpose::STANDARD.encode(doc);
            let e = parse_policy(&b64).unwrap_err();
            assert!(e.to_string().contains(want), "{doc}: {e}");
            assert_eq!(e.s3_code(), "InvalidPolicyDocument");
        }
        let doc = r#"{"expiration": "2026-01-02T03:14:05.123Z", "conditions": [{"bucket": "b"}, ["eq", "$Key", "k"], ["content-length-range", "0", 9]]}"#;
        let (at, conditions) =
            parse_policy(&base64::engine::general_purpose::STANDARD_NO_PAD.encode(doc)).unwrap();
        assert_eq!(
            at,
            SigningTime::parse_rfc3339("2026-01-02T03:14:05Z").unwrap()
        );
        assert_eq!(
            conditions.iter().map(Condition::field).collect::<Vec<_>>(),
            [Some("bucket"), Some("key"), None]
        );
    }
}
