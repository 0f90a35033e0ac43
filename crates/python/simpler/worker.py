"""``Worker``: external tensors to and from NumPy, runs of Python orchestrations, background
diagnostics and the ``flush_diagnostics`` barrier."""

import contextvars
import inspect
import os
import sys
from typing import Callable, Optional, Sequence, Union

import numpy as np

from . import _native, _session
from .config import CallConfig, as_config, removed_if_left_empty
from ._native import ConfigError, Orchestrator, Report, Tensor
from .kernel import KernelContext

#: NumPy dtypes by the runtime's names; ``bfloat16`` has no NumPy dtype (read it as ``uint16``
#: bits with ``Worker.read_bytes``).
NUMPY_DTYPES = {
    "float32": np.float32,
    "float16": np.float16,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "bool": np.bool_,
}


def caller_site(depth: int = 2) -> str:
    """``"<file base name>:<line>"`` of the caller ``depth`` frames up."""
    frame = sys._getframe(depth)
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def numpy_dtype(t: Tensor) -> np.dtype:
    """The NumPy dtype of tensor ``t``; a ``TensorError`` for ``bfloat16``."""
    dt = NUMPY_DTYPES.get(t.dtype)
    if dt is None:
        raise _native.TensorError(f"a {t.dtype} tensor has no NumPy dtype; use read_bytes / write_bytes")
    return np.dtype(dt)


def native_order(array: np.ndarray) -> np.ndarray:
    """``array``, byte-swapped to the machine's order when it is not (``>f4`` on x86)."""
    if array.dtype.isnative:
        return array
    return array.astype(array.dtype.newbyteorder("="))


def _dtype_of(array: np.ndarray) -> str:
    for name, dt in NUMPY_DTYPES.items():
        if array.dtype == np.dtype(dt):
            return name
    raise _native.TensorError(
        f"NumPy dtype {array.dtype} has no runtime dtype; dtypes: {', '.join(NUMPY_DTYPES)}"
    )


def check_orchestration(orchestration) -> None:
    """A ``TypeError`` for what cannot be an orchestration function: a generator function or
    an ``async def`` (``w.run`` calls the function once; neither would run its body)."""
    __tracebackhide__ = True
    if not callable(orchestration):
        raise TypeError(f"the orchestration must be a function of the orchestrator, not {type(orchestration).__name__}")
    if inspect.isgeneratorfunction(orchestration) or inspect.isasyncgenfunction(orchestration):
        kind = "a generator function (it has a yield)"
    elif inspect.iscoroutinefunction(orchestration):
        kind = "an async def"
    else:
        return
    raise TypeError(
        f"the orchestration {getattr(orchestration, '__qualname__', orchestration)!s} is {kind}: w.run calls it "
        "once and none of its body would run; write it as a plain def without yield"
    )


