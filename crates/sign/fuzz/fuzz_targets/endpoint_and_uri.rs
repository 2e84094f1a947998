//! Endpoint URLs, `s3://` URIs and bucket names from users never panic the resolver.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_s3::{resolve, AddressingStyle, Endpoint, S3Uri, Variants};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (a, b) = text.split_once('\0').unwrap_or((text, "bucket"));
    let endpoint = Endpoint::parse(a).ok();
    let _ = S3Uri::parse(a);
    // FIPS, dual-stack, acceleration and us-east-1's regional host from the input's length.
    let bit = |n: usize| data.len() >> n & 1 == 1;
    let variants = Variants {
        fips: bit(0),
        dualstack: bit(1),
        accelerate: bit(2),
        regional_us_east_1: bit(3),
    };
    for style in [AddressingStyle::Auto, AddressingStyle::Virtual, AddressingStyle::Path] {
        if let Ok(base) = resolve(b, "us-east-1", endpoint.as_ref(), style, variants) {
            assert!(base.path_prefix.starts_with('/') && base.path_prefix.ends_with('/'));
        }
        let _ = resolve(b, a, None, style, variants);
    }
});
