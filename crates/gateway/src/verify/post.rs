//! Browser POST uploads in verify mode (a presigned POST: a form whose policy the client's
//! key signed).
//!
//! The edge reads the form's fields (`slipstream_s3::post_form`), verifies the policy and every field against
//! it with the project's verifier, authorizes `s3:PutObject` (and the ACL and tagging actions
//! the fields ask for) on the key the form writes, and only then forwards: the client's
//! signature fields are replaced by the edge's own, a policy signed with the origin
//! credentials that allows exactly the verified fields and key (each as an `eq` condition) and
//! the client's size limits. The file part streams through byte for byte. The origin checks
//! the edge's policy, so a file outside the client's `content-length-range` is refused there
//! (the edge cannot know the length before the file has passed).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use bytes::BytesMut;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use hyper::http::request::Parts;
use hyper::{Method, Request, StatusCode};
use slipstream_s3::operation::Check;
use slipstream_sign::verify::{PostUpload, VerifyError};
use slipstream_sign::{PolicyValue, Presigner, SigningTime, UrlBase};
use tokio::sync::oneshot;

use super::{authorize, client_body, host_bucket, internal, refuse, upstream_target, Verify};
use crate::body::Upload;
use crate::proxy::{Admitted, Answer};
use slipstream_s3::post_form::{self as form, FormError};

/// How long the edge's own form is valid. It goes to the origin at once, over the edge's
/// connection; the expiry only bounds a replay of it.
const EDGE_FORM_SECONDS: u64 = 900;

/// The client's signature fields and key, which the edge's form replaces.
const REPLACED_FIELDS: [&str; 9] = [
    "policy",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-algorithm",
    "x-amz-date",
    "x-amz-security-token",
    "awsaccesskeyid",
    "signature",
    "key",
];

/// Whether a request is for a browser POST upload: a POST without a query and without header
/// authentication (a form carries its own). What is not a form to a bucket is refused as S3
/// refuses it.
pub(super) fn is_post_upload(parts: &Parts) -> bool {
    parts.method == Method::POST
        && parts.uri.query().map_or(true, str::is_empty)
        && !parts.headers.contains_key(AUTHORIZATION)
}

impl Verify {
    /// Verifies and authorizes a POST upload's form, then forwards it signed by the edge.
    pub(super) async fn admit_post(
        &self,
        parts: Parts,
        mut body: Incoming,
        client_host: &str,
        counted: Arc<AtomicU64>,
    ) -> Result<Admitted, Answer> {
        let now = SigningTime::from_system_time(SystemTime::now())
            .map_err(|e| internal(e.to_string()))?;
        let host = parts
            .headers
            .get(HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(client_host);
        let host_bucket = host_bucket(&self.host_suffixes, host);
        let path = parts.uri.path();
        let bucket = posted_bucket(host_bucket, path)?;
        let content_type = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let multipart = content_type
            .trim_start()
            .get(..19)
            .is_some_and(|kind| kind.eq_ignore_ascii_case("multipart/form-data"));
        if !multipart {
            return Err((
                StatusCode::PRECONDITION_FAILED,
                "PreconditionFailed",
                "At least one of the pre-conditions you specified did not hold.".into(),
            ));
        }
        let boundary =
            form::boundary(content_type).ok_or_else(|| form_error(FormError::Malformed))?;

        // The fields, read until the file part's headers.
        let mut read = BytesMut::new();
        let head = loop {
            if let Some(head) = form::parse(&read, &boundary).map_err(form_error)? {
                break head;
            }
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        counted.fetch_add(data.len() as u64, Ordering::Relaxed);
                        read.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => return Err(client_body(&e)),
                None => return Err(form_error(FormError::NoFile)),
            }
        };
        let mut fields = head.fields;
        if let Some((_, key)) = fields
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case("key"))
        {
            *key = key.replace("${filename}", &head.file_name);
        }
        let list: Vec<(&str, &str)> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let field = |name: &str| {
            list.iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        };

