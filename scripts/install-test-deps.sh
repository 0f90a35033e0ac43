#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain, from Debian's packages:
# Graphviz (deps-viewer HTML), Chromium and ChromeDriver (headless browser tests).
# Skips the install when everything is already there.
set -euo pipefail
need=()
command -v dot >/dev/null 2>&1 || need+=(graphviz)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
