"""``pmkit-extrap``: Extra-P's own command line with pmkit's modelers added to ``--modeler``.

Every argument is Extra-P's; pmkit's modelers appear as ``pmkit-<name>`` (e.g.
``pmkit-extrap --cube DIR --modeler pmkit-refining``) and take their declared options through
Extra-P's ``--options``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pmkit_extrap.modelers import register


def main(args: Sequence[str] | None = None) -> None:
    """Register pmkit's modelers with Extra-P, then run Extra-P's command line."""
    from extrap.extrap import extrapcmd

    register()
    extrapcmd.main(list(args) if args is not None else None, prog="pmkit-extrap")


if __name__ == "__main__":
    main(sys.argv[1:])
