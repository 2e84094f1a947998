//! Web identity (STS), container (ECS), instance metadata (IMDSv2) and SSO portal credentials,
//! each served by a local test endpoint, a `credential_process` script and a caller's provider, then used for
//! real requests against the local versitygw; expiring credentials are fetched again before they
//! lapse, fresh ones are not.
// Test helpers panic on failure by design: that is how a test reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use slipstream_client::{
    ClientError, ClientOptions, CredentialSource, Expiring, ProvideCredentials, Resolved, S3Client,
};
use slipstream_s3::{AddressingStyle, Endpoint};

/// What the endpoint saw: `METHOD target` plus the headers that matter here.
type Log = Arc<Mutex<Vec<String>>>;

/// A one-response-per-connection HTTP server; `answer(request line, headers, body)` gives
/// (status, body).
fn serve(
    answer: impl Fn(&str, &[(String, String)], &str) -> (u16, String) + Send + 'static,
) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log: Log = Arc::default();
    let log2 = Arc::clone(&log);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                let (n, v) = h.split_once(':').unwrap();
                headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
            let len = header(&headers, "content-length").map_or(0, |n| n.parse().unwrap());
            let mut body = vec![0; len];
            std::io::Read::read_exact(&mut reader, &mut body).unwrap();
            let request = line.trim_end().trim_end_matches(" HTTP/1.1").to_owned();
            log2.lock().unwrap().push(request.clone());
            let (status, body) = answer(&request, &headers, &String::from_utf8(body).unwrap());
            let _ = write!(
                conn,
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, log)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The local server's credentials, as the endpoints hand them out.
fn keys() -> (String, String) {
    (
        std::env::var("AWS_ACCESS_KEY_ID").expect("run through `make test`"),
        std::env::var("AWS_SECRET_ACCESS_KEY").unwrap(),
    )
}

fn iso(t: SystemTime) -> String {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() as i64;
    let st = slipstream_sign::SigningTime::from_unix(secs).unwrap();
    let a = st.amz_date(); // YYYYMMDDTHHMMSSZ
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &a[0..4],
        &a[4..6],
        &a[6..8],
        &a[9..11],
        &a[11..13],
        &a[13..15]
    )
}

fn json(expires_in: Duration) -> String {
    let (id, secret) = keys();
    format!(
        r#"{{"Code":"Success","AccessKeyId":"{id}","SecretAccessKey":"{secret}","Expiration":"{}"}}"#,
        iso(SystemTime::now() + expires_in)
    )
}

fn client(source: CredentialSource) -> S3Client {
    let config = Resolved {
        credentials: source,
        region: std::env::var("SLIPSTREAM_TEST_REGION").unwrap(),
        endpoint: Some(
            Endpoint::parse(&std::env::var("SLIPSTREAM_TEST_ENDPOINT").unwrap()).unwrap(),
        ),
        addressing: AddressingStyle::Path,
        variants: Default::default(),
        credential_source: "test".into(),
        ca_bundle: None,
        region_set: None,
        proxies: None,
        max_attempts: None,
        max_bandwidth: None,
        transfer: Default::default(),
    };
    S3Client::new(&config, ClientOptions::default()).unwrap()
}

