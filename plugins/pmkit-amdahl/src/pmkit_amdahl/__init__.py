"""pmkit-amdahl: a third-party pmkit plugin adding the ``amdahl`` modeler, T(p) = a/p + b·p^c + d.

pmkit finds this module through the entry point ``amdahl = "pmkit_amdahl"`` in group ``pmkit``
and calls the hook below once, when it builds its plugin registry.
"""

from __future__ import annotations

import pmkit
from pmkit.hookspecs import Register
from pmkit_amdahl.modeler import AmdahlModeler

__all__ = ["AmdahlModeler", "pmkit_register_modelers"]
__version__ = "0.1.0"


@pmkit.hookimpl
def pmkit_register_modelers(register: Register) -> None:
    """Register the ``amdahl`` modeler with pmkit."""
    register(AmdahlModeler())
