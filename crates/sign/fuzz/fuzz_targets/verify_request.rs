//! Any request (method, target and headers as NUL-separated fields) goes through the verifier
//! without panicking: the Authorization header parser, the presigned-query parser and the
//! header checks all see untrusted input here. A seed line makes a real signature likely to be
//! reached: inputs that start with `A` get a valid presigned target with the rest appended.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_sign::verify::{CredentialKeys, Incoming, Verifier};
use slipstream_sign::{Credentials, SigningTime};

const VALID: &str = "/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut fields = text.split('\0');
    let method = fields.next().unwrap_or("GET");
    let raw_target = fields.next().unwrap_or("/");
    let target = if method.starts_with('A') { format!("{VALID}{raw_target}") } else { raw_target.to_owned() };
    let headers: Vec<(&str, &str)> = fields.map(|h| h.split_once(':').unwrap_or((h, ""))).collect();
    let Ok(creds) = Credentials::new("AKID", "secret", None) else { return };
    let keys = CredentialKeys::new([creds]);
    let Ok(now) = SigningTime::from_unix(1_440_938_160) else { return };
    let req = Incoming { method, target: &target, headers: &headers, body_sha256: None };
    let _ = Verifier::s3("us-east-1").verify(&req, &keys, now);
});
