//! The canonical request of a general HTTP request: path, query and headers in SigV4's form.
//!
//! This is the reference path, used for header signing, for the test suite and by the verifier.
//! The URL presigner ([`crate::Presigner`]) builds the same bytes from precomputed parts; a
//! property test holds the two together.

use std::borrow::Cow;
use std::ops::Range;

use smallvec::SmallVec;

use crate::encode::{cut, encode_path_into, encode_query_into, fields, percent_decode, QUERY_SAFE};
use crate::Error;

/// How the request path becomes the canonical URI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathEncoding {
    /// S3: the path is already URI-encoded exactly as sent and is used verbatim, never
    /// normalized. `a//b`, `a/./b` and `a/../b` are distinct S3 keys.
    AsSent,
    /// Other AWS services: optionally remove `.`/`..` segments and empty segments, then
    /// percent-encode the path (a `%` already present is encoded again: "double encoding").
    Encode {
        /// Remove dot segments and duplicate slashes first.
        normalize: bool,
    },
}

/// A request as the signer sees it. `path` and `query` are as they appear on the request line
/// (the query without its `?`); header names may have any case.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// `GET`, `PUT`, ...
    pub method: &'a str,
    /// The path part of the request target.
    pub path: &'a str,
    /// The query part of the request target, without `?`; empty if none.
    pub query: &'a str,
    /// Headers in the order received; repeated names are allowed.
    pub headers: &'a [(&'a str, &'a str)],
}

/// The canonical URI of `path`.
pub fn canonical_uri(path: &str, encoding: PathEncoding) -> Cow<'_, str> {
    match encoding {
        PathEncoding::AsSent if path.is_empty() => Cow::Borrowed("/"),
        // S3's verbatim path needs no copy (the verifier calls this per request).
        PathEncoding::AsSent => Cow::Borrowed(path),
        PathEncoding::Encode { normalize } => {
            let normalized;
            let path = if normalize {
                normalized = normalize_path(path);
                &normalized
            } else {
                path
            };
            let mut out = String::with_capacity(path.len() + 8);
            encode_path_into(&mut out, path);
            if out.is_empty() {
                out.push('/');
            }
            Cow::Owned(out)
        }
    }
}

/// RFC 3986 dot-segment removal that also drops empty segments, as the AWS SDKs do.
fn normalize_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = String::with_capacity(path.len());
    for s in &segments {
        out.push('/');
        out.push_str(s);
    }
    if segments.is_empty() || path.ends_with('/') {
        out.push('/');
    }
    out
}

/// Canonical query: every `name=value` pair decoded and re-encoded with SigV4's rules, then sorted
/// by name and value. `extra` pairs are already encoded (the signer's own `X-Amz-*` parameters).
pub fn canonical_query(raw: &str, extra: &[(String, String)]) -> String {
    canonical_query_pairs(split_query(raw), extra)
}

/// `name=value` pairs of a raw query, not decoded; empty segments skipped, a missing `=` is an
/// empty value.
pub fn split_query(raw: &str) -> impl Iterator<Item = (&str, &str)> {
    fields(raw, b'&')
        .filter(|p| !p.is_empty())
        .map(|p| cut(p, b'=').unwrap_or((p, "")))
}

/// [`canonical_query`] of pairs already split (the verifier splits the query once).
pub fn canonical_query_pairs<'a>(
    raw: impl Iterator<Item = (&'a str, &'a str)>,
    extra: &'a [(String, String)],
) -> String {
    let mut out = String::new();
    push_canonical_query(&mut out, raw, extra);
    out
}

/// Appends [`canonical_query_pairs`] to `out`: the signer and the verifier build the whole
/// canonical request in one string. Up to 16 pairs (a presigned URL has 7 or 8) are sorted
/// on the stack.
pub(crate) fn push_canonical_query<'a>(
    out: &mut String,
    raw: impl Iterator<Item = (&'a str, &'a str)>,
    extra: &'a [(String, String)],
) {
    let mut pairs: SmallVec<[(Cow<'a, str>, Cow<'a, str>); 16]> = raw
        .map(|(k, v)| (reencode(k), reencode(v)))
        .chain(
            extra
                .iter()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Cow::Borrowed(v.as_str()))),
        )
        .collect();
    pairs.sort_unstable();
    out.reserve(pairs.iter().map(|(k, v)| k.len() + v.len() + 2).sum());
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
}

