//! Any request (method, path, query, headers as NUL-separated fields) canonicalizes and signs
//! without panicking, in both path modes and both signature forms.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_sign::{Credentials, PathEncoding, PayloadHash, Request, SessionTokenMode, Settings, Signer, SigningTime};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut fields = text.split('\0');
    let method = fields.next().unwrap_or("GET");
    let path = fields.next().unwrap_or("/");
    let query = fields.next().unwrap_or("");
    let headers: Vec<(&str, &str)> = fields.map(|h| h.split_once(':').unwrap_or((h, ""))).collect();
    let req = Request { method, path, query, headers: &headers };
    let Ok(creds) = Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", Some("token".into())) else { return };
    let time = SigningTime::from_unix(1_440_938_160).unwrap_or_else(|_| unreachable!());
    for path in [PathEncoding::AsSent, PathEncoding::Encode { normalize: true }, PathEncoding::Encode { normalize: false }] {
        let settings = Settings { path, session_token: SessionTokenMode::Signed, content_sha256_header: true };
        let Ok(signer) = Signer::new(creds.clone(), "us-east-1", "s3", settings) else { return };
        let _ = signer.sign_headers(&req, &PayloadHash::Unsigned, time);
        let _ = signer.presign(&req, 3600, &PayloadHash::Unsigned, time);
    }
});
