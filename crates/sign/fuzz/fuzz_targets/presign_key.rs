//! Any UTF-8 key presigns, and the URL's path decodes back to exactly that key: nothing is
//! normalized, dropped or double-encoded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_sign::{Credentials, PresignOptions, Presigner, SigningTime, UrlBase};

fuzz_target!(|data: &[u8]| {
    let Ok(key) = std::str::from_utf8(data) else { return };
    let base = UrlBase { origin: "https://b.s3.amazonaws.com".into(), host: "b.s3.amazonaws.com".into(), path_prefix: "/".into() };
    let creds = Credentials::new("AKIDEXAMPLE", "secret", None).unwrap_or_else(|_| unreachable!());
    let p = Presigner::new(base, "us-east-1", creds).unwrap_or_else(|_| unreachable!());
    let time = SigningTime::from_unix(1_440_938_160).unwrap_or_else(|_| unreachable!());
    match p.presign(key, &PresignOptions::get(), time) {
        Ok(url) => {
            let path = &url["https://b.s3.amazonaws.com/".len()..url.find('?').unwrap_or(url.len())];
            assert_eq!(slipstream_sign::encode::percent_decode(path), key.as_bytes());
        }
        Err(_) => assert!(key.is_empty()),
    }
});
