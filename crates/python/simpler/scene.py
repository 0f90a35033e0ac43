"""A scene test file run as a script, as the original's are
(``python tests/st/<case>/test_<name>.py --enable-scope-stats``):

    if __name__ == "__main__":
        simpler.scene.main()

runs pytest on the calling file with the script's arguments, so the plugin's flags
(``--enable-scope-stats``, ``--enable-dep-gen``, ``--enable-l2-swimlane``, ``--dump-args``,
``--runtime``) apply as under ``pytest``.
"""

import sys


def main() -> None:
    """Runs pytest on the caller's file with this process's arguments; exits with its status."""
    import pytest

    caller = sys._getframe(1).f_globals["__file__"]
    sys.exit(pytest.main([caller, *sys.argv[1:]]))
