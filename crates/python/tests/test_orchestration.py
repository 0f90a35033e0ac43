"""Orchestrations in Python: views (slices, steps, reshape, transpose), every tag, scalars,
explicit deps, dummy tasks, alloc_tensors, manual scopes, SPMD blocks, the batch submit, every
dtype to and from NumPy; and workload files and --from-deps runs from Python."""

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import simpler
from simpler import INOUT, INPUT, NO_DEP, OUTPUT, OUTPUT_EXISTING

WAIT_RETAIN = ["wait", "retain"]


def test_views_read_and_write_what_numpy_says():
    w = simpler.Worker()
    x_np = np.arange(48, dtype=np.float32).reshape(6, 8)
    x = w.tensor(x_np)
    xt = w.alloc((8, 6), "float32")
    every_other = w.alloc((3, 4), "float32")
    flat = w.alloc((48,), "float32")
    y = w.tensor(np.zeros((6, 8), np.float32))

    def orch(o):
        o.submit("copy", INPUT(x.T), OUTPUT_EXISTING(xt))
        o.submit("copy", INPUT(x[::2, 1::2]), OUTPUT_EXISTING(every_other))
        o.submit("copy", INPUT(x.reshape(48)), OUTPUT_EXISTING(flat))
        o.submit("add_scalar", INPUT(x[2:4, 3:7]), OUTPUT_EXISTING(y.view([2, 4], [1, 2])), 0.5)

    w.run(orch)
    np.testing.assert_array_equal(w.read(xt), x_np.T)
    np.testing.assert_array_equal(w.read(every_other), x_np[::2, 1::2])
    np.testing.assert_array_equal(w.read(flat), x_np.reshape(48))
    expected = np.zeros((6, 8), np.float32)
    expected[1:3, 2:6] = x_np[2:4, 3:7] + 0.5
    np.testing.assert_array_equal(w.read(y), expected)
    np.testing.assert_array_equal(w.read(x[1:5:3, ::4]), x_np[1:5:3, ::4])
    assert (x.T.shape, x.T.strides) == ((8, 6), (1, 8))
    assert (x[::2, 1::2].shape, x[::2, 1::2].strides, x[::2, 1::2].offset) == ((3, 4), (16, 2), 1)


def test_bad_views_are_tensor_errors():
    w = simpler.Worker()
    x = w.alloc((4, 4), "float32")
    with pytest.raises(simpler.TensorError, match="index 0 is not a slice"):
        x[1]
    with pytest.raises(simpler.TensorError, match="step -1 is not positive"):
        x[::-1]
    with pytest.raises(simpler.TensorError):
        x.T.reshape(16)
    with pytest.raises(simpler.TensorError, match="does not match the view's"):
        w.write(x, np.zeros(3, np.float32))
    with pytest.raises(simpler.TensorError, match="does not match the tensor's float32"):
        w.write(x, np.zeros((4, 4), np.float64))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int16", "int32", "int64",
                                   "uint8", "uint16", "uint32", "uint64", "bool"])
def test_every_dtype_round_trips_and_copies(dtype):
    w = simpler.Worker()
    values = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    x = w.tensor(values)
    y = w.alloc((6, 4), dtype)
    assert x.dtype == dtype
    w.run(lambda o: o.submit("copy", INPUT(x.T), OUTPUT_EXISTING(y)))
    got = w.read(y)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, values.T)


