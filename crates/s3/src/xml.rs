//! S3's XML bodies, sans-IO: bytes in, typed values out (and the one body we send). Fuzzed
//! (`crates/sign/fuzz`, target `s3_xml`): whatever a server sends, parsing returns a value or an
//! error, never a panic.
//!
//! A small path-based reader is enough for S3's flat documents: each leaf's text is handed out
//! with the names of its ancestors, so `ListBucketResult/Contents/Key` is one match arm.

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::Error;

/// Calls `visit(path, Some(text))` for every element with text, `path` being the element names
/// from the root joined by `/`, and `visit(path, None)` when an element starts (an empty one,
/// `<a/>`, too).
pub fn walk(body: &[u8], mut visit: impl FnMut(&str, Option<String>)) -> Result<(), Error> {
    let mut reader = Reader::from_reader(body);
    let mut path = String::new();
    let mut text = String::new();
    let bad = |e: &dyn std::fmt::Display| Error::Response(format!("malformed XML: {e}"));
    loop {
        match reader.read_event().map_err(|e| bad(&e))? {
            Event::Start(e) => {
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(&String::from_utf8_lossy(e.local_name().as_ref()));
                text.clear();
                visit(&path, None);
            }
            // `<DeleteResult/>`: an element that starts and ends at once, without text.
            Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                let at = path.len();
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(&name);
                visit(&path, None);
                path.truncate(at);
            }
            Event::Text(t) => text.push_str(&t.unescape().map_err(|e| bad(&e))?),
            Event::CData(t) => text.push_str(&String::from_utf8_lossy(&t)),
            Event::End(_) => {
                if !text.is_empty() {
                    visit(&path, Some(std::mem::take(&mut text)));
                }
                path.truncate(path.rfind('/').unwrap_or(0));
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// `<Error><Code>…</Code><Message>…</Message></Error>`: `(code, message)`, if the body is one.
pub fn error(body: &[u8]) -> Option<(String, String)> {
    let (mut code, mut message) = (None, String::new());
    walk(body, |path, text| match (path, text) {
        ("Error/Code", Some(t)) => code = Some(t),
        ("Error/Message", Some(t)) => message = t,
        _ => {}
    })
    .ok()?;
    code.map(|c| (c, message))
}

/// The `UploadId` of `CreateMultipartUpload`'s answer.
pub fn upload_id(body: &[u8]) -> Result<String, Error> {
    let mut id = None;
    walk(body, |path, text| {
        if path == "InitiateMultipartUploadResult/UploadId" {
            id = text;
        }
    })?;
    id.ok_or_else(|| Error::Response("CreateMultipartUpload returned no UploadId".into()))
}

/// The new object's `ETag` in `CompleteMultipartUpload`'s answer, if it names one.
pub fn completed_etag(body: &[u8]) -> Option<String> {
    let mut etag = None;
    walk(body, |path, text| {
        if path == "CompleteMultipartUploadResult/ETag" {
            etag = text;
        }
    })
    .ok()?;
    etag
}

/// One object of a listing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object {
    /// The key.
    pub key: String,
    /// Size in bytes.
    pub size: u64,
    /// `LastModified`, as S3 wrote it (ISO 8601).
    pub last_modified: String,
    /// The ETag, quotes included.
    pub etag: String,
    /// `StorageClass` (`STANDARD`, `GLACIER`...), empty when the listing leaves it out.
    pub storage_class: String,
}

/// One page of `ListObjectsV2`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListPage {
    /// Objects on this page.
    pub objects: Vec<Object>,
    /// "Directories" when listing with a delimiter.
    pub prefixes: Vec<String>,
    /// Where the next page starts; `None` on the last page.
    pub continuation: Option<String>,
}

/// Parses a `ListBucketResult` (ListObjectsV2).
pub fn list_page(body: &[u8]) -> Result<ListPage, Error> {
    let mut page = ListPage::default();
    let mut truncated = false;
    let mut size_error = None;
    walk(body, |path, text| {
        let Some(text) = text else {
            if path == "ListBucketResult/Contents" {
                page.objects.push(Object::default());
            }
            return;
        };
        match (path, page.objects.last_mut()) {
            ("ListBucketResult/Contents/Key", Some(o)) => o.key = text,
            ("ListBucketResult/Contents/Size", Some(o)) => match text.parse() {
                Ok(n) => o.size = n,
                Err(_) => size_error = Some(text),
            },
            ("ListBucketResult/Contents/LastModified", Some(o)) => o.last_modified = text,
            ("ListBucketResult/Contents/ETag", Some(o)) => o.etag = text,
            ("ListBucketResult/Contents/StorageClass", Some(o)) => o.storage_class = text,
            ("ListBucketResult/CommonPrefixes/Prefix", _) => page.prefixes.push(text),
            ("ListBucketResult/IsTruncated", _) => truncated = text == "true",
            ("ListBucketResult/NextContinuationToken", _) => page.continuation = Some(text),
            _ => {}
        }
    })?;
    if let Some(s) = size_error {
        return Err(Error::Response(format!(
            "object size {s:?} is not a number"
        )));
    }
    if !truncated {
        page.continuation = None;
    } else if page.continuation.is_none() {
        return Err(Error::Response(
            "a truncated listing without NextContinuationToken".into(),
        ));
    }
    Ok(page)
}

/// One bucket of `ListBuckets`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// The bucket's name.
    pub name: String,
    /// `CreationDate`, as S3 wrote it (ISO 8601).
    pub created: String,
    /// `BucketRegion`, where the server says (S3 does since 2024; older servers do not).
    pub region: Option<String>,
}

