//! `slipstream bench`: the instrument the rest of Slipstream is measured with.
//!
//! Workloads (`put`, `get`, `head`, `delete`, `list`, `mixed`, `put-head`, `presign`) run with
//! a fixed number of requests in flight (closed loop) or at a fixed rate (open loop), over
//! pooled or fresh connections, HTTP or HTTPS with TLS 1.3 or 1.2. Every request is timed at
//! the socket: latency, time to first byte, and its parts (TCP connect, TLS handshake, request
//! sent, waiting for the first byte, body). Percentiles come from HDR histograms.
//!
//! - [`run`]: set-up, warm-up, measured phase, clean-up against a server.
//! - [`presign`]: the CPU-only workload.
//! - [`report`]: the JSON document and the summary table; [`html`]: the offline HTML report;
//!   [`compare`]: two reports side by side.
#![forbid(unsafe_code)]

pub mod compare;
pub mod conn;
mod error;
pub mod html;
pub mod presign;
mod progress;
pub mod record;
pub mod report;
pub mod request;
pub mod run;
pub mod settings;
pub mod stats;
pub mod workload;

pub use conn::TlsVersion;
pub use error::BenchError;
pub use report::Report;
pub use settings::{ConnectionMode, Settings};
pub use workload::{Mix, Workload};
