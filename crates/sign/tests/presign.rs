//! The URL presigner against botocore's output, against the reference signer, and its errors.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use slipstream_sign::{
    Credentials, Error, PathEncoding, PayloadHash, PresignOptions, Presigner, Request,
    SessionTokenMode, Settings, Signer, SigningTime, UrlBase,
};

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

fn time() -> SigningTime {
    SigningTime::parse_amz("20150830T123600Z").unwrap()
}

fn virtual_base() -> UrlBase {
    UrlBase {
        origin: "https://examplebucket.s3.amazonaws.com".into(),
        host: "examplebucket.s3.amazonaws.com".into(),
        path_prefix: "/".into(),
    }
}

fn path_base() -> UrlBase {
    UrlBase {
        origin: "https://s3.eu-west-1.amazonaws.com".into(),
        host: "s3.eu-west-1.amazonaws.com".into(),
        path_prefix: "/examplebucket/".into(),
    }
}

/// URLs printed by botocore 1.43.11 (`signature_version="s3v4"`, clock fixed at 2015-08-30T12:36:00Z).
#[test]
fn botocore_vectors() {
    let p = Presigner::new(
        virtual_base(),
        "us-east-1",
        Credentials::new("AKIDEXAMPLE", SECRET, None).unwrap(),
    )
    .unwrap();
    let opts = PresignOptions {
        expires_in: 86400,
        ..PresignOptions::get()
    };
    assert_eq!(
        p.presign("a b/c+d~e/ሴ😀?#%", &opts, time()).unwrap(),
        "https://examplebucket.s3.amazonaws.com/a%20b/c%2Bd~e/%E1%88%B4%F0%9F%98%80%3F%23%25?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=579cfd412993b64fcbe549c1f6d5321d7347ddb026efe4d1284963e8ee887099"
    );

    let creds = Credentials::new("AKIDEXAMPLE", SECRET, Some("TOKEN/+=".into())).unwrap();
    let p = Presigner::new(path_base(), "eu-west-1", creds).unwrap();
    let put = PresignOptions {
        headers: vec![("Content-Type".into(), "text/plain".into())],
        ..PresignOptions::new("PUT")
    };
    assert_eq!(
        p.presign("a//b/./c/../d/", &put, time()).unwrap(),
        "https://s3.eu-west-1.amazonaws.com/examplebucket/a//b/./c/../d/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Security-Token=TOKEN%2F%2B%3D&X-Amz-Signature=b2d38da14ac3f437e6353055d7f3a32b5e5670e07d35c9cd892aca2814ac39bc"
    );
    let get = PresignOptions {
        expires_in: 604_800,
        query: vec![
            (
                "response-content-disposition".into(),
                "attachment; filename=\"x y.txt\"".into(),
            ),
            ("response-content-type".into(), "text/plain".into()),
            ("versionId".into(), "v1".into()),
        ],
        ..PresignOptions::get()
    };
    assert_eq!(
        p.presign("k", &get, time()).unwrap(),
        "https://s3.eu-west-1.amazonaws.com/examplebucket/k?response-content-disposition=attachment%3B%20filename%3D%22x%20y.txt%22&response-content-type=text%2Fplain&versionId=v1&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=604800&X-Amz-SignedHeaders=host&X-Amz-Security-Token=TOKEN%2F%2B%3D&X-Amz-Signature=a271424c9465e52664fd63f7fbec64340304336b14c0795bbe9d525e9ca8d690"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let p = Presigner::new(
        virtual_base(),
        "us-east-1",
        Credentials::new("AKID", "s", None).unwrap(),
    )
    .unwrap();
    for expires_in in [0, 604_801, u64::MAX] {
        let e = p
            .presign(
                "k",
                &PresignOptions {
                    expires_in,
                    ..PresignOptions::get()
                },
                time(),
            )
            .unwrap_err();
        assert_eq!(e, Error::InvalidExpiry(expires_in));
        assert!(e.to_string().contains("604800"), "{e}");
    }
    assert_eq!(
        p.presign("", &PresignOptions::get(), time()).unwrap_err(),
        Error::EmptyKey
    );
    assert!(p.presign("k", &PresignOptions::new("get"), time()).is_err());
    let bad_header = PresignOptions {
        headers: vec![("content type".into(), "x".into())],
        ..PresignOptions::new("PUT")
    };
    assert!(matches!(
        p.presign("k", &bad_header, time()),
        Err(Error::InvalidHeader(_))
    ));
    let keys = ["a", "", "b"];
    assert_eq!(
        p.presign_many(&keys, &PresignOptions::get(), time(), Some(2))
            .unwrap_err(),
        Error::EmptyKey
    );
}

#[test]
fn debug_output_has_no_secrets_or_signatures() {
    let p = Presigner::new(
        virtual_base(),
        "us-east-1",
        Credentials::new("AKID", "SUPERSECRET", Some("SESSIONTOKEN".into())).unwrap(),
    )
    .unwrap();
    let t = p.template(&PresignOptions::get(), time()).unwrap();
    let text = format!("{p:?} {t:?}");
    assert!(
        !text.contains("SUPERSECRET")
            && !text.contains("SESSIONTOKEN")
            && !text.contains("X-Amz-Signature"),
        "{text}"
    );
}

#[test]
fn batch_equals_one_by_one_in_order() {
    let p = Presigner::new(
        virtual_base(),
        "us-east-1",
        Credentials::new("AKID", "s", None).unwrap(),
    )
    .unwrap();
    let keys: Vec<String> = (0..2500).map(|i| format!("dir/{i}/file {i}.bin")).collect();
    let opts = PresignOptions::get();
    let one: Vec<String> = keys
        .iter()
        .map(|k| p.presign(k, &opts, time()).unwrap())
        .collect();
    for threads in [None, Some(1), Some(2), Some(7)] {
        assert_eq!(
            p.presign_many(&keys, &opts, time(), threads).unwrap(),
            one,
            "{threads:?}"
        );
    }
}

/// The characters that break signers: everything here must be signed as the literal key.
const AWKWARD: &[&str] = &[
    "a", "Z", "0", "/", "//", "./", "../", ".", " ", "\t", "+", "%", "%20", "?", "#", "&", "=",
    ";", ":", "@", "!", "$", "'", "(", ")", "*", ",", "~", "ሴ", "é", "😀", "\u{7f}",
];

fn key() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(AWKWARD), 1..12).prop_map(|parts| parts.concat())
}

