"""``python -m simpler.tools.swimlane``: ``simpler swimlane`` (same flags, same output)."""

from . import run_tool

if __name__ == "__main__":
    run_tool("swimlane")
