//! Where a bucket's objects are addressed: virtual-hosted or path-style, AWS or a custom endpoint.
//!
//! The choices follow botocore (1.43) for presigned URLs, checked against it in a table test and
//! in the differential test:
//! - AWS partition, automatic style: buckets that are valid host labels go to the global
//!   endpoint `s3.amazonaws.com` (virtual-hosted when the name allows it, else path-style);
//!   other names use the regional endpoint, path-style.
//! - Explicit virtual style: the regional endpoint, virtual-hosted when the name allows it.
//! - Path style: the regional endpoint (`s3.amazonaws.com` for us-east-1).
//! - Other partitions (China, GovCloud) have no global endpoint.
//! - A custom endpoint (MinIO, R2, versitygw): path-style unless virtual is asked for, the name
//!   allows it and the endpoint's host is not an IP address.
//! - AWS's other hosts (FIPS, dual-stack, Transfer Acceleration, us-east-1's regional one) are
//!   named in `aws_hosts.rs`; a custom endpoint has none of them.
//!
//! One botocore quirk is not reproduced: with a custom IP endpoint and explicit virtual style it
//! turns `my.bucket` into the host `my.bucket.127.0.0.1`, which cannot resolve; we use path-style.

use slipstream_sign::UrlBase;

use crate::aws_hosts::{partition, Variants};
use crate::bucket::{check_bucket, is_valid_host_label, is_virtual_hostable};
use crate::Error;

/// How the bucket appears in the URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AddressingStyle {
    /// Virtual-hosted where the bucket name allows it (botocore's default).
    #[default]
    Auto,
    /// `bucket.host`, unless the name cannot be a host label.
    Virtual,
    /// `host/bucket`.
    Path,
}

impl AddressingStyle {
    /// The name botocore's `addressing_style` and `--addressing-style` give it.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressingStyle::Auto => "auto",
            AddressingStyle::Virtual => "virtual",
            AddressingStyle::Path => "path",
        }
    }
}

/// A custom endpoint URL: `http(s)://host[:port][/base/path]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    scheme: String,
    /// Host without port; IPv6 in brackets.
    host: String,
    port: Option<u16>,
    /// Empty, or `/base` without a trailing `/`.
    base_path: String,
}

/// The URL again, as `parse` reads it (lowercased, no trailing `/`): what a caller that found
/// the endpoint in the environment hands on, e.g. in a pickle.
impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        f.write_str(&self.base_path)
    }
}

impl Endpoint {
    /// Parses an endpoint URL as `--endpoint-url` takes it.
    pub fn parse(url: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidEndpoint(format!("{url:?}: {why}"));
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| bad("expected http:// or https://"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(bad("the scheme must be http or https"));
        }
        if rest.contains(['?', '#']) {
            return Err(bad("an endpoint cannot have a query or fragment"));
        }
        let (authority, path) = rest
            .find('/')
            .map_or((rest, ""), |i| (&rest[..i], &rest[i..]));
        if authority.contains('@') {
            return Err(bad("credentials in the URL are not supported"));
        }
        let (host, port) = split_port(authority)
            .ok_or_else(|| bad("the port must be a number from 1 to 65535"))?;
        let host_ok = if let Some(v6) = host.strip_prefix('[') {
            v6.strip_suffix(']')
                .is_some_and(|a| a.parse::<std::net::Ipv6Addr>().is_ok())
        } else {
            !host.is_empty() && host.split('.').all(is_valid_host_label)
        };
        if !host_ok {
            return Err(bad("the host is not a valid name or address"));
        }
        if path
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(bad("the path has spaces or control characters"));
        }
        Ok(Self {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
            base_path: path.trim_end_matches('/').to_owned(),
        })
    }

    /// Whether requests go over TLS.
    pub fn is_https(&self) -> bool {
        self.scheme == "https"
    }

    /// The host to resolve and to name in TLS: a name, or an address (IPv6 without brackets).
    pub fn connect_host(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }

    /// The port, or the scheme's default.
    pub fn port_or_default(&self) -> u16 {
        self.port.unwrap_or(if self.is_https() { 443 } else { 80 })
    }

    fn is_ip(&self) -> bool {
        self.host.starts_with('[') || self.host.parse::<std::net::Ipv4Addr>().is_ok()
    }

    /// `host[:port]` with `host` replaced by `prefix + host`; the port only if not the default,
    /// for the Host header, and as written for the URL.
    fn authority(&self, prefix: &str) -> (String, String) {
        let host = format!("{prefix}{}", self.host);
        let default = if self.scheme == "https" { 443 } else { 80 };
        match self.port {
            Some(p) if p != default => (format!("{host}:{p}"), format!("{host}:{p}")),
            Some(p) => (format!("{host}:{p}"), host),
            None => (host.clone(), host),
        }
    }
}

