//! What a verified request does, in IAM's terms: the S3 actions it takes and the resources it
//! takes them on, each of which the key's policy must allow.
//!
//! Read from exactly the bytes that were verified and will be forwarded: the method, the raw
//! path (decoded once, strictly: an invalid escape or a key that is not UTF-8 is refused, as
//! S3 refuses them) and the query's sub-resource (`?uploads`, `?tagging`...). Headers that add
//! an action count too: `x-amz-copy-source` reads its source, `x-amz-acl`/`x-amz-grant-*` set
//! an ACL, `x-amz-tagging` tags. A sub-resource this table does not know is refused rather
//! than guessed. `POST ?delete` names its keys in the body: [`Operation::batch_delete`] tells
//! the caller to read them and authorize `s3:DeleteObject` on each.

use std::borrow::Cow;
use std::fmt;

/// One permission a request needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// `s3:GetObject` and the like.
    pub action: &'static str,
    /// `arn:aws:s3:::bucket/key`, `arn:aws:s3:::bucket`, or `*`.
    pub resource: String,
}

/// What a request does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The bucket addressed, if any.
    pub bucket: Option<String>,
    /// The key addressed (decoded), if any.
    pub key: Option<String>,
    /// Every permission needed.
    pub checks: Vec<Check>,
    /// `POST /bucket?delete`: each key in the body needs `s3:DeleteObject` as well.
    pub batch_delete: bool,
    /// `PUT /bucket` (CreateBucket): its body may name a region (`LocationConstraint`).
    pub create_bucket: bool,
}

/// A request the edge cannot map to S3 actions: refused (`InvalidURI` or `AccessDenied`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperationError {
    /// The path or a header cannot be decoded as S3 would (status 400).
    InvalidUri(String),
    /// Not an operation the edge knows how to authorize (refused, fail closed).
    Unknown(String),
}

impl fmt::Display for OperationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperationError::InvalidUri(m) | OperationError::Unknown(m) => f.write_str(m),
        }
    }
}

/// Sub-resources of an object: the query name, then the action without and with `versionId`.
const OBJECT_GET: &[(&str, &str, &str)] = &[
    (
        "tagging",
        "s3:GetObjectTagging",
        "s3:GetObjectVersionTagging",
    ),
    ("acl", "s3:GetObjectAcl", "s3:GetObjectVersionAcl"),
    (
        "attributes",
        "s3:GetObjectAttributes",
        "s3:GetObjectVersionAttributes",
    ),
    (
        "uploadId",
        "s3:ListMultipartUploadParts",
        "s3:ListMultipartUploadParts",
    ),
    (
        "retention",
        "s3:GetObjectRetention",
        "s3:GetObjectRetention",
    ),
    (
        "legal-hold",
        "s3:GetObjectLegalHold",
        "s3:GetObjectLegalHold",
    ),
    (
        "torrent",
        "s3:GetObjectTorrent",
        "s3:GetObjectVersionTorrent",
    ),
];
const OBJECT_PUT: &[(&str, &str, &str)] = &[
    (
        "tagging",
        "s3:PutObjectTagging",
        "s3:PutObjectVersionTagging",
    ),
    ("acl", "s3:PutObjectAcl", "s3:PutObjectVersionAcl"),
    (
        "retention",
        "s3:PutObjectRetention",
        "s3:PutObjectRetention",
    ),
    (
        "legal-hold",
        "s3:PutObjectLegalHold",
        "s3:PutObjectLegalHold",
    ),
    // UploadPart (and UploadPartCopy): `partNumber` comes with it.
    ("uploadId", "s3:PutObject", "s3:PutObject"),
];
const OBJECT_POST: &[(&str, &str, &str)] = &[
    ("uploads", "s3:PutObject", "s3:PutObject"),
    ("uploadId", "s3:PutObject", "s3:PutObject"),
    ("restore", "s3:RestoreObject", "s3:RestoreObject"),
    ("select", "s3:GetObject", "s3:GetObject"),
];
const OBJECT_DELETE: &[(&str, &str, &str)] = &[
    (
        "tagging",
        "s3:DeleteObjectTagging",
        "s3:DeleteObjectVersionTagging",
    ),
    (
        "uploadId",
        "s3:AbortMultipartUpload",
        "s3:AbortMultipartUpload",
    ),
];

