"""What the pytest plugin applies to every ``Worker.run`` of the current test: diagnostics
flags, the runtime, and the base name of its output folders (``<test>_<case>``). Outside a
plugin-run test nothing is active."""

from dataclasses import dataclass
from typing import Optional

from .config import CallConfig


@dataclass
class Defaults:
    """The plugin's flags (``CallConfig`` fields, ``None`` when the flag is absent)."""

    config: CallConfig
    #: ``--runtime``: the runtime of every worker the test creates.
    runtime: Optional[str]
    #: ``<test>_<case>``, the output folder's base name.
    folder_base: str


#: The active test's defaults, set by the plugin around each test.
active: Optional[Defaults] = None
