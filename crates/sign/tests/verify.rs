//! The verifier against S3 requests from our own signers: what it must accept, and each way a
//! request must be refused (the list in issue 3), one test per kind of mutation.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use slipstream_sign::verify::{CredentialKeys, Incoming, KeySource, Verifier, VerifyError};
use slipstream_sign::{
    Credentials, PayloadHash, PresignOptions, Presigner, Request, Settings, Signer, SigningTime,
    UrlBase,
};

const HOST: &str = "examplebucket.s3.amazonaws.com";

fn creds() -> Credentials {
    Credentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        None,
    )
    .unwrap()
}

fn keys() -> CredentialKeys {
    CredentialKeys::new([creds()])
}

fn t0() -> SigningTime {
    SigningTime::parse_amz("20260314T150926Z").unwrap()
}

fn base() -> UrlBase {
    UrlBase {
        origin: format!("https://{HOST}"),
        host: HOST.into(),
        path_prefix: "/".into(),
    }
}

/// A header-signed GET: (target, headers).
fn header_signed(
    signer: &Signer,
    extra: &[(&str, &str)],
    time: SigningTime,
) -> (String, Vec<(String, String)>) {
    let mut headers: Vec<(&str, &str)> = vec![("host", HOST)];
    headers.extend_from_slice(extra);
    let req = Request {
        method: "GET",
        path: "/a%20b/c",
        query: "versionId=1",
        headers: &headers,
    };
    let sig = signer
        .sign_headers(&req, &PayloadHash::Unsigned, time)
        .unwrap();
    let mut all: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    all.extend(
        sig.headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.clone())),
    );
    ("/a%20b/c?versionId=1".to_owned(), all)
}

fn verify_as(
    verifier: &Verifier,
    method: &str,
    target: &str,
    headers: &[(String, String)],
    now: SigningTime,
) -> Result<slipstream_sign::verify::Verified, VerifyError> {
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    verifier.verify(
        &Incoming {
            method,
            target,
            headers: &h,
            body_sha256: None,
        },
        &keys(),
        now,
    )
}

fn verify(
    method: &str,
    target: &str,
    headers: &[(String, String)],
    now: SigningTime,
) -> Result<slipstream_sign::verify::Verified, VerifyError> {
    verify_as(&Verifier::s3("us-east-1"), method, target, headers, now)
}

fn v4() -> Signer {
    Signer::new(creds(), "us-east-1", "s3", Settings::S3).unwrap()
}

/// A presigned GET URL's target (path and query) and its Host header.
fn presigned(opts: &PresignOptions, time: SigningTime) -> (String, Vec<(String, String)>) {
    let url = Presigner::new(base(), "us-east-1", creds())
        .unwrap()
        .presign("a b/c", opts, time)
        .unwrap();
    (
        url[format!("https://{HOST}").len()..].to_owned(),
        vec![("host".into(), HOST.into())],
    )
}

fn set_header(headers: &mut [(String, String)], name: &str, f: impl Fn(&str) -> String) {
    let h = headers.iter_mut().find(|(n, _)| n == name).unwrap();
    h.1 = f(&h.1);
}

fn flip_last(s: &str) -> String {
    let mut b = s.to_owned().into_bytes();
    let last = b.len() - 1;
    b[last] = if b[last] == b'0' { b'1' } else { b'0' };
    String::from_utf8(b).unwrap()
}

#[test]
fn valid_header_and_presigned_requests_verify() {
    let (target, headers) = header_signed(&v4(), &[], t0());
    let v = verify("GET", &target, &headers, t0().plus(60)).unwrap();
    assert_eq!(
        (v.access_key_id(), v.presigned, v.payload.as_str()),
        ("AKIDEXAMPLE", false, "UNSIGNED-PAYLOAD")
    );
    let (target, headers) = presigned(&PresignOptions::get(), t0());
    let v = verify("GET", &target, &headers, t0().plus(3599)).unwrap();
    assert!(v.presigned);
    assert_eq!(v.expires_at, Some(t0().plus(3600)));
}

