"""``python -m simpler.tools.tmr.scope_stats_plot``: ``simpler scope-stats-plot`` (the original's
module path)."""

from .. import run_tool

if __name__ == "__main__":
    run_tool("scope-stats-plot")
