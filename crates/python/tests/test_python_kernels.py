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
        t = ctx.tensor(1)
        part = t.numel // ctx.block_num
        lo = ctx.block_idx * part
        assert (ctx.tensor_count, ctx.scalar_count) == (2, 0)
        src = ctx.read(0)
        out = ctx.read(1)
        out[lo:lo + part] = src[lo:lo + part] / 2
        ctx.write(1, out)

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