/// Bucket sub-resources: the query name and the action for GET, PUT and DELETE ("" where S3
/// has no such operation).
const BUCKET: &[(&str, &str, &str, &str)] = &[
    ("versions", "s3:ListBucketVersions", "", ""),
    ("uploads", "s3:ListBucketMultipartUploads", "", ""),
    ("location", "s3:GetBucketLocation", "", ""),
    ("acl", "s3:GetBucketAcl", "s3:PutBucketAcl", ""),
    (
        "policy",
        "s3:GetBucketPolicy",
        "s3:PutBucketPolicy",
        "s3:DeleteBucketPolicy",
    ),
    ("policyStatus", "s3:GetBucketPolicyStatus", "", ""),
    (
        "tagging",
        "s3:GetBucketTagging",
        "s3:PutBucketTagging",
        "s3:PutBucketTagging",
    ),
    (
        "versioning",
        "s3:GetBucketVersioning",
        "s3:PutBucketVersioning",
        "",
    ),
    (
        "cors",
        "s3:GetBucketCORS",
        "s3:PutBucketCORS",
        "s3:PutBucketCORS",
    ),
    (
        "lifecycle",
        "s3:GetLifecycleConfiguration",
        "s3:PutLifecycleConfiguration",
        "s3:PutLifecycleConfiguration",
    ),
    (
        "object-lock",
        "s3:GetBucketObjectLockConfiguration",
        "s3:PutBucketObjectLockConfiguration",
        "",
    ),
    (
        "ownershipControls",
        "s3:GetBucketOwnershipControls",
        "s3:PutBucketOwnershipControls",
        "s3:PutBucketOwnershipControls",
    ),
    (
        "encryption",
        "s3:GetEncryptionConfiguration",
        "s3:PutEncryptionConfiguration",
        "s3:PutEncryptionConfiguration",
    ),
    (
        "website",
        "s3:GetBucketWebsite",
        "s3:PutBucketWebsite",
        "s3:DeleteBucketWebsite",
    ),
    (
        "notification",
        "s3:GetBucketNotification",
        "s3:PutBucketNotification",
        "",
    ),
    ("logging", "s3:GetBucketLogging", "s3:PutBucketLogging", ""),
    (
        "replication",
        "s3:GetReplicationConfiguration",
        "s3:PutReplicationConfiguration",
        "s3:PutReplicationConfiguration",
    ),
    (
        "requestPayment",
        "s3:GetBucketRequestPayment",
        "s3:PutBucketRequestPayment",
        "",
    ),
    (
        "accelerate",
        "s3:GetAccelerateConfiguration",
        "s3:PutAccelerateConfiguration",
        "",
    ),
    (
        "publicAccessBlock",
        "s3:GetBucketPublicAccessBlock",
        "s3:PutBucketPublicAccessBlock",
        "s3:PutBucketPublicAccessBlock",
    ),
];

/// Query names that carry arguments, not sub-resources.
const ARGUMENTS: &[&str] = &["versionId", "partNumber"];

