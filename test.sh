#!/usr/bin/env bash
# Installs whatever the tests need, then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")"

# Suites that need more than the Rust toolchain install their packages here.

# The third-party V3 client (tests/gateway/v3_client.rs) runs on Node; its npm packages are pinned in
# tests/v3-client/package-lock.json.
if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
fi
npm ci --prefix tests/v3-client --no-audit --no-fund
# The browser suite's accessibility check (tests/alerts/browser.rs) injects axe-core, pinned in tests/axe/package-lock.json.
npm ci --prefix tests/axe --no-audit --no-fund

# A real alert sender (tests/alerts/alertmanager.rs): Debian's Prometheus Alertmanager.
if [ ! -x /usr/bin/prometheus-alertmanager ]; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus-alertmanager
    # The package starts a system service; the tests run their own Alertmanager.
    $sudo systemctl disable --now prometheus-alertmanager >/dev/null 2>&1 || true
fi

# A real alert sender (tests/alerts/uptime_kuma.rs): Uptime Kuma from npm, pinned in tests/uptime-kuma/package-lock.json,
# and the Python client that sets it up (tests/uptime-kuma/setup.py), pinned in tests/uptime-kuma/requirements.txt, in
# the venv tests/uptime-kuma/.venv. Each is installed again only when its pins change.
kuma=tests/uptime-kuma
if ! cmp -s "$kuma/package-lock.json" "$kuma/node_modules/.svcgate-installed-lock"; then
    npm ci --prefix "$kuma" --no-audit --no-fund
    # The package's tarball leaves some of the migrations it runs outside db/old_migrations, where it looks for them.
    for patch in "$kuma"/node_modules/uptime-kuma/db/patch-*.sql; do
        [ -e "$kuma/node_modules/uptime-kuma/db/old_migrations/${patch##*/}" ] \
            || cp "$patch" "$kuma/node_modules/uptime-kuma/db/old_migrations/"
    done
    cp "$kuma/package-lock.json" "$kuma/node_modules/.svcgate-installed-lock"
fi
if ! cmp -s "$kuma/requirements.txt" "$kuma/.venv/svcgate-installed-requirements.txt"; then
    if ! python3 -m venv --help >/dev/null 2>&1; then
        if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
        $sudo apt-get update
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv
    fi
    rm -rf "$kuma/.venv"
    python3 -m venv "$kuma/.venv"
    "$kuma/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$kuma/requirements.txt"
    cp "$kuma/requirements.txt" "$kuma/.venv/svcgate-installed-requirements.txt"
fi

# A real alert sender (tests/alerts/zabbix_opsgenie.rs): Zabbix's Opsgenie media type run by `zabbix_js`, from
# Debian's zabbix-server-pgsql (the binary) and zabbix-frontend-php (the media types), downloaded and unpacked into
# tests/.cache/zabbix/ (not installed: no Zabbix service is set up), once.
if [ ! -x tests/.cache/zabbix/usr/bin/zabbix_js ]; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    mkdir -p tests/.cache/zabbix/debs
    (cd tests/.cache/zabbix/debs && apt-get download zabbix-server-pgsql zabbix-frontend-php)
    for deb in tests/.cache/zabbix/debs/*.deb; do
        dpkg-deb -x "$deb" tests/.cache/zabbix/
    done
fi

# svcgate's own monitoring (tests/operations/metrics.rs scrapes svcgate with a real Prometheus; deploy/prometheus/check.sh
# checks the alerting rules with promtool): Debian's Prometheus, which ships promtool.
if [ ! -x /usr/bin/prometheus ] || [ ! -x /usr/bin/promtool ]; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus
    # The package starts a system service; the tests run their own Prometheus.
    $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
deploy/prometheus/check.sh

# git itself (tests/gateway/git_http.rs) clones and pushes through svcgate to `git http-backend`, which is part of git.
if ! command -v git >/dev/null 2>&1 || [ ! -x "$(git --exec-path)/git-http-backend" ]; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git
fi

# The browser tests (tests/alerts/browser.rs): Debian's headless Chromium and its WebDriver.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver
fi

# PostgreSQL (tests/postgres/): Debian's server binaries; each test runs its own throwaway cluster on
# loopback (initdb + postgres in a temporary directory, as the `postgres` user when run as root), stopped by pid.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
    # The package starts a system cluster; the tests run their own.
    $sudo systemctl disable --now postgresql >/dev/null 2>&1 || true
fi

cargo test --workspace --all-targets

# svc-sim measured against a suite written for a real server: python-gitlab's own functional V4 API tests
# (sim/functional/run.sh: pinned release, a cached venv, the left-out tests named in sim/functional/skipped.txt).
if ! python3 -m venv --help >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv
fi
sim/functional/run.sh

# The deployment files (Dockerfile, deploy/kubernetes/, deploy/systemd/): linted, validated against the Kubernetes
# schemas and `systemd-analyze verify`, checked against each other, and svcgate started with each; the
# Dockerfile's build step (a release build) runs outside a container. deploy/check.sh installs its own tools.
deploy/check.sh
