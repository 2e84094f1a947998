//! The hosts AWS serves S3 from: the region's own, the global `s3.amazonaws.com`, and the
//! variants a configuration asks for (FIPS, dual-stack, Transfer Acceleration, us-east-1's
//! regional host), named as botocore's endpoint rules name them (1.43, checked in the tables
//! below and in the Python differential test).
//!
//! A custom endpoint (MinIO, versitygw) has none of these: there FIPS and dual-stack are
//! ignored, as botocore ignores them, and acceleration is refused, as botocore refuses it.
//! Where the bucket goes in the URL is [`crate::resolve`]'s part.

use crate::bucket::is_virtual_hostable;
use crate::Error;

/// The other S3 endpoints AWS offers, each off unless a setting asks for it: botocore's
/// `use_fips_endpoint`, `use_dualstack_endpoint`, `s3.use_accelerate_endpoint` and
/// `s3.us_east_1_regional_endpoint = regional`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Variants {
    /// FIPS 140 validated endpoints, `s3-fips.REGION.amazonaws.com` (US and Canada regions,
    /// GovCloud; none in China).
    pub fips: bool,
    /// Endpoints that answer over IPv6 as well as IPv4, `s3.dualstack.REGION.amazonaws.com`.
    pub dualstack: bool,
    /// Transfer Acceleration, `BUCKET.s3-accelerate.amazonaws.com`: uploads and downloads enter
    /// AWS's network at the nearest edge location. Needs a bucket name that can be a host label.
    pub accelerate: bool,
    /// us-east-1 addressed as `s3.us-east-1.amazonaws.com` rather than the global
    /// `s3.amazonaws.com` botocore still uses there by default ("legacy").
    pub regional_us_east_1: bool,
}

impl Variants {
    /// Refuses what AWS has no endpoint for, before any request: acceleration with a custom
    /// endpoint, with FIPS, or in China; FIPS in China. The messages are botocore's, with what
    /// to change.
    pub fn check(&self, region: &str, custom_endpoint: bool) -> Result<(), Error> {
        let refuse = |why: &str| Err(Error::UnsupportedEndpoint(why.to_owned()));
        let china = partition(region).0 == CHINA;
        if self.accelerate && custom_endpoint {
            return refuse("a custom endpoint cannot be combined with S3 Transfer Acceleration: unset s3.use_accelerate_endpoint or the endpoint URL");
        }
        if custom_endpoint {
            return Ok(());
        }
        if self.accelerate && self.fips {
            return refuse("S3 Transfer Acceleration cannot be used with FIPS: unset s3.use_accelerate_endpoint or use_fips_endpoint");
        }
        if self.accelerate && china {
            return Err(Error::UnsupportedEndpoint(format!(
                "S3 Transfer Acceleration cannot be used in {region}"
            )));
        }
        if self.fips && china {
            return Err(Error::UnsupportedEndpoint(format!(
                "the partition of {region} has no FIPS endpoints: unset use_fips_endpoint"
            )));
        }
        Ok(())
    }

    /// The region's own S3 host: `s3.REGION.SUFFIX`, with `-fips` and `.dualstack` as asked,
    /// and `s3.amazonaws.com` for us-east-1 unless FIPS, dual-stack or the regional host is
    /// asked for (botocore's "legacy" global endpoint).
    pub(crate) fn regional_host(&self, region: &str) -> String {
        let (suffix, has_global) = partition(region);
        let s3 = if self.fips { "s3-fips" } else { "s3" };
        let dualstack = if self.dualstack { ".dualstack" } else { "" };
        let legacy_us_east_1 = region == "us-east-1" && !self.regional_us_east_1;
        if !self.fips && !self.dualstack && has_global && legacy_us_east_1 {
            format!("s3.{suffix}")
        } else {
            format!("{s3}{dualstack}.{region}.{suffix}")
        }
    }

    /// Whether a presigned URL may name the global `s3.amazonaws.com`, as botocore's do for
    /// buckets of every region of the `aws` partition: not with FIPS or dual-stack, and not for
    /// us-east-1 when its regional host is asked for.
    ///
    /// One botocore quirk is not reproduced: with FIPS outside us-east-1 it presigns for
    /// `s3-fips.us-east-1.amazonaws.com` while signing for the bucket's region, a URL that
    /// region's FIPS bucket is not served from; we name the region's FIPS host, where
    /// botocore sends its own requests.
    pub(crate) fn global_allowed(&self, region: &str) -> bool {
        let regional_asked = region == "us-east-1" && self.regional_us_east_1;
        partition(region).1 && !self.fips && !self.dualstack && !regional_asked
    }