/// `s` in canonical form; borrowed when it already is (the common case: what signers send), so
/// the verifier does not decode and re-encode every parameter.
fn reencode(s: &str) -> Cow<'_, str> {
    if is_canonical_component(s) {
        return Cow::Borrowed(s);
    }
    let decoded = percent_decode(s);
    let mut out = String::with_capacity(s.len());
    encode_query_into(&mut out, &String::from_utf8_lossy(&decoded));
    Cow::Owned(out)
}

/// Only unreserved characters, and `%XY` escapes (uppercase) of bytes that must be escaped.
fn is_canonical_component(s: &str) -> bool {
    let unreserved = |c: u8| QUERY_SAFE[usize::from(c)];
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let b = s.as_bytes();
    // Most components are unreserved bytes only (a signature, a date, a name): one pass of
    // table lookups without branches settles them before the escape-aware loop.
    if b.iter().fold(true, |ok, &c| ok & unreserved(c)) {
        return true;
    }
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let (Some(&h), Some(&l)) = (b.get(i + 1), b.get(i + 2)) else {
                return false;
            };
            let (Some(h), Some(l)) = (nibble(h), nibble(l)) else {
                return false;
            };
            if unreserved(h << 4 | l) {
                return false;
            }
            i += 3;
        } else if unreserved(b[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// Headers the signer never signs: they are set or changed by proxies and HTTP stacks after
/// signing (the same list as botocore and aws-sigv4).
const UNSIGNABLE: &[&str] = &[
    "authorization",
    "user-agent",
    "x-amzn-trace-id",
    "expect",
    "transfer-encoding",
];

/// Canonical headers (`name:value\n` each, sorted) and the signed-headers list (`a;b;c`).
///
/// Names are lowercased; values are trimmed and inner runs of whitespace (folded lines included)
/// become one space; repeated names are joined with `,` in the order received.
pub fn canonical_headers(headers: &[(&str, &str)]) -> Result<(String, String), Error> {
    let mut canonical = String::new();
    let signed = push_canonical_headers(&mut canonical, headers)?;
    let list = canonical[signed.clone()].to_owned();
    // What precedes the list is the headers and the blank line that ends them.
    canonical.truncate(signed.start - 1);
    Ok((canonical, list))
}

/// Appends the canonical headers, the blank line after them and the signed-headers list to
/// `out` (the middle of a canonical request); returns where the list is in `out`, for the
/// `Authorization` header. Up to 16 headers are merged and sorted on the stack: the signer and
/// the verifier call this per request.
pub(crate) fn push_canonical_headers(
    out: &mut String,
    headers: &[(&str, &str)],
) -> Result<Range<usize>, Error> {
    // Names and values are borrowed unless lowercasing, tidying or merging changes them: names
    // usually arrive lowercase.
    let mut merged: SmallVec<[(Cow<'_, str>, Cow<'_, str>); 16]> = SmallVec::new();
    for &(name, value) in headers {
        // Most names are lowercase letters, digits and dashes: a branch-free pass settles them
        // before the per-byte table.
        let plain = name.bytes().fold(!name.is_empty(), |ok, b| {
            ok & (b.is_ascii_lowercase() | b.is_ascii_digit() | (b == b'-'))
        });
        let mut upper = false;
        let valid = plain
            || (!name.is_empty()
                && name.bytes().all(|b| {
                    upper |= b.is_ascii_uppercase();
                    TOKEN[usize::from(b)]
                }));
        if !valid {
            return Err(Error::InvalidHeader(format!(
                "{name:?} is not a valid header name"
            )));
        }
        let name: Cow<'_, str> = if upper {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        };
        if UNSIGNABLE.contains(&&*name) {
            continue;
        }
        let value = trimmed_value(value).ok_or_else(|| {
            Error::InvalidHeader(format!("the value of {name:?} has control characters"))
        })?;
        match merged.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => {
                let v = v.to_mut();
                v.push(',');
                v.push_str(&value);
            }
            None => merged.push((name, value)),
        }
    }
    merged.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out.reserve(
        merged
            .iter()
            .map(|(n, v)| 2 * n.len() + v.len() + 3)
            .sum::<usize>()
            + 1,
    );
    for (name, value) in &merged {
        out.push_str(name);
        out.push(':');
        out.push_str(value);
        out.push('\n');
    }
    out.push('\n');
    let start = out.len();
    for (i, (name, _)) in merged.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        out.push_str(name);
    }
    Ok(start..out.len())
}

