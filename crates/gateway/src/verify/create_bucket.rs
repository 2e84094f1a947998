//! `CreateBucket` through a verifying edge. Clients sign for the edge's region, and the AWS CLI
//! and boto3 put that region in the body (`<LocationConstraint>eu-edge-1</LocationConstraint>`)
//! for every region but us-east-1. The origin has a region of its own and refuses a bucket
//! "in" the edge's (`InvalidLocationConstraint`), so `aws s3 mb` through the edge failed. The
//! edge re-signs the request anyway: it names the origin's region instead (none for us-east-1,
//! where S3 refuses an explicit constraint). A constraint naming any other region is the
//! client's choice and goes to the origin as it came.

use bytes::Bytes;
use hyper::header::{HeaderMap, HeaderName};
use hyper::StatusCode;

use crate::proxy::Answer;

/// The largest `CreateBucket` body read (a configuration is a few hundred bytes).
pub(super) const CREATE_BUCKET_LIMIT: usize = 64 << 10;

const OPEN: &str = "<LocationConstraint>";
const CLOSE: &str = "</LocationConstraint>";

/// The body for the origin. When it differs from the client's, the client's checksum headers
/// (of its body, checked with its signature) leave `headers`.
pub(super) fn for_origin(
    body: Bytes,
    edge_region: &str,
    origin_region: &str,
    headers: &mut HeaderMap,
) -> Result<Bytes, Answer> {
    let (body, changed) = rewritten(body, edge_region, origin_region)?;
    if changed {
        headers.remove("content-md5");
        headers.remove("x-amz-sdk-checksum-algorithm");
        let sums: Vec<HeaderName> = headers
            .keys()
            .filter(|n| n.as_str().starts_with("x-amz-checksum-"))
            .cloned()
            .collect();
        for name in sums {
            headers.remove(name);
        }
    }
    Ok(body)
}

/// The body for the origin, and whether it differs from the client's.
fn rewritten(body: Bytes, edge_region: &str, origin_region: &str) -> Result<(Bytes, bool), Answer> {
    let mut constraint = None;
    let mut elements = 0usize;
    slipstream_s3::xml::walk(&body, |path, text| match (path, text) {
        ("CreateBucketConfiguration/LocationConstraint", Some(t)) => constraint = Some(t),
        (p, None) if p.starts_with("CreateBucketConfiguration/") && p.matches('/').count() == 1 => {
            elements += 1;
        }
        _ => {}
    })
    .map_err(|e| (StatusCode::BAD_REQUEST, "MalformedXML", e.to_string()))?;
    if constraint.as_deref() != Some(edge_region) || edge_region == origin_region {
        return Ok((body, false));
    }
    let text = std::str::from_utf8(&body)
        .map_err(|_| (StatusCode::BAD_REQUEST, "MalformedXML", "not UTF-8".into()))?;
    // The element as SDKs write it; one written another way (a namespace prefix) is left to
    // the origin to judge.
    let element = format!("{OPEN}{edge_region}{CLOSE}");
    let Some(at) = text.find(&element) else {
        return Ok((body, false));
    };
    let replacement = match origin_region {
        // Nothing else configured: no configuration at all, as the SDKs send for us-east-1.
        "us-east-1" if elements == 1 => return Ok((Bytes::new(), true)),
        "us-east-1" => String::new(),
        region => format!("{OPEN}{region}{CLOSE}"),
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..at]);
    out.push_str(&replacement);
    out.push_str(&text[at + element.len()..]);
    Ok((Bytes::from(out), true))
}

#[cfg(test)]
mod tests {
    use super::*;

    const AWS_CLI: &str = r#"<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>eu-edge-1</LocationConstraint></CreateBucketConfiguration>"#;

    fn rewritten_as(body: &str, origin: &str) -> (String, bool) {
        let (b, changed) = rewritten(Bytes::from(body.to_owned()), "eu-edge-1", origin).unwrap();
        (String::from_utf8(b.to_vec()).unwrap(), changed)
    }

    #[test]
    fn the_edges_region_becomes_the_origins() {
        let (body, changed) = rewritten_as(AWS_CLI, "eu-west-3");
        assert!(changed);
        assert_eq!(body, AWS_CLI.replace("eu-edge-1", "eu-west-3"));
        // us-east-1 takes no constraint: the whole configuration goes.
        assert_eq!(rewritten_as(AWS_CLI, "us-east-1"), (String::new(), true));
        let more = r#"<CreateBucketConfiguration><LocationConstraint>eu-edge-1</LocationConstraint><Tags><Tag><Key>a</Key><Value>b</Value></Tag></Tags></CreateBucketConfiguration>"#;
        let (body, changed) = rewritten_as(more, "us-east-1");
        assert!(changed);
        assert_eq!(
            body,
            "<CreateBucketConfiguration><Tags><Tag><Key>a</Key><Value>b</Value></Tag></Tags></CreateBucketConfiguration>"
        );
    }

    #[test]
    fn other_bodies_go_as_they_came() {
        for body in [
            "",
            AWS_CLI.replace("eu-edge-1", "ap-south-1").as_str(),
            "<CreateBucketConfiguration/>",
        ] {
            assert_eq!(
                rewritten_as(body, "us-east-1"),
                (body.to_owned(), false),
                "{body}"
            );
        }
        // The origin in the edge's own region: nothing to change.
        let (b, changed) = rewritten(Bytes::from(AWS_CLI), "eu-edge-1", "eu-edge-1").unwrap();
        assert!(!changed && b == AWS_CLI);
        assert!(rewritten(Bytes::from("<a><b></a>"), "eu-edge-1", "us-east-1").is_err());
    }
}
