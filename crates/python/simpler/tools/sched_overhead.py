"""``python -m simpler.tools.sched_overhead``: ``simpler sched-overhead`` (same flags, same output)."""

from . import run_tool

if __name__ == "__main__":
    run_tool("sched-overhead")