/// More signed headers and query parameters than the signer and the verifier sort on the stack
/// (16 each): the spilled path signs and verifies the same bytes, and the verified list of
/// signed headers is the sorted one.
#[test]
fn requests_with_many_headers_and_parameters_verify() {
    let names: Vec<String> = (0..20)
        .rev()
        .map(|i| format!("x-amz-meta-h{i:02}"))
        .collect();
    let extra: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "v")).collect();
    let signer = v4();
    let (target, headers) = header_signed(&signer, &extra, t0());
    let v = verify("GET", &target, &headers, t0().plus(60)).unwrap();
    let signed: Vec<&str> = v.signed_header_names().collect();
    assert_eq!(signed.len(), 23, "{signed:?}");
    assert_eq!(signed[..2], ["host", "x-amz-content-sha256"]);
    assert_eq!(signed[3], "x-amz-meta-h00");
    assert!(signed.windows(2).all(|w| w[0] < w[1]), "{signed:?}");

    let query: String = (0..20).rev().map(|i| format!("p{i:02}=x&")).collect();
    let req = Request {
        method: "GET",
        path: "/k",
        query: query.trim_end_matches('&'),
        headers: &[("host", HOST)],
    };
    let sig = signer
        .sign_headers(&req, &PayloadHash::Unsigned, t0())
        .unwrap();
    let want: String = (0..20)
        .map(|i| format!("p{i:02}=x"))
        .collect::<Vec<_>>()
        .join("&");
    assert_eq!(sig.canonical_request.lines().nth(2), Some(want.as_str()));
    let mut all = vec![("host".to_owned(), HOST.to_owned())];
    all.extend(
        sig.headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.clone())),
    );
    let target = format!("/k?{}", req.query);
    assert!(verify("GET", &target, &all, t0().plus(60)).is_ok());
}

#[test]
fn fabricated_and_one_character_changed_signatures() {
    let (target, mut headers) = header_signed(&v4(), &[], t0());
    set_header(&mut headers, "authorization", flip_last);
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::SignatureDoesNotMatch { .. })
    ));
    set_header(&mut headers, "authorization", |a| {
        format!(
            "{}Signature={}",
            a.split("Signature=").next().unwrap(),
            "ab".repeat(32)
        )
    });
    let e = verify("GET", &target, &headers, t0()).unwrap_err();
    assert_eq!(
        (e.s3_code(), e.http_status()),
        ("SignatureDoesNotMatch", 403)
    );
    let (target, headers) = presigned(&PresignOptions::get(), t0());
    assert!(matches!(
        verify("GET", &flip_last(&target), &headers, t0()),
        Err(VerifyError::SignatureDoesNotMatch { .. })
    ));
}

#[test]
fn the_mismatch_error_shows_what_was_computed() {
    let (target, headers) = presigned(&PresignOptions::get(), t0());
    let Err(VerifyError::SignatureDoesNotMatch {
        canonical_request,
        string_to_sign,
    }) = verify("PUT", &target, &headers, t0())
    else {
        panic!()
    };
    assert!(
        canonical_request.starts_with("PUT\n/a%20b/c\n"),
        "{canonical_request}"
    );
    assert!(
        string_to_sign.starts_with("AWS4-HMAC-SHA256\n20260314T150926Z\n"),
        "{string_to_sign}"
    );
}

#[test]
fn host_and_date_must_be_signed() {
    let (target, mut headers) = header_signed(&v4(), &[], t0());
    set_header(&mut headers, "authorization", |a| {
        a.replace(
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date",
            "SignedHeaders=x-amz-content-sha256;x-amz-date",
        )
    });
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AuthorizationHeaderMalformed(_))
    ));
    let (target, mut headers) = header_signed(&v4(), &[], t0());
    set_header(&mut headers, "authorization", |a| {
        a.replace(
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date",
            "SignedHeaders=host;x-amz-content-sha256",
        )
    });
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AuthorizationHeaderMalformed(_))
    ));
}

#[test]
fn region_set_must_be_signed_and_include_our_region() {
    let signer = Signer::new_v4a(creds(), "us-east-1,eu-*", "s3", Settings::S3).unwrap();
    let (target, headers) = header_signed(&signer, &[], t0());
    assert!(verify("GET", &target, &headers, t0()).is_ok());
    assert!(verify_as(&Verifier::s3("eu-west-1"), "GET", &target, &headers, t0()).is_ok());
    let e = verify_as(&Verifier::s3("ap-south-1"), "GET", &target, &headers, t0()).unwrap_err();
    assert!(matches!(e, VerifyError::AccessDenied(_)), "{e:?}");
    let mut unsigned = headers.clone();
    set_header(&mut unsigned, "authorization", |a| {
        a.replace(";x-amz-region-set", "")
    });
    assert!(verify("GET", &target, &unsigned, t0()).is_err());
    let mut widened = headers;
    set_header(&mut widened, "x-amz-region-set", |_| "*".into());
    assert!(matches!(
        verify("GET", &target, &widened, t0()),
        Err(VerifyError::SignatureDoesNotMatch { .. })
    ));
}

