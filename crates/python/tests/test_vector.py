"""The vector example written in Python: f == 47 under both runtimes, and exactly the six
creator edges of the Rust example (`crates/simpler-examples/tests/vector_example.rs`)."""

import numpy as np
import pytest

import simpler
from simpler import INPUT, OUTPUT, OUTPUT_EXISTING

N = 16384


def vector(a, b, f, n=N):
    """The orchestration of reference §8 over `n` elements: t0 in the root scope, t1..t4 in a
    nested scope."""

    def orch(o):
        c = o.submit("add", INPUT(a), INPUT(b), OUTPUT((n,), "float32")).output(0)
        with o.scope():
            d = o.submit("add_scalar", INPUT(c), OUTPUT((n,)), 1.0).output(0)
            e = o.submit("add_scalar", INPUT(c), OUTPUT((n,)), 2.0).output(0)
            g = o.submit("mul", INPUT(d), INPUT(e), OUTPUT((n,))).output(0)
            o.submit("add", INPUT(g), INPUT(c), OUTPUT_EXISTING(f))

    return orch


def run_vector(runtime):
    w = simpler.Worker(runtime=runtime)
    a = w.tensor(np.full(N, 2.0, np.float32))
    b = w.tensor(np.full(N, 3.0, np.float32))
    f = w.alloc((N,), "float32")
    report = w.run(vector(a, b, f))
    return report, w.read(f)


def ids(runtime):
    if runtime == "tmr":
        return [(0 << 32) | 0] + [(1 << 32) | k for k in range(4)]
    return list(range(5))


def six_edges(runtime):
    t0, t1, t2, t3, t4 = ids(runtime)
    pairs = [(t0, t1), (t0, t2), (t1, t3), (t2, t3), (t3, t4), (t0, t4)]
    return sorted((p, c, ["wait", "retain"]) for p, c in pairs)


@pytest.mark.parametrize("runtime", ["tmr", "hbg"])
def test_f_is_47_and_the_six_creator_edges(runtime):
    report, f = run_vector(runtime)
    assert f.dtype == np.float32 and f.shape == (N,)
    np.testing.assert_array_equal(f, np.full(N, 47.0, np.float32))
    assert report.status == "completed"
    assert (report.runtime, report.tasks, report.completed) == (runtime, 5, 5)
    assert report.tasks_per_ring == ([1, 4, 0, 0] if runtime == "tmr" else [5, 0, 0, 0])
    assert report.edges == six_edges(runtime)


@pytest.mark.parametrize("runtime", ["tmr", "hbg"])
def test_the_edges_are_the_rust_examples(runtime):
    rust = simpler.run_example("vector_example", config=simpler.CallConfig(runtime=runtime))
    assert rust.passed, rust.checks
    python, _ = run_vector(runtime)
    assert python.edges == rust.report.edges


def test_the_root_site_is_the_run_call_in_this_file():
    report, _ = run_vector("tmr")
    assert report.root_site.startswith("test_vector.py:")
    line = int(report.root_site.split(":")[1])
    source = open(__file__).read().splitlines()[line - 1]
    assert "w.run(vector(a, b, f))" in source


def test_task_ids_split_into_ring_and_local():
    assert simpler.task_id((1 << 32) | 3) == (1, 3)


@pytest.mark.parametrize("level", [1, 3, True])
def test_enable_l2_swimlane_takes_the_original_s_levels(level, tmp_path):
    import json
    w = simpler.Worker()
    a = w.tensor(np.full(N, 2.0, np.float32))
    b = w.tensor(np.full(N, 3.0, np.float32))
    f = w.alloc((N,), "float32")
    cfg = simpler.CallConfig(enable_l2_swimlane=level, output_prefix=str(tmp_path / "run"))
    w.run(vector(a, b, f), cfg, render_views=False)
    records = json.loads((tmp_path / "run" / "l2_swimlane_records.json").read_text())
    assert records["chip_swimlane_level"] == (4 if level is True else level)
    assert ("aicpu_scheduler_phases" in records) == (level is True or level >= 3)


def test_a_swimlane_level_out_of_range_is_a_config_error():
    w = simpler.Worker()
    with pytest.raises(simpler.ConfigError, match="level 7 is not 0 \\(off\\) to 4"):
        w.run(lambda o: None, simpler.CallConfig(enable_l2_swimlane=7, output_prefix="unused"))