fn param() -> impl Strategy<Value = (String, String)> {
    (
        prop::sample::select(
            &[
                "response-content-type",
                "versionId",
                "partNumber",
                "uploadId",
                "x-id",
                "Z",
            ][..],
        ),
        key(),
    )
        .prop_map(|(k, v)| (k.to_owned(), v))
}

proptest! {
    /// The template path builds the same canonical request as the reference signer, so the
    /// signature must match for any key, parameters, headers and token.
    #[test]
    fn template_equals_reference_signer(
        key in key(),
        query in prop::collection::vec(param(), 0..3),
        content_type in prop::option::of("[a-z/ ]{1,10}"),
        token in prop::option::of("[A-Za-z0-9/+=]{1,20}"),
        expires_in in 1u64..=604_800,
        path_style in any::<bool>(),
        secs in 0i64..4_000_000_000,
    ) {
        let time = SigningTime::from_unix(secs).unwrap();
        let creds = Credentials::new("AKIDEXAMPLE", SECRET, token).unwrap();
        let base = if path_style { path_base() } else { virtual_base() };
        let headers: Vec<(String, String)> = content_type.iter().map(|c| ("content-type".to_owned(), c.clone())).collect();
        let opts = PresignOptions { method: "PUT".into(), expires_in, query: query.clone(), headers: headers.clone() };
        let url = Presigner::new(base.clone(), "eu-west-1", creds.clone()).unwrap().presign(&key, &opts, time).unwrap();

        let mut path = base.path_prefix.clone();
        slipstream_sign::encode::encode_path_into(&mut path, &key);
        let raw_query: Vec<String> = query.iter().map(|(k, v)| format!("{}={}", slipstream_sign::encode::encode_query(k), slipstream_sign::encode::encode_query(v))).collect();
        let raw_query = raw_query.join("&");
        let mut all_headers: Vec<(&str, &str)> = vec![("host", &base.host)];
        all_headers.extend(headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        let settings = Settings { path: PathEncoding::AsSent, session_token: SessionTokenMode::Signed, content_sha256_header: false };
        let reference = Signer::new(creds, "eu-west-1", "s3", settings).unwrap()
            .presign(&Request { method: "PUT", path: &path, query: &raw_query, headers: &all_headers }, expires_in, &PayloadHash::Unsigned, time)
            .unwrap();
        let want = format!("{}{}?{}", base.origin, path, reference.query_string(&raw_query));
        prop_assert_eq!(url, want);
    }
}

proptest! {
    /// Encoding keeps only unreserved characters, `/` and `%XY` (uppercase), and decodes back.
    #[test]
    fn path_encoding_is_canonical_and_reversible(s in "\\PC{0,40}") {
        let mut enc = String::new();
        slipstream_sign::encode::encode_path_into(&mut enc, &s);
        let b = enc.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                prop_assert!(i + 3 <= b.len() && b[i + 1..i + 3].iter().all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(c)), "{}", enc);
                i += 3;
            } else {
                prop_assert!(b[i].is_ascii_alphanumeric() || b"-_.~/".contains(&b[i]), "{}", enc);
                i += 1;
            }
        }
        prop_assert_eq!(slipstream_sign::encode::percent_decode(&enc), s.as_bytes().to_vec());
        prop_assert!(!slipstream_sign::encode::encode_query(&s).contains('/'));
    }

    /// Canonicalizing an already canonical query changes nothing, and S3 paths are never altered.
    #[test]
    fn canonical_forms_are_fixed_points(pairs in prop::collection::vec((key(), key()), 0..5), path in key()) {
        use slipstream_sign::canonical::{canonical_query, canonical_uri};
        let raw: Vec<String> = pairs.iter().map(|(k, v)| format!("{}={}", slipstream_sign::encode::encode_query(k), slipstream_sign::encode::encode_query(v))).collect();
        let once = canonical_query(&raw.join("&"), &[]);
        prop_assert_eq!(canonical_query(&once, &[]), once.clone());
        let mut enc = String::from("/");
        slipstream_sign::encode::encode_path_into(&mut enc, &path);
        prop_assert_eq!(canonical_uri(&enc, PathEncoding::AsSent), enc.clone());
        let normalized = canonical_uri(&path, PathEncoding::Encode { normalize: true });
        prop_assert!(normalized.starts_with('/') && !normalized.contains("//"), "{}", normalized);
        prop_assert!(!normalized.split('/').any(|seg| seg == "." || seg == ".."), "{}", normalized);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// SigV4A templates build the reference signer's URL up to the signature, and the signature
    /// verifies against the reference string to sign with the credential's public key.
    #[test]
    fn v4a_template_equals_reference_signer(
        key in key(),
        query in prop::collection::vec(param(), 0..3),
        token in prop::option::of("[A-Za-z0-9/+=]{1,20}"),
        region_set in prop::sample::select(&["us-east-1", "us-east-1,eu-west-1", "*", "us-*"][..]),
        secs in 0i64..4_000_000_000,
    ) {
        let time = SigningTime::from_unix(secs).unwrap();
        let creds = Credentials::new("AKIDEXAMPLE", SECRET, token).unwrap();
        let base = virtual_base();
        let opts = PresignOptions { query: query.clone(), ..PresignOptions::get() };
        let p = Presigner::new_v4a(base.clone(), region_set, creds.clone()).unwrap();
        let url = p.presign(&key, &opts, time).unwrap();

        let mut path = base.path_prefix.clone();
        slipstream_sign::encode::encode_path_into(&mut path, &key);
        let raw_query: Vec<String> = query.iter().map(|(k, v)| format!("{}={}", slipstream_sign::encode::encode_query(k), slipstream_sign::encode::encode_query(v))).collect();
        let raw_query = raw_query.join("&");
        let headers = [("host", base.host.as_str())];
        let settings = Settings { path: PathEncoding::AsSent, session_token: SessionTokenMode::Signed, content_sha256_header: false };
        let reference = Signer::new_v4a(creds, region_set, "s3", settings).unwrap();
        let sig = reference.presign(&Request { method: "GET", path: &path, query: &raw_query, headers: &headers }, 3600, &PayloadHash::Unsigned, time).unwrap();
        let want = format!("{}{}?{}", base.origin, path, sig.query_string(&raw_query));
        let (url_head, url_sig) = url.split_once("&X-Amz-Signature=").unwrap();
        let (want_head, _) = want.split_once("&X-Amz-Signature=").unwrap();
        prop_assert_eq!(url_head, want_head);
        prop_assert!(slipstream_sign::v4a::verify(reference.public_key().unwrap(), sig.string_to_sign.as_bytes(), url_sig));
    }
}