def test_tags_deps_dummies_and_allocs_wire_exactly_these_edges():
    w = simpler.Worker()
    x, y, z = (w.alloc((8,), "float32") for _ in range(3))
    tasks = {}

    def orch(o):
        tasks["fill"] = o.submit("fill", OUTPUT_EXISTING(x), 4)
        tasks["copy"] = o.submit("copy", INPUT(x), INOUT(y))
        tasks["nodep"] = o.submit("copy", NO_DEP(x), OUTPUT_EXISTING(z), deps=[tasks["copy"]])
        tasks["dummy"] = o.submit_dummy(deps=[tasks["fill"].id, tasks["nodep"]])
        a, b = o.alloc_tensors(OUTPUT((16,), "int32"), ((2, 2), "float16"))
        assert (a.shape, a.dtype, b.shape, b.dtype) == ((16,), "int32", (2, 2), "float16")
        tasks["reader"] = o.submit("noop", INPUT(a), INPUT(b))
        tasks["alloc"] = a.owner

    report = w.run(orch)
    t = {k: (v if isinstance(v, int) else v.id) for k, v in tasks.items()}
    # A tensor-map hit waits only; explicit deps and creator edges also retain.
    assert report.edges == sorted([
        (t["fill"], t["copy"], ["wait"]),
        (t["copy"], t["nodep"], WAIT_RETAIN),
        (t["fill"], t["dummy"], WAIT_RETAIN),
        (t["nodep"], t["dummy"], WAIT_RETAIN),
        (t["alloc"], t["reader"], WAIT_RETAIN),
    ])
    np.testing.assert_array_equal(w.read(y), np.full(8, 4, np.float32))
    np.testing.assert_array_equal(w.read(z), np.full(8, 4, np.float32))


def test_a_manual_scope_wires_explicit_deps_only():
    w = simpler.Worker()
    x, y = w.alloc((8,), "float32"), w.alloc((8,), "float32")
    ids = []

    def orch(o):
        with o.scope(manual=True):
            first = o.submit("fill", OUTPUT_EXISTING(x), 1.0)
            implicit = o.submit("copy", INPUT(x), OUTPUT_EXISTING(y))
            explicit = o.submit("copy", INPUT(x), OUTPUT_EXISTING(y), deps=[first])
            ids.extend([first.id, implicit.id, explicit.id])
            assert o.depth == 1 and o.current_site.startswith("test_orchestration.py:")

    report = w.run(orch)
    assert report.edges == [(ids[0], ids[2], WAIT_RETAIN)]


def test_spmd_blocks_and_the_batch_submit_give_numpy_results():
    w = simpler.Worker(clusters=2)
    a_np = np.arange(4096, dtype=np.float32)
    a = w.tensor(a_np)
    out = w.alloc((4096,), "float32")
    tiles = w.alloc((16, 256), "float32")

    def orch(o):
        o.submit("add", INPUT(a), INPUT(a), OUTPUT_EXISTING(out), block_num=4)
        rows = a.reshape(16, 256)
        batch = [[INPUT(rows[i:i + 1]), OUTPUT_EXISTING(tiles[i:i + 1]), float(i)] for i in range(16)]
        done = o.submit_many("add_scalar", batch)
        assert [t.local for t in done] == list(range(1, 17))

    report = w.run(orch)
    assert report.tasks == 17
    np.testing.assert_array_equal(w.read(out), a_np * 2)
    np.testing.assert_array_equal(w.read(tiles), a_np.reshape(16, 256) + np.arange(16, dtype=np.float32)[:, None])


def test_typed_scalars_are_encoded_as_given():
    w = simpler.Worker()
    x = w.tensor(np.zeros(4, np.float32))
    y = w.alloc((4,), "float32")
    w.run(lambda o: o.submit("add_scalar", INPUT(x), OUTPUT_EXISTING(y), simpler.scalar(2.5, "f32")))
    np.testing.assert_array_equal(w.read(y), np.full(4, 2.5, np.float32))
    with pytest.raises(simpler.SimplerError, match="unknown scalar type \"f16\""):
        simpler.scalar(1, "f16")


def test_the_orchestrator_refuses_other_threads():
    w = simpler.Worker()
    errors = []

    def orch(o):
        def other():
            try:
                o.submit("noop")
            except simpler.SimplerError as e:
                errors.append(str(e))

        t = threading.Thread(target=other)
        t.start()
        t.join()

    w.run(orch)
    assert errors == ["the orchestrator is used from another thread; use it only inside an orchestration function"]


