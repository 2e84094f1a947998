//! `DeleteObjects`, sans-IO: the request body for up to 1,000 keys and the answer, whose
//! per-key errors arrive inside a 200 and must not be lost.
//!
//! XML 1.0 cannot carry most control characters, even escaped, so keys with them cannot be
//! named in a batch: [`delete_body`] says which, and the caller deletes those one by one.

use crate::xml::walk;
use crate::Error;

/// The most keys one `DeleteObjects` request may name.
pub const MAX_DELETE_KEYS: usize = 1_000;

/// A key S3 did not delete, with S3's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeleteError {
    /// The key.
    pub key: String,
    /// The version named, when the request named one.
    pub version_id: Option<String>,
    /// S3's code, such as `AccessDenied`.
    pub code: String,
    /// S3's message.
    pub message: String,
}

/// What one `DeleteObjects` answered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteResult {
    /// Keys deleted (empty in quiet mode, which names only failures).
    pub deleted: Vec<String>,
    /// Keys not deleted, each with its reason.
    pub errors: Vec<DeleteError>,
}

/// Whether `key` can be named in a `DeleteObjects` body: every character XML 1.0 allows.
pub fn fits_in_xml(key: &str) -> bool {
    key.chars().all(|c| {
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
            || c >= '\u{10000}'
    })
}

/// The body of a quiet `DeleteObjects` for `keys` (1 to 1,000, each [`fits_in_xml`]). Line
/// breaks and tabs are written as character references: an XML reader turns a literal `\r\n`
/// into `\n`, which would name another key.
pub fn delete_body<'a>(keys: impl IntoIterator<Item = &'a str>) -> Result<String, Error> {
    delete_versions_body(keys.into_iter().map(|k| (k, None)))
}

/// [`delete_body`] of keys each at a version (`None`: the current one, which a versioned
/// bucket then hides behind a delete marker; a version named is removed for good).
pub fn delete_versions_body<'a>(
    keys: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Result<String, Error> {
    let mut body = String::from(
        "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>",
    );
    let mut count = 0;
    for (key, version) in keys {
        if !fits_in_xml(key) {
            return Err(Error::InvalidKey(format!(
                "{key:?} has a control character XML cannot carry: delete it on its own"
            )));
        }
        count += 1;
        body.push_str("<Object><Key>");
        for c in key.chars() {
            match c {
                '&' => body.push_str("&amp;"),
                '<' => body.push_str("&lt;"),
                '>' => body.push_str("&gt;"),
                '\r' => body.push_str("&#13;"),
                '\n' => body.push_str("&#10;"),
                '\t' => body.push_str("&#9;"),
                c => body.push(c),
            }
        }
        body.push_str("</Key>");
        if let Some(version) = version {
            body.push_str("<VersionId>");
            body.push_str(&crate::xml::escape(version));
            body.push_str("</VersionId>");
        }
        body.push_str("</Object>");
    }
    if !(1..=MAX_DELETE_KEYS).contains(&count) {
        return Err(Error::InvalidKey(format!(
            "DeleteObjects takes 1 to {MAX_DELETE_KEYS} keys, not {count}"
        )));
    }
    body.push_str("</Delete>");
    Ok(body)
}

