//! What a request sends: bytes in memory, or a range of a file read as the connection takes it.
//!
//! Why a file range: an upload of many files holds one body per object in flight, and a far
//! server needs hundreds in flight. Read whole, 256 files of 1 MiB held 357 MiB over a long
//! link (s5cmd 75 MiB), and files just under the multipart threshold would hold 8 MiB each. Read
//! as sent, each holds the slice on its way and the one read ahead. A retry reads the range
//! again from the start; the checksum header, computed in a first pass, makes the server refuse
//! a file that changed in between instead of storing a mix.

use std::fs::File;
use std::future::Future;
use std::io;
use std::os::unix::fs::FileExt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::task::JoinHandle;

use crate::checksum::ChecksumAlgorithm;

/// The most of a file read at once for a request body: the slice on its way and the one read
/// ahead stay small per object in flight, and the reads are few (8 per MiB).
const FILE_SLICE: u64 = 128 << 10;

/// A request body.
#[derive(Clone)]
pub enum Payload {
    /// Bytes already in memory.
    Bytes(Bytes),
    /// A range of a file, read as it is sent.
    File(FileRange),
}

impl Payload {
    /// Bytes the body holds (its `Content-Length`).
    pub fn len(&self) -> u64 {
        match self {
            Self::Bytes(b) => b.len() as u64,
            Self::File(f) => f.len,
        }
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for Payload {
    /// The length only: a body may hold anything, secrets included.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bytes(b) => write!(f, "Payload::Bytes({} bytes)", b.len()),
            Self::File(r) => write!(f, "Payload::File({r:?})"),
        }
    }
}

impl From<Bytes> for Payload {
    fn from(data: Bytes) -> Self {
        Self::Bytes(data)
    }
}

/// `len` bytes of a file from `start`.
#[derive(Clone)]
pub struct FileRange {
    file: Arc<File>,
    start: u64,
    len: u64,
}

impl std::fmt::Debug for FileRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRange")
            .field("start", &self.start)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl FileRange {
    /// `len` bytes of `file` from `start` (the file must hold them when they are read).
    pub fn new(file: Arc<File>, start: u64, len: u64) -> Self {
        Self { file, start, len }
    }

    /// The range's checksum under `algorithm`, read off the runtime's threads a slice at a
    /// time; fails if the file is shorter than the range.
    pub async fn checksum(&self, algorithm: ChecksumAlgorithm) -> io::Result<u64> {
        let range = self.clone();
        // Allocated on this thread, for the reason in `FileSlices::read_next`.
        let mut buf = vec![0; FILE_SLICE.min(range.len) as usize];
        tokio::task::spawn_blocking(move || {
            let mut crc = algorithm.start();
            let mut at = range.start;
            let end = range.start + range.len;
            while at < end {
                let n = (end - at).min(FILE_SLICE) as usize;
                range.file.read_exact_at(&mut buf[..n], at)?;
                crc.update(&buf[..n]);
                at += n as u64;
            }
            Ok(crc.value())
        })
        .await
        .map_err(io::Error::other)?
    }
}

/// A [`FileRange`] being read for one attempt of a request: the next slice is read (off the
/// runtime's threads) while the connection sends the one before.
pub(crate) struct FileSlices {
    range: FileRange,
    /// Where the next read starts.
    next: u64,
    /// Bytes handed out.
    handed: u64,
    reading: Option<JoinHandle<io::Result<Bytes>>>,
}

impl FileSlices {
    pub(crate) fn new(range: FileRange) -> Self {
        let next = range.start;
        let mut slices = Self {
            range,
            next,
            handed: 0,
            reading: None,
        };
        slices.read_next();
        slices
    }

    /// Bytes not yet handed out.
    pub(crate) fn left(&self) -> u64 {
        self.range.len - self.handed
    }

