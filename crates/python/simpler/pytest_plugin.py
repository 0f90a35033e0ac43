"""The pytest plugin (registered through the ``pytest11`` entry point): the original's scene-test
flags for every ``Worker`` a test creates.

    pytest tests/ --enable-scope-stats --enable-dep-gen --enable-l2-swimlane --dump-args=2 --runtime hbg

Each flag turns its diagnostic on for every run of every test (a ``CallConfig`` that sets the
field itself wins); ``--runtime`` sets every worker's runtime. A run with a diagnostic on writes
to ``outputs/<test>_<case>_<UTC stamp>/`` (``<case>`` is the parametrize id, else
``default``; a second run of the same test gets ``_2``, ...), and the views
(``scope_stats.html``, ``deps_viewer.txt``, ``merged_swimlane.json``) are rendered after it,
as the original's scene tests do.
"""

import argparse

import pytest

from . import _session
from .config import CallConfig


def level(flag: str, low: int, high: int):
    """An argparse type for ``flag``'s optional LEVEL: an integer ``low..high``, else an error
    that says how to write the flag (a bare flag takes the next argument when it is not an
    option, so ``--dump-args tests/`` reads ``tests/`` as the level)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a level {low}-{high}: write {flag}=LEVEL, or put the test paths "
                f"before a bare {flag}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"level {value} is not in {low}-{high}")
        return value

    return parse


def pytest_addoption(parser):
    """Registers the flags."""
    group = parser.getgroup("simpler", "simpler diagnostics (every Worker of every test)")
    group.addoption("--enable-scope-stats", action="store_true", default=False,
                    help="per-scope resource samples (scope_stats/scope_stats.jsonl + scope_stats.html)")
    group.addoption("--enable-dep-gen", action="store_true", default=False,
                    help="the dependency graph (deps.json + deps_viewer.txt)")
    group.addoption("--enable-l2-swimlane", "--enable-chip-swimlane", dest="enable_l2_swimlane",
                    nargs="?", const=4, type=level("--enable-l2-swimlane", 0, 4), default=None,
                    metavar="LEVEL",
                    help="per-task timing records at LEVEL 1-4 (the bare flag: 4) and the Perfetto "
                         "trace merged_swimlane.json")
    group.addoption("--dump-args", nargs="?", const=1, type=level("--dump-args", 0, 3), default=None,
                    metavar="LEVEL",
                    help="task argument data (args_dump/): 1 partial (the bare flag), 2 full, 3 hybrid")
    group.addoption("--runtime", choices=["tmr", "hbg"], default=None,
                    help="the runtime of every Worker a test creates")


def defaults_of(config) -> CallConfig:
    """The ``CallConfig`` layer of the command line's flags (``None`` where a flag is absent)."""
    def on(name):
        return True if config.getoption(name) else None

    return CallConfig(
        enable_scope_stats=on("enable_scope_stats"),
        enable_dep_gen=on("enable_dep_gen"),
        enable_l2_swimlane=config.getoption("enable_l2_swimlane"),
        dump_args=config.getoption("dump_args"),
    )


def folder_base(item) -> str:
    """``<test>_<case>``: the test function's name and its parametrize id (else ``default``)."""
    callspec = getattr(item, "callspec", None)
    case = callspec.id if callspec is not None else "default"
    return f"{getattr(item, 'originalname', item.name)}_{case}"


@pytest.fixture(autouse=True)
def _simpler_diagnostics(request):
    """Applies the flags to every ``Worker`` and run of the test."""
    _session.active = _session.Defaults(
        config=defaults_of(request.config),
        runtime=request.config.getoption("runtime"),
        folder_base=folder_base(request.node),
    )
    try:
        yield _session.active
    finally:
        _session.active = None
