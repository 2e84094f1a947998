//! Bucket-name rules, as the SDKs apply them when choosing an address.

use crate::Error;

/// Accepts what botocore accepts (`^[a-zA-Z0-9.\-_]{1,255}$`): legacy us-east-1 buckets may
/// have uppercase letters and underscores, so stricter checks would lock users out of them.
pub fn check_bucket(bucket: &str) -> Result<(), Error> {
    let ok = (1..=255).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidBucket(bucket.to_owned()))
    }
}

/// One DNS label: 1 to 63 letters, digits or `-`, not starting or ending with `-`.
pub fn is_valid_host_label(s: &str) -> bool {
    (1..=63).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Whether `bucket.host` is a usable name: a host label of 3 to 63 characters with no uppercase.
/// Dots are refused too: `a.b.s3.amazonaws.com` fails TLS wildcard matching.
pub fn is_virtual_hostable(bucket: &str) -> bool {
    bucket.len() >= 3
        && is_valid_host_label(bucket)
        && !bucket.bytes().any(|b| b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_rules() {
        for b in [
            "mybucket",
            "My_Bucket",
            "my.bucket",
            "ab",
            "a",
            &"x".repeat(255),
        ] {
            assert!(check_bucket(b).is_ok(), "{b}");
        }
        for b in ["", "a/b", "a b", "a:b", &"x".repeat(256), "ሴ"] {
            assert!(check_bucket(b).is_err(), "{b}");
        }
        assert!(is_virtual_hostable("a-b-c") && is_virtual_hostable("xn--b"));
        for b in [
            "ab",
            "MyBucket",
            "my.bucket",
            "bucket-",
            "-bucket",
            "my_bucket",
            &"x".repeat(64),
        ] {
            assert!(!is_virtual_hostable(b), "{b}");
        }
    }
}
