"""Errors are Python exceptions with the runtime's messages: a fatal carries its code and
facts, an exception of the orchestration becomes EXPLICIT_ORCH_FATAL with it as the cause, a
bad configuration is refused before the run."""

import numpy as np
import pytest

import simpler
from simpler import INPUT, OUTPUT


def this_line_of(marker):
    """The 1-based line of this file holding ``marker``."""
    lines = open(__file__).read().splitlines()
    return next(i + 1 for i, text in enumerate(lines) if marker in text and "this_line_of" not in text)


def test_heap_exhaustion_is_a_fatal_error_with_its_facts():
    w = simpler.Worker()

    def orch(o):
        with o.scope():  # heap-scope
            o.submit_dummy(OUTPUT((8192,), "float32"))  # heap-submit

    with pytest.raises(simpler.FatalError) as info:
        w.run(orch, simpler.CallConfig(runtime_env={"ring_heap": 1024}))
    e = info.value
    site = f"test_errors.py:{this_line_of('# heap-scope')}"
    submit = f"test_errors.py:{this_line_of('# heap-submit')}"
    assert (e.code, e.name) == (2, "HEAP_RING_DEADLOCK")
    assert (e.resource, e.ring, e.capacity, e.site, e.key) == ("heap", 1, 1024, site, "ring_heap")
    assert str(e).startswith(
        "fatal 2 (HEAP_RING_DEADLOCK): heap of ring 1 exhausted (capacity 1024 bytes): a task needs 32768 bytes"
    )
    assert f"scope open at {site} (depth 1)" in str(e)
    # The runtime's message, then the orchestrator call that raised the fatal.
    assert e.message.endswith("raise runtime_env ring_heap")
    assert str(e) == f"fatal 2 (HEAP_RING_DEADLOCK): {e.message} (raised by o.submit_dummy at {submit})"
    assert (e.report.status, e.report.fatal_code, e.report.fatal_name) == ("fatal", 2, "HEAP_RING_DEADLOCK")
    assert isinstance(e, simpler.SimplerError)


def test_a_scope_deadlock_names_the_window_and_the_python_scope():
    w = simpler.Worker()

    def orch(o):
        with o.scope():  # deadlock-scope
            for _ in range(4):
                o.submit("noop")

    with pytest.raises(simpler.FatalError) as info:
        w.run(orch, simpler.CallConfig(runtime_env={"ring_task_window": 4}))
    e = info.value
    site = f"test_errors.py:{this_line_of('# deadlock-scope')}"
    assert (e.code, e.name, e.resource, e.ring, e.capacity, e.site, e.key) == (
        1, "SCOPE_DEADLOCK", "task_window", 1, 4, site, "ring_task_window"
    )
    assert f"scope at {site} already holds 3 tasks on ring 1, whose task window is 4 slots" in str(e)


def test_calls_after_a_fatal_raise_stopped_and_the_run_reports_the_fatal():
    w = simpler.Worker()
    seen = []

    def orch(o):
        try:
            o.submit_dummy(OUTPUT((8192,), "float32"))
        except simpler.StoppedError as s:
            seen.append((s.code, s.name, str(s)))
            kept.append(s)
            raise

    kept = []
    with pytest.raises(simpler.FatalError) as info:
        w.run(orch, simpler.CallConfig(runtime_env={"ring_heap": 1024}, runtime="hbg"))
    assert seen == [(2, "HEAP_RING_DEADLOCK", "the run is stopped by fatal 2 (HEAP_RING_DEADLOCK)")]
    assert info.value.code == 2
    # The StoppedError the orchestration let propagate is the cause: its traceback has the submit.
    assert info.value.__cause__ is kept[0]


def test_an_exception_in_the_orchestration_is_explicit_orch_fatal_with_it_as_cause():
    w = simpler.Worker()

    def orch(o):
        o.submit("noop")
        raise ValueError("bad tile size")  # orch-raise

    with pytest.raises(simpler.FatalError) as info:
        w.run(orch)
    e = info.value
    assert (e.code, e.name) == (9, "EXPLICIT_ORCH_FATAL")
    assert str(e) == (
        "fatal 9 (EXPLICIT_ORCH_FATAL): orchestration returned an error: ValueError: bad tile size "
        f"(at test_errors.py:{this_line_of('# orch-raise')} in orch)"
    )
    assert isinstance(e.__cause__, ValueError)
    assert (e.resource, e.ring, e.capacity, e.site, e.key) == (None, None, None, None, None)


def test_report_fatal_stops_the_run_with_code_9():
    w = simpler.Worker()

    def orch(o):
        o.report_fatal("checksum mismatch")

    with pytest.raises(simpler.FatalError) as info:
        w.run(orch)
    assert str(info.value) == "fatal 9 (EXPLICIT_ORCH_FATAL): orchestration reported: checksum mismatch"


