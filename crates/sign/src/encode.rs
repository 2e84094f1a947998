//! Percent-encoding as SigV4 defines it, and lowercase hex.
//!
//! SigV4 keeps only the unreserved characters `A-Z a-z 0-9 - _ . ~` and encodes every other byte of
//! the UTF-8 form as `%XY` with uppercase hex. Paths keep `/` as well; query names and values do not.
//! This is not `application/x-www-form-urlencoded` (no `+` for space) and not the `url` crate's
//! path set (which keeps `!$&'()*+,;=:@`): using either here gives signatures S3 rejects.

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// `true` for bytes SigV4 leaves as they are.
const fn unreserved_table(keep_slash: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric()
            || c == b'-'
            || c == b'_'
            || c == b'.'
            || c == b'~'
            || (keep_slash && c == b'/');
        i += 1;
    }
    t
}

static PATH_SAFE: [bool; 256] = unreserved_table(true);
/// The unreserved bytes, also the test for "already canonical" in the verifier (runs per byte).
pub(crate) static QUERY_SAFE: [bool; 256] = unreserved_table(false);

/// Appends `s` encoded for a URI path: `/` is kept, so an S3 key's "folders" stay readable.
pub fn encode_path_into(out: &mut String, s: &str) {
    encode_with(out, s, &PATH_SAFE);
}

/// The length of `s` once encoded by [`encode_path_into`]: the column signer sizes its output
/// before writing (crate `column`), so this must count exactly what `encode_path_into` writes.
pub fn encoded_path_len(s: &str) -> usize {
    s.len() + 2 * s.bytes().filter(|&b| !PATH_SAFE[usize::from(b)]).count()
}

/// Appends `s` encoded for a query-string name or value (`/` becomes `%2F`).
pub fn encode_query_into(out: &mut String, s: &str) {
    encode_with(out, s, &QUERY_SAFE);
}

/// `s` encoded for a query-string name or value.
pub fn encode_query(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    encode_query_into(&mut out, s);
    out
}

/// Copies runs of safe bytes in one `push_str` each: keys are mostly safe, so this is the common path.
fn encode_with(out: &mut String, s: &str, safe: &[bool; 256]) {
    let mut run = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        if safe[usize::from(b)] {
            continue;
        }
        // A non-empty run holds only safe (ASCII) bytes, and the byte at `i` follows an ASCII
        // byte, so both ends are char boundaries. Empty runs are skipped: after a lead byte,
        // `run` may point into the middle of a char.
        if run < i {
            out.push_str(&s[run..i]);
        }
        out.push('%');
        out.push(char::from(HEX_UPPER[usize::from(b >> 4)]));
        out.push(char::from(HEX_UPPER[usize::from(b & 0xf)]));
        run = i + 1;
    }
    // Everything after the last encoded byte is safe, hence ASCII, hence on a boundary.
    if run < s.len() {
        out.push_str(&s[run..]);
    }
}

/// Decodes `%XY` escapes; a `%` not followed by two hex digits is kept as it is (as S3 does).
pub fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex_val(b[i + 1]), hex_val(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Bytes of lower- or upper-case hex; `None` if `text` is not an even run of hex digits.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    let b = text.as_bytes();
    if b.len() % 2 != 0 {
        return None;
    }
    b.chunks_exact(2)
        .map(|pair| Some(hex_val(pair[0])? << 4 | hex_val(pair[1])?))
        .collect()
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Appends `bytes` as lowercase hex, the form of every hash and signature in SigV4.
pub fn hex_into(out: &mut String, bytes: &[u8]) {
    // Through a stack buffer, 32 bytes at a time: one `push_str` instead of a `push` (with its
    // capacity check and UTF-8 encoding) per digit. Signatures and hashes are 32 bytes.
    for chunk in bytes.chunks(32) {
        let mut buf = [0u8; 64];
        hex_digits(chunk, &mut buf);
        // Hex digits are ASCII: this never fails.
        out.push_str(std::str::from_utf8(&buf[..2 * chunk.len()]).unwrap_or_default());
    }
}

/// `s` cut at the first `sep`. The fields of a signature and a query are short, and for them an
/// eight-bytes-a-step search costs less than `str::split_once`'s searcher, whose set-up
/// dominates (this runs many times a request at the edge).
pub fn cut(s: &str, sep: u8) -> Option<(&str, &str)> {
    // An ASCII `sep` never occurs inside a multi-byte character, so `i` is on a boundary.
    debug_assert!(sep.is_ascii(), "cut splits at ASCII separators");
    let i = find_byte(s.as_bytes(), sep)?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// The first `sep` in `b`, eight bytes a step: a presigned query's values (a 64-digit signature,
/// a credential) are long enough that a byte-by-byte loop costs four times as much.
fn find_byte(b: &[u8], sep: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let pattern = ONES * u64::from(sep);
    let mut chunks = b.chunks_exact(8);
    for (n, chunk) in chunks.by_ref().enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ pattern;
        // A byte of `x` is zero where `sep` is; the lowest flagged byte is the first of them
        // (a borrow only carries upward, past the first zero).
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(n * 8 + (zero.trailing_zeros() / 8) as usize);
        }
    }
    let tail = chunks.remainder();
    let at = tail.iter().position(|&c| c == sep)?;
    Some(b.len() - tail.len() + at)
}

