#!/usr/bin/env bash
# Installs Chromium from Debian's packages, for scripts/check_report.sh
# (scripts/run_tests.sh runs this when Chromium is missing, and fails if
# it fails). Needs root or sudo, and apt. About 25 s on the project's
# machine: 155 MB of packages (chromium and what it depends on).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "setup_browser: $(chromium --version 2>/dev/null) is already installed"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y chromium fonts-dejavu-core
echo "setup_browser: installed $(chromium --version 2>/dev/null)"
