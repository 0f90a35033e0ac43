#!/usr/bin/env bash
# The whole test suite: installs the test dependencies, then runs every test of the
# workspace (release profile: the runtime tests push hundreds of thousands of tasks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
cargo test --workspace --release "$@"
