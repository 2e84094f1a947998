//! The bytes a reader holds around its position: the chunks received and not yet read, and the
//! last bytes read, kept so that a short seek back (a library reading a header, then seeking to
//! 0 to read it again) costs no request. No I/O: object_stream.rs fills it.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

/// Bytes kept behind the position for seeks back. They are slices of the chunks read, so they
/// may keep alive the (at most two) parts those chunks came from.
pub(crate) const BEHIND: usize = 1 << 20;

/// Chunks in order from the reader's position, and the bytes read just before it.
#[derive(Default)]
pub(crate) struct Held {
    ahead: VecDeque<Bytes>,
    ahead_len: usize,
    /// How far into `ahead` a search for a newline has looked (`line_end`).
    scanned: usize,
    /// The last bytes read, oldest first, at most [`BEHIND`] and one slice more.
    behind: VecDeque<Bytes>,
    behind_len: usize,
}

impl Held {
    /// Bytes held ahead of the position.
    pub(crate) fn len(&self) -> usize {
        self.ahead_len
    }

    /// Bytes held behind the position.
    pub(crate) fn behind(&self) -> usize {
        self.behind_len
    }

    /// Adds a chunk received after those held.
    pub(crate) fn push(&mut self, chunk: Bytes) {
        self.ahead_len += chunk.len();
        self.ahead.push_back(chunk);
    }

    /// Drops everything, ahead and behind (a seek out of reach).
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    /// The length of the first chunk held (what `read1` returns at most).
    pub(crate) fn first_len(&self) -> usize {
        self.ahead.front().map_or(0, Bytes::len)
    }

    /// Where the first line held ends (after its `\n`, at most `limit` bytes in), if it is
    /// held whole; `None` if more is needed to say.
    pub(crate) fn line_end(&mut self, limit: usize) -> Option<usize> {
        if limit == 0 {
            return Some(0);
        }
        let mut offset = 0;
        for chunk in &self.ahead {
            let end = offset + chunk.len();
            if end > self.scanned {
                let from = self.scanned.saturating_sub(offset);
                if let Some(i) = chunk[from..].iter().position(|&b| b == b'\n') {
                    return Some((offset + from + i + 1).min(limit));
                }
                self.scanned = end;
            }
            if end >= limit {
                return Some(limit);
            }
            offset = end;
        }
        None
    }

    /// Takes the first `n` bytes held (fewer if fewer are held): a slice of one chunk when
    /// they lie in one, no copy. They are kept behind.
    pub(crate) fn take(&mut self, n: usize) -> Bytes {
        let n = n.min(self.ahead_len);
        match self.ahead.front() {
            Some(first) if first.len() >= n => {
                let mut out = Bytes::new();
                self.advance(n, |piece| out = piece.clone());
                out
            }
            _ => {
                let mut out = BytesMut::with_capacity(n);
                self.advance(n, |piece| out.extend_from_slice(piece));
                out.freeze()
            }
        }
    }

    /// Moves past the first `n` bytes held (fewer if fewer are held) without copying them: a
    /// seek forward. They are kept behind.
    pub(crate) fn skip(&mut self, n: usize) {
        self.advance(n, |_| {});
    }

    /// Moves the first `n` bytes held (fewer if fewer are held) behind, handing `each` the
    /// slices of the chunks they lie in, in order. The chunks' own slices go behind, not a
    /// copy: no new memory is pinned.
    fn advance(&mut self, n: usize, mut each: impl FnMut(&Bytes)) {
        let mut n = n.min(self.ahead_len);
        self.ahead_len -= n;
        self.scanned = self.scanned.saturating_sub(n);
        while n > 0 {
            let Some(mut chunk) = self.ahead.pop_front() else {
                break;
            };
            let piece = chunk.split_to(n.min(chunk.len()));
            n -= piece.len();
            each(&piece);
            self.keep_behind(piece);
            if !chunk.is_empty() {
                self.ahead.push_front(chunk);
            }
        }
    }

    /// Moves the last `n` bytes read back ahead (`n` at most [`Held::behind`]).
    pub(crate) fn unread(&mut self, mut n: usize) {
        n = n.min(self.behind_len);
        self.scanned = 0;
        while n > 0 {
            let Some(mut last) = self.behind.pop_back() else {
                break;
            };
            let piece = if last.len() > n {
                let piece = last.split_off(last.len() - n);
                self.behind.push_back(last);
                piece
            } else {
                last
            };
            n -= piece.len();
            self.behind_len -= piece.len();
            self.ahead_len += piece.len();
            self.ahead.push_front(piece);
        }
    }

    fn keep_behind(&mut self, piece: Bytes) {
        if piece.is_empty() {
            return;
        }
        self.behind_len += piece.len();
        self.behind.push_back(piece);
        while let Some(first) = self.behind.front() {
            if self.behind_len - first.len() < BEHIND {
                break;
            }
            self.behind_len -= first.len();
            self.behind.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(chunks: &[&'static [u8]]) -> Held {
        let mut held = Held::default();
        for c in chunks {
            held.push(Bytes::from_static(c));
        }
        held
    }

    #[test]
    fn takes_across_chunks_and_gives_back_what_was_read() {
        let mut h = held(&[b"abc", b"defg", b"h"]);
        assert_eq!(&h.take(2)[..], b"ab");
        assert_eq!(&h.take(4)[..], b"cdef");
        assert_eq!((h.len(), h.behind()), (2, 6));
        h.unread(5);
        assert_eq!((h.len(), h.behind()), (7, 1));
        assert_eq!(&h.take(100)[..], b"bcdefgh");
        h.unread(100);
        assert_eq!(&h.take(8)[..], b"abcdefgh", "all of it was behind");
        h.unread(7);
        h.skip(5);
        assert_eq!((h.len(), h.behind(), &h.take(1)[..]), (2, 6, &b"g"[..]));
    }

    #[test]
    fn lines_are_found_again_after_a_seek_back() {
        let mut h = held(&[b"one\ntw", b"o\nthree"]);
        assert_eq!(h.line_end(usize::MAX), Some(4));
        h.take(4);
        assert_eq!(h.line_end(usize::MAX), Some(4));
        h.take(4);
        assert_eq!(
            h.line_end(usize::MAX),
            None,
            "the last line is not whole yet"
        );
        h.unread(8);
        assert_eq!(h.line_end(usize::MAX), Some(4));
        assert_eq!(h.line_end(2), Some(2));
    }

    #[test]
    fn behind_is_bounded() {
        let mut h = Held::default();
        let part = Bytes::from(vec![7u8; BEHIND / 4]);
        for _ in 0..20 {
            h.push(part.clone());
            h.take(part.len());
        }
        let kept = h.behind();
        assert!((BEHIND..BEHIND + part.len()).contains(&kept), "{kept}");
        h.unread(usize::MAX);
        assert_eq!((h.len(), h.behind()), (kept, 0));
    }
}
