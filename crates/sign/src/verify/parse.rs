//! Parsing the two places a SigV4/SigV4A signature can be: the `Authorization` header and the
//! `X-Amz-*` query parameters of a presigned URL. Only syntax here; what the values mean is
//! checked in `verify`.

use std::borrow::Cow;

use super::VerifyError;
use crate::encode::{cut, fields, percent_decode};

/// The algorithm named by the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// `AWS4-HMAC-SHA256`.
    V4,
    /// `AWS4-ECDSA-P256-SHA256`.
    V4a,
}

/// Everything a signature claims, from either place. Its `Debug` leaves out the signature.
#[derive(Clone, PartialEq, Eq)]
pub struct Claims {
    pub algorithm: Algorithm,
    pub credential: Credential,
    /// `a;b;c` as sent: lowercase, sorted, without repeats (checked), `host` among them.
    pub signed_headers: String,
    pub signature: String,
    /// Presigned URLs only: `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-Region-Set`.
    pub amz_date: Option<AmzDate>,
    pub expires: Option<u64>,
    pub region_set: Option<String>,
}

impl std::fmt::Debug for Claims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claims")
            .field("algorithm", &self.algorithm)
            .field("credential", &self.credential)
            .field("signed_headers", &self.signed_headers)
            .field("signature", &"<redacted>")
            .field("amz_date", &self.amz_date)
            .field("expires", &self.expires)
            .field("region_set", &self.region_set)
            .finish()
    }
}

/// A credential as sent and decoded, `AKID/DATE/REGION/SERVICE/aws4_request` (SigV4) or
/// `AKID/DATE/SERVICE/aws4_request` (SigV4A), checked by [`scope`], in one string whose parts
/// are read by position: the edge reads one per request, and one allocation does instead of
/// one per part. Everything after the access key is the scope as signed.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    text: String,
    /// Where the access key ends; the date (8 bytes) follows its `/`.
    key_end: usize,
    /// Where the service starts; the region (SigV4) runs from after the date to the `/` before.
    service_start: usize,
}

impl Credential {
    /// `text` if [`scope`] accepts it.
    fn new(
        text: String,
        alg: Algorithm,
        malformed: fn(String) -> VerifyError,
    ) -> Result<Self, VerifyError> {
        let parts = scope(&text, alg, malformed)?;
        // The parts are consecutive, one `/` apart, the date 8 bytes long (checked).
        let key_end = parts.access_key_id.len();
        let service_start = key_end + 10 + parts.region.map_or(0, |r| r.len() + 1);
        Ok(Credential {
            text,
            key_end,
            service_start,
        })
    }

    pub fn access_key_id(&self) -> &str {
        &self.text[..self.key_end]
    }

    /// `YYYYMMDD`.
    pub fn date(&self) -> &str {
        &self.text[self.key_end + 1..self.key_end + 9]
    }

    /// SigV4: the scope's region; SigV4A: empty.
    pub fn region(&self) -> &str {
        let start = self.key_end + 10;
        match self.service_start > start {
            true => &self.text[start..self.service_start - 1],
            false => "",
        }
    }

    pub fn service(&self) -> &str {
        &self.text[self.service_start..self.text.len() - "/aws4_request".len()]
    }

    /// `DATE/REGION/SERVICE/aws4_request` (SigV4A without the region): what the string to
    /// sign carries.
    pub fn scope(&self) -> &str {
        &self.text[self.key_end + 1..]
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// `X-Amz-Date` as sent, `YYYYMMDDTHHMMSSZ`, and the time it names: parsed once, kept on the
/// stack (it is read for every request).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AmzDate {
    text: [u8; 16],
    pub signed_at: crate::SigningTime,
}

impl AmzDate {
    /// `value` if it is a valid `X-Amz-Date`, else the error `malformed` makes of it.
    pub fn parse(
        value: &str,
        malformed: impl Fn(String) -> VerifyError,
    ) -> Result<Self, VerifyError> {
        let bad = || malformed(format!("X-Amz-Date {value:?} is not YYYYMMDDTHHMMSSZ"));
        // `parse_amz` accepts 16 ASCII bytes only.
        let signed_at = crate::SigningTime::parse_amz(value).map_err(|_| bad())?;
        let text = value.as_bytes().try_into().map_err(|_| bad())?;
        Ok(AmzDate { text, signed_at })
    }

