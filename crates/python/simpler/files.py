"""Built-in examples, workload files and ``--from-deps`` re-runs, from Python: the runners of
``simpler run``, with a ``CallConfig`` as the command line's layer."""

import os
from typing import List, NamedTuple, Optional, Sequence, Tuple

from . import _native, _session
from .config import CallConfig
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


def _layer(config: Optional[CallConfig], base: str) -> Tuple[CallConfig, bool]:
    cfg = config if config is not None else CallConfig()
    active = _session.active
    if active is not None:
        # The flags under the caller's config; --runtime under both.
        cfg = CallConfig(runtime=active.runtime).under(active.config.under(cfg))
        base = active.folder_base
    return cfg.with_output_folder(base), active is not None


def _params(params) -> List[str]:
    if params is None:
        return []
    if isinstance(params, dict):
        return [f"{k}={v}" for k, v in params.items()]
    return list(params)


def run_example(name: str, params=None, config: Optional[CallConfig] = None) -> RunResult:
    """Runs the built-in example ``name`` (``simpler.examples()``) with ``params``
    (``{"size": 4096}``) and its golden check."""
    cfg, views = _layer(config, f"{name}_default")
    report, checks = _native.run_example(name, _params(params), cfg, views)
    return RunResult(report, checks)


def run_workload(path, params=None, config: Optional[CallConfig] = None) -> RunResult:
    """Runs a workload file (``docs/workloads.md``); ``params`` override its constants."""
    stem = os.path.splitext(os.path.basename(str(path)))[0]
    cfg, views = _layer(config, stem)
    report, checks = _native.run_workload(str(path), _params(params), cfg, views)
    return RunResult(report, checks)


def run_from_deps(path, config: Optional[CallConfig] = None, allow_incomplete: bool = False) -> RunResult:
    """Re-runs the tasks of a captured ``deps.json`` (no-op kernels, same views and deps);
    the last check says how many captured edges were wired again."""
    cfg, views = _layer(config, "from_deps")
    report, checks = _native.run_from_deps(str(path), cfg, allow_incomplete, views)
    return RunResult(report, checks)


__all__: Sequence[str] = ["RunResult", "run_example", "run_from_deps", "run_workload"]
