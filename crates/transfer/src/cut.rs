//! How many connections and how long a part, once the first answer says how far the server is.
//! Both directions make the same trade (half the connections, parts twice as long, memory
//! `concurrency x part_size` unchanged) but on opposite sides of [`LONG_PATH`].

use std::time::Duration;

use crate::{TransferOptions, MAX_PARTS, MIN_PART_SIZE};

/// A first answer slower than this means a path where parts take many round trips.
pub(crate) const LONG_PATH: Duration = Duration::from_millis(20);

/// Whether the network to `bucket`'s server is a long path: the quickest TCP connection the
/// client made to it took [`LONG_PATH`] or more (`None` before any connected). A TCP connect
/// time is the network's alone: the kernel answers it however busy the server is (a TLS
/// handshake on top is not counted: it waits on the server).
pub(crate) fn far_network(client: &slipstream_client::S3Client, bucket: &str) -> Option<bool> {
    client
        .quickest_connect(bucket)
        .map(|took| took >= LONG_PATH)
}

/// Part size and connections for a file or memory download, given how long the first answer
/// took. A long path needs `concurrency` connections to fill it. On a short one a few
/// connections already move data as fast as the CPUs copy it, and each request and connection
/// costs the server CPU the client then lacks (docs/BENCHMARKS-HISTORY.md, "Downloads with less CPU").
/// So a
/// short path gets the halved cut: a file download holds a 1 MiB batch per part, not the part,
/// so its memory does not grow.
pub(crate) fn file_cut(first_answer: Duration, opts: &TransferOptions) -> (u64, usize) {
    if first_answer >= LONG_PATH {
        (opts.part_size, opts.concurrency)
    } else {
        halved(opts)
    }
}

/// Part size and connections for a multipart upload of `size` bytes, given how long
/// CreateMultipartUpload took. Parts are at least 5 MiB and few enough for S3's 10,000. On a
/// long path the last parts decide the end: none may be under 5 MiB, so the connections finish
/// their last parts up to one 5 MiB part's time apart, at a `1/concurrency` share of the link,
/// while the link idles. The halved cut halves that tail (docs/BENCHMARKS-HISTORY.md, "Uploads to a far
/// server on half the connections"). Downloads keep every connection there: their last parts
/// shrink to an
/// eighth of a part, so more connections only speed up the start.
pub(crate) fn upload_cut(create_took: Duration, size: u64, opts: &TransferOptions) -> (u64, usize) {
    let (part_size, concurrency) = if create_took < LONG_PATH {
        (opts.part_size, opts.concurrency)
    } else {
        halved(opts)
    };
    let part_size = part_size.max(MIN_PART_SIZE).max(size.div_ceil(MAX_PARTS));
    (part_size, concurrency)
}

/// Half the connections with parts twice as long; one connection stays one.
fn halved(opts: &TransferOptions) -> (u64, usize) {
    if opts.concurrency < 2 {
        (opts.part_size, opts.concurrency)
    } else {
        (opts.part_size.saturating_mul(2), opts.concurrency / 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upload_ranges;

    #[test]
    fn a_short_path_gets_half_the_connections_and_twice_the_part() {
        let opts = TransferOptions::default();
        let (part, c) = (opts.part_size, opts.concurrency);
        let cut = |took| file_cut(took, &opts);
        assert_eq!(
            cut(Duration::from_micros(400)),
            (2 * part, c / 2),
            "loopback"
        );
        assert_eq!(cut(Duration::from_millis(20)), (part, c), "a long path");
        assert_eq!(cut(Duration::from_millis(205)), (part, c), "100 ms RTT");
        let one = TransferOptions {
            concurrency: 1,
            ..opts.clone()
        };
        assert_eq!(file_cut(Duration::ZERO, &one), (part, 1));
    }

    #[test]
    fn a_long_path_uploads_on_half_the_connections_with_twice_the_part() {
        let opts = TransferOptions::default();
        let (part, c) = (opts.part_size, opts.concurrency);
        let gib = 1 << 30;
        let cut = |took| upload_cut(took, gib, &opts);
        assert_eq!(cut(Duration::from_micros(400)), (part, c), "loopback");
        assert_eq!(cut(Duration::from_millis(19)), (part, c));
        assert_eq!(cut(Duration::from_millis(20)), (2 * part, c / 2));
        let far = cut(Duration::from_millis(205));
        assert_eq!(far, (2 * part, c / 2), "100 ms RTT");
        let one = TransferOptions {
            concurrency: 1,
            ..opts.clone()
        };
        assert_eq!(upload_cut(Duration::from_secs(1), gib, &one), (part, 1));
    }

    #[test]
    fn upload_parts_stay_within_s3_limits_after_the_cut() {
        let small = TransferOptions {
            part_size: 1 << 20,
            ..TransferOptions::default()
        };
        let (part, _) = upload_cut(Duration::ZERO, 1 << 30, &small);
        assert_eq!(part, MIN_PART_SIZE, "no part under 5 MiB");
        // 5 TiB, S3's largest object: 10,000 parts at most, on either path.
        let huge = 5 << 40;
        for took in [Duration::ZERO, Duration::from_millis(205)] {
            let (part, c) = upload_cut(took, huge, &TransferOptions::default());
            assert!(upload_ranges(huge, part, c).len() as u64 <= MAX_PARTS);
        }
    }
}
