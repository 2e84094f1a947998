//! The AWS SigV4 and SigV4A test suite (aws-c-auth's `v4/` and `v4a/`), as shipped inside the
//! `aws-sigv4` crate on crates.io (`aws-signing-test-suite/`, Apache-2.0).
//!
//! The lock file pins that crate for the signing benchmarks' anchors, so cargo already fetches it
//! for this workspace; `cargo metadata` says where it is unpacked. Nothing outside the repository
//! and the registry is read. `SLIPSTREAM_SIGNING_SUITE=DIR` points at another copy of the suite.
//!
//! One test per case and form, so a failure names the case. If the suite cannot be found every
//! test fails (a skipped vector test would pass silently), and [`every_suite_case_is_listed`]
//! fails when the suite holds a case that is neither run nor excluded with a reason.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use slipstream_sign::{
    Credentials, PathEncoding, PayloadHash, Request, SessionTokenMode, Settings, Signer,
    SigningTime,
};

/// The crate that ships the suite, and the folder inside it.
const SUITE_CRATE: &str = "aws-sigv4";
const SUITE_FOLDER: &str = "aws-signing-test-suite";

/// Cases in the suite that are not run, with the reason. Every other case folder must be in
/// [`CASES`] (checked by [`every_suite_case_is_listed`]).
const EXCLUDED: &[(&str, &str, &str)] = &[
    (
        "v4",
        "double-url-encode",
        "smithy-rs's own case: no context.json, and it tests double encoding for non-S3 services",
    ),
    (
        "v4",
        "double-encode-path",
        "smithy-rs's own case: no context.json, and it tests double encoding for non-S3 services",
    ),
    // In aws-c-auth's own copy (SLIPSTREAM_SIGNING_SUITE), absent from aws-sigv4's.
    (
        "v4a",
        "get-vanilla-query-order-key",
        "aws-c-auth's folder has no expected outputs",
    ),
    (
        "v4a",
        "get-vanilla-query-order-value",
        "aws-c-auth's folder has no expected outputs",
    ),
];

fn suite_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("SLIPSTREAM_SIGNING_SUITE")
            .map(PathBuf::from)
            .unwrap_or_else(|| crate_dir(SUITE_CRATE).join(SUITE_FOLDER));
        assert!(
            dir.join("v4").is_dir() && dir.join("v4a").is_dir(),
            "the AWS signing test suite is missing at {}: it is required, not optional",
            dir.display()
        );
        dir
    })
}

/// Where cargo unpacked `name`, a package of this workspace's lock file (fetched if need be).
fn crate_dir(name: &str) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--manifest-path",
        ])
        .arg(&workspace)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo metadata to find {name}: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata failed while looking for {name} (the AWS signing test suite): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let manifest = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["manifest_path"].as_str())
        .unwrap_or_else(|| {
            panic!("{name} is not in the lock file: the signing suite comes from it")
        });
    Path::new(manifest).parent().unwrap().to_path_buf()
}

