#!/usr/bin/env bash
# One binary against another, whole process, in pairs: RUNS rounds of A then B (B then A on
# odd rounds), each timed by /usr/bin/time; prints the medians of wall seconds and peak RSS
# for each side and the median of the per-pair wall ratio A/B (< 1: A is faster). Pairs, not
# two series, because the machine's speed drifts.
#
#   bash scripts/ab-time.sh RUNS 'A COMMAND ...' 'B COMMAND ...'
#   e.g. bash scripts/ab-time.sh 5 'target/release/simpler bench --workload chain --runtime hbg --tasks 1000000' \
#                                  '/tmp/old/simpler bench --workload chain --runtime hbg --tasks 1000000'
set -euo pipefail
runs=$1 a=$2 b=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
one() { /usr/bin/time -f "$1 %e %M" -a -o "$out" bash -c "$2" >/dev/null 2>&1; }
one A "$a"; one B "$b"; : >"$out" # warm-up, not counted
for ((r = 0; r < runs; r++)); do
  if ((r % 2 == 0)); then one A "$a"; one B "$b"; else one B "$b"; one A "$a"; fi
done
python3 - "$out" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
a = [(float(w), int(m)) for s, w, m in rows if s == "A"]
b = [(float(w), int(m)) for s, w, m in rows if s == "B"]
med = statistics.median
print(f"A wall {med(w for w, _ in a):.3f} s, peak {med(m for _, m in a) / 1024:.1f} MiB")
print(f"B wall {med(w for w, _ in b):.3f} s, peak {med(m for _, m in b) / 1024:.1f} MiB")
ratios = [x[0] / y[0] for x, y in zip(a, b)]
print(f"A/B wall, median of {len(ratios)} pairs: {med(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
PY