/// `host[:port]` (an IPv6 host in brackets, kept) as the host and the port if one is given;
/// `None` when what follows the last `:` is not a port (1 to 65535).
pub fn split_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let colon = if authority.starts_with('[') {
        authority.find("]:").map(|i| i + 1)
    } else {
        authority.rfind(':')
    };
    match colon {
        None => Some((authority, None)),
        Some(i) => {
            let port: u16 = authority[i + 1..].parse().ok().filter(|p| *p > 0)?;
            Some((&authority[..i], Some(port)))
        }
    }
}

/// The URL base for objects of `bucket`; with `variants` (FIPS, dual-stack, Transfer
/// Acceleration) for AWS itself, none of which a custom endpoint has.
pub fn resolve(
    bucket: &str,
    region: &str,
    endpoint: Option<&Endpoint>,
    style: AddressingStyle,
    variants: Variants,
) -> Result<UrlBase, Error> {
    check_bucket(bucket)?;
    check_region(region)?;
    variants.check(region, endpoint.is_some())?;
    if let Some(ep) = endpoint {
        let virtual_ok =
            style == AddressingStyle::Virtual && is_virtual_hostable(bucket) && !ep.is_ip();
        let (url_authority, host) = ep.authority(&if virtual_ok {
            format!("{bucket}.")
        } else {
            String::new()
        });
        let path_prefix = if virtual_ok {
            format!("{}/", ep.base_path)
        } else {
            format!("{}/{bucket}/", ep.base_path)
        };
        return Ok(UrlBase {
            origin: format!("{}://{url_authority}", ep.scheme),
            host,
            path_prefix,
        });
    }
    if variants.accelerate {
        // Virtual-hosted whatever the style: botocore ignores path style here.
        let host = variants.accelerate_host(bucket)?;
        return Ok(UrlBase {
            origin: format!("https://{host}"),
            host,
            path_prefix: "/".to_owned(),
        });
    }
    let s3_host = match style {
        AddressingStyle::Auto if variants.global_allowed(region) && is_valid_host_label(bucket) => {
            format!("s3.{}", partition(region).0)
        }
        _ => variants.regional_host(region),
    };
    let (host, path_prefix) = if style != AddressingStyle::Path && is_virtual_hostable(bucket) {
        (format!("{bucket}.{s3_host}"), "/".to_owned())
    } else {
        (s3_host, format!("/{bucket}/"))
    };
    Ok(UrlBase {
        origin: format!("https://{host}"),
        host,
        path_prefix,
    })
}

/// The URL base of the service itself, for requests that name no bucket (`ListBuckets`): the
/// endpoint given, or the region's S3 host as [`resolve`] picks it for a path-style bucket
/// (FIPS and dual-stack apply; acceleration, for objects, does not).
pub fn resolve_service(
    region: &str,
    endpoint: Option<&Endpoint>,
    variants: Variants,
) -> Result<UrlBase, Error> {
    check_region(region)?;
    variants.check(region, endpoint.is_some())?;
    if let Some(ep) = endpoint {
        let (url_authority, host) = ep.authority("");
        return Ok(UrlBase {
            origin: format!("{}://{url_authority}", ep.scheme),
            host,
            // botocore: `http://host:9000/base`, without the slash a bucket's path would add.
            path_prefix: if ep.base_path.is_empty() {
                "/".to_owned()
            } else {
                ep.base_path.clone()
            },
        });
    }
    let host = variants.regional_host(region);
    Ok(UrlBase {
        origin: format!("https://{host}"),
        host,
        path_prefix: "/".to_owned(),
    })
}

