//! Signing a general HTTP request: the `Authorization` header form and the query-string form.
//!
//! [`Signer`] owns the credentials and the per-day key cache. For presigning many S3 URLs use
//! [`crate::Presigner`], which builds the same canonical request from precomputed parts.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::algorithm::Algorithm;
use crate::canonical::{
    build_canonical_request, canonical_headers, canonical_uri, push_canonical_headers, split_query,
    PathEncoding, Request,
};
use crate::encode::encode_query;
use crate::string_to_sign::string_to_sign;
use crate::{ChunkSigner, Credentials, Error, PayloadHash, SigningKey, SigningTime};

/// Longest presigned-URL lifetime S3 accepts: 7 days.
pub const MAX_EXPIRES: u64 = 604_800;

/// Whether the session token is part of what is signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SessionTokenMode {
    /// The token is a signed header or query parameter (S3 and almost every service).
    #[default]
    Signed,
    /// The token is added after signing, unsigned (a few services, and one suite case).
    AddedAfterSigning,
}

/// Signing settings that differ between services.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// How the path becomes the canonical URI.
    pub path: PathEncoding,
    /// Whether the token is signed.
    pub session_token: SessionTokenMode,
    /// Send and sign `x-amz-content-sha256` (S3 requires it on every header-signed request).
    pub content_sha256_header: bool,
}

impl Settings {
    /// S3: paths verbatim, `x-amz-content-sha256` sent.
    pub const S3: Settings = Settings {
        path: PathEncoding::AsSent,
        session_token: SessionTokenMode::Signed,
        content_sha256_header: true,
    };
}

/// A signer for one set of credentials, service, and region (SigV4) or region set (SigV4A).
pub struct Signer {
    credentials: Credentials,
    algorithm: Algorithm,
    service: String,
    settings: Settings,
}

/// The result of header signing: headers to add to the request, and the intermediate texts.
#[derive(Clone)]
pub struct HeaderSignature {
    /// Headers the caller must send, `authorization` last: `x-amz-date`, then
    /// `x-amz-security-token` and `x-amz-content-sha256` when they apply.
    pub headers: Vec<(&'static str, String)>,
    /// The canonical request that was signed (useful when a server disagrees).
    pub canonical_request: String,
    /// The string that was signed.
    pub string_to_sign: String,
    /// The hex signature.
    pub signature: String,
}

/// The result of query signing: parameters to append to the request's query string.
#[derive(Clone)]
pub struct QuerySignature {
    /// `X-Amz-*` parameters, encoded, in the order botocore appends them; `X-Amz-Signature` last.
    pub params: Vec<(&'static str, String)>,
    /// The canonical request that was signed.
    pub canonical_request: String,
    /// The string that was signed.
    pub string_to_sign: String,
    /// The hex signature.
    pub signature: String,
}

impl QuerySignature {
    /// `query` (the request's own, possibly empty) followed by the signing parameters.
    pub fn query_string(&self, query: &str) -> String {
        let mut s = String::from(query);
        for (k, v) in &self.params {
            if !s.is_empty() {
                s.push('&');
            }
            s.push_str(k);
            s.push('=');
            s.push_str(v);
        }
        s
    }
}

impl Signer {
    /// A SigV4 signer; region and service are checked here so signing cannot fail on them later.
    pub fn new(
        credentials: Credentials,
        region: &str,
        service: &str,
        settings: Settings,
    ) -> Result<Self, Error> {
        let algorithm = Algorithm::v4(region, service)?;
        Ok(Self {
            credentials,
            algorithm,
            service: service.to_owned(),
            settings,
        })
    }

    /// A SigV4A signer for `region_set` (`us-east-1,us-west-2`, `us-*` or `*`). Derives the
    /// ECDSA key now (about 50 µs), once for the signer's life.
    pub fn new_v4a(
        credentials: Credentials,
        region_set: &str,
        service: &str,
        settings: Settings,
    ) -> Result<Self, Error> {
        let algorithm = Algorithm::v4a(&credentials, region_set, service)?;
        Ok(Self {
            credentials,
            algorithm,
            service: service.to_owned(),
            settings,
        })
    }

    /// The credentials this signer uses.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The service requests are signed for (`s3`).
    pub fn service(&self) -> &str {
        &self.service
    }

    /// The SigV4A region set signed for; `None` for SigV4.
    pub fn region_set(&self) -> Option<&str> {
        self.algorithm.region_set()
    }

