//! What several commands' flags share: the connection flags (credentials, region, endpoint,
//! addressing, CA bundle), the transport flags, and the parsers of sizes and durations. Both
//! `args.rs` (every command but bench) and `bench_args.rs` build on it.

use clap::{Args, ValueEnum};

/// `8MiB`, `512KiB`, `1GiB`, `1048576`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    match slipstream_client::parse_size(s) {
        Some(0) => Err(format!("{s:?}: give a size above 0")),
        Some(n) => Ok(n),
        None => Err(format!(
            "{s:?} is not a size such as 8MiB (bytes, or a whole number with KiB, MiB, GiB or TiB)"
        )),
    }
}

/// `--expires`, as botocore takes a timestamp: an HTTP date (`Tue, 01 Jan 2030 00:00:00
/// GMT`), an ISO 8601 UTC time (`2030-01-01T00:00:00Z`) or seconds since 1970, sent as the HTTP
/// date the header needs. Anything else is refused here rather than stored as it was typed.
pub fn parse_http_date(s: &str) -> Result<String, String> {
    let at = if let Ok(t) = httpdate::parse_http_date(s) {
        t
    } else if let Some(nanos) = slipstream_s3::time::parse_timestamp(s) {
        let secs =
            u64::try_from(nanos / 1_000_000_000).map_err(|_| format!("{s:?} is before 1970"))?;
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)
    } else if let Ok(secs) = s.parse::<u64>() {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)
    } else {
        return Err(format!(
            "{s:?} is not a date: give an HTTP date ('Tue, 01 Jan 2030 00:00:00 GMT'), an ISO 8601 time ('2030-01-01T00:00:00Z') or seconds since 1970"
        ));
    };
    Ok(httpdate::fmt_http_date(at))
}

/// `30s`, `2m`, `500ms`, `1h`, or seconds.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: f64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a duration such as 30s"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{s:?}: use ms, s, m or h")),
    };
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?} is out of range"))
}

/// [`parse_duration`], or `0` for none (`Duration::ZERO`).
pub fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    if s.trim_end_matches(['s', 'm', 'h']).parse::<f64>() == Ok(0.0) {
        return Ok(std::time::Duration::ZERO);
    }
    parse_duration(s)
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Addressing {
    /// Virtual-hosted where the bucket name allows it, as boto3 does.
    Auto,
    /// Always `bucket.host` where the name allows it.
    Virtual,
    /// Always `host/bucket`.
    Path,
}

impl Connection {
    /// What these flags say to the AWS configuration chain.
    pub fn overrides(&self) -> slipstream_client::Overrides {
        use slipstream_s3::AddressingStyle;
        let addressing = if self.path_style {
            Some(AddressingStyle::Path)
        } else {
            self.addressing_style.map(|s| match s {
                Addressing::Auto => AddressingStyle::Auto,
                Addressing::Virtual => AddressingStyle::Virtual,
                Addressing::Path => AddressingStyle::Path,
            })
        };
        slipstream_client::Overrides {
            profile: self.profile.clone(),
            region: self.region.clone(),
            endpoint_url: self.endpoint_url.clone(),
            addressing,
            ca_bundle: self.ca_bundle.clone(),
            region_set: self.region_set.clone(),
            no_sign_request: self.no_sign_request,
            proxies: None,
            variants: Default::default(),
        }
    }
}

/// Options shared by every command that talks to S3.
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// Named profile from ~/.aws/credentials and ~/.aws/config (else AWS_PROFILE, else default).
    #[arg(long)]
    pub profile: Option<String>,
    /// Region (else AWS_REGION, AWS_DEFAULT_REGION, the profile's region, us-east-1).
    #[arg(long)]
    pub region: Option<String>,
    /// Custom S3 endpoint such as http://127.0.0.1:7070 (else AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL).
    #[arg(long, value_name = "URL")]
    pub endpoint_url: Option<String>,
    /// Bucket addressing style (else the profile's s3.addressing_style, else auto).
    #[arg(long, value_enum)]
    pub addressing_style: Option<Addressing>,
    /// Same as --addressing-style path.
    #[arg(long, conflicts_with = "addressing_style")]
    pub path_style: bool,
    /// Trust only the PEM certificates in this file for HTTPS (also AWS_CA_BUNDLE).
    #[arg(long, value_name = "FILE")]
    pub ca_bundle: Option<std::path::PathBuf>,
    /// Sign with SigV4A for this region set, e.g. us-east-1,us-west-2 or * (else
    /// AWS_SIGV4A_SIGNING_REGION_SET, the profile's sigv4a_signing_region_set; none: SigV4), as
    /// multi-region access points and edges that verify SigV4A need.
    #[arg(long, value_name = "REGIONS")]
    pub region_set: Option<String>,
    /// Send requests unsigned, without looking for credentials (the AWS CLI's flag): for
    /// public buckets such as open datasets.
    #[arg(long, conflicts_with = "region_set")]
    pub no_sign_request: bool,
}

