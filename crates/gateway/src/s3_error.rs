//! The answers the gateway writes itself, in S3's error format, so SDKs parse them as they
//! parse the origin's (and retry 502, 503 and 504 as they would S3's).

use bytes::Bytes;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use crate::access_log::Record;
use crate::body::Relay;

/// An S3-style error document: `code` and `message` for the request's path `resource` (never
/// its query, which may hold a presigned signature).
pub(crate) fn answer(
    status: StatusCode,
    code: &str,
    message: &str,
    resource: &str,
    record: Record,
) -> Response<Relay> {
    let request_id = format!("{:016X}", fastrand::u64(..));
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{}</Code><Message>{}</Message><Resource>{}</Resource><RequestId>{}</RequestId></Error>",
        slipstream_s3::xml::escape(code),
        slipstream_s3::xml::escape(message),
        slipstream_s3::xml::escape(resource),
        request_id,
    );
    let body = Bytes::from(xml);
    let mut response = Response::new(Relay::local(body.clone(), record));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/xml"),
    );
    headers.insert(CONTENT_LENGTH, body.len().into());
    if let Ok(id) = request_id.parse() {
        headers.insert("x-amz-request-id", id);
    }
    response
}
