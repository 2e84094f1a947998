//! URLs for a column of keys, laid out as Apache Arrow's large string array: one byte buffer,
//! `i64` offsets and a validity bitmap, so a binding can hand the buffers to Arrow as they are
//! (no string object per URL, no copy).
//!
//! SigV4 URLs have a length known before signing ([`Template::url_len`]), so the column is
//! sized in one pass, allocated once, and every core then writes its rows in place: memory is
//! the output plus one URL of scratch per thread. SigV4A signatures vary in length; those rows
//! are signed into one buffer per thread and joined (memory twice the output for a moment, at
//! a cost that is small beside 15 µs of ECDSA a row).
//!
//! This module knows nothing of Arrow's C interface: the binding reads the input buffers
//! ([`KeyColumn`]) and exports the output (`bindings/python/src/arrow.rs`).

use rayon::prelude::*;

use crate::batch::thread_count;
use crate::{Error, Template};

/// Rows of keys, read by row number from any number of threads.
pub trait KeyColumn: Sync {
    /// How many rows.
    fn len(&self) -> usize;
    /// Whether there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The bytes of row `row`'s key, `None` for a null. Bytes rather than `str`: a producer's
    /// layout is trusted, its UTF-8 is checked here.
    fn key(&self, row: usize) -> Option<&[u8]>;
}

/// Keys already in Rust: a slice of optional strings.
impl<S: AsRef<str> + Sync> KeyColumn for [Option<S>] {
    fn len(&self) -> usize {
        <[Option<S>]>::len(self)
    }

    fn key(&self, row: usize) -> Option<&[u8]> {
        self[row].as_ref().map(|k| k.as_ref().as_bytes())
    }
}

/// A column of URLs in Arrow's large string layout.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct UrlColumn {
    /// Every URL, one after another.
    pub data: Vec<u8>,
    /// `rows + 1` offsets into `data`: row `i` is `data[offsets[i]..offsets[i + 1]]`.
    pub offsets: Vec<i64>,
    /// One bit a row, least significant first, set for a URL and clear for a null; `None`
    /// when no row is null.
    pub validity: Option<Vec<u8>>,
    /// How many rows are null.
    pub null_count: usize,
}

impl UrlColumn {
    /// How many rows.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether row `row` has a URL (its key was not null).
    pub fn is_valid(&self, row: usize) -> bool {
        self.validity
            .as_ref()
            .map_or(true, |bits| bits[row / 8] >> (row % 8) & 1 == 1)
    }

    /// Row `row`'s URL, `None` for a null.
    pub fn url(&self, row: usize) -> Option<&str> {
        if !self.is_valid(row) {
            return None;
        }
        let span = usize::try_from(self.offsets[row]).ok()?
            ..usize::try_from(self.offsets[row + 1]).ok()?;
        std::str::from_utf8(&self.data[span]).ok()
    }
}

impl std::fmt::Debug for UrlColumn {
    // The URLs carry signatures: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UrlColumn")
            .field("rows", &self.len())
            .field("bytes", &self.data.len())
            .field("null_count", &self.null_count)
            .finish()
    }
}

/// Why a column could not be signed: the first row (lowest number) that failed, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowError {
    /// The row's number in the column.
    pub row: usize,
    /// What is wrong with its key.
    pub error: Error,
}

impl std::fmt::Display for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "row {}: {}", self.row, self.error)
    }
}

impl std::error::Error for RowError {}

/// Signs every non-null key of `keys` with `template` on up to `threads` threads (all cores
/// when `None`); nulls stay null. Fails with the lowest failing row: an empty key, bytes that
/// are not UTF-8.
pub fn sign_column(
    template: &Template,
    keys: &(impl KeyColumn + ?Sized),
    threads: Option<usize>,
) -> Result<UrlColumn, RowError> {
    sign_column_into(template, keys, threads, |n| vec![0u8; n])
}

/// [`sign_column`] with the caller making the zeroed URL buffer of the size asked (SigV4 only;
/// SigV4A's is grown as it is joined): a binding may ask the kernel for huge pages there,
/// since the first writes to fresh memory fault a page at a time and faults in one process
/// are partly serialized.
pub fn sign_column_into(
    template: &Template,
    keys: &(impl KeyColumn + ?Sized),
    threads: Option<usize>,
    zeroed: impl FnOnce(usize) -> Vec<u8>,
) -> Result<UrlColumn, RowError> {
    let rows = keys.len();
    let size = rows.div_ceil(thread_count(rows, threads)).max(1);
    let (validity, null_count) = validity(keys);
    let mut offsets = vec![0i64; rows + 1];
    let data = if template.url_len("k").is_some() {
        sized(template, keys, size, &mut offsets, zeroed)?
    } else {
        joined(template, keys, size, &mut offsets)?
    };
    Ok(UrlColumn {
        data,
        offsets,
        validity,
        null_count,
    })
}

