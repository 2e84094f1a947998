//! The head of a browser's POST upload (`multipart/form-data`): the fields before the file,
//! and the file part's own delimiter and headers. The verifying edge reads these, verifies
//! the fields, replaces the signature's with its own ([`head_bytes`]) and forwards the rest of
//! the body byte for byte.
//!
//! Why only the head: S3 takes the fields that precede the file (those after it are ignored)
//! and the policy signs only them, so nothing after the file part's headers needs reading.
//!
//! Sans-IO: the caller feeds what has arrived and asks again until a head is complete.

/// The most the fields before the file may take, delimiters and part headers included. S3
/// refuses past 20 KB; this allows more (large tagging or metadata) and still bounds memory.
pub const HEAD_LIMIT: usize = 64 * 1024;

/// What precedes the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// Each field's name and value, in order, as sent.
    pub fields: Vec<(String, String)>,
    /// The file part's `filename` parameter (empty without one).
    pub file_name: String,
    /// The file part's delimiter line and headers, through the blank line, as sent.
    pub file_part: Vec<u8>,
    /// How many bytes of the body precede the file's first byte.
    pub consumed: usize,
}

/// Why a body is not a form the edge can read.
#[derive(Debug, PartialEq, Eq)]
pub enum FormError {
    /// Not multipart, or no delimiter where one must be (S3 says no more than that).
    Malformed,
    /// The form ends without a `file` field.
    NoFile,
    /// The fields before the file exceed [`HEAD_LIMIT`].
    TooLarge,
}

impl std::fmt::Display for FormError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FormError::Malformed => "the body is not well-formed multipart/form-data",
            FormError::NoFile => "the form has no file field",
            FormError::TooLarge => "the fields before the file are larger than the edge reads",
        })
    }
}

impl std::error::Error for FormError {}

/// The `boundary` parameter of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let mut parts = split_params(content_type).into_iter();
    let kind = parts.next()?;
    if !kind.0.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    let (_, value) = parts.find(|(n, _)| n.trim().eq_ignore_ascii_case("boundary"))?;
    let value = value?;
    // RFC 2046: 1 to 70 characters, no trailing space.
    (!value.is_empty() && value.len() <= 70 && !value.ends_with(' ')).then_some(value)
}

/// The head of `body` so far: `Ok(None)` until the file part's headers have arrived.
pub fn parse(body: &[u8], boundary: &str) -> Result<Option<Head>, FormError> {
    let result = parse_whole(body, boundary)?;
    match &result {
        Some(head) if head.consumed > HEAD_LIMIT => Err(FormError::TooLarge),
        None if body.len() > HEAD_LIMIT => Err(FormError::TooLarge),
        _ => Ok(result),
    }
}

fn parse_whole(body: &[u8], boundary: &str) -> Result<Option<Head>, FormError> {
    // A delimiter ends the line before it: `\r\n--boundary` (but the first, which may start the
    // body).
    let line_delimiter = format!("\r\n--{boundary}");
    let line_delimiter = line_delimiter.as_bytes();
    let delimiter = &line_delimiter[2..];
    // The first delimiter starts the body or a line (a preamble before it is ignored).
    let mut at = if body.starts_with(delimiter) {
        0
    } else {
        match find(body, line_delimiter, 0) {
            Some(i) => i + 2,
            None => return Ok(None),
        }
    };
    let mut fields = Vec::new();
    loop {
        let after = at + delimiter.len();
        let Some(rest) = body.get(after..after + 2) else {
            return Ok(None);
        };
        if rest == b"--" {
            return Err(FormError::NoFile); // the closing delimiter
        }
        let Some(line_end) = find(body, b"\r\n", after) else {
            return Ok(None);
        };
        if !body[after..line_end]
            .iter()
            .all(|b| *b == b' ' || *b == b'\t')
        {
            return Err(FormError::Malformed);
        }
        let Some(blank) = find(body, b"\r\n\r\n", line_end) else {
            return Ok(None);
        };
        let headers = std::str::from_utf8(&body[line_end + 2..blank.max(line_end + 2)])
            .map_err(|_| FormError::Malformed)?;
        let (name, file_name) = disposition(headers)?;
        let content = blank + 4;
        if name == "file" {
            return Ok(Some(Head {
                fields,
                file_name: file_name.unwrap_or_default(),
                file_part: body[at..content].to_vec(),
                consumed: content,
            }));
        }
        let Some(end) = find(body, line_delimiter, content) else {
            return Ok(None);
        };
        let value = std::str::from_utf8(&body[content..end]).map_err(|_| FormError::Malformed)?;
        fields.push((name, value.to_owned()));
        at = end + 2;
    }
}