/// One page of `ListBuckets`: the buckets, and the token of the next page (S3 pages its
/// answer when asked with `max-buckets`, and may when an account has many).
pub fn bucket_list(body: &[u8]) -> Result<(Vec<Bucket>, Option<String>), Error> {
    let (mut buckets, mut next) = (Vec::<Bucket>::new(), None);
    let mut root = false;
    walk(body, |path, text| {
        let Some(text) = text else {
            match path {
                "ListAllMyBucketsResult" => root = true,
                "ListAllMyBucketsResult/Buckets/Bucket" => buckets.push(Bucket::default()),
                _ => {}
            }
            return;
        };
        match (path, buckets.last_mut()) {
            ("ListAllMyBucketsResult/Buckets/Bucket/Name", Some(b)) => b.name = text,
            ("ListAllMyBucketsResult/Buckets/Bucket/CreationDate", Some(b)) => b.created = text,
            ("ListAllMyBucketsResult/Buckets/Bucket/BucketRegion", Some(b)) => {
                b.region = Some(text)
            }
            ("ListAllMyBucketsResult/ContinuationToken", _) => next = Some(text),
            _ => {}
        }
    })?;
    if !root {
        return Err(Error::Response(
            "ListBuckets answered without a ListAllMyBucketsResult".into(),
        ));
    }
    Ok((buckets, next))
}

