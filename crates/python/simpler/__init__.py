"""simpler: a task-graph runtime on a simulated AIC/AIV accelerator, from Python.

The Rust runtime does the work (``simpler._native``, built from the workspace with PyO3); this
package adds NumPy in and out, the call sites of scopes and runs, the pytest plugin's defaults
and the tools as modules. ``docs/python.md`` is the guide.

    import numpy as np
    import simpler
    from simpler import INPUT, OUTPUT, OUTPUT_EXISTING

    w = simpler.Worker(runtime="tmr")
    a = w.tensor(np.full(16, 2, np.float32))
    f = w.alloc((16,), "float32")

    def orch(o):
        c = o.submit("add", INPUT(a), INPUT(a), OUTPUT((16,), "float32")).output(0)
        o.submit("add_scalar", INPUT(c), OUTPUT_EXISTING(f), 1.0)

    report = w.run(orch)
    assert (w.read(f) == 5).all()
"""

from ._native import (
    INOUT,
    INPUT,
    NO_DEP,
    OUTPUT,
    OUTPUT_EXISTING,
    Arg,
    ConfigError,
    DiagnosticsError,
    FatalError,
    Orchestrator,
    Report,
    RunRefusedError,
    Scalar,
    SimplerError,
    StoppedError,
    Task,
    Tensor,
    TensorCreateInfo,
    TensorError,
    WorkloadError,
    examples,
    scalar,
    task_id,
)
from .config import CallConfig
from .files import RunResult, run_example, run_from_deps, run_workload
from .kernel import KernelContext
from .worker import Worker

__all__ = [
    "INOUT",
    "INPUT",
    "NO_DEP",
    "OUTPUT",
    "OUTPUT_EXISTING",
    "Arg",
    "CallConfig",
    "ConfigError",
    "DiagnosticsError",
    "FatalError",
    "KernelContext",
    "Orchestrator",
    "Report",
    "RunRefusedError",
    "RunResult",
    "Scalar",
    "SimplerError",
    "StoppedError",
    "Task",
    "Tensor",
    "TensorCreateInfo",
    "TensorError",
    "Worker",
    "WorkloadError",
    "examples",
    "run_example",
    "run_from_deps",
    "run_workload",
    "scalar",
    "task_id",
]
