//! S3's `LastModified` (`2026-11-25T10:00:00.000Z` in listings) as nanoseconds since the Unix
//! epoch, the unit `sync` compares it in against a file's modification time. The whole-second
//! part is read by `slipstream_sign::SigningTime`, so one calendar routine serves both crates.

use slipstream_sign::SigningTime;

/// Nanoseconds since the epoch of an ISO 8601 UTC time with an optional fraction
/// (`YYYY-MM-DDTHH:MM:SS[.f...]Z`); `None` for any other text.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let body = text.strip_suffix('Z')?;
    let (whole, fraction) = match body.split_once('.') {
        Some((w, f)) => (w, f),
        None => (body, ""),
    };
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if body.contains('.') && fraction.is_empty() {
        return None;
    }
    let secs = SigningTime::parse_rfc3339(&format!("{whole}Z"))
        .ok()?
        .unix();
    let nanos = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(9)
        .fold(0i64, |n, b| n * 10 + i64::from(b - b'0'));
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_times_read_to_the_nanosecond() {
        let at = 1_795_600_800; // 2026-11-25T10:00:00Z
        assert_eq!(
            parse_timestamp("2026-11-25T10:00:00Z"),
            Some(at * 1_000_000_000)
        );
        assert_eq!(
            parse_timestamp("2026-11-25T10:00:00.250Z"),
            Some(at * 1_000_000_000 + 250_000_000)
        );
        assert_eq!(
            parse_timestamp("2026-11-25T10:00:00.123456789Z"),
            Some(at * 1_000_000_000 + 123_456_789)
        );
        for bad in [
            "",
            "2026-11-25T10:00:00",
            "2026-11-25T10:00:00.Z",
            "2026-11-25T10:00:00.1234567890Z",
            "2026-11-25T10:00:00.12aZ",
            "2026-13-25T10:00:00Z",
            "Wed, 25 Nov 2026 10:00:00 GMT",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
