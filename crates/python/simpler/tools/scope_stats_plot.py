"""``python -m simpler.tools.scope_stats_plot``: ``simpler scope-stats-plot`` (same flags, same output)."""

from . import run_tool

if __name__ == "__main__":
    run_tool("scope-stats-plot")
