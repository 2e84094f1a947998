//! S3's XML answers come from the server: any bytes must parse to a value or an error, never a
//! panic, and a listing's keys must be what the body says. Inputs starting with `L` are wrapped
//! in a listing, so the listing reader is reached with arbitrary entries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_s3::xml;

fuzz_target!(|data: &[u8]| {
    let mut leaves = 0usize;
    let _ = xml::walk(data, |_, text| leaves += usize::from(text.is_some()));
    let _ = xml::error(data);
    let _ = xml::upload_id(data);
    let _ = xml::list_page(data);
    if let Some(rest) = data.strip_prefix(b"L") {
        let mut doc = b"<ListBucketResult><IsTruncated>false</IsTruncated>".to_vec();
        doc.extend_from_slice(rest);
        doc.extend_from_slice(b"</ListBucketResult>");
        let _ = xml::list_page(&doc);
    }
    // Text we escape comes back as it was.
    if let Ok(text) = std::str::from_utf8(data) {
        let plain = !text.is_empty() && text.chars().all(|c| !c.is_control() && c != '\u{feff}');
        if plain {
            let body = format!("<Error><Code>{}</Code><Message>m</Message></Error>", xml::escape(text));
            assert_eq!(xml::error(body.as_bytes()), Some((text.to_owned(), "m".to_owned())));
        }
    }
});
