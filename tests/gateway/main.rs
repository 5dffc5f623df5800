//! The gateway suite, one test binary: V3 translated to V4 (rules, procedures, answers, authentication, usage),
//! forwarded headers and git over HTTP, each over real sockets (client → svcgate → svc-sim or a backend of the
//! test's own). One module per former test file; the harness is `tests/common/`. Passthrough is a binary of its
//! own (`tests/passthrough.rs`): it measures the process's memory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod appendix_a;
mod fidelity;
mod forwarded;
mod git_http;
mod graphql;
mod id_index;
mod procedures;
mod rules;
mod v3_answers;
mod v3_auth;
mod v3_client;
mod v3_clients;
mod v3_flows;
mod v3_retirement;
mod v3_specs;
mod v3_usage;
mod world;
