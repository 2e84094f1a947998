//! `no_proxy`: the hosts a connection reaches directly although a proxy is set, read as
//! botocore reads them (Python's urllib): a comma-separated list where `*` means every host, and
//! a name means that host and the hosts under it (`example.com` and `.example.com` both take
//! `s3.example.com`), with `:port` only that port given explicitly in the URL; an IP address
//! means that address. Beside urllib, as curl and Go read the variable: an IP network
//! (`10.0.0.0/8`, `fd00::/8`) means the addresses in it.

use std::net::IpAddr;

/// A parsed `no_proxy` list.
#[derive(Clone, Debug, Default)]
pub(crate) struct NoProxy {
    every_host: bool,
    entries: Vec<Entry>,
}

#[derive(Clone, Debug)]
enum Entry {
    /// A host name or address as written (lower case, no leading dot), and a port if given.
    Name { name: String, port: Option<u16> },
    /// An IP network: the address and the length of its prefix in bits.
    Network { base: IpAddr, bits: u8 },
}

impl NoProxy {
    /// The entries of `list`; what is neither a network nor a host with a port is a host name.
    pub(crate) fn parse(list: &str) -> Self {
        let mut parsed = NoProxy::default();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                parsed.every_host = true;
            } else if let Some(network) = network(entry) {
                parsed.entries.push(network);
            } else {
                let entry = entry.trim_start_matches('.').to_ascii_lowercase();
                let (name, port) = slipstream_s3::split_port(&entry).unwrap_or((&entry, None));
                let name = name
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned();
                parsed.entries.push(Entry::Name { name, port });
            }
        }
        parsed
    }

    /// Whether a connection to `host` (as a URL has it, an IPv6 address in brackets) with the
    /// `port` its URL gives explicitly goes direct.
    pub(crate) fn bypasses(&self, host: &str, port: Option<u16>) -> bool {
        if self.every_host {
            return true;
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let address = host.parse::<IpAddr>().ok();
        self.entries.iter().any(|entry| match entry {
            Entry::Name { name, port: want } => {
                let named = host == *name
                    || (address.is_none()
                        && host.len() > name.len()
                        && host.ends_with(name.as_str())
                        && host.as_bytes()[host.len() - name.len() - 1] == b'.');
                named && want.map_or(true, |want| port == Some(want))
            }
            Entry::Network { base, bits } => address.is_some_and(|a| within(a, *base, *bits)),
        })
    }
}

/// `entry` as an IP network (`a.b.c.d/n`, `x:y::/n`) or a bare IP address (all its bits).
fn network(entry: &str) -> Option<Entry> {
    let (address, bits) = match entry.split_once('/') {
        Some((address, bits)) => (address, Some(bits.parse::<u8>().ok()?)),
        None => (entry, None),
    };
    let base = address
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .ok()?;
    let most = if base.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(most);
    (bits <= most).then_some(Entry::Network { base, bits })
}

/// Whether `address` is in the network `base/bits` (an IPv4 address is never in an IPv6
/// network, nor the reverse).
fn within(address: IpAddr, base: IpAddr, bits: u8) -> bool {
    let (a, b, width) = match (address, base) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a).into(), u32::from(b).into(), 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
        _ => return false,
    };
    let shift = width - u32::from(bits);
    shift >= width || a >> shift == b >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_take_their_subdomains_and_a_port_only_that_port() {
        let no = NoProxy::parse(" .internal.example, S3.Local:9000 ,, localhost");
        assert!(no.bypasses("internal.example", None));
        assert!(no.bypasses("s3.internal.example", Some(443)));
        assert!(!no.bypasses("notinternal.example", None));
        assert!(no.bypasses("s3.local", Some(9000)));
        assert!(no.bypasses("a.s3.local", Some(9000)));
        assert!(!no.bypasses("s3.local", Some(9001)));
        assert!(
            !no.bypasses("s3.local", None),
            "urllib matches host:port only when the URL has it"
        );
        assert!(no.bypasses("LOCALHOST", None));
        assert!(!no.bypasses("example.com", None));
    }

    #[test]
    fn addresses_and_networks_take_addresses_only() {
        let no = NoProxy::parse("127.0.0.1, 10.0.0.0/8, ::1, fd00::/8, 192.168.1.5:9000");
        assert!(no.bypasses("127.0.0.1", Some(9000)));
        assert!(!no.bypasses("127.0.0.2", None));
        assert!(no.bypasses("10.200.3.4", None));
        assert!(!no.bypasses("11.0.0.1", None));
        assert!(no.bypasses("[::1]", Some(9000)));
        assert!(no.bypasses("[fd12::3]", None));
        assert!(!no.bypasses("[fe80::1]", None));
        assert!(no.bypasses("192.168.1.5", Some(9000)));
        assert!(!no.bypasses("192.168.1.5", Some(80)));
        assert!(!no.bypasses("x.10.0.0.1.example", None));
    }

    #[test]
    fn a_star_takes_every_host_and_nothing_takes_none() {
        assert!(NoProxy::parse("example.com, *").bypasses("s3.amazonaws.com", None));
        assert!(!NoProxy::parse("").bypasses("s3.amazonaws.com", None));
        assert!(NoProxy::parse("0.0.0.0/0").bypasses("8.8.8.8", None));
    }
}
