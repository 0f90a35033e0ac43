"""``python -m simpler ARGS``: the ``simpler`` command (``run``, ``bench``, the tools), in this
process, with the same output and exit status."""

import sys

from ._native import cli


def main() -> None:
    """Runs the command line and exits with its status."""
    sys.stdout.flush()
    sys.exit(cli(["simpler", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
