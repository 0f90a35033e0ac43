"""The pytest plugin (registered through the ``pytest11`` entry point; ``-p no:simpler`` turns
it off): the original's scene-test flags for every ``Worker`` run of the session.

    pytest tests/ --enable-scope-stats --enable-dep-gen --enable-l2-swimlane --dump-args=2 --runtime hbg

Each flag turns its diagnostic on for every run of the session, in a test, in a fixture of any
scope or at module level (a ``CallConfig`` that sets the field itself wins); ``--runtime`` sets
every worker's runtime. A run with a diagnostic on writes to ``outputs/<test>_<case>_<UTC
stamp>/`` (``<case>`` is the parametrize id, else ``default``; a second run of the same test
gets ``_2``, ...), or ``outputs/<fixture>_<scope>_<stamp>/`` in the setup or teardown of a
module-, class-, package- or session-scoped fixture, and the views (``scope_stats.html``,
``deps_viewer.txt``, ``merged_swimlane.json``) are rendered after it, as the original's scene
tests do.

The options are registered once the project's initial ``conftest.py`` files are loaded: an
option name the project already defines stays the project's, and the plugin then reads the
project's value for it when it means what the plugin's flag means (``True`` for a switch, a
level in range, a runtime name), else ignores it.
"""

import argparse
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import pytest

from . import _session
from .config import CallConfig

RUNTIMES = {"tmr": "tmr", "hbg": "hbg", "tensormap_and_ringbuffer": "tmr", "host_build_graph": "hbg"}


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


def switch(value) -> Optional[bool]:
    """A project's value of a switch the plugin also has: ``True`` when on."""
    return True if value is True else None


def level_of(low: int, high: int, bare: int) -> Callable[[Any], Optional[int]]:
    """A project's value of a level flag: ``True`` (a bare switch) is ``bare``, an int or its
    text in ``low..high`` is itself, anything else is not this meaning."""

    def read(value) -> Optional[int]:
        if value is True:
            return bare
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        return None

    return read


def runtime_of(value) -> Optional[str]:
    """A project's value of ``--runtime``: a runtime's name (short or long), else ``None``."""
    return RUNTIMES.get(value) if isinstance(value, str) else None


class Option(NamedTuple):
    """One of the plugin's options and how to read a project's own option of that name."""

    names: Tuple[str, ...]
    kwargs: Dict[str, Any]
    read_project: Callable[[Any], Any]


OPTIONS: List[Option] = [
    Option(("--enable-scope-stats",), dict(
        action="store_true", default=False,
        help="per-scope resource samples (scope_stats/scope_stats.jsonl + scope_stats.html)"), switch),
    Option(("--enable-dep-gen",), dict(
        action="store_true", default=False, help="the dependency graph (deps.json + deps_viewer.txt)"), switch),
    Option(("--enable-l2-swimlane", "--enable-chip-swimlane"), dict(
        nargs="?", const=4, type=level("--enable-l2-swimlane", 0, 4), default=None, metavar="LEVEL",
        help="per-task timing records at LEVEL 1-4 (the bare flag: 4) and the Perfetto trace merged_swimlane.json"),
        level_of(0, 4, 4)),
    Option(("--dump-args",), dict(
        nargs="?", const=1, type=level("--dump-args", 0, 3), default=None, metavar="LEVEL",
        help="task argument data (args_dump/): 1 partial (the bare flag), 2 full, 3 hybrid"), level_of(0, 3, 1)),
    Option(("--runtime",), dict(
        choices=["tmr", "hbg"], default=None, help="the runtime of every Worker run of the session"), runtime_of),
]

#: Per config: for each option (by its first name), how to read its value.
READERS = pytest.StashKey[Dict[str, Callable[[Any], Any]]]()
#: Per config: the session defaults that were active before it (an in-process nested run).
PREVIOUS = pytest.StashKey[Optional[_session.Defaults]]()


def dest(option: Option) -> str:
    """The plugin's own destination of ``option`` (never one a project uses)."""
    return "simpler_" + option.names[0].lstrip("-").replace("-", "_")


def add_options(parser, config) -> None:
    """Registers the option names the project left free (see the module docs) and records on
    ``config`` how each option is read: the plugin's own value when given, else the project's
    value of a name it owns, when that value means what the plugin's flag means."""
    group = parser.getgroup("simpler", "simpler diagnostics (every Worker run of the session)")
    taken = set(getattr(parser, "_opt2dest", {}))
    readers: Dict[str, Callable[[Any], Any]] = {}
    for option in OPTIONS:
        free = [n for n in option.names if n not in taken]
        ours: Optional[str] = dest(option)
        try:
            if not free:
                raise ValueError("every name is the project's")
            group.addoption(*free, dest=ours, **option.kwargs)
        except (ValueError, argparse.ArgumentError):
            ours = None
        projects = [n for n in option.names if n in taken]

        def read(c, ours=ours, projects=projects, project=option.read_project):
            mine = c.getoption(ours) if ours is not None else None
            if mine not in (None, False):
                return mine
            for name in projects:
                theirs = project(c.getoption(name, default=None))
                if theirs is not None:
                    return theirs
            return mine

        readers[option.names[0]] = read
    config.stash[READERS] = readers


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Adds the options after the project's initial conftests added theirs."""
    yield
    add_options(parser, early_config)


def value(config, name: str):
    """The value of the plugin's option ``name`` (its own, or the project's read as its own)."""
    readers = config.stash.get(READERS, {})
    reader = readers.get(name)
    return reader(config) if reader is not None else None


def defaults_of(config) -> CallConfig:
    """The ``CallConfig`` layer of the command line's flags (``None`` where a flag is absent)."""

    def on(name):
        return True if value(config, name) else None

    return CallConfig(
        enable_scope_stats=on("--enable-scope-stats"),
        enable_dep_gen=on("--enable-dep-gen"),
        enable_l2_swimlane=value(config, "--enable-l2-swimlane"),
        dump_args=value(config, "--dump-args"),
    )


def pytest_configure(config):
    """Applies the flags to every run of the session, whatever runs it."""
    config.stash[PREVIOUS] = _session.active
    _session.active = _session.Defaults(config=defaults_of(config), runtime=value(config, "--runtime"))


def pytest_unconfigure(config):
    """Ends the session's defaults."""
    _session.active = config.stash.get(PREVIOUS, None)


def folder_base(item) -> str:
    """``<test>_<case>``: the test function's name and its parametrize id (else ``default``)."""
    callspec = getattr(item, "callspec", None)
    case = callspec.id if callspec is not None else "default"
    return f"{getattr(item, 'originalname', item.name)}_{case}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Names the output folders of the runs of a test (its setup, call and teardown)."""
    _session.names.append(folder_base(item))
    try:
        yield
    finally:
        _session.names.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """Names the output folders of a wider-than-function fixture's runs, in its setup and in
    its teardown, ``<fixture>_<scope>``."""
    if fixturedef.scope == "function":
        yield
        return
    name = f"{fixturedef.argname.lstrip('_')}_{fixturedef.scope}"
    # Finalizers run last-in first-out: this one after the fixture's own teardown...
    fixturedef.addfinalizer(_session.names.pop)
    _session.names.append(name)
    try:
        yield
    finally:
        _session.names.pop()
        # ... and this one before it.
        fixturedef.addfinalizer(lambda: _session.names.append(name))
