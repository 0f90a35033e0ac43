"""What the pytest plugin applies to every ``Worker.run`` of its session: the diagnostics flags
and the runtime (set from ``pytest_configure`` to ``pytest_unconfigure``), and the base name of
the output folders of what is running (``<test>_<case>`` for a test and its function-scoped
fixtures, ``<fixture>_<scope>`` for a wider fixture's setup and teardown). Outside a pytest
session nothing is active."""

from dataclasses import dataclass
from typing import List, Optional

from .config import CallConfig


@dataclass
class Defaults:
    """The plugin's flags (``CallConfig`` fields, ``None`` when the flag is absent)."""

    config: CallConfig
    #: ``--runtime``: the runtime of every worker's runs.
    runtime: Optional[str]


#: The session's defaults, set by the plugin for the whole session.
active: Optional[Defaults] = None

#: Output folder base names of what is running, the innermost last.
names: List[str] = []


def folder_base() -> Optional[str]:
    """The output folder base name of the innermost running test or fixture, else ``None``."""
    return names[-1] if names else None
