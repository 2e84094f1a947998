//! How `cp`, `mv`, `sync` and `run` choose parts and requests in flight: a flag, else the
//! profile's `s3` section as the AWS CLI reads it (`multipart_chunksize`,
//! `multipart_threshold`, `max_concurrent_requests`), else this CLI's defaults, which the
//! engine then fits to the path (`cut.rs`). A profile tuned for `aws s3 cp` so tunes these
//! commands too, rather than being ignored without a word.

use std::sync::Arc;

use slipstream_client::TransferSettings;
use slipstream_transfer::{CopySettings, TransferOptions, MIN_PART_SIZE};

use crate::args::Tuning;
use crate::Failure;

/// Bytes per part without a flag or a profile setting.
pub const DEFAULT_PART_SIZE: u64 = 8 << 20;
/// Parts in flight per object without a flag or a profile setting.
pub const DEFAULT_CONCURRENCY: u16 = 16;
/// S3's largest part, and its largest single PUT: a profile asking for more gets this.
const MAX_PART_SIZE: u64 = 5 << 30;
/// The most requests in flight a flag takes (`--concurrency`, `--objects`).
const MAX_IN_FLIGHT: u16 = 1024;

impl Tuning {
    /// These flags with what they leave unset taken from the profile's `s3` section:
    /// `multipart_chunksize` gives the part size (raised to S3's 5 MiB and capped at 5 GiB, as
    /// the AWS CLI fits an upload's parts), `multipart_threshold` the size from which uploads
    /// go in parts (at most 5 GiB, S3's largest PUT), and `max_concurrent_requests` both the
    /// parts in flight per object and the objects in flight, since the AWS CLI counts every
    /// request against that one number (at most 1,024, as the flags).
    pub(crate) fn with_profile(&self, profile: &TransferSettings) -> Tuning {
        let in_flight = profile
            .max_concurrent_requests
            .map(|n| u16::try_from(n).unwrap_or(MAX_IN_FLIGHT).min(MAX_IN_FLIGHT));
        Tuning {
            part_size: self.part_size.or(profile
                .multipart_chunksize
                .map(|n| n.clamp(MIN_PART_SIZE, MAX_PART_SIZE))),
            concurrency: self.concurrency.or(in_flight),
            objects: self.objects.or(in_flight),
            multipart_threshold: self
                .multipart_threshold
                .or(profile.multipart_threshold.map(|n| n.min(MAX_PART_SIZE))),
            ..self.clone()
        }
    }

    /// Bytes per part: `--part-size`, the profile's, or 8 MiB.
    pub(crate) fn part_size(&self) -> u64 {
        self.part_size.unwrap_or(DEFAULT_PART_SIZE)
    }

    /// Parts in flight per object: `--concurrency`, the profile's, or 16.
    pub(crate) fn concurrency(&self) -> usize {
        usize::from(self.concurrency.unwrap_or(DEFAULT_CONCURRENCY))
    }

    /// Objects in flight: `--objects`, the profile's, or `None` for the engine to choose by the
    /// first answer.
    pub(crate) fn objects(&self) -> Option<usize> {
        self.objects.map(usize::from)
    }

    /// The transfer options these flags ask for, from and to S3 or not (`sides`); a part below
    /// S3's minimum is refused, and so are a permission granted twice and an SSE-C copy source
    /// that is not one.
    pub(crate) fn transfer_options(
        &self,
        progress: Option<Arc<slipstream_transfer::Progress>>,
        headers: &crate::args::Headers,
        (from_s3, to_s3): (bool, bool),
    ) -> Result<TransferOptions, Failure> {
        let part_size = self.part_size();
        if part_size < MIN_PART_SIZE {
            return Err(Failure::usage(
                "--part-size must be at least 5MiB (S3's minimum part)",
            ));
        }
        crate::grants::grants(&headers.grants).map_err(Failure::usage)?;
        if headers.sse_c_copy_source.is_some() && !(from_s3 && to_s3) {
            return Err(Failure::usage(
                "--sse-c-copy-source is for copies from S3 to S3; the key of an object \
                 downloaded is --sse-c-key",
            ));
        }
        Ok(TransferOptions {
            part_size,
            concurrency: self.concurrency(),
            multipart_threshold: self.multipart_threshold.unwrap_or(part_size),
            progress,
            checksum: self.checksum_algorithm,
            stall_timeout: self.stall_timeout,
            shared_parts: None,
            shared_bodies: None,
            headers: headers.object_headers(),
            source_customer_key: headers.reading_key(to_s3).cloned(),
            // As the AWS CLI's cp and mv: a later sync then finds file and object equal.
            keep_modified_time: true,
            // Printed as the AWS CLI prints its warnings, even under --quiet (its
            // --only-show-errors shows "errors and warnings").
            warn: Some(slipstream_transfer::Warn(std::sync::Arc::new(|text| {
                eprintln!("warning: {text}")
            }))),
        })
    }

