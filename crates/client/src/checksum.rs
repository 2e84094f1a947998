//! The CRC checksums S3 keeps with objects and parts (`x-amz-checksum-*`), in the base64 form
//! S3 uses, and how two CRCs combine into the CRC of the concatenation.
//!
//! Only CRCs: a download checks parts that arrive in any order, and a CRC of the whole is the
//! CRCs of the parts combined, which no SHA can do. CRC64NVME is what S3 computes for objects
//! uploaded without a checksum; CRC32 is what boto3 and the AWS CLI send by default; CRC32C
//! is this crate's default for uploads.

use std::fmt;
use std::str::FromStr;

use crc_fast::CrcAlgorithm;

/// A checksum algorithm S3 accepts for objects and parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChecksumAlgorithm {
    /// CRC32 (ISO-HDLC, zlib's): 4 bytes.
    Crc32,
    /// CRC32C (Castagnoli): 4 bytes.
    #[default]
    Crc32c,
    /// CRC64NVME: 8 bytes; multipart uploads with it carry a checksum of the whole object.
    Crc64Nvme,
}

/// A whole-object checksum as S3 reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checksum {
    /// Which CRC.
    pub algorithm: ChecksumAlgorithm,
    /// Its value, base64 as in the header.
    pub value: String,
}

impl ChecksumAlgorithm {
    /// Every algorithm, in the order a reader prefers them (the widest first).
    pub const ALL: [Self; 3] = [Self::Crc64Nvme, Self::Crc32c, Self::Crc32];

    /// The name S3 uses (`x-amz-checksum-algorithm`, `--checksum-algorithm`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Crc32 => "CRC32",
            Self::Crc32c => "CRC32C",
            Self::Crc64Nvme => "CRC64NVME",
        }
    }

    /// The header that carries a value: `x-amz-checksum-crc32c` and the like.
    pub fn header(self) -> &'static str {
        match self {
            Self::Crc32 => "x-amz-checksum-crc32",
            Self::Crc32c => "x-amz-checksum-crc32c",
            Self::Crc64Nvme => "x-amz-checksum-crc64nvme",
        }
    }

    /// The element of a part in `CompleteMultipartUpload`: `ChecksumCRC32C` and the like.
    pub fn xml_tag(self) -> &'static str {
        match self {
            Self::Crc32 => "ChecksumCRC32",
            Self::Crc32c => "ChecksumCRC32C",
            Self::Crc64Nvme => "ChecksumCRC64NVME",
        }
    }

    /// Whether a multipart upload with it gets a checksum of the whole object (`FULL_OBJECT`)
    /// rather than a checksum of the part checksums (`COMPOSITE`, S3's default for the 32-bit
    /// CRCs and the one every S3-compatible server accepts). S3 allows only the first for
    /// CRC64NVME.
    pub fn full_object(self) -> bool {
        self == Self::Crc64Nvme
    }

    /// The CRC of `data`.
    pub fn compute(self, data: &[u8]) -> u64 {
        crc_fast::checksum(self.crc(), data)
    }

    /// A CRC to feed with data that arrives in order, piece by piece.
    pub fn start(self) -> Crc {
        Crc(crc_fast::Digest::new(self.crc()))
    }

    /// The CRC of `a` followed by `b`, from their CRCs and the length of `b`: for pieces that
    /// arrive out of order. It costs 50 µs (CRC32C) to 200 µs (CRC64NVME), the time to compute
    /// the CRC of 0.5 to 2 MB: per part, not per frame; [`Crc`] for data in order.
    pub fn combine(self, crc_a: u64, crc_b: u64, len_b: u64) -> u64 {
        crc_fast::checksum_combine(self.crc(), crc_a, crc_b, len_b)
    }

    /// `crc` in S3's form: big-endian bytes (4 or 8), base64.
    pub fn encode(self, crc: u64) -> String {
        match self {
            Self::Crc64Nvme => base64(&crc.to_be_bytes()),
            Self::Crc32 | Self::Crc32c => base64(&(crc as u32).to_be_bytes()),
        }
    }

    /// The base64 CRC of `data`, for a header.
    pub fn base64_of(self, data: &[u8]) -> String {
        self.encode(self.compute(data))
    }

    fn crc(self) -> CrcAlgorithm {
        match self {
            Self::Crc32 => CrcAlgorithm::Crc32IsoHdlc,
            Self::Crc32c => CrcAlgorithm::Crc32Iscsi,
            Self::Crc64Nvme => CrcAlgorithm::Crc64Nvme,
        }
    }
}

/// A CRC computed over data fed in order ([`ChecksumAlgorithm::start`]).
#[derive(Clone, Copy, Debug)]
pub struct Crc(crc_fast::Digest);

impl Crc {
    /// Adds the next bytes.
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    /// The CRC of everything fed so far.
    pub fn value(&self) -> u64 {
        self.0.finalize()
    }
}

impl fmt::Display for ChecksumAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The caller named an algorithm this crate does not compute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm(pub String);

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown checksum algorithm {:?}: use CRC32C, CRC64NVME or CRC32 (SHA-1 and SHA-256 \
             cannot be combined across parallel parts)",
            self.0
        )
    }
}

impl std::error::Error for UnknownAlgorithm {}

impl FromStr for ChecksumAlgorithm {
    type Err = UnknownAlgorithm;

    /// S3's names, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownAlgorithm(s.to_owned()))
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                s.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChecksumAlgorithm::*;

    #[test]
    fn matches_the_standard_check_values() {
        // The CRC catalogue's check values (CRC of "123456789").
        assert_eq!(Crc32.compute(b"123456789"), 0xCBF4_3926);
        assert_eq!(Crc32c.compute(b"123456789"), 0xE306_9283);
        assert_eq!(Crc64Nvme.compute(b"123456789"), 0xAE8B_1486_0A79_9888);
    }

    #[test]
    fn encodes_as_s3_does() {
        assert_eq!(Crc32c.base64_of(b""), "AAAAAA==");
        assert_eq!(Crc32c.base64_of(b"123456789"), "4waSgw==");
        assert_eq!(Crc32.base64_of(b"123456789"), "y/Q5Jg==");
        assert_eq!(Crc64Nvme.base64_of(b""), "AAAAAAAAAAA=");
        assert_eq!(Crc64Nvme.base64_of(b"123456789"), "rosUhgp5mIg=");
    }

    #[test]
    fn combining_parts_gives_the_crc_of_the_whole() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        for alg in ChecksumAlgorithm::ALL {
            let (a, b) = data.split_at(3_333);
            let combined = alg.combine(alg.compute(a), alg.compute(b), b.len() as u64);
            assert_eq!(combined, alg.compute(&data), "{alg}");
            let mut crc = alg.start();
            data.chunks(1000).for_each(|c| crc.update(c));
            assert_eq!(crc.value(), alg.compute(&data), "{alg}");
        }
    }

    #[test]
    fn parses_s3_names_in_any_case() {
        assert_eq!("crc64nvme".parse(), Ok(Crc64Nvme));
        assert_eq!("CRC32C".parse(), Ok(Crc32c));
        assert_eq!("Crc32".parse(), Ok(Crc32));
        let err = "SHA256".parse::<ChecksumAlgorithm>().unwrap_err();
        assert!(err.to_string().contains("CRC64NVME"), "{err}");
    }
}