#[test]
fn unsigned_x_amz_headers_are_refused() {
    let (target, mut headers) = header_signed(&v4(), &[], t0());
    headers.push(("x-amz-meta-added".into(), "later".into()));
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AccessDenied(_))
    ));
    let (target, mut headers) = presigned(&PresignOptions::get(), t0());
    headers.push(("X-Amz-Server-Side-Encryption".into(), "AES256".into()));
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AccessDenied(_))
    ));
}

#[test]
fn scope_date_must_be_the_request_date() {
    let (target, mut headers) = header_signed(&v4(), &[], t0());
    set_header(&mut headers, "authorization", |a| {
        a.replace("/20260314/", "/20260313/")
    });
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AuthorizationHeaderMalformed(_))
    ));
}

#[test]
fn header_auth_more_than_15_minutes_off_is_refused() {
    let (target, headers) = header_signed(&v4(), &[], t0());
    assert!(verify("GET", &target, &headers, t0().plus(900)).is_ok());
    assert_eq!(
        verify("GET", &target, &headers, t0().plus(901)).unwrap_err(),
        VerifyError::RequestTimeTooSkewed
    );
    assert_eq!(
        verify("GET", &target, &headers, t0().plus(-901)).unwrap_err(),
        VerifyError::RequestTimeTooSkewed
    );
}

#[test]
fn presigned_expiry_is_checked() {
    let (target, headers) = presigned(
        &PresignOptions {
            expires_in: 60,
            ..PresignOptions::get()
        },
        t0(),
    );
    assert!(verify("GET", &target, &headers, t0().plus(60)).is_ok());
    assert!(matches!(
        verify("GET", &target, &headers, t0().plus(61)),
        Err(VerifyError::AccessDenied(_))
    ));
    assert!(matches!(
        verify("GET", &target, &headers, t0().plus(-901)),
        Err(VerifyError::AccessDenied(_))
    ));
    for bad in ["0", "-1", "604801", "abc"] {
        let t = target.replace("X-Amz-Expires=60", &format!("X-Amz-Expires={bad}"));
        assert!(
            matches!(
                verify("GET", &t, &headers, t0()),
                Err(VerifyError::AuthorizationQueryParametersError(_))
            ),
            "{bad}"
        );
    }
    let t = target.replace("X-Amz-Expires=60", "X-Amz-Expires=61");
    assert!(matches!(
        verify("GET", &t, &headers, t0()),
        Err(VerifyError::SignatureDoesNotMatch { .. })
    ));
}

#[test]
fn any_signed_query_parameter_changed_is_refused() {
    let opts = PresignOptions {
        query: vec![
            ("response-content-type".into(), "text/plain".into()),
            ("versionId".into(), "v1".into()),
        ],
        ..PresignOptions::get()
    };
    let (target, headers) = presigned(&opts, t0());
    assert!(verify("GET", &target, &headers, t0()).is_ok());
    for (from, to) in [
        ("versionId=v1", "versionId=v2"),
        ("text%2Fplain", "text%2Fhtml"),
        ("response-content-type=text%2Fplain&", ""),
    ] {
        let t = target.replacen(from, to, 1);
        assert_ne!(t, target);
        assert!(verify("GET", &t, &headers, t0()).is_err(), "{from} -> {to}");
    }
    let added = format!("{target}&x-id=GetObject");
    assert!(matches!(
        verify("GET", &added, &headers, t0()),
        Err(VerifyError::SignatureDoesNotMatch { .. })
    ));
}

#[test]
fn wrong_region_service_or_terminator() {
    let (target, headers) = header_signed(&v4(), &[], t0());
    assert!(matches!(
        verify_as(&Verifier::s3("eu-west-1"), "GET", &target, &headers, t0()),
        Err(VerifyError::AuthorizationHeaderMalformed(_))
    ));
    let other = Signer::new(creds(), "us-east-1", "iam", Settings::S3).unwrap();
    let (target, headers) = header_signed(&other, &[], t0());
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AuthorizationHeaderMalformed(_))
    ));
    let (target, mut headers) = header_signed(&v4(), &[], t0());
    set_header(&mut headers, "authorization", |a| {
        a.replace("aws4_request", "aws5_request")
    });
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AuthorizationHeaderMalformed(_))
    ));
}

#[test]
fn unknown_algorithms_are_refused() {
    let (target, mut headers) = header_signed(&v4(), &[], t0());
    set_header(&mut headers, "authorization", |a| {
        a.replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1")
    });
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::AuthorizationHeaderMalformed(_))
    ));
    set_header(&mut headers, "authorization", |_| {
        "AWS AKIDEXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=".into()
    });
    assert!(matches!(
        verify("GET", &target, &headers, t0()),
        Err(VerifyError::InvalidRequest(_))
    ));
    let (target, headers) = presigned(&PresignOptions::get(), t0());
    let t = target.replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1");
    assert!(matches!(
        verify("GET", &t, &headers, t0()),
        Err(VerifyError::AuthorizationQueryParametersError(_))
    ));
}