/// How the commands that move objects use their connections.
#[derive(Args, Debug, Clone)]
pub struct Transport {
    /// TCP congestion control for our connections (cubic, reno, bbr...; Linux), else the
    /// host's. Uploads send with it: on a long clean link a loss-based one (cubic, reno) keeps
    /// it fuller than BBR. Unprivileged programs may use only the host's allowed list.
    #[arg(long, value_name = "NAME")]
    pub tcp_congestion: Option<String>,
    /// Keys per listing page, 1 to 1,000 (the AWS CLI's --page-size; default S3's 1,000).
    /// Smaller pages cost more requests; they help where a server is slow to answer a page.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub page_size: Option<u16>,
    /// Accept the charges of a Requester Pays bucket (x-amz-request-payer: requester on every
    /// request), as the AWS CLI's --request-payer, with or without the value requester; such a
    /// bucket refuses requests without it.
    #[arg(long, value_name = "WHO", num_args = 0..=1, default_missing_value = "requester",
          value_parser = ["requester"])]
    pub request_payer: Option<String>,
    /// Cap the bytes per second of all transfers, both ways together: 50MB/s, 800KB/s (powers
    /// of 1024, as the AWS CLI counts them) or bytes per second; else the profile's
    /// s3.max_bandwidth. At least 16KB/s.
    #[arg(long, value_name = "RATE", value_parser = slipstream_client::Bandwidth::from_rate)]
    pub max_bandwidth: Option<slipstream_client::Bandwidth>,
    /// Seconds to wait for a connection (TCP, TLS, a proxy's tunnel) before trying again, as the
    /// AWS CLI's option (default 10; 0: no limit).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub cli_connect_timeout: Option<std::time::Duration>,
    /// Seconds to wait for an answer (default 60), and for each read of its body (default 30),
    /// before trying again, as the AWS CLI's option (0: no limit; --stall-timeout still ends a
    /// transfer on which nothing moves).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub cli_read_timeout: Option<std::time::Duration>,
    /// Check no server certificate, as the AWS CLI's and s5cmd's option (a warning is
    /// printed): for a test server with a self-signed one; --ca-bundle trusts it safely.
    /// Credentials are still fetched over checked connections.
    #[arg(long)]
    pub no_verify_ssl: bool,
    /// Print on standard error where requests go (the credentials' source, never their values;
    /// region, endpoint) and one line per attempt of every request: method, URL, status or
    /// error, time, and whether it will be tried again, as the AWS CLI's --debug helps find
    /// why a command fails. No header is printed: no signature, token or SSE-C key.
    #[arg(long)]
    pub debug: bool,
}

/// What the AWS CLI's `--cli-connect-timeout` and `--cli-read-timeout` take: seconds, `0` for
/// no limit (a year, so that deadlines stay representable).
fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    match std::time::Duration::try_from_secs_f64(seconds) {
        Ok(d) if d.is_zero() => Ok(std::time::Duration::from_secs(365 * 86_400)),
        Ok(d) => Ok(d),
        Err(_) => Err(format!("{s:?} is not a number of seconds >= 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What botocore sends as `Expires` for the same inputs.
    #[test]
    fn expiry_dates_read_as_botocore_reads_them() {
        let want = "Tue, 01 Jan 2030 00:00:00 GMT";
        for given in [
            want,
            "2030-01-01T00:00:00Z",
            "2030-01-01T00:00:00.000Z",
            "1893456000",
        ] {
            assert_eq!(parse_http_date(given).as_deref(), Ok(want), "{given}");
        }
        for bad in ["", "soon", "2030-01-01T00:00:00", "Tue, 01 Jan 2030"] {
            assert!(parse_http_date(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_http_date("2").as_deref(),
            Ok("Thu, 01 Jan 1970 00:00:02 GMT")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("30s"),
            Ok(std::time::Duration::from_secs(30))
        );
        assert_eq!(
            parse_duration("2m"),
            Ok(std::time::Duration::from_secs(120))
        );
        assert_eq!(
            parse_duration("500ms"),
            Ok(std::time::Duration::from_millis(500))
        );
        assert_eq!(
            parse_duration("1.5"),
            Ok(std::time::Duration::from_millis(1500))
        );
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn timeouts_take_zero_for_none() {
        for none in ["0", "0s", "0ms", "0m"] {
            assert_eq!(parse_timeout(none), Ok(std::time::Duration::ZERO), "{none}");
        }
        assert_eq!(parse_timeout("2m"), Ok(std::time::Duration::from_secs(120)));
        assert!(parse_timeout("-1").is_err() && parse_timeout("soon").is_err());
    }
}
