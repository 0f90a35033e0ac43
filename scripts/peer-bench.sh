#!/usr/bin/env bash
# simpler against its everyday peer, OpenMP tasks with `depend` clauses (GCC's libgomp), on
# the four `simpler bench` workloads, in one run: REPS alternating repetitions (simpler, then
# the peer, then the other way round), medians, and the ratio simpler / OpenMP (< 1: simpler
# is faster). Both use two threads (simpler: its orchestrator and one scheduler on a 2-core
# machine; OpenMP: OMP_NUM_THREADS=2). The last column is the median over repetitions of
# hbg / tmr within one repetition (one `simpler bench` process runs both, one after the
# other): a paired ratio, steadier on a noisy machine than the ratio of the two medians.
# Before each repetition it times a cache line's round trip between CPUs 0 and 1
# (`bench/peer/core_round_trip.cpp`) and prints those figures under the table: the host's
# placement of the two vCPUs, which moves every row (docs/performance.md, session 38).
#
#   bash scripts/peer-bench.sh [TASKS (default 1000000)] [REPS (default 5)]
#   SIMPLER=/tmp/old/simpler bash scripts/peer-bench.sh ...   # another build instead of this tree's
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=${1:-1000000}
reps=${2:-5}
mkdir -p target/peer
g++ -O2 -fopenmp -Wall -o target/peer/omp_tasks bench/peer/omp_tasks.cpp
g++ -O2 -pthread -Wall -o target/peer/core_round_trip bench/peer/core_round_trip.cpp
simpler=${SIMPLER:-target/release/simpler}
if [[ -z ${SIMPLER:-} ]]; then cargo build --release --quiet --bin simpler; fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 0; r < reps; r++)); do
  echo "round_trip $(target/peer/core_round_trip) $r" >>"$out"
  for w in independent chain fanout_fanin tiled_gemm; do
    run_simpler() { "$simpler" bench --workload "$w" --tasks "$tasks" |
      awk -v w="$w" -v r="$r" '$1 == w { print "simpler-" $2, w, $5, r }' >>"$out"; }
    run_peer() { OMP_NUM_THREADS=2 target/peer/omp_tasks "$w" "$tasks" |
      awk -v r="$r" '{ print "openmp", $1, $3, r }' >>"$out"; }
    if ((r % 2 == 0)); then run_simpler; run_peer; else run_peer; run_simpler; fi
  done
done
python3 - "$out" "$tasks" "$reps" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
trips = [r[1] for r in rows if r[0] == "round_trip"]
rows = [r for r in rows if r[0] != "round_trip"]
med, by_rep = {}, {}
for who, w, ns, rep in rows:
    med.setdefault((who, w), []).append(float(ns))
    by_rep[(who, w, rep)] = float(ns)
med = {k: statistics.median(v) for k, v in med.items()}
print(f"ns per task end to end, median of {sys.argv[3]} alternating runs, {sys.argv[2]} tasks")
print(f"{'workload':<14}{'simpler tmr':>12}{'simpler hbg':>12}{'OpenMP':>10}{'tmr/OpenMP':>12}{'hbg/OpenMP':>12}{'hbg/tmr (pairs)':>17}")
for w in ["independent", "chain", "fanout_fanin", "tiled_gemm"]:
    t, h, o = med[("simpler-tmr", w)], med[("simpler-hbg", w)], med[("openmp", w)]
    pairs = statistics.median(
        by_rep[("simpler-hbg", w, r)] / by_rep[("simpler-tmr", w, r)]
        for r in {rep for who, ww, _, rep in rows if ww == w and who == "simpler-tmr"})
    print(f"{w:<14}{t:>12.1f}{h:>12.1f}{o:>10.1f}{t / o:>12.2f}{h / o:>12.2f}{pairs:>17.2f}")
print(f"cross-core round trip before each repetition (ns, CPUs 0 and 1): {' '.join(trips)}")
PY