    /// `BUCKET.s3-accelerate[.dualstack].amazonaws.com`, for a bucket that can be a host label.
    pub(crate) fn accelerate_host(&self, bucket: &str) -> Result<String, Error> {
        if !is_virtual_hostable(bucket) {
            return Err(Error::UnsupportedEndpoint(format!(
                "bucket {bucket:?} cannot be addressed through S3 Transfer Acceleration, which needs a lowercase name without dots: unset s3.use_accelerate_endpoint"
            )));
        }
        let dualstack = if self.dualstack { ".dualstack" } else { "" };
        Ok(format!("{bucket}.s3-accelerate{dualstack}.amazonaws.com"))
    }
}

/// The DNS suffix of the China partition.
const CHINA: &str = "amazonaws.com.cn";

/// The DNS suffix of `region`'s partition and whether the partition has a global S3 endpoint.
pub(crate) fn partition(region: &str) -> (&'static str, bool) {
    if region.starts_with("cn-") {
        (CHINA, false)
    } else if region.starts_with("us-gov-") {
        ("amazonaws.com", false)
    } else {
        ("amazonaws.com", true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variants(flags: &str) -> Variants {
        Variants {
            fips: flags.contains('f'),
            dualstack: flags.contains('d'),
            accelerate: flags.contains('a'),
            regional_us_east_1: flags.contains('r'),
        }
    }

    /// The hosts botocore 1.43.11 sends `ListBuckets` to (f: FIPS, d: dual-stack, r: regional
    /// us-east-1; acceleration does not apply to it).
    #[test]
    fn regional_hosts_are_botocores() {
        for (region, flags, want) in [
            ("us-east-1", "", "s3.amazonaws.com"),
            ("us-east-1", "r", "s3.us-east-1.amazonaws.com"),
            ("us-east-1", "f", "s3-fips.us-east-1.amazonaws.com"),
            ("us-east-1", "d", "s3.dualstack.us-east-1.amazonaws.com"),
            (
                "us-east-1",
                "fd",
                "s3-fips.dualstack.us-east-1.amazonaws.com",
            ),
            ("eu-west-1", "r", "s3.eu-west-1.amazonaws.com"),
            ("eu-west-1", "ar", "s3.eu-west-1.amazonaws.com"),
            (
                "cn-north-1",
                "d",
                "s3.dualstack.cn-north-1.amazonaws.com.cn",
            ),
            ("us-gov-west-1", "f", "s3-fips.us-gov-west-1.amazonaws.com"),
        ] {
            assert_eq!(
                variants(flags).regional_host(region),
                want,
                "{region} {flags}"
            );
        }
    }

    /// URLs botocore 1.43.11 presigns (`generate_presigned_url("get_object")`) with these
    /// settings; the FIPS row outside us-east-1 is where its own requests go (see
    /// [`Variants::global_allowed`]).
    #[test]
    fn presigned_urls_name_botocores_hosts() {
        use crate::AddressingStyle::{self, *};
        let rows: &[(&str, AddressingStyle, &str, &str, &str)] = &[
            (
                "us-east-1",
                Auto,
                "f",
                "mybucket",
                "https://mybucket.s3-fips.us-east-1.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Auto,
                "d",
                "mybucket",
                "https://mybucket.s3.dualstack.us-east-1.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Auto,
                "a",
                "mybucket",
                "https://mybucket.s3-accelerate.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Auto,
                "fd",
                "mybucket",
                "https://mybucket.s3-fips.dualstack.us-east-1.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Auto,
                "ad",
                "mybucket",
                "https://mybucket.s3-accelerate.dualstack.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Auto,
                "r",
                "mybucket",
                "https://mybucket.s3.us-east-1.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Path,
                "f",
                "mybucket",
                "https://s3-fips.us-east-1.amazonaws.com/mybucket/k",
            ),
            (
                "us-east-1",
                Path,
                "d",
                "mybucket",
                "https://s3.dualstack.us-east-1.amazonaws.com/mybucket/k",
            ),
            (
                "us-east-1",
                Path,
                "a",
                "mybucket",
                "https://mybucket.s3-accelerate.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Virtual,
                "d",
                "mybucket",
                "https://mybucket.s3.dualstack.us-east-1.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Auto,
                "f",
                "my.bucket",
                "https://s3-fips.us-east-1.amazonaws.com/my.bucket/k",
            ),
            (
                "us-east-1",
                Virtual,
                "d",
                "My_Bucket",
                "https://s3.dualstack.us-east-1.amazonaws.com/My_Bucket/k",
            ),
            (
                "eu-west-1",
                Auto,
                "r",
                "mybucket",
                "https://mybucket.s3.amazonaws.com/k",
            ),
            (
                "eu-west-1",
                Auto,
                "d",
                "mybucket",
                "https://mybucket.s3.dualstack.eu-west-1.amazonaws.com/k",
            ),
            (
                "eu-west-1",
                Auto,
                "fd",
                "mybucket",
                "https://mybucket.s3-fips.dualstack.eu-west-1.amazonaws.com/k",
            ),
            (
                "eu-west-1",
                Auto,
                "f",
                "mybucket",
                "https://mybucket.s3-fips.eu-west-1.amazonaws.com/k",
            ),
            (
                "eu-west-1",
                Path,
                "f",
                "mybucket",
                "https://s3-fips.eu-west-1.amazonaws.com/mybucket/k",
            ),
            (
                "cn-north-1",
                Auto,
                "d",
                "mybucket",
                "https://mybucket.s3.dualstack.cn-north-1.amazonaws.com.cn/k",
            ),
            (
                "cn-north-1",
                Virtual,
                "d",
                "my.bucket",
                "https://s3.dualstack.cn-north-1.amazonaws.com.cn/my.bucket/k",
            ),
            (
                "us-gov-west-1",
                Auto,
                "f",
                "mybucket",
                "https://mybucket.s3-fips.us-gov-west-1.amazonaws.com/k",
            ),
            (
                "us-gov-west-1",
                Auto,
                "ad",
                "mybucket",
                "https://mybucket.s3-accelerate.dualstack.amazonaws.com/k",
            ),
        ];
        for (region, style, flags, bucket, want) in rows {
            let b = crate::resolve(bucket, region, None, *style, variants(flags)).unwrap();
            let got = format!("{}{}k", b.origin, b.path_prefix);
            assert_eq!(got, *want, "{region} {style:?} {flags} {bucket}");
        }
        // A custom endpoint: FIPS and dual-stack ignored, as botocore ignores them.
        let ep = crate::Endpoint::parse("http://127.0.0.1:9000").unwrap();
        let b = crate::resolve("mybucket", "eu-west-1", Some(&ep), Auto, variants("fdr")).unwrap();
        assert_eq!(
            format!("{}{}", b.origin, b.path_prefix),
            "http://127.0.0.1:9000/mybucket/"
        );
        for bucket in ["my.bucket", "My_Bucket", "ab"] {
            assert!(crate::resolve(bucket, "us-east-1", None, Auto, variants("a")).is_err());
        }
    }

    #[test]
    fn what_aws_has_no_endpoint_for_is_refused_with_the_setting_to_change() {
        for (region, flags, custom, wanted) in [
            ("us-east-1", "a", true, "custom endpoint"),
            ("us-east-1", "af", false, "cannot be used with FIPS"),
            ("cn-north-1", "a", false, "cannot be used in cn-north-1"),
            ("cn-north-1", "f", false, "no FIPS endpoints"),
        ] {
            let e = variants(flags).check(region, custom).unwrap_err();
            assert!(e.to_string().contains(wanted), "{region} {flags}: {e}");
        }
        // A custom endpoint has no FIPS or dual-stack variant: botocore ignores both there.
        assert_eq!(variants("fd").check("us-east-1", true), Ok(()));
        assert_eq!(variants("ad").check("us-gov-west-1", false), Ok(()));
        let e = variants("a").accelerate_host("my.bucket").unwrap_err();
        assert!(e.to_string().contains("without dots"), "{e}");
    }
}
