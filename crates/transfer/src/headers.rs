//! What a new object carries besides its bytes: the content headers (`Content-Type`, given or
//! guessed from the key's extension as the AWS CLI and s5cmd guess it; `Cache-Control`,
//! `Content-Disposition`, `-Encoding`, `-Language`, `Expires`), `x-amz-meta-*`, the website
//! redirect, and the object's settings: storage class, canned ACL, server-side encryption and
//! tags. All are sent with `PutObject` and `CreateMultipartUpload`. For a server-side copy the
//! content headers, metadata and redirect replace the source's (`x-amz-metadata-directive:
//! REPLACE`, as the AWS CLI does when any is given); the settings apply to the new object
//! either way ([`ObjectHeaders::settings`]).

use std::borrow::Cow;

use slipstream_client::{CopyOptions, CustomerKey};

/// Headers for the objects a transfer writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectHeaders {
    /// `Content-Type` of every object; `None`: guessed when `guess_content_type`, else none
    /// (S3 then answers `binary/octet-stream` or the like).
    pub content_type: Option<String>,
    /// Guess `Content-Type` from the key's extension (`.html` -> `text/html`) when
    /// `content_type` is not given.
    pub guess_content_type: bool,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// User metadata, sent as `x-amz-meta-NAME` (names lowercase, as S3 keeps them).
    pub metadata: Vec<(String, String)>,
    /// `x-amz-storage-class` (`STANDARD_IA`, `GLACIER_IR`...).
    pub storage_class: Option<String>,
    /// `Content-Disposition` (`attachment; filename="a.pdf"`).
    pub content_disposition: Option<String>,
    /// `Content-Encoding` (`gzip`).
    pub content_encoding: Option<String>,
    /// `Content-Language` (`fr`).
    pub content_language: Option<String>,
    /// `Expires`, an HTTP date, sent as given.
    pub expires: Option<String>,
    /// `x-amz-website-redirect-location` (`/other/page.html` or a URL).
    pub website_redirect: Option<String>,
    /// `x-amz-acl`, a canned ACL (`private`, `public-read`, `bucket-owner-full-control`...).
    pub acl: Option<String>,
    /// `x-amz-grant-read`, `-read-acp`, `-write-acp` and `-full-control`: grantees given those
    /// permissions (`uri=http://acs.amazonaws.com/groups/global/AllUsers`, `id=...`,
    /// `emailAddress=...`, comma-separated), as the AWS CLI's `--grants` and boto3's
    /// `GrantRead`... send them.
    pub grants: Grants,
    /// `x-amz-server-side-encryption` (`AES256`, `aws:kms`, `aws:kms:dsse`).
    pub server_side_encryption: Option<String>,
    /// `x-amz-server-side-encryption-aws-kms-key-id`, with `aws:kms`.
    pub sse_kms_key_id: Option<String>,
    /// `x-amz-tagging`, URL-encoded as a query string: `project=a&team=b%20c`.
    pub tagging: Option<String>,
    /// What a copy does with the source's content headers and metadata; `None`: replaces them
    /// when any is given here, else keeps them (the AWS CLI's rule for `--metadata`, which
    /// this extends to the content headers).
    pub metadata_directive: Option<MetadataDirective>,
    /// The customer key the objects are encrypted with (SSE-C: `--sse-c-key`, boto3's
    /// `SSECustomerKey`). Sent with the upload's every request, parts and completion too.
    pub customer_key: Option<CustomerKey>,
}

/// Explicit ACL grants of the objects written, each a grantee list as S3 takes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// `x-amz-grant-read`: who may read the object.
    pub read: Option<String>,
    /// `x-amz-grant-read-acp`: who may read its ACL.
    pub read_acp: Option<String>,
    /// `x-amz-grant-write-acp`: who may change its ACL.
    pub write_acp: Option<String>,
    /// `x-amz-grant-full-control`: all of the above.
    pub full_control: Option<String>,
}

/// `x-amz-metadata-directive`, as the AWS CLI's `--metadata-directive` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataDirective {
    /// Keep the source's content headers and metadata; any given here are not sent (S3
    /// ignores them under COPY).
    Copy,
    /// Replace them with those given here, even none (the copy then has no metadata and the
    /// server's default type).
    Replace,
}

