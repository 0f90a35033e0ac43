"""What NumPy users write is taken, or refused with an error that says what to write instead:
NumPy dtypes, tuple shapes, negative dimensions, big-endian arrays, NumPy arrays where a
Tensor goes, a dict as the config, one `NAME=VALUE` string as params, an output read after its
run, a failing list of a batch, an out-of-range `block_num`, an input of a library elementwise
kernel whose length is not its output's."""

import numpy as np
import pytest

import simpler
from simpler import INPUT, OUTPUT, OUTPUT_EXISTING


def test_numpy_dtypes_shapes_and_byte_orders_are_taken():
    w = simpler.Worker()
    assert w.alloc((4,), np.float32).dtype == "float32"
    assert w.alloc(4, np.dtype("int32")).shape == (4,)
    assert OUTPUT((3,), np.float16).tag == "OUTPUT"
    assert simpler.TensorCreateInfo((2, 2), np.uint8).dtype == "uint8"
    t = w.alloc((24,), "float32")
    assert t.reshape((6, 4)).shape == t.reshape(6, 4).shape == (6, 4)
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    big = a.astype(">f4")
    x = w.tensor(big)
    assert x.dtype == "float32"
    np.testing.assert_array_equal(w.read(x), a)
    w.write(x, (a * 2).astype(">f4"))
    np.testing.assert_array_equal(w.read(x), a * 2)

    def orch(o):
        c = o.submit("add", INPUT(x), INPUT(x), OUTPUT((4, 5), np.float32)).output(0)
        o.submit("copy", INPUT(c), OUTPUT_EXISTING(x))

    w.run(orch)
    np.testing.assert_array_equal(w.read(x), a * 4)


def test_bad_shapes_dtypes_and_tags_say_what_to_write():
    w = simpler.Worker()
    t = w.alloc((24,), "float32")
    with pytest.raises(simpler.TensorError, match=r"negative dimension -1 in shape \(-1,\): dimensions are sizes, "
                                                  r"0 or more \(no -1 to infer one\)"):
        t.reshape(-1)
    with pytest.raises(simpler.TensorError, match=r"negative dimension -1 in shape \(-1,\)"):
        w.alloc((-1,))
    with pytest.raises(simpler.TensorError, match=r"unknown dtype \"float64\""):
        w.alloc((4,), np.float64)
    with pytest.raises(TypeError, match=r"INPUT\(t\) takes a Tensor .*not a ndarray; "
                                        r"wrap NumPy arrays with w.tensor\(array\) first"):
        INPUT(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"OUTPUT_EXISTING\(t\) takes a Tensor .*not a int$"):
        OUTPUT_EXISTING(3)


def test_a_config_dict_and_a_params_string_are_taken(tmp_path):
    w = simpler.Worker()
    r = w.run(lambda o: o.submit("noop"), {"enable_dep_gen": True, "output_prefix": str(tmp_path / "o")})
    assert r.artifacts["dep_gen"] == [str(tmp_path / "o" / "deps.json")]
    with pytest.raises(TypeError, match=r"unknown CallConfig field\(s\) 'enable_dep_gn'; fields: runtime, "):
        w.run(lambda o: None, {"enable_dep_gn": True})
    with pytest.raises(TypeError, match=r"config must be a CallConfig or a dict of its fields \(.*\), not str"):
        w.run(lambda o: None, "enable_dep_gen")
    assert simpler.run_example("vector_example", params="size=64").passed
    with pytest.raises(simpler.WorkloadError, match=r"--param size=x: expected a non-negative integer"):
        simpler.run_example("vector_example", params="size=x")


def test_an_output_read_after_its_run_is_named():
    w = simpler.Worker()
    kept = []
    w.run(lambda o: kept.append(o.submit("fill", OUTPUT((4,)), 1.0).output(0)))
    with pytest.raises(simpler.TensorError) as info:
        w.read(kept[0])
    assert str(info.value).startswith("Tensor(shape=[4], ")
    assert str(info.value).endswith(
        "is an output of a run (a run's outputs live only while it runs, in its ring heap): w.read, w.write and "
        "w.free take external tensors (w.tensor, w.alloc); write results into one with OUTPUT_EXISTING or INOUT"
    )


