"""Python callables as kernels: NumPy in and out, SPMD blocks, scalars, views, a failing kernel
is KERNEL_FAILED, and a tmr orchestration that waits for room while Python kernels run does not
deadlock (submits release the GIL)."""

import numpy as np
import pytest

import simpler
from simpler import INPUT, OUTPUT, OUTPUT_EXISTING


def scale(ctx):
    ctx.write(1, ctx.read(0) * ctx.scalar_f32(0))


def test_a_python_kernel_computes_with_numpy_on_views():
    w = simpler.Worker()
    w.register_kernel(20, "scale", scale)
    x_np = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = w.tensor(x_np)
    y = w.alloc((4, 3), "float32")
    report = w.run(lambda o: o.submit("scale", INPUT(x.T), OUTPUT_EXISTING(y), 3.0))
    assert (20, "scale", "aiv") in w.kernels()
    assert report.completed == 1
    np.testing.assert_array_equal(w.read(y), x_np.T * 3)


def test_blocks_split_the_work_and_chain_with_library_kernels():
    w = simpler.Worker(clusters=2)
    n, blocks = 1024, 4

    def halves(ctx):
        # The blocks run concurrently: each writes only its own range of the output.
        lo, hi = ctx.block_range(1)
        assert (ctx.tensor_count, ctx.scalar_count) == (2, 0)
        ctx.write(1, ctx.read(0)[lo:hi] / 2, offset=lo)

    w.register_kernel(21, "halve", halves)
    a = w.tensor(np.full(n, 8.0, np.float32))
    f = w.alloc((n,), "float32")

    def orch(o):
        c = o.submit("halve", INPUT(a), OUTPUT((n,)), block_num=1).output(0)
        o.submit("add_scalar", INPUT(c), OUTPUT_EXISTING(f), 1.0)

    w.run(orch)
    np.testing.assert_array_equal(w.read(f), np.full(n, 5.0, np.float32))

    g = w.alloc((n,), "float32")
    w.run(lambda o: o.submit("halve", INPUT(a), OUTPUT_EXISTING(g), block_num=blocks))
    np.testing.assert_array_equal(w.read(g), np.full(n, 4.0, np.float32))


def test_a_raising_kernel_is_kernel_failed_with_its_text():
    w = simpler.Worker()

    def bad(ctx):
        raise RuntimeError("tile out of range")

    w.register_kernel(22, "bad", bad)
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("bad"))
    assert info.value.code == 104
    assert "RuntimeError: tile out of range" in str(info.value)


@pytest.mark.parametrize("runtime", ["tmr", "hbg"])
def test_waiting_for_room_lets_python_kernels_run(runtime):
    w = simpler.Worker(runtime=runtime)
    w.register_kernel(23, "inc", lambda ctx: ctx.write(0, ctx.read(0) + 1))
    x = w.tensor(np.zeros(4, np.int32))

    def orch(o):
        # A window of 8 slots: the orchestration must wait for Python kernels to retire tasks.
        for _ in range(40):
            with o.scope():
                o.submit("inc", simpler.INOUT(x))

    cfg = simpler.CallConfig(runtime_env={"ring_task_window": 8}, timeout=60)
    if runtime == "hbg":
        cfg.runtime_env = {"ring_task_window": 64}
    w.run(orch, cfg)
    np.testing.assert_array_equal(w.read(x), np.full(4, 40, np.int32))


def test_a_bad_core_type_is_named():
    w = simpler.Worker()
    with pytest.raises(simpler.SimplerError, match="unknown core type \"gpu\"; core types: aiv, aic"):
        w.register_kernel(24, "k", scale, core="gpu")


def test_the_kernel_context_is_only_valid_during_its_call():
    w = simpler.Worker()
    kept = []
    w.register_kernel(25, "keep", kept.append)
    x = w.alloc((4,), "float32")
    w.run(lambda o: o.submit("keep", INPUT(x)))
    with pytest.raises(simpler.SimplerError) as info:
        kept[0].read(0)
    assert str(info.value) == "this kernel context belongs to a kernel call that has returned; use it only inside it"