/// Two signed requests through `c`: both must be accepted by versitygw.
async fn use_it(c: &S3Client, bucket: &str) {
    c.create_bucket(bucket).await.unwrap();
    c.put_object(
        bucket,
        "k",
        bytes::Bytes::from_static(b"v"),
        Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(&c.get_bytes(bucket, "k", None).await.unwrap()[..], b"v");
}

fn count(log: &Log, prefix: &str) -> usize {
    log.lock()
        .unwrap()
        .iter()
        .filter(|l| l.starts_with(prefix))
        .count()
}

#[tokio::test]
async fn instance_metadata_v2_with_its_session_token() {
    let (url, log) = serve(|req, headers, _| match req {
        "PUT /latest/api/token"
            if header(headers, "x-aws-ec2-metadata-token-ttl-seconds").is_some() =>
        {
            (200, "SESSION".into())
        }
        r if header(headers, "x-aws-ec2-metadata-token") != Some("SESSION") => {
            (401, format!("no token for {r}"))
        }
        "GET /latest/meta-data/iam/security-credentials/" => (200, "web-role\n".into()),
        "GET /latest/meta-data/iam/security-credentials/web-role" => {
            (200, json(Duration::from_secs(3600)))
        }
        _ => (404, String::new()),
    });
    let c = client(CredentialSource::InstanceMetadata { endpoint: url });
    use_it(&c, "creds-imds").await;
    // Valid for an hour: fetched once for three requests.
    assert_eq!(
        count(
            &log,
            "GET /latest/meta-data/iam/security-credentials/web-role"
        ),
        1
    );
    assert_eq!(count(&log, "PUT /latest/api/token"), 1);
}

#[tokio::test]
async fn container_credentials_with_an_authorization_token_and_early_refresh() {
    let (url, log) = serve(
        |req, headers, _| match (req, header(headers, "authorization")) {
            ("GET /v2/credentials/abc", Some("Bearer secret-token")) => {
                (200, json(Duration::from_secs(120)))
            }
            _ => (403, String::new()),
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "Bearer secret-token\n").unwrap();
    let c = client(CredentialSource::Container {
        url: format!("{url}/v2/credentials/abc"),
        token: None,
        token_file: Some(token_file),
    });
    use_it(&c, "creds-ecs").await;
    // Two minutes left is inside the five-minute refresh window: fetched for every request.
    assert_eq!(count(&log, "GET /v2/credentials/abc"), 3);
    // A wrong token is an error that names the source.
    let bad = client(CredentialSource::Container {
        url: format!("{url}/v2/credentials/abc"),
        token: Some("Bearer wrong".into()),
        token_file: None,
    });
    let err = bad.create_bucket("creds-ecs-2").await.unwrap_err();
    assert!(
        err.to_string().contains("container credential endpoint"),
        "{err}"
    );
}

#[tokio::test]
async fn web_identity_through_sts() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "eyJ.oidc+token/=\n").unwrap();
    let (url, log) = serve(|req, headers, body| {
        // A form in the body, as botocore posts it: the token never in the URL.
        let ok = req == "POST /"
            && header(headers, "content-type")
                == Some("application/x-www-form-urlencoded; charset=utf-8")
            && body.starts_with("Action=AssumeRoleWithWebIdentity&")
            && body.contains("&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fweb&")
            && body.contains("&RoleSessionName=sess&")
            && body.ends_with("&WebIdentityToken=eyJ.oidc%2Btoken%2F%3D");
        if !ok {
            return (
                400,
                "<ErrorResponse><Error><Code>InvalidParameterValue</Code></Error></ErrorResponse>"
                    .into(),
            );
        }
        let (id, secret) = keys();
        let exp = iso(SystemTime::now() + Duration::from_secs(3600));
        (200, format!("<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>{id}</AccessKeyId><SecretAccessKey>{secret}</SecretAccessKey><SessionToken>ignored-by-versitygw</SessionToken><Expiration>{exp}</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"))
    });
    let c = client(CredentialSource::WebIdentity {
        token_file,
        role_arn: "arn:aws:iam::123456789012:role/web".into(),
        session_name: "sess".into(),
        sts_endpoint: url,
    });
    // STS credentials always carry a session token, which versitygw (without STS of its own)
    // refuses as InvalidToken: that refusal shows the request was signed with STS's answer.
    let err = c.create_bucket("creds-web").await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidToken"), "{err}");
    assert_eq!(count(&log, "POST /"), 1);
}

