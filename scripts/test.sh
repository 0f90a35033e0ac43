#!/usr/bin/env bash
# The whole test suite: installs the test dependencies, then runs every test of the
# workspace (release profile: the runtime tests push hundreds of thousands of tasks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
cargo test --workspace --release "$@"
# Loom models of the runtime's concurrent protocols (crate::sync switched to loom; bounded,
# a few seconds): Sleep park/notify, the collectors' buffer channel, ring advance.
cargo test -p simpler-runtime --features loom --release --lib loom_models
