//! TLS client configurations: one place decides the roots, versions and crypto provider, for the
//! pooled client and for `slipstream bench`'s hand-made connections.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore, SupportedProtocolVersion};

use crate::ClientError;

/// TLS 1.3 and 1.2, as S3 offers both.
pub const DEFAULT_VERSIONS: &[&SupportedProtocolVersion] =
    &[&rustls::version::TLS13, &rustls::version::TLS12];

/// A configuration with aws-lc-rs (the crypto library SigV4A already uses) that trusts exactly
/// the PEM certificates in `ca_bundle` (`--ca-bundle`, as the AWS CLI: a private CA, or a proxy
/// that inspects TLS), or the Mozilla roots without one, for `versions`. No ALPN: HTTP/1.1.
///
/// Key exchange prefers X25519MLKEM768 (rustls's `prefer-post-quantum`), and the first flight
/// carries both its share and a plain X25519 one. Without that, rustls offered the hybrid group
/// but sent only an X25519 share, and a server that prefers the hybrid (Go's crypto/tls, so
/// versitygw) answered with a HelloRetryRequest: TLS 1.3 cost two round trips instead of one
/// (`slipstream bench --connections fresh` over the emulated link; docs/BENCHMARKS.md).
pub fn client_config(
    ca_bundle: Option<&Path>,
    versions: &[&'static SupportedProtocolVersion],
) -> Result<ClientConfig, ClientError> {
    let roots = match ca_bundle {
        Some(path) => roots_from(path)?,
        None => RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        },
    };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    Ok(ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| ClientError::Request(format!("TLS configuration: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

fn roots_from(path: &Path) -> Result<RootCertStore, ClientError> {
    let bad = |why: String| ClientError::Request(format!("CA bundle {}: {why}", path.display()));
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))? {
        roots
            .add(cert.map_err(|e| bad(e.to_string()))?)
            .map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(roots)
}