#[tokio::test]
async fn an_sso_profile_through_the_portal_with_the_cached_token() {
    // Set once the test refreshes: the portal then refuses the old token.
    let revoked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let revoked2 = Arc::clone(&revoked);
    let (url, log) = serve(move |req, headers, body| {
        if req == "POST /token" {
            // SSO OIDC CreateToken with the cached refresh token and client registration.
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            let ok = v["grantType"] == "refresh_token"
                && v["refreshToken"] == "refresh-1"
                && (v["clientId"] == "cid" && v["clientSecret"] == "csecret");
            return match ok {
                true => (200, r#"{"accessToken":"refreshed-access-token","expiresIn":28800,"refreshToken":"refresh-2","tokenType":"Bearer"}"#.into()),
                false => (400, r#"{"error":"invalid_grant"}"#.into()),
            };
        }
        let token = header(headers, "x-amz-sso_bearer_token");
        let ok = req == "GET /federation/credentials?account_id=111122223333&role_name=S3%20Reader"
            && match token {
                Some("cached-access-token") => !revoked2.load(std::sync::atomic::Ordering::SeqCst),
                Some("refreshed-access-token") => true,
                _ => false,
            };
        if !ok {
            return (
                401,
                r#"{"message":"Session token not found or invalid"}"#.into(),
            );
        }
        // Real role credentials carry a session token, which versitygw (no STS of its own)
        // would refuse; without one the request below shows they were used.
        let (id, secret) = keys();
        let ms = (SystemTime::now() + Duration::from_secs(3600))
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let body = format!(
            r#"{{"roleCredentials":{{"accessKeyId":"{id}","secretAccessKey":"{secret}","expiration":{ms}}}}}"#
        );
        (200, body)
    });
    let home = tempfile::tempdir().unwrap();
    let aws = home.path().join(".aws");
    std::fs::create_dir_all(aws.join("sso/cache")).unwrap();
    std::fs::write(
        aws.join("config"),
        "[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = S3 Reader\n\
         [sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n",
    )
    .unwrap();
    // As `aws sso login` leaves it: named by the SHA-1 of the session's name.
    let token = aws.join("sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json");
    // `refresh`: the refresh token the CLI keeps with its client registration, if any.
    let write_token = |expires: SystemTime, refresh: Option<&str>| {
        let registration = refresh.map_or(String::new(), |r| {
            let until = iso(SystemTime::now() + Duration::from_secs(86_400));
            format!(r#","clientId":"cid","clientSecret":"csecret","refreshToken":"{r}","registrationExpiresAt":"{until}""#)
        });
        let json = format!(
            r#"{{"startUrl":"https://corp.awsapps.com/start","region":"eu-west-1","accessToken":"cached-access-token","expiresAt":"{}"{registration}}}"#,
            iso(expires)
        );
        std::fs::write(&token, json).unwrap();
    };
    write_token(SystemTime::now() + Duration::from_secs(3600), None);
    let env = slipstream_client::Env::new(
        &[
            ("AWS_PROFILE", "dev"),
            ("AWS_ENDPOINT_URL_SSO", &url),
            ("AWS_ENDPOINT_URL_SSO_OIDC", &url),
        ],
        Some(home.path().into()),
    );
    let resolved = slipstream_client::resolve(&env, &Default::default()).unwrap();
    assert!(
        resolved.credential_source.contains("SSO"),
        "{}",
        resolved.credential_source
    );
    let c = client(resolved.credentials.clone());
    use_it(&c, "creds-sso").await;
    assert_eq!(count(&log, "GET /federation/credentials"), 1);
    // An expired login without a refresh token is an error that says what to run, before any
    // request to the portal.
    write_token(SystemTime::now() - Duration::from_secs(60), None);
    let err = client(resolved.credentials.clone())
        .create_bucket("creds-sso-2")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("aws sso login --profile dev"),
        "{err}"
    );
    assert_eq!(count(&log, "GET /federation/credentials"), 1);
    // Within 15 minutes of expiry, with a refresh token: refreshed through SSO OIDC, the new
    // token used (the old one is refused now) and written back with the CLI's fields kept.
    write_token(
        SystemTime::now() + Duration::from_secs(300),
        Some("refresh-1"),
    );
    revoked.store(true, std::sync::atomic::Ordering::SeqCst);
    use_it(&client(resolved.credentials.clone()), "creds-sso-3").await;
    assert_eq!(count(&log, "POST /token"), 1);
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&token).unwrap()).unwrap();
    assert_eq!(saved["accessToken"], "refreshed-access-token");
    assert_eq!(saved["refreshToken"], "refresh-2");
    assert_eq!(saved["startUrl"], "https://corp.awsapps.com/start");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&token).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the token file stays private");
    // A refresh the server refuses, on an expired token: the same clear error.
    write_token(SystemTime::now() - Duration::from_secs(60), Some("revoked"));
    let err = client(resolved.credentials)
        .create_bucket("creds-sso-4")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("aws sso login --profile dev"),
        "{err}"
    );
    assert_eq!(count(&log, "POST /token"), 2);
}

#[tokio::test]
async fn credential_process_is_run_again_before_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let (script, runs) = (dir.path().join("helper"), dir.path().join("runs"));
    let (id, secret) = keys();
    let exp = iso(SystemTime::now() + Duration::from_secs(120));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nprintf '%s' '{{\"Version\": 1, \"AccessKeyId\": \"{id}\", \"SecretAccessKey\": \"{secret}\", \"Expiration\": \"{exp}\"}}'\n",
            runs.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let c = client(CredentialSource::Process {
        command: format!("'{}' 'an arg'", script.display()),
    });
    use_it(&c, "creds-process").await;
    // Two minutes left is inside the refresh window: run for each of the three requests, with
    // the argument as one word.
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "an arg\nan arg\nan arg\n"
    );
    let failing = client(CredentialSource::Process {
        command: "sh -c 'echo token expired, run aws sso login >&2; exit 1'".into(),
    });
    let err = failing.create_bucket("creds-process-2").await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("credential_process") && text.contains("aws sso login"),
        "{text}"
    );
}

/// Hands out the test keys, valid for an hour, and counts the calls.
#[derive(Debug, Default)]
struct Counting(Mutex<u32>);

impl ProvideCredentials for Counting {
    fn credentials(&self) -> Result<Expiring, ClientError> {
        *self.0.lock().unwrap() += 1;
        let (id, secret) = keys();
        Ok(Expiring {
            credentials: slipstream_sign::Credentials::new(id, secret, None).unwrap(),
            expires: Some(SystemTime::now() + Duration::from_secs(3600)),
        })
    }
}

#[tokio::test]
async fn a_callers_provider_is_asked_once_while_its_credentials_are_fresh() {
    let provider = Arc::new(Counting::default());
    let c = client(CredentialSource::Provider(provider.clone()));
    use_it(&c, "creds-provider").await;
    assert_eq!(*provider.0.lock().unwrap(), 1);
}