    /// Starts reading the slice at `next`, if any is left.
    fn read_next(&mut self) {
        let n = (self.range.start + self.range.len - self.next).min(FILE_SLICE);
        if n == 0 {
            return;
        }
        let (file, at) = (Arc::clone(&self.range.file), self.next);
        self.next += n;
        // Allocated here, on the runtime's thread that will free it once sent: memory a
        // blocking-pool thread allocates goes back to that thread's heap, and idle ones never
        // take it back (256 uploads in flight held 1.3 GiB that way).
        let mut buf = BytesMut::zeroed(n as usize);
        self.reading = Some(tokio::task::spawn_blocking(move || {
            file.read_exact_at(&mut buf, at).map_err(|e| {
                if e.kind() == io::ErrorKind::UnexpectedEof {
                    io::Error::new(e.kind(), "the file became shorter while it was sent")
                } else {
                    e
                }
            })?;
            Ok(buf.freeze())
        }));
    }

    /// The next slice, `None` at the end; the one after starts reading as this one is handed
    /// out.
    pub(crate) fn poll_slice(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        let Some(reading) = self.reading.as_mut() else {
            return Poll::Ready(None);
        };
        let read = ready!(Pin::new(reading).poll(cx));
        self.reading = None;
        let slice = match read {
            Ok(Ok(slice)) => slice,
            Ok(Err(e)) => return Poll::Ready(Some(Err(e))),
            Err(e) => return Poll::Ready(Some(Err(io::Error::other(e)))),
        };
        self.handed += slice.len() as u64;
        self.read_next();
        Poll::Ready(Some(Ok(slice)))
    }
}

impl Drop for FileSlices {
    /// A request given up (a reset, a timeout) leaves no read behind it.
    fn drop(&mut self) {
        if let Some(reading) = self.reading.take() {
            reading.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(data: &[u8]) -> Arc<File> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        Arc::new(f)
    }

    async fn slices(mut s: FileSlices) -> (Vec<usize>, Vec<u8>, io::Result<()>) {
        let (mut lens, mut joined) = (Vec::new(), Vec::new());
        while let Some(slice) = std::future::poll_fn(|cx| s.poll_slice(cx)).await {
            match slice {
                Ok(slice) => {
                    lens.push(slice.len());
                    joined.extend_from_slice(&slice);
                    assert_eq!(s.left(), 3 * FILE_SLICE + 5 - 10 - joined.len() as u64);
                }
                Err(e) => return (lens, joined, Err(e)),
            }
        }
        (lens, joined, Ok(()))
    }

    #[tokio::test]
    async fn a_range_comes_in_slices_with_its_checksum_and_a_shortened_file_fails() {
        let data: Vec<u8> = (0..3 * FILE_SLICE as usize + 5).map(|i| i as u8).collect();
        let file = file_of(&data);
        let len = data.len() as u64 - 10;
        let range = FileRange::new(Arc::clone(&file), 7, len);
        let want = &data[7..data.len() - 3];
        let algorithm = ChecksumAlgorithm::Crc32c;
        assert_eq!(
            range.checksum(algorithm).await.unwrap(),
            algorithm.compute(want)
        );
        let (lens, joined, end) = slices(FileSlices::new(range.clone())).await;
        let slice = FILE_SLICE as usize;
        assert_eq!(lens, [slice, slice, slice - 5]);
        let secret = Payload::Bytes(Bytes::from_static(b"aws_secret_access_key=x"));
        assert_eq!(format!("{secret:?}"), "Payload::Bytes(23 bytes)");
        assert_eq!(joined, want);
        end.unwrap();
        // A retry reads it all again; a file cut short since fails, clearly.
        file.set_len(7 + FILE_SLICE + 1).unwrap();
        assert!(range.checksum(algorithm).await.is_err());
        let (lens, _, end) = slices(FileSlices::new(range)).await;
        assert_eq!(lens, [slice]);
        let e = end.unwrap_err();
        assert!(e.to_string().contains("became shorter"), "{e}");
    }
}
