#!/usr/bin/env bash
# Installs whatever the tests need, then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")"

# Nothing outside the Rust toolchain is needed yet; later suites (browser, Alertmanager, the npm V3 client)
# install their packages here.
cargo test --workspace --all-targets
