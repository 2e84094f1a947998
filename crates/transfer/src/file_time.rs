//! A downloaded file's modification time set to its object's `LastModified`, as the AWS CLI's
//! `cp`, `mv` and `sync` set it: `sync` compares the two times, so a file left with the time
//! of its download looks newer than its object, and the next `sync` either way would move
//! every file again (down: the AWS CLI downloads a local file newer than its object; up: it
//! uploads one newer than the object).

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The object's time: the listing's (`2026-11-25T10:00:00.250Z`, to the millisecond) when a
/// listing gave one, else the answer's `Last-Modified` header (an HTTP date, to the second, as
/// the AWS CLI also has it for a single object).
pub(crate) fn object_time(listed: Option<i64>, last_modified: &str) -> Option<SystemTime> {
    match listed {
        Some(nanos) => system_time(nanos),
        None => httpdate::parse_http_date(last_modified).ok(),
    }
}

/// Sets `path`'s modification time (the file written, before it is renamed into place, so
/// the file never shows under its name with the time of the download).
pub(crate) fn set_modified(path: &Path, time: SystemTime) -> std::io::Result<()> {
    File::options().write(true).open(path)?.set_modified(time)
}

/// Nanoseconds since 1970 (negative before) as a `SystemTime`; `None` past its range.
pub(crate) fn system_time(nanos: i64) -> Option<SystemTime> {
    let magnitude = Duration::from_nanos(nanos.unsigned_abs());
    if nanos >= 0 {
        UNIX_EPOCH.checked_add(magnitude)
    } else {
        UNIX_EPOCH.checked_sub(magnitude)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sides::nanos_since_epoch;

    #[test]
    fn times_round_trip_through_system_time() {
        for nanos in [0, 1, 1_795_600_800_123_000_000, -5_000_000_001] {
            let t = system_time(nanos).unwrap();
            assert_eq!(nanos_since_epoch(t), Some(nanos));
        }
    }

    #[test]
    fn a_listing_s_time_wins_over_the_header_s() {
        let header = "Wed, 25 Nov 2026 10:00:00 GMT";
        let at = UNIX_EPOCH + Duration::from_secs(1_795_600_800);
        assert_eq!(object_time(None, header), Some(at));
        let listed = 1_795_600_800_250_000_000;
        assert_eq!(
            object_time(Some(listed), header),
            Some(at + Duration::from_millis(250))
        );
        assert_eq!(object_time(None, ""), None, "no header: the time is left");
        assert_eq!(object_time(None, "yesterday"), None);
    }

    #[test]
    fn a_file_takes_the_time_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let at = UNIX_EPOCH + Duration::from_millis(1_795_600_800_250);
        set_modified(&path, at).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), at);
        let missing = dir.path().join("missing");
        let e = set_modified(&missing, at).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
    }
}
