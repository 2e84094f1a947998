//! Presigned POST against a form botocore 1.43 made (`generate_presigned_post` with its clock
//! set to 2026-03-14T15:09:26Z, path style, a session token): our signer writes the same
//! fields, and our verifier accepts that form as a browser would send it.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use slipstream_sign::verify::{CredentialKeys, PostUpload, Verifier};
use slipstream_sign::{Credentials, PolicyValue, Presigner, SigningTime, UrlBase};

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const TOKEN: &str = "IQoJb3JpZ2luX2VjEPT//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+example/token==";

/// botocore's `fields`, in its order.
const BOTOCORE: &[(&str, &str)] = &[
    ("acl", "private"),
    ("Content-Type", "image/jpeg"),
    ("key", "photos/${filename}"),
    ("x-amz-algorithm", "AWS4-HMAC-SHA256"),
    ("x-amz-credential", "AKIDEXAMPLE/20260314/us-east-1/s3/aws4_request"),
    ("x-amz-date", "20260314T150926Z"),
    ("x-amz-security-token", TOKEN),
    ("policy", "eyJleHBpcmF0aW9uIjogIjIwMjYtMDMtMTRUMTU6MjQ6MjZaIiwgImNvbmRpdGlvbnMiOiBbeyJhY2wiOiAicHJpdmF0ZSJ9LCBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sIFsiY29udGVudC1sZW5ndGgtcmFuZ2UiLCAxLCAxMDQ4NTc2XSwgeyJ4LWFtei1tZXRhLW5vdGUiOiAiXHUwMGZjIn0sIHsiYnVja2V0IjogImZvcm1zIn0sIFsic3RhcnRzLXdpdGgiLCAiJGtleSIsICJwaG90b3MvIl0sIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwgeyJ4LWFtei1jcmVkZW50aWFsIjogIkFLSURFWEFNUExFLzIwMjYwMzE0L3VzLWVhc3QtMS9zMy9hd3M0X3JlcXVlc3QifSwgeyJ4LWFtei1kYXRlIjogIjIwMjYwMzE0VDE1MDkyNloifSwgeyJ4LWFtei1zZWN1cml0eS10b2tlbiI6ICJJUW9KYjNKcFoybHVYMlZqRVBULy8vLy8vLy8vL3dFYUNYVnpMV1ZoYzNRdE1TSkhNRVVDSVFEK2V4YW1wbGUvdG9rZW49PSJ9XX0="),
    ("x-amz-signature", "51abc268d7b223979d6f750aaf1122b0ca1985568e6cbdd94dd7836bedd23cdb"),
];

fn credentials() -> Credentials {
    Credentials::new("AKIDEXAMPLE", SECRET, Some(TOKEN.to_owned())).unwrap()
}

fn at() -> SigningTime {
    SigningTime::parse_amz("20260314T150926Z").unwrap()
}

#[test]
fn presign_post_writes_botocores_fields() {
    let base = UrlBase {
        origin: "http://127.0.0.1:7070".into(),
        host: "127.0.0.1:7070".into(),
        path_prefix: "/forms/".into(),
    };
    let p = Presigner::new(base, "us-east-1", credentials()).unwrap();
    let fields = [("acl", "private"), ("Content-Type", "image/jpeg")]
        .map(|(n, v)| (n.to_owned(), v.to_owned()));
    let conditions = [
        PolicyValue::eq("acl", "private"),
        PolicyValue::starts_with("Content-Type", "image/"),
        PolicyValue::content_length_range(1, 1_048_576),
        PolicyValue::eq("x-amz-meta-note", "ü"),
    ];
    let form = p
        .presign_post(
            "forms",
            "photos/${filename}",
            &fields,
            &conditions,
            900,
            at(),
        )
        .unwrap();
    assert_eq!(form.url, "http://127.0.0.1:7070/forms");
    let got: Vec<(&str, &str)> = form
        .fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(got, BOTOCORE);
    assert!(
        !format!("{form:?}").contains("51abc268"),
        "Debug shows no signature"
    );
}

#[test]
fn the_verifier_accepts_botocores_form_as_a_browser_sends_it() {
    let keys = CredentialKeys::new([credentials()]);
    // The browser replaces `${filename}` and adds the note; field names in any case.
    let mut sent: Vec<(&str, &str)> = BOTOCORE.to_vec();
    sent[2].1 = "photos/cat.jpg";
    sent.push(("X-Amz-Meta-Note", "ü"));
    let form = PostUpload {
        bucket: "forms",
        fields: &sent,
        content_length: Some(2048),
    };
    let ok = Verifier::s3("us-east-1")
        .verify_post(&form, &keys, at().plus(899))
        .unwrap();
    assert_eq!(
        (ok.access_key_id.as_str(), ok.key.as_str()),
        ("AKIDEXAMPLE", "photos/cat.jpg")
    );
    let late = Verifier::s3("us-east-1")
        .verify_post(&form, &keys, at().plus(900))
        .unwrap_err();
    assert!(late.to_string().contains("Policy expired"), "{late}");
    sent.pop();
    let form = PostUpload {
        bucket: "forms",
        fields: &sent,
        content_length: Some(2048),
    };
    let missing = Verifier::s3("us-east-1")
        .verify_post(&form, &keys, at())
        .unwrap_err();
    assert!(missing.to_string().contains("x-amz-meta-note"), "{missing}");
}
