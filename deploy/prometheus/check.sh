#!/usr/bin/env bash
# Checks svcgate's alerting rules: the syntax and expressions (`promtool check rules`) and their unit tests
# (`promtool test rules`, each rule firing and staying quiet). Run by ./test.sh, which installs Debian's
# `prometheus` package (promtool) when missing.
set -euo pipefail
cd "$(dirname "$0")"
promtool check rules svcgate.rules.yml
promtool test rules svcgate.rules.test.yml
