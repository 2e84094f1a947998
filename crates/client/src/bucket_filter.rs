//! Which buckets `ListBuckets` returns: S3's `prefix` and `bucket-region` parameters (the AWS
//! CLI's `ls --bucket-name-prefix` and `--bucket-region`, boto3's `Prefix` and `BucketRegion`).
//! Both are sent for the server to apply, and applied again to what comes back, so that a
//! server that ignores them (older S3-compatible ones do) still gives only what was asked for;
//! a bucket whose region the server does not say is kept, since nothing shows it is elsewhere.

use slipstream_s3::xml::Bucket;

/// The buckets wanted; the default wants all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BucketFilter {
    /// Names that start with this.
    pub prefix: Option<String>,
    /// Buckets in this region.
    pub region: Option<String>,
}

impl BucketFilter {
    pub(crate) fn admits(&self, b: &Bucket) -> bool {
        let named = match &self.prefix {
            Some(p) => b.name.starts_with(p.as_str()),
            None => true,
        };
        named
            && match (&self.region, &b.region) {
                (Some(wanted), Some(region)) => wanted == region,
                _ => true,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(name: &str, region: Option<&str>) -> Bucket {
        Bucket {
            name: name.into(),
            created: String::new(),
            region: region.map(Into::into),
        }
    }

    #[test]
    fn names_by_prefix_and_regions_where_the_server_says_them() {
        let only = BucketFilter {
            prefix: Some("logs-".into()),
            region: Some("eu-west-1".into()),
        };
        assert!(only.admits(&bucket("logs-2026", Some("eu-west-1"))));
        assert!(only.admits(&bucket("logs-2026", None)), "region unknown");
        assert!(!only.admits(&bucket("logs-2026", Some("us-east-1"))));
        assert!(!only.admits(&bucket("data", Some("eu-west-1"))));
        assert!(!only.admits(&bucket("Logs-2026", None)), "case counts");
        assert!(BucketFilter::default().admits(&bucket("any", Some("ap-south-1"))));
    }
}
