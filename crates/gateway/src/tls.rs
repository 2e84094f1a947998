//! TLS towards clients: certificates chosen by SNI (ECDSA and RSA; for one name, the kind the
//! client can verify), reloaded from their files without dropping connections, TLS 1.3 and 1.2
//! with session tickets and resumption, ALPN h2 and http/1.1.
//!
//! 0-RTT stays off (`max_early_data_size` 0, rustls's default): early data can be replayed by
//! anyone on the path, and a replayed S3 request is a second PUT or DELETE. It would save one
//! client round trip (a few ms to a nearby edge) on GET and HEAD only, and rustls accepts it
//! only with single-use stateful session storage, which a ticketer (resumption across a fleet
//! without shared state) rules out. docs/GATEWAY.md has the reasoning.

use std::fmt;
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::{ClientHello, ResolvesServerCert, ServerSessionMemoryCache};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;

use crate::settings::CertFiles;
use crate::GatewayError;

/// Sessions remembered for TLS 1.2 session-ID resumption (tickets need no memory).
const SESSION_CACHE: usize = 65_536;

/// The server configuration: `certificates` (live: [`Certificates::reload`] takes effect for
/// the next handshake), session tickets, ALPN h2 then http/1.1.
pub(crate) fn server_config(
    certificates: Arc<Certificates>,
) -> Result<Arc<ServerConfig>, GatewayError> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(slipstream_client::tls::DEFAULT_VERSIONS)
        .map_err(|e| GatewayError::Tls(format!("TLS configuration: {e}")))?
        .with_no_client_auth()
        .with_cert_resolver(certificates);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()
        .map_err(|e| GatewayError::Tls(format!("TLS session tickets: {e}")))?;
    config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE);
    config.max_early_data_size = 0;
    Ok(Arc::new(config))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The certificates served, re-read from their files by [`Certificates::reload`].
pub(crate) struct Certificates {
    files: Vec<CertFiles>,
    current: RwLock<Arc<Vec<Arc<CertifiedKey>>>>,
}

impl fmt::Debug for Certificates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Certificates")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl Certificates {
    /// Reads every pair; fails on the first that is missing, unreadable or mismatched.
    pub(crate) fn load(files: &[CertFiles]) -> Result<Self, GatewayError> {
        Ok(Self {
            current: RwLock::new(Arc::new(read_all(files)?)),
            files: files.to_vec(),
        })
    }

    /// Reads the files again and serves them from the next handshake on. On any error the
    /// certificates in use stay (a half-written file never takes the edge down).
    pub(crate) fn reload(&self) -> Result<(), GatewayError> {
        let fresh = Arc::new(read_all(&self.files)?);
        match self.current.write() {
            Ok(mut current) => *current = fresh,
            Err(poisoned) => *poisoned.into_inner() = fresh,
        }
        Ok(())
    }

    fn snapshot(&self) -> Arc<Vec<Arc<CertifiedKey>>> {
        match self.current.read() {
            Ok(c) => Arc::clone(&c),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }
}

impl ResolvesServerCert for Certificates {
    /// The first certificate valid for the SNI name whose key can sign with a scheme the
    /// client offers; else the first valid for the name; else the first of all (clients that
    /// send no name, or connect by IP address).
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let all = self.snapshot();
        let schemes = hello.signature_schemes();
        let named = hello
            .server_name()
            .and_then(|n| ServerName::try_from(n.to_owned()).ok())
            .map(|name| {
                all.iter()
                    .filter(|c| valid_for(c, &name))
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let signs = |c: &&Arc<CertifiedKey>| c.key.choose_scheme(schemes).is_some();
        named
            .iter()
            .find(signs)
            .or_else(|| named.first())
            .or_else(|| all.iter().find(signs))
            .or_else(|| all.first())
            .cloned()
    }
}

fn valid_for(certified: &CertifiedKey, name: &ServerName<'_>) -> bool {
    certified
        .cert
        .first()
        .and_then(|leaf| webpki::EndEntityCert::try_from(leaf).ok())
        .is_some_and(|leaf| leaf.verify_is_valid_for_subject_name(name).is_ok())
}

fn read_all(files: &[CertFiles]) -> Result<Vec<Arc<CertifiedKey>>, GatewayError> {
    files.iter().map(read).collect()
}

fn read(files: &CertFiles) -> Result<Arc<CertifiedKey>, GatewayError> {
    let cert_name = files.cert.display();
    let key_name = files.key.display();
    let chain = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| GatewayError::Tls(format!("certificate {cert_name}: {e}")))?;
    if chain.is_empty() {
        return Err(GatewayError::Tls(format!(
            "certificate {cert_name}: no PEM certificate in it"
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| GatewayError::Tls(format!("private key {key_name}: {e}")))?;
    let certified = CertifiedKey::from_der(chain, key, &provider()).map_err(|e| {
        GatewayError::Tls(format!(
            "{cert_name} and {key_name} do not go together: {e}"
        ))
    })?;
    Ok(Arc::new(certified))
}
