"""``CallConfig``: one run's settings. Every field defaults to ``None``, "not set": the
worker's runtime and clusters go under it, the pytest plugin's flags fill what it leaves unset,
and the runtime's defaults fill the rest (``docs/configuration.md``)."""

import os
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from typing import Dict, List, Optional, Union

from . import _native

RuntimeEnvValue = Union[int, List[int], str]


@dataclass
class CallConfig:
    """The run configuration, named as the original's ``CallConfig`` (``docs/python.md``)."""

    #: ``"tmr"`` or ``"hbg"``.
    runtime: Optional[str] = None
    #: Clusters (1 AIC + 2 AIV each).
    clusters: Optional[int] = None
    #: Scheduler threads (0 = automatic).
    scheduler_threads: Optional[int] = None
    #: Ring sizes: ``{"ring_task_window": [1024, 2048, 4096, 8192], "ring_heap": 1 << 20}``.
    runtime_env: Optional[Dict[str, RuntimeEnvValue]] = None
    #: Tensor-map entry capacity.
    tensormap_capacity: Optional[int] = None
    #: Per-scope resource samples (``scope_stats/scope_stats.jsonl``).
    enable_scope_stats: Optional[bool] = None
    #: The dependency graph (``deps.json``).
    enable_dep_gen: Optional[bool] = None
    #: Per-task timing records: ``True`` (level 4, everything) or a level 0..4 as the original's
    #: (1 kernel start/end, 2 + dispatch/finish, 3 + scheduler phases, 4 + submit spans).
    enable_l2_swimlane: Optional[Union[bool, int]] = None
    #: Args dump level 0..3 (``args_dump/``).
    dump_args: Optional[int] = None
    #: The artifact folder; default ``outputs/<name>_<case>_<UTC stamp>/`` when a diagnostic is on.
    output_prefix: Optional[str] = None
    #: Run timeout, seconds.
    timeout: Optional[float] = None
    #: Keep the wired dependency edges in the report (``Report.edges``); on unless ``False``.
    record_edges: Optional[bool] = None
    #: What runs, for the run manifest.
    subject: Optional[str] = None

    def any_diagnostic(self) -> bool:
        """True when a diagnostic is on."""
        return bool(
            self.enable_scope_stats
            or self.enable_dep_gen
            or self.enable_l2_swimlane
            or (self.dump_args or 0) > 0
        )

    def under(self, over: "CallConfig") -> "CallConfig":
        """This config with every field that ``over`` sets taken from ``over``."""
        changes = {f.name: getattr(over, f.name) for f in fields(over) if getattr(over, f.name) is not None}
        return replace(self, **changes)

    def with_output_folder(self, base: str) -> "CallConfig":
        """This config, with a new ``outputs/<base>_<stamp>/`` folder when a diagnostic is on
        and no ``output_prefix`` is set."""
        if self.output_prefix is not None or not self.any_diagnostic():
            return self
        return replace(self, output_prefix=str(_native.output_folder(base)))


def as_config(value) -> CallConfig:
    """``value`` as a ``CallConfig``: one itself, ``None`` (every field unset), or a dict of its
    fields (``{"enable_dep_gen": True}``); anything else, or an unknown field, is a
    ``TypeError`` that names the fields."""
    __tracebackhide__ = True
    if value is None:
        return CallConfig()
    if isinstance(value, CallConfig):
        return value
    names = [f.name for f in fields(CallConfig)]
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise TypeError(f"unknown CallConfig field(s) {', '.join(map(repr, unknown))}; fields: {', '.join(names)}")
        return CallConfig(**value)
    raise TypeError(f"config must be a CallConfig or a dict of its fields ({', '.join(names)}), not {type(value).__name__}")


@contextmanager
def removed_if_left_empty(before: CallConfig, after: CallConfig):
    """Runs the block; when it raises and ``after`` names a folder that ``before`` did not
    (one ``with_output_folder`` made), removes that folder if nothing was written in it: a run
    refused before it claimed its folder (an invalid config) leaves no empty folder behind."""
    try:
        yield
    except BaseException:
        made = after.output_prefix if after.output_prefix != before.output_prefix else None
        if made is not None:
            try:
                os.rmdir(made)  # removes nothing unless the folder is empty
            except OSError:
                pass
        raise


__all__ = ["CallConfig", "as_config"]
