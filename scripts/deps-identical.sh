#!/usr/bin/env bash
# Compares the deps.json two `simpler` binaries write for every built-in example and every
# shipped workload file, under both runtimes: the check behind "no behaviour change" claims.
#
#   bash scripts/deps-identical.sh OLD_BINARY NEW_BINARY
#
# Prints one line per case and exits non-zero when any pair of files differs.
set -euo pipefail
old=$1 new=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
cases=(vector_example chain_barrier edge_sources workloads/vector_example.json
       workloads/chain_barrier.json workloads/paged_attention_decode.json
       workloads/synthetic_100k.json)
for subject in "${cases[@]}"; do
  for runtime in tmr hbg; do
    name="$(basename "$subject" .json)-$runtime"
    for side in old new; do
      bin=${!side}
      "$bin" run "$subject" --runtime "$runtime" --enable-dep-gen \
        --output-prefix "$work/$side-$name" >/dev/null
    done
    if cmp -s "$work/old-$name/deps.json" "$work/new-$name/deps.json"; then
      echo "identical  $name ($(wc -c <"$work/new-$name/deps.json") bytes)"
    else
      echo "DIFFERENT  $name"
      status=1
    fi
  done
done
exit $status