def test_a_failing_list_of_a_batch_is_named_and_the_ones_before_it_were_submitted():
    w = simpler.Worker()
    x = w.alloc((4,), "float32")
    batch = [[INPUT(x)], [INPUT(x)], [x], [INPUT(x)]]
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit_many("noop", batch))
    cause = info.value.__cause__
    assert isinstance(cause, simpler.SimplerError)
    assert str(cause).startswith(
        "submit_many: argument list 2 of the batch failed (the 2 lists before it were submitted): argument "
    )
    assert "is a bare tensor: tag it INPUT(t)" in str(cause)
    assert info.value.report.tasks == 2


def test_an_out_of_range_block_num_states_the_limit():
    w = simpler.Worker()
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: o.submit("noop", block_num=70000))
    assert str(info.value.__cause__) == "block_num 70000 is out of range: a task has 1 to 65535 blocks"


def test_an_elementwise_kernels_input_of_another_length_than_its_output_is_refused_at_submit():
    # Found by a review: `add` and `copy` used the first 8 elements of a 16-element input
    # without a word; a shorter input failed only when the kernel ran.
    w = simpler.Worker()
    a = w.tensor(np.arange(16, dtype=np.float32))
    b = w.tensor(np.arange(8, dtype=np.float32))
    y = w.tensor(np.full(8, -1, dtype=np.float32))

    def refused(orchestration, submitted=0):
        with pytest.raises(simpler.FatalError) as info:
            w.run(orchestration)
        assert isinstance(info.value.__cause__, simpler.TensorError), info.value.__cause__
        assert info.value.report.tasks == submitted
        return str(info.value.__cause__)

    assert refused(lambda o: o.submit("copy", INPUT(a), OUTPUT_EXISTING(y))) == (
        "copy: input x (tensor argument 0) has 16 elements but output y (tensor argument 1) has 8; "
        "copy works element by element and needs them equal"
    )
    assert refused(lambda o: o.submit("add", INPUT(b), INPUT(a), OUTPUT((8,)))) == (
        "add: input b (tensor argument 1) has 16 elements but output c (tensor argument 2) has 8; "
        "add works element by element and needs them equal"
    )
    # A shorter input, by func id (3 is copy), in a batch.
    batch = [[INPUT(b), OUTPUT((8,))], [INPUT(b), OUTPUT((16,))]]
    assert refused(lambda o: o.submit_many(3, batch), submitted=1) == (
        "submit_many: argument list 1 of the batch failed (list 0 before it was submitted): copy: input x "
        "(tensor argument 0) has 8 elements but output y (tensor argument 1) has 16; copy works element by "
        "element and needs them equal"
    )
    np.testing.assert_array_equal(w.read(y), np.full(8, -1, dtype=np.float32))

    # Equal element counts in other shapes are taken.
    def equal(o):
        o.submit("add", INPUT(a.reshape(4, 4)), INPUT(a), OUTPUT_EXISTING(w_out))
        o.submit("copy", INPUT(b), OUTPUT_EXISTING(y))

    w_out = w.alloc((2, 8))
    w.run(equal)
    np.testing.assert_array_equal(w.read(w_out).reshape(16), np.arange(16, dtype=np.float32) * 2)
    np.testing.assert_array_equal(w.read(y), np.arange(8, dtype=np.float32))


def test_a_slice_step_past_the_length_selects_the_start_alone():
    # Found by a review: the step's low 32 bits were kept, so 2**32+3 read as 3, and a write
    # through ::2**32+1 went to every element.
    w = simpler.Worker()
    x = w.tensor(np.arange(8, dtype=np.float32))
    for step in (8, 2**32, 2**32 + 3, 2**64):
        assert w.read(x[::step]).tolist() == np.arange(8, dtype=np.float32)[::step].tolist() == [0.0]
    assert w.read(x[3::2**32 + 1]).tolist() == [3.0]
    y = w.alloc(8)
    w.run(lambda o: o.submit("fill", OUTPUT_EXISTING(y[::2**32 + 1]), 5.0))
    assert w.read(y).tolist() == [5.0] + [0.0] * 7


def test_a_kernel_name_is_one_kernels_and_a_create_infos_dtype_is_the_outputs():
    # Found by a review: a no-op registered as "add" under another id shadowed the built-in,
    # and OUTPUT dropped a dtype given beside a TensorCreateInfo.
    w = simpler.Worker()
    add = next(fid for fid, name, _ in w.kernels() if name == "add")
    with pytest.raises(simpler.SimplerError, match=rf'kernel name "add" is taken by func_id {add}; a kernel is '
                                                   rf"submitted by its name, so each name is one kernel's"):
        w.register_kernel(54, "add", lambda ctx: None)
    assert [name for fid, name, _ in w.kernels() if fid == 54] == []
    with pytest.raises(simpler.SimplerError, match=r"OUTPUT: dtype float32 given beside a TensorCreateInfo of int8"):
        OUTPUT(simpler.TensorCreateInfo((4,), "int8"), "float32")
    assert OUTPUT(simpler.TensorCreateInfo((4,), "int8"), "int8").tag == "OUTPUT"