/// The value trimmed, inner runs of whitespace as one space; borrowed when nothing changes.
/// `None` if it has a control character other than tab, CR and LF. One pass over the bytes
/// (this runs for every signed header of every request signed or verified): most bytes are
/// above the space and need one comparison.
fn trimmed_value(value: &str) -> Option<Cow<'_, str>> {
    let b = value.as_bytes();
    // Most values (hashes, dates, host names) have no byte at or below the space and no DEL:
    // a pass without early exit (which the compiler can vectorize) settles them at once.
    if b.iter().fold(true, |ok, &c| ok & (c > b' ') & (c != 0x7f)) {
        return Some(Cow::Borrowed(value));
    }
    let mut tidy = true;
    for (i, &c) in b.iter().enumerate() {
        if c > b' ' && c != 0x7f {
            continue;
        }
        match c {
            b' ' => tidy &= !b.get(i + 1).is_some_and(u8::is_ascii_whitespace),
            b'\t' | b'\n' | b'\r' => tidy = false,
            _ => return None,
        }
    }
    let t = value.trim_matches(|c: char| c.is_ascii_whitespace());
    Some(if tidy {
        Cow::Borrowed(t)
    } else {
        Cow::Owned(t.split_ascii_whitespace().collect::<Vec<_>>().join(" "))
    })
}

/// RFC 9110 `tchar`, by byte.
const TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        c += 1;
    }
    table
};

/// Room for a canonical request's headers and payload hash besides its path and query: most
/// fit, so the signer and the verifier allocate the request once.
const CANONICAL_ROOM: usize = 256;

/// [`canonical_request`] built in one string, as the signer and the verifier do per request:
/// the query canonicalized from its raw pairs (`query_len` bytes or so) and `extra`, and
/// `headers` appending the canonical headers and the signed-headers list (as
/// [`push_canonical_headers`] does). Returns the request and where the list is in it.
pub(crate) fn build_canonical_request<'a>(
    method: &str,
    uri: &str,
    (query, query_len): (impl Iterator<Item = (&'a str, &'a str)>, usize),
    extra: &'a [(String, String)],
    headers: impl FnOnce(&mut String) -> Result<Range<usize>, Error>,
    payload: &str,
) -> Result<(String, Range<usize>), Error> {
    let mut cr = String::with_capacity(method.len() + uri.len() + query_len + CANONICAL_ROOM);
    for part in [method, "\n", uri, "\n"] {
        cr.push_str(part);
    }
    push_canonical_query(&mut cr, query, extra);
    cr.push('\n');
    let signed = headers(&mut cr)?;
    cr.push('\n');
    cr.push_str(payload);
    Ok((cr, signed))
}