def test_a_failing_kernel_is_kernel_failed():
    w = simpler.Worker()
    x = w.tensor(np.zeros((2, 3), np.float32))
    y = w.alloc((3, 2), "float32")

    def orch(o):
        # matmul of a 2x3 by a 2x3: the inner dimensions differ.
        o.submit("matmul", INPUT(x), INPUT(x), simpler.OUTPUT_EXISTING(y))

    with pytest.raises(simpler.FatalError) as info:
        w.run(orch)
    assert (info.value.code, info.value.name) == (104, "KERNEL_FAILED")


def test_an_invalid_runtime_env_is_a_config_error_with_the_runtime_message():
    w = simpler.Worker()
    with pytest.raises(simpler.ConfigError) as info:
        w.run(lambda o: None, simpler.CallConfig(runtime_env={"ring_task_windw": 64}))
    assert str(info.value).startswith("unknown runtime_env key `ring_task_windw`")
    with pytest.raises(simpler.ConfigError, match=r"unknown runtime \"gpu\"; runtimes: tmr \(tensormap_and_ringbuffer\), hbg \(host_build_graph\)"):
        w.run(lambda o: None, simpler.CallConfig(runtime="gpu"))


def test_the_orchestrator_is_only_valid_inside_its_function():
    w = simpler.Worker()
    kept = []
    w.run(kept.append)
    with pytest.raises(simpler.SimplerError, match="this orchestrator belongs to an orchestration function that has returned; use it only inside it"):
        kept[0].submit("noop")


def test_unknown_kernels_and_untagged_tensors_are_named():
    w = simpler.Worker()
    x = w.alloc((4,), "float32")

    def unknown(o):
        o.submit("no_such_kernel")

    with pytest.raises(simpler.FatalError) as info:
        w.run(unknown)
    assert "unknown kernel 'no_such_kernel'; registered kernels: 0 add, 1 add_scalar, 2 mul" in str(info.value)
    assert isinstance(info.value.__cause__, simpler.SimplerError)

    def bare(o):
        o.submit("noop", x)

    with pytest.raises(simpler.FatalError, match="is a bare tensor: tag it INPUT"):
        w.run(bare)


def test_a_refused_submit_is_named_and_its_stopped_error_is_the_cause():
    import traceback

    w = simpler.Worker()
    a = w.tensor(np.ones(8, np.float32))

    def orch(o):
        o.submit("add", INPUT(a), INPUT(a), OUTPUT((8,)))
        o.submit("add", INPUT(a), INPUT(a), OUTPUT((8,)), block_num=0)  # refused-submit
        o.submit("add", INPUT(a), INPUT(a), OUTPUT((8,)))

    with pytest.raises(simpler.FatalError) as info:
        w.run(orch)  # refused-run
    e = info.value
    submit = this_line_of("# refused-submit")
    assert str(e) == (
        f"fatal 5 (INVALID_ARGS): invalid submit in scope at test_errors.py:{this_line_of('# refused-run')}: "
        f"block_num must be at least 1 (raised by o.submit at test_errors.py:{submit})"
    )
    assert isinstance(e.__cause__, simpler.StoppedError)
    last = traceback.extract_tb(e.__cause__.__traceback__)[-1]
    assert (last.lineno, last.name) == (submit, "orch")


@pytest.mark.parametrize("runtime", ["tmr", "hbg"])
def test_registering_a_kernel_during_a_run_is_a_clear_error(runtime):
    w = simpler.Worker(runtime=runtime)
    seen = []

    def orch(o):
        try:
            w.register_kernel(30, "late", lambda ctx: None)
        except simpler.SimplerError as e:
            seen.append(str(e))
        o.submit("noop")

    assert w.run(orch).status == "completed"
    assert seen == [
        "cannot register a kernel while a run of this worker is in flight; register kernels before w.run"
    ]
    w.register_kernel(30, "late", lambda ctx: None)  # after the run: fine
    assert (30, "late", "aiv") in w.kernels()


def test_a_generator_or_async_orchestration_is_refused_at_once():
    w = simpler.Worker()

    def gen(o):
        yield o.submit("noop")

    async def coro(o):
        o.submit("noop")

    with pytest.raises(TypeError, match=r"the orchestration .*gen is a generator function \(it has a yield\): "
                                        r"w.run calls it once and none of its body would run"):
        w.run(gen)
    with pytest.raises(TypeError, match=r"the orchestration .*coro is an async def"):
        w.run(coro)
    # Hidden behind a lambda, it is seen when it returns: the run stops before any submit.
    with pytest.raises(simpler.FatalError) as info:
        w.run(lambda o: gen(o))
    assert str(info.value) == (
        "fatal 9 (EXPLICIT_ORCH_FATAL): orchestration returned an error: the orchestration function returned "
        "a generator (the function has a yield): w.run calls it once and none of its body ran; write it as a "
        "plain def without yield"
    )
    assert info.value.report.tasks == 0
    # Other return values stay allowed.
    assert w.run(lambda o: o.submit("noop")).tasks == 1
