#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain, from Debian's packages:
# Graphviz (deps-viewer HTML), Chromium and ChromeDriver (headless browser tests).
# NumPy (pip) for the args-dump .npy export test and the Python package; pytest and maturin
# (pip) to build and test the Python package (crates/python). Skips the install when everything
# is already there.
set -euo pipefail
pip_install() {
    python3 -m pip install -q "$@" || python3 -m pip install -q --break-system-packages "$@"
}
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import numpy" >/dev/null 2>&1; then
    echo "installing: numpy (pip)"
    pip_install numpy || echo "warning: numpy could not be installed; the .npy test will skip"
fi
if ! python3 -c "import pytest, maturin" >/dev/null 2>&1; then
    echo "installing: pytest, maturin (pip)"
    pip_install pytest "maturin>=1.9,<2"
fi
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