    /// Server-side copies: multipart above 5 GiB, parts as large as --part-size or 256 MiB;
    /// metadata replaced and the storage class set when the flags say so. The profile's
    /// `multipart_threshold` is not applied here: one CopyObject moves no byte over the link,
    /// and S3 copies up to 5 GiB that way faster than in parts.
    pub(crate) fn copy_settings(&self, headers: &crate::args::Headers) -> CopySettings {
        let defaults = CopySettings::default();
        CopySettings {
            part_size: self.part_size().max(defaults.part_size),
            concurrency: self.concurrency(),
            options: headers.object_headers().copy_options(),
            source_customer_key: headers.sse_c_copy_source_key.clone(),
            ..defaults
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        tuning: Tuning,
    }

    fn tuning(flags: &[&str]) -> Tuning {
        Flags::parse_from(std::iter::once("cp").chain(flags.iter().copied())).tuning
    }

    fn profile(
        chunk: Option<u64>,
        threshold: Option<u64>,
        requests: Option<u64>,
    ) -> TransferSettings {
        TransferSettings {
            multipart_chunksize: chunk,
            multipart_threshold: threshold,
            max_concurrent_requests: requests,
        }
    }

    #[test]
    fn without_flags_or_profile_the_defaults_stand() {
        let t = tuning(&[]).with_profile(&TransferSettings::default());
        assert_eq!(
            (t.part_size(), t.concurrency(), t.objects()),
            (8 << 20, 16, None)
        );
        let o = t
            .transfer_options(None, &Default::default(), (true, false))
            .unwrap();
        assert_eq!(o.multipart_threshold, 8 << 20, "the part size");
    }

    #[test]
    fn the_profile_fills_what_the_flags_leave_unset() {
        let p = profile(Some(16 << 20), Some(64 << 20), Some(20));
        let t = tuning(&[]).with_profile(&p);
        assert_eq!(
            (t.part_size(), t.concurrency(), t.objects()),
            (16 << 20, 20, Some(20))
        );
        let o = t
            .transfer_options(None, &Default::default(), (false, true))
            .unwrap();
        assert_eq!(
            (o.part_size, o.concurrency, o.multipart_threshold),
            (16 << 20, 20, 64 << 20)
        );
        // Flags beat it, each on its own.
        let t = tuning(&["--part-size", "32MiB", "--objects", "8"]).with_profile(&p);
        assert_eq!(
            (t.part_size(), t.concurrency(), t.objects()),
            (32 << 20, 20, Some(8))
        );
    }

    #[test]
    fn profile_values_outside_s3s_limits_are_fitted_as_the_aws_cli_fits_them() {
        let t = tuning(&[]).with_profile(&profile(Some(1 << 20), Some(6 << 30), Some(5000)));
        assert_eq!(t.part_size(), 5 << 20, "raised to S3's least part");
        assert_eq!(t.multipart_threshold, Some(5 << 30), "S3's largest PUT");
        assert_eq!((t.concurrency(), t.objects()), (1024, Some(1024)));
        let t = tuning(&[]).with_profile(&profile(Some(6 << 30), None, None));
        assert_eq!(t.part_size(), 5 << 30, "S3's largest part");
        // A flag is still checked, not fitted.
        let small =
            tuning(&["--part-size", "1MiB"]).with_profile(&profile(Some(8 << 20), None, None));
        assert!(small
            .transfer_options(None, &Default::default(), (false, true))
            .is_err());
    }
}
