"""The cost of a submit from Python, against the Rust figure of the same workload.

    python3 crates/python/bench/submit_cost.py [TASKS] [REPS]

The workload is `simpler bench`'s `independent` (`crates/simpler-examples/src/bench.rs`):
TASKS 2-argument `noop` tasks (INPUT a[s:s+1], OUTPUT_EXISTING b[s:s+1]) in scopes of 1000, on
`tmr`. Each Python variant prints the mean nanoseconds per task inside the orchestration
function (`Report.orchestration`) and end to end (`Report.wall`), the median of REPS runs:

- `loop, views built`: the views, the tags and the submit in Python, one call each per task;
- `loop, args prebuilt`: only `o.submit` per task (the arguments were built before the run);
- `submit_many`: one `o.submit_many` call per scope of 1000 prebuilt argument lists;
- `loop, Python kernel on`: `loop, args prebuilt` on a worker that also has a Python kernel
  registered (unused): each submit then releases and re-takes the GIL.

The Rust line is `simpler bench --tasks TASKS --runtime tmr --workload independent`, run
in this process through `python -m simpler` (its figures are printed as the binary prints them).
"""

import statistics
import sys

import simpler
from simpler import INPUT, OUTPUT_EXISTING
from simpler._native import cli

PER_SCOPE = 1000


def measure(name, tasks, reps, make_orch, python_kernel=False):
    w = simpler.Worker(runtime="tmr")
    if python_kernel:
        w.register_kernel(30, "unused", lambda ctx: None)
    a = w.alloc((tasks,), "float32")
    b = w.alloc((tasks,), "float32")
    orch = make_orch(a, b, tasks)
    runs = []
    for _ in range(reps):
        r = w.run(orch, simpler.CallConfig(record_edges=False))
        assert r.tasks == tasks, r
        runs.append((r.orchestration, r.wall))
    orch_ns = statistics.median(o for o, _ in runs) / tasks * 1e9
    wall_ns = statistics.median(w_ for _, w_ in runs) / tasks * 1e9
    print(f"  {name:<22} {orch_ns:8.0f} ns/task in the orchestration   {wall_ns:8.0f} ns/task end to end")


def loop_views(a, b, n):
    def orch(o):
        for start in range(0, n, PER_SCOPE):
            with o.scope():
                for s in range(start, min(start + PER_SCOPE, n)):
                    o.submit("noop", INPUT(a[s:s + 1]), OUTPUT_EXISTING(b[s:s + 1]))
    return orch


def prebuilt(a, b, n):
    return [[INPUT(a[s:s + 1]), OUTPUT_EXISTING(b[s:s + 1])] for s in range(n)]


def loop_prebuilt(a, b, n):
    args = prebuilt(a, b, n)

    def orch(o):
        submit = o.submit
        for start in range(0, n, PER_SCOPE):
            with o.scope():
                for s in range(start, min(start + PER_SCOPE, n)):
                    submit("noop", *args[s])
    return orch


def batched(a, b, n):
    args = prebuilt(a, b, n)

    def orch(o):
        for start in range(0, n, PER_SCOPE):
            with o.scope():
                o.submit_many("noop", args[start:start + PER_SCOPE])
    return orch


def main():
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"independent, {tasks} tasks, tmr, median of {reps} runs")
    measure("loop, views built", tasks, reps, loop_views)
    measure("loop, args prebuilt", tasks, reps, loop_prebuilt)
    measure("submit_many", tasks, reps, batched)
    measure("loop, Python kernel on", tasks, reps, loop_prebuilt, python_kernel=True)
    print("Rust (simpler bench):")
    sys.stdout.flush()
    cli(["simpler", "bench", "--tasks", str(tasks), "--runtime", "tmr", "--workload", "independent"])


if __name__ == "__main__":
    main()
