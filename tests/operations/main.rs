//! The operations suite, one test binary: metrics with a real Prometheus, readiness, hardening, TLS, protocol
//! upgrades, the command line and `serve --dev`. One module per former test file; the harness is `tests/common/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod access_log;
mod cli;
mod dev_mode;
mod hardening;
mod metrics;
mod readiness;
mod tls;
mod upgrades;