fn read(set: &str, case: &str, file: &str) -> String {
    let path = suite_dir().join(set).join(case).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A parsed `request.txt`: the request line's target may contain spaces, header values may
/// continue on lines that start with whitespace.
struct RawRequest {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn parse_request(text: &str) -> RawRequest {
    let (head, body) = text.split_once("\n\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let line = lines.next().unwrap();
    let (method, rest) = line.split_once(' ').unwrap();
    let target = rest.rsplit_once(' ').unwrap().0;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers: Vec<(String, String)> = Vec::new();
    for l in lines {
        if l.starts_with(' ') || l.starts_with('\t') {
            let last = headers.last_mut().unwrap();
            last.1.push('\n');
            last.1.push_str(l);
        } else {
            let (n, v) = l.split_once(':').unwrap();
            headers.push((n.to_owned(), v.to_owned()));
        }
    }
    RawRequest {
        method: method.into(),
        path: path.into(),
        query: query.into(),
        headers,
        body: body.as_bytes().to_vec(),
    }
}

struct Case {
    req: RawRequest,
    signer: Signer,
    time: SigningTime,
    payload: PayloadHash,
    expires: u64,
}

fn load(set: &str, case: &str) -> Case {
    let ctx: serde_json::Value = serde_json::from_str(&read(set, case, "context.json")).unwrap();
    let c = &ctx["credentials"];
    let creds = Credentials::new(
        c["access_key_id"].as_str().unwrap(),
        c["secret_access_key"].as_str().unwrap(),
        c["token"].as_str().map(str::to_owned),
    )
    .unwrap();
    let sign_body = ctx["sign_body"].as_bool().unwrap();
    let settings = Settings {
        path: PathEncoding::Encode {
            normalize: ctx["normalize"].as_bool().unwrap(),
        },
        session_token: if ctx["omit_session_token"].as_bool() == Some(true) {
            SessionTokenMode::AddedAfterSigning
        } else {
            SessionTokenMode::Signed
        },
        content_sha256_header: sign_body,
    };
    let mut req = parse_request(&read(set, case, "request.txt"));
    // aws-sigv4's copy writes this one request line percent-encoded (`/example%20space/`: a raw
    // space cannot stand in a request line), where aws-c-auth's has the raw space its expected
    // outputs are computed from; the suite's signer is given the unencoded path.
    if set == "v4" && case == "get-space-normalized" {
        req.path = req.path.replace("%20", " ");
    }
    let payload = if sign_body {
        PayloadHash::of(&req.body)
    } else {
        PayloadHash::of(b"")
    };
    Case {
        signer: if set == "v4a" {
            // The suite's region is SigV4A's region set.
            Signer::new_v4a(
                creds,
                ctx["region"].as_str().unwrap(),
                ctx["service"].as_str().unwrap(),
                settings,
            )
            .unwrap()
        } else {
            Signer::new(
                creds,
                ctx["region"].as_str().unwrap(),
                ctx["service"].as_str().unwrap(),
                settings,
            )
            .unwrap()
        },
        time: SigningTime::parse_rfc3339(ctx["timestamp"].as_str().unwrap()).unwrap(),
        expires: ctx["expiration_in_seconds"].as_u64().unwrap(),
        payload,
        req,
    }
}

/// Loads `case` of `set` and calls `f` with it and its request.
fn with_case<R>(set: &str, case: &str, f: impl FnOnce(&Case, &Request<'_>) -> R) -> R {
    let c = load(set, case);
    let headers: Vec<(&str, &str)> = c
        .req
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let req = Request {
        method: &c.req.method,
        path: &c.req.path,
        query: &c.req.query,
        headers: &headers,
    };
    f(&c, &req)
}

/// The uncompressed point from `public-key.json`.
fn public_key(case: &str) -> Vec<u8> {
    let json: serde_json::Value =
        serde_json::from_str(&read("v4a", case, "public-key.json")).unwrap();
    let hex = format!(
        "04{}{}",
        json["X"].as_str().unwrap(),
        json["Y"].as_str().unwrap()
    );
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// SigV4 signatures are deterministic and compared; SigV4A ones are random and verified, ours and
/// the suite's own (both the `*-signature.txt` one and the one inside the signed request).
fn check_signature(
    set: &str,
    case: &str,
    form: &str,
    string_to_sign: &str,
    ours: &str,
    in_signed_request: &str,
) {
    let expected = read(set, case, &format!("{form}-signature.txt"));
    if set == "v4" {
        assert_eq!(ours, expected.trim(), "{case}: signature");
        return;
    }
    let key = public_key(case);
    for (what, sig) in [
        ("ours", ours),
        ("the suite's", expected.trim()),
        ("the signed request's", in_signed_request),
    ] {
        assert!(
            slipstream_sign::v4a::verify(&key, string_to_sign.as_bytes(), sig),
            "{case}: {what} signature does not verify"
        );
    }
}

fn check_header(set: &str, case: &str) {
    let sig = with_case(set, case, |c, req| {
        c.signer.sign_headers(req, &c.payload, c.time).unwrap()
    });
    assert_eq!(
        sig.canonical_request,
        read(set, case, "header-canonical-request.txt"),
        "{case}: canonical request"
    );
    assert_eq!(
        sig.string_to_sign,
        read(set, case, "header-string-to-sign.txt"),
        "{case}: string to sign"
    );
    let signed = read(set, case, "header-signed-request.txt");
    let theirs = signed
        .lines()
        .find_map(|l| l.strip_prefix("Authorization:"))
        .unwrap();
    let ours = &sig.headers.last().unwrap().1;
    // Everything up to the signature is deterministic in both algorithms.
    let (ours_head, _) = ours.split_once("Signature=").unwrap();
    let (theirs_head, theirs_sig) = theirs.split_once("Signature=").unwrap();
    assert_eq!(ours_head, theirs_head, "{case}: Authorization");
    check_signature(
        set,
        case,
        "header",
        &sig.string_to_sign,
        &sig.signature,
        theirs_sig,
    );
}

fn check_query(set: &str, case: &str) {
    let sig = with_case(set, case, |c, req| {
        c.signer
            .presign(req, c.expires, &c.payload, c.time)
            .unwrap()
    });
    assert_eq!(
        sig.canonical_request,
        read(set, case, "query-canonical-request.txt"),
        "{case}: canonical request"
    );
    assert_eq!(
        sig.string_to_sign,
        read(set, case, "query-string-to-sign.txt"),
        "{case}: string to sign"
    );
    // The suite's signed request lists the parameters in another order: compare them as sets.
    let signed = read(set, case, "query-signed-request.txt");
    let target = signed
        .lines()
        .next()
        .unwrap()
        .split_once(' ')
        .unwrap()
        .1
        .rsplit_once(' ')
        .unwrap()
        .0;
    let theirs: BTreeSet<&str> = target
        .split_once('?')
        .map(|(_, q)| q.split('&').collect())
        .unwrap_or_default();
    let theirs_sig = theirs
        .iter()
        .find_map(|p| p.strip_prefix("X-Amz-Signature="))
        .unwrap();
    let ours_text = sig.query_string("");
    let ours: BTreeSet<&str> = ours_text
        .split('&')
        .filter(|p| !p.starts_with("X-Amz-Signature="))
        .collect();
    assert!(
        ours.is_subset(&theirs),
        "{case}: {ours:?} not within {theirs:?}"
    );
    check_signature(
        set,
        case,
        "query",
        &sig.string_to_sign,
        &sig.signature,
        theirs_sig,
    );
}

/// The suite's signed request (ours for v4 is byte-identical; for v4a it is aws-c-auth's own
/// signature) must pass the verifier, with the same canonicalization settings.
fn check_verify(set: &str, form: &str, case: &str) {
    use slipstream_sign::verify::{CredentialKeys, Incoming, Verifier};
    let c = load(set, case);
    let ctx: serde_json::Value = serde_json::from_str(&read(set, case, "context.json")).unwrap();
    let signed = parse_request(&read(set, case, &format!("{form}-signed-request.txt")));
    let target = if signed.query.is_empty() {
        signed.path.clone()
    } else {
        format!("{}?{}", signed.path, signed.query)
    };
    let headers: Vec<(&str, &str)> = signed
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let mut verifier = Verifier::new(
        ctx["region"].as_str().unwrap(),
        ctx["service"].as_str().unwrap(),
        PathEncoding::Encode {
            normalize: ctx["normalize"].as_bool().unwrap(),
        },
    );
    if ctx["omit_session_token"].as_bool() == Some(true) {
        verifier = verifier.session_token(SessionTokenMode::AddedAfterSigning);
    }
    let keys = CredentialKeys::new([c.signer.credentials().clone()]);
    let req = Incoming {
        method: &signed.method,
        target: &target,
        headers: &headers,
        body_sha256: Some(c.payload.as_str()),
    };
    let verified = verifier
        .verify(&req, &keys, c.time)
        .unwrap_or_else(|e| panic!("{set}/{case} {form}: {e} ({e:?})"));
    assert_eq!(verified.presigned, form == "query");
    // A changed method must not verify.
    let other = Incoming {
        method: if signed.method == "GET" { "PUT" } else { "GET" },
        ..req
    };
    assert!(
        verifier.verify(&other, &keys, c.time).is_err(),
        "{set}/{case} {form}: a changed method verified"
    );
}

macro_rules! suite {
    ($($name:ident => $case:literal,)*) => {
        mod v4 {
            mod header { $( #[test] fn $name() { crate::check_header("v4", $case) } )* }
            mod query { $( #[test] fn $name() { crate::check_query("v4", $case) } )* }
            mod verify_header { $( #[test] fn $name() { crate::check_verify("v4", "header", $case) } )* }
            mod verify_query { $( #[test] fn $name() { crate::check_verify("v4", "query", $case) } )* }
        }
        mod v4a {
            mod header { $( #[test] fn $name() { crate::check_header("v4a", $case) } )* }
            mod query { $( #[test] fn $name() { crate::check_query("v4a", $case) } )* }
            mod verify_header { $( #[test] fn $name() { crate::check_verify("v4a", "header", $case) } )* }
            mod verify_query { $( #[test] fn $name() { crate::check_verify("v4a", "query", $case) } )* }
        }
        const CASES: &[&str] = &[$($case),*];
    };
}
suite! {
    get_header_key_duplicate => "get-header-key-duplicate",
    get_header_value_multiline => "get-header-value-multiline",
    get_header_value_order => "get-header-value-order",
    get_header_value_trim => "get-header-value-trim",
    get_relative_normalized => "get-relative-normalized",
    get_relative_relative_normalized => "get-relative-relative-normalized",
    get_relative_relative_unnormalized => "get-relative-relative-unnormalized",
    get_relative_unnormalized => "get-relative-unnormalized",
    get_slash_dot_slash_normalized => "get-slash-dot-slash-normalized",
    get_slash_dot_slash_unnormalized => "get-slash-dot-slash-unnormalized",
    get_slash_normalized => "get-slash-normalized",
    get_slash_pointless_dot_normalized => "get-slash-pointless-dot-normalized",
    get_slash_pointless_dot_unnormalized => "get-slash-pointless-dot-unnormalized",
    get_slash_unnormalized => "get-slash-unnormalized",
    get_slashes_normalized => "get-slashes-normalized",
    get_slashes_unnormalized => "get-slashes-unnormalized",
    get_space_normalized => "get-space-normalized",
    get_space_unnormalized => "get-space-unnormalized",
    get_unreserved => "get-unreserved",
    get_utf8 => "get-utf8",
    get_vanilla => "get-vanilla",
    get_vanilla_empty_query_key => "get-vanilla-empty-query-key",
    get_vanilla_query => "get-vanilla-query",
    get_vanilla_query_order_encoded => "get-vanilla-query-order-encoded",
    get_vanilla_query_order_key_case => "get-vanilla-query-order-key-case",
    get_vanilla_query_unreserved => "get-vanilla-query-unreserved",
    get_vanilla_utf8_query => "get-vanilla-utf8-query",
    get_vanilla_with_session_token => "get-vanilla-with-session-token",
    post_header_key_case => "post-header-key-case",
    post_header_key_sort => "post-header-key-sort",
    post_header_value_case => "post-header-value-case",
    post_sts_header_after => "post-sts-header-after",
    post_sts_header_before => "post-sts-header-before",
    post_vanilla => "post-vanilla",
    post_vanilla_empty_query_value => "post-vanilla-empty-query-value",
    post_vanilla_query => "post-vanilla-query",
    post_x_www_form_urlencoded => "post-x-www-form-urlencoded",
    post_x_www_form_urlencoded_parameters => "post-x-www-form-urlencoded-parameters",
}

/// Every case folder in the suite is run or excluded with a reason, so a new case cannot be
/// skipped silently (an excluded case may be absent: the two copies of the suite differ).
#[test]
fn every_suite_case_is_listed() {
    let listed: BTreeSet<String> = CASES.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(listed.len(), 38);
    for set in ["v4", "v4a"] {
        let excluded: BTreeSet<String> = EXCLUDED
            .iter()
            .filter(|(s, _, _)| *s == set)
            .map(|(_, case, _)| (*case).to_owned())
            .collect();
        let present: BTreeSet<String> = std::fs::read_dir(suite_dir().join(set))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let unknown: Vec<&String> = present
            .difference(&listed)
            .filter(|c| !excluded.contains(*c))
            .collect();
        assert!(
            unknown.is_empty(),
            "{set}: cases neither run nor excluded: {unknown:?}"
        );
        let missing: Vec<&String> = listed.difference(&present).collect();
        assert!(
            missing.is_empty(),
            "{set}: listed cases missing from the suite: {missing:?}"
        );
        for case in &listed {
            let dir = suite_dir().join(set).join(case);
            for file in [
                "context.json",
                "request.txt",
                "header-canonical-request.txt",
            ] {
                assert!(dir.join(file).is_file(), "{set}/{case}: no {file}");
            }
        }
    }
}
