"""``python -m pmkit.cli``: the same as the ``pmkit`` command."""

import sys

from pmkit.cli import main

if __name__ == "__main__":  # not when worker processes (--executor) import this module again
    sys.exit(main())
