"""Built-in examples, workload files and ``--from-deps`` re-runs, from Python: the runners of
``simpler run``, with a ``CallConfig`` as the command line's layer."""

import os
from typing import List, NamedTuple, Optional, Sequence, Tuple

from . import _native, _session
from .config import CallConfig, as_config, removed_if_left_empty
from ._native import Report


class RunResult(NamedTuple):
    """A finished run and its golden checks."""

    report: Report
    #: ``(passed, description)`` per check.
    checks: List[Tuple[bool, str]]

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(ok for ok, _ in self.checks)


def _layer(config: Optional[CallConfig], base: str) -> Tuple[CallConfig, CallConfig, bool, str]:
    """The caller's config under the pytest plugin's flags: as layered, then with its output
    folder made when a diagnostic is on; whether views are rendered; the folder's base name."""
    cfg = as_config(config)
    active = _session.active
    if active is not None:
        # The flags under the caller's config; --runtime under both.
        cfg = CallConfig(runtime=active.runtime).under(active.config.under(cfg))
    base = _session.folder_base() or base
    return cfg, cfg.with_output_folder(base), active is not None, base


def _params(params) -> List[str]:
    """``NAME=VALUE`` overrides from a dict, a list of such strings, or one such string."""
    if params is None:
        return []
    if isinstance(params, dict):
        return [f"{k}={v}" for k, v in params.items()]
    if isinstance(params, str):
        return [params]
    return list(params)


def run_example(name: str, params=None, config: Optional[CallConfig] = None) -> RunResult:
    """Runs the built-in example ``name`` (``simpler.examples()``) with ``params``
    (``{"size": 4096}``) and its golden check."""
    __tracebackhide__ = True
    layered, cfg, views, _ = _layer(config, f"{name}_default")
    with removed_if_left_empty(layered, cfg):
        report, checks = _native.run_example(name, _params(params), cfg, views)
    return RunResult(report, checks)


def run_workload(path, params=None, config: Optional[CallConfig] = None) -> RunResult:
    """Runs a workload file (``docs/workloads.md``); ``params`` override its constants. A
    diagnostic the file turns on writes to a new ``outputs/<stem>_<stamp>/`` unless the file or
    ``config`` names a folder, as ``simpler run FILE.json`` does."""
    __tracebackhide__ = True
    stem = os.path.splitext(os.path.basename(str(path)))[0]
    layered, cfg, views, base = _layer(config, stem)
    with removed_if_left_empty(layered, cfg):
        report, checks = _native.run_workload(str(path), _params(params), cfg, views, base)
    return RunResult(report, checks)


def run_from_deps(path, config: Optional[CallConfig] = None, allow_incomplete: bool = False) -> RunResult:
    """Re-runs the tasks of a captured ``deps.json`` (no-op kernels, same views and deps);
    the last check says how many captured edges were wired again."""
    __tracebackhide__ = True
    layered, cfg, views, _ = _layer(config, "from_deps")
    with removed_if_left_empty(layered, cfg):
        report, checks = _native.run_from_deps(str(path), cfg, allow_incomplete, views)
    return RunResult(report, checks)


__all__: Sequence[str] = ["RunResult", "run_example", "run_from_deps", "run_workload"]
