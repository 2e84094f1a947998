//! What the verifying edge authorizes is read from the request's raw bytes: any method, host
//! bucket, path, query and headers must map to IAM checks or a refusal, never a panic, and an
//! accepted request's resources must name exactly the bucket and key that are forwarded.
//! Fields are NUL-separated: method, host bucket (empty for path style), path, query, headers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_s3::operation::operation;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut fields = text.split('\0');
    let method = fields.next().unwrap_or("GET");
    let host_bucket = fields.next().filter(|b| !b.is_empty());
    let path = fields.next().unwrap_or("/");
    let query = fields.next().unwrap_or("");
    let headers: Vec<(&str, &str)> = fields.map(|h| h.split_once(':').unwrap_or((h, ""))).collect();
    let pairs: Vec<(&str, &str)> = slipstream_sign::canonical::split_query(query).collect();
    let Ok(op) = operation(method, host_bucket, path, &pairs, &headers) else { return };

    assert!(matches!(method, "GET" | "HEAD" | "PUT" | "POST" | "DELETE"), "{method} accepted");
    assert!(op.batch_delete || !op.checks.is_empty(), "no check for {method} {path}");
    assert!(op.checks.iter().all(|c| c.action.starts_with("s3:")));
    if let Some(b) = host_bucket {
        assert_eq!(op.bucket.as_deref(), Some(b));
    }
    // The first check is on what the request addresses: the key, else the bucket, else `*`.
    if let Some(first) = op.checks.first() {
        let expected = match (&op.bucket, &op.key) {
            (Some(b), Some(k)) => format!("arn:aws:s3:::{b}/{k}"),
            (Some(b), None) => format!("arn:aws:s3:::{b}"),
            _ => "*".to_owned(),
        };
        assert_eq!(first.resource, expected);
    }
    // Without escapes the bucket and key are the path as sent: no normalization of `.`, `..`,
    // `//` or `+`, so what was verified and forwarded is what was authorized.
    if !path.contains('%') {
        let mut rebuilt = String::from("/");
        if host_bucket.is_none() {
            rebuilt.push_str(op.bucket.as_deref().unwrap_or_default());
            if op.key.is_some() || path[1..].contains('/') {
                rebuilt.push('/');
            }
        }
        rebuilt.push_str(op.key.as_deref().unwrap_or_default());
        assert_eq!(rebuilt, path);
    }
});
