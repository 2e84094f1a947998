//! The authority a fleet of verifying edges asks about access keys (`slipstream authority`).
//!
//! It holds the secrets, sealed at rest under a master key file (AES-256-GCM, `seal.rs`), in a
//! store (`store.rs`: SQLite in WAL mode, or PostgreSQL for several replicas), and tells an edge only what verifying needs
//! (`answer.rs`): per-day SigV4 keys for the edge's region, the SigV4A public key, the session
//! token's hash, the policy. Edges follow its change stream (`serve.rs`) and drop what changed
//! at once. The protocol is [`slipstream_gateway::authority_wire`]; the edge's side, with its
//! cache, is in the gateway crate.
#![forbid(unsafe_code)]

mod answer;
mod seal;
mod serve;
mod store;

pub use seal::MasterKey;
pub use serve::{ServeSettings, Server};
pub use store::{Created, Database, KeyInfo, NewKey, Store};

/// What went wrong, by whose mistake.
#[derive(Debug)]
pub enum AuthorityError {
    /// Flags or files (exit 2).
    Settings(String),
    /// A request the store refuses: a bad policy, no such key (exit 1).
    Input(String),
    /// The store or its crypto failed.
    Store(String),
}

impl std::fmt::Display for AuthorityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Settings(m) | Self::Input(m) | Self::Store(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for AuthorityError {}
