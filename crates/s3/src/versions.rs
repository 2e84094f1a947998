//! `ListObjectVersions`, sans-IO: a page of an object's versions and delete markers, in the
//! order S3 lists them (by key, then newest first), and where the next page starts.

use crate::xml::walk;
use crate::Error;

/// One version of an object, or a delete marker (a version without data that hides the older
/// ones from plain reads and listings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Version {
    /// The key.
    pub key: String,
    /// The version's ID (`null` for what was written before versioning was enabled).
    pub version_id: String,
    /// Whether this is the current version of its key.
    pub is_latest: bool,
    /// A delete marker: no size, ETag or storage class.
    pub delete_marker: bool,
    /// Size in bytes (0 for a delete marker).
    pub size: u64,
    /// `LastModified`, as S3 wrote it (ISO 8601).
    pub last_modified: String,
    /// The ETag, quotes included (empty for a delete marker).
    pub etag: String,
    /// `StorageClass`, empty when the listing leaves it out.
    pub storage_class: String,
}

/// Where a listing of versions goes on: after this key and version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionMarker {
    /// `NextKeyMarker`.
    pub key: String,
    /// `NextVersionIdMarker` (absent when the page ended at the end of a key's versions).
    pub version_id: Option<String>,
    /// Every version this page held (key and ID, sorted): a server that reads the marker as
    /// the first entry to list again (versitygw) repeats it on the next page, where
    /// [`VersionPage::drop_seen`] takes it out. Not the marker alone: on such a server the
    /// marker need not be the page's last entry in S3's order, and on S3 it is not listed again.
    pub listed: Vec<(String, String)>,
}

/// One page of `ListObjectVersions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionPage {
    /// Versions and delete markers, in S3's order.
    pub versions: Vec<Version>,
    /// "Directories" when listing with a delimiter.
    pub prefixes: Vec<String>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<VersionMarker>,
}

impl VersionPage {
    /// This page without the entries the previous page held (`after`, that page's marker),
    /// should the server have sent one again.
    pub fn drop_seen(mut self, after: Option<&VersionMarker>) -> Self {
        if let Some(seen) = after.map(|m| &m.listed).filter(|s| !s.is_empty()) {
            self.versions.retain(|v| {
                let probe = (v.key.as_str(), v.version_id.as_str());
                seen.binary_search_by(|(k, id)| (k.as_str(), id.as_str()).cmp(&probe))
                    .is_err()
            });
        }
        self
    }
}