/// The `name` and `filename` of a part's `Content-Disposition: form-data` header.
fn disposition(headers: &str) -> Result<(String, Option<String>), FormError> {
    let value = headers
        .split("\r\n")
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("content-disposition")
                .then_some(value)
        })
        .ok_or(FormError::Malformed)?;
    let mut params = split_params(value).into_iter();
    if !params
        .next()
        .is_some_and(|(kind, _)| kind.trim().eq_ignore_ascii_case("form-data"))
    {
        return Err(FormError::Malformed);
    }
    let mut name = None;
    let mut file_name = None;
    for (key, value) in params {
        match key.trim().to_ascii_lowercase().as_str() {
            "name" => name = value,
            "filename" => file_name = value,
            _ => {}
        }
    }
    // A name with a line break or another control character would not read back the same
    // from the head the edge rebuilds (found by the `post_form` fuzz target); no S3 field has one.
    let name = name
        .filter(|n| !n.chars().any(char::is_control))
        .ok_or(FormError::Malformed)?;
    Ok((name, file_name))
}

/// `kind; a=1; b="x;y"` as `[("kind", None), ("a", "1"), ("b", "x;y")]`: semicolons inside
/// quotes do not split, and a quoted value's backslash escapes are undone.
fn split_params(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != ';' && *c != '=') {
            key.push(c);
        }
        let value = if chars.next_if_eq(&'=').is_some() {
            while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
            let mut value = String::new();
            if chars.next_if_eq(&'"').is_some() {
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => value.extend(chars.next()),
                        c => value.push(c),
                    }
                }
                while chars.next_if(|c| *c != ';').is_some() {}
            } else {
                while let Some(c) = chars.next_if(|c| *c != ';') {
                    value.push(c);
                }
                value.truncate(value.trim_end().len());
            }
            Some(value)
        } else {
            None
        };
        out.push((key.trim().to_owned(), value));
        if chars.next().is_none() {
            return out;
        }
    }
}