def test_workload_files_and_from_deps_run_from_python(repo, tmp_path):
    run = simpler.run_workload(
        repo / "workloads" / "vector_example.json",
        config=simpler.CallConfig(enable_dep_gen=True, output_prefix=str(tmp_path / "run")),
    )
    assert run.passed and run.checks == [(True, run.checks[0][1])]
    assert (run.report.tasks, len(run.report.edges)) == (5, 6)
    replay = simpler.run_from_deps(tmp_path / "run" / "deps.json", config=simpler.CallConfig(runtime="hbg"))
    assert replay.passed
    assert replay.checks[-1] == (True, "6 of 6 captured edges wired; 0 missing, 0 extra; 0 not reproduced")
    small = simpler.run_example("vector_example", params={"size": 64})
    assert small.passed and small.checks == [(True, small.checks[0][1])]
    with pytest.raises(simpler.WorkloadError, match="unknown example `nope`; built-in examples: "):
        simpler.run_example("nope")
    assert "vector_example" in simpler.examples()


def test_a_failed_golden_check_is_in_the_runs_manifest_as_simpler_run_leaves_it(repo, tmp_path):
    spec = (repo / "workloads" / "vector_example.json").read_text()
    wrong = spec.replace('"constant": 47.0', '"constant": 48.0').replace(
        "./schema.json", str(repo / "workloads" / "schema.json")
    )
    assert wrong != spec
    (tmp_path / "wrong.json").write_text(wrong)
    failed = "f: FAILED, 16384 of 16384 elements differ; first at [0]: got 47, expected 48"
    cfg = simpler.CallConfig(enable_dep_gen=True, output_prefix=str(tmp_path / "run"))
    run = simpler.run_workload(tmp_path / "wrong.json", config=cfg)
    assert not run.passed and run.checks[0] == (False, failed)
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (manifest["status"], manifest["failed_check"]) == ("completed", failed)
    # A passing run's manifest has no such field.
    cfg = simpler.CallConfig(enable_dep_gen=True, output_prefix=str(tmp_path / "good"))
    assert simpler.run_example("vector_example", params={"size": 64}, config=cfg).passed
    assert "failed_check" not in json.loads((tmp_path / "good" / "run.json").read_text())


def test_a_workload_file_that_turns_a_diagnostic_on_writes_to_a_new_folder(repo, tmp_path, monkeypatch):
    spec = json.loads((repo / "workloads" / "vector_example.json").read_text())
    spec["diagnostics"] = {"enable_dep_gen": True}
    (tmp_path / "diag.json").write_text(json.dumps(spec))
    monkeypatch.chdir(tmp_path)
    run = simpler.run_workload("diag.json", params={"SIZE": 64})
    assert run.passed and run.report.outcomes["dep_gen"] == "written"
    folder = Path(run.report.output_dir)
    # Named by this test (the plugin's layout, as this suite runs under it).
    assert folder.parent.name == "outputs" and folder.name.startswith("test_a_workload_file_that")
    assert (folder / "deps.json").is_file()


def test_a_refused_config_leaves_no_empty_output_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = simpler.Worker()
    bad = simpler.CallConfig(enable_dep_gen=True, clusters=0)
    with pytest.raises(simpler.ConfigError, match="clusters is 0"):
        w.run(lambda o: o.submit("noop"), bad)
    with pytest.raises(simpler.ConfigError, match="clusters is 0"):
        simpler.run_example("vector_example", config=bad)
    assert list((tmp_path / "outputs").iterdir()) == []


def test_lost_and_removed_are_reported_without_views(tmp_path):
    w = simpler.Worker()
    folder = tmp_path / "run"
    cfg = simpler.CallConfig(enable_dep_gen=True, output_prefix=str(folder))
    first = w.run(lambda o: o.submit("noop"), cfg, render_views=False)
    assert (first.lost, first.removed) == ([], [])
    second = w.run(lambda o: o.submit("noop"), cfg, render_views=False)
    assert sorted(second.removed) == ["deps.json", "name_map.json", "run.json"]
    (folder / "deps.json").unlink()
    (folder / "deps.json").mkdir()  # the graph cannot be written
    third = w.run(lambda o: o.submit("noop"), cfg, render_views=False)
    assert third.outcomes["dep_gen"] == "failed"
    assert len(third.lost) == 1 and third.lost[0].startswith("dep_gen failed: "), third.lost


