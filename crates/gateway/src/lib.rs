//! The edge: a gateway near users that terminates their TLS and forwards their S3 requests to
//! the origin over connections that are already open.
//!
//! A fresh client far from its origin pays the long round trip three times before its first
//! byte (TCP, TLS, the request). Through a nearby gateway it pays the short round trip for its
//! handshakes and the long one once, on a warm connection ([`pool`'s module docs](crate) and
//! docs/GATEWAY.md have the model and the figures).
//!
//! Two modes. Pass-through: the origin authenticates, and requests reach it byte for byte as
//! the client signed them (`proxy.rs`). Verify: the edge authenticates and authorizes each
//! request with its own keys and policies and signs it for the origin (`verify/`). Layers:
//! - `tls.rs`: certificates by SNI, reloadable; TLS 1.3/1.2, tickets, ALPN h2 and http/1.1;
//! - `server.rs`: listeners, limits, HTTP/1.1 and HTTP/2, graceful drain, `/metrics`;
//! - `proxy.rs` and `body.rs`: forwarding, streamed both ways, `Expect: 100-continue`;
//! - `workers.rs`: the threads that serve connections, one runtime and pool each;
//! - `pool.rs`: the warm upstream pool, on `slipstream-client`'s [`Dialer`](slipstream_client::Dialer);
//! - `metrics.rs`, `access_log.rs` (written by `log_writer.rs`), `s3_error.rs`: what it
//!   reports and answers;
//! - `verify/`: the keys file, policies, the operation table, verified and re-framed bodies.
//!
//! Verify mode's keys come from a TOML file or from an authority (`slipstream authority
//! serve`, the `slipstream-authority` crate), through a cache of per-day keys and public keys;
//! [`authority_wire`] is what the two say to each other. It does not cache objects, or parse
//! flags (the CLI's `slipstream gateway` does).
#![forbid(unsafe_code)]

mod access_log;
pub mod authority_wire;
mod body;
mod customer_key;
mod error;
mod log_writer;
mod metrics;
mod pool;
mod proxy;
mod s3_error;
mod server;
mod settings;
mod tls;
mod verify;
mod workers;

pub use error::GatewayError;
pub use server::{Gateway, Reloader};
pub use settings::{
    AuthoritySettings, CertFiles, KeySettings, Settings, VerifySettings, MIN_IDLE_FLOOR,
};

/// Checks an IAM-style policy document as a verifying edge loads it: `Err` says what it does
/// not support (the authority refuses to store a policy its edges would refuse to load).
pub fn check_policy(document: &serde_json::Value) -> Result<(), String> {
    verify::check_policy(document)
}

/// A TLS server configuration over these certificates (TLS 1.3 and 1.2, ALPN h2 then
/// http/1.1, tickets): the edge's, for other servers of the binary such as the authority.
pub fn tls_server_config(
    files: &[CertFiles],
) -> Result<std::sync::Arc<rustls::ServerConfig>, GatewayError> {
    let certificates = std::sync::Arc::new(tls::Certificates::load(files)?);
    tls::server_config(certificates)
}
