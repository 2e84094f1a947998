//! Writing a download's received frames into its file at their offsets, from many parts at once.
//!
//! Writes to one file are serialized by the kernel anyway (the inode's lock), and writers that
//! meet there spin in `rwsem_spin_on_owner` (a profile of a loopback download; docs/BENCHMARKS.md,
//! "Downloads with less CPU"), on a machine whose two cores the server also needs. So the parts
//! take turns on a lock of ours (a waiting thread sleeps) and write a batch of frames in one
//! `pwritev`, one trip through the inode lock per batch instead of one per frame. The CRC is
//! computed before taking a turn. Does no I/O scheduling of its own: callers run it on the
//! blocking pool.

use std::fs::File;
use std::io;
use std::sync::Mutex;

use bytes::Bytes;
use slipstream_client::checksum::Crc;

/// A file written at offsets by several parts.
pub(crate) struct OffsetWriter {
    file: File,
    turn: Mutex<()>,
}

impl OffsetWriter {
    pub(crate) fn new(file: File) -> Self {
        Self {
            file,
            turn: Mutex::new(()),
        }
    }

    /// Writes `frames` one after another from `offset`, after feeding them to `crc` (in order,
    /// while they are still in cache).
    pub(crate) fn write(
        &self,
        frames: &[Bytes],
        offset: u64,
        crc: Option<&mut Crc>,
    ) -> io::Result<()> {
        if let Some(c) = crc {
            frames.iter().for_each(|f| c.update(f));
        }
        // A poisoned lock only means another writer panicked; the file is still usable.
        let _turn = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        write_all_at(&self.file, frames, offset)
    }
}

/// `frames` written contiguously from `offset`, as few system calls as the kernel allows.
#[cfg(target_os = "linux")]
fn write_all_at(file: &File, frames: &[Bytes], offset: u64) -> io::Result<()> {
    use std::io::IoSlice;
    // Linux takes at most 1024 buffers per call (IOV_MAX).
    const MAX_SLICES: usize = 1024;
    let mut at = offset;
    for group in frames.chunks(MAX_SLICES) {
        // The first frame not yet wholly written, and how much of it is.
        let (mut first, mut skip) = (0, 0);
        while first < group.len() {
            let rest = std::iter::once(&group[first][skip..])
                .chain(group[first + 1..].iter().map(|f| &f[..]));
            let slices: Vec<IoSlice<'_>> =
                rest.filter(|f| !f.is_empty()).map(IoSlice::new).collect();
            if slices.is_empty() {
                break;
            }
            let n = rustix::io::pwritev(file, &slices, at)?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            at += n as u64;
            let mut n = n + skip;
            while first < group.len() && n >= group[first].len() {
                n -= group[first].len();
                first += 1;
            }
            skip = n;
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn write_all_at(file: &File, frames: &[Bytes], offset: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut at = offset;
    for f in frames {
        file.write_all_at(f, at)?;
        at += f.len() as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn frames_land_at_their_offsets_whatever_their_number() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out");
        let writer = OffsetWriter::new(File::create(&path).expect("create"));
        // More frames than one pwritev takes, of uneven sizes, and empty ones.
        let frames: Vec<Bytes> = (0..2500u32)
            .map(|i| Bytes::from(vec![(i % 251) as u8; (i % 7) as usize]))
            .collect();
        let len: u64 = frames.iter().map(|f| f.len() as u64).sum();
        writer.write(&frames, 10, None).expect("write");
        writer
            .write(&[Bytes::from_static(b"0123456789")], 0, None)
            .expect("write");
        let mut got = Vec::new();
        File::open(&path)
            .expect("open")
            .read_to_end(&mut got)
            .expect("read");
        let want: Vec<u8> = b"0123456789"
            .iter()
            .copied()
            .chain(frames.iter().flat_map(|f| f.iter().copied()))
            .collect();
        assert_eq!(got.len() as u64, 10 + len);
        assert_eq!(got, want);
    }
}