    pub fn as_str(&self) -> &str {
        // ASCII (checked by `parse_amz`) is UTF-8.
        std::str::from_utf8(&self.text).unwrap_or_default()
    }
}

impl std::fmt::Debug for AmzDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn algorithm(name: &str, malformed: fn(String) -> VerifyError) -> Result<Algorithm, VerifyError> {
    match name {
        "AWS4-HMAC-SHA256" => Ok(Algorithm::V4),
        "AWS4-ECDSA-P256-SHA256" => Ok(Algorithm::V4a),
        "AWS" => Err(VerifyError::InvalidRequest(
            "Signature Version 2 is not supported: sign with AWS4-HMAC-SHA256".into(),
        )),
        other => Err(malformed(format!("unsupported algorithm {other:?}"))),
    }
}

/// A credential's parts, borrowed from its text.
pub(super) struct Scope<'a> {
    pub access_key_id: &'a str,
    /// `YYYYMMDD`.
    pub date: &'a str,
    /// SigV4 only.
    pub region: Option<&'a str>,
    pub service: &'a str,
}

/// The parts of a credential (see [`Credential`]); also a POST form's `x-amz-credential`.
pub(super) fn scope(
    value: &str,
    alg: Algorithm,
    malformed: fn(String) -> VerifyError,
) -> Result<Scope<'_>, VerifyError> {
    // Split onto the stack: this runs for every request.
    let mut parts = [""; 5];
    let mut count = 0;
    for part in fields(value, b'/') {
        if let Some(slot) = parts.get_mut(count) {
            *slot = part;
        }
        count += 1;
    }
    let want = if alg == Algorithm::V4 { 5 } else { 4 };
    if count != want || parts[..want].iter().any(|p| p.is_empty()) {
        return Err(malformed(format!(
            "the credential {value:?} is not of the form {}",
            if want == 5 {
                "KEY/DATE/REGION/SERVICE/aws4_request"
            } else {
                "KEY/DATE/SERVICE/aws4_request"
            }
        )));
    }
    if parts[want - 1] != "aws4_request" {
        return Err(malformed(format!(
            "the credential must end in aws4_request, not {:?}",
            parts[want - 1]
        )));
    }
    let date = parts[1];
    if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed(format!(
            "the credential date {date:?} is not YYYYMMDD"
        )));
    }
    Ok(Scope {
        access_key_id: parts[0],
        date,
        region: (alg == Algorithm::V4).then_some(parts[2]),
        service: parts[want - 2],
    })
}

/// `a;b;c`, lowercase, sorted, no duplicates, `host` among them; kept as the one string sent
/// (its names are read with [`signed_names`]): one allocation per request, not one per name.
fn signed_headers(
    value: &str,
    malformed: fn(String) -> VerifyError,
) -> Result<String, VerifyError> {
    let valid_name = |n: &str| {
        !n.is_empty()
            && n.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.!#$%&'*+^`|~".contains(&b)
            })
    };
    let mut previous: Option<&str> = None;
    let mut host = false;
    for name in fields(value, b';') {
        if !valid_name(name) || previous.is_some_and(|p| p >= name) {
            return Err(malformed(format!(
                "SignedHeaders {value:?} must be lowercase names, sorted, without repeats"
            )));
        }
        host |= name == "host";
        previous = Some(name);
    }
    if !host {
        return Err(malformed("host must be a signed header".into()));
    }
    Ok(value.to_owned())
}

/// The names of a signed-headers list (`a;b;c`) that [`signed_headers`] accepted.
pub(crate) fn signed_names(list: &str) -> impl Iterator<Item = &str> {
    fields(list, b';')
}

fn signature(
    value: &str,
    alg: Algorithm,
    malformed: fn(String) -> VerifyError,
) -> Result<String, VerifyError> {
    let ok_len = match alg {
        Algorithm::V4 => value.len() == 64,
        Algorithm::V4a => crate::v4a::is_signature_hex_len(value.len()),
    };
    // One branch-free pass, no early exit (a signature is checked per request).
    let hex = value.bytes().fold(true, |ok, b| {
        ok & (b.is_ascii_digit() | (b'a'..=b'f').contains(&b))
    });
    if !ok_len || !hex {
        return Err(malformed(
            "the signature is not lowercase hex of the right length".into(),
        ));
    }
    Ok(value.to_owned())
}

