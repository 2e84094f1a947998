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

/// A configuration that checks no certificate (`--no-verify-ssl`, boto3's `verify=False`):
/// the handshake's signatures are still verified, so the connection is to whoever holds the
/// key of the certificate shown, but that certificate may be anyone's. For a test server with
/// a self-signed certificate; `ca_bundle` is the safe way to trust one.
pub fn client_config_unchecked(
    versions: &[&'static SupportedProtocolVersion],
) -> Result<ClientConfig, ClientError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    Ok(ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(versions)
        .map_err(|e| ClientError::Request(format!("TLS configuration: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NoCertificateCheck(provider)))
        .with_no_client_auth())
}

/// Accepts any certificate; verifies the handshake's signatures with `.0`'s algorithms.
#[derive(Debug)]
struct NoCertificateCheck(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoCertificateCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
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
