"""``python -m pmkit.cli``: the same as the ``pmkit`` command."""

import sys

from pmkit.cli import main

sys.exit(main())
