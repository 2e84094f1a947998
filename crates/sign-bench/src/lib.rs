//! Benchmarks only: see `benches/presign.rs`.
