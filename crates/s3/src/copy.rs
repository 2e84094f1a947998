//! Server-side copies, sans-IO: the answers of `CopyObject` and `UploadPartCopy` (which S3 may
//! send as an `<Error>` with a 200, after the copy ran for a while), and which of an object's
//! headers a multipart copy must carry over itself.
//!
//! `CopyObject` keeps the source's metadata and checksum by itself; a multipart copy creates a
//! new object, so the caller reads the source's headers and sends the ones [`is_copied_header`]
//! names with `CreateMultipartUpload`, as the AWS CLI does.

use crate::xml::{error, walk};
use crate::Error;

/// What a `CopyObject` or `UploadPartCopy` answered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Copied {
    /// The new object's (or part's) ETag, quotes included.
    pub etag: String,
    /// `LastModified`, as S3 wrote it.
    pub last_modified: String,
    /// Checksums S3 computed or kept: (element name such as `ChecksumCRC32C`, base64 value).
    pub checksums: Vec<(String, String)>,
}

impl Copied {
    /// The value of the checksum element `tag` (`ChecksumCRC32C` and the like), if sent.
    pub fn checksum(&self, tag: &str) -> Option<&str> {
        self.checksums
            .iter()
            .find(|(t, _)| t == tag)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses a `CopyObjectResult` or `CopyPartResult`; an `<Error>` (even with a 200) is an error
/// with S3's code, and so is an answer without an ETag.
pub fn copy_result(body: &[u8]) -> Result<Copied, Error> {
    if let Some((code, message)) = error(body) {
        return Err(Error::Response(format!("{code}: {message}")));
    }
    let mut copied = Copied::default();
    walk(body, |path, text| {
        let Some(text) = text else { return };
        let Some((root, leaf)) = path.split_once('/') else {
            return;
        };
        if !matches!(root, "CopyObjectResult" | "CopyPartResult") {
            return;
        }
        match leaf {
            "ETag" => copied.etag = text,
            "LastModified" => copied.last_modified = text,
            l if l.starts_with("Checksum") && !l.contains('/') && l != "ChecksumType" => {
                copied.checksums.push((l.to_owned(), text));
            }
            _ => {}
        }
    })?;
    if copied.etag.is_empty() {
        return Err(Error::Response("the copy's answer has no ETag".into()));
    }
    Ok(copied)
}

/// Whether a multipart copy carries header `name` (lowercase) from the source to the new
/// object: the content headers and user metadata, as the AWS CLI's default `--copy-props`.
pub fn is_copied_header(name: &str) -> bool {
    matches!(
        name,
        "content-type"
            | "content-encoding"
            | "content-language"
            | "content-disposition"
            | "cache-control"
            | "expires"
    ) || name.starts_with("x-amz-meta-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_answers_give_etag_and_checksums() {
        let c = copy_result(
            br#"<?xml version="1.0"?><CopyObjectResult><LastModified>2026-11-25T00:00:00.000Z</LastModified>
            <ETag>"e1"</ETag><ChecksumType>FULL_OBJECT</ChecksumType><ChecksumCRC64NVME>AAAAAAAAAAA=</ChecksumCRC64NVME></CopyObjectResult>"#,
        )
        .unwrap();
        assert_eq!(c.etag, "\"e1\"");
        assert_eq!(c.last_modified, "2026-11-25T00:00:00.000Z");
        assert_eq!(c.checksum("ChecksumCRC64NVME"), Some("AAAAAAAAAAA="));
        assert_eq!(c.checksums.len(), 1, "ChecksumType is not a checksum");
        let p = copy_result(
            b"<CopyPartResult><ETag>&quot;p&quot;</ETag><ChecksumCRC32C>AAAAAA==</ChecksumCRC32C></CopyPartResult>",
        )
        .unwrap();
        assert_eq!(
            (p.etag.as_str(), p.checksum("ChecksumCRC32C")),
            ("\"p\"", Some("AAAAAA=="))
        );
    }

    #[test]
    fn an_error_inside_a_200_or_no_etag_fails() {
        let e = copy_result(
            b"<Error><Code>InternalError</Code><Message>We encountered an internal error</Message></Error>",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("InternalError: "), "{e}");
        assert!(copy_result(b"<CopyObjectResult></CopyObjectResult>").is_err());
        assert!(copy_result(b"<Other><ETag>x</ETag></Other>").is_err());
        assert!(copy_result(b"").is_err());
    }

    #[test]
    fn content_headers_and_user_metadata_are_carried() {
        for yes in [
            "content-type",
            "cache-control",
            "expires",
            "x-amz-meta-owner",
        ] {
            assert!(is_copied_header(yes), "{yes}");
        }
        for no in [
            "content-length",
            "etag",
            "x-amz-checksum-crc32c",
            "x-amz-version-id",
            "last-modified",
        ] {
            assert!(!is_copied_header(no), "{no}");
        }
    }
}
