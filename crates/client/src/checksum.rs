//! CRC32C, the checksum sent with every part and object (`x-amz-checksum-crc32c`), in the
//! base64 form S3 uses.

/// The CRC32C of `data`, big-endian bytes base64-encoded (`"AAAAAA=="` for empty data).
pub fn crc32c_base64(data: &[u8]) -> String {
    encode(crc32c::crc32c(data))
}

/// A CRC32C value in S3's base64 form.
pub fn encode(crc: u32) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = crc.to_be_bytes();
    let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
    let mut s = String::with_capacity(8);
    for shift in [18, 12, 6, 0] {
        s.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
    }
    let last = u32::from(b[3]) << 16;
    s.push(char::from(ALPHABET[((last >> 18) & 63) as usize]));
    s.push(char::from(ALPHABET[((last >> 12) & 63) as usize]));
    s.push_str("==");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_s3s_published_values() {
        // CRC32C("") = 0; CRC32C("123456789") = 0xE3069283 (the standard check value).
        assert_eq!(crc32c_base64(b""), "AAAAAA==");
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c_base64(b"123456789"), "4waSgw==");
    }
}
