#!/usr/bin/env bash
# Mutation testing of the dependency core (simpler-core) with cargo-mutants, release profile.
#
#   bash scripts/mutants.sh            # the whole crate (about 440 mutants, ~40 min on 2 cores)
#   bash scripts/mutants.sh --core     # deps.rs and tensormap/overlap.rs (~110 mutants, ~10 min)
#   bash scripts/mutants.sh --ci       # tensormap/overlap.rs alone (~67 mutants, ~12 min): CI
#
# Fails when any mutant is missed. Equivalent mutants (no test can tell them apart) are
# excluded, each with its reason, in .cargo/mutants.toml. Results go to target/mutants/.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=27.1.0
if ! cargo mutants --version 2>/dev/null | grep -q "$VERSION"; then
    cargo install cargo-mutants --version "$VERSION" --locked
fi
files=()
case "${1:-}" in
    --core) files=(-f crates/simpler-core/src/deps.rs -f crates/simpler-core/src/tensormap/overlap.rs) ;;
    --ci) files=(-f crates/simpler-core/src/tensormap/overlap.rs) ;;
    "") ;;
    *) echo "usage: $0 [--core|--ci]" >&2; exit 2 ;;
esac
mkdir -p target/mutants
cargo mutants -p simpler-core --profile release "${files[@]}" -o target/mutants