    pub(crate) fn algorithm(&self) -> &Algorithm {
        &self.algorithm
    }

    /// The SigV4 key for `time`'s day, from the cache (for [`crate::ChunkSigner`]); `None` for SigV4A.
    pub fn signing_key(&self, time: SigningTime) -> Option<SigningKey> {
        self.algorithm
            .signing_key(&self.credentials, time, &self.service)
    }

    /// The SigV4A public key (uncompressed P-256 point); `None` for SigV4.
    pub fn public_key(&self) -> Option<&[u8]> {
        match &self.algorithm {
            Algorithm::V4a { key, .. } => Some(key.public_key()),
            Algorithm::V4 { .. } => None,
        }
    }

    /// The signer of an aws-chunked body whose headers were signed at `time` with
    /// `seed_signature` (the [`HeaderSignature::signature`]), for either algorithm.
    pub fn chunk_signer(
        &self,
        time: SigningTime,
        seed_signature: &str,
    ) -> Result<ChunkSigner, Error> {
        match &self.algorithm {
            Algorithm::V4 { region, keys } => {
                let key = keys.key(&self.credentials, time, region, &self.service);
                ChunkSigner::new(&key, time, region, &self.service, seed_signature)
            }
            Algorithm::V4a { key, .. } => {
                ChunkSigner::new_v4a(Arc::clone(key), time, &self.service, seed_signature)
            }
        }
    }

