//! Endpoint URLs, `s3://` URIs and bucket names from users never panic the resolver.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_s3::{resolve, AddressingStyle, Endpoint, S3Uri};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (a, b) = text.split_once('\0').unwrap_or((text, "bucket"));
    let endpoint = Endpoint::parse(a).ok();
    let _ = S3Uri::parse(a);
    for style in [AddressingStyle::Auto, AddressingStyle::Virtual, AddressingStyle::Path] {
        if let Ok(base) = resolve(b, "us-east-1", endpoint.as_ref(), style) {
            assert!(base.path_prefix.starts_with('/') && base.path_prefix.ends_with('/'));
        }
        let _ = resolve(b, a, None, style);
    }
});