def test_a_task_of_an_earlier_run_is_refused_as_a_dependency():
    # Found by a review: it was wired to whatever task of the new run had its id.
    w = simpler.Worker()
    kept = []
    w.run(lambda o: kept.append(o.submit("noop")))

    def again(o):
        first = o.submit("noop")
        with pytest.raises(simpler.SimplerError, match=r"deps\[0\]: Task 0:0 is a task of an earlier run; task ids "
                                                       r"restart with each run"):
            o.submit("noop", deps=[kept[0]])
        o.submit("noop", deps=[first])

    report = w.run(again)
    assert [e[:2] for e in report.edges] == [(0, 1)]


def test_bad_view_indices_deps_and_settings_name_their_argument():
    """Found by a review: these said no argument's name (a bare OverflowError, "expected 2
    values" for a slice's dimension, an AttributeError for `deps=[None]`, a TypeError for a
    runtime_env key, and `Worker(clusters=-1)` blamed on CallConfig.clusters at the run)."""
    w = simpler.Worker()
    x = w.alloc((4, 4), "float32")
    with pytest.raises(simpler.TensorError, match=r"^dimension 5 does not exist: the tensor has 2 \(0 to 1\)$"):
        x.slice(5, 0, 1)
    with pytest.raises(simpler.TensorError, match=r"^Tensor.slice: start -1 is negative \(indices count from 0"):
        x.slice(0, -1, 2)
    with pytest.raises(simpler.TensorError, match=r"^Tensor.slice: end 1180591620717411303424 is larger than 4294967295$"):
        x.slice(0, 0, 2**70)
    with pytest.raises(simpler.TensorError, match=r"^Tensor.transpose: d1 -1 is negative"):
        x.transpose(0, -1)
    with pytest.raises(simpler.TensorError, match=r"^dimension 2 does not exist: the tensor has 2 \(0 to 1\)$"):
        x.transpose(2, 0)
    with pytest.raises(simpler.TensorError, match=r"^Tensor.view: offsets\[1\] -2 is negative"):
        x.view([2, 2], [0, -2])
    assert x.slice(1, 1, 3).shape == (4, 2)

    def orch(o):
        first = o.submit("noop")
        with pytest.raises(simpler.SimplerError, match=r"^deps\[1\]: None is neither a Task \(what o.submit returned\) "
                                                       r"nor a task id"):
            o.submit("noop", deps=[first, None])
        with pytest.raises(simpler.SimplerError, match=r"^deps\[0\]: -1 is neither a Task"):
            o.submit("noop", deps=[-1])
        with pytest.raises(simpler.SimplerError, match=r"^deps: 5 is not a list of tasks"):
            o.submit("noop", deps=5)
        o.submit("noop", deps=[first])

    w.run(orch)
    with pytest.raises(simpler.ConfigError, match=r"^CallConfig.runtime_env: key 1 is not a string"):
        w.run(lambda o: None, simpler.CallConfig(runtime_env={1: 1}))
    for bad in (-1, 0, True, 2.0):
        with pytest.raises(simpler.ConfigError, match=rf"^Worker\(clusters={bad!r}\): a number of clusters, 1 or more"):
            simpler.Worker(clusters=bad)


def test_a_dtype_of_none_is_float32_everywhere():
    """Found by a review: `w.alloc(shape, None)` was float64 (NumPy's `np.dtype(None)`) where
    `OUTPUT(shape, None)` is float32."""
    w = simpler.Worker()
    assert w.alloc((4,), None).dtype == "float32"
    assert simpler.TensorCreateInfo((2, 2), None).dtype == "float32"
    x = w.alloc((4,), None)
    y = w.alloc((4,), "float32")

    def orch(o):
        out = o.submit("add_scalar", INPUT(x), OUTPUT((4,), None), 1.0).output(0)
        assert out.dtype == "float32"
        o.submit("copy", INPUT(out), OUTPUT_EXISTING(y))

    w.run(orch)
    np.testing.assert_array_equal(w.read(y), np.ones(4, np.float32))