def test_an_output_kept_past_its_run_or_another_workers_tensor_is_refused():
    w, other = simpler.Worker(), simpler.Worker()
    a = w.tensor(np.full(4, 2.0, np.float32))
    f = w.alloc((4,), "float32")
    kept = []
    w.run(lambda o: kept.append(o.submit("add", INPUT(a), INPUT(a), OUTPUT((4,))).output(0)))
    with pytest.raises(simpler.FatalError, match="argument 0 is an output of an earlier run"):
        w.run(lambda o: o.submit("add_scalar", INPUT(kept[0]), OUTPUT_EXISTING(f), 1.0))
    with pytest.raises(simpler.TensorError, match="belongs to another Worker"):
        other.read(a)
    g = other.alloc((4,), "float32")
    with pytest.raises(simpler.FatalError, match="argument 0 belongs to another Worker"):
        other.run(lambda o: o.submit("copy", INPUT(a), OUTPUT_EXISTING(g)))
    np.testing.assert_array_equal(w.read(f), np.zeros(4, np.float32))
    np.testing.assert_array_equal(other.read(g), np.zeros(4, np.float32))
    assert w.read(w.alloc((4, 6))[4:4, 1:3]).shape == (0, 2)


def test_any_number_of_explicit_deps_is_wired():
    w = simpler.Worker()
    for n in (16, 17, 100):
        ids = []

        def orch(o):
            ts = [o.submit("noop") for _ in range(n)]
            ids.extend(t.id for t in ts)
            ids.append(o.submit_dummy(deps=ts).id)

        report = w.run(orch)
        join = ids[-1]
        assert sorted(p for p, c, _ in report.edges if c == join) == sorted(ids[:-1]), n
        ids.clear()


def test_scalars_wider_than_64_bits_are_errors_not_float_bits():
    w = simpler.Worker()
    got = []
    w.register_kernel(100, "read_scalar", lambda ctx: got.append(ctx.scalar(0)))
    f = w.alloc((1,), "float32")
    w.run(lambda o: o.submit("read_scalar", OUTPUT_EXISTING(f), 2**64 - 1))
    assert got == [2**64 - 1]
    for v in (2**64, 2**127, 2**200, -(2**200)):
        with pytest.raises(simpler.FatalError, match=f"scalar {v} does not fit in 64 bits"):
            w.run(lambda o: o.submit("read_scalar", OUTPUT_EXISTING(f), v))
    assert got == [2**64 - 1]


def test_a_scope_exit_hands_its_ready_tasks_over_before_host_work():
    """The orchestrator holds ready tasks to publish them in batches (Rust's READY_HOLD); a
    Python scope's exit publishes what it holds, so host work after the scope overlaps the
    scope's tasks instead of holding them back."""
    w = simpler.Worker(runtime="tmr", clusters=1)
    busy, ran = threading.Event(), threading.Event()

    def busy_kernel(ctx):
        busy.set()
        time.sleep(0.3)

    w.register_kernel(30, "busy_host", busy_kernel)  # "busy" is a built-in's name
    w.register_kernel(31, "nop", lambda ctx: None)
    w.register_kernel(32, "mark", lambda ctx: ran.set())
    x = w.tensor(np.zeros(4, np.float32))
    seen = []

    def orch(o):
        # A full batch (READY_BATCH, 32 tasks) is published: the scheduler is then busy.
        o.submit("busy_host")
        for _ in range(31):
            o.submit("nop")
        assert busy.wait(10)
        with o.scope():
            o.submit("mark", OUTPUT_EXISTING(x))
        seen.append(ran.wait(10))  # host work

    report = w.run(orch)
    assert seen == [True]
    assert report.completed == 33