/// The pieces of `s` between the `sep`s, as `str::split` gives them, with [`cut`]'s search.
pub fn fields(s: &str, sep: u8) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match cut(r, sep) {
            Some((field, more)) => {
                rest = Some(more);
                Some(field)
            }
            None => rest.take(),
        }
    })
}

/// Lowercase hex of 32 bytes into a fixed buffer, for the hot path (no allocation).
pub fn hex32(bytes: &[u8; 32]) -> [u8; 64] {
    let mut out = [0u8; 64];
    hex_digits(bytes, &mut out);
    out
}

/// The two lowercase hex digits of each byte of `bytes`, into the start of `out` (twice as long).
fn hex_digits(bytes: &[u8], out: &mut [u8]) {
    for (pair, &b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX_LOWER[usize::from(b >> 4)];
        pair[1] = HEX_LOWER[usize::from(b & 0xf)];
    }
}

/// Lowercase hex of `bytes` as a new string.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    hex_into(&mut s, bytes);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_byte_finds_the_first_at_every_position() {
        for len in 0..40 {
            for at in 0..=len {
                let mut b: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                if at < len {
                    b[at] = b'&';
                    if at + 3 < len {
                        b[at + 3] = b'&';
                    }
                }
                b.extend_from_slice(&[0x80, 0xff, 0x26 ^ 0x80]);
                let want = b.iter().position(|&c| c == b'&');
                assert_eq!(find_byte(&b, b'&'), want, "{len} {at}");
            }
        }
        assert_eq!(find_byte(b"\x01\x00\x27&", b'&'), Some(3));
    }

    #[test]
    fn fields_split_as_str_split() {
        for s in ["", "a", "a/b", "/a//b/", "//", "é/ü"] {
            assert_eq!(
                fields(s, b'/').collect::<Vec<_>>(),
                s.split('/').collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn unhex_reverses_hex_and_refuses_what_is_not_hex() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&bytes)).unwrap(), bytes);
        assert_eq!(unhex("0aFf").unwrap(), vec![0x0a, 0xff]);
        assert_eq!(unhex("").unwrap(), Vec::<u8>::new());
        for bad in ["0", "0g", "+1", " 01", "é0"] {
            assert!(unhex(bad).is_none(), "{bad:?}");
        }
    }

    fn path(s: &str) -> String {
        let mut o = String::new();
        encode_path_into(&mut o, s);
        o
    }

    #[test]
    fn path_keeps_unreserved_and_slash_only() {
        assert_eq!(path("a b/c+d~e"), "a%20b/c%2Bd~e");
        assert_eq!(path("a//b/./c/../d/"), "a//b/./c/../d/");
        assert_eq!(
            path("!$&'()*,;=:@%?#\t"),
            "%21%24%26%27%28%29%2A%2C%3B%3D%3A%40%25%3F%23%09"
        );
        assert_eq!(path("ሴ😀"), "%E1%88%B4%F0%9F%98%80");
        assert_eq!(path("AZaz09-_.~"), "AZaz09-_.~");
    }

    #[test]
    fn encoded_path_len_counts_what_encode_path_into_writes() {
        for s in [
            "",
            "a b/c+d~e",
            "!$&'()*,;=:@%?#\t",
            "ሴ😀",
            "AZaz09-_.~",
            "x\r\ny",
        ] {
            assert_eq!(encoded_path_len(s), path(s).len(), "{s:?}");
        }
    }

    #[test]
    fn query_encodes_slash() {
        assert_eq!(
            encode_query("AKID/20150830/us-east-1/s3/aws4_request"),
            "AKID%2F20150830%2Fus-east-1%2Fs3%2Faws4_request"
        );
    }

    #[test]
    fn decode_inverts_encode_and_keeps_stray_percent() {
        assert_eq!(percent_decode("%E1%88%B4=a%2fb"), "ሴ=a/b".as_bytes());
        assert_eq!(percent_decode("100%"), b"100%");
        assert_eq!(percent_decode("%4"), b"%4");
        assert_eq!(percent_decode("%zz"), b"%zz");
    }
}
