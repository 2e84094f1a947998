//! A cap on the bytes per second a client's connections move, both ways together: the AWS
//! CLI's `s3.max_bandwidth`, `--max-bandwidth`, boto3's `TransferConfig(max_bandwidth=)`.
//!
//! Why at the socket (`read_ahead.rs` asks before each `recv` and `send`) and not on request
//! bodies: every byte counts wherever it comes from (parts, listings, TLS records), and a
//! download held back there fills the kernel's receive buffer, whose closed window slows the
//! sender: TCP's own back-pressure, with nothing buffered in user space. One bucket of tokens
//! is shared by all connections (clones of a [`Bandwidth`] share it), so the cap holds for the
//! sum of hundreds of objects in flight, not per connection.
//!
//! Each `recv` or `send` first reserves its bytes: the bucket hands out turns in the order they
//! are asked for (a virtual clock that advances by each turn's bytes over the rate, as GCRA
//! does), so the connections sharing it take turns fairly and none starves long enough for a
//! timeout to take it for a stalled one. A turn is at most a thirty-second of a second's worth
//! (64 KiB at most); what a `recv` did not fill is given back. Up to a tenth of a second's worth
//! may go at once after an idle pause, and no more.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes per second shared by every connection of the clients it is given to.
#[derive(Clone)]
pub struct Bandwidth {
    bucket: Arc<Bucket>,
}

struct Bucket {
    rate: u64,
    /// When the bytes reserved so far will have moved at the rate: the next turn's start.
    next: Mutex<Instant>,
}

impl std::fmt::Debug for Bandwidth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bandwidth({} B/s)", self.bucket.rate)
    }
}

/// What may be saved up during an idle pause.
const BURST: Duration = Duration::from_millis(100);

impl Bandwidth {
    /// The smallest cap: below it a part of 256 KiB would take long enough on the wire to look
    /// like a stalled connection to the timeouts that watch for one.
    pub const MIN: u64 = 16 << 10;

    /// A cap of `bytes_per_second`, at least [`Bandwidth::MIN`].
    pub fn new(bytes_per_second: u64) -> Result<Self, String> {
        if bytes_per_second < Self::MIN {
            return Err(format!(
                "a bandwidth cap of {bytes_per_second} bytes/s is below the least, {} (16KB/s)",
                Self::MIN
            ));
        }
        Ok(Self {
            bucket: Arc::new(Bucket {
                rate: bytes_per_second,
                next: Mutex::new(Instant::now()),
            }),
        })
    }

    /// A rate as the AWS CLI's `s3.max_bandwidth` takes it: bytes per second (`1048576`), or a
    /// whole number with `KB/s`, `MB/s`, `GB/s` or `TB/s` (powers of 1024, as the AWS CLI
    /// counts them; `KiB/s`... too), in any case.
    pub fn parse(text: &str) -> Result<u64, String> {
        let bad = || {
            format!(
                "{text:?} is not a rate such as 50MB/s, 800KB/s or a number of bytes per second"
            )
        };
        let t = text.trim();
        let n = match t.strip_suffix("/s").or(t.strip_suffix("/S")) {
            Some(size) => crate::parse_size(size),
            // Without a unit, only bytes: `50MB` is a size, not a rate.
            None => t.parse().ok(),
        };
        n.filter(|n| *n > 0).ok_or_else(bad)
    }

    /// A cap from a rate as [`Bandwidth::parse`] reads it, at least [`Bandwidth::MIN`]: what
    /// `--max-bandwidth` and the profile's `s3.max_bandwidth` give.
    pub fn from_rate(text: &str) -> Result<Self, String> {
        Self::new(Self::parse(text)?)
    }

    /// The cap, in bytes per second.
    pub fn bytes_per_second(&self) -> u64 {
        self.bucket.rate
    }

    /// A turn for up to `want` bytes (at least 1): how many, and when they may move.
    pub(crate) fn reserve(&self, want: usize) -> (usize, Instant) {
        self.reserve_at(want, Instant::now())
    }

    /// Gives back `unused` bytes of a turn (a `recv` that brought less than it could).
    pub(crate) fn refund(&self, unused: usize) {
        if unused > 0 {
            let mut next = self.next();
            if let Some(earlier) = next.checked_sub(self.duration(unused)) {
                *next = earlier;
            }
        }
    }