    /// Signs `req` for the `Authorization` header. `req.headers` must include `host`.
    pub fn sign_headers(
        &self,
        req: &Request<'_>,
        payload: &PayloadHash,
        time: SigningTime,
    ) -> Result<HeaderSignature, Error> {
        let v4a = matches!(self.algorithm, Algorithm::V4a { .. });
        if payload.chunks_signed_with_v4a().is_some_and(|p| p != v4a) {
            return Err(Error::InvalidHeader(format!(
                "{} chunks cannot be signed by a {} signer",
                payload.as_str(),
                self.algorithm.name()
            )));
        }
        let scope = self.algorithm.scope(time, &self.service)?;
        // Room for all five: this runs per request at the edge. `x-amz-date` is first, and the
        // signature below reads it from here (no copy).
        let mut added: Vec<(&'static str, String)> = Vec::with_capacity(5);
        added.push(("x-amz-date", time.amz_date()));
        if let Some(set) = self.algorithm.region_set() {
            added.push(("x-amz-region-set", set.to_owned()));
        }
        let token = self.credentials.session_token();
        if let (Some(t), SessionTokenMode::Signed) = (token, self.settings.session_token) {
            added.push(("x-amz-security-token", t.to_owned()));
        }
        if self.settings.content_sha256_header {
            added.push(("x-amz-content-sha256", payload.as_str().to_owned()));
        }
        let (cr, signed, sts, signature) = {
            // The request's own values of the headers added are replaced, not repeated; on the
            // stack, as this runs per request at the edge and in the client.
            let mut all: SmallVec<[(&str, &str); 16]> = req
                .headers
                .iter()
                .filter(|(n, _)| !added.iter().any(|(a, _)| n.eq_ignore_ascii_case(a)))
                .copied()
                .collect();
            all.extend(added.iter().map(|(n, v)| (*n, v.as_str())));
            let amz_date = added.first().map_or("", |(_, date)| date.as_str());
            self.sign_parts(
                req,
                &[],
                |out| push_canonical_headers(out, &all),
                payload,
                time,
                amz_date,
                &scope,
            )?
        };
        if let (Some(t), SessionTokenMode::AddedAfterSigning) = (token, self.settings.session_token)
        {
            added.push(("x-amz-security-token", t.to_owned()));
        }
        // `concat` sizes the string once (signed per request by the edge).
        let authorization = [
            self.algorithm.name(),
            " Credential=",
            self.credentials.access_key_id(),
            "/",
            &scope,
            ", SignedHeaders=",
            &cr[signed],
            ", Signature=",
            &signature,
        ]
        .concat();
        added.push(("authorization", authorization));
        Ok(HeaderSignature {
            headers: added,
            canonical_request: cr,
            string_to_sign: sts,
            signature,
        })
    }

    /// Signs `req` in the query-string (presigned URL) form, valid for `expires_in` seconds.
    pub fn presign(
        &self,
        req: &Request<'_>,
        expires_in: u64,
        payload: &PayloadHash,
        time: SigningTime,
    ) -> Result<QuerySignature, Error> {
        check_expiry(expires_in)?;
        let amz_date = time.amz_date();
        let scope = self.algorithm.scope(time, &self.service)?;
        let (headers, signed) = canonical_headers(req.headers)?;
        let mut params: Vec<(&'static str, String)> = vec![
            ("X-Amz-Algorithm", self.algorithm.name().to_owned()),
            (
                "X-Amz-Credential",
                encode_query(&format!("{}/{scope}", self.credentials.access_key_id())),
            ),
            ("X-Amz-Date", amz_date.clone()),
            ("X-Amz-Expires", expires_in.to_string()),
            ("X-Amz-SignedHeaders", encode_query(&signed)),
        ];
        if let Some(set) = self.algorithm.region_set() {
            params.push(("X-Amz-Region-Set", encode_query(set)));
        }
        let token = self.credentials.session_token().map(encode_query);
        if let (Some(t), SessionTokenMode::Signed) = (&token, self.settings.session_token) {
            params.push(("X-Amz-Security-Token", t.clone()));
        }
        let extra: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let (cr, _, sts, signature) = self.sign_parts(
            req,
            &extra,
            |out| {
                for part in [&*headers, "\n"] {
                    out.push_str(part);
                }
                let start = out.len();
                out.push_str(&signed);
                Ok(start..out.len())
            },
            payload,
            time,
            &amz_date,
            &scope,
        )?;
        if let (Some(t), SessionTokenMode::AddedAfterSigning) = (token, self.settings.session_token)
        {
            params.push(("X-Amz-Security-Token", t));
        }
        params.push(("X-Amz-Signature", signature.clone()));
        Ok(QuerySignature {
            params,
            canonical_request: cr,
            string_to_sign: sts,
            signature,
        })
    }

    /// Canonical request from its parts, string to sign, signature: the steps both forms share.
    /// `headers` appends the canonical headers and the signed-headers list to the canonical
    /// request (the one string it is built in) and says where the list is.
    #[allow(clippy::too_many_arguments)]
    fn sign_parts(
        &self,
        req: &Request<'_>,
        extra_query: &[(String, String)],
        headers: impl FnOnce(&mut String) -> Result<Range<usize>, Error>,
        payload: &PayloadHash,
        time: SigningTime,
        amz_date: &str,
        scope: &str,
    ) -> Result<(String, Range<usize>, String, String), Error> {
        let uri = canonical_uri(req.path, self.settings.path);
        let query_len = req.query.len()
            + extra_query
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2)
                .sum::<usize>();
        let (cr, signed) = build_canonical_request(
            req.method,
            &uri,
            (split_query(req.query), query_len),
            extra_query,
            headers,
            payload.as_str(),
        )?;
        let sts = string_to_sign(self.algorithm.name(), amz_date, scope, &cr);
        let mut signature = String::with_capacity(144);
        self.algorithm
            .sign_into(&self.credentials, time, &self.service, &sts, &mut signature)?;
        Ok((cr, signed, sts, signature))
    }
}

/// Errors unless `1 <= expires_in <= 604800`.
pub fn check_expiry(expires_in: u64) -> Result<(), Error> {
    if (1..=MAX_EXPIRES).contains(&expires_in) {
        Ok(())
    } else {
        Err(Error::InvalidExpiry(expires_in))
    }
}

impl fmt::Debug for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signer")
            .field("credentials", &self.credentials)
            .field("algorithm", &self.algorithm)
            .field("service", &self.service)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for HeaderSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_names_only(
            f,
            "HeaderSignature",
            "headers",
            self.headers.iter().map(|(n, _)| *n),
        )
    }
}

impl fmt::Debug for QuerySignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_names_only(
            f,
            "QuerySignature",
            "params",
            self.params.iter().map(|(n, _)| *n),
        )
    }
}

/// Shows which headers or parameters a signature adds, never their values or the signature.
fn debug_names_only<'a>(
    f: &mut fmt::Formatter<'_>,
    ty: &str,
    field: &str,
    names: impl Iterator<Item = &'a str>,
) -> fmt::Result {
    f.debug_struct(ty)
        .field(field, &names.collect::<Vec<_>>())
        .field("signature", &"<redacted>")
        .finish_non_exhaustive()
}