impl ObjectHeaders {
    /// The headers an upload of `key` sends.
    pub fn for_key(&self, key: &str) -> Vec<(Cow<'static, str>, String)> {
        let mut out = self.content_headers(key);
        if let Some(class) = &self.storage_class {
            out.push(("x-amz-storage-class".into(), class.clone()));
        }
        out.extend(
            self.settings()
                .into_iter()
                .map(|(n, v)| (Cow::Borrowed(n), v)),
        );
        out.extend(self.customer_key.iter().flat_map(CustomerKey::headers));
        out
    }

    /// The settings a new object takes whether it is uploaded or copied (a copy's metadata
    /// directive does not touch them): ACL and grants, server-side encryption, tags. The storage class is
    /// apart, as `CopyOptions` carries it.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        [
            ("x-amz-acl", &self.acl),
            ("x-amz-server-side-encryption", &self.server_side_encryption),
            (
                "x-amz-server-side-encryption-aws-kms-key-id",
                &self.sse_kms_key_id,
            ),
            ("x-amz-tagging", &self.tagging),
            ("x-amz-grant-read", &self.grants.read),
            ("x-amz-grant-read-acp", &self.grants.read_acp),
            ("x-amz-grant-write-acp", &self.grants.write_acp),
            ("x-amz-grant-full-control", &self.grants.full_control),
        ]
        .into_iter()
        .filter_map(|(n, v)| v.clone().map(|v| (n, v)))
        .collect()
    }

    /// What replaces a copied object's metadata and content headers (lowercase names), or
    /// `None` when nothing was given and the source's are kept. A guess is not made for copies:
    /// the source's type stands.
    pub fn replacement(&self) -> Option<Vec<(String, String)>> {
        if self.metadata_directive == Some(MetadataDirective::Copy) {
            return None;
        }
        let given = Self {
            guess_content_type: false,
            ..self.clone()
        };
        let headers = given.content_headers("");
        let replace = self.metadata_directive == Some(MetadataDirective::Replace);
        (replace || !headers.is_empty()).then(|| {
            headers
                .into_iter()
                .map(|(name, value)| (name.into_owned(), value))
                .collect()
        })
    }

    /// What a server-side copy sends of these: the replacement metadata and content headers
    /// ([`Self::replacement`]), the storage class, the settings, and the customer key the
    /// copy is encrypted with (the source's goes with the source).
    pub fn copy_options(&self) -> CopyOptions {
        CopyOptions {
            replace_metadata: self.replacement(),
            settings: self
                .settings()
                .into_iter()
                .map(|(n, v)| (n.to_owned(), v))
                .collect(),
            storage_class: self.storage_class.clone(),
            customer_key: self.customer_key.clone(),
            ..CopyOptions::default()
        }
    }

    /// The headers a copy of a source object through this machine sends: these, when the caller
    /// gave content headers or metadata ([`Self::replacement`]); else the source's
    /// (`copied`: lowercase names, as `ObjectInfo::copied_headers`) instead of a guess, as a
    /// server-side copy keeps them. The storage class, ACL, encryption and tags stay this one's.
    pub fn copying(&self, copied: &[(String, String)]) -> Self {
        if self.replacement().is_some() {
            return self.clone();
        }
        // Only the source's (under COPY some may have been given, and are not sent).
        let mut out = Self {
            storage_class: self.storage_class.clone(),
            acl: self.acl.clone(),
            grants: self.grants.clone(),
            server_side_encryption: self.server_side_encryption.clone(),
            sse_kms_key_id: self.sse_kms_key_id.clone(),
            tagging: self.tagging.clone(),
            website_redirect: self.website_redirect.clone(),
            customer_key: self.customer_key.clone(),
            ..Self::default()
        };
        for (name, value) in copied {
            let slot = match name.as_str() {
                "content-type" => &mut out.content_type,
                "cache-control" => &mut out.cache_control,
                "content-disposition" => &mut out.content_disposition,
                "content-encoding" => &mut out.content_encoding,
                "content-language" => &mut out.content_language,
                "expires" => &mut out.expires,
                other => {
                    if let Some(meta) = other.strip_prefix("x-amz-meta-") {
                        out.metadata.push((meta.to_owned(), value.clone()));
                    }
                    continue;
                }
            };
            *slot = Some(value.clone());
        }
        out
    }

    /// Whether a copy of an object onto itself changes what S3 requires one to change (its
    /// metadata or content headers, storage class, website redirect or encryption): S3
    /// refuses any other copy in place, and so does `cp` before asking.
    pub fn changes_in_place(&self) -> bool {
        self.replacement().is_some()
            || self.storage_class.is_some()
            || self.server_side_encryption.is_some()
            || self.customer_key.is_some()
    }

    fn content_headers(&self, key: &str) -> Vec<(Cow<'static, str>, String)> {
        let mut out: Vec<(Cow<'static, str>, String)> = Vec::new();
        let content_type = self.content_type.clone().or_else(|| {
            self.guess_content_type
                .then(|| mime_guess::from_path(key).first_raw().map(str::to_owned))
                .flatten()
        });
        if let Some(t) = content_type {
            out.push(("content-type".into(), t));
        }
        let named = [
            ("cache-control", &self.cache_control),
            ("content-disposition", &self.content_disposition),
            ("content-encoding", &self.content_encoding),
            ("content-language", &self.content_language),
            ("expires", &self.expires),
            ("x-amz-website-redirect-location", &self.website_redirect),
        ];
        for (name, value) in named {
            if let Some(v) = value {
                out.push((name.into(), v.clone()));
            }
        }
        for (name, value) in &self.metadata {
            out.push((
                format!("x-amz-meta-{}", name.to_ascii_lowercase()).into(),
                value.clone(),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(h: &[(Cow<'static, str>, String)]) -> Vec<(String, String)> {
        h.iter().map(|(n, v)| (n.to_string(), v.clone())).collect()
    }

    #[test]
    fn types_are_guessed_from_the_extension_unless_given() {
        let guess = ObjectHeaders {
            guess_content_type: true,
            ..ObjectHeaders::default()
        };
        let ty = |h: &ObjectHeaders, key: &str| {
            h.for_key(key)
                .into_iter()
                .find(|(n, _)| n == "content-type")
                .map(|(_, v)| v)
        };
        assert_eq!(ty(&guess, "site/index.html").as_deref(), Some("text/html"));
        assert_eq!(ty(&guess, "a/b.JSON").as_deref(), Some("application/json"));
        assert_eq!(ty(&guess, "logo.png").as_deref(), Some("image/png"));
        assert_eq!(ty(&guess, "no-extension"), None);
        assert_eq!(ty(&ObjectHeaders::default(), "index.html"), None);
        let given = ObjectHeaders {
            content_type: Some("text/plain".into()),
            ..guess.clone()
        };
        assert_eq!(ty(&given, "index.html").as_deref(), Some("text/plain"));
    }

    #[test]
    fn a_copy_through_here_sends_the_sources_headers_and_keeps_its_own_settings() {
        let ours = ObjectHeaders {
            guess_content_type: true,
            storage_class: Some("STANDARD_IA".into()),
            acl: Some("private".into()),
            grants: Grants {
                read: Some("uri=http://acs.amazonaws.com/groups/global/AllUsers".into()),
                full_control: Some("id=owner1, id=owner2".into()),
                ..Grants::default()
            },
            ..ObjectHeaders::default()
        };
        let copied: Vec<(String, String)> = [
            ("content-type", "image/png"),
            ("cache-control", "no-cache"),
            ("content-language", "fr"),
            ("x-amz-meta-owner", "ada"),
        ]
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .to_vec();
        // Not guessed from the new key: the source's type, and its metadata.
        assert_eq!(
            names(&ours.copying(&copied).for_key("new.html")),
            [
                ("content-type", "image/png"),
                ("cache-control", "no-cache"),
                ("content-language", "fr"),
                ("x-amz-meta-owner", "ada"),
                ("x-amz-storage-class", "STANDARD_IA"),
                ("x-amz-acl", "private"),
                (
                    "x-amz-grant-read",
                    "uri=http://acs.amazonaws.com/groups/global/AllUsers"
                ),
                ("x-amz-grant-full-control", "id=owner1, id=owner2"),
            ]
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
        // A source without a type: none sent, S3's default, not a guess.
        assert!(ours
            .copying(&[])
            .for_key("new.html")
            .iter()
            .all(|(n, _)| n != "content-type"));
    }

    #[test]
    fn metadata_cache_control_and_class_are_sent_and_replace_a_copys() {
        let h = ObjectHeaders {
            guess_content_type: true,
            cache_control: Some("max-age=60".into()),
            metadata: vec![("Owner".into(), "me".into())],
            storage_class: Some("STANDARD_IA".into()),
            ..ObjectHeaders::default()
        };
        assert_eq!(
            names(&h.for_key("a.txt")),
            [
                ("content-type", "text/plain"),
                ("cache-control", "max-age=60"),
                ("x-amz-meta-owner", "me"),
                ("x-amz-storage-class", "STANDARD_IA"),
            ]
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
        // A copy replaces what was given (no guess, the class goes separately).
        assert_eq!(
            h.replacement().unwrap(),
            [("cache-control", "max-age=60"), ("x-amz-meta-owner", "me")]
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
        let all = ObjectHeaders {
            content_disposition: Some("inline".into()),
            content_encoding: Some("gzip".into()),
            content_language: Some("fr".into()),
            expires: Some("Tue, 01 Jan 2030 00:00:00 GMT".into()),
            website_redirect: Some("/x".into()),
            acl: Some("private".into()),
            server_side_encryption: Some("aws:kms".into()),
            sse_kms_key_id: Some("k1".into()),
            tagging: Some("a=1".into()),
            ..h.clone()
        };
        let sent = names(&all.for_key("a.txt"));
        assert_eq!(sent.len(), 13, "{sent:?}");
        // Settings are not part of a copy's replaced metadata: they go on the new object.
        let replaced = all.replacement().unwrap();
        assert_eq!(replaced.len(), 7, "{replaced:?}");
        assert!(replaced
            .iter()
            .all(|(n, _)| !n.starts_with("x-amz-acl") && n != "x-amz-tagging"));
        assert_eq!(all.settings().len(), 4);
        let guess_only = ObjectHeaders {
            guess_content_type: true,
            ..ObjectHeaders::default()
        };
        assert_eq!(guess_only.replacement(), None);
    }

    #[test]
    fn the_metadata_directive_decides_what_a_copy_keeps() {
        let given = ObjectHeaders {
            content_type: Some("text/css".into()),
            metadata: vec![("owner".into(), "me".into())],
            ..ObjectHeaders::default()
        };
        let copy = ObjectHeaders {
            metadata_directive: Some(MetadataDirective::Copy),
            ..given.clone()
        };
        let replace_nothing = ObjectHeaders {
            metadata_directive: Some(MetadataDirective::Replace),
            ..ObjectHeaders::default()
        };
        assert_eq!(given.replacement().map(|r| r.len()), Some(2));
        assert_eq!(
            copy.replacement(),
            None,
            "COPY: the given ones are not sent"
        );
        assert_eq!(replace_nothing.replacement(), Some(vec![]));
        // Through this machine, COPY sends the source's headers only.
        let source = [("content-type".to_owned(), "image/png".to_owned())];
        assert_eq!(
            names(&copy.copying(&source).for_key("a.css")),
            [("content-type".to_owned(), "image/png".to_owned())]
        );
        assert!(replace_nothing.copying(&source).for_key("a").is_empty());
        // In place, S3 needs a change it counts; a canned ACL alone is not one.
        assert!(given.changes_in_place() && replace_nothing.changes_in_place());
        assert!(!copy.changes_in_place());
        let acl_only = ObjectHeaders {
            acl: Some("private".into()),
            ..ObjectHeaders::default()
        };
        let class = ObjectHeaders {
            storage_class: Some("STANDARD_IA".into()),
            ..copy.clone()
        };
        assert!(!acl_only.changes_in_place() && class.changes_in_place());
    }
}
