#!/usr/bin/env bash
# The whole test suite: installs the test dependencies, then runs every test of the
# workspace (release profile: the runtime tests push hundreds of thousands of tasks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
cargo test --workspace --release "$@"
# Loom models of the runtime's concurrent protocols (crate::sync switched to loom; bounded,
# a few seconds): Sleep park/notify, the collectors' buffer channel, ring advance, fanin
# linking, the payload handoff, a scope release handed to a scheduler, a host-built graph's
# fans without their locks.
cargo test -p simpler-runtime --features loom --release --lib loom_models
# The Python package (crates/python, docs/python.md): built from this tree and installed, then
# its pytest suite, which compares `python -m simpler.tools.*` with the binary built above.
cargo build --release -p simpler
python3 -m pip install -q --no-build-isolation ./crates/python \
    || python3 -m pip install -q --no-build-isolation --break-system-packages ./crates/python
python3 -m pytest -q crates/python/tests
