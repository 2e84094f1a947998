//! When a copy writes over a destination that exists: always (the default, as `cp` does), never
//! (`--no-clobber`), or only when the source differs in size (`--if-size-differ`) or is newer
//! (`--if-source-newer`), s5cmd's three flags. Looking costs one `HeadObject` (or a `stat`) per
//! destination, so nothing is looked at unless a flag asks.

use std::path::Path;

use slipstream_client::{ClientError, CustomerKey, ObjectKey, S3Client};
use slipstream_s3::time::parse_timestamp;

use crate::error::at;
use crate::sides::nanos_since_epoch;
use crate::TransferError;

/// Nanoseconds in a second: times are compared in whole seconds.
const NANOS: i64 = 1_000_000_000;

/// Which destinations that exist a copy leaves alone (`Default`: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overwrite {
    /// Leave every destination that exists.
    pub no_clobber: bool,
    /// Write over a destination only if its size differs from the source's.
    pub if_size_differ: bool,
    /// Write over a destination only if the source is newer.
    pub if_source_newer: bool,
}

/// A source or destination as the conditions compare them: its size and time (nanoseconds
/// since 1970; `None` when unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Bytes.
    pub size: u64,
    /// Modification time (a file's) or `LastModified` (an object's).
    pub modified: Option<i64>,
}

impl Stat {
    /// Nothing known (a file that vanished: its upload then fails and says so).
    pub const UNKNOWN: Stat = Stat {
        size: 0,
        modified: None,
    };

    /// A listed object's: its size and the listing's time.
    pub fn listed(size: u64, last_modified: &str) -> Self {
        Self {
            size,
            modified: parse_timestamp(last_modified),
        }
    }

