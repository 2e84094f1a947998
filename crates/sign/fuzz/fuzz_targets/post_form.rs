//! Any bytes, cut anywhere, read as the head of a POST form (the verifying edge's reading of a
//! browser upload): no panic; a longer prefix never contradicts a shorter one's verdict (a head
//! or an error, once found, stays); and the head the edge rebuilds from what it read reads back
//! as the same fields and file part, so what the origin parses is what the edge verified.
//! The input is `boundary \0 body`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_s3::post_form::{head_bytes, parse, HEAD_LIMIT};

fuzz_target!(|data: &[u8]| {
    let Some(at) = data.iter().position(|b| *b == 0) else { return };
    let (Ok(boundary), body) = (std::str::from_utf8(&data[..at]), &data[at + 1..]) else { return };
    // A boundary comes from a header value: no line breaks.
    if boundary.is_empty() || boundary.len() > 70 || boundary.contains(['\r', '\n']) {
        return;
    }
    let whole = parse(body, boundary);
    let half = parse(&body[..body.len() / 2], boundary);
    if !matches!(half, Ok(None)) {
        assert_eq!(half, whole, "a prefix's verdict changed");
    }
    if let Ok(Some(head)) = &whole {
        assert!(head.consumed <= body.len());
        assert_eq!(parse(&body[..head.consumed], boundary).as_ref(), Ok(&Some(head.clone())));
        let rebuilt = head_bytes(boundary, &head.fields, &head.file_part);
        if rebuilt.len() > HEAD_LIMIT {
            return; // the edge's own head may be longer (quoting): the origin reads it whole
        }
        let again = parse(&rebuilt, boundary).expect("a rebuilt head reads").expect("whole");
        assert_eq!(again.fields, head.fields);
        assert_eq!(again.file_part, head.file_part);
        assert_eq!(again.consumed, rebuilt.len());
    }
});
