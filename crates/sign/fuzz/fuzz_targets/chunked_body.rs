//! Any bytes, fed in any split, through the aws-chunked verifier of a validly signed streaming
//! request: no panic, and nothing is released unless its chunk verified (the output never
//! exceeds the announced length).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, body)) = data.split_first() else { return };
    let Some(mut v) = common::signed_streaming_body() else { return };
    let mut out = Vec::new();
    let cut = usize::from(split).min(body.len());
    if v.feed(&body[..cut], &mut out).and_then(|()| v.feed(&body[cut..], &mut out)).is_ok() {
        let _ = v.finish();
    }
    assert!(out.len() <= 64);
});