fn check_region(region: &str) -> Result<(), Error> {
    match region.split('.').all(is_valid_host_label) {
        true => Ok(()),
        false => Err(Error::InvalidRegion(region.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_prints_as_a_url_that_parses_to_itself() {
        for (given, shown) in [
            ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
            ("HTTPS://S3.Example.com/", "https://s3.example.com"),
            (
                "https://[::1]:8443/base/path/",
                "https://[::1]:8443/base/path",
            ),
        ] {
            let e = Endpoint::parse(given).unwrap();
            assert_eq!(e.to_string(), shown);
            assert_eq!(Endpoint::parse(shown).unwrap(), e);
        }
    }

    fn url(bucket: &str, region: &str, ep: Option<&str>, style: AddressingStyle) -> String {
        let ep = ep.map(|e| Endpoint::parse(e).unwrap());
        let b = resolve(bucket, region, ep.as_ref(), style, Variants::default()).unwrap();
        format!("{}{}k", b.origin, b.path_prefix)
    }

    /// The URLs botocore 1.43 sends `ListBuckets` to.
    #[test]
    fn the_service_itself_is_where_botocore_lists_buckets() {
        let rows = [
            ("us-east-1", None, "https://s3.amazonaws.com/"),
            ("eu-west-1", None, "https://s3.eu-west-1.amazonaws.com/"),
            (
                "cn-north-1",
                None,
                "https://s3.cn-north-1.amazonaws.com.cn/",
            ),
            (
                "us-gov-west-1",
                None,
                "https://s3.us-gov-west-1.amazonaws.com/",
            ),
            (
                "eu-west-1",
                Some("http://127.0.0.1:9000"),
                "http://127.0.0.1:9000/",
            ),
            (
                "eu-west-1",
                Some("http://127.0.0.1:9000/base"),
                "http://127.0.0.1:9000/base",
            ),
        ];
        for (region, ep, want) in rows {
            let ep = ep.map(|e| Endpoint::parse(e).unwrap());
            let b = resolve_service(region, ep.as_ref(), Variants::default()).unwrap();
            assert_eq!(
                format!("{}{}", b.origin, b.path_prefix),
                want,
                "{region} {ep:?}"
            );
        }
        assert!(resolve_service("bad region", None, Variants::default()).is_err());
    }

    /// Rows printed by botocore 1.43.11 `generate_presigned_url("get_object", {"Key": "k"})`.
    #[test]
    fn matches_botocore_addressing() {
        use AddressingStyle::*;
        let rows: &[(&str, AddressingStyle, Option<&str>, &str, &str)] = &[
            (
                "us-east-1",
                Auto,
                None,
                "mybucket",
                "https://mybucket.s3.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Auto,
                None,
                "MyBucket",
                "https://s3.amazonaws.com/MyBucket/k",
            ),
            (
                "us-east-1",
                Auto,
                None,
                "my.bucket",
                "https://s3.amazonaws.com/my.bucket/k",
            ),
            (
                "us-east-1",
                Auto,
                None,
                "ab",
                "https://s3.amazonaws.com/ab/k",
            ),
            (
                "us-east-1",
                Virtual,
                None,
                "a-b-c",
                "https://a-b-c.s3.amazonaws.com/k",
            ),
            (
                "us-east-1",
                Path,
                None,
                "mybucket",
                "https://s3.amazonaws.com/mybucket/k",
            ),
            (
                "eu-west-1",
                Auto,
                None,
                "mybucket",
                "https://mybucket.s3.amazonaws.com/k",
            ),
            (
                "eu-west-1",
                Auto,
                None,
                "MyBucket",
                "https://s3.amazonaws.com/MyBucket/k",
            ),
            (
                "eu-west-1",
                Auto,
                None,
                "my.bucket",
                "https://s3.eu-west-1.amazonaws.com/my.bucket/k",
            ),
            (
                "eu-west-1",
                Auto,
                None,
                "my_bucket",
                "https://s3.eu-west-1.amazonaws.com/my_bucket/k",
            ),
            (
                "eu-west-1",
                Auto,
                None,
                "ab",
                "https://s3.amazonaws.com/ab/k",
            ),
            (
                "eu-west-1",
                Auto,
                None,
                "192.168.1.1",
                "https://s3.eu-west-1.amazonaws.com/192.168.1.1/k",
            ),
            (
                "eu-west-1",
                Auto,
                None,
                "bucket-",
                "https://s3.eu-west-1.amazonaws.com/bucket-/k",
            ),
            (
                "eu-west-1",
                Virtual,
                None,
                "mybucket",
                "https://mybucket.s3.eu-west-1.amazonaws.com/k",
            ),
            (
                "eu-west-1",
                Virtual,
                None,
                "ab",
                "https://s3.eu-west-1.amazonaws.com/ab/k",
            ),
            (
                "eu-west-1",
                Path,
                None,
                "mybucket",
                "https://s3.eu-west-1.amazonaws.com/mybucket/k",
            ),
            (
                "cn-north-1",
                Auto,
                None,
                "mybucket",
                "https://mybucket.s3.cn-north-1.amazonaws.com.cn/k",
            ),
            (
                "cn-north-1",
                Auto,
                None,
                "MyBucket",
                "https://s3.cn-north-1.amazonaws.com.cn/MyBucket/k",
            ),
            (
                "cn-north-1",
                Path,
                None,
                "mybucket",
                "https://s3.cn-north-1.amazonaws.com.cn/mybucket/k",
            ),
            (
                "us-east-1",
                Auto,
                Some("http://127.0.0.1:7070"),
                "mybucket",
                "http://127.0.0.1:7070/mybucket/k",
            ),
            (
                "eu-west-1",
                Virtual,
                Some("http://127.0.0.1:7070"),
                "mybucket",
                "http://127.0.0.1:7070/mybucket/k",
            ),
            (
                "us-east-1",
                Virtual,
                Some("https://minio.example.com:9000"),
                "mybucket",
                "https://mybucket.minio.example.com:9000/k",
            ),
            (
                "us-east-1",
                Virtual,
                Some("https://minio.example.com:9000"),
                "MyBucket",
                "https://minio.example.com:9000/MyBucket/k",
            ),
            (
                "us-east-1",
                Auto,
                Some("https://minio.example.com/base/"),
                "mybucket",
                "https://minio.example.com/base/mybucket/k",
            ),
            (
                "us-east-1",
                Virtual,
                Some("https://minio.example.com/base/"),
                "a-b-c",
                "https://a-b-c.minio.example.com/base/k",
            ),
        ];
        for (region, style, ep, bucket, want) in rows {
            assert_eq!(
                url(bucket, region, *ep, *style),
                *want,
                "{region} {style:?} {ep:?} {bucket}"
            );
        }
    }

    #[test]
    fn host_header_drops_default_ports_only() {
        let ep = Endpoint::parse("https://h.example:443").unwrap();
        let b = resolve(
            "bkt",
            "us-east-1",
            Some(&ep),
            AddressingStyle::Path,
            Variants::default(),
        )
        .unwrap();
        assert_eq!(
            (b.origin.as_str(), b.host.as_str()),
            ("https://h.example:443", "h.example")
        );
        let ep = Endpoint::parse("http://[::1]:7070").unwrap();
        let b = resolve(
            "bkt",
            "us-east-1",
            Some(&ep),
            AddressingStyle::Virtual,
            Variants::default(),
        )
        .unwrap();
        assert_eq!(
            (b.host.as_str(), b.path_prefix.as_str()),
            ("[::1]:7070", "/bkt/")
        );
    }

    #[test]
    fn where_to_connect() {
        let at = |u: &str| {
            Endpoint::parse(u).map(|e| {
                (
                    e.connect_host().to_owned(),
                    e.port_or_default(),
                    e.is_https(),
                )
            })
        };
        assert_eq!(at("http://h:81"), Ok(("h".into(), 81, false)));
        assert_eq!(at("https://h"), Ok(("h".into(), 443, true)));
        assert_eq!(at("http://[::1]:9"), Ok(("::1".into(), 9, false)));
        assert_eq!(at("http://[::1]"), Ok(("::1".into(), 80, false)));
        assert!(at("http://h:x").is_err());
    }

    #[test]
    fn rejects_bad_endpoints_and_regions() {
        for e in [
            "127.0.0.1:7070",
            "ftp://h",
            "http://",
            "http://h:0",
            "http://h:99999",
            "http://a b",
            "http://h?x",
            "http://u@h",
        ] {
            assert!(Endpoint::parse(e).is_err(), "{e}");
        }
        assert!(resolve(
            "bkt",
            "us east",
            None,
            AddressingStyle::Auto,
            Variants::default()
        )
        .is_err());
        assert!(resolve("bkt", "", None, AddressingStyle::Auto, Variants::default()).is_err());
    }
}
