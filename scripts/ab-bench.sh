#!/usr/bin/env bash
# Two `simpler` binaries against each other on `simpler bench` workloads, in pairs: RUNS
# rounds of A then B (B then A on odd rounds) per workload and runtime; prints the medians of
# the end-to-end ns per task (bench's own figure, which leaves out process start and exit)
# and peak RSS, and the median of the per-pair ratio A/B (< 1: A is faster). Pairs, not two
# series, because the machine's speed drifts. For hbg it also splits each run into its build
# (bench's ns/submit) and its execution (end to end − build), with the same paired ratios.
#
#   bash scripts/ab-bench.sh RUNS A_BINARY B_BINARY [RUNTIMES (tmr hbg)] [WORKLOADS (all four)] [TASKS (1000000)]
#   e.g. bash scripts/ab-bench.sh 7 target/release/simpler /tmp/old/simpler hbg "independent chain"
set -euo pipefail
runs=$1 a=$2 b=$3
runtimes=${4:-tmr hbg}
workloads=${5:-independent chain fanout_fanin tiled_gemm}
tasks=${6:-1000000}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
one() { # side binary workload runtime: appends "side workload runtime ns_per_task rss_mib ns_per_submit"
  "$2" bench --workload "$3" --runtime "$4" --tasks "$tasks" |
    awk -v s="$1" -v w="$3" -v r="$4" '$1 == w && $2 == r { print s, w, r, $5, $7, $4 }' >>"$out"
}
for r in $runtimes; do
  for w in $workloads; do
    for ((i = 0; i < runs; i++)); do
      if ((i % 2 == 0)); then one A "$a" "$w" "$r"; one B "$b" "$w" "$r"; else one B "$b" "$w" "$r"; one A "$a" "$w" "$r"; fi
    done
  done
done
python3 - "$out" <<'PY'
import statistics, sys
med = statistics.median
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f"{'workload':<14} {'runtime':<7} {'A ns/task':>10} {'B ns/task':>10} {'A/B (pairs)':>12} {'min':>6} {'max':>6} {'A MiB':>7} {'B MiB':>7}")
phases = []
for key in dict.fromkeys((w, r) for _, w, r, *_ in rows):
    a = [tuple(map(float, x)) for s, w, r, *x in rows if (w, r) == key and s == "A"]
    b = [tuple(map(float, x)) for s, w, r, *x in rows if (w, r) == key and s == "B"]
    ratios = [x[0] / y[0] for x, y in zip(a, b)]
    print(f"{key[0]:<14} {key[1]:<7} {med(x[0] for x in a):>10.1f} {med(x[0] for x in b):>10.1f} "
          f"{med(ratios):>12.3f} {min(ratios):>6.3f} {max(ratios):>6.3f} {med(x[1] for x in a):>7.1f} {med(x[1] for x in b):>7.1f}")
    if key[1] == "hbg":
        phases.append((key[0], a, b))
if phases:
    print(f"\n{'hbg workload':<14} {'A build':>8} {'B build':>8} {'A/B':>6} {'A exec':>8} {'B exec':>8} {'A/B':>6}  (ns/task; exec = end to end - build)")
    for w, a, b in phases:
        build = [x[2] / y[2] for x, y in zip(a, b)]
        run = [(x[0] - x[2]) / (y[0] - y[2]) for x, y in zip(a, b)]
        print(f"{w:<14} {med(x[2] for x in a):>8.1f} {med(x[2] for x in b):>8.1f} {med(build):>6.3f} "
              f"{med(x[0] - x[2] for x in a):>8.1f} {med(x[0] - x[2] for x in b):>8.1f} {med(run):>6.3f}")
PY