class Worker:
    """Runs orchestrations on the simulated accelerator.

    ``runtime`` (``"tmr"`` or ``"hbg"``) and ``clusters`` are this worker's defaults; a run's
    ``CallConfig`` may override them. ``collect_across_runs=True`` hands scope-stats rendering
    and writing to a background writer: ``run()`` may return before the files exist, and
    ``flush_diagnostics()`` is the barrier. Every worker has the built-in kernel library of the
    workload files (``add``, ``add_scalar``, ``mul``, ``copy``, ``fill``, ``matmul``, ``noop``,
    ``noop_aic``, ``busy``, ``busy_aic``). Under the pytest plugin, ``--runtime`` sets every
    worker's runtime.
    """

    def __init__(
        self,
        runtime: str = "tmr",
        clusters: Optional[int] = None,
        collect_across_runs: bool = False,
    ):
        # Checked here, not at the first run: a bad value used to be blamed on
        # CallConfig.clusters, which the caller never set (found by a review).
        if clusters is not None and (
            isinstance(clusters, bool) or not isinstance(clusters, int) or clusters < 1
        ):
            raise ConfigError(
                f"Worker(clusters={clusters!r}): a number of clusters, 1 or more (or None for the "
                "default)"
            )
        self._runtime = runtime
        self.clusters = clusters
        self.collect_across_runs = collect_across_runs
        self._native = _native.NativeWorker(collect_across_runs)

    @property
    def runtime(self) -> str:
        """The runtime of this worker's runs: the pytest plugin's ``--runtime`` during its
        session (read at each run, so a worker built at module level or in a fixture of any
        scope takes it too), else the one it was built with."""
        active = _session.active
        if active is not None and active.runtime is not None:
            return active.runtime
        return self._runtime

    @runtime.setter
    def runtime(self, value: str) -> None:
        self._runtime = value

    # ---- tensors -------------------------------------------------------------------------

    def alloc(self, shape: Union[int, Sequence[int]], dtype="float32") -> Tensor:
        """A zeroed external tensor; ``dtype`` a name (``"float32"``) or a NumPy dtype
        (``np.float32``)."""
        __tracebackhide__ = True
        return self._native.alloc(shape, dtype)

    def tensor(self, array) -> Tensor:
        """A new external tensor holding a copy of ``array`` (a NumPy array or anything
        ``np.asarray`` takes; either byte order)."""
        __tracebackhide__ = True
        array = native_order(np.asarray(array))
        t = self._native.alloc(list(array.shape), _dtype_of(array))
        self.write(t, array)
        return t

    def write(self, t: Tensor, array) -> None:
        """Copies ``array`` into the elements of view ``t`` (same shape, same dtype; either
        byte order)."""
        __tracebackhide__ = True
        dt = numpy_dtype(t)
        array = native_order(np.asarray(array))
        if array.dtype != dt:
            raise _native.TensorError(f"array dtype {array.dtype} does not match the tensor's {t.dtype}")
        if tuple(array.shape) != tuple(t.shape):
            raise _native.TensorError(f"array shape {tuple(array.shape)} does not match the view's {t.shape}")
        little = np.ascontiguousarray(array, dtype=dt.newbyteorder("<"))
        self._native.write_bytes(t, little.tobytes())

    def read(self, t: Tensor) -> np.ndarray:
        """The elements of view ``t`` as a new NumPy array of its shape."""
        __tracebackhide__ = True
        dt = numpy_dtype(t)
        data = self._native.read_bytes(t)
        return np.frombuffer(data, dtype=dt.newbyteorder("<")).astype(dt).reshape(t.shape)

    def write_bytes(self, t: Tensor, data: bytes) -> None:
        """Writes the view's elements from little-endian bytes (row-major)."""
        self._native.write_bytes(t, data)

    def read_bytes(self, t: Tensor) -> bytes:
        """The view's elements as little-endian bytes (row-major)."""
        return self._native.read_bytes(t)

    def free(self, t: Tensor) -> None:
        """Frees an external tensor's buffer."""
        self._native.free(t)

    def register_kernel(self, func_id: int, name: str, body: Callable[[KernelContext], None], core: str = "aiv") -> None:
        """Registers the Python callable ``body`` as kernel ``func_id`` (submitted by ``name``
        or id) on ``core`` (``"aiv"`` or ``"aic"``); ``body(ctx)`` gets a ``KernelContext``
        once per block. Only these kernels run Python; with any registered, every submit of
        this worker releases the GIL (``docs/python.md``, "Cost"). The blocks of a task run
        concurrently: each writes only its own part (``ctx.write(i, values, offset=lo)``). A
        kernel returns ``None``. Refused while a run of this worker is in flight."""
        __tracebackhide__ = True

        def kernel(native):
            __tracebackhide__ = True
            return body(KernelContext(native))

        self._native.register_kernel(func_id, name, core, kernel)

    def kernels(self):
        """``(func_id, name, core)`` of every registered kernel."""
        return self._native.kernels()

    # ---- runs ----------------------------------------------------------------------------

    def run(
        self,
        orchestration: Callable[[Orchestrator], None],
        config: Union[CallConfig, dict, None] = None,
        render_views: Optional[bool] = None,
    ) -> Report:
        """Runs ``orchestration(o)`` and returns its ``Report``.

        ``config`` is a ``CallConfig`` or a dict of its fields. The root scope's site is this
        call's ``file.py:LINE``. The orchestration runs in a copy of this call's context
        (``contextvars``: ``np.errstate``, ``decimal``), each Python kernel call in a copy of
        it too. A run that stops on a fatal raises ``FatalError`` (``code``, ``name``,
        ``resource``, ``ring``, ``capacity``, ``site``, ``key``, ``report``), whose
        ``__cause__`` is the Python exception behind it: one the orchestration raised (which
        stops the run with EXPLICIT_ORCH_FATAL (9)), a ``StoppedError`` it let propagate, or
        a kernel's. An exception that is not an ``Exception`` (``KeyboardInterrupt``,
        ``SystemExit``) stops the run and is raised as itself. With a diagnostic on and no
        ``output_prefix``, the artifacts go to a new ``outputs/<name>_<case>_<stamp>/``.
        ``render_views`` (default: on under the pytest plugin) renders ``scope_stats.html``,
        ``deps_viewer.txt`` and ``merged_swimlane.json`` after the run, as ``simpler run``
        does.
        """
        __tracebackhide__ = True
        site = caller_site()
        check_orchestration(orchestration)
        layered, cfg, views = self._effective(as_config(config), render_views, site)
        base = CallConfig(runtime=self.runtime, clusters=self.clusters)
        context, kernel_context = contextvars.copy_context(), contextvars.copy_context()
        with removed_if_left_empty(layered, cfg):
            return self._native.run(orchestration, cfg, base, site, views, context, kernel_context)

    def _effective(self, config: CallConfig, render_views: Optional[bool], site: str):
        """The run's config under the plugin's flags (as layered, then with its output folder
        made when a diagnostic is on) and whether views are rendered."""
        cfg = config
        active = _session.active
        folder_base = _session.folder_base()
        if folder_base is None:
            folder_base = site.split(".")[0] + "_default"
        if active is not None:
            cfg = active.config.under(cfg)
        if render_views is None:
            render_views = active is not None
        return cfg, cfg.with_output_folder(folder_base), render_views

    def flush_diagnostics(self) -> None:
        """Publishes every background export so far (``collect_across_runs``); raises
        ``DiagnosticsError``, for the worker's life, once any run's scope stats were lost."""
        self._native.flush_diagnostics()

    def hold_background_writer(self, hold: bool) -> None:
        """Test hook: holds (or releases) the background writer."""
        self._native.hold_background_writer(hold)