/// What `method` on `path` with these query pairs (raw, as sent) and headers does. `bucket`
/// is the bucket named by the host (virtual-hosted style); `None` means path style.
pub fn operation(
    method: &str,
    host_bucket: Option<&str>,
    path: &str,
    query: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> Result<Operation, OperationError> {
    let (bucket, key) = address(host_bucket, path)?;
    let mut names = Vec::with_capacity(query.len());
    for (k, _) in query {
        names.push(decode(k)?);
    }
    let has = |n: &str| names.iter().any(|q| q == n);
    let versioned = has("versionId");
    let resource = match (&bucket, &key) {
        // `concat` sizes the string once (`format!` grows it; this runs per request).
        (Some(b), Some(k)) => ["arn:aws:s3:::", b, "/", k].concat(),
        (Some(b), None) => ["arn:aws:s3:::", b].concat(),
        _ => "*".to_owned(),
    };
    let shape = (bucket.is_some(), key.is_some());
    let mut op = Operation {
        bucket,
        key,
        checks: Vec::with_capacity(1),
        batch_delete: false,
        create_bucket: false,
    };
    // A check owns its resource: the request's own is moved into its only check (a GET, a
    // LIST: one allocation fewer per request) and cloned only where it is needed twice.
    let mut need =
        |action: &'static str, resource: String| op.checks.push(Check { action, resource });
    let unknown = |what: String| Err(OperationError::Unknown(what));
    match shape {
        (false, _) => match method {
            "GET" => need("s3:ListAllMyBuckets", resource),
            _ => return unknown(format!("{method} / is not an S3 operation the edge knows")),
        },
        (true, true) => {
            let table = match method {
                "GET" | "HEAD" => OBJECT_GET,
                "PUT" => OBJECT_PUT,
                "POST" => OBJECT_POST,
                "DELETE" => OBJECT_DELETE,
                _ => return unknown(format!("{method} on an object is not an S3 operation")),
            };
            let sub = sub_resource(&names, table.iter().map(|t| t.0))?;
            let action = match (sub, method) {
                (Some(i), _) => {
                    if versioned {
                        table[i].2
                    } else {
                        table[i].1
                    }
                }
                (None, "GET" | "HEAD") if versioned => "s3:GetObjectVersion",
                (None, "GET" | "HEAD") => "s3:GetObject",
                (None, "PUT") => "s3:PutObject",
                (None, "DELETE") if versioned => "s3:DeleteObjectVersion",
                (None, "DELETE") => "s3:DeleteObject",
                (None, _) => return unknown(format!("{method} on an object needs a sub-resource")),
            };
            if method == "PUT" && action == "s3:PutObject" {
                need(action, resource.clone());
                let header = |n: &str| headers.iter().find(|(h, _)| h.eq_ignore_ascii_case(n));
                if let Some((_, source)) = header("x-amz-copy-source") {
                    let (source, versioned) = copy_source(source)?;
                    let read = if versioned {
                        "s3:GetObjectVersion"
                    } else {
                        "s3:GetObject"
                    };
                    need(read, source);
                }
                let acl = headers.iter().any(|(h, _)| {
                    h.eq_ignore_ascii_case("x-amz-acl")
                        || starts_with_ignore_case(h, "x-amz-grant-")
                });
                if acl {
                    need("s3:PutObjectAcl", resource.clone());
                }
                if header("x-amz-tagging").is_some() {
                    need("s3:PutObjectTagging", resource);
                }
            } else {
                need(action, resource);
            }
        }
        (true, false) => {
            if method == "POST" {
                if has("delete") && names.len() == 1 {
                    op.batch_delete = true;
                    return Ok(op);
                }
                return unknown("POST on a bucket is only ?delete here".into());
            }
            let column = match method {
                "GET" | "HEAD" => 1,
                "PUT" => 2,
                "DELETE" => 3,
                _ => return unknown(format!("{method} on a bucket is not an S3 operation")),
            };
            let sub = sub_resource(&names, BUCKET.iter().map(|t| t.0))?;
            let action = match sub {
                Some(i) => {
                    let row = BUCKET[i];
                    [row.1, row.2, row.3][column - 1]
                }
                None => {
                    op.create_bucket = column == 2;
                    ["s3:ListBucket", "s3:CreateBucket", "s3:DeleteBucket"][column - 1]
                }
            };
            if action.is_empty() {
                return unknown(format!(
                    "{method} on this bucket sub-resource is not an S3 operation"
                ));
            }
            need(action, resource);
        }
    }
    Ok(op)
}

/// The one known sub-resource among the query names (its index in the table); an unknown
/// name that looks like a sub-resource, or two of them, is refused.
fn sub_resource<'t>(
    names: &[Cow<'_, str>],
    table: impl Iterator<Item = &'t str> + Clone,
) -> Result<Option<usize>, OperationError> {
    let mut found = None;
    for name in names {
        if ARGUMENTS.contains(&name.as_ref()) || !is_sub_resource_like(name) {
            continue;
        }
        let Some(i) = table.clone().position(|t| t == name) else {
            return Err(OperationError::Unknown(format!(
                "the sub-resource ?{name} is not one the edge can authorize"
            )));
        };
        if found.is_some_and(|f| f != i) {
            return Err(OperationError::Unknown(
                "two sub-resources in one request".into(),
            ));
        }
        found = Some(i);
    }
    Ok(found)
}

/// Whether a query name could select a sub-resource. S3's ordinary parameters (list-type,
/// prefix, delimiter, max-keys, response-*, X-Amz-*, encoding-type...) are not.
fn is_sub_resource_like(name: &str) -> bool {
    const ORDINARY: &[&str] = &[
        "list-type",
        "prefix",
        "delimiter",
        "max-keys",
        "marker",
        "continuation-token",
        "start-after",
        "fetch-owner",
        "encoding-type",
        "key-marker",
        "version-id-marker",
        "upload-id-marker",
        "max-uploads",
        "max-parts",
        "part-number-marker",
        "max-buckets",
        "bucket-region",
        "x-id",
    ];
    !(ORDINARY.contains(&name)
        || starts_with_ignore_case(name, "x-amz-")
        || starts_with_ignore_case(name, "response-"))
}

/// Whether `s` starts with `prefix` in any ASCII case (without the copy `to_ascii_lowercase`
/// makes: this runs for every query name and header of every request).
fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The bucket and key of a request: from the host (virtual-hosted style) or the path's first
/// segment. Decoded once, strictly.
fn address(
    host_bucket: Option<&str>,
    path: &str,
) -> Result<(Option<String>, Option<String>), OperationError> {
    let rest = path.strip_prefix('/').ok_or_else(|| {
        OperationError::InvalidUri("the request target does not start with /".into())
    })?;
    let (bucket, key) = match host_bucket {
        Some(b) => (Some(b.to_owned()), rest),
        None => {
            let (b, k) = rest.split_once('/').unwrap_or((rest, ""));
            if b.is_empty() {
                (None, k)
            } else {
                if b.contains('%') {
                    return Err(OperationError::InvalidUri(
                        "a bucket name in the path cannot contain escapes".into(),
                    ));
                }
                (Some(b.to_owned()), k)
            }
        }
    };
    let key = if key.is_empty() {
        None
    } else {
        Some(decode(key)?.into_owned())
    };
    if bucket.is_none() && key.is_some() {
        return Err(OperationError::InvalidUri("a key without a bucket".into()));
    }
    Ok((bucket, key))
}

/// `x-amz-copy-source`: `bucket/key` or `/bucket/key`, URL-encoded, optionally
/// `?versionId=...`. Returns the source's ARN and whether a version was named.
fn copy_source(value: &str) -> Result<(String, bool), OperationError> {
    let (path, query) = value.split_once('?').unwrap_or((value, ""));
    let decoded = decode(path.strip_prefix('/').unwrap_or(path))?;
    let (bucket, key) = decoded
        .split_once('/')
        .filter(|(b, k)| !b.is_empty() && !k.is_empty())
        .ok_or_else(|| OperationError::InvalidUri("x-amz-copy-source is not bucket/key".into()))?;
    let versioned = query.split('&').any(|p| p.starts_with("versionId="));
    Ok((["arn:aws:s3:::", bucket, "/", key].concat(), versioned))
}

/// `%XY` decoded once; a `%` without two hex digits, or bytes that are not UTF-8, are refused.
/// Borrowed when there is no escape, as in almost every query name.
fn decode(s: &str) -> Result<Cow<'_, str>, OperationError> {
    if !s.contains('%') {
        return Ok(Cow::Borrowed(s));
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).and_then(|h| {
                let h = std::str::from_utf8(h).ok()?;
                u8::from_str_radix(h, 16)
                    .ok()
                    .filter(|_| h.bytes().all(|c| c.is_ascii_hexdigit()))
            });
            let Some(byte) = hex else {
                return Err(OperationError::InvalidUri(format!(
                    "an invalid escape at byte {i} of the path or query"
                )));
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|_| OperationError::InvalidUri("the key is not valid UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(method: &str, target: &str, headers: &[(&str, &str)]) -> Vec<(String, String)> {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let pairs: Vec<(&str, &str)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        operation(method, None, path, &pairs, headers)
            .unwrap()
            .checks
            .into_iter()
            .map(|c| (c.action.to_owned(), c.resource))
            .collect()
    }

    fn one(action: &str, resource: &str) -> Vec<(String, String)> {
        vec![(action.to_owned(), resource.to_owned())]
    }

    #[test]
    fn object_operations_map_to_their_actions() {
        for (method, target, action) in [
            ("GET", "/b/dir/k", "s3:GetObject"),
            ("HEAD", "/b/dir/k", "s3:GetObject"),
            ("GET", "/b/dir/k?versionId=3", "s3:GetObjectVersion"),
            (
                "GET",
                "/b/dir/k?response-content-type=x&X-Amz-Signature=s",
                "s3:GetObject",
            ),
            ("PUT", "/b/dir/k", "s3:PutObject"),
            ("PUT", "/b/dir/k?partNumber=2&uploadId=u", "s3:PutObject"),
            ("POST", "/b/dir/k?uploads", "s3:PutObject"),
            ("DELETE", "/b/dir/k?uploadId=u", "s3:AbortMultipartUpload"),
            ("DELETE", "/b/dir/k", "s3:DeleteObject"),
            ("PUT", "/b/dir/k?tagging", "s3:PutObjectTagging"),
            ("GET", "/b/dir/k?uploadId=u", "s3:ListMultipartUploadParts"),
        ] {
            assert_eq!(
                actions(method, target, &[]),
                one(action, "arn:aws:s3:::b/dir/k"),
                "{method} {target}"
            );
        }
    }

    #[test]
    fn headers_that_act_need_their_own_permission() {
        let got = actions(
            "PUT",
            "/b/k",
            &[
                ("X-Amz-Copy-Source", "/src/a%20b?versionId=7"),
                ("x-amz-acl", "public-read"),
                ("x-amz-tagging", "a=b"),
            ],
        );
        assert_eq!(
            got,
            vec![
                ("s3:PutObject".into(), "arn:aws:s3:::b/k".into()),
                ("s3:GetObjectVersion".into(), "arn:aws:s3:::src/a b".into()),
                ("s3:PutObjectAcl".into(), "arn:aws:s3:::b/k".into()),
                ("s3:PutObjectTagging".into(), "arn:aws:s3:::b/k".into()),
            ]
        );
    }

    #[test]
    fn bucket_and_service_operations() {
        for (method, path, action, resource) in [
            ("GET", "/", "s3:ListAllMyBuckets", "*"),
            ("GET", "/b", "s3:ListBucket", "arn:aws:s3:::b"),
            (
                "GET",
                "/b/?list-type=2&prefix=a",
                "s3:ListBucket",
                "arn:aws:s3:::b",
            ),
            ("HEAD", "/b", "s3:ListBucket", "arn:aws:s3:::b"),
            ("PUT", "/b", "s3:CreateBucket", "arn:aws:s3:::b"),
            ("DELETE", "/b", "s3:DeleteBucket", "arn:aws:s3:::b"),
            (
                "GET",
                "/b?versions",
                "s3:ListBucketVersions",
                "arn:aws:s3:::b",
            ),
            (
                "DELETE",
                "/b?policy",
                "s3:DeleteBucketPolicy",
                "arn:aws:s3:::b",
            ),
        ] {
            assert_eq!(
                actions(method, path, &[]),
                one(action, resource),
                "{method} {path}"
            );
        }
        let batch = operation("POST", None, "/b", &[("delete", "")], &[]).unwrap();
        assert!(batch.batch_delete && batch.checks.is_empty());
        let create = |method, path, query: &[(&str, &str)]| {
            operation(method, None, path, query, &[])
                .unwrap()
                .create_bucket
        };
        assert!(create("PUT", "/b", &[]));
        assert!(!create("PUT", "/b", &[("versioning", "")]) && !create("PUT", "/b/k", &[]));
        assert!(!create("GET", "/b", &[]) && !batch.create_bucket);
    }

    #[test]
    fn virtual_hosted_requests_take_the_bucket_from_the_host() {
        let op = operation("GET", Some("b"), "/k/x", &[], &[]).unwrap();
        assert_eq!(
            op.checks,
            vec![Check {
                action: "s3:GetObject",
                resource: "arn:aws:s3:::b/k/x".into()
            }]
        );
        let op = operation("GET", Some("b"), "/", &[], &[]).unwrap();
        assert_eq!(op.checks[0].action, "s3:ListBucket");
    }

    #[test]
    fn keys_are_decoded_once_and_kept_as_sent() {
        // `%2F` is a slash in the key, `//` and `./` stay: S3 does not normalize.
        let op = operation("GET", None, "/b/a%2Fb//./c%252F", &[], &[]).unwrap();
        assert_eq!(op.key.as_deref(), Some("a/b//./c%2F"));
    }

    #[test]
    fn what_cannot_be_read_as_s3_would_is_refused() {
        let refused = [
            ("GET", "/b/%zz"),
            ("GET", "/b/%ff"),
            ("GET", "/b/a%2"),
            ("GET", "/b%2Fc/k"),
            ("PATCH", "/b/k"),
            ("GET", "/b/k?frobnicate"),
            ("GET", "/b/k?tagging&acl"),
            ("POST", "/b"),
            ("PUT", "/b?versions"),
        ];
        for (method, target) in refused {
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let pairs: Vec<(&str, &str)> = query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once('=').unwrap_or((p, "")))
                .collect();
            assert!(
                operation(method, None, path, &pairs, &[]).is_err(),
                "{method} {target} was accepted"
            );
        }
    }
}
