//! `slipstream presign --post`: one presigned POST form, printed as botocore's JSON.

use std::io::Write;

use serde_json::Value;
use slipstream_client::Resolved;
use slipstream_s3::S3Uri;
use slipstream_sign::{PolicyValue, Presigner, SigningTime};

use crate::args::PresignArgs;
use crate::Failure;

/// Signs the form for the one key of `a` and prints `{"url": ..., "fields": {...}}`.
pub fn run(a: &PresignArgs, resolved: &Resolved, time: SigningTime) -> Result<(), Failure> {
    let [target] = a.keys.as_slice() else {
        return Err(Failure::usage(
            "--post takes one key: s3://bucket/key, or a key with --bucket",
        ));
    };
    let (bucket, key) = match (target.strip_prefix("s3://"), &a.bucket) {
        (Some(_), _) => {
            let u = S3Uri::parse(target).map_err(|e| Failure::usage(e.to_string()))?;
            (u.bucket, u.key)
        }
        (None, Some(b)) => (b.clone(), target.clone()),
        (None, None) => {
            return Err(Failure::usage(format!(
                "{target:?} is not s3://bucket/key and no --bucket was given"
            )))
        }
    };
    let (fields, conditions) = rules(a)?;
    let base = resolved
        .url_base(&bucket)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let presigner = Presigner::new(base, &resolved.region, crate::credentials_now(resolved)?)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let form = presigner
        .presign_post(&bucket, &key, &fields, &conditions, a.expires_in, time)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let fields = form
        .fields
        .into_iter()
        .map(|(n, v)| (n, PolicyValue::Str(v)))
        .collect();
    let answer = PolicyValue::Map(vec![
        ("url".into(), PolicyValue::Str(form.url)),
        ("fields".into(), PolicyValue::Map(fields)),
    ]);
    let mut text = String::new();
    answer.write_json(&mut text);
    text.push('\n');
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| Failure::from_write(&e))
}

/// A form's fields and its policy's conditions.
type Rules = (Vec<(String, String)>, Vec<PolicyValue>);

/// The form fields (`--content-type`, `--field`s) and the policy's conditions: one naming each
/// field, then the `--condition`s.
fn rules(a: &PresignArgs) -> Result<Rules, Failure> {
    let mut fields: Vec<(String, String)> = a
        .content_type
        .iter()
        .map(|c| ("Content-Type".to_owned(), c.clone()))
        .collect();
    for f in &a.fields {
        let (name, value) = f
            .split_once('=')
            .filter(|(n, _)| !n.is_empty())
            .ok_or_else(|| Failure::usage(format!("--field {f:?} must be NAME=VALUE")))?;
        fields.push((name.to_owned(), value.to_owned()));
    }
    let mut conditions: Vec<PolicyValue> =
        fields.iter().map(|(n, v)| PolicyValue::eq(n, v)).collect();
    for c in &a.conditions {
        let value: Value = serde_json::from_str(c)
            .map_err(|e| Failure::usage(format!("--condition {c:?} is not JSON: {e}")))?;
        if !(value.is_array() || value.is_object()) {
            return Err(Failure::usage(format!(
                "--condition {c:?} must be a JSON list or object"
            )));
        }
        conditions.push(policy_value(&value).ok_or_else(|| {
            Failure::usage(format!("--condition {c:?}: numbers must be integers"))
        })?);
    }
    Ok((fields, conditions))
}

/// JSON as a policy value; `None` for a number that is not an integer.
fn policy_value(v: &Value) -> Option<PolicyValue> {
    Some(match v {
        Value::Null => PolicyValue::Null,
        Value::Bool(b) => PolicyValue::Bool(*b),
        Value::Number(n) => PolicyValue::Int(n.as_i64()?),
        Value::String(s) => PolicyValue::Str(s.clone()),
        Value::Array(items) => {
            PolicyValue::List(items.iter().map(policy_value).collect::<Option<_>>()?)
        }
        Value::Object(map) => PolicyValue::Map(
            map.iter()
                .map(|(k, v)| Some((k.clone(), policy_value(v)?)))
                .collect::<Option<_>>()?,
        ),
    })
}