#[test]
fn v4a_batch_urls_all_verify_and_bad_region_sets_are_refused() {
    let creds = Credentials::new("AKIDEXAMPLE", SECRET, None).unwrap();
    let p = Presigner::new_v4a(virtual_base(), "us-east-1,us-west-2", creds.clone()).unwrap();
    let keys: Vec<String> = (0..200).map(|i| format!("k/{i}")).collect();
    let batch = p
        .presign_batch(&keys, &PresignOptions::get(), time(), Some(2))
        .unwrap();
    assert_eq!(batch.len(), 200);
    for url in batch.iter() {
        assert!(url.contains("X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256&"));
        assert!(url.contains("&X-Amz-Region-Set=us-east-1%2Cus-west-2&"));
        assert!(
            url.contains("X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fs3%2Faws4_request&"),
            "{url}"
        );
    }
    for bad in ["", "us east", "a,,b", "us-east-1;x"] {
        assert!(
            Presigner::new_v4a(virtual_base(), bad, creds.clone()).is_err(),
            "{bad:?}"
        );
    }
}

/// A client presigns with the signer of its own requests: the URLs are those of a presigner made
/// for the same credentials and region (set), and a signer for another service is refused.
#[test]
fn a_presigner_for_a_signer_signs_as_one_made_for_its_credentials() {
    let creds = Credentials::new("AKIDEXAMPLE", SECRET, Some("TOKEN/+=".into())).unwrap();
    let opts = PresignOptions::get();
    let signer = Signer::new(creds.clone(), "eu-west-1", "s3", Settings::S3).unwrap();
    let ours = Presigner::for_signer(path_base(), &signer).unwrap();
    let made = Presigner::new(path_base(), "eu-west-1", creds.clone()).unwrap();
    assert_eq!(
        ours.presign("a b/c", &opts, time()).unwrap(),
        made.presign("a b/c", &opts, time()).unwrap()
    );

    // SigV4A signatures are randomized (ECDSA): all but the signature is the same.
    let signer = Signer::new_v4a(creds.clone(), "us-*", "s3", Settings::S3).unwrap();
    let ours = Presigner::for_signer(virtual_base(), &signer).unwrap();
    let made = Presigner::new_v4a(virtual_base(), "us-*", creds.clone()).unwrap();
    let unsigned = |url: String| url.split("&X-Amz-Signature=").next().unwrap().to_owned();
    let url = ours.presign("k", &opts, time()).unwrap();
    assert!(url.contains("X-Amz-Region-Set=us-%2A&"), "{url}");
    assert_eq!(
        unsigned(url),
        unsigned(made.presign("k", &opts, time()).unwrap())
    );

    let other = Signer::new(creds, "eu-west-1", "sqs", Settings::S3).unwrap();
    let refused = Presigner::for_signer(path_base(), &other).unwrap_err();
    assert!(refused.to_string().contains("sqs"), "{refused}");
}