/// Parses `ALGORITHM Credential=…, SignedHeaders=…, Signature=…`.
pub fn authorization_header(value: &str) -> Result<Claims, VerifyError> {
    let malformed = VerifyError::AuthorizationHeaderMalformed;
    let value = value.trim_ascii();
    let (name, rest) = cut(value, b' ').unwrap_or((value, ""));
    let alg = algorithm(name, malformed)?;
    let (mut cred, mut signed, mut sig) = (None, None, None);
    for part in fields(rest, b',') {
        let part = part.trim_ascii();
        let (k, v) =
            cut(part, b'=').ok_or_else(|| malformed(format!("{part:?} is not NAME=VALUE")))?;
        let slot = match k {
            "Credential" => &mut cred,
            "SignedHeaders" => &mut signed,
            "Signature" => &mut sig,
            other => return Err(malformed(format!("unknown component {other:?}"))),
        };
        if slot.replace(v).is_some() {
            return Err(malformed(format!("{k} appears twice")));
        }
    }
    let (Some(cred), Some(signed), Some(sig)) = (cred, signed, sig) else {
        return Err(malformed(
            "Credential, SignedHeaders and Signature are all required".into(),
        ));
    };
    Ok(Claims {
        algorithm: alg,
        credential: Credential::new(cred.to_owned(), alg, malformed)?,
        signed_headers: signed_headers(signed, malformed)?,
        signature: signature(sig, alg, malformed)?,
        amz_date: None,
        expires: None,
        region_set: None,
    })
}

/// Whether the query has any `X-Amz-*` auth parameter (and so claims to be presigned).
pub fn has_query_auth(pairs: &[(&str, &str)]) -> bool {
    pairs.iter().any(|(k, _)| {
        matches!(
            *k,
            "X-Amz-Signature" | "X-Amz-Algorithm" | "X-Amz-Credential"
        )
    })
}

/// The auth parameters of a presigned URL this parser reads, in the order of its slots
/// (`X-Amz-Security-Token` is the caller's to check). A gateway strips them before forwarding.
pub const PRESIGN_PARAMS: [&str; 7] = [
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
    "X-Amz-Region-Set",
];

/// The index in [`PRESIGN_PARAMS`] of query name `name`. Every query name of every presigned
/// request is looked up, so names without the `X-Amz-` prefix are turned away before the list.
pub fn presign_param(name: &str) -> Option<usize> {
    if !name.starts_with("X-Amz-") {
        return None;
    }
    PRESIGN_PARAMS.iter().position(|p| *p == name)
}