        let id = field("x-amz-credential")
            .and_then(|c| c.split('/').next())
            .unwrap_or_default();
        let keys = self.held_for(id.to_owned()).await?;
        let upload = PostUpload {
            bucket,
            fields: &list,
            content_length: None,
        };
        let verified = self
            .verifier
            .verify_post(&upload, &keys, now)
            .map_err(refuse)?;
        let key = keys
            .get(&verified.access_key_id)
            .ok_or_else(|| refuse(VerifyError::InvalidAccessKeyId))?;
        key.check_token(field("x-amz-security-token"), now.unix())
            .map_err(|(code, message)| (StatusCode::FORBIDDEN, code, message.to_owned()))?;
        authorize(&key.policy, &checks(bucket, &verified.key, &list))?;

        // The edge's form for the origin: the verified fields, its own signature.
        let signer = self.origin_signer().await?;
        let base = UrlBase {
            origin: format!("http://{}", self.origin_host),
            host: self.origin_host.clone(),
            path_prefix: "/".into(),
        };
        let presigner = Presigner::new(base, &self.origin_region, signer.credentials().clone())
            .map_err(|e| internal(format!("cannot sign for the origin: {e}")))?;
        let mut forwarded = Vec::with_capacity(fields.len());
        let mut conditions = Vec::with_capacity(fields.len() + 2);
        for (name, value) in &fields {
            let lower = name.to_ascii_lowercase();
            if REPLACED_FIELDS.contains(&lower.as_str()) {
                continue;
            }
            if !lower.starts_with("x-ignore-") {
                conditions.push(PolicyValue::eq(name, value));
            }
            forwarded.push((name.clone(), value.clone()));
        }
        for (min, max) in &verified.content_length_ranges {
            let size = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            conditions.push(PolicyValue::content_length_range(size(*min), size(*max)));
        }
        let edge_form = presigner
            .presign_post(
                bucket,
                &verified.key,
                &forwarded,
                &conditions,
                EDGE_FORM_SECONDS,
                now,
            )
            .map_err(|e| internal(format!("cannot sign for the origin: {e}")))?;

        let new_head = form::head_bytes(&boundary, &edge_form.fields, &head.file_part);
        let length = match parts.headers.get(CONTENT_LENGTH) {
            None => None,
            Some(v) => {
                let sent = v.to_str().ok().and_then(|v| v.parse::<u64>().ok());
                let rest = sent.and_then(|l| l.checked_sub(head.consumed as u64));
                Some(rest.ok_or_else(|| form_error(FormError::Malformed))? + new_head.len() as u64)
            }
        };
        let mut prefix = BytesMut::with_capacity(new_head.len() + read.len() - head.consumed);
        prefix.extend_from_slice(&new_head);
        prefix.extend_from_slice(&read[head.consumed..]);

        let mut headers = super::upstream_headers(&parts.headers);
        if let Some(length) = length {
            headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
        }
        let (done_tx, done_rx) = oneshot::channel();
        let upload = Upload::after(prefix.freeze(), body, counted, done_tx);
        let mut request = Request::new(upload.boxed());
        *request.method_mut() = Method::POST;
        *request.headers_mut() = headers;
        Ok(Admitted {
            request,
            path_and_query: upstream_target(host_bucket, path, ""),
            host: self.origin_host.clone(),
            safe: false,
            body_done: Some(done_rx),
            gate: None,
            failure: None,
        })
    }
}