#[test]
fn duplicate_auth_headers_and_two_mechanisms_are_refused() {
    for name in ["authorization", "x-amz-date"] {
        let (target, mut headers) = header_signed(&v4(), &[], t0());
        let copy = headers.iter().find(|(n, _)| n == name).unwrap().clone();
        headers.push(copy);
        assert!(
            matches!(
                verify("GET", &target, &headers, t0()),
                Err(VerifyError::InvalidRequest(_))
            ),
            "{name}"
        );
    }
    let (_, header_auth) = header_signed(&v4(), &[], t0());
    let (target, _) = presigned(&PresignOptions::get(), t0());
    assert!(matches!(
        verify("GET", &target, &header_auth, t0()),
        Err(VerifyError::InvalidRequest(_))
    ));
    assert_eq!(
        verify("GET", "/a%20b/c", &[("host".into(), HOST.into())], t0()).unwrap_err(),
        VerifyError::Missing
    );
}

#[test]
fn the_body_must_match_its_signed_hash() {
    let body = b"hello";
    let signer = v4();
    let headers = [("host", HOST)];
    let req = Request {
        method: "PUT",
        path: "/k",
        query: "",
        headers: &headers,
    };
    let sig = signer
        .sign_headers(&req, &PayloadHash::of(body), t0())
        .unwrap();
    let mut all: Vec<(String, String)> = vec![("host".into(), HOST.into())];
    all.extend(
        sig.headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.clone())),
    );
    let v = verify("PUT", "/k", &all, t0()).unwrap();
    let hash = |b: &[u8]| -> [u8; 32] { <sha2::Sha256 as sha2::Digest>::digest(b).into() };
    assert!(v.check_body(&hash(body)).is_ok());
    assert_eq!(
        v.check_body(&hash(b"hellO")).unwrap_err(),
        VerifyError::XAmzContentSha256Mismatch
    );
    let mut no_hash = all.clone();
    no_hash.retain(|(n, _)| n != "x-amz-content-sha256");
    assert!(verify("PUT", "/k", &no_hash, t0()).is_err());
}

#[test]
fn unknown_access_keys_are_refused_after_the_same_work() {
    let other = Credentials::new("AKIDUNKNOWN", "whatever", None).unwrap();
    for signer in [
        Signer::new(other.clone(), "us-east-1", "s3", Settings::S3).unwrap(),
        Signer::new_v4a(other.clone(), "*", "s3", Settings::S3).unwrap(),
    ] {
        let (target, headers) = header_signed(&signer, &[], t0());
        assert_eq!(
            verify("GET", &target, &headers, t0()).unwrap_err(),
            VerifyError::InvalidAccessKeyId
        );
    }
    assert!(keys().public_key("AKIDUNKNOWN").is_none());
}

#[test]
fn presigned_sigv4a_urls_verify_and_mutations_do_not() {
    let p = Presigner::new_v4a(base(), "us-*", creds()).unwrap();
    let url = p.presign("k", &PresignOptions::get(), t0()).unwrap();
    let target = &url[format!("https://{HOST}").len()..];
    let headers = vec![("host".to_owned(), HOST.to_owned())];
    assert!(verify("GET", target, &headers, t0()).is_ok());
    let widened = target.replace("X-Amz-Region-Set=us-%2A", "X-Amz-Region-Set=%2A");
    assert!(matches!(
        verify("GET", &widened, &headers, t0()),
        Err(VerifyError::SignatureDoesNotMatch { .. })
    ));
    assert!(matches!(
        verify_as(&Verifier::s3("eu-west-1"), "GET", target, &headers, t0()),
        Err(VerifyError::AccessDenied(_))
    ));
}

#[test]
fn session_tokens_are_signed_and_checked() {
    let with_token = Credentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        Some("TOKEN".into()),
    )
    .unwrap();
    let url = Presigner::new(base(), "us-east-1", with_token)
        .unwrap()
        .presign("k", &PresignOptions::get(), t0())
        .unwrap();
    let target = &url[format!("https://{HOST}").len()..];
    let headers = vec![("host".to_owned(), HOST.to_owned())];
    assert!(verify("GET", target, &headers, t0()).is_ok());
    assert!(verify(
        "GET",
        &target.replace("X-Amz-Security-Token=TOKEN", "X-Amz-Security-Token=TOKEX"),
        &headers,
        t0()
    )
    .is_err());
}