/// Parses a `ListVersionsResult`. S3 interleaves versions and delete markers by key; a server
/// that sends all its markers apart (versitygw) has them put in that order too: by key, the
/// current version first, the others as sent.
pub fn version_page(body: &[u8]) -> Result<VersionPage, Error> {
    let mut page = VersionPage::default();
    let (mut truncated, mut next_key, mut next_version) = (false, None, None);
    let mut bad_size = None;
    walk(body, |path, text| {
        let Some(text) = text else {
            let delete_marker = match path {
                "ListVersionsResult/Version" => false,
                "ListVersionsResult/DeleteMarker" => true,
                _ => return,
            };
            page.versions.push(Version {
                delete_marker,
                ..Version::default()
            });
            return;
        };
        let field = path
            .strip_prefix("ListVersionsResult/Version/")
            .or_else(|| path.strip_prefix("ListVersionsResult/DeleteMarker/"));
        if let (Some(field), Some(v)) = (field, page.versions.last_mut()) {
            match field {
                "Key" => v.key = text,
                "VersionId" => v.version_id = text,
                "IsLatest" => v.is_latest = text == "true",
                "Size" => match text.parse() {
                    Ok(n) => v.size = n,
                    Err(_) => bad_size = Some(text),
                },
                "LastModified" => v.last_modified = text,
                "ETag" => v.etag = text,
                "StorageClass" => v.storage_class = text,
                _ => {}
            }
            return;
        }
        match path {
            "ListVersionsResult/CommonPrefixes/Prefix" => page.prefixes.push(text),
            "ListVersionsResult/IsTruncated" => truncated = text == "true",
            "ListVersionsResult/NextKeyMarker" => next_key = Some(text),
            "ListVersionsResult/NextVersionIdMarker" => next_version = Some(text),
            _ => {}
        }
    })?;
    if let Some(s) = bad_size {
        return Err(Error::Response(format!(
            "object size {s:?} is not a number"
        )));
    }
    page.versions
        .sort_by(|a, b| (&a.key, !a.is_latest).cmp(&(&b.key, !b.is_latest)));
    if truncated {
        let key = next_key.ok_or_else(|| {
            Error::Response("a truncated listing of versions without NextKeyMarker".into())
        })?;
        let mut listed: Vec<_> = page
            .versions
            .iter()
            .map(|v| (v.key.clone(), v.version_id.clone()))
            .collect();
        listed.sort_unstable();
        page.next = Some(VersionMarker {
            key,
            version_id: next_version,
            listed,
        });
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix></Prefix><IsTruncated>true</IsTruncated>
  <NextKeyMarker>b</NextKeyMarker><NextVersionIdMarker>v3</NextVersionIdMarker>
  <Version><Key>a &amp; b</Key><VersionId>v2</VersionId><IsLatest>true</IsLatest>
    <LastModified>2026-11-28T12:15:14.000Z</LastModified><ETag>"e2"</ETag><Size>5</Size>
    <StorageClass>STANDARD</StorageClass></Version>
  <Version><Key>a &amp; b</Key><VersionId>v1</VersionId><IsLatest>false</IsLatest>
    <LastModified>2026-11-28T12:15:13.000Z</LastModified><ETag>"e1"</ETag><Size>4</Size>
    <StorageClass>STANDARD</StorageClass></Version>
  <DeleteMarker><Key>b</Key><VersionId>v4</VersionId><IsLatest>true</IsLatest>
    <LastModified>2026-11-28T12:15:15.000Z</LastModified></DeleteMarker>
  <Version><Key>b</Key><VersionId>v3</VersionId><IsLatest>false</IsLatest>
    <LastModified>2026-11-28T12:15:12.000Z</LastModified><ETag>"e3"</ETag><Size>7</Size></Version>
  <CommonPrefixes><Prefix>d/</Prefix></CommonPrefixes>
</ListVersionsResult>"#;

    #[test]
    fn versions_and_delete_markers_keep_s3s_order() {
        let page = version_page(PAGE.as_bytes()).unwrap();
        let seen: Vec<_> = page
            .versions
            .iter()
            .map(|v| {
                (
                    v.key.as_str(),
                    v.version_id.as_str(),
                    v.is_latest,
                    v.delete_marker,
                    v.size,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("a & b", "v2", true, false, 5),
                ("a & b", "v1", false, false, 4),
                ("b", "v4", true, true, 0),
                ("b", "v3", false, false, 7),
            ]
        );
        assert_eq!(page.versions[0].etag, "\"e2\"");
        assert_eq!(page.versions[2].last_modified, "2026-11-28T12:15:15.000Z");
        assert_eq!(page.prefixes, ["d/"]);
        let next = page.next.unwrap();
        assert_eq!(
            (next.key.as_str(), next.version_id.as_deref()),
            ("b", Some("v3"))
        );
        assert_eq!(next.listed.len(), 4);
        // A server that sends entries of this page again on the next: they are dropped.
        let again = r#"<ListVersionsResult><IsTruncated>false</IsTruncated>
  <Version><Key>b</Key><VersionId>v3</VersionId><IsLatest>false</IsLatest></Version>
  <Version><Key>c</Key><VersionId>v5</VersionId><IsLatest>true</IsLatest></Version>
</ListVersionsResult>"#;
        let again = version_page(again.as_bytes())
            .unwrap()
            .drop_seen(Some(&next));
        let ids: Vec<_> = again
            .versions
            .iter()
            .map(|v| v.version_id.as_str())
            .collect();
        assert_eq!(ids, ["v5"]);
    }

    #[test]
    fn markers_sent_apart_are_put_in_key_order() {
        let body = r#"<ListVersionsResult><IsTruncated>false</IsTruncated>
  <DeleteMarker><Key>b</Key><VersionId>m</VersionId><IsLatest>true</IsLatest></DeleteMarker>
  <Version><Key>a</Key><VersionId>a2</VersionId><IsLatest>true</IsLatest></Version>
  <Version><Key>a</Key><VersionId>a1</VersionId><IsLatest>false</IsLatest></Version>
  <Version><Key>b</Key><VersionId>b1</VersionId><IsLatest>false</IsLatest></Version>
</ListVersionsResult>"#;
        let page = version_page(body.as_bytes()).unwrap();
        let ids: Vec<_> = page
            .versions
            .iter()
            .map(|v| v.version_id.as_str())
            .collect();
        assert_eq!(ids, ["a2", "a1", "m", "b1"]);
    }

    #[test]
    fn a_last_page_has_no_marker_and_a_truncated_one_needs_one() {
        let last = PAGE.replace("<IsTruncated>true", "<IsTruncated>false");
        assert_eq!(version_page(last.as_bytes()).unwrap().next, None);
        let unmarked = PAGE.replace("<NextKeyMarker>b</NextKeyMarker>", "");
        assert!(version_page(unmarked.as_bytes()).is_err());
        let bad = PAGE.replace("<Size>5</Size>", "<Size>five</Size>");
        assert!(version_page(bad.as_bytes()).is_err());
    }
}