    fn reserve_at(&self, want: usize, now: Instant) -> (usize, Instant) {
        let turn = usize::try_from(self.bucket.rate / 32)
            .unwrap_or(usize::MAX)
            .clamp(1 << 10, 64 << 10);
        let n = want.clamp(1, turn);
        let mut next = self.next();
        let start = (*next).max(now.checked_sub(BURST).unwrap_or(now));
        *next = start + self.duration(n);
        (n, start)
    }

    /// How long `bytes` take at the rate.
    fn duration(&self, bytes: usize) -> Duration {
        Duration::from_secs_f64(bytes as f64 / self.bucket.rate as f64)
    }

    fn next(&self) -> std::sync::MutexGuard<'_, Instant> {
        self.bucket.next.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes each of `connections` moved over `seconds` of simulated time, each asking for
    /// 64 KiB turns in a loop and moving its bytes at its turn's start.
    fn moved(cap: u64, connections: usize, seconds: f64) -> Vec<usize> {
        let b = Bandwidth::new(cap).unwrap();
        let start = Instant::now() + Duration::from_secs(1);
        let end = start + Duration::from_secs_f64(seconds);
        let mut at = vec![start; connections];
        let mut total = vec![0usize; connections];
        // The connection whose turn comes first asks next.
        while let Some(c) = (0..connections)
            .filter(|&c| at[c] < end)
            .min_by_key(|&c| at[c])
        {
            let (n, when) = b.reserve_at(64 << 10, at[c]);
            if when < end {
                total[c] += n;
            }
            at[c] = when.max(at[c]) + Duration::from_nanos(1);
        }
        total
    }

    #[test]
    fn over_time_the_bytes_moved_follow_the_cap_and_are_shared_fairly() {
        for (cap, connections) in [(Bandwidth::MIN, 1), (1 << 20, 16), (100 << 20, 256)] {
            let each = moved(cap, connections, 10.0);
            let rate = each.iter().sum::<usize>() as f64 / 10.0;
            let ratio = rate / cap as f64;
            assert!(
                (0.98..=1.03).contains(&ratio),
                "{cap} x {connections}: {rate} B/s"
            );
            let (least, most) = (each.iter().min().unwrap(), each.iter().max().unwrap());
            assert!(
                *least as f64 >= 0.9 * *most as f64,
                "{cap} x {connections}: {least}..{most}"
            );
        }
    }

    #[test]
    fn an_idle_pause_saves_up_at_most_a_tenth_of_a_second() {
        let b = Bandwidth::new(1 << 20).unwrap();
        let later = Instant::now() + Duration::from_secs(60);
        let mut burst = 0;
        loop {
            let (n, when) = b.reserve_at(1 << 20, later);
            if when > later {
                break;
            }
            burst += n;
        }
        let tenth = (1 << 20) / 10;
        assert!(burst >= tenth && burst <= tenth + (32 << 10), "{burst}");
        // What a turn did not use is given back to the next one.
        let (n, first) = b.reserve_at(32 << 10, later);
        b.refund(n);
        assert_eq!(b.reserve_at(1, later).1, first);
    }

    #[test]
    fn rates_read_as_the_aws_cli_reads_them() {
        for (text, want) in [
            ("1048576", 1 << 20),
            ("50MB/s", 50 << 20),
            ("800KB/s", 800 << 10),
            ("2GiB/s", 2 << 30),
            ("10mb/s", 10 << 20),
            ("100B/s", 100),
        ] {
            assert_eq!(Bandwidth::parse(text), Ok(want), "{text}");
        }
        for bad in ["", "50MB", "1.5MB/s", "0", "fast", "10Mbit/s", "-1"] {
            assert!(Bandwidth::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_cap_too_small_to_tell_from_a_stall_is_refused() {
        assert!(Bandwidth::new(Bandwidth::MIN - 1).is_err());
        assert_eq!(
            format!("{:?}", Bandwidth::new(1 << 20).unwrap()),
            "Bandwidth(1048576 B/s)"
        );
    }
}
