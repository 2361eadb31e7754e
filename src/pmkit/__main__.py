"""``python -m pmkit``: the same as the ``pmkit`` command (where the console script is not on PATH)."""

import sys

from pmkit.cli import main

if __name__ == "__main__":  # not when worker processes (--executor) import this module again
    sys.exit(main())