/// The bucket a form is posted to: the host's (path `/`), else the path's only segment.
fn posted_bucket<'a>(host_bucket: Option<&'a str>, path: &'a str) -> Result<&'a str, Answer> {
    let bucket = match host_bucket {
        Some(b) if path == "/" => Some(b),
        Some(_) => None,
        None => {
            let b = path.strip_prefix('/').unwrap_or(path);
            let b = b.strip_suffix('/').unwrap_or(b);
            (!b.is_empty() && !b.contains('/')).then_some(b)
        }
    };
    let bucket = bucket.ok_or_else(|| {
        (
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "The specified method is not allowed against this resource.".into(),
        )
    })?;
    if host_bucket.is_some() && !super::dns_bucket(bucket) || bucket.contains('%') {
        return Err((
            StatusCode::BAD_REQUEST,
            "InvalidBucketName",
            format!("{bucket:?} is not a bucket name"),
        ));
    }
    Ok(bucket)
}

/// What writing `key` with these form fields asks of the key's policy (as a PUT with the
/// same headers would: `acl`, `x-amz-grant-*` and `tagging` each add an action).
fn checks(bucket: &str, key: &str, fields: &[(&str, &str)]) -> Vec<Check> {
    let resource = format!("arn:aws:s3:::{bucket}/{key}");
    let names: Vec<String> = fields.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
    let mut checks = vec![Check {
        action: "s3:PutObject",
        resource: resource.clone(),
    }];
    if names
        .iter()
        .any(|n| n == "acl" || n.starts_with("x-amz-grant-"))
    {
        checks.push(Check {
            action: "s3:PutObjectAcl",
            resource: resource.clone(),
        });
    }
    if names.iter().any(|n| n == "tagging") {
        checks.push(Check {
            action: "s3:PutObjectTagging",
            resource,
        });
    }
    checks
}

fn form_error(e: FormError) -> Answer {
    match e {
        // S3's fixed text (what the form got wrong is not said, as by S3).
        FormError::Malformed => (
            StatusCode::BAD_REQUEST,
            "MalformedPOSTRequest",
            "The body of your POST request is not well-formed multipart/form-data.".into(),
        ),
        FormError::NoFile => (
            StatusCode::BAD_REQUEST,
            "InvalidArgument",
            "POST requires exactly one file upload per request.".into(),
        ),
        FormError::TooLarge => (
            StatusCode::BAD_REQUEST,
            "MaxPostPreDataLengthExceeded",
            format!(
                "Your POST request fields preceding the upload file were too large (the edge reads at most {} bytes).",
                form::HEAD_LIMIT
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_goes_to_a_bucket_named_by_the_host_or_the_path() {
        assert_eq!(posted_bucket(None, "/photos").unwrap(), "photos");
        assert_eq!(posted_bucket(None, "/photos/").unwrap(), "photos");
        assert_eq!(posted_bucket(Some("photos"), "/").unwrap(), "photos");
        for (host, path) in [(None, "/"), (None, "/photos/key"), (Some("photos"), "/key")] {
            assert_eq!(posted_bucket(host, path).unwrap_err().1, "MethodNotAllowed");
        }
        assert_eq!(
            posted_bucket(None, "/ph%6ftos").unwrap_err().1,
            "InvalidBucketName"
        );
        assert_eq!(
            posted_bucket(Some("Ph"), "/").unwrap_err().1,
            "InvalidBucketName"
        );
    }

    #[test]
    fn acl_and_tagging_fields_need_their_actions() {
        let actions = |fields: &[(&str, &str)]| -> Vec<&'static str> {
            checks("b", "k", fields).iter().map(|c| c.action).collect()
        };
        assert_eq!(actions(&[("key", "k")]), ["s3:PutObject"]);
        assert_eq!(
            actions(&[("ACL", "public-read"), ("Tagging", "<Tagging/>")]),
            ["s3:PutObject", "s3:PutObjectAcl", "s3:PutObjectTagging"]
        );
        assert_eq!(
            actions(&[("x-amz-grant-read", "id=1")]),
            ["s3:PutObject", "s3:PutObjectAcl"]
        );
        assert_eq!(checks("b", "a/k", &[])[0].resource, "arn:aws:s3:::b/a/k");
    }
}
