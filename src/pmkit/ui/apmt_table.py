"""APMT's result drawn with rich: the per-kernel tables now and at a target, and the validation.

``render_apmt(console, models.apmt, target={"p": 1024})`` prints what ``pmkit show --modeler apmt``
shows after its ranking; ``apmt_view`` returns it as one renderable (for a notebook or a recording
console).  It draws the tables :func:`pmkit.modelers.apmt_result.contributed_tables` gives and
computes nothing of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console, Group, RenderableType
from rich.text import Text

from pmkit.modelers.apmt_result import ApmtResult, contributed_tables
from pmkit.ui.show import contributed_table_view


def apmt_view(result: ApmtResult, target: Mapping[str, float] | float | None = None) -> Group:
    """The APMT tables of ``result`` at ``target`` (default: 4× the largest measured scale)."""
    parts: list[RenderableType] = []
    for table in contributed_tables(result, target):
        if parts:
            parts.append(Text(""))
        parts.append(contributed_table_view(table))
    return Group(*parts)


def render_apmt(console: Console, result: ApmtResult, target: Mapping[str, float] | float | None = None) -> None:
    """Print :func:`apmt_view` to ``console``."""
    console.print(apmt_view(result, target))
