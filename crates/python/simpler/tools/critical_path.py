"""``python -m simpler.tools.critical_path``: ``simpler critical-path`` (same flags, same output)."""

from . import run_tool

if __name__ == "__main__":
    run_tool("critical-path")