/// `METHOD\nURI\nQUERY\nHEADERS\n\nSIGNED\nPAYLOAD`.
pub fn canonical_request(
    method: &str,
    uri: &str,
    query: &str,
    headers: &str,
    signed_headers: &str,
    payload: &str,
) -> String {
    let mut s = String::with_capacity(
        method.len()
            + uri.len()
            + query.len()
            + headers.len()
            + signed_headers.len()
            + payload.len()
            + 8,
    );
    for part in [
        method,
        "\n",
        uri,
        "\n",
        query,
        "\n",
        headers,
        "\n",
        signed_headers,
        "\n",
        payload,
    ] {
        s.push_str(part);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_matches_the_suite_cases() {
        for (raw, want) in [
            ("//example//", "/example/"),
            ("/example1/example2/../..", "/"),
            ("/./example", "/example"),
            ("//", "/"),
            ("/example/..", "/"),
            ("/./", "/"),
            ("/a/b/../c/", "/a/c/"),
        ] {
            assert_eq!(
                canonical_uri(raw, PathEncoding::Encode { normalize: true }),
                want,
                "{raw}"
            );
        }
    }

    #[test]
    fn s3_paths_are_verbatim() {
        for p in ["/b/a//b", "/b/a/./b", "/b/a/../b", "/b/k/", "/b/a%20b"] {
            assert_eq!(canonical_uri(p, PathEncoding::AsSent), p);
        }
    }

    #[test]
    fn encoding_encodes_an_existing_percent_again() {
        assert_eq!(
            canonical_uri("/a%20b", PathEncoding::Encode { normalize: false }),
            "/a%2520b"
        );
    }

    #[test]
    fn canonical_components_are_recognized() {
        for ok in ["", "abc", "a%2Fb", "%E1%88%B4", "-_.~"] {
            assert!(is_canonical_component(ok), "{ok}");
        }
        for not in ["a/b", "%2f", "%41", "%4", "%", "a b", "%G0", "+"] {
            assert!(!is_canonical_component(not), "{not}");
        }
        assert_eq!(
            canonical_query("b=%41&a=x y&c=%2f", &[]),
            "a=x%20y&b=A&c=%2F"
        );
    }

    #[test]
    fn queries_split_into_raw_pairs() {
        let pairs: Vec<(&str, &str)> =
            split_query("a=1&&b&c=&=d&e=f=g&%26=%3D&caf\u{e9}=\u{1f600}&").collect();
        assert_eq!(
            pairs,
            [
                ("a", "1"),
                ("b", ""),
                ("c", ""),
                ("", "d"),
                ("e", "f=g"),
                ("%26", "%3D"),
                ("caf\u{e9}", "\u{1f600}"),
            ]
        );
        assert_eq!(split_query("").count(), 0);
        assert_eq!(split_query("&&&").count(), 0);
        assert_eq!(split_query("x").collect::<Vec<_>>(), [("x", "")]);
    }

    #[test]
    fn headers_fold_trim_and_merge() {
        let (c, s) = canonical_headers(&[
            ("Host", "h"),
            ("My-H", " a   b \n  c "),
            ("my-h", "d"),
            ("User-Agent", "x"),
        ])
        .unwrap();
        assert_eq!(c, "host:h\nmy-h:a b c,d\n");
        assert_eq!(s, "host;my-h");
        assert!(canonical_headers(&[("bad name", "v")]).is_err());
        assert!(canonical_headers(&[("h", "a\u{0}b")]).is_err());
    }

    #[test]
    fn header_values_keep_what_is_not_whitespace_and_refuse_controls() {
        for (value, want) in [
            ("a\tb", "a b"),
            ("\r\n a \r\n", "a"),
            ("a  b", "a b"),
            ("a b", "a b"),
            (" ", ""),
            ("", ""),
            ("caf\u{e9} \u{1f600}", "caf\u{e9} \u{1f600}"),
            ("!~\"<>", "!~\"<>"),
        ] {
            let (c, _) = canonical_headers(&[("x-h", value)]).unwrap();
            assert_eq!(c, format!("x-h:{want}\n"), "{value:?}");
        }
        // Form feed and vertical tab are not folded whitespace here: refused like any control.
        for bad in ["a\u{1}", "\u{7f}", "a\u{c}b", "\u{b}", "a\u{1f}"] {
            assert!(canonical_headers(&[("x-h", bad)]).is_err(), "{bad:?}");
        }
        for bad in ["", "a:b", "a b", "caf\u{e9}", "a\tb", "(x)"] {
            assert!(canonical_headers(&[(bad, "v")]).is_err(), "{bad:?}");
        }
        for ok in ["!#$%&'*+-.^_`|~", "X-Amz-Date", "0"] {
            let (_, s) = canonical_headers(&[(ok, "v")]).unwrap();
            assert_eq!(s, ok.to_ascii_lowercase());
        }
    }
}
