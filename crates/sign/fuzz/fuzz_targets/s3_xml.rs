//! S3's XML answers come from the server: any bytes must parse to a value or an error, never a
//! panic, and a listing's keys must be what the body says; a key we put in a DeleteObjects body
//! reads back as itself. Inputs starting with `L` are wrapped in a listing (`B`: a bucket
//! list, `V`: a listing of versions), so the listing readers are reached with arbitrary entries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_s3::{copy, delete, versioning, versions, xml};

fuzz_target!(|data: &[u8]| {
    let mut leaves = 0usize;
    let _ = xml::walk(data, |_, text| leaves += usize::from(text.is_some()));
    let _ = xml::error(data);
    let _ = xml::upload_id(data);
    let _ = xml::list_page(data);
    let _ = xml::bucket_list(data);
    let _ = delete::delete_result(data);
    let _ = copy::copy_result(data);
    let _ = versions::version_page(data);
    let _ = versioning::versioning(data);
    if let Some(rest) = data.strip_prefix(b"L") {
        let mut doc = b"<ListBucketResult><IsTruncated>false</IsTruncated>".to_vec();
        doc.extend_from_slice(rest);
        doc.extend_from_slice(b"</ListBucketResult>");
        let _ = xml::list_page(&doc);
    }
    if let Some(rest) = data.strip_prefix(b"V") {
        let mut doc = b"<ListVersionsResult><IsTruncated>false</IsTruncated>".to_vec();
        doc.extend_from_slice(rest);
        doc.extend_from_slice(b"</ListVersionsResult>");
        let _ = versions::version_page(&doc);
    }
    if let Some(rest) = data.strip_prefix(b"B") {
        let mut doc = b"<ListAllMyBucketsResult><Buckets>".to_vec();
        doc.extend_from_slice(rest);
        doc.extend_from_slice(b"</Buckets></ListAllMyBucketsResult>");
        let _ = xml::bucket_list(&doc);
    }
    // Text we escape comes back as it was.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(body) = delete::delete_body([text]) {
            let mut keys = Vec::new();
            xml::walk(body.as_bytes(), |path, t| {
                if path == "Delete/Object/Key" {
                    keys.extend(t);
                }
            })
            .expect("our DeleteObjects body parses");
            let want: Vec<String> = if text.is_empty() { vec![] } else { vec![text.to_owned()] };
            assert_eq!(keys, want, "a key in a DeleteObjects body reads back as itself");
        }
        let plain = !text.is_empty() && text.chars().all(|c| !c.is_control() && c != '\u{feff}');
        if plain {
            let body = format!("<Error><Code>{}</Code><Message>m</Message></Error>", xml::escape(text));
            assert_eq!(xml::error(body.as_bytes()), Some((text.to_owned(), "m".to_owned())));
        }
    }
});
