//! `slipstream verify-url`: is this presigned URL valid now, and if not, why?

use std::time::SystemTime;

use slipstream_client::{resolve, Env, Overrides};
use slipstream_sign::verify::{CredentialKeys, Incoming, Verifier, VerifyError};
use slipstream_sign::SigningTime;

use crate::args::VerifyUrlArgs;
use crate::Failure;

pub fn run(a: &VerifyUrlArgs) -> Result<(), Failure> {
    let c = &a.connection;
    let overrides = Overrides {
        profile: c.profile.clone(),
        region: None,
        endpoint_url: None,
        addressing: None,
        ca_bundle: None,
        region_set: None,
        no_sign_request: false,
        proxies: None,
        variants: Default::default(),
    };
    let resolved =
        resolve(&Env::from_process(), &overrides).map_err(|e| Failure::usage(e.to_string()))?;
    let now = match &a.at {
        Some(t) => SigningTime::parse_amz(t),
        None => SigningTime::from_system_time(SystemTime::now()),
    }
    .map_err(|e| Failure::usage(e.to_string()))?;

    let (scheme, rest) = a
        .url
        .split_once("://")
        .ok_or_else(|| Failure::usage("the URL must start with http:// or https://"))?;
    let (authority, target) = rest
        .find('/')
        .map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let default_port = if scheme.eq_ignore_ascii_case("https") {
        ":443"
    } else {
        ":80"
    };
    let host = authority.strip_suffix(default_port).unwrap_or(authority);
    let target = target.split('#').next().unwrap_or(target);
    let mut headers: Vec<(&str, &str)> = vec![("host", host)];
    for h in &a.headers {
        let (n, v) = h
            .split_once(':')
            .ok_or_else(|| Failure::usage(format!("--header {h:?} must be NAME:VALUE")))?;
        headers.push((n.trim(), v.trim()));
    }

    // The server's region: --region if given, else the one the URL claims (SigV4), else the
    // configured one (SigV4A, whose URLs carry a region set instead).
    let region = c
        .region
        .clone()
        .or_else(|| scope_region(target))
        .unwrap_or_else(|| resolved.region.clone());
    let keys = CredentialKeys::new([crate::credentials_now(&resolved)?]);
    let req = Incoming {
        method: &a.method.to_ascii_uppercase(),
        target,
        headers: &headers,
        body_sha256: None,
    };
    match Verifier::s3(&region).verify(&req, &keys, now) {
        Ok(v) => {
            println!(
                "valid: {} {} signed by {} at {}",
                req.method,
                host,
                v.access_key_id(),
                v.signed_at.amz_date()
            );
            if let Some(end) = v.expires_at {
                println!(
                    "expires at {} (in {} s)",
                    end.amz_date(),
                    end.unix() - now.unix()
                );
            }
            Ok(())
        }
        Err(e) => {
            println!("invalid: {} (HTTP {}): {e}", e.s3_code(), e.http_status());
            if let VerifyError::InvalidAccessKeyId = e {
                println!(
                    "the URL's access key is not the one configured here ({})",
                    resolved.credential_source
                );
            }
            if let VerifyError::SignatureDoesNotMatch {
                canonical_request,
                string_to_sign,
            } = &e
            {
                println!("\ncanonical request computed here:\n{canonical_request}\n\nstring to sign:\n{string_to_sign}");
            }
            Err(Failure::input(String::new()))
        }
    }
}

/// The region of a SigV4 URL's `X-Amz-Credential` (`KEY%2FDATE%2FREGION%2FSERVICE%2Faws4_request`).
fn scope_region(target: &str) -> Option<String> {
    let query = target.split_once('?')?.1;
    let cred = query
        .split('&')
        .find_map(|p| p.strip_prefix("X-Amz-Credential="))?;
    let decoded = String::from_utf8(slipstream_sign::encode::percent_decode(cred)).ok()?;
    let parts: Vec<&str> = decoded.split('/').collect();
    (parts.len() == 5).then(|| parts[2].to_owned())
}
