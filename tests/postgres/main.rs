//! The PostgreSQL suite, one test binary: the store contract on both stores, the connection to PostgreSQL, `store
//! copy`, and replicas as processes on one database. Each test runs its own throwaway cluster
//! (`tests/common/postgres.rs`). One module per former test file; the harness is `tests/common/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod postgres_connection;
mod postgres_copy;
mod postgres_processes;
mod postgres_replicas;
mod postgres_v3_report;
mod store_contract;