/// Parses a `DeleteResult`. An `<Error>` document instead (S3 may send one with a 200) is an
/// error of the whole request.
pub fn delete_result(body: &[u8]) -> Result<DeleteResult, Error> {
    let mut result = DeleteResult::default();
    let mut root = None;
    walk(body, |path, text| {
        if root.is_none() {
            root = Some(path.split('/').next().unwrap_or_default().to_owned());
        }
        let Some(text) = text else {
            if path == "DeleteResult/Error" {
                result.errors.push(DeleteError {
                    key: String::new(),
                    version_id: None,
                    code: String::new(),
                    message: String::new(),
                });
            }
            return;
        };
        match (path, result.errors.last_mut()) {
            ("DeleteResult/Deleted/Key", _) => result.deleted.push(text),
            ("DeleteResult/Error/Key", Some(e)) => e.key = text,
            ("DeleteResult/Error/VersionId", Some(e)) => e.version_id = Some(text),
            ("DeleteResult/Error/Code", Some(e)) => e.code = text,
            ("DeleteResult/Error/Message", Some(e)) => e.message = text,
            _ => {}
        }
    })?;
    match root.as_deref() {
        Some("DeleteResult") => Ok(result),
        _ => Err(Error::Response(match crate::xml::error(body) {
            Some((code, message)) => format!("DeleteObjects failed: {code}: {message}"),
            None => "DeleteObjects answered without a DeleteResult".into(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_names_every_key_once_escaped() {
        let body = delete_body(["a&b<c>", "line\r\nbreak\ttab", "ü/x y"]).unwrap();
        assert_eq!(
            body,
            "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>\
             <Object><Key>a&amp;b&lt;c&gt;</Key></Object>\
             <Object><Key>line&#13;&#10;break&#9;tab</Key></Object>\
             <Object><Key>ü/x y</Key></Object></Delete>"
        );
        // What S3 reads back is the key itself.
        let mut keys = Vec::new();
        walk(body.as_bytes(), |p, t| {
            if let ("Delete/Object/Key", Some(t)) = (p, t) {
                keys.push(t);
            }
        })
        .unwrap();
        assert_eq!(keys, ["a&b<c>", "line\r\nbreak\ttab", "ü/x y"]);
    }

    #[test]
    fn versions_are_named_beside_their_keys() {
        let body = delete_versions_body([("a", Some("v<1>")), ("b", None)]).unwrap();
        assert!(body.ends_with(
            "<Object><Key>a</Key><VersionId>v&lt;1&gt;</VersionId></Object>\
             <Object><Key>b</Key></Object></Delete>"
        ));
    }

    #[test]
    fn keys_xml_cannot_carry_and_bad_counts_are_refused() {
        for bad in ["nul\0", "bell\u{7}", "esc\u{1b}", "\u{FFFE}"] {
            assert!(!fits_in_xml(bad), "{bad:?}");
            assert!(delete_body([bad]).is_err(), "{bad:?}");
        }
        assert!(delete_body(std::iter::empty()).is_err());
        let many: Vec<String> = (0..=MAX_DELETE_KEYS).map(|i| i.to_string()).collect();
        assert!(delete_body(many.iter().map(String::as_str)).is_err());
        assert!(delete_body(many[..MAX_DELETE_KEYS].iter().map(String::as_str)).is_ok());
    }

    #[test]
    fn per_key_errors_inside_a_200_are_kept() {
        let r = delete_result(
            br#"<?xml version="1.0"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Deleted><Key>a</Key></Deleted>
            <Error><Key>b &amp; c</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>
            <Error><Key>d</Key><Code>InternalError</Code><Message>later</Message></Error>
            </DeleteResult>"#,
        )
        .unwrap();
        assert_eq!(r.deleted, ["a"]);
        assert_eq!(r.errors.len(), 2);
        assert_eq!(
            r.errors[0],
            DeleteError {
                key: "b & c".into(),
                version_id: None,
                code: "AccessDenied".into(),
                message: "Access Denied".into()
            }
        );
        assert_eq!(r.errors[1].code, "InternalError");
        let versioned = delete_result(
            b"<DeleteResult><Error><Key>k</Key><VersionId>v1</VersionId><Code>AccessDenied</Code>\
              <Message>no</Message></Error></DeleteResult>",
        )
        .unwrap();
        assert_eq!(versioned.errors[0].version_id.as_deref(), Some("v1"));
        assert_eq!(
            delete_result(b"<DeleteResult/>").unwrap(),
            DeleteResult::default()
        );
        let whole = delete_result(
            b"<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>",
        )
        .unwrap_err();
        assert!(whole.to_string().contains("SlowDown"), "{whole}");
        assert!(delete_result(b"<ListBucketResult/>").is_err());
        assert!(delete_result(b"not xml <").is_err());
    }
}
