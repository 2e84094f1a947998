//! Any bytes, fed in any split, as the aws-chunked body of a validly signed streaming request,
//! through the verifying edge's re-framer: no panic; nothing written unless the body verified
//! to its end (the announced length is under one re-framed chunk), and then exactly the bytes
//! the chunk verifier releases, framed, and the trailer. (Bodies of many chunks: the unit tests
//! in crates/sign/tests/chunked.rs.)
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use slipstream_sign::verify::{Reframer, Trailer, TrailerChecksum};

/// A stand-in checksum: the byte count.
struct Count(u64);

impl TrailerChecksum for Count {
    fn update(&mut self, data: &[u8]) {
        self.0 += data.len() as u64;
    }
    fn value(&self) -> String {
        format!("{:04}", self.0)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, body)) = data.split_first() else { return };
    let (Some(chunked), Some(mut alone)) =
        (common::signed_streaming_body(), common::signed_streaming_body())
    else {
        return;
    };
    let trailer = Trailer::Computed { name: "x-amz-checksum-count".into(), checksum: Box::new(Count(0)) };
    let mut r = Reframer::new(chunked, trailer);
    let cut = usize::from(split).min(body.len());
    let mut out = Vec::new();
    let finished = r.feed(&body[..cut], &mut out).and_then(|()| r.feed(&body[cut..], &mut out)).and_then(|()| r.finish(&mut out));
    // What the chunk verifier alone releases for the same bytes.
    let mut released = Vec::new();
    let verified_whole = alone.feed(body, &mut released).and_then(|()| alone.finish());
    assert_eq!(finished.is_ok(), verified_whole.is_ok());
    assert!(released.len() <= 64);
    // The announced 64 bytes are less than one re-framed chunk: nothing is written before the
    // whole body verified, then the data and the trailer.
    let mut expected = Vec::new();
    if finished.is_ok() {
        if !released.is_empty() {
            expected.extend_from_slice(format!("{:x}\r\n", released.len()).as_bytes());
            expected.extend_from_slice(&released);
            expected.extend_from_slice(b"\r\n");
        }
        expected.extend_from_slice(format!("0\r\nx-amz-checksum-count:{:04}\r\n\r\n", released.len()).as_bytes());
    }
    assert_eq!(out, expected);
});
