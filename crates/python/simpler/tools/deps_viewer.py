"""``python -m simpler.tools.deps_viewer``: ``simpler deps-viewer`` (same flags, same output)."""

from . import run_tool

if __name__ == "__main__":
    run_tool("deps-viewer")
