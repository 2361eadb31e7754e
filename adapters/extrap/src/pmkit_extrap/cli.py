"""``pmkit-extrap``: Extra-P's own command line with pmkit's modelers added to ``--modeler``.

Every argument is Extra-P's; pmkit's modelers appear as ``pmkit-<name>`` (e.g.
``pmkit-extrap --cube DIR --modeler pmkit-refining``) and take their declared options through
Extra-P's ``--options``.  A model set saved with ``--save-experiment`` is named after its modeler
(``pmkit-refining``) unless ``--model-set-name`` says otherwise; Extra-P's own default is "New model".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pmkit_extrap.modelers import register


def with_model_set_name(args: Sequence[str]) -> list[str]:
    """``args`` with ``--model-set-name MODELER`` added unless a name is given."""
    args = list(args)
    if any(a == "--model-set-name" or a.startswith("--model-set-name=") for a in args):
        return args
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--modeler", type=str.lower, default="default")
    known, _ = parser.parse_known_args(args)
    return [*args, "--model-set-name", known.modeler]


def main(args: Sequence[str] | None = None) -> None:
    """Register pmkit's modelers with Extra-P, then run Extra-P's command line."""
    from extrap.extrap import extrapcmd

    register()
    extrapcmd.main(with_model_set_name(sys.argv[1:] if args is None else args), prog="pmkit-extrap")


if __name__ == "__main__":
    main(sys.argv[1:])
