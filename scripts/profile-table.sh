#!/usr/bin/env bash
# Where the time goes per task: profiles one `simpler bench` workload with perf (4000 samples
# a second per thread) and prints the top functions with their thread, share of the samples
# and CPU ns per task (samples × 250 µs / tasks). Two threads run at once, so the ns of all
# rows add up to about twice the wall time per task. Run it on two binaries for a
# before/after table.
#
#   bash scripts/profile-table.sh BINARY [WORKLOAD (independent)] [RUNTIME (tmr)] [TASKS (300000)]
set -euo pipefail
bin=$1 workload=${2:-independent} runtime=${3:-tmr} tasks=${4:-300000}
data=$(mktemp)
out=$(mktemp)
trap 'rm -f "$data" "$out"' EXIT
perf record -q -F 4000 -o "$data" "$bin" bench --workload "$workload" --tasks "$tasks" \
  --runtime "$runtime" >"$out" 2>/dev/null
ns=$(awk -v w="$workload" '$1 == w { print $5 }' "$out")
echo "$workload on $runtime, $tasks tasks: $ns ns/task end to end ($bin)"
perf report -i "$data" --no-children -n --sort comm,sym --stdio -q 2>/dev/null |
  awk -v tasks="$tasks" 'NF >= 5 && $1 ~ /%$/ {
      pct = $1; sub(/%/, "", pct); n = $2; comm = $3; $1 = ""; $2 = ""; $3 = ""; $4 = "";
      sym = substr($0, 5); if (length(sym) > 70) sym = substr(sym, 1, 67) "...";
      if (pct + 0 >= 1.5) printf "%6.1f%%  %7.1f ns  %-16s %s\n", pct, n * 250000 / tasks, comm, sym }'
