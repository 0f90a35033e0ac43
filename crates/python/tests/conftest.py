"""Shared fixtures of the Python suite: the repository, the `simpler` binary the tools are
compared with, and pytest's own `pytester` (for the plugin's scene test)."""

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def repo() -> Path:
    """The repository root."""
    return REPO


@pytest.fixture
def simpler_bin() -> Path:
    """The release `simpler` binary (`SIMPLER_BIN`, else `target/release/simpler`, which
    `scripts/test.sh` builds before this suite)."""
    path = Path(os.environ.get("SIMPLER_BIN", REPO / "target" / "release" / "simpler"))
    if not path.is_file():
        pytest.fail(f"{path} does not exist: run `cargo build --release -p simpler` (scripts/test.sh does)")
    return path
