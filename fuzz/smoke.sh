#!/usr/bin/env bash
# CI smoke run of the fuzz targets: builds them (nightly, sanitizers) and runs each for a few seconds from its
# seed corpus, so that they keep building and the seeds keep passing. Exits non-zero on a crash, a failed
# check, a timeout or a build error. Long runs: see fuzz/README.md.
#
#   fuzz/smoke.sh               every target, 15 s each
#   SMOKE_SECONDS=5 fuzz/smoke.sh
set -euo pipefail
cd "$(dirname "$0")"

seconds="${SMOKE_SECONDS:-15}"
targets=(alert_payload rule_loader v3_rewrite)

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

echo "== cargo fuzz build"
cargo +nightly fuzz build

# New inputs go to a scratch directory: the committed seeds stay as they are.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

for target in "${targets[@]}"; do
    echo "== fuzz $target (${seconds} s)"
    mkdir -p "$scratch/$target"
    cargo +nightly fuzz run "$target" "$scratch/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
done
echo "== fuzz smoke: no findings"
