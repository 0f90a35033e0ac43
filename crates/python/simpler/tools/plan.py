"""``python -m simpler.tools.plan``: ``simpler plan`` (same flags, same output)."""

from . import run_tool

if __name__ == "__main__":
    run_tool("plan")