/// Row `row`'s key as text, or why it cannot be signed.
fn text(keys: &(impl KeyColumn + ?Sized), row: usize) -> Result<Option<&str>, RowError> {
    let Some(bytes) = keys.key(row) else {
        return Ok(None);
    };
    let fail = |error| RowError { row, error };
    let key = std::str::from_utf8(bytes).map_err(|_| fail(Error::KeyNotUtf8))?;
    if key.is_empty() {
        return Err(fail(Error::EmptyKey));
    }
    Ok(Some(key))
}

/// The lowest failing row of the pieces' results.
fn first_error(results: impl IntoIterator<Item = Result<(), RowError>>) -> Result<(), RowError> {
    match results
        .into_iter()
        .filter_map(Result::err)
        .min_by_key(|e| e.row)
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// SigV4: lengths first (every key checked there), then each piece signs in place.
fn sized(
    template: &Template,
    keys: &(impl KeyColumn + ?Sized),
    size: usize,
    offsets: &mut [i64],
    zeroed: impl FnOnce(usize) -> Vec<u8>,
) -> Result<Vec<u8>, RowError> {
    // Pass 1: offsets[row + 1] holds row's length.
    let results: Vec<_> = offsets[1..]
        .par_chunks_mut(size)
        .enumerate()
        .map(|(piece, lens)| {
            for (i, len) in lens.iter_mut().enumerate() {
                let row = piece * size + i;
                *len = match text(keys, row)? {
                    Some(key) => to_i64(template.url_len(key).unwrap_or(0)),
                    None => 0,
                };
            }
            Ok(())
        })
        .collect();
    first_error(results)?;
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    let total = offsets.last().copied().unwrap_or(0);
    let len = usize::try_from(total).unwrap_or(0);
    let mut data = zeroed(len);
    if data.len() != len {
        data = vec![0u8; len];
    }

    // Pass 2: each piece owns the bytes from its first row's offset to its last row's end.
    let offsets = &*offsets;
    let rows = offsets.len() - 1;
    let mut pieces = Vec::new();
    let mut rest: &mut [u8] = &mut data;
    for first in (0..rows).step_by(size) {
        let last = (first + size).min(rows);
        let (mine, after) =
            std::mem::take(&mut rest).split_at_mut(to_usize(offsets[last] - offsets[first]));
        pieces.push((first..last, mine));
        rest = after;
    }
    let results: Vec<_> = pieces
        .into_par_iter()
        .map(|(span, out)| {
            let base = offsets[span.start];
            let mut url = String::new();
            for row in span {
                let Some(key) = text(keys, row)? else {
                    continue;
                };
                url.clear();
                template
                    .sign_into(key, &mut url)
                    .map_err(|error| RowError { row, error })?;
                let span = to_usize(offsets[row] - base)..to_usize(offsets[row + 1] - base);
                if url.len() != span.len() {
                    // `url_len` and `sign_into` disagree: a bug here, never a short URL.
                    let error = Error::Crypto("a URL's length differs from its computed length");
                    return Err(RowError { row, error });
                }
                out[span].copy_from_slice(url.as_bytes());
            }
            Ok(())
        })
        .collect();
    first_error(results)?;
    Ok(data)
}

/// SigV4A: each piece signs into its own buffer; the buffers are then joined in row order.
fn joined(
    template: &Template,
    keys: &(impl KeyColumn + ?Sized),
    size: usize,
    offsets: &mut [i64],
) -> Result<Vec<u8>, RowError> {
    let rows = offsets.len() - 1;
    let pieces: Vec<Result<(String, Vec<usize>), RowError>> = (0..rows.div_ceil(size))
        .into_par_iter()
        .map(|piece| {
            let mut text_out = String::new();
            let mut ends = Vec::with_capacity(size);
            for row in piece * size..((piece + 1) * size).min(rows) {
                if let Some(key) = text(keys, row)? {
                    template
                        .sign_into(key, &mut text_out)
                        .map_err(|error| RowError { row, error })?;
                }
                ends.push(text_out.len());
            }
            Ok((text_out, ends))
        })
        .collect();
    let mut parts = Vec::with_capacity(pieces.len());
    let mut failures = Vec::new();
    for p in pieces {
        match p {
            Ok(part) => parts.push(part),
            Err(e) => failures.push(Err(e)),
        }
    }
    first_error(failures)?;
    let mut data = Vec::with_capacity(parts.iter().map(|(t, _)| t.len()).sum());
    let mut row = 0;
    for (part, ends) in parts {
        let base = to_i64(data.len());
        for end in ends {
            row += 1;
            offsets[row] = base + to_i64(end);
        }
        data.extend_from_slice(part.as_bytes());
    }
    Ok(data)
}

/// The validity bitmap and null count, or `None` when every row has a key (one pass).
fn validity(keys: &(impl KeyColumn + ?Sized)) -> (Option<Vec<u8>>, usize) {
    let rows = keys.len();
    let mut bits = vec![0u8; rows.div_ceil(8)];
    let mut nulls = 0;
    for row in 0..rows {
        match keys.key(row) {
            Some(_) => bits[row / 8] |= 1 << (row % 8),
            None => nulls += 1,
        }
    }
    ((nulls > 0).then_some(bits), nulls)
}

// Lengths of buffers in memory fit both types on every platform Rust runs on (at most
// isize::MAX bytes); the conversions cannot fail.
fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_usize(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Credentials, PresignOptions, Presigner, SigningTime, UrlBase};

    fn presigner(v4a: bool) -> Presigner {
        let base = UrlBase {
            origin: "https://b.s3.amazonaws.com".into(),
            host: "b.s3.amazonaws.com".into(),
            path_prefix: "/".into(),
        };
        let creds = Credentials::new("AKIDEXAMPLE", "secret", None).unwrap();
        if v4a {
            Presigner::new_v4a(base, "*", creds).unwrap()
        } else {
            Presigner::new(base, "us-east-1", creds).unwrap()
        }
    }

    fn template(p: &Presigner) -> Template {
        let time = SigningTime::from_unix(1_700_000_000).unwrap();
        p.template(&PresignOptions::get(), time).unwrap()
    }

    fn keys(n: usize) -> Vec<Option<String>> {
        (0..n)
            .map(|i| (i % 7 != 3).then(|| format!("dir {i}/ü+{i}.bin")))
            .collect()
    }

    #[test]
    fn rows_match_single_signatures_for_any_thread_count() {
        let t = template(&presigner(false));
        let keys = keys(1001);
        for threads in [1, 2, 3, 8, 5000] {
            let col = sign_column(&t, keys.as_slice(), Some(threads)).unwrap();
            assert_eq!(col.len(), keys.len());
            assert_eq!(col.null_count, keys.iter().filter(|k| k.is_none()).count());
            for (row, key) in keys.iter().enumerate() {
                let want = key.as_ref().map(|k| t.sign(k).unwrap());
                assert_eq!(
                    col.url(row),
                    want.as_deref(),
                    "row {row}, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn v4a_rows_are_joined_in_order() {
        let t = template(&presigner(true));
        let keys = keys(50);
        let col = sign_column(&t, keys.as_slice(), Some(3)).unwrap();
        for (row, key) in keys.iter().enumerate() {
            // ECDSA signatures are randomized: compare everything before the signature.
            let got = col.url(row);
            assert_eq!(got.is_some(), key.is_some(), "row {row}");
            if let (Some(got), Some(key)) = (got, key) {
                let want = t.sign(key).unwrap();
                let cut = want.find("X-Amz-Signature=").unwrap();
                assert_eq!(got[..cut], want[..cut], "row {row}");
            }
        }
    }

    #[test]
    fn no_nulls_means_no_bitmap_and_empty_input_one_offset() {
        let t = template(&presigner(false));
        let col = sign_column(&t, [Some("a"), Some("b")].as_slice(), None).unwrap();
        assert_eq!((col.validity, col.null_count), (None, 0));
        let empty: [Option<&str>; 0] = [];
        let col = sign_column(&t, empty.as_slice(), None).unwrap();
        assert_eq!((col.offsets, col.data.len()), (vec![0], 0));
    }

    /// Raw bytes, for keys that are not UTF-8.
    struct Bytes(Vec<Option<Vec<u8>>>);

    impl KeyColumn for Bytes {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn key(&self, row: usize) -> Option<&[u8]> {
            self.0[row].as_deref()
        }
    }

    #[test]
    fn the_lowest_bad_row_is_named() {
        for v4a in [false, true] {
            let t = template(&presigner(v4a));
            let mut rows: Vec<Option<Vec<u8>>> =
                (0..100).map(|i| Some(vec![b'a' + i % 26])).collect();
            rows[90] = Some(Vec::new());
            rows[40] = Some(vec![0xff, 0xfe]);
            rows[10] = None;
            let e = sign_column(&t, &Bytes(rows.clone()), Some(4)).unwrap_err();
            assert_eq!(
                e,
                RowError {
                    row: 40,
                    error: Error::KeyNotUtf8
                }
            );
            rows[40] = Some(b"ok".to_vec());
            let e = sign_column(&t, &Bytes(rows), Some(4)).unwrap_err();
            assert_eq!((e.row, &e.error), (90, &Error::EmptyKey));
            assert_eq!(e.to_string(), format!("row 90: {}", Error::EmptyKey));
        }
    }
}