def test_a_kernel_exception_is_the_fatal_errors_cause_with_its_traceback_and_location():
    import traceback

    w = simpler.Worker()
    table = {"present": 1}

    def lookup(ctx):
        return table["missing"]  # lookup-line

    w.register_kernel(26, "lookup", lookup)
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("lookup"))
    line = next(i + 1 for i, t in enumerate(open(__file__).read().splitlines()) if t.endswith("# lookup-line"))
    e = info.value
    assert (e.code, e.name) == (104, "KERNEL_FAILED")
    assert str(e).endswith(f"KeyError: 'missing' (at test_python_kernels.py:{line} in lookup)")
    assert isinstance(e.__cause__, KeyError)
    last = traceback.extract_tb(e.__cause__.__traceback__)[-1]
    assert (last.lineno, last.name) == (line, "lookup")


def test_a_kernel_that_returns_a_value_fails_and_its_output_is_untouched():
    w = simpler.Worker()
    x = w.tensor(np.arange(8, dtype=np.float32))
    y = w.alloc((8,), "float32")
    w.register_kernel(27, "ret", lambda ctx: ctx.read(0) * 2)
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("ret", INPUT(x), OUTPUT_EXISTING(y)))
    assert (info.value.code, info.value.name) == (104, "KERNEL_FAILED")
    assert str(info.value).startswith("fatal 104 (KERNEL_FAILED): kernel ret (func_id 27) of task (0, 0) block 0 on ")
    assert str(info.value).endswith(
        ": the kernel returned a value of type ndarray: a kernel's results go through ctx.write, "
        "and its return must be None"
    )
    np.testing.assert_array_equal(w.read(y), np.zeros(8, np.float32))


@pytest.mark.parametrize("offset", [None, 2])
def test_a_write_into_an_input_fails_its_task_and_leaves_the_input_as_it_was(offset):
    """Found by a review: a kernel's ctx.write into an argument the task declared INPUT was
    taken, so a later reader of it would not have waited for the write."""
    w = simpler.Worker()
    x = w.tensor(np.arange(8, dtype=np.float32))
    y = w.alloc((8,), "float32")

    def into_input(ctx):
        if offset is None:
            ctx.write(0, ctx.read(0) * 2)
        else:
            ctx.write(0, np.ones(2, np.float32), offset=offset)

    w.register_kernel(28, "into_input", into_input)
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("into_input", INPUT(x), OUTPUT_EXISTING(y)))
    assert (info.value.code, info.value.name) == (104, "KERNEL_FAILED")
    how = "" if offset is None else ", offset=2"
    assert (
        f"kernel into_input (func_id 28): ctx.write(0, values{how}) of argument 0, an INPUT: a kernel "
        "writes only its OUTPUT, INOUT and OUTPUT_EXISTING arguments (declare this one INOUT)"
    ) in str(info.value)
    np.testing.assert_array_equal(w.read(x), np.arange(8, dtype=np.float32))


@pytest.mark.parametrize(
    "dtype, values, first",
    [
        ("int32", [1.0, 1e10, 2.0], "10000000000.0"),
        ("int32", [1.0, float("nan")], "nan"),
        ("uint8", [3, -1], "-1"),
        ("int64", [1.0, 2.0**63], "9.223372036854776e+18"),
        ("uint64", np.array([2**63], np.uint64).astype(np.float64), None),
    ],
)
def test_a_value_an_integer_view_cannot_hold_is_refused_not_wrapped(dtype, values, first):
    """Found by a review: ctx.write cast as NumPy does, so 1e10 and NaN into int32 both wrote
    -2147483648 (the built-in kernels saturate). A value that fits is written."""
    w = simpler.Worker()
    y = w.alloc((len(values),), dtype)
    w.register_kernel(29, "put", lambda ctx: ctx.write(0, np.asarray(values)))
    if first is None:
        w.run(lambda o: o.submit("put", OUTPUT_EXISTING(y)))
        np.testing.assert_array_equal(w.read(y), np.asarray(values).astype(dtype))
        return
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("put", OUTPUT_EXISTING(y)))
    assert f"kernel put (func_id 29): ctx.write(0, values) of argument 0: value {first} does not fit the view's {dtype} (" in str(info.value)
    np.testing.assert_array_equal(w.read(y), np.zeros(len(values), dtype))
