"""Ranged writes of Python kernels: the blocks of one SPMD task run concurrently, each writes
only its own range (`ctx.write(i, values, offset=lo)`), so no block's write is lost; the range
is checked against the view, and it lands where NumPy says for every dtype and for views."""

import numpy as np
import pytest

import simpler
from simpler import INPUT, OUTPUT_EXISTING


def halves(ctx):
    lo, hi = ctx.block_range(1)
    ctx.write(1, ctx.read(0)[lo:hi] / 2, offset=lo)


@pytest.mark.parametrize("runtime", ["tmr", "hbg"])
def test_concurrent_blocks_each_write_their_own_range_and_none_is_lost(runtime):
    # The reviewer's repro: 4 blocks of 2^20 elements on 4 clusters and 2 scheduler threads;
    # with whole-view write-backs, every one of 10 runs lost a block.
    w = simpler.Worker(runtime=runtime, clusters=4)
    n, blocks = 1 << 20, 4
    w.register_kernel(21, "halve", halves)
    src = (np.arange(n) % 1000).astype(np.float32)
    a = w.tensor(src)
    golden = src / 2
    correct = []
    for _ in range(10):
        g = w.alloc((n,), "float32")
        r = w.run(lambda o: o.submit("halve", INPUT(a), OUTPUT_EXISTING(g), block_num=blocks),
                  simpler.CallConfig(scheduler_threads=2))
        assert r.scheduler_threads == 2
        correct.append(bool(np.array_equal(w.read(g), golden)))
        w.free(g)
    assert correct == [True] * 10


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int16", "int32", "int64",
                                   "uint8", "uint16", "uint32", "uint64", "bool"])
def test_a_ranged_write_sets_exactly_those_elements_of_a_strided_view(dtype):
    w = simpler.Worker()
    base = np.zeros((4, 6), dtype)
    out = w.tensor(base)
    values = (np.arange(5) * 37 % 100 + 1).astype(dtype)
    if dtype in ("int64", "uint64"):
        values = np.arange(5, dtype=dtype) + np.array(2**62 + 1, dtype)  # beyond f64's integers

    def part(ctx):
        ctx.write(0, values, offset=3)

    w.register_kernel(22, "part", part)
    view = out.T  # (6, 4), column-major over the buffer
    w.run(lambda o: o.submit("part", OUTPUT_EXISTING(view)))
    golden = base.copy()
    flat = golden.T.copy().reshape(-1)
    flat[3:8] = values
    golden = flat.reshape(6, 4).T
    np.testing.assert_array_equal(w.read(out), golden)


def test_a_ranged_write_takes_any_shape_and_casts_to_the_dtype():
    w = simpler.Worker()
    out = w.alloc((2, 3, 4), "int32")

    def part(ctx):
        ctx.write(0, np.full((2, 2), 7.9), offset=10)  # four values, truncated to 7

    w.register_kernel(23, "part", part)
    w.run(lambda o: o.submit("part", OUTPUT_EXISTING(out)))
    golden = np.zeros(24, np.int32)
    golden[10:14] = 7
    np.testing.assert_array_equal(w.read(out), golden.reshape(2, 3, 4))


@pytest.mark.parametrize("offset, why", [
    (1022, "4 values from element 1022 end at 1026, past the view's 1024 elements"),
    (-1, "offset -1 is negative"),
])
def test_a_range_past_the_view_is_an_error_naming_the_kernel_and_the_argument(offset, why):
    w = simpler.Worker()
    out = w.alloc((1024,), "float32")
    seen = []

    def over(ctx):
        try:
            ctx.write(1, np.ones(4, np.float32), offset=offset)
        except simpler.TensorError as e:
            seen.append(str(e))
            raise

    w.register_kernel(24, "over", over)
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("over", INPUT(out), OUTPUT_EXISTING(out)))
    assert seen == [f"kernel over (func_id 24): ctx.write(1, values, offset={offset}) of argument 1: {why}"]
    assert (info.value.code, info.value.name) == (104, "KERNEL_FAILED")
    assert isinstance(info.value.__cause__, simpler.TensorError)
    np.testing.assert_array_equal(w.read(out), np.zeros(1024, np.float32))


def test_a_whole_view_write_of_the_wrong_shape_points_to_the_ranged_write():
    w = simpler.Worker()
    out = w.alloc((8,), "float32")
    w.register_kernel(25, "short", lambda ctx: ctx.write(0, np.zeros(4, np.float32)))
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("short", OUTPUT_EXISTING(out)))
    assert (
        "TensorError: kernel short (func_id 25): array shape (4,) does not match the view's (8,) (argument 0); "
        "write a part with ctx.write(0, values, offset=lo)"
    ) in str(info.value)