    /// A local file's, or `None` if there is none at `path`.
    pub async fn of_file(path: &Path) -> Result<Option<Self>, TransferError> {
        match tokio::fs::metadata(path).await {
            Ok(m) => Ok(Some(Self {
                size: m.len(),
                modified: m.modified().ok().and_then(nanos_since_epoch),
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(at(path)(e)),
        }
    }

    /// An object's (or a version's), by `HeadObject`, or `None` if there is none (404).
    pub async fn of_object(
        client: &S3Client,
        bucket: &str,
        key: ObjectKey<'_>,
    ) -> Result<Option<Self>, TransferError> {
        match client.head_object(bucket, key).await {
            Ok(info) => Ok(Some(Self {
                size: info.size,
                modified: httpdate::parse_http_date(&info.last_modified)
                    .ok()
                    .and_then(nanos_since_epoch),
            })),
            Err(ClientError::S3 { status: 404, .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

impl Overwrite {
    /// Whether any condition needs the destination looked at.
    pub fn asks(&self) -> bool {
        self.no_clobber || self.if_size_differ || self.if_source_newer
    }

    /// Whether a condition compares the source with the destination (so the source's size
    /// and time are needed, not only whether the destination exists).
    pub fn compares(&self) -> bool {
        self.if_size_differ || self.if_source_newer
    }

    /// Whether to leave the destination (`None`: there is none, so nothing to leave). With
    /// `--if-size-differ` or `--if-source-newer` the destination is written when any of the
    /// conditions given holds (s5cmd lets the last one checked decide, so there `-s -u` means
    /// `-u` alone); `--no-clobber` alone leaves it whatever it holds. Times are compared to
    /// the second, S3's `Last-Modified` precision: a file written at 10:00:00.4 and uploaded
    /// at 10:00:00.9 has an object of 10:00:00, and compared to the nanosecond (as s5cmd
    /// compares) it would look newer and be uploaded again by every `-u`. A time that is
    /// unknown on either side counts as newer: the copy is made rather than skipped on a guess.
    pub fn keeps(&self, source: Stat, destination: Option<Stat>) -> bool {
        let Some(dest) = destination else {
            return false;
        };
        if !self.if_size_differ && !self.if_source_newer {
            return self.no_clobber;
        }
        let size_differs = self.if_size_differ && source.size != dest.size;
        let newer = self.if_source_newer
            && match (source.modified, dest.modified) {
                (Some(s), Some(d)) => s.div_euclid(NANOS) > d.div_euclid(NANOS),
                _ => true,
            };
        !(size_differs || newer)
    }

    /// [`Overwrite::keeps`] of the object at `bucket`/`key`, headed (with the customer key it
    /// would be written with) only when a flag asks.
    pub async fn keeps_object(
        &self,
        source: Stat,
        client: &S3Client,
        (bucket, key): (&str, &str),
        customer_key: Option<&CustomerKey>,
    ) -> Result<bool, TransferError> {
        if !self.asks() {
            return Ok(false);
        }
        let key = ObjectKey::from(key).with_customer_key(customer_key);
        let dest = Stat::of_object(client, bucket, key).await?;
        Ok(self.keeps(source, dest))
    }

    /// [`Overwrite::keeps`] of the file at `path`, looked at only when a flag asks.
    pub async fn keeps_file(&self, source: Stat, path: &Path) -> Result<bool, TransferError> {
        if !self.asks() {
            return Ok(false);
        }
        Ok(self.keeps(source, Stat::of_file(path).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(size: u64, modified: Option<i64>) -> Stat {
        Stat { size, modified }
    }

    #[test]
    fn a_missing_destination_is_always_written() {
        for no_clobber in [false, true] {
            for if_size_differ in [false, true] {
                for if_source_newer in [false, true] {
                    let o = Overwrite {
                        no_clobber,
                        if_size_differ,
                        if_source_newer,
                    };
                    assert!(!o.keeps(stat(1, Some(5)), None), "{o:?}");
                }
            }
        }
    }

    #[test]
    fn each_condition_keeps_what_it_should() {
        let (old, new) = (Some(100 * NANOS), Some(200 * NANOS));
        let dest = Some(stat(10, old));
        let always = Overwrite::default();
        assert!(!always.asks() && !always.keeps(stat(10, old), dest));
        let no_clobber = Overwrite {
            no_clobber: true,
            ..Default::default()
        };
        assert!(no_clobber.keeps(stat(99, new), dest), "whatever the source");
        let size = Overwrite {
            if_size_differ: true,
            ..Default::default()
        };
        assert!(
            size.keeps(stat(10, new), dest),
            "same size: kept, newer or not"
        );
        assert!(!size.keeps(stat(11, old), dest));
        let newer = Overwrite {
            if_source_newer: true,
            ..Default::default()
        };
        assert!(!newer.keeps(stat(10, new), dest));
        assert!(
            newer.keeps(stat(99, old), dest),
            "as new: kept, whatever the size"
        );
        assert!(newer.keeps(stat(10, Some(50 * NANOS)), dest), "older: kept");
        assert!(!newer.keeps(stat(10, None), dest), "unknown: written");
        assert!(!newer.keeps(stat(10, old), Some(stat(10, None))));
    }

    #[test]
    fn times_compare_to_the_second_as_s3_keeps_them() {
        let newer = Overwrite {
            if_source_newer: true,
            ..Default::default()
        };
        let object = Some(stat(1, Some(1_795_600_800 * NANOS)));
        let written_before_in_that_second = stat(1, Some(1_795_600_800 * NANOS + 400_000_000));
        assert!(newer.keeps(written_before_in_that_second, object));
        let a_second_later = stat(1, Some(1_795_600_801 * NANOS));
        assert!(!newer.keeps(a_second_later, object));
        let before_1970 = Some(stat(1, Some(-NANOS / 2)));
        assert!(
            !newer.keeps(stat(1, Some(0)), before_1970),
            "-0.5 s is in the second before"
        );
    }

    #[test]
    fn size_and_time_together_write_when_either_holds_and_beat_no_clobber() {
        let both = Overwrite {
            no_clobber: true,
            if_size_differ: true,
            if_source_newer: true,
        };
        let dest = Some(stat(10, Some(100 * NANOS)));
        assert!(both.keeps(stat(10, Some(100 * NANOS)), dest));
        assert!(
            !both.keeps(stat(11, Some(100 * NANOS)), dest),
            "size differs"
        );
        assert!(!both.keeps(stat(10, Some(101 * NANOS)), dest), "newer");
    }
}