/// Parses the `X-Amz-*` parameters of a presigned URL (the query's raw pairs). Each must appear once.
pub fn query_auth(pairs: &[(&str, &str)]) -> Result<Claims, VerifyError> {
    let malformed = VerifyError::AuthorizationQueryParametersError;
    let mut found: [Option<Cow<'_, str>>; 7] = Default::default();
    for &(k, v) in pairs {
        if let Some(i) = presign_param(k) {
            // Most values have no escape at all; decode only those that do.
            let v = if v.contains('%') {
                Cow::Owned(
                    String::from_utf8(percent_decode(v))
                        .map_err(|_| malformed(format!("{k} is not UTF-8")))?,
                )
            } else {
                Cow::Borrowed(v)
            };
            if found[i].replace(v).is_some() {
                return Err(malformed(format!("{k} appears twice")));
            }
        }
    }
    let [Some(alg), Some(cred), Some(date), Some(expires), Some(signed), Some(sig), region_set] =
        found
    else {
        return Err(malformed(
            "a presigned URL needs X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders and X-Amz-Signature".into(),
        ));
    };
    let alg = algorithm(&alg, malformed)?;
    // A decoded credential (the usual `%2F`) is moved in, not copied.
    let credential = Credential::new(cred.into_owned(), alg, malformed)?;
    let signed_headers = signed_headers(&signed, malformed)?;
    let signature = signature(&sig, alg, malformed)?;
    let expires = expires
        .parse::<u64>()
        .ok()
        .filter(|e| (1..=crate::MAX_EXPIRES).contains(e))
        .ok_or_else(|| {
            malformed(format!(
                "X-Amz-Expires {expires:?} must be a number of seconds from 1 to 604800"
            ))
        })?;
    let amz_date = AmzDate::parse(&date, malformed)?;
    let region_set = match alg {
        Algorithm::V4 => None,
        Algorithm::V4a => Some(
            region_set
                .ok_or_else(|| malformed("a SigV4A URL needs X-Amz-Region-Set".into()))?
                .into_owned(),
        ),
    };
    Ok(Claims {
        algorithm: alg,
        credential,
        signed_headers,
        signature,
        amz_date: Some(amz_date),
        expires: Some(expires),
        region_set,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIG: &str = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";

    #[test]
    fn presign_params_are_found_by_name() {
        for (i, name) in PRESIGN_PARAMS.iter().enumerate() {
            assert_eq!(presign_param(name), Some(i));
        }
        for other in [
            "X-Amz-Security-Token",
            "x-amz-date",
            "X-Amz-",
            "versionId",
            "",
        ] {
            assert_eq!(presign_param(other), None, "{other}");
        }
    }

    #[test]
    fn parses_a_header() {
        let c = authorization_header(&format!(
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={SIG}"
        ))
        .unwrap();
        assert_eq!(
            (
                c.credential.access_key_id(),
                c.credential.date(),
                c.credential.region(),
                c.credential.service()
            ),
            ("AKID", "20150830", "us-east-1", "s3")
        );
        assert_eq!(c.signed_headers, "host;x-amz-date");
    }

    fn parts(c: &Credential) -> (&str, &str, &str, &str) {
        (c.access_key_id(), c.date(), c.region(), c.service())
    }

    #[test]
    fn reads_a_sigv4a_credential_and_a_decoded_one_by_position() {
        let c = authorization_header(&format!(
            "AWS4-ECDSA-P256-SHA256 Credential=AKIDV4A/20150830/s3/aws4_request, SignedHeaders=host;x-amz-date;x-amz-region-set, Signature={SIG}"
        ))
        .unwrap();
        let cred = &c.credential;
        assert_eq!(parts(cred), ("AKIDV4A", "20150830", "", "s3"));
        assert_eq!(cred.scope(), "20150830/s3/aws4_request");
        let q = query_auth(&format!("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2FB%2F20150830%2Feu-west-3%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature={SIG}"));
        // `/` inside an access key id is refused, not misread: five parts are required.
        assert!(q.is_err());
        let q = query_auth(&format!("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A-B%2F20150830%2Feu-west-3%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature={SIG}")).unwrap();
        let cred = &q.credential;
        assert_eq!(parts(cred), ("A-B", "20150830", "eu-west-3", "s3"));
        assert_eq!(cred.scope(), "20150830/eu-west-3/s3/aws4_request");
        assert_eq!(
            q.amz_date.map(|d| d.as_str().to_owned()).as_deref(),
            Some("20150830T123600Z")
        );
    }

    #[test]
    fn refuses_malformed_headers() {
        for bad in [
            format!("AWS4-HMAC-SHA1 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=host, Signature={SIG}"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_requesT, SignedHeaders=host, Signature={SIG}"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/2015083/us-east-1/s3/aws4_request, SignedHeaders=host, Signature={SIG}"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/s3/aws4_request, SignedHeaders=host, Signature={SIG}"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=x-amz-date, Signature={SIG}"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=x-amz-date;host, Signature={SIG}"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=host, Signature={}", &SIG[1..]),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=host, Signature={SIG}, Signature={SIG}"),
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=host".to_owned(),
            "".to_owned(),
        ] {
            assert!(matches!(authorization_header(&bad), Err(VerifyError::AuthorizationHeaderMalformed(_))), "{bad}");
        }
        assert!(matches!(
            authorization_header("AWS AKID:c2lnbmF0dXJl"),
            Err(VerifyError::InvalidRequest(_))
        ));
    }

    fn query_auth(q: &str) -> Result<Claims, VerifyError> {
        let pairs: Vec<(&str, &str)> = crate::canonical::split_query(q).collect();
        super::query_auth(&pairs)
    }

    #[test]
    fn refuses_bad_query_expiry_and_repeats() {
        let base = format!("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature={SIG}");
        assert!(query_auth(&format!("{base}&X-Amz-Expires=3600")).is_ok());
        for e in ["0", "-1", "604801", "abc", "", "1e3"] {
            assert!(
                matches!(
                    query_auth(&format!("{base}&X-Amz-Expires={e}")),
                    Err(VerifyError::AuthorizationQueryParametersError(_))
                ),
                "{e}"
            );
        }
        assert!(query_auth(&format!("{base}&X-Amz-Expires=1&X-Amz-Expires=1")).is_err());
        assert!(query_auth(&base).is_err());
    }
}
