"""``python -m simpler.tools.dump_viewer``: ``simpler dump-viewer`` (same flags, same output)."""

from . import run_tool

if __name__ == "__main__":
    run_tool("dump-viewer")
