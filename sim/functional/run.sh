#!/usr/bin/env bash
# Runs python-gitlab's own functional V4 API tests against a fresh svc-sim.
#
# The suite is not kept in this repository: the pinned python-gitlab sdist is downloaded at run time and its
# tests/functional is unpacked into a temporary directory. Only conftest.py is overlaid (see conftest.py here):
# the fixtures that start docker containers or read a token out of one are replaced, every other fixture is the
# suite's own. Tests the simulator does not cover are deselected, each named with its reason in skipped.txt.
#
# Usage: sim/functional/run.sh [extra pytest arguments]
# Environment: CARGO_TARGET_DIR (where svc-sim is built and the venv is cached; default <repo>/target),
#              SIM_FUNCTIONAL_KEEP=1 keeps the temporary directory, SVC_SIM_BIN uses that binary instead of
#              building one, SIM_LOG names the simulator's log file (RUST_LOG=svc_sim=debug logs each request).
# Exits non-zero when a test fails or the setup does.
set -euo pipefail

PACKAGE=python-gitlab
PYTHON_GITLAB_VERSION=8.6.0
# The client asks for routes that carry its own brand word (its package name without `python-`), e.g.
# /templates/<word>_ci_ymls; svc-sim builds those names from --identifier-word.
IDENTIFIER_WORD="${PACKAGE#python-}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
VENV="$TARGET/python-gitlab-$PYTHON_GITLAB_VERSION-venv"
PYTHON="${PYTHON:-python3}"

# 1. The venv, with python-gitlab and the pinned test requirements of that release that the API tests import.
if [ ! -x "$VENV/bin/pytest" ]; then
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check \
        "$PACKAGE==$PYTHON_GITLAB_VERSION" \
        -r "$HERE/requirements.txt"
fi

# 2. The suite, from the pinned sdist.
WORK="$(mktemp -d)"
SIM_PID=""
cleanup() {
    if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
    if [ "${SIM_FUNCTIONAL_KEEP:-}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
SDIST_CACHE="$TARGET/python-gitlab-sdist"
if ! ls "$SDIST_CACHE"/python_gitlab-"$PYTHON_GITLAB_VERSION".tar.gz >/dev/null 2>&1; then
    mkdir -p "$SDIST_CACHE"
    "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
        "$PACKAGE==$PYTHON_GITLAB_VERSION" -d "$SDIST_CACHE"
fi
SRC="python_gitlab-$PYTHON_GITLAB_VERSION"
tar -xzf "$SDIST_CACHE/$SRC.tar.gz" -C "$WORK" "$SRC/tests/__init__.py" "$SRC/tests/conftest.py" \
    "$SRC/tests/functional" "$SRC/pyproject.toml"
SUITE="$WORK/$SRC"
mv "$SUITE/tests/functional/conftest.py" "$SUITE/tests/functional/upstream_conftest.py"
cp "$HERE/conftest.py" "$SUITE/tests/functional/conftest.py"

# 3. A fresh svc-sim on a free loopback port.
if [ -z "${SVC_SIM_BIN:-}" ]; then
    (cd "$REPO" && cargo build --quiet -p svc-sim)
    SVC_SIM_BIN="$TARGET/debug/svc-sim"
fi
PORT="$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
TOKEN="python-gitlab-root-token"
RUST_LOG="${RUST_LOG:-warn}" "$SVC_SIM_BIN" --listen "127.0.0.1:$PORT" --root-token "$TOKEN" \
    --identifier-word "$IDENTIFIER_WORD" >"${SIM_LOG:-$WORK/sim.log}" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 100); do
    # Any HTTP answer (401 without a token) means it is up.
    if "$VENV/bin/python" -c "import urllib.request, urllib.error
try:
    urllib.request.urlopen('http://127.0.0.1:$PORT/api/v4/version')
except urllib.error.HTTPError:
    pass" 2>/dev/null; then
        break
    fi
    sleep 0.1
done

# 4. pytest, leaving out the tests skipped.txt names (conftest.py deselects them by whole id).
cd "$SUITE"
SVC_SIM_URL="http://127.0.0.1:$PORT" SVC_SIM_TOKEN="$TOKEN" SVC_SIM_SKIPPED="$HERE/skipped.txt" \
    "$VENV/bin/python" -m pytest tests/functional/api -p no:cacheprovider -q -o log_cli=false "$@"