/// The first `needle` in `hay` at or after `from`.
fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// A form head of `fields`, each a part of its own, delimited by `boundary`, followed by
/// `file_part` (the client's file delimiter and headers, as sent).
pub fn head_bytes(boundary: &str, fields: &[(String, String)], file_part: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(file_part.len() + fields.len() * 96);
    for (name, value) in fields {
        out.extend_from_slice(b"--");
        out.extend_from_slice(boundary.as_bytes());
        out.extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        for c in name.chars() {
            if c == '"' || c == '\\' {
                out.push(b'\\');
            }
            let mut utf8 = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        }
        out.extend_from_slice(b"\"\r\n\r\n");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(file_part);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str = "----formBoundary7MA4YWxk";

    /// A form as a browser writes it: the fields, then the file, then the closing delimiter.
    fn form(fields: &[(&str, &str)], file: &[u8]) -> Vec<u8> {
        let fields: Vec<(String, String)> = fields
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let file_part = format!(
            "--{B}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat \\\"1\\\".png\"\r\nContent-Type: image/png\r\n\r\n"
        );
        let mut body = head_bytes(B, &fields, file_part.as_bytes());
        body.extend_from_slice(file);
        body.extend_from_slice(format!("\r\n--{B}--\r\n").as_bytes());
        body
    }

    #[test]
    fn the_boundary_comes_from_the_content_type() {
        for (ct, want) in [
            ("multipart/form-data; boundary=abc", Some("abc")),
            ("Multipart/Form-Data;boundary=\"a;b c\"", Some("a;b c")),
            (
                "multipart/form-data; charset=utf-8; boundary=--x--",
                Some("--x--"),
            ),
            ("multipart/form-data", None),
            ("multipart/form-data; boundary=", None),
            ("multipart/mixed; boundary=abc", None),
            ("application/json", None),
        ] {
            assert_eq!(boundary(ct).as_deref(), want, "{ct}");
        }
        assert_eq!(
            boundary(&format!("multipart/form-data; boundary={}", "x".repeat(71))),
            None
        );
    }

    #[test]
    fn the_head_is_the_fields_and_the_file_parts_headers_in_any_split() {
        let fields = [
            ("key", "up/${filename}"),
            ("x-amz-meta-note", "caf\u{e9}\r\nline two"),
            ("na\"me", ""),
        ];
        let body = form(&fields, b"\x89PNG file bytes");
        let want_consumed = body.len() - b"\x89PNG file bytes".len() - B.len() - 8;
        let full = parse(&body, B).unwrap().unwrap();
        assert_eq!(full.consumed, want_consumed);
        assert_eq!(full.file_name, "cat \"1\".png");
        let names: Vec<(&str, &str)> = full
            .fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(names, fields);
        assert!(full.file_part.starts_with(format!("--{B}\r\n").as_bytes()));
        assert!(full.file_part.ends_with(b"image/png\r\n\r\n"));
        // Rebuilt from what was read, the head is what was sent.
        assert_eq!(
            head_bytes(B, &full.fields, &full.file_part),
            body[..full.consumed]
        );
        // Until the file part's headers are whole, there is no head yet.
        for cut in 0..full.consumed {
            assert_eq!(parse(&body[..cut], B), Ok(None), "cut at {cut}");
        }
        for cut in full.consumed..body.len() {
            assert_eq!(parse(&body[..cut], B).unwrap().as_ref(), Some(&full));
        }
    }

    #[test]
    fn a_preamble_is_skipped_and_a_delimiter_may_carry_padding() {
        let mut body = b"ignore me\r\n".to_vec();
        body.extend_from_slice(
            format!(
                "--{B}  \r\ncontent-disposition: form-data; name=key\r\n\r\nk\r\n--{B}\r\n\
                     Content-Disposition: form-data; name=\"file\"\r\n\r\ndata"
            )
            .as_bytes(),
        );
        let head = parse(&body, B).unwrap().unwrap();
        assert_eq!(head.fields, [("key".to_owned(), "k".to_owned())]);
        assert_eq!(head.file_name, "");
        assert_eq!(&body[head.consumed..], b"data");
    }

    #[test]
    fn forms_the_edge_cannot_read_are_refused() {
        let no_file = format!(
            "--{B}\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n--{B}--\r\n"
        );
        assert_eq!(parse(no_file.as_bytes(), B), Err(FormError::NoFile));
        let junk = format!("--{B}x\r\n");
        assert_eq!(parse(junk.as_bytes(), B), Err(FormError::Malformed));
        let nameless = format!("--{B}\r\nContent-Disposition: form-data\r\n\r\nk\r\n--{B}\r\n");
        assert_eq!(parse(nameless.as_bytes(), B), Err(FormError::Malformed));
        let no_disposition = format!("--{B}\r\nContent-Type: text/plain\r\n\r\nk\r\n");
        assert_eq!(
            parse(no_disposition.as_bytes(), B),
            Err(FormError::Malformed)
        );
        let not_utf8 = [
            format!("--{B}\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n").as_bytes(),
            b"\xff\xfe",
            format!("\r\n--{B}\r\n").as_bytes(),
        ]
        .concat();
        assert_eq!(parse(&not_utf8, B), Err(FormError::Malformed));
        let broken_name = format!(
            "--{B}\r\nContent-Disposition: form-data; name=\"k\n\\\r\"\r\n\r\nv\r\n--{B}\r\n"
        );
        assert_eq!(parse(broken_name.as_bytes(), B), Err(FormError::Malformed));
        let huge = form(&[("x-amz-meta-big", &"a".repeat(HEAD_LIMIT))], b"f");
        assert_eq!(parse(&huge, B), Err(FormError::TooLarge));
        assert_eq!(parse(&huge[..HEAD_LIMIT + 1], B), Err(FormError::TooLarge));
        // Below the limit, an unfinished head just waits.
        assert_eq!(parse(&huge[..HEAD_LIMIT], B), Ok(None));
    }
}
