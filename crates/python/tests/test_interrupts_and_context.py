"""A `KeyboardInterrupt` or `SystemExit` raised in a run stops it and leaves `w.run` as itself
(not a FatalError), under both runtimes; the orchestration and Python kernels run in a copy of
the caller's context (`contextvars`: `np.errstate`, a ContextVar), under both runtimes."""

import contextvars
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import simpler
from simpler import INPUT, OUTPUT_EXISTING

RUNTIMES = ["tmr", "hbg"]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(4)], ids=["KeyboardInterrupt", "SystemExit"])
def test_a_base_exception_of_the_orchestration_stops_the_run_and_is_raised_as_itself(runtime, exc):
    w = simpler.Worker(runtime=runtime)
    x = w.tensor(np.zeros(4, np.float32))

    def orch(o):
        o.submit("add_scalar", INPUT(x), OUTPUT_EXISTING(x), 1.0)
        raise exc

    with pytest.raises(type(exc)) as info:
        w.run(orch)
    assert info.value is exc
    # The run stopped; the worker runs the next one.
    assert w.run(lambda o: o.submit("noop")).status == "completed"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_base_exception_of_a_kernel_is_raised_as_itself(runtime):
    w = simpler.Worker(runtime=runtime)

    def stop(ctx):
        raise KeyboardInterrupt

    w.register_kernel(20, "stop", stop)
    with pytest.raises(KeyboardInterrupt):
        w.run(lambda o: o.submit("stop"))


def test_ctrl_c_stops_an_hbg_orchestration_on_the_main_thread(tmp_path):
    script = tmp_path / "long.py"
    script.write_text(textwrap.dedent("""
        import sys, time, simpler
        w = simpler.Worker(runtime="hbg")
        def orch(o):
            print("ready", flush=True)
            for _ in range(300):
                time.sleep(0.05)
                o.submit("noop")
        try:
            w.run(orch)
        except KeyboardInterrupt:
            print("KeyboardInterrupt from w.run", flush=True)
            sys.exit(3)
        print("completed", flush=True)
    """))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    os.kill(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert (p.returncode, out.strip()) == (3, "KeyboardInterrupt from w.run"), err


VAR = contextvars.ContextVar("simpler_test_var", default="unset")


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_orchestration_runs_in_the_callers_context(runtime):
    w = simpler.Worker(runtime=runtime)
    seen = []

    def orch(o):
        seen.append(VAR.get())
        np.ones(1) / np.zeros(1)  # raises under errstate(divide="raise")

    token = VAR.set("caller's")
    try:
        with np.errstate(divide="raise"):
            with pytest.raises(simpler.FatalError) as info:
                w.run(orch)
    finally:
        VAR.reset(token)
    assert seen == ["caller's"]
    assert (info.value.code, info.value.name) == (9, "EXPLICIT_ORCH_FATAL")
    assert isinstance(info.value.__cause__, FloatingPointError)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_python_kernels_run_in_a_copy_of_the_callers_context(runtime):
    w = simpler.Worker(runtime=runtime)
    seen = []

    def divide(ctx):
        seen.append(VAR.get())
        VAR.set("changed by a kernel")  # in its own copy: the next block does not see it
        ctx.write(0, np.ones(4, np.float32) / np.zeros(4, np.float32))

    w.register_kernel(21, "divide", divide)
    out = w.alloc((4,), "float32")
    token = VAR.set("caller's")
    try:
        with np.errstate(divide="ignore"):
            w.run(lambda o: o.submit("divide", OUTPUT_EXISTING(out), block_num=2))
        assert VAR.get() == "caller's"
        with np.errstate(divide="raise"):
            with pytest.raises(simpler.FatalError) as info:
                w.run(lambda o: o.submit("divide", OUTPUT_EXISTING(out)))
    finally:
        VAR.reset(token)
    assert seen[:2] == ["caller's", "caller's"]
    assert (info.value.code, info.value.name) == (104, "KERNEL_FAILED")
    assert isinstance(info.value.__cause__, FloatingPointError)
