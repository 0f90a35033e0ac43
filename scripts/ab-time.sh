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
trap 'rm -f "$out" "$out.rss"' EXIT
# Wall time from the shell's nanosecond clock (/usr/bin/time's %e has 10 ms steps: a quick
# command read 0.00 and the ratio divided by zero), peak RSS from /usr/bin/time.
one() {
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$out.rss" bash -c "$2" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo "$1 $(((t1 - t0) / 1000)) $(tail -n 1 "$out.rss")" >>"$out"
}
one A "$a"; one B "$b"; : >"$out" # warm-up, not counted
for ((r = 0; r < runs; r++)); do
  if ((r % 2 == 0)); then one A "$a"; one B "$b"; else one B "$b"; one A "$a"; fi
done
python3 - "$out" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
a = [(int(w) / 1e6, int(m)) for s, w, m in rows if s == "A"]  # µs → s
b = [(int(w) / 1e6, int(m)) for s, w, m in rows if s == "B"]
med = statistics.median
print(f"A wall {med(w for w, _ in a):.3f} s, peak {med(m for _, m in a) / 1024:.1f} MiB")
print(f"B wall {med(w for w, _ in b):.3f} s, peak {med(m for _, m in b) / 1024:.1f} MiB")
ratios = [x[0] / y[0] for x, y in zip(a, b)]
print(f"A/B wall, median of {len(ratios)} pairs: {med(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
PY
