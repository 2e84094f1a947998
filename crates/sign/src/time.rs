//! The signing instant and its two textual forms (`YYYYMMDDTHHMMSSZ` and `YYYYMMDD`).
//!
//! The crate never reads the clock: callers pass a [`SigningTime`], so output is reproducible
//! and tests need no mocking. Conversions are done with integer civil-date arithmetic
//! (no calendar dependency) because they run once per template, not per URL.

use crate::Error;

/// Whole seconds since the Unix epoch, UTC, between 1970-01-01 and 9999-12-31.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SigningTime {
    secs: i64,
}

/// The last second of 9999-12-31: four-digit years keep the textual forms fixed-width.
const MAX_SECS: i64 = 253_402_300_799;

impl SigningTime {
    /// A time from Unix seconds; outside 1970..=9999 is an error.
    pub fn from_unix(secs: i64) -> Result<Self, Error> {
        if (0..=MAX_SECS).contains(&secs) {
            Ok(Self { secs })
        } else {
            Err(Error::InvalidTime(format!(
                "{secs} seconds since the epoch is outside 1970..=9999"
            )))
        }
    }

    /// A time from a `std::time::SystemTime` (sub-second part dropped), for callers that read the clock.
    pub fn from_system_time(t: std::time::SystemTime) -> Result<Self, Error> {
        let secs = t
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| Error::InvalidTime("the time is before 1970".into()))?
            .as_secs();
        Self::from_unix(i64::try_from(secs).unwrap_or(i64::MAX))
    }

    /// Parses the SigV4 form `YYYYMMDDTHHMMSSZ`, as in `X-Amz-Date`.
    pub fn parse_amz(s: &str) -> Result<Self, Error> {
        let bad = || Error::InvalidTime(format!("{s:?} is not of the form YYYYMMDDTHHMMSSZ"));
        let b = s.as_bytes();
        if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
            return Err(bad());
        }
        let num = |r: std::ops::Range<usize>| digits(&b[r]).ok_or_else(bad);
        Self::from_fields(
            num(0..4)?,
            num(4..6)?,
            num(6..8)?,
            num(9..11)?,
            num(11..13)?,
            num(13..15)?,
        )
        .map_err(|_| bad())
    }

    /// Parses RFC 3339 in UTC with a `Z` suffix (`2015-08-30T12:36:00Z`), the form test suites use.
    pub fn parse_rfc3339(s: &str) -> Result<Self, Error> {
        let bad = || Error::InvalidTime(format!("{s:?} is not of the form YYYY-MM-DDTHH:MM:SSZ"));
        let b = s.as_bytes();
        if b.len() != 20
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
            || b[19] != b'Z'
        {
            return Err(bad());
        }
        let num = |r: std::ops::Range<usize>| digits(&b[r]).ok_or_else(bad);
        Self::from_fields(
            num(0..4)?,
            num(5..7)?,
            num(8..10)?,
            num(11..13)?,
            num(14..16)?,
            num(17..19)?,
        )
        .map_err(|_| bad())
    }

    fn from_fields(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Result<Self, Error> {
        let valid = (1970..=9999).contains(&y)
            && (1..=12).contains(&mo)
            && (1..=days_in_month(y, mo)).contains(&d)
            && h < 24
            && mi < 60
            && s < 60;
        if !valid {
            return Err(Error::InvalidTime("field out of range".into()));
        }
        Self::from_unix(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s)
    }

    /// Seconds since the Unix epoch.
    pub fn unix(self) -> i64 {
        self.secs
    }

    /// This time plus `secs` seconds (saturating at the supported range).
    pub fn plus(self, secs: i64) -> Self {
        Self {
            secs: self.secs.saturating_add(secs).clamp(0, MAX_SECS),
        }
    }

    /// `YYYYMMDDTHHMMSSZ`, as in `X-Amz-Date`.
    pub fn amz_date(self) -> String {
        let t = self.secs.rem_euclid(86_400);
        let mut b = *b"00000000T000000Z";
        self.write_date(&mut b);
        for (at, n) in [(9, t / 3600), (11, t / 60 % 60), (13, t % 60)] {
            write_digits(&mut b[at..at + 2], n);
        }
        ascii(&b)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339 in UTC, what [`SigningTime::parse_rfc3339`] reads): a
    /// POST policy's expiration, the authority's listings.
    pub fn rfc3339(self) -> String {
        let d = self.amz_date();
        [
            &d[0..4],
            "-",
            &d[4..6],
            "-",
            &d[6..8],
            "T",
            &d[9..11],
            ":",
            &d[11..13],
            ":",
            &d[13..],
        ]
        .concat()
    }

    /// `YYYYMMDD`, the date in the credential scope.
    pub fn date_stamp(self) -> String {
        ascii(&self.date_stamp_bytes())
    }

    /// [`SigningTime::date_stamp`] on the stack, for the signer's scope (built per request).
    pub(crate) fn date_stamp_bytes(self) -> [u8; 8] {
        let mut b = *b"00000000";
        self.write_date(&mut b);
        b
    }

    /// `YYYYMMDD` into the first 8 bytes of `b` (a year is 4 digits: the range is 1970..=9999).
    /// Written digit by digit rather than with `format!`: the signer and the verifier format
    /// dates per request.
    fn write_date(self, b: &mut [u8]) {
        let (y, mo, d) = civil_from_days(self.secs.div_euclid(86_400));
        write_digits(&mut b[0..4], y);
        write_digits(&mut b[4..6], mo);
        write_digits(&mut b[6..8], d);
    }

    /// Days since the epoch: the key cache's notion of "the same day".
    pub(crate) fn day(self) -> i64 {
        self.secs.div_euclid(86_400)
    }
}

fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0i64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
    })
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's `days_from_civil`: proleptic Gregorian date to days since 1970-01-01.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `n` as decimal digits filling `out`, zero-padded (`n` is known to fit).
fn write_digits(out: &mut [u8], mut n: i64) {
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// Bytes known to be ASCII digits and letters, as a `String`.
fn ascii(b: &[u8]) -> String {
    std::str::from_utf8(b).unwrap_or_default().to_owned()
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_the_suite_time() {
        let t = SigningTime::parse_rfc3339("2015-08-30T12:36:00Z").unwrap();
        assert_eq!(t.unix(), 1_440_938_160);
        assert_eq!(t.amz_date(), "20150830T123600Z");
        assert_eq!(t.date_stamp(), "20150830");
        assert_eq!(SigningTime::parse_amz("20150830T123600Z").unwrap(), t);
    }

    #[test]
    fn round_trips_every_day_boundary_of_a_leap_year() {
        for day in 0..(366 * 3) {
            let t = SigningTime::from_unix(951_782_400 + day * 86_400 + 86_399).unwrap();
            assert_eq!(SigningTime::parse_amz(&t.amz_date()).unwrap(), t);
        }
    }

    #[test]
    fn rejects_malformed_and_impossible_dates() {
        for s in [
            "20150830T123600",
            "2015083OT123600Z",
            "20150230T000000Z",
            "20150830T240000Z",
            "19691231T235959Z",
            "",
        ] {
            assert!(SigningTime::parse_amz(s).is_err(), "{s}");
        }
        assert!(SigningTime::from_unix(-1).is_err());
        assert!(SigningTime::from_unix(MAX_SECS + 1).is_err());
    }
}
