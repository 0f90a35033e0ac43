"""The diagnostic tools as modules, with the flags of the ``simpler`` subcommands and the
original's module names: ``python -m simpler.tools.scope_stats_plot``, ``.deps_viewer``,
``.swimlane`` (also ``.swimlane_converter``), ``.dump_viewer``, ``.plan``. Each calls the same
Rust code as the subcommand, so it writes the same bytes."""

import sys

from .._native import cli


def run_tool(subcommand: str) -> None:
    """Runs ``simpler <subcommand> ARGS`` with this process's arguments and exits with its status."""
    sys.stdout.flush()
    sys.exit(cli(["simpler", subcommand, *sys.argv[1:]]))