/// The body of `CompleteMultipartUpload`: each part's number, ETag, and checksum if it has one
/// (the element named for the algorithm, `ChecksumCRC32C` and the like, and the base64 value).
pub fn complete_body<'a>(
    parts: impl IntoIterator<Item = (u32, &'a str, Option<(&'a str, String)>)>,
) -> String {
    let mut s =
        String::from("<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
    for (n, etag, checksum) in parts {
        s.push_str(&format!(
            "<Part><PartNumber>{n}</PartNumber><ETag>{}</ETag>",
            escape(etag)
        ));
        if let Some((tag, value)) = checksum {
            s.push_str(&format!("<{tag}>{value}</{tag}>"));
        }
        s.push_str("</Part>");
    }
    s.push_str("</CompleteMultipartUpload>");
    s
}

/// `s` safe as XML (and HTML) text or attribute value.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_errors_listings_and_upload_ids() {
        let e = br#"<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>The key &amp; more</Message></Error>"#;
        assert_eq!(
            error(e),
            Some(("NoSuchKey".into(), "The key & more".into()))
        );
        assert_eq!(error(b"<ListBucketResult/>"), None);
        assert_eq!(error(b"not xml <"), None);
        let id = upload_id(b"<InitiateMultipartUploadResult><Bucket>b</Bucket><UploadId>abc-1</UploadId></InitiateMultipartUploadResult>").unwrap();
        assert_eq!(id, "abc-1");
        assert!(upload_id(b"<InitiateMultipartUploadResult/>").is_err());
        let done = b"<CompleteMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><ETag>&quot;ab-3&quot;</ETag></CompleteMultipartUploadResult>";
        assert_eq!(completed_etag(done).as_deref(), Some("\"ab-3\""));
        assert_eq!(completed_etag(b"<CompleteMultipartUploadResult/>"), None);
        let page = list_page(br#"<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>true</IsTruncated>
            <Contents><Key>a b&lt;c</Key><Size>12</Size><LastModified>2026-11-22T00:00:00.000Z</LastModified><ETag>"e1"</ETag><StorageClass>GLACIER_IR</StorageClass></Contents>
            <Contents><Key>z</Key><Size>0</Size></Contents>
            <CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes>
            <NextContinuationToken>tok</NextContinuationToken></ListBucketResult>"#).unwrap();
        assert_eq!(page.objects.len(), 2);
        assert_eq!(page.objects[0].key, "a b<c");
        assert_eq!(page.objects[0].size, 12);
        assert_eq!(page.objects[0].etag, "\"e1\"");
        assert_eq!(page.objects[0].storage_class, "GLACIER_IR");
        assert_eq!(page.objects[1].key, "z");
        assert_eq!(page.objects[1].storage_class, "");
        assert_eq!(page.prefixes, ["dir/"]);
        assert_eq!(page.continuation.as_deref(), Some("tok"));
        assert!(
            list_page(b"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>")
                .is_err()
        );
        assert!(list_page(
            b"<ListBucketResult><Contents><Size>x</Size></Contents></ListBucketResult>"
        )
        .is_err());
    }

    #[test]
    fn reads_bucket_lists_and_their_next_page() {
        let (buckets, next) = bucket_list(br#"<?xml version="1.0" encoding="UTF-8"?>
            <ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>o</ID></Owner>
            <Buckets><Bucket><Name>a-b</Name><CreationDate>2026-11-22T10:00:00.000Z</CreationDate><BucketRegion>eu-west-1</BucketRegion></Bucket>
            <Bucket><Name>c</Name></Bucket></Buckets><ContinuationToken>t1</ContinuationToken>
            </ListAllMyBucketsResult>"#).unwrap();
        assert_eq!(
            buckets,
            [
                Bucket {
                    name: "a-b".into(),
                    created: "2026-11-22T10:00:00.000Z".into(),
                    region: Some("eu-west-1".into()),
                },
                Bucket {
                    name: "c".into(),
                    created: String::new(),
                    region: None,
                }
            ]
        );
        assert_eq!(next.as_deref(), Some("t1"));
        let (none, next) =
            bucket_list(b"<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>").unwrap();
        assert!(none.is_empty() && next.is_none());
        assert!(bucket_list(b"<ListBucketResult/>").is_err());
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }

    #[test]
    fn the_complete_body_escapes_etags() {
        let body = complete_body([
            (1, "\"a&b\"", Some(("ChecksumCRC32C", "AAAAAA==".into()))),
            (2, "\"c\"", None),
        ]);
        assert!(body.contains("<Part><PartNumber>1</PartNumber><ETag>&quot;a&amp;b&quot;</ETag><ChecksumCRC32C>AAAAAA==</ChecksumCRC32C></Part>"));
        assert!(body.contains("<Part><PartNumber>2</PartNumber><ETag>&quot;c&quot;</ETag></Part>"));
    }
}
